//! The paths the server answers under, named once: the router mounts them and the gateway
//! recognises the link service's POSTs by theirs.

/// Where the link service's routes start.
pub const LINK_PREFIX: &str = "/service/linkrecommendation/v1/linkrecommendations/";
/// The translation service's recommendations (its page-collection routes hang below).
pub const TRANSLATION_PATH: &str = "/service/lw/recommendation/api/v1/translation";
/// The OAuth 2.0 authorization endpoint, as MediaWiki's REST API spells it.
pub const AUTHORIZE_PATH: &str = "/w/rest.php/oauth2/authorize";
/// The OAuth 2.0 token endpoint.
pub const TOKEN_PATH: &str = "/w/rest.php/oauth2/access_token";

//! The OAuth 2.0 authorization server (as MediaWiki's OAuth extension answers): registered clients,
//! access tokens, authorization codes with PKCE, rotating refresh tokens.

pub mod clients;
pub mod pkce;
pub mod tokens;

pub use clients::{Client, ClientRegistry};
pub use tokens::{Bearer, TokenError, TokenService};

//! OAuth 2.0 for MediaWiki's authorization server: the grants, the authorization-code flow
//! with PKCE, and a token manager that keeps one valid token for many concurrent callers.
//!
//! Module map: [`pkce`] (verifier, challenge, state), [`authorize`] (authorization URL and
//! redirect parsing), [`grants`] (token-endpoint requests and responses), [`token`] (a token
//! and its expiry), [`store`] (persistence), [`manager`] (renewal and single-flight).

pub mod authorize;
pub mod grants;
pub mod manager;
pub mod pkce;
pub mod store;
pub mod token;

pub use authorize::{AuthorizationRequest, authorization_url, parse_redirect};
pub use grants::{Grant, request_token};
pub use manager::{ManagerOptions, Source, TokenManager};
pub use store::{FileTokenStore, LockAttempt, StoreLock, TokenStore};
pub use token::{StoredToken, Token};

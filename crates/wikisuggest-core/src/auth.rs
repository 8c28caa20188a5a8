//! Where bearer tokens come from: the token manager, or a fixed personal token.

use std::future::Future;
use std::pin::Pin;

use crate::error::{Error, Result};
use crate::secret::Secret;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Supplies bearer tokens; implemented by the token manager and by fixed personal tokens.
pub trait AuthProvider: Send + Sync {
    /// A token to send now (renewing it first if it is about to expire).
    fn bearer(&self) -> BoxFuture<'_, Result<Secret>>;

    /// The server rejected `rejected` as invalid or expired. Return a different token to
    /// replay the request with once, or `None` when the source cannot renew (personal tokens).
    fn renew_rejected(&self, rejected: Secret) -> BoxFuture<'_, Result<Option<Secret>>>;
}

/// A personal API token: sent as is, never renewed.
pub struct StaticToken(Secret);

impl StaticToken {
    pub fn new(token: Secret) -> Result<Self> {
        if token.expose().trim().is_empty() {
            return Err(Error::Config("the API token is empty".to_owned()));
        }
        Ok(Self(token))
    }
}

impl AuthProvider for StaticToken {
    fn bearer(&self) -> BoxFuture<'_, Result<Secret>> {
        let token = self.0.clone();
        Box::pin(async move { Ok(token) })
    }

    fn renew_rejected(&self, _rejected: Secret) -> BoxFuture<'_, Result<Option<Secret>>> {
        Box::pin(async { Ok(None) })
    }
}

//! The token manager: one valid token for any number of concurrent callers.
//!
//! Concurrency design:
//! - The current token sits behind a `std::sync::Mutex` that is only held to copy it in or
//!   out, so the fast path (a fresh token) never waits for a renewal in progress elsewhere.
//! - Renewal is single-flight: it happens under a `tokio::sync::Mutex`, and whoever acquires
//!   it checks again whether someone before them already renewed. N callers arriving at an
//!   expired token cause exactly one token request. Sync callers reach this through the
//!   binding's blocking bridge onto the same runtime, so threads and asyncio tasks queue on
//!   the same lock.
//! - The renewed token (and with it a rotated refresh token) is installed and persisted
//!   before the renewal lock is released; no other caller can refresh with the old one.
//!
//! Transport: the manager needs an HTTP client for the token endpoint. When it is given to a
//! [`Client`] (`attach`), it shares that client's connection pool and User-Agent through
//! [`Client::token_transport`]; used on its own, it builds one from its `auth_url` and
//! `user_agent`. Sharing (rather than each client owning the manager's requests) keeps one
//! policy for every request and lets one manager serve many clients.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use super::grants::{Grant, request_token};
use super::store::{LockAttempt, StoreLock, TokenStore};
use super::token::Token;
use crate::auth::{AuthProvider, BoxFuture};
use crate::client::{Client, LOG_TARGET};
use crate::config::{ClientConfig, normalise_base_url};
use crate::error::{Error, Result};
use crate::http_error::HttpErrorKind;
use crate::secret::Secret;

/// Default time before expiry at which a token is renewed (tokens live four hours).
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(300);

/// How long a renewal waits for another process to finish its own with a shared store.
/// Longer than a token request with all its retries takes; a process that dies releases
/// the lock at once.
const STORE_LOCK_WAIT: Duration = Duration::from_secs(300);
/// How often the store's lock is tried while another process holds it.
const STORE_LOCK_POLL: Duration = Duration::from_millis(20);

/// Where tokens come from, and so how they are renewed.
#[derive(Debug)]
pub enum Source {
    /// Renewed by asking again with the same credentials.
    ClientCredentials {
        client_id: String,
        client_secret: Secret,
    },
    /// Renewed with the refresh token, which the server rotates on every use.
    RefreshToken {
        client_id: String,
        client_secret: Option<Secret>,
    },
    /// A personal API token: never renewed.
    Personal,
}

/// Settings shared by all sources.
pub struct ManagerOptions {
    /// Authorization server; defaults to the attached client's, else to meta.wikimedia.org.
    pub auth_url: Option<String>,
    /// User-Agent for a manager used without a client.
    pub user_agent: Option<String>,
    /// Renew this long before expiry (at most half the token's lifetime).
    pub leeway: Duration,
    pub store: Option<Arc<dyn TokenStore>>,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        Self {
            auth_url: None,
            user_agent: None,
            leeway: DEFAULT_LEEWAY,
            store: None,
        }
    }
}

#[derive(Default)]
struct State {
    token: Option<Token>,
    /// The refresh token to use next (refresh-token source only).
    refresh_token: Option<Secret>,
}

pub struct TokenManager {
    source: Source,
    auth_url: Option<String>,
    user_agent: Option<String>,
    leeway: Duration,
    store: Option<Arc<dyn TokenStore>>,
    transport: OnceLock<Arc<Client>>,
    state: Mutex<State>,
    renewal: tokio::sync::Mutex<()>,
    /// When this manager was made: a stored token obtained later was saved by another
    /// process sharing the store, after whatever this one was given.
    created: std::time::SystemTime,
}

impl std::fmt::Debug for TokenManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenManager")
            .field("kind", &self.kind())
            .field("client_id", &self.client_id())
            .field("auth_url", &self.auth_url)
            .field("leeway", &self.leeway)
            .field("store", &self.store.is_some())
            .finish()
    }
}

fn non_empty(name: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::invalid(name, "must not be empty"));
    }
    Ok(())
}

/// Whether `error` is the token endpoint's `invalid_grant`.
fn is_invalid_grant(error: &Error) -> bool {
    error.as_http().is_some_and(|http| {
        http.kind == HttpErrorKind::OAuth
            && http
                .oauth
                .as_ref()
                .is_some_and(|o| o.error == "invalid_grant")
    })
}

fn reauthorization(error: &Error) -> Error {
    let why = error
        .as_http()
        .and_then(|http| http.oauth.as_ref())
        .map(ToString::to_string)
        .unwrap_or_else(|| error.to_string());
    Error::ReauthorizationRequired(why)
}

impl TokenManager {
    fn new(source: Source, options: ManagerOptions, state: State) -> Result<Self> {
        let auth_url = match options.auth_url {
            Some(url) => Some(normalise_base_url("auth_url", &url)?),
            None => None,
        };
        if let Some(ua) = &options.user_agent {
            crate::user_agent::compose(ua)?;
        }
        Ok(Self {
            source,
            auth_url,
            user_agent: options.user_agent,
            leeway: options.leeway,
            store: options.store,
            transport: OnceLock::new(),
            state: Mutex::new(state),
            renewal: tokio::sync::Mutex::new(()),
            created: std::time::SystemTime::now(),
        })
    }

    /// App authentication with the client-credentials grant.
    pub fn client_credentials(
        client_id: String,
        client_secret: Secret,
        options: ManagerOptions,
    ) -> Result<Self> {
        non_empty("client_id", &client_id)?;
        non_empty("client_secret", client_secret.expose())?;
        let source = Source::ClientCredentials {
            client_id,
            client_secret,
        };
        Self::new(source, options, State::default())
    }

    /// User authentication kept alive with a refresh token.
    ///
    /// `initial` is a token just obtained (e.g. from the authorization-code grant): it is used
    /// until it is due and saved to the store at once. Without `refresh_token` and `initial`,
    /// the refresh token is read from the store. An explicit refresh token takes precedence
    /// over the store's, which is consulted again when the server rejects it (another process
    /// may have rotated it).
    pub fn refresh_token(
        refresh_token: Option<Secret>,
        initial: Option<Token>,
        client_id: String,
        client_secret: Option<Secret>,
        options: ManagerOptions,
    ) -> Result<Self> {
        non_empty("client_id", &client_id)?;
        if let Some(secret) = &client_secret {
            non_empty("client_secret", secret.expose())?;
        }
        let refresh_token = refresh_token.or_else(|| initial.as_ref()?.refresh_token.clone());
        match &refresh_token {
            Some(rt) => non_empty("refresh_token", rt.expose())?,
            None if options.store.is_none() => {
                return Err(Error::invalid(
                    "refresh_token",
                    "is required unless a store holding one is given",
                ));
            }
            None => {}
        }
        let to_save = initial.as_ref().map(Token::to_stored);
        let source = Source::RefreshToken {
            client_id,
            client_secret,
        };
        let state = State {
            token: initial,
            refresh_token,
        };
        let manager = Self::new(source, options, state)?;
        if let (Some(store), Some(token)) = (&manager.store, to_save) {
            store.save(&token)?;
        }
        Ok(manager)
    }

    /// A personal API token, sent as is and never renewed.
    pub fn personal(token: Secret) -> Result<Self> {
        non_empty("token", token.expose())?;
        let state = State {
            token: Some(Token::personal(token)),
            refresh_token: None,
        };
        Self::new(Source::Personal, ManagerOptions::default(), state)
    }

    pub fn kind(&self) -> &'static str {
        match self.source {
            Source::ClientCredentials { .. } => "client_credentials",
            Source::RefreshToken { .. } => "refresh_token",
            Source::Personal => "personal",
        }
    }

    pub fn client_id(&self) -> Option<&str> {
        match &self.source {
            Source::ClientCredentials { client_id, .. }
            | Source::RefreshToken { client_id, .. } => Some(client_id),
            Source::Personal => None,
        }
    }

    pub fn auth_url(&self) -> Option<&str> {
        self.auth_url.as_deref()
    }

    pub fn leeway(&self) -> Duration {
        self.leeway
    }

    /// Share `client`'s transport for token requests, unless the manager already has one
    /// (the first client wins; a manager may serve several clients).
    pub fn attach(&self, client: &Client) -> Result<()> {
        if self.transport.get().is_none() && !matches!(self.source, Source::Personal) {
            let shared = Arc::new(client.token_transport(self.auth_url.as_deref())?);
            let _ = self.transport.set(shared);
        }
        Ok(())
    }

    fn transport(&self) -> Result<Arc<Client>> {
        if let Some(client) = self.transport.get() {
            return Ok(client.clone());
        }
        let Some(user_agent) = &self.user_agent else {
            return Err(Error::Config(
                "the token manager needs a User-Agent to reach the token endpoint: pass \
                 user_agent=, set WIKISUGGEST_USER_AGENT, or give the manager to a client (auth=)"
                    .to_owned(),
            ));
        };
        let mut config = ClientConfig::new(user_agent.clone());
        if let Some(url) = &self.auth_url {
            config.auth_url = url.clone();
        }
        let built = Arc::new(Client::new(config, None)?);
        Ok(self.transport.get_or_init(|| built).clone())
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state is only ever replaced wholesale, so a panic elsewhere cannot leave it
        // half-updated; recovering from poisoning is safe.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn fresh_token(&self) -> Option<Token> {
        let now = Instant::now();
        self.state()
            .token
            .as_ref()
            .filter(|t| t.is_fresh(self.leeway, now))
            .cloned()
    }

    /// A token that is valid for at least the leeway, renewing it first if needed.
    pub async fn token(&self) -> Result<Token> {
        if let Some(token) = self.fresh_token() {
            return Ok(token);
        }
        let _flight = self.renewal.lock().await;
        // Whoever held the lock before us may have renewed already.
        if let Some(token) = self.fresh_token() {
            return Ok(token);
        }
        self.renew_locked(None).await
    }

    /// The server rejected `rejected`. Renew (once for all callers that saw the same token
    /// rejected) and return the new token; `None` for personal tokens.
    pub async fn renew_after_rejection(&self, rejected: &Secret) -> Result<Option<Token>> {
        let _flight = self.renewal.lock().await;
        if let Some(current) = self.state().token.clone()
            && &current.access_token != rejected
        {
            return Ok(Some(current));
        }
        if matches!(self.source, Source::Personal) {
            return Ok(None);
        }
        self.renew_locked(Some(rejected)).await.map(Some)
    }

    /// The store's inter-process lock, waited for without blocking a runtime thread. `None`
    /// when there is no store or it has no lock.
    async fn lock_store(&self) -> Result<Option<StoreLock>> {
        let Some(store) = &self.store else {
            return Ok(None);
        };
        let give_up = Instant::now() + STORE_LOCK_WAIT;
        loop {
            match store.try_lock()? {
                LockAttempt::Unsupported => return Ok(None),
                LockAttempt::Held(lock) => return Ok(Some(lock)),
                LockAttempt::Busy if Instant::now() >= give_up => {
                    return Err(Error::Internal(format!(
                        "another process has been renewing the token in the shared token store \
                         for more than {} s",
                        STORE_LOCK_WAIT.as_secs()
                    )));
                }
                LockAttempt::Busy => tokio::time::sleep(STORE_LOCK_POLL).await,
            }
        }
    }

    /// Renew while holding the renewal lock. Installs (and persists) the result.
    ///
    /// With a shared store, the store's own lock is held as well, from before it is read
    /// until the renewed token is saved: another process that renewed meanwhile is seen
    /// (its token adopted), and no two processes spend the same refresh token.
    async fn renew_locked(&self, rejected: Option<&Secret>) -> Result<Token> {
        let _store_lock = self.lock_store().await?;
        if let Some(token) = self.adopt_from_store(rejected)? {
            log::debug!(target: LOG_TARGET, "using the token found in the token store");
            return Ok(token);
        }
        // Only the kind and the client id (which is public) are logged, never a token.
        log::info!(
            target: LOG_TARGET,
            "requesting a new access token ({}, client {})",
            self.kind(),
            self.client_id().unwrap_or("-")
        );
        let token = match &self.source {
            Source::ClientCredentials {
                client_id,
                client_secret,
            } => {
                let grant = Grant::ClientCredentials {
                    client_id: client_id.clone(),
                    client_secret: client_secret.clone(),
                };
                self.request(&grant).await?
            }
            Source::RefreshToken { .. } => self.refresh().await?,
            Source::Personal => {
                return Err(Error::Internal(
                    "a personal API token cannot be renewed".to_owned(),
                ));
            }
        };
        self.install(token.clone())?;
        Ok(token)
    }

    /// A token another process (or an earlier run) saved, when it is newer than ours and
    /// still fresh. Adopting it saves a request and, for refresh tokens, avoids refreshing
    /// with one that was already rotated.
    fn adopt_from_store(&self, rejected: Option<&Secret>) -> Result<Option<Token>> {
        let Some(store) = &self.store else {
            return Ok(None);
        };
        let Some(stored) = store.load()? else {
            return Ok(None);
        };
        let candidate = Token::from_stored(&stored);
        if Some(&candidate.access_token) == rejected {
            return Ok(None);
        }
        let mut state = self.state();
        let newer = match &state.token {
            Some(current) => candidate.obtained_at > current.obtained_at,
            // Nothing in memory yet: an explicit refresh token wins over the store's, which
            // may be from an older authorization — unless the store's was saved after this
            // manager was made, by another process that already spent ours.
            None => match &state.refresh_token {
                None => true,
                Some(ours) => {
                    candidate.refresh_token.as_ref() == Some(ours)
                        || candidate.obtained_at > self.created
                }
            },
        };
        if !newer {
            return Ok(None);
        }
        if candidate.refresh_token.is_some() {
            state.refresh_token = candidate.refresh_token.clone();
        }
        if candidate.is_fresh(self.leeway, Instant::now()) {
            state.token = Some(candidate.clone());
            return Ok(Some(candidate));
        }
        Ok(None)
    }

    /// The refresh-token grant with the current refresh token; on `invalid_grant` the store
    /// gets one more look, because another process sharing it may have rotated the token.
    async fn refresh(&self) -> Result<Token> {
        let Source::RefreshToken {
            client_id,
            client_secret,
        } = &self.source
        else {
            return Err(Error::Internal("not a refresh-token manager".to_owned()));
        };
        let grant = |refresh_token: Secret| Grant::RefreshToken {
            refresh_token,
            client_id: client_id.clone(),
            client_secret: client_secret.clone(),
        };
        let current = self.state().refresh_token.clone();
        let current = match current {
            Some(rt) => rt,
            None => match self.stored_refresh_token()? {
                Some(rt) => rt,
                None => {
                    return Err(Error::ReauthorizationRequired(
                        "no refresh token is available".to_owned(),
                    ));
                }
            },
        };
        let first_error = match self.request(&grant(current.clone())).await {
            Ok(token) => return Ok(keep_refresh_token(token, current)),
            Err(e) if is_invalid_grant(&e) => e,
            Err(e) => return Err(e),
        };
        match self.stored_refresh_token()? {
            Some(stored) if stored != current => {
                log::warn!(
                    target: LOG_TARGET,
                    "the refresh token was refused; retrying with the newer one in the token store"
                );
                self.state().refresh_token = Some(stored.clone());
                match self.request(&grant(stored.clone())).await {
                    Ok(token) => Ok(keep_refresh_token(token, stored)),
                    Err(e) if is_invalid_grant(&e) => Err(reauthorization(&e)),
                    Err(e) => Err(e),
                }
            }
            _ => Err(reauthorization(&first_error)),
        }
    }

    fn stored_refresh_token(&self) -> Result<Option<Secret>> {
        match &self.store {
            Some(store) => Ok(store
                .load()?
                .and_then(|t| t.refresh_token)
                .filter(|rt| !rt.is_empty())
                .map(Secret::new)),
            None => Ok(None),
        }
    }

    /// One token request. A transport failure after the request left (the answer was lost)
    /// and a timeout are retried with the same grant: for a refresh token that is safe
    /// because the server accepts the previous token for 600 s after rotating it.
    async fn request(&self, grant: &Grant) -> Result<Token> {
        let transport = self.transport()?;
        let mut attempt = 0;
        loop {
            let result = request_token(&transport, grant).await;
            let lost = matches!(
                &result,
                Err(Error::Transport {
                    before_send: false,
                    ..
                } | Error::Timeout { .. })
            );
            let delay = if lost {
                transport.config().retry.delay(attempt, None)
            } else {
                None
            };
            match delay {
                Some(delay) => {
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                None => return result,
            }
        }
    }

    /// Make `token` current, then persist it. The in-memory update comes first so that a
    /// failing store cannot lose a rotated refresh token for this process; the store's
    /// error is still reported.
    fn install(&self, token: Token) -> Result<()> {
        let stored = token.to_stored();
        {
            let mut state = self.state();
            if token.refresh_token.is_some() {
                state.refresh_token = token.refresh_token.clone();
            }
            state.token = Some(token);
        }
        match &self.store {
            Some(store) => store.save(&stored),
            None => Ok(()),
        }
    }
}

/// A refresh response should always carry the rotated refresh token; if one ever does not,
/// the one just used is still the best we have.
fn keep_refresh_token(mut token: Token, used: Secret) -> Token {
    if token.refresh_token.is_none() {
        token.refresh_token = Some(used);
    }
    token
}

impl AuthProvider for TokenManager {
    fn bearer(&self) -> BoxFuture<'_, Result<Secret>> {
        Box::pin(async move { Ok(self.token().await?.access_token) })
    }

    fn renew_rejected(&self, rejected: Secret) -> BoxFuture<'_, Result<Option<Secret>>> {
        Box::pin(async move {
            let renewed = self.renew_after_rejection(&rejected).await?;
            Ok(renewed.map(|t| t.access_token))
        })
    }
}

#[cfg(test)]
#[path = "manager_tests.rs"]
mod tests;

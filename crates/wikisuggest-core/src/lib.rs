//! Core of wikisuggest: a client for Wikimedia's link recommendation and translation
//! recommendation services.
//!
//! This crate has no Python dependency; the `_native` extension module wraps it.
//! Everything asynchronous runs on tokio; the caller owns the runtime.

pub mod auth;
pub mod batch;
pub mod client;
pub mod config;
pub mod download;
pub mod encode;
pub mod error;
pub mod http_error;
pub mod limits;
pub mod mediawiki;
/// The service records, defined once in `wikisuggest-records` for client, server and engine.
pub use wikisuggest_records as models;
pub mod oauth;
pub mod params;
pub mod redact;
pub mod retry;
pub mod secret;
pub mod transport;
pub mod user_agent;

pub use auth::AuthProvider;
pub use client::Client;
pub use config::ClientConfig;
pub use error::{Error, Result};
pub use secret::Secret;

/// Version of this crate, appended to every User-Agent as `wikisuggest/<version>`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

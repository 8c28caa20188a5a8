//! Core of wikisuggest: HTTP client, token manager.

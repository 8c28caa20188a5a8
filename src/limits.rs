//! The `rate_limit` argument of the client: a number of requests per second, or a budget
//! string such as `"5000/h"` (parsed and checked by the core).

use pyo3::prelude::*;
use wikisuggest_core::Error;
use wikisuggest_core::limits::RateLimit;

#[derive(FromPyObject)]
pub enum RateLimitArg {
    PerSecond(f64),
    Budget(String),
}

impl RateLimitArg {
    pub fn into_core(self) -> Result<RateLimit, Error> {
        match self {
            Self::PerSecond(rate) => RateLimit::per_second(rate),
            Self::Budget(text) => RateLimit::parse(&text),
        }
    }
}

//! A token and its expiry.
//!
//! Expiry decisions use a monotonic deadline computed from `expires_in` when the response
//! arrived: the wall clock can jump (NTP, suspend, a user changing it) and the JWT's own `exp`
//! is the server's clock, not ours. Wall-clock times are kept only for display and for the
//! store, which has to survive a restart.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::secret::Secret;

/// The longest lifetime a token is believed to have: ten years. A server may state any
/// number (`1e20`, `2^64 - 1`); beyond this one the difference cannot matter, and every
/// deadline computed from it stays representable (no overflow in clock arithmetic).
pub const MAX_LIFETIME_SECS: u64 = 10 * 365 * 24 * 3600;

/// The latest wall-clock time a stored token may name: the end of year 9999, the last
/// second Python's `datetime` can represent. Stored times outside 1970..=9999 are clamped.
const MAX_UNIX_SECONDS: f64 = 253_402_300_799.0;

/// `now + secs`, saturating at the far end instead of panicking.
fn deadline_after(now: Instant, secs: u64) -> Instant {
    let secs = secs.min(MAX_LIFETIME_SECS);
    now.checked_add(Duration::from_secs(secs)).unwrap_or(now)
}

/// An access token (and, for user grants, the refresh token that came with it).
#[derive(Debug, Clone)]
pub struct Token {
    pub token_type: String,
    pub access_token: Secret,
    pub refresh_token: Option<Secret>,
    /// Lifetime in seconds as the server stated it; `None` for tokens that never expire.
    pub expires_in: Option<u64>,
    /// Wall-clock time of receipt.
    pub obtained_at: SystemTime,
    /// Monotonic instant at which the token expires.
    pub deadline: Option<Instant>,
}

impl Token {
    /// A token just received with a lifetime of `expires_in` seconds.
    pub fn received(
        token_type: String,
        access_token: Secret,
        refresh_token: Option<Secret>,
        expires_in: Option<u64>,
    ) -> Self {
        let expires_in = expires_in.map(|secs| secs.min(MAX_LIFETIME_SECS));
        Self {
            token_type,
            access_token,
            refresh_token,
            expires_in,
            obtained_at: SystemTime::now(),
            deadline: expires_in.map(|secs| deadline_after(Instant::now(), secs)),
        }
    }

    /// A personal API token: sent as is, never expires.
    pub fn personal(access_token: Secret) -> Self {
        Self::received("Bearer".to_owned(), access_token, None, None)
    }

    pub fn expires_at(&self) -> Option<SystemTime> {
        self.expires_in.map(|secs| {
            let lifetime = Duration::from_secs(secs.min(MAX_LIFETIME_SECS));
            self.obtained_at
                .checked_add(lifetime)
                .unwrap_or(self.obtained_at)
        })
    }

    /// When renewal is due: `leeway` before the deadline, but never earlier than halfway
    /// through the token's life. Without that bound a lifetime shorter than the leeway would
    /// make every caller renew, and each renewed token would be "due" the moment it arrived.
    pub fn renew_at(&self, leeway: Duration) -> Option<Instant> {
        let deadline = self.deadline?;
        let lifetime = Duration::from_secs(self.expires_in.unwrap_or(0));
        let early = leeway.min(lifetime / 2);
        Some(deadline.checked_sub(early).unwrap_or(deadline))
    }

    /// True while the token may be used without renewing it first.
    pub fn is_fresh(&self, leeway: Duration, now: Instant) -> bool {
        self.renew_at(leeway).is_none_or(|at| now < at)
    }

    /// The persistent form of this token.
    pub fn to_stored(&self) -> StoredToken {
        StoredToken {
            token_type: self.token_type.clone(),
            access_token: self.access_token.expose().to_owned(),
            refresh_token: self.refresh_token.as_ref().map(|s| s.expose().to_owned()),
            expires_in: self.expires_in,
            obtained_at: unix_seconds(self.obtained_at),
            expires_at: self.expires_at().map(unix_seconds),
        }
    }

    /// A token read back from a store. Its monotonic deadline is rebuilt from the time left
    /// on the wall clock, which is the best a new process can know.
    ///
    /// A store is input like any other: times out of range (`1e300`, NaN, negative) and
    /// lifetimes beyond [`MAX_LIFETIME_SECS`] are clamped, never added unchecked.
    pub fn from_stored(stored: &StoredToken) -> Self {
        let obtained_at = from_unix_seconds(stored.obtained_at);
        let expires_in = stored.expires_in.map(|s| s.min(MAX_LIFETIME_SECS));
        let wall_deadline = stored.expires_at.map(from_unix_seconds).or_else(|| {
            expires_in.map(|s| {
                obtained_at
                    .checked_add(Duration::from_secs(s))
                    .unwrap_or(obtained_at)
            })
        });
        let deadline = wall_deadline.map(|at| {
            let left = at
                .duration_since(SystemTime::now())
                .unwrap_or(Duration::ZERO);
            deadline_after(Instant::now(), left.as_secs())
        });
        Self {
            token_type: stored.token_type.clone(),
            access_token: Secret::new(stored.access_token.clone()),
            refresh_token: stored.refresh_token.clone().map(Secret::new),
            expires_in,
            obtained_at,
            deadline,
        }
    }
}

/// The form in which a token is persisted and handed to Python: plain values, times as
/// seconds since the Unix epoch. `Debug` hides both tokens.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredToken {
    #[serde(default = "bearer")]
    pub token_type: String,
    pub access_token: String,
    #[serde(default)]
    pub refresh_token: Option<String>,
    #[serde(default)]
    pub expires_in: Option<u64>,
    #[serde(default)]
    pub obtained_at: f64,
    #[serde(default)]
    pub expires_at: Option<f64>,
}

fn bearer() -> String {
    "Bearer".to_owned()
}

impl fmt::Debug for StoredToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredToken")
            .field("token_type", &self.token_type)
            .field("access_token", &"***")
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "***"))
            .field("expires_in", &self.expires_in)
            .field("obtained_at", &self.obtained_at)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

fn unix_seconds(at: SystemTime) -> f64 {
    let secs = match at.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64(),
        Err(before) => -before.duration().as_secs_f64(),
    };
    secs.min(MAX_UNIX_SECONDS)
}

/// A stored time, clamped to 1970..=9999 (NaN reads as the epoch): far enough for any real
/// token, and always representable by `SystemTime` and by Python's `datetime`.
fn from_unix_seconds(secs: f64) -> SystemTime {
    let secs = if secs.is_nan() {
        0.0
    } else {
        secs.clamp(0.0, MAX_UNIX_SECONDS)
    };
    let magnitude = Duration::try_from_secs_f64(secs).unwrap_or(Duration::ZERO);
    UNIX_EPOCH.checked_add(magnitude).unwrap_or(UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(expires_in: Option<u64>) -> Token {
        Token::received(
            "Bearer".into(),
            Secret::new("at"),
            Some(Secret::new("rt")),
            expires_in,
        )
    }

    #[test]
    fn renews_leeway_before_expiry() {
        let t = token(Some(14_400));
        let now = Instant::now();
        let leeway = Duration::from_secs(300);
        assert!(t.is_fresh(leeway, now));
        assert!(t.is_fresh(leeway, now + Duration::from_secs(14_000)));
        assert!(!t.is_fresh(leeway, now + Duration::from_secs(14_101)));
    }

    #[test]
    fn short_lifetimes_renew_at_half_life() {
        let t = token(Some(10));
        let now = Instant::now();
        assert!(t.is_fresh(Duration::from_secs(300), now + Duration::from_secs(4)));
        assert!(!t.is_fresh(Duration::from_secs(300), now + Duration::from_secs(6)));
    }

    #[test]
    fn personal_tokens_never_expire() {
        let t = Token::personal(Secret::new("p"));
        assert!(t.is_fresh(
            Duration::from_secs(300),
            Instant::now() + Duration::from_secs(10_000_000)
        ));
        assert_eq!(t.expires_at(), None);
    }

    #[test]
    fn stored_round_trip_keeps_time_left() {
        let t = token(Some(3600));
        let stored = t.to_stored();
        assert_eq!(stored.access_token, "at");
        let back = Token::from_stored(&stored);
        assert_eq!(back.access_token, t.access_token);
        assert_eq!(back.refresh_token, t.refresh_token);
        let left = back.deadline.unwrap() - Instant::now();
        assert!(left > Duration::from_secs(3590) && left <= Duration::from_secs(3600));
        let shown = format!("{stored:?}");
        assert!(
            !shown.contains("\"at\"") && !shown.contains("\"rt\""),
            "{shown}"
        );
    }

    #[test]
    fn absurd_lifetimes_saturate_instead_of_panicking() {
        for secs in [u64::MAX, 10_000_000_000_000_000_000, 1 << 63] {
            let t = token(Some(secs));
            assert_eq!(t.expires_in, Some(MAX_LIFETIME_SECS));
            assert!(t.is_fresh(Duration::from_secs(300), Instant::now()));
            assert!(t.expires_at().is_some());
            let stored = t.to_stored();
            assert!(stored.expires_at.unwrap() < MAX_UNIX_SECONDS);
        }
    }

    #[test]
    fn out_of_range_stored_times_are_clamped() {
        let base = token(Some(60)).to_stored();
        for (obtained_at, expires_at, expires_in) in [
            (1e19, Some(1e20), Some(u64::MAX)),
            (f64::MAX, Some(f64::INFINITY), None),
            (-1e300, Some(f64::NEG_INFINITY), Some(5)),
            (f64::NAN, Some(f64::NAN), Some(u64::MAX)),
            (1e19, None, Some(u64::MAX)),
        ] {
            let stored = StoredToken {
                obtained_at,
                expires_at,
                expires_in,
                ..base.clone()
            };
            let back = Token::from_stored(&stored);
            let again = back.to_stored();
            assert!(again.obtained_at.is_finite() && again.obtained_at <= MAX_UNIX_SECONDS);
            if let Some(at) = again.expires_at {
                assert!(
                    at.is_finite() && (0.0..=MAX_UNIX_SECONDS).contains(&at),
                    "{at}"
                );
            }
            let _ = back.is_fresh(Duration::from_secs(300), Instant::now());
        }
    }

    #[test]
    fn stored_token_that_expired_is_due() {
        let mut stored = token(Some(60)).to_stored();
        stored.obtained_at -= 120.0;
        stored.expires_at = stored.expires_at.map(|at| at - 120.0);
        let back = Token::from_stored(&stored);
        assert!(!back.is_fresh(Duration::ZERO, Instant::now()));
    }
}

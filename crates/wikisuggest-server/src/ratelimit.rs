//! Token buckets per key (an app's client id, or an anonymous User-Agent): `per_minute`
//! requests of burst, refilled continuously.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

/// Above this many keys, idle (full) buckets are forgotten.
const MAX_KEYS: usize = 10_000;

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

#[derive(Debug, Default)]
pub struct RateLimiter {
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl RateLimiter {
    /// Takes one token; `Err(seconds)` says when the next one is available.
    pub fn check(&self, key: &str, per_minute: u32) -> Result<(), u64> {
        self.check_at(key, per_minute, Instant::now())
    }

    fn check_at(&self, key: &str, per_minute: u32, now: Instant) -> Result<(), u64> {
        if per_minute == 0 {
            return Err(60);
        }
        let capacity = f64::from(per_minute);
        let rate = capacity / 60.0;
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_KEYS && !buckets.contains_key(key) {
            buckets.retain(|_, b| {
                b.tokens + now.saturating_duration_since(b.last).as_secs_f64() * rate < capacity
            });
        }
        let bucket = buckets.entry(key.to_owned()).or_insert(Bucket {
            tokens: capacity,
            last: now,
        });
        let elapsed = now.saturating_duration_since(bucket.last).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * rate).min(capacity);
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - bucket.tokens) / rate).ceil().max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn bursts_then_refills() {
        let limiter = RateLimiter::default();
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(limiter.check_at("a", 3, t0).is_ok());
        }
        assert_eq!(limiter.check_at("a", 3, t0), Err(20));
        // Other keys have their own bucket.
        assert!(limiter.check_at("b", 3, t0).is_ok());
        assert!(
            limiter
                .check_at("a", 3, t0 + Duration::from_secs(20))
                .is_ok()
        );
        assert!(
            limiter
                .check_at("a", 3, t0 + Duration::from_secs(21))
                .is_err()
        );
        assert_eq!(limiter.check_at("z", 0, t0), Err(60));
    }
}

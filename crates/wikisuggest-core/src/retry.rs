//! When to try a request again, and how long to wait first.

use std::time::Duration;

/// Retry settings shared by every request of a client.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Further attempts after the first; 0 disables retries.
    pub max_retries: u32,
    /// First back-off step; doubles with each attempt.
    pub backoff_base: Duration,
    /// Upper bound of one back-off step.
    pub backoff_max: Duration,
    /// A `Retry-After` longer than this is not waited for: the error is raised with the
    /// server's value instead, so a bot can decide for itself.
    pub max_retry_after: Duration,
    /// Statuses that are retried: for GET all of them; for other methods only 429, the one
    /// status that guarantees the request was not processed.
    pub statuses: Vec<u16>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
            statuses: vec![429, 502, 503, 504],
        }
    }
}

impl RetryPolicy {
    /// Exponential back-off with full jitter: uniform in `[0, min(max, base * 2^attempt)]`.
    /// Jitter spreads out the retries of many clients that failed at the same moment.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let ceiling = self
            .backoff_base
            .saturating_mul(1u32.checked_shl(attempt.min(20)).unwrap_or(u32::MAX))
            .min(self.backoff_max);
        ceiling.mul_f64(fastrand::f64())
    }

    /// How long to wait before attempt `attempt + 1`, honouring the server's `Retry-After`
    /// when it gave one. `None` means: do not retry.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if attempt >= self.max_retries {
            return None;
        }
        match retry_after {
            Some(after) if after > self.max_retry_after => None,
            // A small jitter on top keeps a fleet of clients from returning in lockstep.
            Some(after) => {
                Some(after.saturating_add(self.backoff_base.mul_f64(fastrand::f64() * 0.1)))
            }
            None => Some(self.backoff(attempt)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy {
            backoff_base: Duration::from_millis(100),
            backoff_max: Duration::from_millis(450),
            ..RetryPolicy::default()
        };
        for attempt in 0..40 {
            let ceiling = Duration::from_millis(100 * (1u64 << attempt.min(10))).min(p.backoff_max);
            for _ in 0..50 {
                assert!(p.backoff(attempt) <= ceiling);
            }
        }
    }

    #[test]
    fn retry_after_is_honoured_and_capped() {
        let p = RetryPolicy::default();
        let d = p.delay(0, Some(Duration::from_secs(2))).unwrap();
        assert!(d >= Duration::from_secs(2) && d < Duration::from_secs(3));
        assert_eq!(p.delay(0, Some(Duration::from_secs(3600))), None);
        assert_eq!(p.delay(3, None), None);
        let none = RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        };
        assert_eq!(none.delay(0, None), None);
    }
}

//! Politeness towards the server: at most N requests in flight, and optionally at most R
//! requests per second, shared by every request a client makes (single calls, batches,
//! threads and asyncio tasks alike).

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::error::{Error, Result};

/// Wikimedia asks API clients for at most three concurrent requests.
pub const WIKIMEDIA_CONCURRENCY: usize = 3;
/// Default for other hosts (self-hosted servers), which set their own limits.
pub const OTHER_HOST_CONCURRENCY: usize = 32;

/// The default number of concurrent requests for a base URL.
pub fn default_concurrency(base_url: &str) -> usize {
    let host = reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .unwrap_or_default();
    let wikimedia = [
        "wikimedia.org",
        "wikipedia.org",
        "wikidata.org",
        "mediawiki.org",
    ]
    .iter()
    .any(|domain| host == *domain || host.ends_with(&format!(".{domain}")));
    if wikimedia {
        WIKIMEDIA_CONCURRENCY
    } else {
        OTHER_HOST_CONCURRENCY
    }
}

/// Spaces request starts at least `interval` apart (no bursts: a steady rate is what rate
/// limiters on the server side reward).
#[derive(Debug)]
struct Pacer {
    interval: Duration,
    next_slot: Mutex<Option<Instant>>,
}

impl Pacer {
    async fn wait(&self) {
        let slot = {
            let Ok(mut next) = self.next_slot.lock() else {
                return;
            };
            let now = Instant::now();
            let slot = next.map_or(now, |n| n.max(now));
            *next = Some(slot + self.interval);
            slot
        };
        tokio::time::sleep_until(slot).await;
    }
}

#[derive(Debug)]
pub struct RequestLimits {
    concurrency: usize,
    slots: Arc<Semaphore>,
    pacer: Option<Pacer>,
}

impl RequestLimits {
    /// `rate_limit` is in requests per second.
    pub fn new(concurrency: usize, rate_limit: Option<f64>) -> Result<Self> {
        if concurrency == 0 {
            return Err(Error::invalid("max_concurrency", "must be at least 1"));
        }
        // A rate so small that its interval is not a representable duration (1e-300) is
        // refused like a negative one, instead of overflowing.
        let interval = rate_limit
            .filter(|rate| rate.is_finite() && *rate > 0.0)
            .and_then(|rate| Duration::try_from_secs_f64(1.0 / rate).ok());
        let pacer = match (rate_limit, interval) {
            (None, _) => None,
            (Some(_), Some(interval)) => Some(Pacer {
                interval,
                next_slot: Mutex::new(None),
            }),
            (Some(rate), None) => {
                return Err(Error::invalid(
                    "rate_limit",
                    format!("must be a positive number of requests per second, got {rate}"),
                ));
            }
        };
        Ok(Self {
            concurrency,
            slots: Arc::new(Semaphore::new(concurrency)),
            pacer,
        })
    }

    pub fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// Wait for a free slot (first come, first served) and for the rate limit; the request may
    /// start when this returns and must keep the permit until its response is read.
    pub async fn acquire(&self) -> Result<OwnedSemaphorePermit> {
        let permit = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Error::Internal("request limiter closed".to_owned()))?;
        if let Some(pacer) = &self.pacer {
            pacer.wait().await;
        }
        Ok(permit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn wikimedia_hosts_get_three() {
        assert_eq!(default_concurrency("https://api.wikimedia.org"), 3);
        assert_eq!(default_concurrency("https://en.wikipedia.org/w"), 3);
        assert_eq!(default_concurrency("http://127.0.0.1:8080"), 32);
        assert_eq!(default_concurrency("https://notwikimedia.org"), 32);
    }

    #[test]
    fn bad_settings() {
        assert!(RequestLimits::new(0, None).is_err());
        assert!(RequestLimits::new(1, Some(0.0)).is_err());
        assert!(RequestLimits::new(1, Some(f64::NAN)).is_err());
        // An interval of 1e300 s is no duration at all: refused, not a panic.
        assert!(RequestLimits::new(1, Some(1e-300)).is_err());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn never_more_than_the_limit_in_flight() {
        let limits = Arc::new(RequestLimits::new(3, None).unwrap());
        let current = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..40 {
            let (limits, current, peak) = (limits.clone(), current.clone(), peak.clone());
            tasks.push(tokio::spawn(async move {
                let _permit = limits.acquire().await.unwrap();
                let now = current.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(2)).await;
                current.fetch_sub(1, Ordering::SeqCst);
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(peak.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn rate_is_respected() {
        let limits = RequestLimits::new(100, Some(10.0)).unwrap();
        let start = Instant::now();
        for _ in 0..11 {
            drop(limits.acquire().await.unwrap());
        }
        // 11 starts at 10/s: the last one no earlier than 1 s after the first.
        assert!(start.elapsed() >= Duration::from_millis(1000));
        assert!(start.elapsed() < Duration::from_millis(1100));
    }
}

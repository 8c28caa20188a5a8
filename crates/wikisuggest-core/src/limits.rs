//! Politeness towards the server: at most N requests in flight, and optionally a rate limit
//! (R requests per second, evenly spaced, or a budget such as 5000 per hour), shared by every
//! request a client makes (single calls, batches, threads and asyncio tasks alike).

use std::collections::VecDeque;
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

/// Largest budget accepted: the limiter remembers the start time of each request of the
/// current window, so this bounds its memory (16 MiB).
pub const MAX_BUDGET: u32 = 1_000_000;

/// How fast a client may start requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateLimit {
    /// A number of requests per second: starts are spaced evenly, `1 / rate` apart.
    PerSecond(f64),
    /// A quota such as `"5000/h"`: at most `requests` starts in any `window`, the way a
    /// server counts a quota. Requests go out at once while the budget lasts; when it is
    /// spent, the next waits until the oldest start of the window is `window` ago.
    Budget { requests: u32, window: Duration },
}

impl RateLimit {
    /// A number of requests per second, checked.
    pub fn per_second(rate: f64) -> Result<Self> {
        interval(rate).map(|_| Self::PerSecond(rate))
    }

    /// A budget written `"<requests>/<unit>"`: `"5000/h"`, `"500/hour"`, `"60/min"`, `"5/s"`.
    pub fn parse(text: &str) -> Result<Self> {
        let invalid = || {
            Error::invalid(
                "rate_limit",
                format!(
                    "must be a number of requests per second or a budget like \"5000/h\" \
                     (units: s, min, h), got {text:?}"
                ),
            )
        };
        let (count, unit) = text.split_once('/').ok_or_else(invalid)?;
        let window = match unit.trim().to_ascii_lowercase().as_str() {
            "s" | "sec" | "second" => Duration::from_secs(1),
            "min" | "minute" => Duration::from_secs(60),
            "h" | "hour" => Duration::from_secs(3600),
            _ => return Err(invalid()),
        };
        let count = count.trim();
        if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid());
        }
        let requests: u32 = match count.parse() {
            Ok(n) if (1..=MAX_BUDGET).contains(&n) => n,
            Ok(0) => {
                return Err(Error::invalid(
                    "rate_limit",
                    format!("a budget must allow at least one request, got {text:?}"),
                ));
            }
            _ => {
                return Err(Error::invalid(
                    "rate_limit",
                    format!("a budget may allow at most {MAX_BUDGET} requests, got {text:?}"),
                ));
            }
        };
        Ok(Self::Budget { requests, window })
    }
}

/// The spacing of `rate` requests per second. A rate so small that its interval is not a
/// representable duration (1e-300) is refused like a negative one, instead of overflowing.
fn interval(rate: f64) -> Result<Duration> {
    rate.is_finite()
        .then_some(rate)
        .filter(|rate| *rate > 0.0)
        .and_then(|rate| Duration::try_from_secs_f64(1.0 / rate).ok())
        .ok_or_else(|| {
            Error::invalid(
                "rate_limit",
                format!("must be a positive number of requests per second, got {rate}"),
            )
        })
}

/// At most `requests` starts in any window of `window`: the start times of the last
/// `requests` requests are kept (oldest first); a new one may start no earlier than the
/// oldest plus the window. Starts are reserved in order, so concurrent callers are served
/// first come, first served, and the times stay sorted.
#[derive(Debug)]
struct Budget {
    requests: usize,
    window: Duration,
    starts: Mutex<VecDeque<Instant>>,
}

impl Budget {
    async fn wait(&self) {
        let slot = {
            let Ok(mut starts) = self.starts.lock() else {
                return;
            };
            let mut slot = Instant::now();
            if let Some(last) = starts.back() {
                slot = slot.max(*last);
            }
            if starts.len() >= self.requests
                && let Some(oldest) = starts.pop_front()
            {
                slot = slot.max(oldest + self.window);
            }
            starts.push_back(slot);
            slot
        };
        tokio::time::sleep_until(slot).await;
    }
}

#[derive(Debug)]
enum Throttle {
    Pacer(Pacer),
    Budget(Budget),
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
    throttle: Option<Throttle>,
}

impl RequestLimits {
    pub fn new(concurrency: usize, rate_limit: Option<RateLimit>) -> Result<Self> {
        if concurrency == 0 {
            return Err(Error::invalid("max_concurrency", "must be at least 1"));
        }
        let throttle = match rate_limit {
            None => None,
            Some(RateLimit::PerSecond(rate)) => Some(Throttle::Pacer(Pacer {
                interval: interval(rate)?,
                next_slot: Mutex::new(None),
            })),
            Some(RateLimit::Budget { requests, window }) => {
                if requests == 0 || requests > MAX_BUDGET || window.is_zero() {
                    return Err(Error::invalid(
                        "rate_limit",
                        format!("a budget must allow 1 to {MAX_BUDGET} requests per window"),
                    ));
                }
                Some(Throttle::Budget(Budget {
                    requests: requests as usize,
                    window,
                    starts: Mutex::new(VecDeque::new()),
                }))
            }
        };
        Ok(Self {
            concurrency,
            slots: Arc::new(Semaphore::new(concurrency)),
            throttle,
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
        match &self.throttle {
            Some(Throttle::Pacer(pacer)) => pacer.wait().await,
            Some(Throttle::Budget(budget)) => budget.wait().await,
            None => {}
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
        let per_second = RateLimit::PerSecond;
        assert!(RequestLimits::new(1, Some(per_second(0.0))).is_err());
        assert!(RequestLimits::new(1, Some(per_second(f64::NAN))).is_err());
        // An interval of 1e300 s is no duration at all: refused, not a panic.
        assert!(RequestLimits::new(1, Some(per_second(1e-300))).is_err());
        assert!(RateLimit::per_second(-1.0).is_err());
        assert!(RateLimit::per_second(f64::INFINITY).is_err());
    }

    #[test]
    fn budgets_parse() {
        let hour = Duration::from_secs(3600);
        for (text, requests, window) in [
            ("5000/h", 5000, hour),
            (" 500 / hour ", 500, hour),
            ("60/min", 60, Duration::from_secs(60)),
            ("5/s", 5, Duration::from_secs(1)),
            ("1/H", 1, hour),
        ] {
            assert_eq!(
                RateLimit::parse(text).unwrap(),
                RateLimit::Budget { requests, window },
                "{text}"
            );
        }
        for bad in [
            "",
            "5000",
            "/h",
            "5000/",
            "5000/d",
            "-5/h",
            "0/h",
            "1.5/h",
            "5e3/h",
            "2000000/h",
            "99999999999999999999/h",
            "5000/h/h",
        ] {
            match RateLimit::parse(bad) {
                Err(Error::InvalidParameter { name, message }) => {
                    assert_eq!(name, "rate_limit");
                    assert!(message.contains(&format!("{bad:?}")), "{message}");
                }
                other => panic!("{bad:?} gave {other:?}"),
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn budget_allows_a_burst_then_waits_for_the_window() {
        let limits = RequestLimits::new(100, Some(RateLimit::parse("3/min").unwrap())).unwrap();
        let start = Instant::now();
        for _ in 0..3 {
            drop(limits.acquire().await.unwrap());
        }
        // The budget is spent at once, with no spacing.
        assert_eq!(start.elapsed(), Duration::ZERO);
        drop(limits.acquire().await.unwrap());
        assert_eq!(start.elapsed(), Duration::from_secs(60));
        // Never more than 3 in any minute: the 5th and 6th wait for the 2nd and 3rd to age.
        drop(limits.acquire().await.unwrap());
        drop(limits.acquire().await.unwrap());
        assert_eq!(start.elapsed(), Duration::from_secs(60));
        drop(limits.acquire().await.unwrap());
        assert_eq!(start.elapsed(), Duration::from_secs(120));
    }

    #[tokio::test(start_paused = true)]
    async fn budget_is_shared_by_concurrent_tasks() {
        let limits =
            Arc::new(RequestLimits::new(100, Some(RateLimit::parse("4/h").unwrap())).unwrap());
        let start = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..10 {
            let limits = limits.clone();
            tasks.push(tokio::spawn(async move {
                drop(limits.acquire().await.unwrap());
                start.elapsed()
            }));
        }
        let mut waited = Vec::new();
        for t in tasks {
            waited.push(t.await.unwrap().as_secs());
        }
        waited.sort_unstable();
        assert_eq!(waited, [0, 0, 0, 0, 3600, 3600, 3600, 3600, 7200, 7200]);
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
        let limits = RequestLimits::new(100, Some(RateLimit::PerSecond(10.0))).unwrap();
        let start = Instant::now();
        for _ in 0..11 {
            drop(limits.acquire().await.unwrap());
        }
        // 11 starts at 10/s: the last one no earlier than 1 s after the first.
        assert!(start.elapsed() >= Duration::from_millis(1000));
        assert!(start.elapsed() < Duration::from_millis(1100));
    }
}

//! The decisions of a ranged download, apart from its input and output: which range to ask
//! for, what an answer's status and `Content-Range` mean for the bytes already held, when a
//! body is too long, and when the download has used up its budget. The HTTP transport of
//! `wikisuggest-core` sends the requests and moves the bytes; everything it decides comes
//! from here, so the rules can be tested (and fuzzed) against any sequence of answers without
//! a network, and without the HTTP stack.
//!
//! The rules:
//! - Bytes held are kept only while they are known to come from the file being asked for:
//!   a resume carries `If-Range` with the validator of the answer they came from, and an
//!   answer that starts anywhere but at the first missing byte starts the file again.
//! - A `200` to a ranged request is the whole file: it starts again from zero.
//! - A `416` whose total is exactly what is held means the file was complete already.
//! - Progress is getting further into the file than ever before, not merely receiving
//!   bytes: a server that cuts every transfer and answers every resume with another range
//!   makes no progress, however much it sends, and its failures are counted.
//! - Whatever the answers, a file's download ends after [`DownloadBudget::max_attempts`]
//!   requests or once it received a few times the file's size
//!   ([`DownloadBudget::bytes_factor`]), with [`Refusal::Budget`].

use serde::{Deserialize, Serialize};

/// Why the download stops, or starts its file again; the transport turns it into its error
/// (naming the URL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The budget of requests or bytes is spent.
    Budget {
        attempts: u32,
        received: u64,
        size: Option<u64>,
    },
    /// A body announced or sent more than the limit (`limit` bytes).
    TooLarge { limit: u64 },
    /// The bytes held were given up (another range than asked, a changed file, more held
    /// than the file): worth another request from zero.
    Restarted(&'static str),
    /// The body ended before its announced end.
    Short { held: u64, total: u64 },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Budget {
                attempts, received, ..
            } => write!(
                f,
                "gave up after {attempts} requests that received {received} bytes"
            ),
            Self::TooLarge { limit } => write!(f, "larger than the limit of {limit} bytes"),
            Self::Restarted(why) => write!(f, "{why}; starting the file again"),
            Self::Short { held, total } => {
                write!(f, "the body ended after {held} of {total} bytes")
            }
        }
    }
}

pub type Result<T, E = Refusal> = std::result::Result<T, E>;

/// What a server says about a file: its size and validators.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteFile {
    /// `Content-Length` (of the whole file), when given.
    pub size: Option<u64>,
    /// `ETag`, as sent.
    pub etag: Option<String>,
    /// `Last-Modified`, as sent.
    pub last_modified: Option<String>,
}

impl RemoteFile {
    /// The validator for `If-Range`: a strong ETag, else the Last-Modified date.
    pub fn validator(&self) -> Option<&str> {
        match &self.etag {
            Some(etag) if !etag.starts_with("W/") => Some(etag),
            _ => self.last_modified.as_deref(),
        }
    }

    /// Whether `other` is certainly another version of the file (both have strong ETags,
    /// and they differ).
    fn differs_from(&self, other: &RemoteFile) -> bool {
        match (&self.etag, &other.etag) {
            (Some(a), Some(b)) => !a.starts_with("W/") && !b.starts_with("W/") && a != b,
            _ => false,
        }
    }
}

/// How much one file's download may cost before it is given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DownloadBudget {
    /// Requests for the file, first, resumed or restarted, at most.
    pub max_attempts: u32,
    /// Body bytes received in all, at most this multiple of the file's size (of the size
    /// limit while the size is unknown)...
    pub bytes_factor: u64,
    /// ... plus this many, so that a small file may be restarted a few times.
    pub bytes_slack: u64,
}

impl Default for DownloadBudget {
    fn default() -> Self {
        Self {
            max_attempts: 100,
            bytes_factor: 3,
            bytes_slack: 1 << 20,
        }
    }
}

/// The range the next request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeRequest {
    /// `Range: bytes=<start>-`, when bytes are held.
    pub start: Option<u64>,
    /// `If-Range`, when `start` is given and the held bytes' answer had a validator.
    pub if_range: Option<String>,
}

/// What the head of an answer (its status and headers) means.
#[derive(Debug)]
pub enum Head {
    /// Its body continues the held bytes (after emptying them if [`Resume::take_restart`]
    /// says so); `record` is what to keep beside them, before the first byte.
    Append {
        total: Option<u64>,
        record: RemoteFile,
    },
    /// The file was complete already: nothing to read.
    Complete(RemoteFile),
    /// Worth another request (the held bytes may have been given up).
    Retry(Refusal),
    /// The download cannot succeed.
    Fail(Refusal),
    /// A status that is not about the file's bytes (an error or a redirect): the caller
    /// judges it.
    Other,
}

/// How a body ended.
#[derive(Debug)]
pub enum End {
    /// The file is complete.
    Complete(RemoteFile),
    /// It is not: cut (`short` is `None`: the caller knows why) or ended early;
    /// `progressed` when the held bytes reach further than ever before.
    Retry {
        short: Option<Refusal>,
        progressed: bool,
    },
}

/// `Content-Range: bytes START-END/TOTAL` → (START, TOTAL); `bytes */TOTAL` → (None, TOTAL).
pub fn content_range(value: &str) -> Option<(Option<u64>, Option<u64>)> {
    let rest = value.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    if range.trim() == "*" {
        return Some((None, total));
    }
    let (start, end) = range.split_once('-')?;
    let start: u64 = start.trim().parse().ok()?;
    let end: u64 = end.trim().parse().ok()?;
    if end < start || total.is_some_and(|t| end >= t) {
        return None;
    }
    Some((Some(start), total))
}

/// The state of one file's download (see the module docs).
#[derive(Debug, Clone)]
pub struct Resume {
    max_size: u64,
    budget: DownloadBudget,
    held: u64,
    /// The most bytes held at any time since the last deliberate restart.
    best: u64,
    /// Validators of the answer the held bytes came from.
    remote: Option<RemoteFile>,
    /// Size of the file as far as known.
    size: Option<u64>,
    /// The size the byte budget is a multiple of: the least of the size limit and every
    /// size announced (an answer cannot raise it).
    budget_size: u64,
    /// Limit of the current body: its announced end, or `max_size`.
    limit: u64,
    total: Option<u64>,
    attempts: u32,
    received: u64,
    restarts: u32,
    restart: bool,
}

impl Resume {
    /// A download with `held` bytes on disk that came from the answer `record` describes
    /// (none: they are not trusted), of at most `max_size` bytes.
    pub fn new(
        held: u64,
        record: Option<RemoteFile>,
        max_size: u64,
        budget: DownloadBudget,
    ) -> Self {
        let mut resume = Self {
            max_size,
            budget,
            held,
            best: held,
            size: record.as_ref().and_then(|r| r.size),
            budget_size: max_size,
            remote: record,
            limit: max_size,
            total: None,
            attempts: 0,
            received: 0,
            restarts: 0,
            restart: false,
        };
        let trusted = resume
            .remote
            .as_ref()
            .is_some_and(|r| r.size.is_none_or(|size| held <= size) && held <= max_size);
        if held > 0 && !trusted {
            resume.start_over();
            resume.restarts = 0;
        }
        resume
    }

    /// Bytes held now.
    pub fn held(&self) -> u64 {
        self.held
    }

    /// Requests made so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Body bytes received so far, over all requests.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Times the held bytes were given up.
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    /// The size of the file, as far as known.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// Whether the held bytes must be emptied before anything else (asked once: the
    /// answer is `true` once per decision to start again).
    pub fn take_restart(&mut self) -> bool {
        std::mem::take(&mut self.restart)
    }

    fn start_over(&mut self) {
        self.held = 0;
        self.remote = None;
        self.restart = true;
        self.restarts += 1;
    }

    /// Starts again from zero on purpose (the finished file's checksum was wrong): the
    /// next bytes count as progress again, and the budget goes on.
    pub fn start_again(&mut self) {
        self.start_over();
        self.best = 0;
    }

    fn budget_error(&self) -> Refusal {
        Refusal::Budget {
            attempts: self.attempts,
            received: self.received,
            size: self.size,
        }
    }

    /// Body bytes this download may receive in all.
    pub fn byte_budget(&self) -> u64 {
        self.budget_size
            .saturating_mul(self.budget.bytes_factor)
            .saturating_add(self.budget.bytes_slack)
    }

    /// The range of the next request, counting it against the budget.
    pub fn request(&mut self) -> Result<RangeRequest> {
        if self.attempts >= self.budget.max_attempts {
            return Err(self.budget_error());
        }
        self.attempts += 1;
        if self.held == 0 {
            return Ok(RangeRequest {
                start: None,
                if_range: None,
            });
        }
        Ok(RangeRequest {
            start: Some(self.held),
            if_range: self
                .remote
                .as_ref()
                .and_then(RemoteFile::validator)
                .map(str::to_owned),
        })
    }

    fn another_range(&mut self, why: &'static str) -> Head {
        self.start_over();
        Head::Retry(Refusal::Restarted(why))
    }

    /// What the answer with `status`, `content_range` and `content_length` (of its body)
    /// means; `fresh` holds its validators.
    pub fn head(
        &mut self,
        status: u16,
        range_header: Option<&str>,
        content_length: Option<u64>,
        fresh: RemoteFile,
    ) -> Head {
        let range = range_header.map(content_range);
        let total = match status {
            206 => {
                let Some(Some((Some(start), total))) = range else {
                    return self.another_range("the server answered a range it did not describe");
                };
                if start == 0 {
                    // The file from its start: as a `200`.
                    if self.held > 0 {
                        self.start_over();
                    }
                } else if start != self.held {
                    return self.another_range("the server answered another range than asked");
                } else if self.remote.as_ref().is_some_and(|r| r.differs_from(&fresh)) {
                    return self.another_range("the file changed on the server");
                }
                let total = total.or(self.size);
                if let (Some(total), Some(size)) = (total, self.size)
                    && total != size
                    && self.held > 0
                {
                    return self.another_range("the file changed size on the server");
                }
                total
            }
            200 => {
                if self.held > 0 {
                    // Ranges unsupported, or the file changed: this is the whole of it.
                    self.start_over();
                }
                content_length
            }
            416 => {
                let total = match range {
                    Some(Some((None, total))) => total,
                    _ => None,
                };
                if let (Some(total), Some(known)) = (total, self.remote.clone())
                    && total == self.held
                    && self.held > 0
                {
                    return Head::Complete(RemoteFile {
                        size: Some(total),
                        ..known
                    });
                }
                return self.another_range("the bytes held are more than the file");
            }
            _ => return Head::Other,
        };
        if let Some(total) = total
            && total > self.max_size
        {
            return Head::Fail(Refusal::TooLarge {
                limit: self.max_size,
            });
        }
        if let Some(total) = total {
            self.budget_size = self.budget_size.min(total);
            if self.held == 0 || self.size.is_none() {
                // A new start, or the first size given: this answer's size is the file's.
                self.size = Some(total);
            }
        }
        self.total = total;
        self.limit = total.unwrap_or(self.max_size).min(self.max_size);
        // The validators of the answer the bytes come from, kept before the first byte.
        let record = match self.remote.as_ref() {
            Some(r) if self.held > 0 => RemoteFile {
                size: total.or(r.size),
                etag: fresh.etag.or_else(|| r.etag.clone()),
                last_modified: fresh.last_modified.or_else(|| r.last_modified.clone()),
            },
            _ => RemoteFile {
                size: total,
                ..fresh
            },
        };
        self.remote = Some(record.clone());
        Head::Append { total, record }
    }

    /// `n` more body bytes arrived: `Ok` to keep them, else why the download stops (the
    /// held bytes are then given up when they went past the file's end).
    pub fn bytes(&mut self, n: u64) -> Result<()> {
        self.received = self.received.saturating_add(n);
        if n > self.limit.saturating_sub(self.held) {
            let limit = self.limit;
            self.start_over();
            return Err(Refusal::TooLarge { limit });
        }
        if self.received > self.byte_budget() {
            return Err(self.budget_error());
        }
        self.held += n;
        Ok(())
    }

    /// The body ended, cleanly or `cut` (the connection broke, a read timed out).
    pub fn end(&mut self, cut: bool) -> End {
        let progressed = self.held > self.best;
        self.best = self.best.max(self.held);
        let short = match self.total {
            _ if cut => None,
            Some(total) if self.held < total => Some(Refusal::Short {
                held: self.held,
                total,
            }),
            _ => {
                let mut done = self.remote.clone().unwrap_or_default();
                done.size = Some(self.held);
                self.size = Some(self.held);
                return End::Complete(done);
            }
        };
        End::Retry { short, progressed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(etag: &str, size: u64) -> RemoteFile {
        RemoteFile {
            size: Some(size),
            etag: Some(etag.to_owned()),
            last_modified: None,
        }
    }

    /// A download of at most 1000 bytes holding `held` bytes of the file of `etag` and
    /// `size`, with the default budget.
    fn holding(held: u64, etag: &str, size: u64) -> Resume {
        Resume::new(
            held,
            Some(remote(etag, size)),
            1000,
            DownloadBudget::default(),
        )
    }

    #[test]
    fn content_ranges() {
        assert_eq!(
            content_range("bytes 100-199/1000"),
            Some((Some(100), Some(1000)))
        );
        assert_eq!(content_range("bytes 5-9/*"), Some((Some(5), None)));
        assert_eq!(content_range("bytes */1000"), Some((None, Some(1000))));
        for bad in [
            "items 1-2/3",
            "bytes 9-5/10",
            "bytes 5-10/10",
            "bytes x-1/2",
            "",
        ] {
            assert_eq!(content_range(bad), None, "{bad}");
        }
    }

    #[test]
    fn strong_etags_are_preferred_as_validators() {
        let r = RemoteFile {
            size: None,
            etag: Some("\"abc\"".into()),
            last_modified: Some("Tue, 01 Apr 2025 00:00:00 GMT".into()),
        };
        assert_eq!(r.validator(), Some("\"abc\""));
        let weak = RemoteFile {
            etag: Some("W/\"abc\"".into()),
            ..r.clone()
        };
        assert_eq!(weak.validator(), Some("Tue, 01 Apr 2025 00:00:00 GMT"));
        assert_eq!(RemoteFile::default().validator(), None);
    }

    #[test]
    fn a_resume_asks_for_the_rest_with_the_validator() {
        let mut r = holding(40, "\"v\"", 100);
        assert!(!r.take_restart());
        let asked = r.request().unwrap();
        assert_eq!(asked.start, Some(40));
        assert_eq!(asked.if_range.as_deref(), Some("\"v\""));
        let head = r.head(206, Some("bytes 40-99/100"), Some(60), remote("\"v\"", 60));
        assert!(
            matches!(
                head,
                Head::Append {
                    total: Some(100),
                    ..
                }
            ),
            "{head:?}"
        );
        r.bytes(60).unwrap();
        assert!(matches!(r.end(false), End::Complete(f) if f.size == Some(100)));
    }

    #[test]
    fn untrusted_bytes_are_given_up_before_the_first_request() {
        let mut r = Resume::new(40, None, 1000, DownloadBudget::default());
        assert!(r.take_restart());
        assert_eq!(r.request().unwrap().start, None);
        let mut r = holding(400, "\"v\"", 100);
        assert!(r.take_restart());
    }

    #[test]
    fn cuts_and_other_ranges_are_not_progress_and_the_budget_ends_them() {
        // The reproducer: every transfer cut, every resume answered with another range.
        let budget = DownloadBudget {
            max_attempts: 1000,
            bytes_factor: 3,
            bytes_slack: 0,
        };
        let size = 4_400_000;
        let mut r = Resume::new(0, None, 1 << 40, budget);
        let mut progressed = 0;
        let mut failures_in_a_row = 0;
        let error = loop {
            let asked = match r.request() {
                Ok(asked) => asked,
                Err(e) => break e,
            };
            let head = match asked.start {
                None => r.head(200, None, Some(size), remote("\"v\"", size)),
                Some(at) => r.head(
                    206,
                    Some(&format!("bytes {}-{}/{size}", at / 2, size - 1)),
                    Some(size - at / 2),
                    remote("\"v\"", size - at / 2),
                ),
            };
            if r.take_restart() {
                failures_in_a_row += 1;
            }
            match head {
                Head::Append { .. } => {
                    if let Err(e) = r.bytes(1_000_000) {
                        break e;
                    }
                    if let End::Retry { progressed: p, .. } = r.end(true) {
                        progressed += usize::from(p);
                    }
                }
                Head::Retry(_) => {}
                other => panic!("{other:?}"),
            }
            if failures_in_a_row > 50 {
                break Refusal::Restarted("no end");
            }
        };
        assert!(matches!(error, Refusal::Budget { .. }), "{error:?}");
        assert!(progressed <= 1, "{progressed}");
        // At most one piece past the budget: the one that crossed it.
        assert!(r.received() <= 3 * size + 1_000_000, "{}", r.received());
    }

    #[test]
    fn a_200_to_a_range_restarts_and_a_416_at_the_end_completes() {
        let mut r = holding(50, "\"v\"", 100);
        r.request().unwrap();
        let head = r.head(200, None, Some(100), remote("\"v\"", 100));
        assert!(r.take_restart());
        assert!(matches!(
            head,
            Head::Append {
                total: Some(100),
                ..
            }
        ));
        assert_eq!(r.held(), 0);

        let mut r = holding(100, "\"v\"", 100);
        r.request().unwrap();
        let head = r.head(416, Some("bytes */100"), Some(0), RemoteFile::default());
        assert!(matches!(head, Head::Complete(f) if f.size == Some(100)));
        let mut r = holding(100, "\"v\"", 100);
        r.request().unwrap();
        assert!(matches!(
            r.head(416, Some("bytes */90"), Some(0), RemoteFile::default()),
            Head::Retry(_)
        ));
        assert!(r.take_restart());
    }

    #[test]
    fn a_body_past_its_end_or_the_limit_stops() {
        let mut r = Resume::new(0, None, 1000, DownloadBudget::default());
        r.request().unwrap();
        assert!(matches!(
            r.head(200, None, Some(5000), RemoteFile::default()),
            Head::Fail(Refusal::TooLarge { .. })
        ));
        let mut r = Resume::new(0, None, 1000, DownloadBudget::default());
        r.request().unwrap();
        r.head(200, None, None, RemoteFile::default());
        r.bytes(999).unwrap();
        assert!(matches!(r.bytes(2), Err(Refusal::TooLarge { .. })));
        assert!(r.take_restart());
    }

    #[test]
    fn scripted_servers_keep_every_promise() {
        // The fuzz target's property, on a fixed set of random scripts.
        let mut rng = fastrand::Rng::with_seed(37);
        let mut completed = 0;
        for round in 0..5_000 {
            let script: Vec<u8> = (0..rng.usize(0..400)).map(|_| rng.u8(..)).collect();
            for truthful in [true, false] {
                match script::play(&script, truthful) {
                    Ok(done) => completed += usize::from(done && truthful),
                    Err(broken) => panic!("round {round} ({truthful}): {broken}: {script:?}"),
                }
            }
        }
        // Not vacuous: many truthful runs reach the end and are checked byte for byte.
        assert!(completed > 250, "{completed}");
    }

    #[test]
    fn a_changed_file_is_started_again() {
        let mut r = holding(50, "\"v1\"", 100);
        r.request().unwrap();
        let head = r.head(206, Some("bytes 50-99/100"), Some(50), remote("\"v2\"", 50));
        assert!(matches!(head, Head::Retry(_)));
        assert!(r.take_restart());
        let mut r = holding(50, "\"v1\"", 100);
        r.request().unwrap();
        let head = r.head(
            206,
            Some("bytes 50-119/120"),
            Some(70),
            remote("\"v1\"", 70),
        );
        assert!(matches!(head, Head::Retry(_)));
    }
}

/// A server played from a script of bytes, against the rules above, and the promises every
/// sequence of answers must keep: the bytes held never pass the size limit, the requests
/// never pass the budget, the bytes received pass it by at most the piece that crossed it,
/// and a download said complete holds the file exactly when the server's answers told the
/// truth. The fuzz target `resume` and the tests play it.
pub mod script {
    use super::{DownloadBudget, End, Head, Refusal, RemoteFile, Resume};

    struct Bytes<'a>(&'a [u8]);

    impl Bytes<'_> {
        fn byte(&mut self) -> Option<u8> {
            let (&first, rest) = self.0.split_first()?;
            self.0 = rest;
            Some(first)
        }

        /// A number below `below` (0 when the script is over).
        fn below(&mut self, below: u64) -> u64 {
            let hi = u64::from(self.byte().unwrap_or(0));
            let lo = u64::from(self.byte().unwrap_or(0));
            ((hi << 8) | lo) % below.max(1)
        }
    }

    /// Byte `i` of the file the server holds.
    fn file_byte(i: u64) -> u8 {
        (i.wrapping_mul(7) ^ (i >> 8)) as u8
    }

    fn tagged(etag: &str) -> RemoteFile {
        RemoteFile {
            size: None,
            etag: Some(etag.to_owned()),
            last_modified: None,
        }
    }

    /// One answer of the server: status, `Content-Range`, `Content-Length`, where its body
    /// starts in the file, and its `ETag`.
    type Answer = (u16, Option<String>, Option<u64>, u64, &'static str);

    fn answer(s: &mut Bytes<'_>, action: u8, start: u64, len: u64, truthful: bool) -> Answer {
        let last = len - 1;
        match action % 8 {
            0 => (200, None, Some(len), 0, "\"v\""),
            1 | 7 if start < len => (
                206,
                Some(format!("bytes {start}-{last}/{len}")),
                (action % 8 == 1).then_some(len - start),
                start,
                "\"v\"",
            ),
            1 | 7 => (416, Some(format!("bytes */{len}")), Some(0), 0, "\"v\""),
            2 => {
                let other = s.below(len);
                let range = format!("bytes {other}-{last}/{len}");
                (206, Some(range), Some(len - other), other, "\"v\"")
            }
            3 => (416, Some(format!("bytes */{len}")), Some(0), 0, "\"v\""),
            4 => (206, Some("bytes nonsense".to_owned()), None, 0, "\"v\""),
            5 => (503, None, None, 0, "\"v\""),
            6 if truthful => (200, None, None, 0, "\"v\""),
            // The lies: another size than the body's, another total, another version.
            6 => (200, None, Some(s.below(len * 2 + 1)), 0, "\"v\""),
            _ => {
                let total = s.below(len * 2 + 1);
                let range = format!("bytes {start}-{}/{total}", start + 5);
                (206, Some(range), None, start, "\"x\"")
            }
        }
    }

    /// Plays `script`: whether the download completed, or `Err` naming the promise broken.
    /// With `truthful`, the server's headers describe the bytes it sends (it still cuts,
    /// fails, answers other ranges and ignores ranges); otherwise it may also lie about
    /// sizes, ranges and versions, and only the promises on sizes and budgets are checked.
    pub fn play(script: &[u8], truthful: bool) -> Result<bool, String> {
        let mut s = Bytes(script);
        let len = s.below(4096) + 1;
        let max_size = if s.byte().unwrap_or(0) % 4 == 0 {
            len / 2 + 1
        } else {
            1 << 20
        };
        let budget = DownloadBudget {
            max_attempts: u32::from(s.byte().unwrap_or(0) % 16) + 1,
            bytes_factor: u64::from(s.byte().unwrap_or(0) % 4) + 1,
            bytes_slack: s.below(2048),
        };
        // What an earlier run left: a prefix of the file, with or without a fitting record.
        let held = s.below(len + 64);
        let record = match s.byte().unwrap_or(0) % 3 {
            0 => None,
            1 => Some(RemoteFile {
                size: Some(len),
                ..tagged("\"v\"")
            }),
            _ => Some(RemoteFile {
                size: Some(held / 2),
                ..tagged("\"w\"")
            }),
        };
        let mut disk: Vec<u8> = (0..held).map(file_byte).collect();
        let mut r = Resume::new(held, record, max_size, budget);
        let mut requests = 0u32;
        loop {
            if r.take_restart() {
                disk.clear();
            }
            match r.request() {
                Ok(_) => requests += 1,
                Err(Refusal::Budget { attempts, .. }) => {
                    return if attempts == budget.max_attempts && requests == attempts {
                        Ok(false)
                    } else {
                        Err(format!("budget error after {requests} requests"))
                    };
                }
                Err(e) => return Err(format!("request(): {e}")),
            }
            if requests > budget.max_attempts {
                return Err(format!(
                    "{requests} requests past a budget of {}",
                    budget.max_attempts
                ));
            }
            let Some(action) = s.byte() else {
                return Ok(false);
            };
            let start = r.held();
            let (status, range, length, from, tag) = answer(&mut s, action, start, len, truthful);
            let cut = s.below(len + 1);
            let head = r.head(status, range.as_deref(), length, tagged(tag));
            if r.take_restart() {
                disk.clear();
            }
            check(&r, &disk, max_size)?;
            match head {
                Head::Append { .. } => {}
                Head::Complete(_) => return complete(&disk, len, truthful),
                Head::Retry(_) | Head::Other => continue,
                Head::Fail(_) => return Ok(false),
            }
            let end = (from + cut).min(len);
            let mut at = from;
            while at < end {
                let piece = (s.below(512) + 1).min(end - at);
                // The byte budget is a multiple of the size limit at most; every piece
                // accepted stays within it.
                let most = max_size * budget.bytes_factor + budget.bytes_slack;
                match r.bytes(piece) {
                    Ok(()) if r.received() > r.byte_budget() => {
                        return Err(format!(
                            "{} bytes received past the budget of {}",
                            r.received(),
                            r.byte_budget()
                        ));
                    }
                    Ok(()) => {}
                    Err(_) if r.byte_budget() > most => {
                        return Err(format!("a budget of {} past {most}", r.byte_budget()));
                    }
                    Err(_) => return Ok(false),
                }
                disk.extend((at..at + piece).map(file_byte));
                at += piece;
                check(&r, &disk, max_size)?;
            }
            if let End::Complete(_) = r.end(at < len) {
                return complete(&disk, len, truthful);
            }
        }
    }

    fn check(r: &Resume, disk: &[u8], max_size: u64) -> Result<(), String> {
        if r.held() != disk.len() as u64 {
            return Err(format!("{} bytes held, {} on disk", r.held(), disk.len()));
        }
        if r.held() > max_size {
            return Err(format!(
                "{} bytes held past the limit of {max_size}",
                r.held()
            ));
        }
        Ok(())
    }

    fn complete(disk: &[u8], len: u64, truthful: bool) -> Result<bool, String> {
        let file: Vec<u8> = (0..len).map(file_byte).collect();
        if truthful && disk != file.as_slice() {
            return Err(format!(
                "complete with {} bytes that are not the file of {len}",
                disk.len()
            ));
        }
        Ok(true)
    }
}

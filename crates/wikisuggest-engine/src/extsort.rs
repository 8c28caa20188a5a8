//! External merge sort of `(key, payload)` records within a fixed memory budget.
//!
//! Records are buffered until the budget is reached, sorted by key (stably) and written to a
//! run file; at the end the runs are merged, at most [`MAX_FAN_IN`] at a time. Equal keys come
//! out in the order they were pushed (runs are merged in the order they were written, and
//! each run is sorted stably), so the output never depends on the budget. This is what lets
//! the converter build an enwiki-size native file without holding its tables in memory, and
//! the translation catalog join an enwiki-size wiki's tables.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Most runs merged at once; more are first merged into longer runs.
pub(crate) const MAX_FAN_IN: usize = 64;
/// Read buffer of each run during a merge.
const RUN_READ_BUFFER: usize = 64 << 10;
/// Bookkeeping bytes per buffered record (its place in the arena), counted in the budget.
const INDEX_BYTES: usize = std::mem::size_of::<Slot>();

/// The bytes on disk of a set of work files, against a limit: a conversion holds its work
/// files (sort runs and the rest) to the space that was reserved for it.
#[derive(Debug)]
pub(crate) struct WorkMeter {
    used: AtomicU64,
    limit: u64,
}

impl WorkMeter {
    /// A meter refusing more than `limit` bytes (none: only counting).
    pub(crate) fn new(limit: Option<u64>) -> Arc<Self> {
        Arc::new(Self {
            used: AtomicU64::new(0),
            limit: limit.unwrap_or(u64::MAX),
        })
    }

    /// Bytes on disk now.
    pub(crate) fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Whether the limit was passed.
    pub(crate) fn exceeded(&self) -> bool {
        self.used() > self.limit
    }

    /// Counts `n` more bytes written: an error once past the limit.
    pub(crate) fn take(&self, n: u64) -> std::io::Result<()> {
        let now = self.used.fetch_add(n, Ordering::Relaxed).saturating_add(n);
        if now > self.limit {
            return Err(std::io::Error::other(format!(
                "the work files passed the {} bytes reserved for them",
                self.limit
            )));
        }
        Ok(())
    }

    /// Counts `n` bytes removed.
    pub(crate) fn give_back(&self, n: u64) {
        let _ = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                Some(u.saturating_sub(n))
            });
    }
}

/// A writer whose bytes count on a [`WorkMeter`]: a write fails once the meter's limit is
/// passed (after at most one buffer more).
pub(crate) struct Metered<W> {
    inner: W,
    meter: Arc<WorkMeter>,
}

impl<W> Metered<W> {
    pub(crate) fn new(inner: W, meter: Arc<WorkMeter>) -> Self {
        Self { inner, meter }
    }
}

impl<W: Write> Write for Metered<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.meter.take(n as u64)?;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A run file being written, counted on the sorter's meter.
fn create_run(path: &Path, meter: &Arc<WorkMeter>) -> std::io::Result<BufWriter<Metered<File>>> {
    Ok(BufWriter::with_capacity(
        1 << 20,
        Metered::new(File::create(path)?, meter.clone()),
    ))
}

#[derive(Clone, Copy)]
struct Slot {
    start: usize,
    key_len: u32,
    payload_len: u32,
}

/// Buffers records and spills sorted runs to files in `dir`.
pub struct Sorter {
    dir: PathBuf,
    name: String,
    budget: usize,
    arena: Vec<u8>,
    slots: Vec<Slot>,
    runs: Vec<PathBuf>,
    pushed: u64,
    meter: Arc<WorkMeter>,
}

impl Sorter {
    /// A sorter whose buffer holds at most about `budget` bytes; run files are named after
    /// `name` inside `dir` (which must exist and belong to the caller), their space not
    /// limited.
    pub fn new(dir: &Path, name: &str, budget: usize) -> Self {
        Self::metered(dir, name, budget, WorkMeter::new(None))
    }

    /// A sorter whose buffer holds at most about `budget` bytes, counting its run files on
    /// `meter`; run files are named after `name` inside `dir` (which must exist and belong
    /// to the caller).
    pub(crate) fn metered(dir: &Path, name: &str, budget: usize, meter: Arc<WorkMeter>) -> Self {
        Self {
            dir: dir.to_owned(),
            name: name.to_owned(),
            budget: budget.max(1),
            arena: Vec::new(),
            slots: Vec::new(),
            runs: Vec::new(),
            pushed: 0,
            meter,
        }
    }

    /// Number of records pushed so far.
    pub fn len(&self) -> u64 {
        self.pushed
    }

    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.pushed == 0
    }

    /// Adds a record.
    pub fn push(&mut self, key: &[u8], payload: &[u8]) -> std::io::Result<()> {
        let (Ok(key_len), Ok(payload_len)) =
            (u32::try_from(key.len()), u32::try_from(payload.len()))
        else {
            return Err(std::io::Error::other("sort record larger than 4 GiB"));
        };
        let need = key.len() + payload.len() + INDEX_BYTES;
        if !self.slots.is_empty() && self.buffered() + need > self.budget {
            self.spill()?;
        }
        self.slots.push(Slot {
            start: self.arena.len(),
            key_len,
            payload_len,
        });
        self.arena.extend_from_slice(key);
        self.arena.extend_from_slice(payload);
        self.pushed += 1;
        Ok(())
    }

    fn buffered(&self) -> usize {
        self.arena.len() + self.slots.len() * INDEX_BYTES
    }

    fn sort_buffer(&mut self) {
        let arena = &self.arena;
        let key = |s: &Slot| &arena[s.start..s.start + s.key_len as usize];
        self.slots.sort_by(|a, b| key(a).cmp(key(b)));
    }

    fn spill(&mut self) -> std::io::Result<()> {
        self.sort_buffer();
        let path = self
            .dir
            .join(format!("{}.run{}", self.name, self.runs.len()));
        let mut w = create_run(&path, &self.meter)?;
        for s in &self.slots {
            let end = s.start + s.key_len as usize + s.payload_len as usize;
            write_record_header(&mut w, s.key_len, s.payload_len)?;
            w.write_all(&self.arena[s.start..end])?;
        }
        w.into_inner().map_err(|e| e.into_error())?;
        self.runs.push(path);
        self.arena.clear();
        self.slots.clear();
        // Give the buffer back between runs of a phase that has finished with it.
        if self.arena.capacity() > self.budget * 2 {
            self.arena.shrink_to(self.budget);
        }
        Ok(())
    }

    /// The records in key order.
    pub fn finish(mut self) -> std::io::Result<Sorted> {
        if self.runs.is_empty() {
            self.sort_buffer();
            return Ok(Sorted {
                source: Source::Memory {
                    arena: self.arena,
                    slots: self.slots,
                    next: 0,
                },
                key: Vec::new(),
                payload: Vec::new(),
            });
        }
        if !self.slots.is_empty() {
            self.spill()?;
        }
        self.arena = Vec::new();
        self.slots = Vec::new();
        let mut runs = std::mem::take(&mut self.runs);
        let mut level = 0;
        while runs.len() > MAX_FAN_IN {
            let mut merged = Vec::new();
            for (i, group) in runs.chunks(MAX_FAN_IN).enumerate() {
                let path = self.dir.join(format!("{}.merge{level}.{i}", self.name));
                let mut w = create_run(&path, &self.meter)?;
                let mut m = Merge::open(group)?;
                while let Some(r) = m.next()? {
                    write_record_header(&mut w, r.key.len() as u32, r.payload.len() as u32)?;
                    w.write_all(r.key)?;
                    w.write_all(r.payload)?;
                }
                w.into_inner().map_err(|e| e.into_error())?;
                drop(m);
                for p in group {
                    let size = std::fs::metadata(p).map_or(0, |m| m.len());
                    if std::fs::remove_file(p).is_ok() {
                        self.meter.give_back(size);
                    }
                }
                merged.push(path);
            }
            runs = merged;
            level += 1;
        }
        Ok(Sorted {
            source: Source::Merge(Merge::open(&runs)?),
            key: Vec::new(),
            payload: Vec::new(),
        })
    }
}

fn write_record_header(w: &mut impl Write, key_len: u32, payload_len: u32) -> std::io::Result<()> {
    w.write_all(&key_len.to_le_bytes())?;
    w.write_all(&payload_len.to_le_bytes())
}

/// One record of a sorted stream, borrowed until the next call.
pub struct Record<'a> {
    pub key: &'a [u8],
    pub payload: &'a [u8],
}

enum Source {
    Memory {
        arena: Vec<u8>,
        slots: Vec<Slot>,
        next: usize,
    },
    Merge(Merge),
}

/// The records of a [`Sorter`] in key order (equal keys in push order).
pub struct Sorted {
    source: Source,
    key: Vec<u8>,
    payload: Vec<u8>,
}

impl Sorted {
    /// The next record, or `None` at the end.
    /// The next record, borrowed until the next call (a lending iterator, which `Iterator`
    /// cannot express).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> std::io::Result<Option<Record<'_>>> {
        match &mut self.source {
            Source::Memory { arena, slots, next } => {
                let Some(s) = slots.get(*next) else {
                    return Ok(None);
                };
                *next += 1;
                let k = s.start + s.key_len as usize;
                let end = k + s.payload_len as usize;
                Ok(Some(Record {
                    key: &arena[s.start..k],
                    payload: &arena[k..end],
                }))
            }
            Source::Merge(m) => match m.next()? {
                Some(r) => {
                    self.key.clear();
                    self.key.extend_from_slice(r.key);
                    self.payload.clear();
                    self.payload.extend_from_slice(r.payload);
                    Ok(Some(Record {
                        key: &self.key,
                        payload: &self.payload,
                    }))
                }
                None => Ok(None),
            },
        }
    }
}

/// One run being read: its current record.
struct Run {
    reader: BufReader<File>,
    key: Vec<u8>,
    payload: Vec<u8>,
    done: bool,
}

impl Run {
    fn open(path: &Path) -> std::io::Result<Self> {
        let mut run = Self {
            reader: BufReader::with_capacity(RUN_READ_BUFFER, File::open(path)?),
            key: Vec::new(),
            payload: Vec::new(),
            done: false,
        };
        run.advance()?;
        Ok(run)
    }

    fn advance(&mut self) -> std::io::Result<()> {
        let mut header = [0u8; 8];
        match self.reader.read_exact(&mut header) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                self.done = true;
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        let key_len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let payload_len = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
        self.key.resize(key_len, 0);
        self.reader.read_exact(&mut self.key)?;
        self.payload.resize(payload_len, 0);
        self.reader.read_exact(&mut self.payload)
    }
}

/// A k-way merge of sorted runs: a binary min-heap of run numbers ordered by (current key,
/// run number), so equal keys come out in run order.
struct Merge {
    runs: Vec<Run>,
    heap: Vec<usize>,
    /// The run whose record was handed out last, advanced on the next call.
    pending: Option<usize>,
}

impl Merge {
    fn open(paths: &[PathBuf]) -> std::io::Result<Self> {
        let runs = paths
            .iter()
            .map(|p| Run::open(p))
            .collect::<std::io::Result<Vec<_>>>()?;
        let mut m = Self {
            heap: (0..runs.len()).filter(|&i| !runs[i].done).collect(),
            runs,
            pending: None,
        };
        for i in (0..m.heap.len() / 2).rev() {
            m.sift_down(i);
        }
        Ok(m)
    }

    fn less(&self, a: usize, b: usize) -> bool {
        (&self.runs[a].key, a) < (&self.runs[b].key, b)
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let l = 2 * i + 1;
            let r = l + 1;
            let mut m = i;
            if l < n && self.less(self.heap[l], self.heap[m]) {
                m = l;
            }
            if r < n && self.less(self.heap[r], self.heap[m]) {
                m = r;
            }
            if m == i {
                return;
            }
            self.heap.swap(i, m);
            i = m;
        }
    }

    fn next(&mut self) -> std::io::Result<Option<Record<'_>>> {
        if let Some(top) = self.pending.take() {
            self.runs[top].advance()?;
            if self.runs[top].done {
                let last = self.heap.len() - 1;
                self.heap.swap(0, last);
                self.heap.pop();
            }
            if !self.heap.is_empty() {
                self.sift_down(0);
            }
        }
        let Some(&top) = self.heap.first() else {
            return Ok(None);
        };
        self.pending = Some(top);
        let run = &self.runs[top];
        Ok(Some(Record {
            key: &run.key,
            payload: &run.payload,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted_with_budget(
        records: &[(Vec<u8>, Vec<u8>)],
        budget: usize,
    ) -> Vec<(Vec<u8>, Vec<u8>)> {
        let dir = std::env::temp_dir().join(format!(
            "wikisuggest-extsort-{}-{budget}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = Sorter::metered(&dir, "t", budget, WorkMeter::new(None));
        for (k, p) in records {
            s.push(k, p).unwrap();
        }
        assert_eq!(s.len(), records.len() as u64);
        let mut out = Vec::new();
        let mut sorted = s.finish().unwrap();
        while let Some(r) = sorted.next().unwrap() {
            out.push((r.key.to_vec(), r.payload.to_vec()));
        }
        drop(sorted);
        std::fs::remove_dir_all(&dir).unwrap();
        out
    }

    #[test]
    fn every_budget_gives_the_same_stable_order() {
        let mut rng = 12345u64;
        let mut records = Vec::new();
        for i in 0..5000u32 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (rng >> 60) as usize;
            let key: Vec<u8> = (0..len)
                .map(|j| b'a' + ((rng >> (j * 3)) & 3) as u8)
                .collect();
            records.push((key, i.to_le_bytes().to_vec()));
        }
        let mut expected = records.clone();
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        // A budget of a few records makes hundreds of runs and two merge levels.
        for budget in [usize::MAX, 1 << 16, 200, 1] {
            assert_eq!(
                sorted_with_budget(&records, budget),
                expected,
                "budget {budget}"
            );
        }
    }

    #[test]
    fn empty_input() {
        assert!(sorted_with_budget(&[], 1).is_empty());
    }
}

//! Multistream bzip2 (Wikimedia's `pages-articles-multistream.xml.bz2`) decoded on several
//! threads: the file is a series of independent bzip2 streams (about 100 pages each), so runs
//! of whole streams are decoded in parallel and handed over in file order.
//!
//! Streams are found by their first bytes (`BZh1`–`BZh9` then a block's or the end's magic
//! number, byte-aligned because every stream starts on a byte), cutting the file into jobs of
//! about [`JOB_BYTES`]. A job is used only if it decodes to the end of its last stream exactly
//! where the job ends; anything else — a magic number that was only data, a corrupt or cut
//! stream, a job whose output would exceed [`MAX_JOB_OUTPUT`] (a decompression bomb), a file
//! of one stream — switches to decoding the rest of the file on one thread from the start of
//! that job, which is a true stream boundary since everything before it decoded whole. So the
//! bytes read are always those of a sequential decoder, errors included.

use std::fs::File;
use std::io::{BufReader, ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};

use crate::prefetch::Prefetch;

/// Compressed bytes per job (whole streams: a job ends at the first stream start after it).
pub const JOB_BYTES: usize = 1 << 20;
/// Largest output of one job; a larger one is decoded sequentially, as a stream.
pub const MAX_JOB_OUTPUT: usize = 64 << 20;
/// Bytes searched for the next stream start before the file is taken as one stream.
const MAX_SEARCH: usize = 32 << 20;
/// Most decoding threads: each job in flight may hold [`MAX_JOB_OUTPUT`] bytes, about four
/// jobs per thread can be in flight, so this bounds the memory a hostile file can take.
pub const MAX_THREADS: usize = 4;

/// What a job gave.
enum Decoded {
    /// Its streams, whole, ending exactly at the job's end.
    Whole(Vec<u8>),
    /// Anything else: decode sequentially from the job's start.
    Sequential,
}

/// What the reader takes next, in file order.
enum Next {
    Job(Receiver<Decoded>, u64),
    /// The rest of the file, from this offset, on one thread.
    Sequential(u64),
    Failed(std::io::Error),
}

/// The decompressed bytes of a multistream bzip2 file.
pub struct ParallelBz2 {
    path: PathBuf,
    next: Option<Receiver<Next>>,
    current: Vec<u8>,
    at: usize,
    sequential: Option<Prefetch>,
}

impl ParallelBz2 {
    /// Starts decoding `path` on `threads` threads (at most [`MAX_THREADS`]).
    pub fn open(path: &Path, threads: usize) -> std::io::Result<Self> {
        let file = File::open(path)?;
        let threads = threads.clamp(1, MAX_THREADS);
        let (next_tx, next) = sync_channel(threads * 2);
        let (job_tx, job_rx) = sync_channel::<(Vec<u8>, SyncSender<Decoded>)>(threads);
        let jobs = Arc::new(Mutex::new(job_rx));
        for _ in 0..threads {
            let jobs = jobs.clone();
            std::thread::Builder::new()
                .name("wikisuggest-bz2".into())
                .spawn(move || {
                    loop {
                        let job = jobs.lock().unwrap_or_else(PoisonError::into_inner).recv();
                        let Ok((bytes, done)) = job else { return };
                        let _ = done.send(decode(&bytes));
                    }
                })?;
        }
        std::thread::Builder::new()
            .name("wikisuggest-bz2-split".into())
            .spawn(move || split(file, &next_tx, &job_tx))?;
        Ok(Self {
            path: path.to_owned(),
            next: Some(next),
            current: Vec::new(),
            at: 0,
            sequential: None,
        })
    }

    fn sequential_from(&mut self, offset: u64) -> std::io::Result<()> {
        // Stops the splitter and the workers: nothing of theirs is wanted any more.
        self.next = None;
        let mut file = File::open(&self.path)?;
        file.seek(SeekFrom::Start(offset))?;
        let decoder = bzip2::read::MultiBzDecoder::new(BufReader::new(file));
        self.sequential = Some(Prefetch::spawn(decoder));
        Ok(())
    }
}

impl Read for ParallelBz2 {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if let Some(sequential) = &mut self.sequential {
                return sequential.read(out);
            }
            if self.at < self.current.len() {
                let rest = &self.current[self.at..];
                let n = rest.len().min(out.len());
                out[..n].copy_from_slice(&rest[..n]);
                self.at += n;
                return Ok(n);
            }
            let Some(next) = &self.next else {
                return Ok(0);
            };
            match next.recv() {
                // The splitter has finished: every job has been taken.
                Err(_) => {
                    self.next = None;
                    return Ok(0);
                }
                Ok(Next::Job(done, offset)) => match done.recv() {
                    Ok(Decoded::Whole(bytes)) => {
                        self.current = bytes;
                        self.at = 0;
                    }
                    Ok(Decoded::Sequential) | Err(_) => self.sequential_from(offset)?,
                },
                Ok(Next::Sequential(offset)) => self.sequential_from(offset)?,
                Ok(Next::Failed(error)) => {
                    self.next = None;
                    return Err(error);
                }
            }
        }
    }
}

/// Whether a stream starts at `at`: `BZh`, a block size digit, then a block's or the end's
/// magic number.
fn stream_starts(bytes: &[u8], at: usize) -> bool {
    const BLOCK: &[u8] = &[0x31, 0x41, 0x59, 0x26, 0x53, 0x59];
    const END: &[u8] = &[0x17, 0x72, 0x45, 0x38, 0x50, 0x90];
    bytes.get(at..at + 10).is_some_and(|b| {
        b.starts_with(b"BZh")
            && (b'1'..=b'9').contains(&b[3])
            && (&b[4..] == BLOCK || &b[4..] == END)
    })
}

/// The first stream start at or after `from`.
fn next_start(finder: &memchr::memmem::Finder<'_>, buf: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(i) = buf.get(at..).and_then(|rest| finder.find(rest)) {
        if stream_starts(buf, at + i) {
            return Some(at + i);
        }
        at += i + 1;
    }
    None
}

/// Reads the file, cutting it into jobs at stream starts, until it ends or the reader is gone.
fn split(
    mut file: File,
    next: &SyncSender<Next>,
    jobs: &SyncSender<(Vec<u8>, SyncSender<Decoded>)>,
) {
    let finder = memchr::memmem::Finder::new(b"BZh");
    let mut buf: Vec<u8> = Vec::new();
    let mut offset = 0u64;
    let mut searched = 1usize;
    let mut eof = false;
    let mut chunk = vec![0u8; JOB_BYTES];
    loop {
        // The next stream start after the first JOB_BYTES of the job.
        let cut = loop {
            let from = searched.max(JOB_BYTES.min(buf.len()));
            let found = next_start(&finder, &buf, from);
            if found.is_some() || eof {
                break found;
            }
            // Keep the last bytes: a start may be cut between two reads.
            searched = buf.len().saturating_sub(9).max(1);
            if buf.len() > MAX_SEARCH {
                // One long stream (or none at all): the rest is read sequentially.
                let _ = next.send(Next::Sequential(offset));
                return;
            }
            match file.read(&mut chunk) {
                Ok(0) => eof = true,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = next.send(Next::Failed(e));
                    return;
                }
            }
        };
        let job: Vec<u8> = match cut {
            Some(at) => {
                let rest = buf.split_off(at);
                std::mem::replace(&mut buf, rest)
            }
            None => std::mem::take(&mut buf),
        };
        searched = 1;
        if job.is_empty() {
            return;
        }
        let (done_tx, done) = sync_channel(1);
        let start = offset;
        offset += job.len() as u64;
        if jobs.send((job, done_tx)).is_err() || next.send(Next::Job(done, start)).is_err() {
            return;
        }
        if cut.is_none() {
            return;
        }
    }
}

/// Decodes the whole streams of `bytes`.
fn decode(bytes: &[u8]) -> Decoded {
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len() * 5);
    let mut input = bytes;
    while !input.is_empty() {
        let mut stream = bzip2::Decompress::new(false);
        loop {
            if out.len() >= MAX_JOB_OUTPUT {
                return Decoded::Sequential;
            }
            out.reserve((1 << 20).min(MAX_JOB_OUTPUT - out.len()).max(1));
            let (before_in, before_out) = (stream.total_in(), out.len());
            let status = stream.decompress_vec(input, &mut out);
            let used = usize::try_from(stream.total_in() - before_in).unwrap_or(usize::MAX);
            input = input.get(used..).unwrap_or_default();
            match status {
                Ok(bzip2::Status::StreamEnd) => break,
                Ok(_) if used == 0 && out.len() == before_out => return Decoded::Sequential,
                Ok(_) => {}
                Err(_) => return Decoded::Sequential,
            }
        }
    }
    Decoded::Whole(out)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn bz2(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
        enc.write_all(bytes)?;
        enc.finish()
    }

    fn read_all(path: &Path, threads: usize) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        ParallelBz2::open(path, threads)?.read_to_end(&mut out)?;
        Ok(out)
    }

    /// Text that does not compress much, so that a few hundred streams span several jobs.
    fn text(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        (0..len)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                b"abcdefghij <>[]|\n"[((x >> 33) % 17) as usize]
            })
            .collect()
    }

    #[test]
    fn many_streams_read_as_one_sequential_decoder_reads_them() -> std::io::Result<()> {
        let dir = std::env::temp_dir();
        let path = dir.join(format!("ws-multi-{}.xml.bz2", std::process::id()));
        let parts: Vec<Vec<u8>> = (0..400).map(|i| text(i, 20_000)).collect();
        let mut file = Vec::new();
        for part in &parts {
            file.extend(bz2(part)?);
        }
        assert!(file.len() > 3 * JOB_BYTES);
        std::fs::write(&path, &file)?;
        let whole = parts.concat();
        for threads in [1, 2, 4] {
            assert!(read_all(&path, threads)? == whole);
        }
        // One stream only: read sequentially.
        std::fs::write(&path, bz2(&whole)?)?;
        assert!(read_all(&path, 2)? == whole);
        // The last stream cut short: every stream before it, then the decoder's error.
        file.truncate(file.len() - 100);
        std::fs::write(&path, &file)?;
        let mut out = Vec::new();
        let error = ParallelBz2::open(&path, 2)?.read_to_end(&mut out);
        assert!(error.is_err());
        // (Up to a chunk of the bytes before a decoder's error is not handed on.)
        assert!(whole.starts_with(&out) && out.len() >= whole.len() - 20_000 - Prefetch::CHUNK);
        std::fs::remove_file(&path)
    }

    #[test]
    fn a_job_that_does_not_end_a_stream_is_decoded_sequentially() -> std::io::Result<()> {
        // Bytes that look like a stream start, past the first job's size, inside a stream:
        // the first job then ends inside that stream and cannot be used.
        let path = std::env::temp_dir().join(format!("ws-fake-{}.xml.bz2", std::process::id()));
        let mut file = bz2(&text(7, 8 * JOB_BYTES))?;
        let fake_at = file.len() * 2 / 3;
        assert!(fake_at > JOB_BYTES);
        file.splice(fake_at..fake_at, b"BZh91AY&SY".iter().copied());
        std::fs::write(&path, &file)?;
        let mut parallel = Vec::new();
        let got = ParallelBz2::open(&path, 2)?.read_to_end(&mut parallel);
        let mut sequential = Vec::new();
        let want = bzip2::read::MultiBzDecoder::new(&file[..]).read_to_end(&mut sequential);
        // The inserted bytes corrupt the stream: both fail, after the same bytes.
        assert_eq!((got.is_ok(), want.is_ok()), (false, false));
        assert!(sequential.starts_with(&parallel));
        std::fs::remove_file(&path)
    }

    #[test]
    fn a_bomb_stream_is_decoded_as_a_stream() -> std::io::Result<()> {
        let path = std::env::temp_dir().join(format!("ws-bomb-{}.xml.bz2", std::process::id()));
        let mut file = bz2(b"<mediawiki>")?;
        let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
        let block = vec![b'a'; 1 << 20];
        for _ in 0..(MAX_JOB_OUTPUT >> 20) + 8 {
            enc.write_all(&block)?;
        }
        file.extend(enc.finish()?);
        file.extend(bz2(b"</mediawiki>")?);
        std::fs::write(&path, &file)?;
        let mut reader = ParallelBz2::open(&path, 2)?;
        let mut total = 0usize;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = reader.read(&mut buf)?;
            if n == 0 {
                break;
            }
            total += n;
        }
        assert_eq!(total, 11 + MAX_JOB_OUTPUT + (8 << 20) + 12);
        std::fs::remove_file(&path)
    }
}

//! A reader whose source is read ahead on a thread of its own.

use std::io::Read;
use std::sync::mpsc::{Receiver, sync_channel};

/// A reader whose source is read ahead on its own thread, a few chunks at a time.
///
/// bzip2 decodes at roughly the speed a dump is parsed, and both are single-threaded, so
/// the two overlap on two cores. Memory is bounded: at most [`Prefetch::QUEUE`] chunks of
/// [`Prefetch::CHUNK`] bytes wait. The thread stops at the end of the source, at its first
/// error (handed to the reader in order), or when the reader is dropped.
pub struct Prefetch {
    chunks: Receiver<std::io::Result<Vec<u8>>>,
    current: Vec<u8>,
    at: usize,
}

impl Prefetch {
    /// Bytes per chunk.
    pub const CHUNK: usize = 1 << 20;
    /// Chunks decoded ahead of the reader.
    pub const QUEUE: usize = 4;

    /// Starts reading `source` ahead.
    pub fn spawn<R: Read + Send + 'static>(mut source: R) -> Self {
        let (send, chunks) = sync_channel(Self::QUEUE);
        std::thread::spawn(move || {
            loop {
                let mut chunk = vec![0u8; Self::CHUNK];
                let chunk = match fill(&mut source, &mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        chunk.truncate(n);
                        Ok(chunk)
                    }
                    Err(e) => Err(e),
                };
                let failed = chunk.is_err();
                // An error here means the reader is gone: nobody wants the rest.
                if send.send(chunk).is_err() || failed {
                    break;
                }
            }
        });
        Self {
            chunks,
            current: Vec::new(),
            at: 0,
        }
    }
}

/// Reads until `buf` is full or the source ends; returns the bytes read.
fn fill(source: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match source.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl Read for Prefetch {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.current.len() {
            match self.chunks.recv() {
                Ok(chunk) => {
                    self.current = chunk?;
                    self.at = 0;
                }
                // The thread has finished: the source has ended.
                Err(_) => return Ok(0),
            }
        }
        let rest = &self.current[self.at..];
        let n = rest.len().min(out.len());
        out[..n].copy_from_slice(&rest[..n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_yields_the_source_in_order() -> std::io::Result<()> {
        // Several chunks and a partial last one, with bytes that tell positions apart.
        let source: Vec<u8> = (0..Prefetch::CHUNK * 5 + 12_345)
            .map(|i| (i % 251) as u8)
            .collect();
        let mut read = Vec::new();
        Prefetch::spawn(std::io::Cursor::new(source.clone())).read_to_end(&mut read)?;
        assert_eq!(read, source);
        Ok(())
    }

    /// Yields `good` bytes, then fails.
    struct FailsAfter {
        good: usize,
    }

    impl Read for FailsAfter {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.good == 0 {
                return Err(std::io::Error::other("bad block"));
            }
            let n = self.good.min(out.len());
            out[..n].fill(b'x');
            self.good -= n;
            Ok(n)
        }
    }

    #[test]
    fn prefetch_hands_on_the_sources_error_after_its_bytes() {
        let good = Prefetch::CHUNK * 2 + 7;
        let mut reader = Prefetch::spawn(FailsAfter { good });
        let mut read = Vec::new();
        let result = reader.read_to_end(&mut read);
        assert_eq!(read.len(), good - good % Prefetch::CHUNK);
        assert!(result.is_err_and(|e| e.to_string() == "bad block"));
    }

    /// An endless source that holds `_alive` while it exists.
    struct Endless {
        _alive: std::sync::Arc<()>,
    }

    impl Read for Endless {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            out.fill(b'a');
            Ok(out.len())
        }
    }

    #[test]
    fn a_reader_dropped_early_stops_the_thread() -> std::io::Result<()> {
        // The source never ends: the thread can only stop (and drop it) because the reader
        // went away.
        let alive = std::sync::Arc::new(());
        let mut reader = Prefetch::spawn(Endless {
            _alive: alive.clone(),
        });
        let mut first = [0u8; 10];
        reader.read_exact(&mut first)?;
        assert_eq!(&first, b"aaaaaaaaaa");
        drop(reader);
        let mut waited = 0;
        while std::sync::Arc::strong_count(&alive) > 1 && waited < 600 {
            std::thread::sleep(std::time::Duration::from_millis(50));
            waited += 1;
        }
        assert_eq!(std::sync::Arc::strong_count(&alive), 1);
        Ok(())
    }
}

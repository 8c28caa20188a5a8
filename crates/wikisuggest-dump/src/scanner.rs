//! A forward-only byte scanner over a reader: finds a needle, handing the bytes it passes to
//! a sink, with its own buffer so that a needle split between two reads is still found.

use std::io::{ErrorKind, Read};

use memchr::memmem::Finder;

/// Bytes read from the source at a time.
const BUFFER: usize = 1 << 18;

pub(crate) struct Scanner<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Bytes consumed before `buf[start]`.
    offset: u64,
    eof: bool,
}

impl<R: Read> Scanner<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self {
            inner,
            buf: vec![0; BUFFER],
            start: 0,
            end: 0,
            offset: 0,
            eof: false,
        }
    }

    /// Offset of the next unconsumed byte.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        self.offset += n as u64;
    }

    /// Reads more bytes after those buffered; `false` once the source has ended.
    fn fill(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The next `n` bytes without consuming them (fewer at the end of the source).
    pub(crate) fn peek(&mut self, n: usize) -> std::io::Result<&[u8]> {
        while self.end - self.start < n && self.fill()? {}
        let upto = self.end.min(self.start + n);
        Ok(&self.buf[self.start..upto])
    }

    /// Consumes `n` bytes already seen with [`Scanner::peek`].
    pub(crate) fn skip(&mut self, n: usize) {
        self.consume(n.min(self.end - self.start));
    }

    /// Moves past the next occurrence of `needle`, handing every byte up to and including it
    /// to `sink`; `false` when the source ended first (every byte then went to `sink`).
    pub(crate) fn pass(
        &mut self,
        needle: &Finder<'_>,
        mut sink: impl FnMut(&[u8]),
    ) -> std::io::Result<bool> {
        let len = needle.needle().len();
        loop {
            let avail = &self.buf[self.start..self.end];
            if let Some(at) = needle.find(avail) {
                sink(&avail[..at + len]);
                self.consume(at + len);
                return Ok(true);
            }
            // The needle may start in the last bytes: keep them for the next search.
            let keep = len.saturating_sub(1).min(avail.len());
            let done = avail.len() - keep;
            sink(&avail[..done]);
            self.consume(done);
            if !self.fill()? {
                let rest = &self.buf[self.start..self.end];
                sink(rest);
                let n = rest.len();
                self.consume(n);
                return Ok(false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Yields its bytes a few at a time, as a decoder may.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(out.len()).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn finds_needles_split_between_reads() -> std::io::Result<()> {
        let text = b"aaa</page>bb</page>c";
        for step in 1..text.len() {
            let mut s = Scanner::new(Trickle(text, step));
            let finder = Finder::new(b"</page>");
            let mut seen = Vec::new();
            assert!(s.pass(&finder, |b| seen.extend_from_slice(b))?);
            assert_eq!(seen, b"aaa</page>");
            assert_eq!(s.offset(), 10);
            seen.clear();
            assert!(s.pass(&finder, |b| seen.extend_from_slice(b))?);
            assert_eq!(seen, b"bb</page>");
            seen.clear();
            assert!(!s.pass(&finder, |b| seen.extend_from_slice(b))?);
            assert_eq!((seen.as_slice(), s.offset()), (&b"c"[..], 20));
        }
        Ok(())
    }

    #[test]
    fn peeks_across_reads() -> std::io::Result<()> {
        let mut s = Scanner::new(Trickle(b"<page>x", 1));
        assert_eq!(s.peek(6)?, b"<page>");
        s.skip(6);
        assert_eq!(s.peek(6)?, b"x");
        Ok(())
    }
}

//! The shadow of a page that the wikilink search masks as it goes, and the blocks that
//! masking leaves behind.
//!
//! wikitextparser masks each construct it recognises by overwriting its bytes: a link's
//! brackets, pipes and braces become control bytes, a parameter becomes `_`, a template
//! `X`, a comment NUL. Every enclosing construct overwrites them again, so masking nested
//! markup byte by byte costs time quadratic in the nesting. Here a masked span is a
//! *block*: its first and last bytes carry the value masking gives them, and its start and
//! end point at each other, so that every scan steps over a block in one step when the
//! block's bytes all pass the scan's test, and stops at its edge when none does:
//!
//! * a parameter (`_`), a template (`X`) and a comment (NUL) are uniform: their inside is
//!   never read again, and a block enclosing them never rewrites it;
//! * a masked link keeps its text, with its own `|[]{}` turned into control bytes (the
//!   blocks inside it are skipped): scans that only look for `[`, `]`, `|`, `{` or `}`
//!   step over it, the others (the name of a parser function) read into it.
//!
//! A block's bytes are only ever overwritten by a block that encloses it, so the edges of
//! the outermost blocks always hold what wikitextparser's shadow holds at those positions.
//! Inside, no block keeps a byte that a search looks for: a link's own markup bytes are
//! masked (`<` too, which nothing reads again inside a link), and a parameter or template
//! writes its byte over everything it covers that no uniform block inside it covers
//! already, masked links included. Each byte is written so once or twice in all, and a
//! search for `[`, `]`, `|`, `{`, `}`, `<` or `>` (`memchr`) finds exactly the bytes
//! wikitextparser's shadow holds, blocks or not; only scans whose test a uniform block
//! passes at its edge but not inside (a parser function's name, spaces and `_`) must step
//! over blocks.

/// The byte a masked link's opening bracket becomes.
pub(super) const LINK_OPEN: u8 = 2;
/// The byte a masked link's closing bracket becomes.
pub(super) const LINK_CLOSE: u8 = 3;

/// How a scan treats a block it meets, by the value of the block's edge byte.
#[derive(Debug, Clone, Copy)]
pub(super) struct Blocks {
    /// Step over masked links.
    pub links: bool,
    /// Step over parameters and other `_` blocks.
    pub underscores: bool,
    /// Step over templates.
    pub templates: bool,
    /// Step over comments.
    pub comments: bool,
}

impl Blocks {
    /// Every kind (the scan's test passes all their bytes).
    pub(super) const ALL: Blocks = Blocks {
        links: true,
        underscores: true,
        templates: true,
        comments: true,
    };
    /// The uniform kinds (`_`, `X`, NUL): title characters.
    pub(super) const UNIFORM: Blocks = Blocks {
        links: false,
        underscores: true,
        templates: true,
        comments: true,
    };
    /// Comments only (NUL).
    pub(super) const COMMENTS: Blocks = Blocks {
        links: false,
        underscores: false,
        templates: false,
        comments: true,
    };

    /// Whether a block whose edge byte is `edge` is stepped over.
    #[inline]
    fn skips(self, edge: u8) -> bool {
        match edge {
            LINK_OPEN | LINK_CLOSE => self.links,
            b'_' => self.underscores,
            b'X' => self.templates,
            0 => self.comments,
            _ => false,
        }
    }
}

/// Reads the shadow for one attempt to match a construct, recording the window of
/// positions it read (the attempt's outcome depends on nothing else) and the steps it
/// took (the work it costs).
pub(super) struct Reader<'a> {
    b: &'a [u8],
    jump: &'a [u32],
    edges: &'a Edges,
    /// Lowest and highest position read.
    pub lo: usize,
    pub hi: usize,
    /// Positions read one by one, blocks stepped over, and runs searched (a step per 16
    /// bytes).
    pub steps: u64,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8], jump: &'a [u32], edges: &'a Edges) -> Self {
        Self {
            b,
            jump,
            edges,
            lo: usize::MAX,
            hi: 0,
            steps: 0,
        }
    }

    /// Records that `lo..=hi` was read.
    #[inline]
    fn saw(&mut self, lo: usize, hi: usize) {
        self.lo = self.lo.min(lo);
        self.hi = self.hi.max(hi);
    }

    /// The byte at `i` (NUL past the end).
    #[inline]
    pub(super) fn at(&mut self, i: usize) -> u8 {
        self.saw(i, i);
        self.steps += 1;
        self.b.get(i).copied().unwrap_or(0)
    }

    /// The bytes `i..i + len` equal `s`.
    pub(super) fn equals(&mut self, i: usize, s: &[u8]) -> bool {
        if s.is_empty() {
            return true;
        }
        self.saw(i, i + s.len() - 1);
        self.steps += 1;
        self.b.get(i..i + s.len()) == Some(s)
    }

    /// Steps back from `k` over bytes passing `pass` (never below `floor`): the first
    /// position of the run that ends at `k`. Blocks of the kinds `blocks` are taken whole
    /// once their edge byte passes.
    #[inline]
    pub(super) fn back(
        &mut self,
        from: usize,
        floor: usize,
        blocks: Blocks,
        pass: impl Fn(u8) -> bool,
    ) -> usize {
        let mut k = from;
        while k > floor {
            let c = self.b.get(k - 1).copied().unwrap_or(0);
            if !pass(c) {
                break;
            }
            self.steps += 1;
            match block_ending_at(self.jump, k - 1) {
                Some(start) if blocks.skips(c) => k = start.max(floor),
                _ => k -= 1,
            }
        }
        if from > floor {
            // Down to the byte that stopped the run, if one did.
            self.saw(if k > floor { k - 1 } else { k }, from - 1);
            self.steps += 1;
        }
        k
    }

    /// Steps forward from `k` over bytes passing `pass` (never to `end` or beyond): the
    /// end of the run that starts at `k`. Blocks of the kinds `blocks` are taken whole once
    /// their edge byte passes; the others are read into.
    #[inline]
    pub(super) fn forward(
        &mut self,
        from: usize,
        end: usize,
        blocks: Blocks,
        pass: impl Fn(u8) -> bool,
    ) -> usize {
        let mut k = from;
        while k < end {
            let c = self.b.get(k).copied().unwrap_or(0);
            if !pass(c) {
                break;
            }
            self.steps += 1;
            match block_starting_at(self.jump, k) {
                Some(block_end) if blocks.skips(c) => k = block_end.min(end),
                _ => k += 1,
            }
        }
        if from < end {
            // Up to the byte that stopped the run, if one did.
            self.saw(from, if k < end { k } else { end - 1 });
            self.steps += 1;
        }
        k
    }

    /// Steps back from `from` (never below `floor`) to just after the last of `needles`
    /// (two or three bytes that no masked block holds, see [`Shadow`]): searched 64 bytes at
    /// a time, each block met stepped over whole, so that a search across deeply nested
    /// blocks costs one step per block, not per byte.
    pub(super) fn back_to(&mut self, from: usize, floor: usize, needles: &[u8]) -> usize {
        let mut k = from;
        let found = loop {
            if k <= floor {
                break floor;
            }
            let chunk = k.saturating_sub(CHUNK).max(floor);
            self.steps += 1;
            // The last block ending in the chunk: search after it, then step over it.
            let block = self.edges.last_end(chunk, k);
            let after = block.map_or(chunk, |q| q + 1);
            if let Some(p) = rfind(self.b.get(after..k).unwrap_or_default(), needles) {
                break after + p + 1;
            }
            k = match block.and_then(|q| block_ending_at(self.jump, q)) {
                Some(start) => start.max(floor),
                None => chunk,
            };
        };
        if from > floor {
            self.saw(if found > floor { found - 1 } else { found }, from - 1);
        }
        found
    }

    /// The first position of `needles` in `from..end`, or `end` (see [`Reader::back_to`]).
    pub(super) fn forward_to(&mut self, from: usize, end: usize, needles: &[u8]) -> usize {
        let mut k = from;
        let found = loop {
            if k >= end {
                break end;
            }
            let chunk = (k + CHUNK).min(end);
            self.steps += 1;
            let block = self.edges.first_start(k, chunk);
            let before = block.unwrap_or(chunk);
            if let Some(p) = find(self.b.get(k..before).unwrap_or_default(), needles) {
                break k + p;
            }
            k = match block.and_then(|s| block_starting_at(self.jump, s)) {
                Some(block_end) => block_end.min(end),
                None => chunk,
            };
        };
        if from < end {
            self.saw(from, if found < end { found } else { end - 1 });
        }
        found
    }
}

/// How many bytes a search looks at between two looks for blocks.
const CHUNK: usize = 64;

/// The last position of one of `needles` (two or three bytes) in `hay`.
#[inline]
fn rfind(hay: &[u8], needles: &[u8]) -> Option<usize> {
    match *needles {
        [a, b] => memchr::memrchr2(a, b, hay),
        [a, b, c] => memchr::memrchr3(a, b, c, hay),
        _ => hay.iter().rposition(|c| needles.contains(c)),
    }
}

/// The first position of one of `needles` (two or three bytes) in `hay`.
#[inline]
fn find(hay: &[u8], needles: &[u8]) -> Option<usize> {
    match *needles {
        [a, b] => memchr::memchr2(a, b, hay),
        [a, b, c] => memchr::memchr3(a, b, c, hay),
        _ => hay.iter().position(|c| needles.contains(c)),
    }
}

/// Where blocks start and end, one bit per byte: found for a range of up to 64 bytes
/// with a word or two. A block's edges stay marked once an enclosing block covers it;
/// a search never looks inside an enclosing block, whose own edges come first.
#[derive(Debug)]
pub(super) struct Edges {
    starts: Vec<u64>,
    ends: Vec<u64>,
}

impl Edges {
    fn new(len: usize) -> Self {
        let words = len / 64 + 1;
        Self {
            starts: vec![0; words],
            ends: vec![0; words],
        }
    }

    fn mark(bits: &mut [u64], i: usize) {
        if let Some(word) = bits.get_mut(i / 64) {
            *word |= 1 << (i % 64);
        }
    }

    /// The bits of `a..b` (at most 64 long) as a mask, bit 0 for `a`.
    fn window(bits: &[u64], a: usize, b: usize) -> u64 {
        if b <= a {
            return 0;
        }
        let word = |w: usize| bits.get(w).copied().unwrap_or(0);
        let (w, shift) = (a / 64, a % 64);
        let low = word(w) >> shift;
        let high = if shift == 0 {
            0
        } else {
            word(w + 1) << (64 - shift)
        };
        let len = b - a;
        let keep = if len >= 64 { u64::MAX } else { (1 << len) - 1 };
        (low | high) & keep
    }

    /// The last block end in `a..b` (at most 64 long).
    fn last_end(&self, a: usize, b: usize) -> Option<usize> {
        let bits = Self::window(&self.ends, a, b);
        (bits != 0).then(|| a + 63 - bits.leading_zeros() as usize)
    }

    /// The first block start in `a..b` (at most 64 long).
    fn first_start(&self, a: usize, b: usize) -> Option<usize> {
        let bits = Self::window(&self.starts, a, b);
        (bits != 0).then(|| a + bits.trailing_zeros() as usize)
    }
}

/// The start of the block whose last byte is at `i` (see [`Shadow::jump`]).
#[inline]
fn block_ending_at(jump: &[u32], i: usize) -> Option<usize> {
    let j = jump.get(i).copied().unwrap_or(0) as usize;
    (j != 0 && j <= i).then(|| j - 1)
}

/// The end of the block whose first byte is at `i` (see [`Shadow::jump`]).
#[inline]
fn block_starting_at(jump: &[u32], i: usize) -> Option<usize> {
    let j = jump.get(i).copied().unwrap_or(0) as usize;
    (j > i + 1).then(|| j - 1)
}

thread_local! {
    /// A jump table kept for the thread's next search, all zeros: a search takes it, writes
    /// a few entries (two per block) and sets them back to zero when done, so that a page
    /// does not pay for zeroing four bytes per byte of its text.
    static SPARE_JUMPS: std::cell::Cell<Vec<u32>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The longest jump table kept for the next search (16 MiB).
const SPARE_JUMPS_MAX: usize = 4 << 20;

/// The shadow bytes and their blocks.
pub(in crate::wikitext) struct Shadow {
    pub b: Vec<u8>,
    /// At a block's first byte: where it ends, plus one; at its last: where it starts,
    /// plus one; elsewhere 0 (so that the array starts as zeroed memory). The two are told
    /// apart by their direction. Blocks of one byte have no entry (their byte is all there
    /// is to read). At least as long as the text (a table kept from a longer page is
    /// zero past it).
    jump: Vec<u32>,
    /// The positions written in `jump`, to clear when done.
    written: Vec<u32>,
    /// Whether `jump` is kept for the thread's next search when done.
    keep: bool,
    edges: Edges,
}

impl Shadow {
    /// The shadow of `text`, its jump table the thread's spare one.
    pub(super) fn new(text: &str) -> Self {
        let mut jump = SPARE_JUMPS.take();
        if jump.len() < text.len() {
            jump.resize(text.len(), 0);
        }
        Self {
            b: text.as_bytes().to_vec(),
            jump,
            written: Vec::new(),
            keep: true,
            edges: Edges::new(text.len()),
        }
    }

    /// The shadow of `text` with a jump table of its own, zeroed, dropped when done.
    #[cfg(any(test, feature = "oracle"))]
    pub(in crate::wikitext) fn fresh(text: &str) -> Self {
        Self {
            b: text.as_bytes().to_vec(),
            jump: vec![0; text.len()],
            written: Vec::new(),
            keep: false,
            edges: Edges::new(text.len()),
        }
    }

    pub(super) fn reader(&self) -> Reader<'_> {
        Reader::new(&self.b, &self.jump, &self.edges)
    }

    /// Records `start..end` as a block.
    pub(super) fn set_block(&mut self, start: usize, end: usize) {
        if end >= start + 2 {
            if let Some(j) = self.jump.get_mut(start) {
                *j = end as u32 + 1;
                self.written.push(start as u32);
            }
            if let Some(j) = self.jump.get_mut(end - 1) {
                *j = start as u32 + 1;
                self.written.push((end - 1) as u32);
            }
            Edges::mark(&mut self.edges.starts, start);
            Edges::mark(&mut self.edges.ends, end - 1);
        }
    }

    /// Sets the byte at `i`.
    pub(super) fn set(&mut self, i: usize, byte: u8) {
        if let Some(c) = self.b.get_mut(i) {
            *c = byte;
        }
    }

    /// Calls `visit(run)` with the runs of `start..end` outside the blocks of the kinds
    /// `blocks` (whose bytes the caller knows need no visit), in order; `visit` may change
    /// the bytes. Blocks of the other kinds are read into. A block that `start` itself lies
    /// in is visited as it is (an enclosing block never reads it again). Returns the steps
    /// taken: one per run, block and 64 bytes.
    pub(super) fn visit(
        &mut self,
        start: usize,
        end: usize,
        blocks: Blocks,
        mut visit: impl FnMut(&mut [u8]),
    ) -> u64 {
        let end = end.min(self.b.len());
        let mut steps = 0;
        let mut k = start;
        while k < end {
            let chunk = (k + CHUNK).min(end);
            steps += 1;
            // Up to the first block starting in the chunk (or the chunk's end).
            let next = self.edges.first_start(k, chunk);
            let run_end = next.unwrap_or(chunk);
            if let Some(run) = self.b.get_mut(k..run_end) {
                visit(run);
            }
            k = run_end;
            if let Some(s) = next {
                let edge = self.b.get(s).copied().unwrap_or(0);
                match block_starting_at(&self.jump, s) {
                    Some(block_end) if blocks.skips(edge) => k = block_end,
                    // Read into: its first byte now, the rest with the next chunk.
                    _ => {
                        if let Some(run) = self.b.get_mut(s..s + 1) {
                            visit(run);
                        }
                        k = s + 1;
                    }
                }
            }
        }
        steps
    }
}

impl Drop for Shadow {
    /// Clears what the search wrote in the jump table and keeps it for the thread's next.
    fn drop(&mut self) {
        let mut jump = std::mem::take(&mut self.jump);
        if !self.keep || jump.len() > SPARE_JUMPS_MAX {
            return;
        }
        for &i in &self.written {
            if let Some(j) = jump.get_mut(i as usize) {
                *j = 0;
            }
        }
        SPARE_JUMPS.set(jump);
    }
}

#[cfg(test)]
mod tests {
    use super::SPARE_JUMPS;

    /// A search leaves the thread's spare jump table all zeros, however many blocks it
    /// masked, and the next search reads the same links with it.
    #[test]
    fn the_spare_jump_table_is_left_clear() {
        let page = "{{a|[[b|c]]}} <!-- x --> [[d|[[e]]]] {{{f}}} <ref>[[g]]</ref> ".repeat(50);
        let first = crate::wikitext::wikilinks(&page);
        let spare = SPARE_JUMPS.take();
        assert!(spare.len() >= page.len());
        assert!(spare.iter().all(|&j| j == 0));
        SPARE_JUMPS.set(spare);
        assert_eq!(crate::wikitext::wikilinks(&page), first);
        assert_eq!(first.len(), 4 * 50);
    }
}

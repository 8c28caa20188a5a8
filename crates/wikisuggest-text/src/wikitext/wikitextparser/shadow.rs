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
    /// Lowest and highest position read.
    pub lo: usize,
    pub hi: usize,
    /// Positions read and blocks stepped over.
    pub steps: u64,
}

impl<'a> Reader<'a> {
    pub(super) fn new(b: &'a [u8], jump: &'a [u32]) -> Self {
        Self {
            b,
            jump,
            lo: usize::MAX,
            hi: 0,
            steps: 0,
        }
    }

    #[inline]
    fn see(&mut self, i: usize) {
        self.lo = self.lo.min(i);
        self.hi = self.hi.max(i);
        self.steps += 1;
    }

    /// The byte at `i` (NUL past the end).
    #[inline]
    pub(super) fn at(&mut self, i: usize) -> u8 {
        self.see(i);
        self.b.get(i).copied().unwrap_or(0)
    }

    /// The bytes `i..i + len` equal `s`.
    pub(super) fn equals(&mut self, i: usize, s: &[u8]) -> bool {
        if s.is_empty() {
            return true;
        }
        self.see(i);
        self.see(i + s.len() - 1);
        self.b.get(i..i + s.len()) == Some(s)
    }

    /// The start of the block whose last byte is at `i`.
    #[inline]
    fn block_ending_at(&self, i: usize) -> Option<usize> {
        block_ending_at(self.jump, i)
    }

    /// The end of the block whose first byte is at `i`.
    #[inline]
    fn block_starting_at(&self, i: usize) -> Option<usize> {
        block_starting_at(self.jump, i)
    }

    /// Steps back from `k` over bytes passing `pass` (never below `floor`): the first
    /// position of the run that ends at `k`. Blocks of the kinds `blocks` are taken whole
    /// once their edge byte passes.
    #[inline]
    pub(super) fn back(
        &mut self,
        mut k: usize,
        floor: usize,
        blocks: Blocks,
        pass: impl Fn(u8) -> bool,
    ) -> usize {
        while k > floor {
            let c = self.at(k - 1);
            if !pass(c) {
                break;
            }
            match self.block_ending_at(k - 1) {
                Some(start) if blocks.skips(c) => {
                    k = start.max(floor);
                    self.see(k);
                }
                _ => k -= 1,
            }
        }
        k
    }

    /// Steps forward from `k` over bytes passing `pass` (never to `end` or beyond): the
    /// end of the run that starts at `k`. Blocks of the kinds `blocks` are taken whole once
    /// their edge byte passes; the others are read into.
    #[inline]
    pub(super) fn forward(
        &mut self,
        mut k: usize,
        end: usize,
        blocks: Blocks,
        pass: impl Fn(u8) -> bool,
    ) -> usize {
        while k < end {
            let c = self.at(k);
            if !pass(c) {
                break;
            }
            match self.block_starting_at(k) {
                Some(block_end) if blocks.skips(c) => {
                    k = block_end.min(end);
                    self.see(k.saturating_sub(1));
                }
                _ => k += 1,
            }
        }
        k
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

/// The shadow bytes and their blocks.
pub(super) struct Shadow {
    pub b: Vec<u8>,
    /// At a block's first byte: where it ends, plus one; at its last: where it starts,
    /// plus one; elsewhere 0 (so that the array starts as zeroed memory). The two are told
    /// apart by their direction. Blocks of one byte have no entry (their byte is all there
    /// is to read).
    pub jump: Vec<u32>,
}

impl Shadow {
    pub(super) fn new(text: &str) -> Self {
        Self {
            b: text.as_bytes().to_vec(),
            jump: vec![0; text.len()],
        }
    }

    pub(super) fn reader(&self) -> Reader<'_> {
        Reader::new(&self.b, &self.jump)
    }

    /// Records `start..end` as a block.
    pub(super) fn set_block(&mut self, start: usize, end: usize) {
        if end >= start + 2 {
            if let Some(j) = self.jump.get_mut(start) {
                *j = end as u32 + 1;
            }
            if let Some(j) = self.jump.get_mut(end - 1) {
                *j = start as u32 + 1;
            }
        }
    }

    /// Sets the byte at `i`.
    pub(super) fn set(&mut self, i: usize, byte: u8) {
        if let Some(c) = self.b.get_mut(i) {
            *c = byte;
        }
    }

    /// The end of the block starting at `i`, if one does.
    pub(super) fn block_starting_at(&self, i: usize) -> Option<usize> {
        block_starting_at(&self.jump, i)
    }

    /// Calls `visit(i, byte)` for the positions of `start..end` outside the blocks of the
    /// kinds `blocks` (whose bytes the caller knows need no visit), in order; `visit` may
    /// change the byte. Positions inside a block that `start` itself lies in are visited
    /// as they are (an enclosing block never reads them again). Returns the steps taken.
    pub(super) fn visit(
        &mut self,
        start: usize,
        end: usize,
        blocks: Blocks,
        mut visit: impl FnMut(usize, &mut u8),
    ) -> u64 {
        let mut steps = 0;
        let mut k = start;
        while k < end {
            steps += 1;
            let Some(c) = self.b.get(k).copied() else {
                break;
            };
            if let Some(block_end) = self.block_starting_at(k)
                && blocks.skips(c)
            {
                k = block_end;
                continue;
            }
            if let Some(c) = self.b.get_mut(k) {
                visit(k, c);
            }
            k += 1;
        }
        steps
    }
}

//! The positions of one kind of markup byte in the shadow, of which a scan meets only the
//! ones still there.
//!
//! Masking overwrites every markup byte it covers (see `shadow`), so a position is live
//! exactly while the shadow still holds its byte: a query checks the byte and drops each
//! dead position it meets for good, through union-find pointers (path halving). A scan
//! over a range then costs about one step per live position it reports, plus one for each
//! position it is the first to find dead, however often an enclosing range is scanned.

/// Sorted positions, dropped lazily once dead.
#[derive(Debug, Default)]
pub(super) struct LiveSet {
    /// The positions, ascending; dropped ones stay in place.
    pos: Vec<u32>,
    /// `next[i] == i` until index `i` is dropped; then it points to a later index whose
    /// chain ends at the first index after `i` not dropped (`pos.len()`: none).
    next: Vec<u32>,
    /// The same towards the start, shifted by one: `prev[i + 1]` for index `i`, and
    /// `prev[0]` the end of every chain with no index before.
    prev: Vec<u32>,
}

impl LiveSet {
    /// The positions given, ascending.
    pub(super) fn from_positions(pos: Vec<u32>) -> Self {
        let n = pos.len() as u32;
        Self {
            next: (0..=n).collect(),
            prev: (0..=n).collect(),
            pos,
        }
    }

    fn len(&self) -> usize {
        self.pos.len()
    }

    /// Every position by index, live or not.
    pub(super) fn positions(&self) -> &[u32] {
        &self.pos
    }

    /// The position of index `i` (`usize::MAX` past the end).
    #[inline]
    pub(super) fn at(&self, i: usize) -> usize {
        self.pos.get(i).map_or(usize::MAX, |&p| p as usize)
    }

    /// The first index whose position is at least `position` (live or not).
    pub(super) fn index_at(&self, position: usize) -> usize {
        self.pos.partition_point(|&p| (p as usize) < position)
    }

    /// The first index at or after `i` whose position passes `live`, or `len()`; the ones
    /// before it that fail are dropped.
    pub(super) fn live_from(&mut self, i: usize, live: impl Fn(usize) -> bool) -> usize {
        let mut i = self.first_kept_from(i);
        while i < self.len() && !live(self.at(i)) {
            self.drop_index(i);
            i = self.first_kept_from(i + 1);
        }
        i
    }

    /// The last index at or before `i` whose position passes `live`; the ones after it
    /// that fail are dropped.
    pub(super) fn live_until(&mut self, i: usize, live: impl Fn(usize) -> bool) -> Option<usize> {
        let mut i = self.last_kept_until(i)?;
        while !live(self.at(i)) {
            self.drop_index(i);
            i = self.last_kept_until(i.checked_sub(1)?)?;
        }
        Some(i)
    }

    /// The first index at or after `i` not dropped, or `len()`.
    fn first_kept_from(&mut self, i: usize) -> usize {
        let end = self.len();
        let mut i = i.min(end);
        while let Some(&n) = self.next.get(i) {
            let n = n as usize;
            if n == i {
                return i;
            }
            let after = self.next.get(n).copied().unwrap_or(end as u32);
            if let Some(slot) = self.next.get_mut(i) {
                *slot = after;
            }
            i = after as usize;
        }
        end
    }

    /// The last index at or before `i` not dropped.
    fn last_kept_until(&mut self, i: usize) -> Option<usize> {
        // Shifted: slot `j` stands for index `j - 1`, slot 0 for "none".
        let mut j = i.checked_add(1)?.min(self.len());
        while let Some(&p) = self.prev.get(j) {
            let p = p as usize;
            if p == j {
                return j.checked_sub(1);
            }
            let before = self.prev.get(p).copied().unwrap_or(0);
            if let Some(slot) = self.prev.get_mut(j) {
                *slot = before;
            }
            j = before as usize;
        }
        None
    }

    /// Drops index `i`.
    fn drop_index(&mut self, i: usize) {
        if let Some(slot) = self.next.get_mut(i) {
            *slot = i as u32 + 1;
        }
        if let Some(slot) = self.prev.get_mut(i + 1) {
            *slot = i as u32;
        }
    }
}

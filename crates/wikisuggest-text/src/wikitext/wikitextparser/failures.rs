//! The windows of a frame's failed attempts, so that a rescan retries only the attempts
//! whose outcome a masked span can have changed.
//!
//! An attempt to match at a candidate reads a window of the shadow around it, and its
//! outcome depends on nothing else (the frame's bounds aside, which do not change). Once a
//! span is masked, only the attempts whose window meets the span can come out otherwise.
//!
//! Nearly every window is short (a few bytes around the candidate): those are kept per
//! candidate and found among the candidates near the span. The few long ones are kept in a
//! list while there are at most [`LISTED`] of them (on real pages, nearly always), each
//! span looking at all of them; past that, in a tree over the frame's candidates (by index,
//! that is by position), holding per subtree the lowest window start and the highest
//! window end, so that the long windows meeting a span are found without looking at the
//! others, however many there are.

/// No window (an empty leaf's start).
const NO_START: u32 = u32::MAX;

/// Windows at most this long (in bytes, less one) are short.
const SHORT: usize = 64;

/// A candidate's `hi` while its window is a long one (its `lo` is then [`NO_START`]).
const LONG: u32 = u32::MAX;

/// Long windows kept in a list up to this many; past it, in a tree.
const LISTED: usize = 16;

/// Failed attempts' windows by candidate index.
#[derive(Debug, Default)]
pub(super) struct Failures {
    /// Index of the first candidate.
    base: usize,
    /// Number of candidates.
    count: usize,
    /// Per candidate: its short window's start ([`NO_START`]: none) and end; a long
    /// window (kept in `long`) is [`NO_START`] and [`LONG`].
    lo: Vec<u32>,
    hi: Vec<u32>,
    /// The long windows, built at the first.
    long: Option<LongWindows>,
}

impl Failures {
    /// The windows of `count` candidates.
    ///
    /// One set serves every frame of a search: a frame's candidates lie in its range, and
    /// the frames running at a time nest, each inside a span its parent is about to mask,
    /// so a frame overwrites only windows that its parent no longer needs (and a window a
    /// finished frame leaves behind belongs to a masked candidate: retrying it is a no-op).
    pub(super) fn new(count: usize) -> Self {
        Self {
            base: 0,
            count,
            lo: vec![NO_START; count],
            hi: vec![0; count],
            long: None,
        }
    }

    /// Records the window `lo..=hi` of the failed attempt at candidate `index` (which it
    /// contains).
    pub(super) fn record(&mut self, index: usize, lo: usize, hi: usize) {
        let Some(i) = index.checked_sub(self.base).filter(|&i| i < self.count) else {
            return;
        };
        let short = hi.saturating_sub(lo) <= SHORT;
        let mut had_long = false;
        if let (Some(l), Some(h)) = (self.lo.get_mut(i), self.hi.get_mut(i)) {
            had_long = *l == NO_START && *h == LONG;
            (*l, *h) = if short {
                (lo as u32, hi as u32)
            } else {
                (NO_START, LONG)
            };
        }
        if short {
            if had_long && let Some(long) = &mut self.long {
                long.clear(index);
            }
        } else {
            let (base, count) = (self.base, self.count);
            self.long
                .get_or_insert_with(|| LongWindows::new(base, count))
                .record(index, lo, hi);
        }
    }

    /// Removes the windows of the candidates `first..last` (a frame's) that meet
    /// `start..end`, appending their candidates to `out` (`first_inside`, `first_after`:
    /// the first candidate indices at or after `start` and `end`; `positions`: every
    /// candidate's position by index). The candidates inside the span are masked: they are
    /// not retried.
    pub(super) fn take_meeting(
        &mut self,
        (first, last): (usize, usize),
        (start, end): (usize, usize),
        (first_inside, first_after): (usize, usize),
        positions: &[u32],
        out: &mut Vec<usize>,
    ) -> u64 {
        let mut steps = 1;
        let last = last.min(self.base + self.count);
        // Short windows hold their candidate: only candidates this close can meet the span.
        let mut i = first_inside.clamp(first, last);
        while i > first
            && positions
                .get(i - 1)
                .is_some_and(|&p| p as usize + SHORT >= start)
        {
            i -= 1;
            steps += 1;
            self.take_short(i, |_, hi| hi as usize >= start, out);
        }
        let mut i = first_after.clamp(first, last);
        while i < last
            && positions
                .get(i)
                .is_some_and(|&p| (p as usize) < end + SHORT)
        {
            steps += 1;
            self.take_short(i, |lo, _| (lo as usize) < end, out);
            i += 1;
        }
        if let Some(long) = &mut self.long {
            let inside = first_inside.clamp(first, last);
            let after = first_after.clamp(first, last);
            steps += long.take_meeting((start, end), (first, inside, after, last), out);
        }
        steps
    }

    fn take_short(&mut self, index: usize, meets: impl Fn(u32, u32) -> bool, out: &mut Vec<usize>) {
        let i = index - self.base;
        if let (Some(l), Some(h)) = (self.lo.get_mut(i), self.hi.get_mut(i))
            && *l != NO_START
            && meets(*l, *h)
        {
            *l = NO_START;
            out.push(index);
        }
    }
}

/// The window `lo..=hi` as the long windows keep it: its start (below [`NO_START`]) and its
/// end plus one.
fn stored(lo: usize, hi: usize) -> (u32, u32) {
    (
        lo.min(NO_START as usize - 1) as u32,
        (hi.saturating_add(1)).min(u32::MAX as usize) as u32,
    )
}

/// The long windows: a short list while they are few (nearly always), a tree by candidate
/// index past [`LISTED`] of them.
#[derive(Debug, Default)]
struct LongWindows {
    base: usize,
    count: usize,
    /// Candidate index, window start and window end plus one, in no order.
    listed: Vec<[u32; 3]>,
    tree: Option<WindowTree>,
}

impl LongWindows {
    fn new(base: usize, count: usize) -> Self {
        Self {
            base,
            count,
            listed: Vec::new(),
            tree: None,
        }
    }

    /// Records the window `lo..=hi` of the failed attempt at candidate `index`.
    fn record(&mut self, index: usize, lo: usize, hi: usize) {
        if let Some(tree) = &mut self.tree {
            tree.record(index, lo, hi);
            return;
        }
        if index.checked_sub(self.base).is_none_or(|l| l >= self.count) {
            return;
        }
        let (lo, end) = stored(lo, hi);
        let window = [index as u32, lo, end];
        if let Some(slot) = self.listed.iter_mut().find(|w| w[0] == window[0]) {
            *slot = window;
            return;
        }
        if self.listed.len() < LISTED {
            self.listed.push(window);
            return;
        }
        // One too many for the list: all of them to the tree.
        let mut tree = WindowTree::new(self.base, self.count);
        for &[i, l, h] in self.listed.iter().chain([&window]) {
            tree.set(i as usize, l, h);
        }
        self.listed = Vec::new();
        self.tree = Some(tree);
    }

    /// Forgets the window of candidate `index`.
    fn clear(&mut self, index: usize) {
        match &mut self.tree {
            Some(tree) => tree.clear(index),
            None => {
                if let Some(at) = self.listed.iter().position(|w| w[0] as usize == index) {
                    self.listed.swap_remove(at);
                }
            }
        }
    }

    /// Removes the windows of the candidates `first..last` that meet `start..end`,
    /// appending their candidates to `out`: a candidate inside always does (`inside`,
    /// `after`: the first candidate indices at or after `start` and `end`), any other when
    /// its window starts before `end` and reaches `start` (a window holds its candidate, so
    /// before the span only the second test can fail, after it the first).
    fn take_meeting(
        &mut self,
        span: (usize, usize),
        candidates: (usize, usize, usize, usize),
        out: &mut Vec<usize>,
    ) -> u64 {
        let leaves = self.tree.as_ref().map_or(self.count, |tree| tree.size);
        let meeting = Meeting::new(self.base, leaves, span, candidates);
        if let Some(tree) = &mut self.tree {
            return tree.take_meeting(&meeting, out);
        }
        let steps = self.listed.len() as u64;
        let base = self.base;
        self.listed.retain(|&[i, lo, hi]| {
            let index = i as usize;
            let taken = meeting.takes(index.saturating_sub(base), lo, hi);
            if taken {
                out.push(index);
            }
            !taken
        });
        steps
    }
}

/// The long windows, in a tree by candidate index.
#[derive(Debug, Default)]
struct WindowTree {
    /// Index of the first candidate (leaf 0).
    base: usize,
    /// Number of leaves (a power of two, or 0 for no candidates).
    size: usize,
    /// Per node: the lowest window start below it ([`NO_START`]: none).
    lo: Vec<u32>,
    /// Per node: the highest window end below it, plus one (0: none).
    hi: Vec<u32>,
}

impl WindowTree {
    /// A tree for the candidates `base..base + count`.
    fn new(base: usize, count: usize) -> Self {
        if count == 0 {
            return Self {
                base,
                ..Self::default()
            };
        }
        let size = count.next_power_of_two();
        Self {
            base,
            size,
            lo: vec![NO_START; 2 * size],
            hi: vec![0; 2 * size],
        }
    }

    /// Records the window `lo..=hi` of the failed attempt at candidate `index`.
    fn record(&mut self, index: usize, lo: usize, hi: usize) {
        let (lo, end) = stored(lo, hi);
        self.set(index, lo, end);
    }

    /// Forgets the window of candidate `index`.
    fn clear(&mut self, index: usize) {
        self.set(index, NO_START, 0);
    }

    fn set(&mut self, index: usize, lo: u32, hi: u32) {
        let Some(leaf) = index.checked_sub(self.base).filter(|&l| l < self.size) else {
            return;
        };
        let mut node = self.size + leaf;
        if self.lo.get(node) == Some(&lo) && self.hi.get(node) == Some(&hi) {
            return;
        }
        if let Some(slot) = self.lo.get_mut(node) {
            *slot = lo;
        }
        if let Some(slot) = self.hi.get_mut(node) {
            *slot = hi;
        }
        while node > 1 {
            node /= 2;
            self.pull(node);
        }
    }

    /// Recomputes node `node` from its children.
    fn pull(&mut self, node: usize) {
        let (l, r) = (2 * node, 2 * node + 1);
        let lo = self.lo.get(l).copied().unwrap_or(NO_START);
        let lo = lo.min(self.lo.get(r).copied().unwrap_or(NO_START));
        let hi = self.hi.get(l).copied().unwrap_or(0);
        let hi = hi.max(self.hi.get(r).copied().unwrap_or(0));
        if let Some(slot) = self.lo.get_mut(node) {
            *slot = lo;
        }
        if let Some(slot) = self.hi.get_mut(node) {
            *slot = hi;
        }
    }

    /// [`LongWindows::take_meeting`] of the tree, appending the candidates in order.
    fn take_meeting(&mut self, meeting: &Meeting, out: &mut Vec<usize>) -> u64 {
        if self.size == 0 {
            return 0;
        }
        self.take(1, 0, self.size, meeting, out)
    }

    /// [`WindowTree::take_meeting`] in the subtree `node` (leaves `left..right`): one
    /// descent for the whole range, pruned where no window below can meet the span.
    fn take(
        &mut self,
        node: usize,
        left: usize,
        right: usize,
        meeting: &Meeting,
        out: &mut Vec<usize>,
    ) -> u64 {
        let (first, last) = meeting.range;
        if last <= left || right <= first || first >= last {
            return 0;
        }
        let lo = self.lo.get(node).copied().unwrap_or(NO_START);
        let hi = self.hi.get(node).copied().unwrap_or(0);
        let (inside, after) = meeting.inside;
        let holds_inside = inside < after && left < after && inside < right;
        if lo == NO_START || !(holds_inside || (lo < meeting.end && hi > meeting.start)) {
            return 1;
        }
        if right - left == 1 {
            out.push(self.base + left);
            if let Some(slot) = self.lo.get_mut(node) {
                *slot = NO_START;
            }
            if let Some(slot) = self.hi.get_mut(node) {
                *slot = 0;
            }
            return 1;
        }
        let middle = (left + right) / 2;
        let steps = 1
            + self.take(2 * node, left, middle, meeting, out)
            + self.take(2 * node + 1, middle, right, meeting, out);
        self.pull(node);
        steps
    }
}

/// What [`LongWindows::take_meeting`] takes, in the list ([`Meeting::takes`]) or the tree
/// ([`WindowTree::take`]): leaves in `range` whose window meets `start..end`, or any window
/// of the leaves `inside`.
struct Meeting {
    range: (usize, usize),
    inside: (usize, usize),
    start: u32,
    end: u32,
}

impl Meeting {
    /// The span `start..end` and the candidates `first..last` (`inside..after` within the
    /// span) as leaves: candidate indices less `base`, at most `leaves`.
    fn new(
        base: usize,
        leaves: usize,
        (start, end): (usize, usize),
        (first, inside, after, last): (usize, usize, usize, usize),
    ) -> Self {
        let leaf = |i: usize| i.saturating_sub(base).min(leaves);
        Self {
            range: (leaf(first), leaf(last)),
            inside: (leaf(inside), leaf(after)),
            start: start.min(NO_START as usize) as u32,
            end: end.min(NO_START as usize) as u32,
        }
    }

    /// Whether the window `lo..hi` (its end plus one) of leaf `leaf` is taken.
    fn takes(&self, leaf: usize, lo: u32, hi: u32) -> bool {
        let ((first, last), (inside, after)) = (self.range, self.inside);
        (first..last).contains(&leaf)
            && lo != NO_START
            && ((inside..after).contains(&leaf) || (lo < self.end && hi > self.start))
    }
}

#[cfg(test)]
mod tests {
    use super::Failures;

    /// The windows taken are exactly those of the frame's candidates meeting the span,
    /// each once, short and long: with the long windows few enough to be listed (40
    /// candidates, 14 long) and with more (100 candidates, 34 long: kept in the tree).
    #[test]
    fn windows_meeting_a_span_are_taken_once() {
        for count in [40, 100] {
            windows_meeting_a_span(count);
        }
    }

    fn windows_meeting_a_span(count: usize) {
        // Candidates at positions 100, 110, …; window of candidate i: [p - w, p + 12].
        let positions: Vec<u32> = (0..count as u32).map(|i| 100 + 10 * i).collect();
        let position = |i: usize| positions[i] as usize;
        let width = |i: usize| if i.is_multiple_of(3) { 145 } else { 12 };
        let mut windows = Failures::new(count);
        for i in 0..count {
            windows.record(i, position(i).saturating_sub(width(i)), position(i) + 12);
        }
        // A long window replaced by a short one, and a short one by a long one, is taken
        // as the last recorded.
        windows.record(24, position(24) - 12, position(24) + 12);
        windows.record(25, position(25) - 145, position(25) + 12);
        let width = |i: usize| match i {
            24 => 12,
            25 => 145,
            _ => width(i),
        };
        // The frame holds candidates 10..30.
        let frame = (10, 30);
        let (start, end): (usize, usize) = (250, 280);
        let first_inside = (start - 100).div_ceil(10);
        let first_after = (end - 100).div_ceil(10);
        let mut taken = Vec::new();
        let meeting = (first_inside, first_after);
        windows.take_meeting(frame, (start, end), meeting, &positions, &mut taken);
        taken.sort_unstable();
        // Inside the span: masked, not retried (unless a long window says so).
        let expected: Vec<usize> = (10..30)
            .filter(|&i| position(i) - width(i) < end && position(i) + 12 >= start)
            .filter(|&i| !(start..end).contains(&position(i)) || width(i) > 64)
            .collect();
        assert_eq!(taken, expected);
        assert!(taken.iter().any(|&i| width(i) > 64) && taken.iter().any(|&i| width(i) < 64));
        let mut again = Vec::new();
        windows.take_meeting(frame, (start, end), meeting, &positions, &mut again);
        assert!(again.is_empty());
    }
}

//! The positions of one kind of markup byte in the shadow, from which positions are
//! deleted as masking overwrites them.
//!
//! A scan asks for the live positions of a range only, so a region masked earlier costs
//! nothing however often an enclosing range is scanned again. Deleted positions are
//! skipped through union-find pointers (path halving), so any sequence of queries and
//! deletions costs about one step per position it reports or deletes.

/// Sorted positions with deletion.
#[derive(Debug, Default)]
pub(super) struct LiveSet {
    /// The positions, ascending; deleted ones stay in place.
    pos: Vec<u32>,
    /// `next[i] == i` while position `i` is live; otherwise it points to a later index
    /// whose chain ends at the first live index after `i` (`pos.len()`: none).
    next: Vec<u32>,
    /// The same towards the start, shifted by one: `prev[i + 1]` for index `i`, and
    /// `prev[0]` the end of every chain with no live index before.
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

    /// The position of index `i`.
    pub(super) fn at(&self, i: usize) -> usize {
        self.pos.get(i).map_or(usize::MAX, |&p| p as usize)
    }

    /// The first index whose position is at least `position` (live or not).
    pub(super) fn index_at(&self, position: usize) -> usize {
        self.pos.partition_point(|&p| (p as usize) < position)
    }

    /// The first live index at or after index `i`, or `len()`.
    pub(super) fn live_from(&mut self, i: usize) -> usize {
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

    /// The last live index at or before index `i` (`None`: there is none).
    pub(super) fn live_until(&mut self, i: usize) -> Option<usize> {
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

    /// Whether index `i` is live.
    pub(super) fn is_live(&self, i: usize) -> bool {
        self.next.get(i).is_some_and(|&n| n as usize == i) && i < self.len()
    }

    /// Deletes the live positions in `start..end`; returns how many it deleted.
    pub(super) fn delete_range(&mut self, start: usize, end: usize) -> usize {
        let mut deleted = 0;
        let mut i = self.live_from(self.index_at(start));
        while i < self.len() && self.at(i) < end {
            self.delete(i);
            deleted += 1;
            i = self.live_from(i + 1);
        }
        deleted
    }

    /// Deletes index `i` (which must be live).
    fn delete(&mut self, i: usize) {
        if let Some(slot) = self.next.get_mut(i) {
            *slot = i as u32 + 1;
        }
        if let Some(slot) = self.prev.get_mut(i + 1) {
            *slot = i as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LiveSet;

    /// Queries and deletions agree with a plain list of live flags.
    #[test]
    fn live_positions_match_a_flag_list() {
        let positions: Vec<u32> = (0..200).map(|i| i * 3 + 1).collect();
        let mut set = LiveSet::from_positions(positions.clone());
        let mut live = vec![true; positions.len()];
        let deletions = [
            (10, 40),
            (0, 2),
            (100, 101),
            (95, 130),
            (590, 700),
            (41, 44),
        ];
        for (start, end) in deletions {
            let expected = (0..live.len())
                .filter(|&i| live[i] && (start..end).contains(&(positions[i] as usize)))
                .count();
            assert_eq!(set.delete_range(start, end), expected);
            for (i, &p) in positions.iter().enumerate() {
                if (start..end).contains(&(p as usize)) {
                    live[i] = false;
                }
            }
            for i in 0..=live.len() {
                let next = (i..live.len()).find(|&j| live[j]).unwrap_or(live.len());
                assert_eq!(set.live_from(i), next, "from {i}");
                let prev = (0..=i.min(live.len() - 1)).rev().find(|&j| live[j]);
                assert_eq!(set.live_until(i), prev, "until {i}");
            }
            for (i, &l) in live.iter().enumerate() {
                assert_eq!(set.is_live(i), l);
            }
        }
        assert_eq!(set.index_at(4), 1);
        assert_eq!(set.at(1), 4);
    }
}

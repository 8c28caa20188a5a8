//! The two pieces of Java whose behaviour decides which terms tie-break into a MoreLikeThis
//! query: the iteration order of `java.util.HashMap<String, _>` and Lucene's `PriorityQueue`.
//!
//! Elasticsearch sums the seeds' term frequencies in a `HashMap`, then walks its keys in the
//! map's order, keeping the best terms in a bounded heap that admits a term only when it
//! scores strictly more than the heap's least. Among terms of equal score at the cut, the ones
//! kept are therefore decided by those two orders, which are reproduced here.

/// `String.hashCode()`: `s[0]·31^(n-1) + … + s[n-1]` over UTF-16 code units, in wrapping
/// 32-bit arithmetic.
pub fn string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// `HashMap.hash`: the high half folded into the low one.
fn spread(h: i32) -> u32 {
    let h = h as u32;
    h ^ (h >> 16)
}

/// The table size of a `new HashMap<>()` after `len` insertions: 16, doubled whenever the
/// size passes three quarters of it.
pub fn table_size(len: usize) -> usize {
    let mut capacity = 16usize;
    while len > capacity / 4 * 3 {
        capacity *= 2;
    }
    capacity
}

/// The order in which a `HashMap` built by inserting `keys` (distinct, in this order) iterates
/// them, as indices into `keys`.
///
/// Buckets are walked in index order and each bucket's chain in insertion order (resizing
/// splits chains without reordering them). Not reproduced: chains of eight or more keys, which
/// Java turns into trees (a key set chosen to collide, practically never an article).
pub fn iteration_order<S: AsRef<str>>(keys: &[S]) -> Vec<usize> {
    let mask = table_size(keys.len()) - 1;
    let mut order: Vec<(usize, usize)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (spread(string_hash(k.as_ref())) as usize & mask, i))
        .collect();
    order.sort_unstable();
    order.into_iter().map(|(_, i)| i).collect()
}

/// Lucene's `org.apache.lucene.util.PriorityQueue`: a 1-based binary min-heap under a strict
/// `less_than`, with the same `add`, `top`/`update_top` and `pop` moves, so that equal
/// elements end up where Lucene's end up.
pub struct LuceneQueue<T, F: Fn(&T, &T) -> bool> {
    heap: Vec<T>,
    max_size: usize,
    less_than: F,
}

impl<T, F: Fn(&T, &T) -> bool> LuceneQueue<T, F> {
    pub fn new(max_size: usize, less_than: F) -> Self {
        Self {
            heap: Vec::with_capacity(max_size),
            max_size,
            less_than,
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub fn is_full(&self) -> bool {
        self.heap.len() >= self.max_size
    }

    /// `add`: append, then sift up.
    pub fn add(&mut self, element: T) {
        self.heap.push(element);
        self.up_heap(self.heap.len() - 1);
    }

    pub fn top_mut(&mut self) -> Option<&mut T> {
        self.heap.first_mut()
    }

    /// `updateTop`: the top changed in place; sift it down.
    pub fn update_top(&mut self) {
        self.down_heap(0);
    }

    /// `pop`: the least element; the last one moves to the top and sifts down.
    pub fn pop(&mut self) -> Option<T> {
        if self.heap.is_empty() {
            return None;
        }
        let last = self.heap.len() - 1;
        self.heap.swap(0, last);
        let least = self.heap.pop();
        if !self.heap.is_empty() {
            self.down_heap(0);
        }
        least
    }

    // Indices below are 0-based; Lucene's are 1-based: parent(i) = (i+1)/2 - 1, children of i
    // are 2i+1 and 2i+2. The moves are Lucene's: shift the hole, install the saved node.
    fn up_heap(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if (self.less_than)(&self.heap[i], &self.heap[parent]) {
                self.heap.swap(i, parent);
                i = parent;
            } else {
                break;
            }
        }
    }

    fn down_heap(&mut self, mut i: usize) {
        let size = self.heap.len();
        loop {
            let mut j = 2 * i + 1;
            let k = j + 1;
            if k < size && (self.less_than)(&self.heap[k], &self.heap[j]) {
                j = k;
            }
            if j < size && (self.less_than)(&self.heap[j], &self.heap[i]) {
                self.heap.swap(i, j);
                i = j;
            } else {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hashes_are_javas() {
        // Values printed by Java's "x".hashCode().
        assert_eq!(string_hash(""), 0);
        assert_eq!(string_hash("a"), 97);
        assert_eq!(string_hash("hello"), 99_162_322);
        assert_eq!(string_hash("polygenelubricants"), i32::MIN);
        // Outside the BMP the hash runs over the surrogate pair.
        assert_eq!(string_hash("😀"), 0xD83D * 31 + 0xDE00);
    }

    #[test]
    fn tables_grow_past_three_quarters() {
        assert_eq!(table_size(0), 16);
        assert_eq!(table_size(12), 16);
        assert_eq!(table_size(13), 32);
        assert_eq!(table_size(24), 32);
        assert_eq!(table_size(25), 64);
    }

    #[test]
    fn iteration_follows_buckets_then_insertion() {
        // "Aa" and "BB" share a hash: same bucket, kept in insertion order.
        assert_eq!(string_hash("Aa"), string_hash("BB"));
        assert_eq!(iteration_order(&["BB", "Aa"]), vec![0, 1]);
        assert_eq!(iteration_order(&["Aa", "BB"]), vec![0, 1]);
        // "b" (98) sorts after "a" (97) by bucket whatever the insertion order.
        assert_eq!(iteration_order(&["b", "a"]), vec![1, 0]);
    }

    #[test]
    fn queue_keeps_the_largest_and_pops_least_first() {
        let mut q = LuceneQueue::new(3, |a: &i32, b: &i32| a < b);
        for x in [5, 1, 4] {
            q.add(x);
        }
        for x in [2, 9, 3] {
            if let Some(top) = q.top_mut()
                && *top < x
            {
                *top = x;
                q.update_top();
            }
        }
        let mut out = Vec::new();
        while let Some(x) = q.pop() {
            out.push(x);
        }
        assert_eq!(out, vec![4, 5, 9]);
    }
}

//! A cache-resident summary of the anchor index's tags, made when a file is first probed.
//!
//! One bit per class of tag values (the tag's low bits): set when some slot of the index
//! holds a tag of that class. A gram whose class bit is clear has no slot with its tag, so
//! its look-up can only find nothing (no anchor, no word prefix): it is answered without
//! reading the slots. Most grams are no anchor, and an unsuccessful scan of a linear-probing
//! table at 70 % load reads about six slots; the filter is one bit in a table that stays in
//! the caches. It is computed from the slots themselves, so the file format is unchanged.

/// Slot tables up to this size get a filter (it reads every slot once, when the file is
/// first probed); larger ones are probed without.
pub(crate) const MAX_FILTERED_SLOT_BYTES: usize = 64 << 20;

/// At most this many bits (512 KiB).
const MAX_BITS: usize = 1 << 22;

/// The tag classes present in a hash index.
#[derive(Debug)]
pub(crate) struct TagFilter {
    words: Vec<u64>,
    /// Bits minus one (a power of two minus one).
    mask: u32,
}

impl TagFilter {
    /// The filter of a slot table (`u64` little-endian entries, `0` empty).
    pub(crate) fn of_slots(slots: &[u8]) -> Self {
        let entries = slots.len() / 8;
        // About eight bits per slot: a gram that is no anchor finds its bit set about one
        // time in twelve at the index's load.
        let bits = entries
            .saturating_mul(8)
            .next_power_of_two()
            .clamp(64, MAX_BITS);
        let mask = u32::try_from(bits - 1).unwrap_or(u32::MAX);
        let mut words = vec![0u64; bits / 64];
        for entry in slots.as_chunks::<8>().0 {
            if let Some(slot) = super::hash::split_entry(u64::from_le_bytes(*entry)) {
                let bit = (slot.tag & mask) as usize;
                if let Some(word) = words.get_mut(bit / 64) {
                    *word |= 1 << (bit % 64);
                }
            }
        }
        Self { words, mask }
    }

    /// Whether some slot may hold `tag`; `false` means none does.
    #[inline]
    pub(crate) fn may_hold(&self, tag: u32) -> bool {
        let bit = (tag & self.mask) as usize;
        self.words
            .get(bit / 64)
            .is_none_or(|word| word & (1 << (bit % 64)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::hash;

    /// Every tag present in the table passes; a tag of an empty class does not.
    #[test]
    fn present_tags_pass_and_absent_classes_do_not() {
        let keys: Vec<String> = (0..500).map(|i| format!("anchor {i}")).collect();
        let (table, _) = hash::build(keys.len(), |i| keys[i].as_bytes());
        let slots: Vec<u8> = table.iter().flat_map(|e| e.to_le_bytes()).collect();
        let filter = TagFilter::of_slots(&slots);
        for key in &keys {
            assert!(
                filter.may_hold(hash::tag(hash::hash(key.as_bytes()))),
                "{key}"
            );
        }
        let absent = (0..20_000)
            .map(|i| hash::tag(hash::hash(format!("no anchor {i}").as_bytes())))
            .filter(|&t| !filter.may_hold(t))
            .count();
        // 500 keys in at least 4,096 classes: most absent keys are turned away.
        assert!(absent > 15_000, "{absent}");
        let empty = TagFilter::of_slots(&[0u8; 64]);
        assert!(!empty.may_hold(0) && !empty.may_hold(12345));
    }
}

//! A cache-resident summary of the anchor index's tags, made when a file is first probed.
//!
//! One bit per class of tag values (the tag's low bits): set when some slot of the index
//! holds a tag of that class. A gram whose class bit is clear has no slot with its tag, so
//! its look-up can only find nothing (no anchor, no word prefix): it is answered without
//! reading the slots. Most grams are no anchor, and an unsuccessful scan of a linear-probing
//! table at 70 % load reads about six slots; the filter is one bit in a table that stays in
//! the caches. It is computed from the slots themselves, so the file format is unchanged.
//!
//! A small index gets an exact [`TagTable`] instead: every tag, with what its slot says, and
//! such a filter in front of it.

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

/// Indexes of at most this many keys get a [`TagTable`] (at most 8/3 lanes of 8 bytes
/// per key, 21 bytes: under 6 MiB; 0.8 MB for the bundled enwiki sample's 36 K keys);
/// larger ones keep the [`TagFilter`].
pub(crate) const MAX_TABLED_KEYS: usize = 1 << 18;

/// Lanes per bucket of a [`TagTable`]: one bucket is compared at once.
const LANES: usize = 8;

/// A tag no slot holds (tags have 31 bits): the value of an empty lane.
const NO_TAG: u32 = u32::MAX;

/// Lane values: the prefix flag, and two payloads that are no anchor index.
const PREFIX_BIT: u32 = 1 << 31;
const LANE_PREFIX_ONLY: u32 = PREFIX_BIT - 1;
const LANE_SHARED: u32 = PREFIX_BIT - 2;

/// What a [`TagTable`] knows of a tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tagged {
    /// No slot holds it: no anchor and no word prefix has it.
    Absent,
    /// One slot holds it: anchor `index` (if any) and its prefix flag.
    Once { index: Option<u32>, prefix: bool },
    /// Several slots hold it, or its bucket overflowed: the slots must be scanned.
    Unknown,
}

/// An exact table of the tags of a small index, with what the one slot holding each says:
/// a look-up compares one bucket of tags at once, without following the slots' probe chain
/// (whose length, and whether the filter lets a gram through, are what the CPU cannot
/// predict). Built from the slots when the file is first probed; the format is unchanged.
///
/// The buckets (21 bytes per key) outgrow a core's own cache on the bundled sample already;
/// a [`TagFilter`] of the same tags (one bit per class, about a byte per slot) stays in it
/// and answers most grams, which are no anchor, before any bucket is read.
#[derive(Debug)]
pub(crate) struct TagTable {
    /// The classes of the tags below: a tag of an empty class is [`Tagged::Absent`].
    classes: TagFilter,
    buckets: Vec<Bucket>,
    /// Buckets that had more tags than lanes: a tag absent from them is [`Tagged::Unknown`].
    overflowed: Vec<bool>,
}

/// One bucket's tags and what their slots say, in one cache line: a look-up reads one line.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Bucket {
    tags: [u32; LANES],
    values: [u32; LANES],
}

impl TagTable {
    /// The table of a slot table holding `keys` keys (`None`: too many keys for one, or an
    /// anchor index too large for a lane).
    pub(crate) fn of_slots(slots: &[u8], keys: usize) -> Option<Self> {
        if keys > MAX_TABLED_KEYS {
            return None;
        }
        // About three keys per bucket of eight lanes: one in a few hundred overflows.
        let n = keys.div_ceil(3).max(1);
        let empty = Bucket {
            tags: [NO_TAG; LANES],
            values: [0; LANES],
        };
        let mut table = Self {
            classes: TagFilter::of_slots(slots),
            buckets: vec![empty; n],
            overflowed: vec![false; n],
        };
        for entry in slots.as_chunks::<8>().0 {
            let Some(slot) = super::hash::split_entry(u64::from_le_bytes(*entry)) else {
                continue;
            };
            if slot.payload != super::hash::PREFIX_ONLY && slot.payload >= LANE_SHARED {
                return None;
            }
            let b = table.bucket(slot.tag);
            let Bucket { tags, values } = &mut table.buckets[b];
            if let Some(lane) = tags.iter().position(|&t| t == slot.tag) {
                values[lane] = LANE_SHARED;
            } else if let Some(lane) = tags.iter().position(|&t| t == NO_TAG) {
                tags[lane] = slot.tag;
                let payload = if slot.payload == super::hash::PREFIX_ONLY {
                    LANE_PREFIX_ONLY
                } else {
                    slot.payload
                };
                values[lane] = payload | if slot.prefix { PREFIX_BIT } else { 0 };
            } else {
                table.overflowed[b] = true;
            }
        }
        Some(table)
    }

    #[inline]
    fn bucket(&self, tag: u32) -> usize {
        ((u64::from(tag) * self.buckets.len() as u64) >> 31) as usize
    }

    /// What the index holds under `tag`.
    #[inline(always)]
    pub(crate) fn look_up(&self, tag: u32) -> Tagged {
        if !self.classes.may_hold(tag) {
            return Tagged::Absent;
        }
        self.look_up_bucket(tag)
    }

    /// [`Self::look_up`] from `tag`'s bucket alone.
    #[inline(always)]
    fn look_up_bucket(&self, tag: u32) -> Tagged {
        let b = self.bucket(tag);
        let Some(Bucket { tags, values }) = self.buckets.get(b) else {
            return Tagged::Unknown;
        };
        // One comparison per lane, folded without a branch (into one vector compare).
        let hits = tags
            .map(|t| t == tag)
            .iter()
            .enumerate()
            .fold(0u8, |m, (lane, &hit)| m | (u8::from(hit) << lane));
        if hits == 0 {
            return if self.overflowed.get(b) == Some(&false) {
                Tagged::Absent
            } else {
                Tagged::Unknown
            };
        }
        let value = values
            .get(hits.trailing_zeros() as usize)
            .copied()
            .unwrap_or(LANE_SHARED);
        match value & !PREFIX_BIT {
            LANE_SHARED => Tagged::Unknown,
            LANE_PREFIX_ONLY => Tagged::Once {
                index: None,
                prefix: true,
            },
            payload => Tagged::Once {
                index: payload.checked_sub(1),
                prefix: value & PREFIX_BIT != 0,
            },
        }
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

    /// The table answers for the one slot holding a tag, and defers to the slots when
    /// several do; a tag no slot holds is absent.
    #[test]
    fn the_tag_table_knows_each_tag_of_the_index() {
        let keys: Vec<String> = (0..2_000).map(|i| format!("anchor {i}")).collect();
        let (mut table, _) = hash::build(keys.len(), |i| keys[i].as_bytes());
        // A prefix-only entry, and a second key sharing the tag of key 7.
        let prefix = hash::hash(b"anchor");
        let shared = hash::hash(keys[7].as_bytes());
        for (h, payload, flag) in [
            (prefix, hash::PREFIX_ONLY, true),
            (shared ^ (1 << 40), 9_999, false),
        ] {
            let mut s = hash::start_slot(h, table.len());
            while table[s] != 0 {
                s = (s + 1) % table.len();
            }
            table[s] = hash::entry(h, payload, flag);
        }
        let slots: Vec<u8> = table.iter().flat_map(|e| e.to_le_bytes()).collect();
        let tags = TagTable::of_slots(&slots, keys.len() + 2).unwrap();
        let mut known = 0;
        for (i, key) in keys.iter().enumerate() {
            match tags.look_up(hash::tag(hash::hash(key.as_bytes()))) {
                Tagged::Once { index, prefix } => {
                    assert_eq!((index, prefix), (Some(i as u32), false), "{key}");
                    known += 1;
                }
                Tagged::Unknown => {}
                Tagged::Absent => panic!("{key} absent"),
            }
        }
        // Only key 7 and the keys of overflowed buckets are deferred.
        assert!(known > 1_950, "{known}");
        assert_eq!(tags.look_up(hash::tag(shared)), Tagged::Unknown);
        assert_eq!(
            tags.look_up(hash::tag(prefix)),
            Tagged::Once {
                index: None,
                prefix: true
            }
        );
        let absent = (0..20_000)
            .map(|i| tags.look_up(hash::tag(hash::hash(format!("no anchor {i}").as_bytes()))))
            .filter(|t| *t == Tagged::Absent)
            .count();
        assert!(absent > 19_900, "{absent}");
        assert!(TagTable::of_slots(&slots, MAX_TABLED_KEYS + 1).is_none());
    }

    /// The class filter in front of the buckets changes no answer (but for a tag no slot
    /// holds, in a bucket that overflowed: absent, where the bucket alone cannot tell), and
    /// answers most tags the index does not hold without reading a bucket.
    #[test]
    fn the_tag_tables_class_filter_answers_most_absent_tags_alone() {
        let keys: Vec<String> = (0..3_000).map(|i| format!("anchor {i}")).collect();
        let (table, _) = hash::build(keys.len(), |i| keys[i].as_bytes());
        let held: std::collections::HashSet<u32> = table
            .iter()
            .filter_map(|&e| hash::split_entry(e).map(|slot| slot.tag))
            .collect();
        let slots: Vec<u8> = table.iter().flat_map(|e| e.to_le_bytes()).collect();
        let tags = TagTable::of_slots(&slots, keys.len()).unwrap();
        let asked = keys
            .iter()
            .map(|k| hash::tag(hash::hash(k.as_bytes())))
            .chain((0..30_000).map(|i| hash::tag(hash::hash(format!("gram {i}").as_bytes()))));
        let mut filtered = 0;
        for tag in asked {
            let (answer, bucket) = (tags.look_up(tag), tags.look_up_bucket(tag));
            if tags.classes.may_hold(tag) {
                assert_eq!(answer, bucket, "{tag}");
            } else {
                assert!(!held.contains(&tag), "{tag} is held");
                assert!(matches!(bucket, Tagged::Absent | Tagged::Unknown), "{tag}");
                assert_eq!(answer, Tagged::Absent, "{tag}");
                filtered += 1;
            }
        }
        // 3,000 keys in 4,286 slots, so 65,536 classes: about 19 absent tags in 20 stop at
        // the filter.
        assert!(filtered > 26_000, "{filtered}");
    }
}

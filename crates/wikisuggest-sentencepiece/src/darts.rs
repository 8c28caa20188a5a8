//! Read-only access to a Darts-clone double-array trie, the index of a model's
//! precompiled character map.
//!
//! Each unit is a little-endian `u32`. A non-leaf unit packs a label (low byte), a
//! has-leaf flag (bit 8) and an offset to its children (bits 10.., scaled by 256 when
//! bit 9 is set); a leaf unit (bit 31 set) holds a value in its low 31 bits. From
//! node `p`, the child for byte `b` is at `p ^ offset(p) ^ b`; the leaf of a node is
//! its child for the byte 0.

use crate::error::ModelError;

pub(crate) struct DoubleArray {
    units: Vec<u32>,
}

fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize
}

fn label(unit: u32) -> u32 {
    unit & ((1 << 31) | 0xff)
}

fn has_leaf(unit: u32) -> bool {
    (unit >> 8) & 1 == 1
}

fn value(unit: u32) -> u32 {
    unit & ((1 << 31) - 1)
}

impl DoubleArray {
    pub(crate) fn from_le_bytes(blob: &[u8]) -> Result<Self, ModelError> {
        if !blob.len().is_multiple_of(4) {
            return Err(ModelError::Malformed(
                "trie size is not a whole number of units",
            ));
        }
        let units = blob
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(Self { units })
    }

    /// The longest key of the trie that is a prefix of `key`, as `(value, length)`:
    /// what the library's common-prefix search followed by "keep the longest" finds.
    /// A unit index outside the array ends the walk (a damaged trie then simply
    /// matches less instead of reading out of bounds).
    pub(crate) fn longest_prefix(&self, key: &[u8]) -> Option<(u32, usize)> {
        let mut best = None;
        let mut node = offset(*self.units.first()?);
        for (i, &byte) in key.iter().enumerate() {
            node ^= usize::from(byte);
            let Some(&unit) = self.units.get(node) else {
                return best;
            };
            if label(unit) != u32::from(byte) {
                return best;
            }
            node ^= offset(unit);
            if has_leaf(unit) {
                let Some(&leaf) = self.units.get(node) else {
                    return best;
                };
                best = Some((value(leaf), i + 1));
            }
        }
        best
    }
}

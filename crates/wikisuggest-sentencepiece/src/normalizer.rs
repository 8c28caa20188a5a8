//! The model's normalizer: the precompiled character map (longest-prefix rewrite
//! rules) and the whitespace options of `NormalizerSpec`, as the library's
//! `Normalizer::Normalize` applies them.

use crate::darts::DoubleArray;
use crate::error::ModelError;
use crate::matcher::PrefixMatcher;

/// U+2581 LOWER ONE EIGHTH BLOCK, the library's visible space.
pub const SPACE_SYMBOL: &str = "\u{2581}";

/// The options of one model's `NormalizerSpec` plus the one trainer option that
/// moves the dummy whitespace from the front to the back.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    pub treat_whitespace_as_suffix: bool,
}

/// The decoded precompiled character map: a trie from input byte strings to offsets
/// of NUL-terminated replacements in `normalized`.
pub(crate) struct CharsMap {
    trie: DoubleArray,
    normalized: String,
}

impl CharsMap {
    /// Decodes `<trie size: u32 LE><trie units><NUL-terminated replacements>`, with
    /// the library's sanity checks.
    pub(crate) fn decode(blob: &[u8]) -> Result<Self, ModelError> {
        let (size, rest) = blob
            .split_first_chunk::<4>()
            .filter(|_| blob.len() > 4)
            .ok_or(ModelError::Malformed("precompiled charsmap is too short"))?;
        let size = u32::from_le_bytes(*size) as usize;
        if size >= blob.len() {
            return Err(ModelError::Malformed("charsmap trie size exceeds the blob"));
        }
        if size < 1024 || size & 0x3ff != 0 {
            return Err(ModelError::Malformed(
                "charsmap trie size is not divisible by 1024",
            ));
        }
        let (trie, normalized) = rest.split_at(size.min(rest.len()));
        if normalized.last() != Some(&0) {
            return Err(ModelError::Malformed(
                "charsmap replacements are not NUL-terminated",
            ));
        }
        let normalized = std::str::from_utf8(normalized)
            .map_err(|_| ModelError::Unsupported("charsmap replacements are not UTF-8".into()))?;
        Ok(Self {
            trie: DoubleArray::from_le_bytes(trie)?,
            normalized: normalized.to_owned(),
        })
    }

    /// The replacement of the longest rule matching a prefix of `input`, with the
    /// number of input bytes it consumes.
    ///
    /// A rule whose replacement offset is out of range, or not at a character
    /// boundary, counts as no rule (the library checks the range the same way).
    fn rewrite<'s>(&'s self, input: &[u8]) -> Option<(&'s str, usize)> {
        let (value, length) = self.trie.longest_prefix(input)?;
        let start = value as usize;
        if start >= self.normalized.len() {
            return None;
        }
        let tail = self.normalized.get(start..)?;
        let end = tail.find('\0').unwrap_or(tail.len());
        Some((tail.get(..end)?, length))
    }
}

pub(crate) struct Normalizer {
    options: Options,
    charsmap: Option<CharsMap>,
}

impl Normalizer {
    pub(crate) fn new(options: Options, charsmap: Option<CharsMap>) -> Self {
        Self { options, charsmap }
    }

    /// `NormalizePrefix`: the normalized form of the first unit of `input` and how
    /// many bytes of `input` it covers. A user-defined symbol is kept as is; else the
    /// longest charsmap rule applies; else one character is kept as is.
    fn normalize_prefix<'a>(&'a self, input: &'a str, matcher: &PrefixMatcher) -> (&'a str, usize) {
        if let Some(len) = matcher.longest_match(input) {
            return (input.get(..len).unwrap_or(input), len);
        }
        if let Some((replacement, len)) = self
            .charsmap
            .as_ref()
            .and_then(|map| map.rewrite(input.as_bytes()))
            .filter(|&(_, len)| len <= input.len() && input.is_char_boundary(len))
        {
            return (replacement, len);
        }
        let len = input.chars().next().map_or(0, char::len_utf8);
        (input.get(..len).unwrap_or(input), len)
    }

    /// `Normalizer::Normalize(input)` (the normalized text only).
    pub(crate) fn normalize(&self, input: &str, matcher: &PrefixMatcher) -> String {
        let opts = self.options;
        let mut input = input;
        let mut out = String::with_capacity(input.len() * 3);
        if input.is_empty() {
            return out;
        }
        if opts.remove_extra_whitespaces {
            while !input.is_empty() {
                let (piece, consumed) = self.normalize_prefix(input, matcher);
                if piece != " " {
                    break;
                }
                input = input.get(consumed..).unwrap_or("");
            }
            if input.is_empty() {
                return out;
            }
        }
        let space = if opts.escape_whitespaces {
            SPACE_SYMBOL
        } else {
            " "
        };
        if !opts.treat_whitespace_as_suffix && opts.add_dummy_prefix {
            out.push_str(space);
        }
        let mut is_prev_space = opts.remove_extra_whitespaces;
        while !input.is_empty() {
            let (mut piece, consumed) = self.normalize_prefix(input, matcher);
            if is_prev_space {
                piece = piece.trim_start_matches(' ');
            }
            if !piece.is_empty() {
                if opts.escape_whitespaces {
                    for (i, part) in piece.split(' ').enumerate() {
                        if i > 0 {
                            out.push_str(SPACE_SYMBOL);
                        }
                        out.push_str(part);
                    }
                } else {
                    out.push_str(piece);
                }
                is_prev_space = piece.ends_with(' ');
            }
            input = input.get(consumed..).unwrap_or("");
            if !opts.remove_extra_whitespaces {
                is_prev_space = false;
            }
        }
        if opts.remove_extra_whitespaces {
            while out.ends_with(space) {
                out.truncate(out.len() - space.len());
            }
        }
        if opts.treat_whitespace_as_suffix && opts.add_dummy_prefix {
            out.push_str(space);
        }
        out
    }
}

//! SentencePiece encoding of BPE models, bit-identical to the `sentencepiece`
//! library's `encode(text, out_type=str)`.
//!
//! A model file (`ModelProto`) is parsed with a small protobuf reader; text is
//! normalized with the model's precompiled character map and whitespace options,
//! then segmented by BPE merges. Unknown characters keep their (normalized) surface,
//! and a run of adjacent unknown pieces becomes one piece, as the library reports
//! them. Unigram, word and char models are refused with
//! [`ModelError::Unsupported`].

mod bpe;
mod darts;
pub mod error;
mod matcher;
mod normalizer;
mod proto;

use foldhash::{HashMap, HashMapExt};

pub use error::ModelError;
pub use normalizer::SPACE_SYMBOL;

use matcher::PrefixMatcher;
use normalizer::{CharsMap, Normalizer, Options};
use proto::{Fields, Value};

/// `ModelProto.SentencePiece.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PieceType {
    Normal,
    Unknown,
    Control,
    UserDefined,
    Unused,
    Byte,
}

impl PieceType {
    fn from_proto(value: u64) -> Result<Self, ModelError> {
        Ok(match value {
            1 => Self::Normal,
            2 => Self::Unknown,
            3 => Self::Control,
            4 => Self::UserDefined,
            5 => Self::Unused,
            6 => Self::Byte,
            _ => return Err(ModelError::Malformed("unknown piece type")),
        })
    }

    /// Pieces BPE may produce by merging (the library's "normal" pieces).
    fn is_mergeable(self) -> bool {
        matches!(self, Self::Normal | Self::UserDefined | Self::Unused)
    }
}

/// A loaded BPE model.
pub struct Model {
    /// Normal, user-defined and unused pieces: what merges may form.
    pieces: HashMap<Box<str>, u32>,
    /// Unknown, control and byte pieces.
    reserved: HashMap<Box<str>, u32>,
    scores: Vec<f32>,
    types: Vec<PieceType>,
    unk_id: u32,
    byte_fallback: bool,
    matcher: PrefixMatcher,
    normalizer: Normalizer,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("pieces", &self.types.len())
            .field("byte_fallback", &self.byte_fallback)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct TrainerSpec {
    model_type: Option<u64>,
    treat_whitespace_as_suffix: bool,
    byte_fallback: bool,
}

struct NormalizerSpec<'a> {
    charsmap: &'a [u8],
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
}

impl Default for NormalizerSpec<'_> {
    fn default() -> Self {
        // The proto2 defaults of `NormalizerSpec`.
        Self {
            charsmap: &[],
            add_dummy_prefix: true,
            remove_extra_whitespaces: true,
            escape_whitespaces: true,
        }
    }
}

fn read_bool(value: &Value<'_>) -> Result<bool, ModelError> {
    Ok(proto::varint(value)? != 0)
}

fn read_trainer_spec(message: &[u8]) -> Result<TrainerSpec, ModelError> {
    let mut spec = TrainerSpec::default();
    for field in Fields::new(message) {
        let (number, value) = field?;
        match number {
            3 => spec.model_type = Some(proto::varint(&value)?),
            24 => spec.treat_whitespace_as_suffix = read_bool(&value)?,
            35 => spec.byte_fallback = read_bool(&value)?,
            _ => {}
        }
    }
    Ok(spec)
}

fn read_normalizer_spec(message: &[u8]) -> Result<NormalizerSpec<'_>, ModelError> {
    let mut spec = NormalizerSpec::default();
    for field in Fields::new(message) {
        let (number, value) = field?;
        match number {
            2 => spec.charsmap = proto::bytes(&value)?,
            3 => spec.add_dummy_prefix = read_bool(&value)?,
            4 => spec.remove_extra_whitespaces = read_bool(&value)?,
            5 => spec.escape_whitespaces = read_bool(&value)?,
            _ => {}
        }
    }
    Ok(spec)
}

fn read_piece(message: &[u8]) -> Result<(&str, f32, PieceType), ModelError> {
    let (mut piece, mut score, mut kind) = ("", 0.0, PieceType::Normal);
    for field in Fields::new(message) {
        let (number, value) = field?;
        match number {
            1 => piece = proto::string(&value)?,
            2 => score = proto::float(&value)?,
            3 => kind = PieceType::from_proto(proto::varint(&value)?)?,
            _ => {}
        }
    }
    Ok((piece, score, kind))
}

const MODEL_TYPE_BPE: u64 = 2;

/// `<0xXX>`: the piece of one byte in byte-fallback models.
fn byte_piece(byte: u8) -> String {
    format!("<0x{byte:02X}>")
}

impl Model {
    /// Parses a serialized `ModelProto` (the content of a `.model` file).
    ///
    /// # Errors
    /// [`ModelError::Malformed`] for bytes that are not such a message,
    /// [`ModelError::Invalid`] for what the library also refuses to load (empty or
    /// duplicate pieces, no unknown piece, byte pieces without byte fallback), and
    /// [`ModelError::Unsupported`] for non-BPE models. Self-test samples and the
    /// denormalizer (used only for decoding) are ignored.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ModelError> {
        let mut raw_pieces = Vec::new();
        let mut trainer = TrainerSpec::default();
        let mut normalizer = NormalizerSpec::default();
        for field in Fields::new(bytes) {
            let (number, value) = field?;
            match number {
                1 => raw_pieces.push(read_piece(proto::bytes(&value)?)?),
                2 => trainer = read_trainer_spec(proto::bytes(&value)?)?,
                3 => normalizer = read_normalizer_spec(proto::bytes(&value)?)?,
                _ => {}
            }
        }
        // proto2 default of `model_type` is UNIGRAM.
        if trainer.model_type.unwrap_or(1) != MODEL_TYPE_BPE {
            return Err(ModelError::Unsupported(
                "only BPE models are supported".into(),
            ));
        }
        let mut pieces = HashMap::with_capacity(raw_pieces.len());
        let mut reserved = HashMap::new();
        let mut scores = Vec::with_capacity(raw_pieces.len());
        let mut types = Vec::with_capacity(raw_pieces.len());
        let mut unk_id = None;
        let mut user_defined = Vec::new();
        let mut bytes_found = [false; 256];
        for (id, &(piece, score, kind)) in raw_pieces.iter().enumerate() {
            let id = u32::try_from(id).map_err(|_| ModelError::Malformed("too many pieces"))?;
            if piece.is_empty() {
                return Err(ModelError::Invalid("piece must not be empty".into()));
            }
            let map = if kind.is_mergeable() {
                &mut pieces
            } else {
                &mut reserved
            };
            if map.insert(Box::<str>::from(piece), id).is_some() {
                return Err(ModelError::Invalid(format!("{piece} is already defined")));
            }
            match kind {
                PieceType::UserDefined => user_defined.push(piece),
                PieceType::Unknown if unk_id.is_some() => {
                    return Err(ModelError::Invalid("unk is already defined".into()));
                }
                PieceType::Unknown => unk_id = Some(id),
                PieceType::Byte => {
                    let byte = (0..=255u8).find(|&b| byte_piece(b) == piece);
                    match byte {
                        Some(b) if trainer.byte_fallback => bytes_found[usize::from(b)] = true,
                        _ => return Err(ModelError::Invalid(format!("byte piece {piece}"))),
                    }
                }
                _ => {}
            }
            scores.push(score);
            types.push(kind);
        }
        let unk_id = unk_id.ok_or_else(|| ModelError::Invalid("unk is not defined".into()))?;
        if trainer.byte_fallback && bytes_found.contains(&false) {
            return Err(ModelError::Invalid(
                "there are not 256 byte pieces although byte_fallback is true".into(),
            ));
        }
        let charsmap = if normalizer.charsmap.is_empty() {
            None
        } else {
            Some(CharsMap::decode(normalizer.charsmap)?)
        };
        let options = Options {
            add_dummy_prefix: normalizer.add_dummy_prefix,
            remove_extra_whitespaces: normalizer.remove_extra_whitespaces,
            escape_whitespaces: normalizer.escape_whitespaces,
            treat_whitespace_as_suffix: trainer.treat_whitespace_as_suffix,
        };
        Ok(Self {
            pieces,
            reserved,
            scores,
            types,
            unk_id,
            byte_fallback: trainer.byte_fallback,
            matcher: PrefixMatcher::new(user_defined),
            normalizer: Normalizer::new(options, charsmap),
        })
    }

    /// The model's normalization of `text` (`SentencePieceProcessor.normalize`):
    /// spaces appear as [`SPACE_SYMBOL`] when the model escapes whitespace.
    pub fn normalize(&self, text: &str) -> String {
        self.normalizer.normalize(text, &self.matcher)
    }

    /// `encode(text, out_type=str)`: the pieces of `text`, in order.
    pub fn encode_as_pieces(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each_piece(text, |piece| out.push(piece.to_owned()));
        out
    }

    /// Calls `f` with each piece of `text`, in order: what
    /// [`Model::encode_as_pieces`] returns, without allocating each piece.
    pub fn for_each_piece(&self, text: &str, mut f: impl FnMut(&str)) {
        let normalized = self.normalize(text);
        // A run of unknown pieces is reported as one piece; runs are contiguous in the
        // normalized text, so the run is kept as a byte range and emitted when it ends.
        let mut unknown_run: Option<(usize, usize)> = None;
        let base = normalized.as_ptr() as usize;
        for (piece, id) in bpe::encode(self, &self.matcher, &normalized) {
            // Every piece is a slice of `normalized`.
            let start = (piece.as_ptr() as usize).saturating_sub(base);
            let unknown = id == self.unk_id;
            if unknown && self.byte_fallback {
                for byte in piece.bytes() {
                    f(&byte_piece(byte));
                }
                continue;
            }
            if unknown {
                unknown_run = match unknown_run {
                    Some((run_start, _)) => Some((run_start, start + piece.len())),
                    None => Some((start, start + piece.len())),
                };
                continue;
            }
            if let Some((a, b)) = unknown_run.take() {
                f(normalized.get(a..b).unwrap_or(""));
            }
            f(piece);
        }
        if let Some((a, b)) = unknown_run {
            f(normalized.get(a..b).unwrap_or(""));
        }
    }
}

impl bpe::Vocabulary for Model {
    fn normal_piece_id(&self, piece: &str) -> Option<u32> {
        self.pieces.get(piece).copied()
    }

    fn piece_to_id(&self, piece: &str) -> u32 {
        self.reserved
            .get(piece)
            .or_else(|| self.pieces.get(piece))
            .copied()
            .unwrap_or(self.unk_id)
    }

    fn score(&self, id: u32) -> f32 {
        self.scores.get(id as usize).copied().unwrap_or(0.0)
    }

    fn is_unused(&self, id: u32) -> bool {
        self.types.get(id as usize) == Some(&PieceType::Unused)
    }
}

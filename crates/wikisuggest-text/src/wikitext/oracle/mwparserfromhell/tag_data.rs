//! State of the attribute scanner inside an HTML open tag or table style.

pub(crate) const NAME: u32 = 1 << 0;
pub(crate) const ATTR_READY: u32 = 1 << 1;
pub(crate) const ATTR_NAME: u32 = 1 << 2;
pub(crate) const ATTR_VALUE: u32 = 1 << 3;
pub(crate) const QUOTED: u32 = 1 << 4;
pub(crate) const NOTE_SPACE: u32 = 1 << 5;
pub(crate) const NOTE_EQUALS: u32 = 1 << 6;
pub(crate) const NOTE_QUOTE: u32 = 1 << 7;

#[derive(Debug)]
pub(crate) struct TagData {
    pub context: u32,
    /// The quote character of the current quoted value.
    pub quoter: char,
    /// Position of the opening quote, to retry an unclosed value unquoted.
    pub reset: usize,
}

impl TagData {
    pub(crate) fn new(context: u32) -> Self {
        Self {
            context,
            quoter: '"',
            reset: 0,
        }
    }
}

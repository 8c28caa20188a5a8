//! Parser contexts: bit flags describing what construct the tokenizer is
//! inside.  The values matter only as identities (they key the failed-route
//! memo), but their grouping decides which characters are special where.

pub(crate) const TEMPLATE_NAME: u64 = 1 << 0;
pub(crate) const TEMPLATE_PARAM_KEY: u64 = 1 << 1;
pub(crate) const TEMPLATE_PARAM_VALUE: u64 = 1 << 2;
pub(crate) const TEMPLATE: u64 = TEMPLATE_NAME | TEMPLATE_PARAM_KEY | TEMPLATE_PARAM_VALUE;

pub(crate) const ARGUMENT_NAME: u64 = 1 << 3;
pub(crate) const ARGUMENT_DEFAULT: u64 = 1 << 4;
pub(crate) const ARGUMENT: u64 = ARGUMENT_NAME | ARGUMENT_DEFAULT;

pub(crate) const WIKILINK_TITLE: u64 = 1 << 5;
pub(crate) const WIKILINK_TEXT: u64 = 1 << 6;
pub(crate) const WIKILINK: u64 = WIKILINK_TITLE | WIKILINK_TEXT;

pub(crate) const EXT_LINK_URI: u64 = 1 << 7;
pub(crate) const EXT_LINK_TITLE: u64 = 1 << 8;
pub(crate) const EXT_LINK: u64 = EXT_LINK_URI | EXT_LINK_TITLE;

pub(crate) const HEADING_LEVEL_1: u64 = 1 << 9;
pub(crate) const HEADING: u64 = 0b11_1111 << 9;

pub(crate) const TAG_OPEN: u64 = 1 << 15;
pub(crate) const TAG_ATTR: u64 = 1 << 16;
pub(crate) const TAG_BODY: u64 = 1 << 17;
pub(crate) const TAG_CLOSE: u64 = 1 << 18;
pub(crate) const TAG: u64 = TAG_OPEN | TAG_ATTR | TAG_BODY | TAG_CLOSE;

pub(crate) const STYLE_ITALICS: u64 = 1 << 19;
pub(crate) const STYLE_BOLD: u64 = 1 << 20;
pub(crate) const STYLE_PASS_AGAIN: u64 = 1 << 21;
pub(crate) const STYLE_SECOND_PASS: u64 = 1 << 22;
pub(crate) const STYLE: u64 = STYLE_ITALICS | STYLE_BOLD | STYLE_PASS_AGAIN | STYLE_SECOND_PASS;

pub(crate) const DL_TERM: u64 = 1 << 23;

pub(crate) const HAS_TEXT: u64 = 1 << 24;
pub(crate) const FAIL_ON_TEXT: u64 = 1 << 25;
pub(crate) const FAIL_NEXT: u64 = 1 << 26;
pub(crate) const FAIL_ON_LBRACE: u64 = 1 << 27;
pub(crate) const FAIL_ON_RBRACE: u64 = 1 << 28;
pub(crate) const FAIL_ON_EQUALS: u64 = 1 << 29;
pub(crate) const HAS_TEMPLATE: u64 = 1 << 30;

pub(crate) const TABLE_OPEN: u64 = 1 << 31;
pub(crate) const TABLE_CELL_OPEN: u64 = 1 << 32;
pub(crate) const TABLE_CELL_STYLE: u64 = 1 << 33;
pub(crate) const TABLE_ROW_OPEN: u64 = 1 << 34;
pub(crate) const TABLE_TD_LINE: u64 = 1 << 35;
pub(crate) const TABLE_TH_LINE: u64 = 1 << 36;
pub(crate) const TABLE_CELL_LINE_CONTEXTS: u64 = TABLE_TD_LINE | TABLE_TH_LINE | TABLE_CELL_STYLE;
pub(crate) const TABLE: u64 = TABLE_OPEN
    | TABLE_CELL_OPEN
    | TABLE_CELL_STYLE
    | TABLE_ROW_OPEN
    | TABLE_TD_LINE
    | TABLE_TH_LINE;

pub(crate) const HTML_ENTITY: u64 = 1 << 37;

/// Global (not per-frame) flag: a heading is being parsed somewhere above.
pub(crate) const GL_HEADING: u64 = 1;

/// Contexts in which reaching the end of the text fails the route.
pub(crate) const FAIL: u64 =
    TEMPLATE | ARGUMENT | WIKILINK | EXT_LINK_TITLE | HEADING | TAG | STYLE | TABLE;
/// Contexts whose characters must pass `verify_safe`.
pub(crate) const UNSAFE: u64 = TEMPLATE_NAME
    | WIKILINK_TITLE
    | EXT_LINK_TITLE
    | TEMPLATE_PARAM_KEY
    | ARGUMENT_NAME
    | TAG_CLOSE;
/// Contexts that sit on top of a second frame of the same construct.
pub(crate) const DOUBLE: u64 = TEMPLATE_PARAM_KEY | TAG_CLOSE | TABLE_ROW_OPEN;
pub(crate) const NO_WIKILINKS: u64 = TEMPLATE_NAME | ARGUMENT_NAME | WIKILINK_TITLE | EXT_LINK_URI;
pub(crate) const NO_EXT_LINKS: u64 = TEMPLATE_NAME | ARGUMENT_NAME | WIKILINK_TITLE | EXT_LINK;

/// Heading level (1..=6) encoded in a heading context.
pub(crate) fn heading_level(context: u64) -> u8 {
    let bits = (context & HEADING) / HEADING_LEVEL_1;
    // `bits` has exactly one bit set among the low six.
    (u64::BITS - bits.leading_zeros()).clamp(1, 6) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_levels_round_trip() {
        for level in 1..=6u8 {
            assert_eq!(heading_level(HEADING_LEVEL_1 << (level - 1)), level);
        }
    }
}

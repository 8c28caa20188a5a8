//! A tokenizer that splits wikitext exactly where mwparserfromhell 0.7.2 (its C
//! tokenizer) does, keeping only what the link engine needs: the spans of the
//! nodes and of the text between them.
//!
//! It reads the page's UTF-8 bytes as the [lexer](crate::wikitext::lexer) left them: a step is a
//! character (every character that can change its state is an ASCII byte), positions are
//! byte offsets, and stretches that can only be text are taken from one marker to the
//! next. It counts its reads in characters, as the original counts them, so that a read
//! budget means the same as it did for the code point port kept as this one's oracle
//! (`super::oracle`).
//!
//! The page is read through `tokenizer_page::Source`, as the type `TokenizerPage` that the including
//! module names: the lexed page here; the oracle builds these same files again over code
//! points.
//!
//! mwparserfromhell is a backtracking recursive-descent tokenizer.  Every
//! construct is tried in a new *frame* with a context; an impossible character
//! fails the route, the frame is discarded, the `(position, context)` pair is
//! remembered as bad, and the opening markup becomes plain text.  Whether a
//! `{{`, `[[`, `<ref>` or `''` becomes a node therefore depends on the whole
//! failure/retry protocol, which is reproduced here step by step.  Nested nodes
//! are discarded once their parent is known: callers only see the top level.

mod links_and_urls;
mod lists;
mod markup;
mod style;
mod tables;
mod tags;
mod templates;

use std::cell::Cell;
use std::collections::HashSet;

use foldhash::fast::RandomState;
use std::time::Instant;

// The page type this build of the tokenizer reads, named by the including module.
use super::TokenizerPage as Page;
use crate::pyunicode;
use crate::wikitext::contexts::*;
use crate::wikitext::entities;
use crate::wikitext::lexer::is_marker_byte;
use crate::wikitext::node_kind::NodeKind;
use crate::wikitext::tag_data::{self as td, TagData};
use crate::wikitext::tokenizer_page::Source;

/// Maximum number of nested frames, as upstream (`MAX_DEPTH`).
const MAX_DEPTH: usize = 100;
/// Characters per top-level item the top frame is sized for (text and nodes alternate).
const TOP_ITEMS_EVERY: usize = 32;
/// Longest run of `{` considered for templates and arguments.
const MAX_BRACES: usize = 255;
/// Longest entity name or number (`MAX_ENTITY_SIZE`).
const MAX_ENTITY_SIZE: usize = 8;
/// Whether `c` is one of upstream's URI scheme characters (ASCII letters, digits, `+`, `.`, `-`).
#[inline]
fn is_uri_scheme_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-')
}
pub(super) const URI_SCHEMES: [&str; 27] = [
    "bitcoin",
    "ftp",
    "ftps",
    "geo",
    "git",
    "gopher",
    "http",
    "https",
    "irc",
    "ircs",
    "magnet",
    "mailto",
    "mms",
    "news",
    "nntp",
    "redis",
    "sftp",
    "sip",
    "sips",
    "sms",
    "ssh",
    "svn",
    "tel",
    "telnet",
    "urn",
    "worldwind",
    "xmpp",
];
/// Schemes valid without `//`.
pub(super) const URI_SCHEMES_NO_SLASHES: [&str; 11] = [
    "bitcoin", "geo", "magnet", "mailto", "news", "sip", "sips", "sms", "tel", "urn", "xmpp",
];
/// Tags whose body is not parsed (only entities are recognised inside).
pub(super) const PARSER_BLACKLIST: [&str; 17] = [
    "categorytree",
    "ce",
    "chem",
    "gallery",
    "graph",
    "hiero",
    "imagemap",
    "inputbox",
    "math",
    "nowiki",
    "pre",
    "score",
    "section",
    "source",
    "syntaxhighlight",
    "templatedata",
    "timeline",
];
pub(super) const SINGLE_ONLY: [&str; 6] = ["br", "wbr", "hr", "meta", "link", "img"];
const SINGLE: [&str; 12] = [
    "br", "wbr", "hr", "meta", "link", "img", "li", "dt", "dd", "th", "td", "tr",
];

/// A node: its kind and code point span; headings also carry level and title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawNode {
    pub kind: NodeKind,
    pub start: usize,
    pub end: usize,
    pub level: u8,
}

/// One element of a frame: a text span or a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    Text(usize, usize),
    Node(RawNode),
}

/// A failed route; carries the context of the frame that failed.
#[derive(Debug, Clone, Copy)]
struct BadRoute {
    context: u64,
}

type Route<T> = Result<T, BadRoute>;

#[derive(Debug)]
struct Frame {
    context: u64,
    ident: (usize, u64),
    items: Vec<Item>,
    /// Pending text (upstream's text buffer), always a source span.
    text: Option<(usize, usize)>,
    /// Tag name for tag frames (`stack[1]` upstream), as a byte range of the page.
    tag_name: (usize, usize),
    /// Position after the `>` of an open tag, for implicitly closed tags.
    open_end: usize,
}

/// What a completed frame hands back.
#[derive(Debug, Default)]
struct Parsed {
    items: Vec<Item>,
    level: u8,
    /// Set when a tag was closed implicitly at the end of the text: the tag
    /// node ends here and the body becomes siblings.
    implicit_open_end: Option<usize>,
    /// Set when the top level stopped where [`MwparserfromhellTokenizer::advance`] asked
    /// (its frame stays, with no item taken).
    paused: bool,
}

pub(crate) struct MwparserfromhellTokenizer<'a> {
    /// The page up to its first NUL.
    page: Page<'a>,
    /// Its units ([`Source::units`]).
    text: &'a [u8],
    head: usize,
    frames: Vec<Frame>,
    global: u64,
    /// Memoized failed routes, looked up on every push.
    bad_routes: BadRoutes,
    /// Last search for `-->`: (searched from, first match at or after it).
    comment_close: Option<(usize, Option<usize>)>,
    /// Work limits; once exceeded every read sees the end of the text, so
    /// all open frames finish at once.
    limits: Limits<'a>,
    reads: Cell<u64>,
    /// The read count at which [`Self::charge`] must look at the limits again (the read
    /// limit or the next deadline check; 0 once exhausted), so that an ordinary read costs
    /// one comparison.
    checkpoint: Cell<u64>,
    exhausted: Cell<bool>,
    /// Item vectors of finished frames, reused by new frames instead of allocating.
    spare: Vec<Vec<Item>>,
    /// Where the top level pauses ([`Self::advance`]); `usize::MAX` between calls.
    pause_at: usize,
    /// The end of the top-level items handed out so far.
    handed: usize,
    /// Whether the top level has finished (its last items handed out).
    finished: bool,
}

/// The set of failed routes, (position, context) pairs. Every wikilink is first tried as a
/// bracketed URL, so most failures are of [`EXT_LINK_URI`] routes: those are one bit per
/// position. The others are in a hash set, behind one bit per position saying whether the
/// set holds any route there (most pushes are at a position where none failed).
#[derive(Debug, Default)]
struct BadRoutes {
    uris: Vec<u64>,
    others_at: Vec<u64>,
    others: HashSet<(usize, u64), RandomState>,
}

/// Whether bit `at` of `bits` is set (bits past the end are clear).
#[inline]
fn bit(bits: &[u64], at: usize) -> bool {
    bits.get(at / 64).is_some_and(|w| w & (1 << (at % 64)) != 0)
}

/// Sets bit `at` of `bits`, growing it as needed.
fn set_bit(bits: &mut Vec<u64>, at: usize) {
    let word = at / 64;
    if word >= bits.len() {
        bits.resize(word + 1, 0);
    }
    if let Some(w) = bits.get_mut(word) {
        *w |= 1 << (at % 64);
    }
}

impl BadRoutes {
    #[inline]
    fn contains(&self, at: usize, context: u64) -> bool {
        if context == EXT_LINK_URI {
            return bit(&self.uris, at);
        }
        bit(&self.others_at, at) && self.others.contains(&(at, context))
    }

    fn insert(&mut self, at: usize, context: u64) {
        if context == EXT_LINK_URI {
            set_bit(&mut self.uris, at);
        } else {
            set_bit(&mut self.others_at, at);
            self.others.insert((at, context));
        }
    }
}

/// Optional bounds on the work of one parse.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Limits<'c> {
    pub deadline: Option<Instant>,
    pub max_reads: Option<u64>,
    /// Set by another thread when the result is no longer wanted.
    pub cancel: Option<&'c std::sync::atomic::AtomicBool>,
}

impl Limits<'_> {
    /// Whether the deadline has passed or the work was cancelled (called every
    /// [`DEADLINE_CHECK_INTERVAL`] reads).
    fn expired(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() > d)
            || self
                .cancel
                .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// How often (in reads) the deadline is checked.
const DEADLINE_CHECK_INTERVAL: u64 = 1 << 16;

/// Where `item` ends.
fn item_end(item: &Item) -> usize {
    match *item {
        Item::Text(_, end) => end,
        Item::Node(node) => node.end,
    }
}

/// Whether `c` may start or end markup: `{}[]<>|=&'#*;:/-!`, newline and NUL (the end).
#[inline]
fn is_marker(c: u8) -> bool {
    c == 0 || is_marker_byte(c)
}

/// Whether, in `context`, a character that is not a marker leaves the context as it is
/// and passes [`MwparserfromhellTokenizer::verify_safe`] (which reads no further for it):
/// the cases of `verify_safe`, in its order, for such a character.
fn plain_chars_are_inert(context: u64) -> bool {
    if context & UNSAFE == 0 {
        return true;
    }
    if context & FAIL_NEXT != 0 {
        return false;
    }
    if context & (WIKILINK_TITLE | EXT_LINK_TITLE | TAG_CLOSE) != 0 {
        return true;
    }
    if context & TEMPLATE_NAME != 0 {
        // Text before any text sets `HAS_TEXT`; text after a newline fails.
        return context & HAS_TEXT != 0 && context & FAIL_ON_TEXT == 0;
    }
    // A brace flag is cleared by the first character that is not a brace.
    context & FAIL_ON_EQUALS != 0 || context & (FAIL_ON_LBRACE | FAIL_ON_RBRACE) == 0
}

/// Upstream compares names by lowercasing them and requiring ASCII (the lists are
/// lowercase ASCII). An ASCII name lowercases to ASCII, so it is compared in place; only
/// other names (which may lowercase to ASCII, as the Kelvin sign does) are lowercased.
pub(super) fn in_list(name: &str, list: &[&str]) -> bool {
    if name.is_ascii() {
        return list.iter().any(|l| l.eq_ignore_ascii_case(name));
    }
    let lowered = pyunicode::lower(name);
    lowered.is_ascii() && list.contains(&lowered.as_str())
}

/// Whether `scheme` is a URI scheme ([`in_list`]), read in place from the page: it is
/// tested at every `[` and at every `:` after a word. Its characters are URI scheme
/// characters, all ASCII.
pub(super) fn is_scheme(scheme: &[u8], slashes: bool) -> bool {
    let list: &[&str] = if slashes {
        &URI_SCHEMES
    } else {
        &URI_SCHEMES_NO_SLASHES
    };
    list.iter()
        .any(|l| l.as_bytes().eq_ignore_ascii_case(scheme))
}

/// Whether two tag names match as upstream matches closing tags with opening ones (equal
/// after `rstrip().lower()`); ASCII names are compared in place.
pub(super) fn same_tag(a: &str, b: &str) -> bool {
    let (a, b) = (
        a.trim_end_matches(pyunicode::is_space),
        b.trim_end_matches(pyunicode::is_space),
    );
    if a.is_ascii() && b.is_ascii() {
        return a.eq_ignore_ascii_case(b);
    }
    pyunicode::lower(a) == pyunicode::lower(b)
}

impl<'a> MwparserfromhellTokenizer<'a> {
    pub(crate) fn new(page: Page<'a>, limits: Limits<'a>) -> Self {
        Self {
            page,
            text: page.units(),
            head: 0,
            frames: Vec::new(),
            global: 0,
            bad_routes: BadRoutes::default(),
            comment_close: None,
            limits,
            reads: Cell::new(0),
            checkpoint: Cell::new(0),
            exhausted: Cell::new(false),
            spare: Vec::new(),
            pause_at: usize::MAX,
            handed: 0,
            finished: false,
        }
        .with_checkpoint()
    }

    fn with_checkpoint(self) -> Self {
        self.checkpoint.set(self.next_checkpoint(0));
        self
    }

    /// The first read count after `reads` at which a limit must be checked.
    fn next_checkpoint(&self, reads: u64) -> u64 {
        let timed = self.limits.deadline.is_some() || self.limits.cancel.is_some();
        let next_check = if timed {
            (reads / DEADLINE_CHECK_INTERVAL + 1) * DEADLINE_CHECK_INTERVAL
        } else {
            u64::MAX
        };
        let over = self
            .limits
            .max_reads
            .map_or(u64::MAX, |m| m.saturating_add(1));
        next_check.min(over)
    }

    /// Whether a limit was hit (the items are then meaningless).
    pub(crate) fn exhausted(&self) -> bool {
        self.exhausted.get()
    }

    /// Character reads so far: the measure of work that `max_reads` bounds.
    pub(crate) fn reads(&self) -> u64 {
        self.reads.get()
    }

    /// Tokenizes on from where the last call stopped, until the top level reaches
    /// position `until` or the text ends, and moves the top-level items that are final
    /// into `out`: the pending text is not, as the next character may extend it. Whether
    /// the text ended (every item is then out).
    ///
    /// A top-level item never changes once it is in the frame: the top level cannot fail,
    /// and every attempt that can is made in a frame of its own. So the items of a page
    /// taken in steps are the items of the page taken at once, and a caller that needs only
    /// the first nodes of a page parses only as far as they go.
    pub(crate) fn advance(&mut self, until: usize, out: &mut Vec<Item>) -> bool {
        if self.finished {
            return true;
        }
        let start = self.frames.is_empty();
        // The top-level frame takes the first spare vector: sized for a page with a node
        // every few dozen characters, so that it seldom grows (and copies) as it fills.
        if start && self.spare.is_empty() {
            let every = self.text.len().min(until) / TOP_ITEMS_EVERY;
            self.spare.push(Vec::with_capacity(every + 16));
        }
        self.pause_at = until;
        let route = self.parse(0, start);
        self.pause_at = usize::MAX;
        match route {
            Ok(parsed) if parsed.paused => {
                if let Some(top) = self.frames.first_mut() {
                    if let Some(last) = top.items.last() {
                        self.handed = item_end(last);
                    }
                    out.append(&mut top.items);
                }
                false
            }
            Ok(parsed) => {
                self.finished = true;
                if out.is_empty() {
                    *out = parsed.items;
                } else {
                    out.extend_from_slice(&parsed.items);
                }
                true
            }
            // The top-level context cannot fail; keep a lossless fallback.
            Err(_) => {
                self.finished = true;
                out.push(Item::Text(self.handed, self.text.len()));
                true
            }
        }
    }

    /// Counts one read against the limits.
    #[inline]
    fn charge(&self) -> bool {
        let reads = self.reads.get() + 1;
        if reads < self.checkpoint.get() {
            self.reads.set(reads);
            return true;
        }
        self.charge_at_checkpoint(reads)
    }

    /// [`Self::charge`] when a limit may be reached: the read limit, a deadline check
    /// (every [`DEADLINE_CHECK_INTERVAL`] reads) or a parse already exhausted.
    #[cold]
    fn charge_at_checkpoint(&self, reads: u64) -> bool {
        if self.exhausted.get() {
            return false;
        }
        self.reads.set(reads);
        let over_reads = self.limits.max_reads.is_some_and(|m| reads > m);
        let over_time = reads.is_multiple_of(DEADLINE_CHECK_INTERVAL) && self.limits.expired();
        if over_reads || over_time {
            self.exhaust();
            return false;
        }
        self.checkpoint.set(self.next_checkpoint(reads));
        true
    }

    fn exhaust(&self) {
        self.exhausted.set(true);
        self.checkpoint.set(0);
    }

    /// Counts `n` reads at once, as `n` calls of [`Self::charge`] would; the deadline is
    /// checked when the count crosses a multiple of the check interval.
    #[inline]
    fn charge_many(&self, n: u64) {
        let reads = self.reads.get() + n;
        if reads < self.checkpoint.get() {
            self.reads.set(reads);
            return;
        }
        self.charge_many_at_checkpoint(n);
    }

    /// [`Self::charge_many`] when a limit may be reached.
    #[cold]
    fn charge_many_at_checkpoint(&self, n: u64) {
        if n == 0 || self.exhausted.get() {
            return;
        }
        let before = self.reads.get();
        let reads = before + n;
        self.reads.set(reads);
        let over_reads = self.limits.max_reads.is_some_and(|m| reads > m);
        let over_time = reads / DEADLINE_CHECK_INTERVAL != before / DEADLINE_CHECK_INTERVAL
            && self.limits.expired();
        if over_reads || over_time {
            self.exhaust();
        } else {
            self.checkpoint.set(self.next_checkpoint(reads));
        }
    }

    // ----- reading -------------------------------------------------------

    /// The byte at `head + delta`, or NUL past the end (upstream's END). Only read where
    /// the bytes before it are ASCII, so that it is the first byte of the character
    /// upstream reads there; markup is ASCII, so a byte of another character never
    /// compares equal to what is looked for.
    #[inline]
    fn read(&self, delta: usize) -> u8 {
        if !self.charge() {
            return 0;
        }
        self.text.get(self.head + delta).copied().unwrap_or(0)
    }

    /// The byte `delta` positions back, or NUL before the start (compared with ASCII only,
    /// as [`Self::read`]).
    #[inline]
    fn read_back(&self, delta: usize) -> u8 {
        if delta > self.head {
            return 0;
        }
        self.text.get(self.head - delta).copied().unwrap_or(0)
    }

    /// The page between two character boundaries.
    fn slice(&self, start: usize, end: usize) -> <Page<'a> as Source<'a>>::Str {
        self.page.slice(start, end)
    }

    /// The character starting at `at` (NUL past the end).
    fn char_at(&self, at: usize) -> char {
        self.page.char_at(at)
    }

    /// The character ending at `at` and where it starts, if there is one.
    fn char_before(&self, at: usize) -> Option<(char, usize)> {
        self.page.char_before(at)
    }

    /// Whether the character read at `head` as `this` is a space (Python's `isspace`):
    /// a byte from 0x80 up is the start of a character decoded here.
    fn is_space_here(&self, this: u8) -> bool {
        if this < 0x80 {
            return pyunicode::is_space(char::from(this));
        }
        pyunicode::is_space(self.char_at(self.head))
    }

    /// Moves past the character read at `at` after handling it: a handler that moved the
    /// head (to resume one byte before where it wants to be, as upstream's loops do) gets
    /// that byte; otherwise the head steps over the whole character.
    #[inline]
    fn advance_from(&mut self, at: usize) {
        self.head += if self.head == at {
            self.char_len(at)
        } else {
            1
        };
    }

    /// How many positions the character at `at` spans (1 past the end).
    #[inline]
    fn char_len(&self, at: usize) -> usize {
        <Page<'a> as Source<'a>>::unit_len(self.text.get(at).copied().unwrap_or(0))
    }

    /// The tag name of the current frame.
    fn tag_name(&self) -> <Page<'a> as Source<'a>>::Str {
        self.frames
            .last()
            .map_or_else(Default::default, |f| self.slice(f.tag_name.0, f.tag_name.1))
    }

    fn can_recurse(&self) -> bool {
        self.frames.len() < MAX_DEPTH
    }

    // ----- frames --------------------------------------------------------

    fn context(&self) -> u64 {
        self.frames.last().map_or(0, |f| f.context)
    }

    fn set_context(&mut self, context: u64) {
        if let Some(f) = self.frames.last_mut() {
            f.context = context;
        }
    }

    fn add_context(&mut self, bits: u64) {
        let c = self.context();
        self.set_context(c | bits);
    }

    fn toggle_context(&mut self, bits: u64) {
        let c = self.context();
        self.set_context(c ^ bits);
    }

    fn push(&mut self, context: u64) {
        let items = self.spare.pop().unwrap_or_default();
        self.frames.push(Frame {
            context,
            ident: (self.head, context),
            items,
            text: None,
            tag_name: (0, 0),
            open_end: 0,
        });
    }

    fn check_route(&self, context: u64) -> Route<()> {
        if self.bad_routes.contains(self.head, context) {
            return Err(BadRoute { context });
        }
        Ok(())
    }

    fn push_checked(&mut self, context: u64) -> Route<()> {
        self.check_route(context)?;
        self.push(context);
        Ok(())
    }

    fn flush_text(&mut self) {
        if let Some(frame) = self.frames.last_mut()
            && let Some((s, e)) = frame.text.take()
        {
            frame.items.push(Item::Text(s, e));
        }
    }

    fn pop(&mut self) -> Vec<Item> {
        self.flush_text();
        self.frames.pop().map(|f| f.items).unwrap_or_default()
    }

    /// Pops the current frame, discarding its items.
    fn discard(&mut self) {
        if let Some(frame) = self.frames.pop() {
            self.recycle(frame.items);
        }
    }

    /// Keeps an item vector that is no longer needed for a later frame.
    fn recycle(&mut self, mut items: Vec<Item>) {
        if self.spare.len() < MAX_DEPTH {
            items.clear();
            self.spare.push(items);
        }
    }

    fn pop_keeping_context(&mut self) -> Vec<Item> {
        let context = self.context();
        let items = self.pop();
        self.set_context(context);
        items
    }

    fn memoize_bad_route(&mut self) {
        if let Some(f) = self.frames.last() {
            self.bad_routes.insert(f.ident.0, f.ident.1);
        }
    }

    fn fail_route(&mut self) -> BadRoute {
        let context = self.context();
        self.memoize_bad_route();
        self.discard();
        BadRoute { context }
    }

    /// Discards frames left above `depth` by a failed attempt.
    fn unwind(&mut self, depth: usize) {
        while self.frames.len() > depth {
            self.discard();
        }
    }

    // ----- emitting ------------------------------------------------------

    fn emit_text(&mut self, start: usize, end: usize) {
        if start >= end {
            return;
        }
        let contiguous = self
            .frames
            .last()
            .and_then(|f| f.text)
            .is_some_and(|(_, e)| e == start);
        if !contiguous {
            self.flush_text();
        }
        if let Some(frame) = self.frames.last_mut() {
            frame.text = Some(match frame.text {
                Some((s, _)) if contiguous => (s, end),
                _ => (start, end),
            });
        }
    }

    /// Emits the character at the head as text.
    fn emit_char(&mut self) {
        let width = self.char_len(self.head);
        self.emit_text(self.head, self.head + width);
    }

    /// A non-text token: ends the pending text.
    fn emit_token(&mut self) {
        self.flush_text();
    }

    fn emit_node(&mut self, kind: NodeKind, start: usize, end: usize, level: u8) {
        self.flush_text();
        if let Some(frame) = self.frames.last_mut() {
            frame.items.push(Item::Node(RawNode {
                kind,
                start,
                end,
                level,
            }));
        }
    }

    fn emit_all(&mut self, items: Vec<Item>) {
        let mut rest = 0;
        if let Some(&Item::Text(s, e)) = items.first() {
            self.emit_text(s, e);
            rest = 1;
        }
        self.flush_text();
        if let Some(frame) = self.frames.last_mut() {
            frame
                .items
                .extend_from_slice(items.get(rest..).unwrap_or_default());
        }
        self.recycle(items);
    }

    /// Replaces everything in the current frame with one node (upstream
    /// inserts an opening token before the frame's tokens).
    fn wrap_frame(&mut self, kind: NodeKind, start: usize, end: usize) {
        self.flush_text();
        if let Some(frame) = self.frames.last_mut() {
            frame.items.clear();
            frame.items.push(Item::Node(RawNode {
                kind,
                start,
                end,
                level: 0,
            }));
        }
    }

    fn emit_text_then_stack(&mut self, start: usize, len: usize) {
        let items = self.pop();
        self.emit_text(start, start + len);
        // Upstream skips the merge (and its text flush) for an empty stack.
        if !items.is_empty() {
            self.emit_all(items);
        }
        self.head = self.head.saturating_sub(1);
    }

    // ----- the main loop -------------------------------------------------

    fn parse(&mut self, context: u64, push: bool) -> Route<Parsed> {
        if push {
            self.push_checked(context)?;
        }
        loop {
            // The top level stops where it was asked to (see `advance`), before any read:
            // all its state is in its frame, and the next call goes on from here.
            if self.head >= self.pause_at && self.frames.len() == 1 {
                return Ok(Parsed {
                    paused: true,
                    ..Parsed::default()
                });
            }
            let this = self.read(0);
            let ctx = self.context();
            if ctx & UNSAFE != 0 && !self.verify_safe(ctx, this) {
                if ctx & DOUBLE != 0 {
                    self.discard();
                }
                return Err(self.fail_route());
            }
            if !is_marker(this) {
                // Where plain characters change nothing but the pending text (always
                // outside unsafe contexts, and in most states of the unsafe ones once the
                // first has been checked), the run up to the next marker is taken in one
                // step, charged as the reads that one step per character would make.
                let start = self.head;
                // Outside unsafe contexts `verify_safe` did not run: the context is `ctx`.
                let inert = ctx & UNSAFE == 0 || plain_chars_are_inert(self.context());
                let end = if !self.page.stepwise() && inert {
                    let end = Source::next_marker(self.page, start + 1);
                    self.charge_many(Source::chars_in(self.page, start..end) as u64 - 1);
                    end
                } else {
                    start + self.char_len(start)
                };
                self.emit_text(start, end);
                self.head = end;
                continue;
            }
            if this == 0 {
                return self.handle_end(ctx);
            }
            let next = self.read(1);
            let last = self.read_back(1);
            let at_line_start = last == 0 || last == b'\n';
            if this == b'{' && next == b'{' {
                if self.can_recurse() {
                    self.parse_template_or_argument()?;
                } else {
                    self.emit_char();
                }
            } else if this == b'|' && ctx & TEMPLATE != 0 {
                self.handle_template_param()?;
            } else if this == b'=' && ctx & TEMPLATE_PARAM_KEY != 0 {
                if self.global & GL_HEADING == 0 && at_line_start && next == b'=' {
                    self.parse_heading();
                } else {
                    self.handle_template_param_value();
                }
            } else if this == b'}' && next == b'}' && ctx & TEMPLATE != 0 {
                return self.handle_template_end();
            } else if this == b'|' && ctx & ARGUMENT_NAME != 0 {
                self.toggle_context(ARGUMENT_NAME);
                self.add_context(ARGUMENT_DEFAULT);
                self.emit_token();
            } else if this == b'}' && next == b'}' && ctx & ARGUMENT != 0 {
                if self.read(2) == b'}' {
                    let items = self.pop();
                    self.head += 2;
                    return Ok(Parsed {
                        items,
                        ..Parsed::default()
                    });
                }
                self.emit_char();
            } else if this == b'[' && next == b'[' && self.can_recurse() {
                if ctx & NO_WIKILINKS == 0 {
                    self.parse_wikilink();
                } else {
                    self.emit_char();
                }
            } else if this == b'|' && ctx & WIKILINK_TITLE != 0 {
                self.toggle_context(WIKILINK_TITLE);
                self.add_context(WIKILINK_TEXT);
                self.emit_token();
            } else if this == b']' && next == b']' && ctx & WIKILINK != 0 {
                let items = self.pop();
                self.head += 1;
                return Ok(Parsed {
                    items,
                    ..Parsed::default()
                });
            } else if this == b'[' {
                self.parse_external_link(true);
            } else if this == b':' && !is_marker(last) {
                self.parse_external_link(false);
            } else if this == b']' && ctx & EXT_LINK_TITLE != 0 {
                return Ok(Parsed {
                    items: self.pop(),
                    ..Parsed::default()
                });
            } else if this == b'=' && self.global & GL_HEADING == 0 && ctx & TEMPLATE == 0 {
                if at_line_start {
                    self.parse_heading();
                } else {
                    self.emit_char();
                }
            } else if this == b'=' && ctx & HEADING != 0 {
                return self.handle_heading_end();
            } else if this == b'\n' && ctx & HEADING != 0 {
                return Err(self.fail_route());
            } else if this == b'&' {
                self.parse_entity();
            } else if this == b'<' && next == b'!' {
                if self.read(2) == b'-' && self.read(3) == b'-' {
                    self.parse_comment();
                } else {
                    self.emit_char();
                }
            } else if this == b'<' && next == b'/' && self.read(2) != b'\0' {
                if ctx & TAG_BODY != 0 {
                    self.emit_token();
                    self.push(TAG_CLOSE);
                    self.head += 1;
                } else {
                    self.handle_invalid_tag_start();
                }
            } else if this == b'<' && ctx & TAG_CLOSE == 0 {
                if self.can_recurse() {
                    self.parse_tag();
                } else {
                    self.emit_char();
                }
            } else if this == b'>' && ctx & TAG_CLOSE != 0 {
                return self.handle_tag_close_close();
            } else if this == b'\'' && next == b'\'' {
                if let Some(parsed) = self.parse_style() {
                    return Ok(parsed);
                }
            } else if at_line_start && matches!(this, b'#' | b'*' | b';' | b':') {
                self.handle_list();
            } else if at_line_start
                && this == b'-'
                && next == b'-'
                && self.read(2) == b'-'
                && self.read(3) == b'-'
            {
                self.handle_hr();
            } else if (this == b'\n' || this == b':') && ctx & DL_TERM != 0 {
                self.handle_dl_term();
                if this == b'\n' {
                    let c = self.context();
                    self.set_context(c & !TABLE_CELL_LINE_CONTEXTS);
                }
            } else if this == b'{' && next == b'|' && self.has_leading_whitespace() {
                if self.can_recurse() {
                    self.parse_table();
                } else {
                    self.emit_char();
                }
            } else if ctx & TABLE_OPEN != 0 {
                if let Some(parsed) = self.handle_table_marker(ctx, this, next)? {
                    return Ok(parsed);
                }
            } else {
                self.emit_char();
            }
            self.head += 1;
        }
    }

    fn handle_end(&mut self, context: u64) -> Route<Parsed> {
        if context & FAIL != 0 {
            if context & TAG_BODY != 0 {
                let single = !self.frames.is_empty() && in_list(&self.tag_name(), &SINGLE);
                if single {
                    let open_end = self.frames.last().map_or(0, |f| f.open_end);
                    return Ok(Parsed {
                        items: self.pop(),
                        level: 0,
                        implicit_open_end: Some(open_end),
                        paused: false,
                    });
                }
            } else {
                let mut context = context;
                if context & TABLE_CELL_OPEN != 0 {
                    self.discard();
                    context = self.context();
                }
                if context & DOUBLE != 0 {
                    self.discard();
                }
            }
            return Err(self.fail_route());
        }
        Ok(Parsed {
            items: self.pop(),
            ..Parsed::default()
        })
    }

    /// Whether `this` may appear here; may also arm the `FAIL_*` flags that
    /// decide the next character.
    fn verify_safe(&mut self, context: u64, this: u8) -> bool {
        if context & FAIL_NEXT != 0 {
            return false;
        }
        if context & WIKILINK_TITLE != 0 {
            match this {
                b']' | b'{' => self.add_context(FAIL_NEXT),
                b'\n' | b'[' | b'}' | b'>' => return false,
                b'<' => {
                    if self.read(1) == b'!' {
                        self.add_context(FAIL_NEXT);
                    } else {
                        return false;
                    }
                }
                _ => {}
            }
            return true;
        }
        if context & EXT_LINK_TITLE != 0 {
            return this != b'\n';
        }
        if context & TAG_CLOSE != 0 {
            return this != b'<';
        }
        if context & TEMPLATE_NAME != 0 {
            if this == b'{' {
                self.add_context(HAS_TEMPLATE | FAIL_NEXT);
                return true;
            }
            if this == b'}' || (this == b'<' && self.read(1) == b'!') {
                self.add_context(FAIL_NEXT);
                return true;
            }
            if matches!(this, b'[' | b']' | b'<' | b'>') {
                return false;
            }
            if this == b'|' {
                return true;
            }
            let space = self.is_space_here(this);
            if context & HAS_TEXT != 0 {
                if context & FAIL_ON_TEXT != 0 {
                    if !space {
                        return false;
                    }
                } else if this == b'\n' {
                    self.add_context(FAIL_ON_TEXT);
                }
            } else if !space {
                self.add_context(HAS_TEXT);
            }
            return true;
        }
        if context & FAIL_ON_EQUALS != 0 {
            if this == b'=' {
                return false;
            }
        } else if context & FAIL_ON_LBRACE != 0 {
            if this == b'{' || (self.read_back(1) == b'{' && self.read_back(2) == b'{') {
                if context & TEMPLATE != 0 {
                    self.add_context(FAIL_ON_EQUALS);
                } else {
                    self.add_context(FAIL_NEXT);
                }
                return true;
            }
            self.toggle_context(FAIL_ON_LBRACE);
        } else if context & FAIL_ON_RBRACE != 0 {
            if this == b'}' {
                self.add_context(FAIL_NEXT);
                return true;
            }
            self.toggle_context(FAIL_ON_RBRACE);
        } else if this == b'{' {
            self.add_context(FAIL_ON_LBRACE);
        } else if this == b'}' {
            self.add_context(FAIL_ON_RBRACE);
        }
        true
    }

    /// Whether only spaces stand between the start of the line and the head.
    fn has_leading_whitespace(&self) -> bool {
        let mut at = self.head;
        loop {
            let Some((c, start)) = self.char_before(at) else {
                return true;
            };
            if c == '\n' {
                return true;
            }
            if !pyunicode::is_space(c) {
                return false;
            }
            at = start;
        }
    }
}

//! A tokenizer that splits wikitext exactly where mwparserfromhell 0.7.2 (its C
//! tokenizer) does, keeping only what the link engine needs: the spans of the
//! nodes and of the text between them.
//!
//! mwparserfromhell is a backtracking recursive-descent tokenizer.  Every
//! construct is tried in a new *frame* with a context; an impossible character
//! fails the route, the frame is discarded, the `(position, context)` pair is
//! remembered as bad, and the opening markup becomes plain text.  Whether a
//! `{{`, `[[`, `<ref>` or `''` becomes a node therefore depends on the whole
//! failure/retry protocol, which is reproduced here step by step.  Nested nodes
//! are discarded once their parent is known: callers only see the top level.

use std::collections::HashSet;

use super::contexts::*;
use super::entities;
use super::partition::NodeKind;
use super::tag_data::{self as td, TagData};
use crate::pyunicode;

/// Maximum number of nested frames, as upstream (`MAX_DEPTH`).
const MAX_DEPTH: usize = 100;
/// Longest run of `{` considered for templates and arguments.
const MAX_BRACES: usize = 255;
/// Longest entity name or number (`MAX_ENTITY_SIZE`).
const MAX_ENTITY_SIZE: usize = 8;
const URI_SCHEME_CHARS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-";
const URI_SCHEMES: [&str; 27] = [
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
const URI_SCHEMES_NO_SLASHES: [&str; 11] = [
    "bitcoin", "geo", "magnet", "mailto", "news", "sip", "sips", "sms", "tel", "urn", "xmpp",
];
/// Tags whose body is not parsed (only entities are recognised inside).
const PARSER_BLACKLIST: [&str; 17] = [
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
const SINGLE_ONLY: [&str; 6] = ["br", "wbr", "hr", "meta", "link", "img"];
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
    /// Tag name for tag frames (`stack[1]` upstream).
    tag_name: String,
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
}

pub(crate) struct Tokenizer<'a> {
    text: &'a [char],
    head: usize,
    frames: Vec<Frame>,
    global: u64,
    bad_routes: HashSet<(usize, u64)>,
    /// Last search for `-->`: (searched from, first match at or after it).
    comment_close: Option<(usize, Option<usize>)>,
}

fn is_marker(c: char) -> bool {
    matches!(
        c,
        '{' | '}'
            | '['
            | ']'
            | '<'
            | '>'
            | '|'
            | '='
            | '&'
            | '\''
            | '#'
            | '*'
            | ';'
            | ':'
            | '/'
            | '-'
            | '!'
            | '\n'
            | '\0'
    )
}

/// Upstream compares names by lowercasing them and requiring ASCII.
fn in_list(name: &str, list: &[&str]) -> bool {
    let lowered = pyunicode::lower(name);
    lowered.is_ascii() && list.contains(&lowered.as_str())
}

fn is_scheme(scheme: &str, slashes: bool) -> bool {
    if slashes {
        in_list(scheme, &URI_SCHEMES)
    } else {
        in_list(scheme, &URI_SCHEMES_NO_SLASHES)
    }
}

/// `rstrip().lower()` used to match closing tags with opening ones.
fn tag_key(name: &str) -> String {
    pyunicode::lower(name.trim_end_matches(pyunicode::is_space))
}

impl<'a> Tokenizer<'a> {
    pub(crate) fn new(text: &'a [char]) -> Self {
        Self {
            text,
            head: 0,
            frames: Vec::new(),
            global: 0,
            bad_routes: HashSet::new(),
            comment_close: None,
        }
    }

    /// Tokenizes the whole text into top-level items.
    pub(crate) fn run(mut self) -> Vec<Item> {
        match self.parse(0, true) {
            Ok(parsed) => parsed.items,
            // The top-level context cannot fail; keep a lossless fallback.
            Err(_) => vec![Item::Text(0, self.text.len())],
        }
    }

    // ----- reading -------------------------------------------------------

    /// The character at `head + delta`, or NUL past the end (upstream's END).
    fn read(&self, delta: usize) -> char {
        self.text.get(self.head + delta).copied().unwrap_or('\0')
    }

    /// The character `delta` positions back, or NUL before the start.
    fn read_back(&self, delta: usize) -> char {
        if delta > self.head {
            return '\0';
        }
        self.text.get(self.head - delta).copied().unwrap_or('\0')
    }

    fn slice(&self, start: usize, end: usize) -> String {
        self.text
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .collect()
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
        self.frames.push(Frame {
            context,
            ident: (self.head, context),
            items: Vec::new(),
            text: None,
            tag_name: String::new(),
            open_end: 0,
        });
    }

    fn check_route(&self, context: u64) -> Route<()> {
        if self.bad_routes.contains(&(self.head, context)) {
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

    fn pop_keeping_context(&mut self) -> Vec<Item> {
        let context = self.context();
        let items = self.pop();
        self.set_context(context);
        items
    }

    fn memoize_bad_route(&mut self) {
        if let Some(f) = self.frames.last() {
            self.bad_routes.insert(f.ident);
        }
    }

    fn fail_route(&mut self) -> BadRoute {
        let context = self.context();
        self.memoize_bad_route();
        self.pop();
        BadRoute { context }
    }

    /// Discards frames left above `depth` by a failed attempt.
    fn unwind(&mut self, depth: usize) {
        self.frames.truncate(depth);
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

    fn emit_char(&mut self) {
        self.emit_text(self.head, self.head + 1);
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
        let mut iter = items.into_iter().peekable();
        if let Some(&Item::Text(s, e)) = iter.peek() {
            self.emit_text(s, e);
            iter.next();
        }
        self.flush_text();
        if let Some(frame) = self.frames.last_mut() {
            frame.items.extend(iter);
        }
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
            let this = self.read(0);
            let ctx = self.context();
            if ctx & UNSAFE != 0 && !self.verify_safe(ctx, this) {
                if ctx & DOUBLE != 0 {
                    self.pop();
                }
                return Err(self.fail_route());
            }
            if !is_marker(this) {
                self.emit_char();
                self.head += 1;
                continue;
            }
            if this == '\0' {
                return self.handle_end(ctx);
            }
            let next = self.read(1);
            let last = self.read_back(1);
            let at_line_start = last == '\0' || last == '\n';
            if this == '{' && next == '{' {
                if self.can_recurse() {
                    self.parse_template_or_argument()?;
                } else {
                    self.emit_char();
                }
            } else if this == '|' && ctx & TEMPLATE != 0 {
                self.handle_template_param()?;
            } else if this == '=' && ctx & TEMPLATE_PARAM_KEY != 0 {
                if self.global & GL_HEADING == 0 && at_line_start && next == '=' {
                    self.parse_heading();
                } else {
                    self.handle_template_param_value();
                }
            } else if this == '}' && next == '}' && ctx & TEMPLATE != 0 {
                return self.handle_template_end();
            } else if this == '|' && ctx & ARGUMENT_NAME != 0 {
                self.toggle_context(ARGUMENT_NAME);
                self.add_context(ARGUMENT_DEFAULT);
                self.emit_token();
            } else if this == '}' && next == '}' && ctx & ARGUMENT != 0 {
                if self.read(2) == '}' {
                    let items = self.pop();
                    self.head += 2;
                    return Ok(Parsed {
                        items,
                        ..Parsed::default()
                    });
                }
                self.emit_char();
            } else if this == '[' && next == '[' && self.can_recurse() {
                if ctx & NO_WIKILINKS == 0 {
                    self.parse_wikilink();
                } else {
                    self.emit_char();
                }
            } else if this == '|' && ctx & WIKILINK_TITLE != 0 {
                self.toggle_context(WIKILINK_TITLE);
                self.add_context(WIKILINK_TEXT);
                self.emit_token();
            } else if this == ']' && next == ']' && ctx & WIKILINK != 0 {
                let items = self.pop();
                self.head += 1;
                return Ok(Parsed {
                    items,
                    ..Parsed::default()
                });
            } else if this == '[' {
                self.parse_external_link(true);
            } else if this == ':' && !is_marker(last) {
                self.parse_external_link(false);
            } else if this == ']' && ctx & EXT_LINK_TITLE != 0 {
                return Ok(Parsed {
                    items: self.pop(),
                    ..Parsed::default()
                });
            } else if this == '=' && self.global & GL_HEADING == 0 && ctx & TEMPLATE == 0 {
                if at_line_start {
                    self.parse_heading();
                } else {
                    self.emit_char();
                }
            } else if this == '=' && ctx & HEADING != 0 {
                return self.handle_heading_end();
            } else if this == '\n' && ctx & HEADING != 0 {
                return Err(self.fail_route());
            } else if this == '&' {
                self.parse_entity();
            } else if this == '<' && next == '!' {
                if self.read(2) == '-' && self.read(3) == '-' {
                    self.parse_comment();
                } else {
                    self.emit_char();
                }
            } else if this == '<' && next == '/' && self.read(2) != '\0' {
                if ctx & TAG_BODY != 0 {
                    self.emit_token();
                    self.push(TAG_CLOSE);
                    self.head += 1;
                } else {
                    self.handle_invalid_tag_start();
                }
            } else if this == '<' && ctx & TAG_CLOSE == 0 {
                if self.can_recurse() {
                    self.parse_tag();
                } else {
                    self.emit_char();
                }
            } else if this == '>' && ctx & TAG_CLOSE != 0 {
                return self.handle_tag_close_close();
            } else if this == '\'' && next == '\'' {
                if let Some(parsed) = self.parse_style() {
                    return Ok(parsed);
                }
            } else if at_line_start && matches!(this, '#' | '*' | ';' | ':') {
                self.handle_list();
            } else if at_line_start
                && this == '-'
                && next == '-'
                && self.read(2) == '-'
                && self.read(3) == '-'
            {
                self.handle_hr();
            } else if (this == '\n' || this == ':') && ctx & DL_TERM != 0 {
                self.handle_dl_term();
                if this == '\n' {
                    let c = self.context();
                    self.set_context(c & !TABLE_CELL_LINE_CONTEXTS);
                }
            } else if this == '{' && next == '|' && self.has_leading_whitespace() {
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
                let single = self
                    .frames
                    .last()
                    .is_some_and(|f| in_list(&f.tag_name, &SINGLE));
                if single {
                    let open_end = self.frames.last().map_or(0, |f| f.open_end);
                    return Ok(Parsed {
                        items: self.pop(),
                        level: 0,
                        implicit_open_end: Some(open_end),
                    });
                }
            } else {
                let mut context = context;
                if context & TABLE_CELL_OPEN != 0 {
                    self.pop();
                    context = self.context();
                }
                if context & DOUBLE != 0 {
                    self.pop();
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
    fn verify_safe(&mut self, context: u64, this: char) -> bool {
        if context & FAIL_NEXT != 0 {
            return false;
        }
        if context & WIKILINK_TITLE != 0 {
            match this {
                ']' | '{' => self.add_context(FAIL_NEXT),
                '\n' | '[' | '}' | '>' => return false,
                '<' => {
                    if self.read(1) == '!' {
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
            return this != '\n';
        }
        if context & TAG_CLOSE != 0 {
            return this != '<';
        }
        if context & TEMPLATE_NAME != 0 {
            if this == '{' {
                self.add_context(HAS_TEMPLATE | FAIL_NEXT);
                return true;
            }
            if this == '}' || (this == '<' && self.read(1) == '!') {
                self.add_context(FAIL_NEXT);
                return true;
            }
            if matches!(this, '[' | ']' | '<' | '>') {
                return false;
            }
            if this == '|' {
                return true;
            }
            let space = pyunicode::is_space(this);
            if context & HAS_TEXT != 0 {
                if context & FAIL_ON_TEXT != 0 {
                    if !space {
                        return false;
                    }
                } else if this == '\n' {
                    self.add_context(FAIL_ON_TEXT);
                }
            } else if !space {
                self.add_context(HAS_TEXT);
            }
            return true;
        }
        if context & FAIL_ON_EQUALS != 0 {
            if this == '=' {
                return false;
            }
        } else if context & FAIL_ON_LBRACE != 0 {
            if this == '{' || (self.read_back(1) == '{' && self.read_back(2) == '{') {
                if context & TEMPLATE != 0 {
                    self.add_context(FAIL_ON_EQUALS);
                } else {
                    self.add_context(FAIL_NEXT);
                }
                return true;
            }
            self.toggle_context(FAIL_ON_LBRACE);
        } else if context & FAIL_ON_RBRACE != 0 {
            if this == '}' {
                self.add_context(FAIL_NEXT);
                return true;
            }
            self.toggle_context(FAIL_ON_RBRACE);
        } else if this == '{' {
            self.add_context(FAIL_ON_LBRACE);
        } else if this == '}' {
            self.add_context(FAIL_ON_RBRACE);
        }
        true
    }

    fn has_leading_whitespace(&self) -> bool {
        let mut offset = 1;
        loop {
            let c = self.read_back(offset);
            if c == '\0' || c == '\n' {
                return true;
            }
            if !pyunicode::is_space(c) {
                return false;
            }
            offset += 1;
        }
    }

    // ----- templates and arguments ---------------------------------------

    fn parse_template_or_argument(&mut self) -> Route<()> {
        let start = self.head;
        self.head += 2;
        let mut braces = 2;
        while self.read(0) == '{' && braces < MAX_BRACES {
            self.head += 1;
            braces += 1;
        }
        let mut has_content = false;
        self.push(0);
        // Each success consumes the innermost braces and wraps what came
        // before; leftover braces are the leftmost ones and become text.
        while braces > 0 {
            if braces == 1 {
                self.emit_text_then_stack(start, 1);
                return Ok(());
            }
            if braces == 2 {
                match self.parse_template(has_content) {
                    Ok(end) => self.wrap_frame(NodeKind::Template, start, end),
                    Err(_) => {
                        self.emit_text_then_stack(start, 2);
                        return Ok(());
                    }
                }
                break;
            }
            match self.parse_argument() {
                Ok(end) => {
                    braces -= 3;
                    self.wrap_frame(NodeKind::Argument, start + braces, end);
                }
                Err(_) => match self.parse_template(has_content) {
                    Ok(end) => {
                        braces -= 2;
                        self.wrap_frame(NodeKind::Template, start + braces, end);
                    }
                    Err(_) => {
                        self.emit_text_then_stack(start, braces);
                        return Ok(());
                    }
                },
            }
            if braces > 0 {
                has_content = true;
                self.head += 1;
            }
        }
        let items = self.pop();
        self.emit_all(items);
        if self.context() & FAIL_NEXT != 0 {
            self.toggle_context(FAIL_NEXT);
        }
        Ok(())
    }

    /// Parses a template body; returns the end position on success.
    fn parse_template(&mut self, has_content: bool) -> Route<usize> {
        let reset = self.head;
        let depth = self.frames.len();
        let context = TEMPLATE_NAME | if has_content { HAS_TEMPLATE } else { 0 };
        match self.parse(context, true) {
            Ok(_) => Ok(self.head + 1),
            Err(e) => {
                self.unwind(depth);
                self.head = reset;
                Err(e)
            }
        }
    }

    fn parse_argument(&mut self) -> Route<usize> {
        let reset = self.head;
        let depth = self.frames.len();
        match self.parse(ARGUMENT_NAME, true) {
            Ok(_) => Ok(self.head + 1),
            Err(e) => {
                self.unwind(depth);
                self.head = reset;
                Err(e)
            }
        }
    }

    fn handle_template_param(&mut self) -> Route<()> {
        let ctx = self.context();
        if ctx & TEMPLATE_NAME != 0 {
            if ctx & (HAS_TEXT | HAS_TEMPLATE) == 0 {
                return Err(self.fail_route());
            }
            self.toggle_context(TEMPLATE_NAME);
        } else if ctx & TEMPLATE_PARAM_VALUE != 0 {
            self.toggle_context(TEMPLATE_PARAM_VALUE);
        }
        if self.context() & TEMPLATE_PARAM_KEY != 0 {
            let items = self.pop();
            self.emit_all(items);
        } else {
            self.add_context(TEMPLATE_PARAM_KEY);
        }
        self.emit_token();
        let ctx = self.context();
        self.push(ctx);
        Ok(())
    }

    fn handle_template_param_value(&mut self) {
        let items = self.pop();
        self.emit_all(items);
        self.toggle_context(TEMPLATE_PARAM_KEY);
        self.add_context(TEMPLATE_PARAM_VALUE);
        self.emit_token();
    }

    fn handle_template_end(&mut self) -> Route<Parsed> {
        let ctx = self.context();
        if ctx & TEMPLATE_NAME != 0 {
            if ctx & (HAS_TEXT | HAS_TEMPLATE) == 0 {
                return Err(self.fail_route());
            }
        } else if ctx & TEMPLATE_PARAM_KEY != 0 {
            let items = self.pop();
            self.emit_all(items);
        }
        self.head += 1;
        Ok(Parsed {
            items: self.pop(),
            ..Parsed::default()
        })
    }

    // ----- links ---------------------------------------------------------

    fn parse_wikilink(&mut self) {
        let start = self.head;
        let reset = self.head + 1;
        self.head += 2;
        let depth = self.frames.len();
        // `[[http://x]]` is an external link in brackets preceded by `[`.
        match self.really_parse_external_link(true, None) {
            Ok(_) => {
                if self.context() & EXT_LINK_TITLE != 0 {
                    self.head = reset;
                    self.emit_text(start, start + 2);
                    return;
                }
                self.emit_text(start, start + 1);
                self.emit_node(NodeKind::ExternalLink, start + 1, self.head + 1, 0);
            }
            Err(_) => {
                self.unwind(depth);
                self.head = reset + 1;
                match self.parse(WIKILINK_TITLE, true) {
                    Ok(_) => self.emit_node(NodeKind::Wikilink, start, self.head + 1, 0),
                    Err(_) => {
                        self.unwind(depth);
                        self.head = reset;
                        self.emit_text(start, start + 2);
                    }
                }
            }
        }
    }

    fn parse_bracketed_uri_scheme(&mut self) -> Route<()> {
        self.push_checked(EXT_LINK_URI)?;
        if self.read(0) == '/' && self.read(1) == '/' {
            self.emit_text(self.head, self.head + 2);
            self.head += 2;
            return Ok(());
        }
        let scheme_start = self.head;
        while URI_SCHEME_CHARS.contains(self.read(0)) && self.read(0) != '\0' {
            self.emit_char();
            self.head += 1;
        }
        let scheme = self.slice(scheme_start, self.head);
        if self.read(0) != ':' {
            return Err(self.fail_route());
        }
        self.emit_char();
        self.head += 1;
        let slashes = self.read(0) == '/' && self.read(1) == '/';
        if slashes {
            self.emit_text(self.head, self.head + 2);
            self.head += 2;
        }
        if !is_scheme(&scheme, slashes) {
            return Err(self.fail_route());
        }
        Ok(())
    }

    /// Reads the scheme backwards from the pending text before `:`.
    fn parse_free_uri_scheme(&mut self) -> Route<usize> {
        let (text_start, text_end) = self
            .frames
            .last()
            .and_then(|f| f.text)
            .unwrap_or((self.head, self.head));
        let mut scheme_start = text_end;
        while scheme_start > text_start {
            let c = self.text.get(scheme_start - 1).copied().unwrap_or('\0');
            if !(pyunicode::is_word(c)) {
                break;
            }
            if !URI_SCHEME_CHARS.contains(c) {
                return Err(BadRoute { context: 0 });
            }
            scheme_start -= 1;
        }
        let scheme = self.slice(scheme_start, text_end);
        let slashes = self.read(0) == '/' && self.read(1) == '/';
        if !is_scheme(&scheme, slashes) {
            return Err(BadRoute { context: 0 });
        }
        let context = self.context() | EXT_LINK_URI;
        self.push_checked(context)?;
        self.emit_text(scheme_start, text_end);
        if slashes {
            self.head += 2;
        }
        Ok(text_end - scheme_start)
    }

    /// Parses the rest of an external link.  For free links, `tail` receives
    /// the trailing punctuation kept out of the link; returns the scheme
    /// length for free links.
    fn really_parse_external_link(
        &mut self,
        brackets: bool,
        mut tail: Option<&mut FreeTail>,
    ) -> Route<usize> {
        let scheme_len = if brackets {
            self.parse_bracketed_uri_scheme()?;
            0
        } else {
            self.parse_free_uri_scheme()?
        };
        let this = self.read(0);
        if matches!(this, '\0' | '\n' | ' ' | ']') || (!brackets && this == '[') {
            return Err(self.fail_route());
        }
        let mut parens = false;
        loop {
            let this = self.read(0);
            let next = self.read(1);
            if this == '&' {
                self.push_tail(&mut tail);
                self.parse_entity();
            } else if this == '<' && next == '!' && self.read(2) == '-' && self.read(3) == '-' {
                self.push_tail(&mut tail);
                self.parse_comment();
            } else if this == '{' && next == '{' && self.can_recurse() {
                self.push_tail(&mut tail);
                self.parse_template_or_argument()?;
            } else if brackets {
                if this == '\0' || this == '\n' {
                    return Err(self.fail_route());
                }
                if this == ']' {
                    self.pop();
                    return Ok(scheme_len);
                }
                if self.is_uri_end(this, next) {
                    self.emit_token();
                    if this == ' ' {
                        self.head += 1;
                    }
                    self.toggle_context(EXT_LINK_URI);
                    self.add_context(EXT_LINK_TITLE);
                    self.parse(0, false)?;
                    return Ok(scheme_len);
                }
                self.emit_char();
            } else {
                if self.is_uri_end(this, next) {
                    if this == ' ' {
                        if let Some(t) = tail.as_deref_mut() {
                            t.space = true;
                        }
                    } else {
                        self.head = self.head.saturating_sub(1);
                    }
                    self.pop();
                    return Ok(scheme_len);
                }
                self.handle_free_link_text(&mut parens, &mut tail, this);
            }
            self.head += 1;
        }
    }

    fn push_tail(&mut self, tail: &mut Option<&mut FreeTail>) {
        if let Some(t) = tail.as_deref_mut()
            && t.len > 0
        {
            let len = std::mem::take(&mut t.len);
            self.emit_text(self.head - len, self.head);
        }
    }

    fn handle_free_link_text(
        &mut self,
        parens: &mut bool,
        tail: &mut Option<&mut FreeTail>,
        this: char,
    ) {
        if this == '(' && !*parens {
            *parens = true;
            self.push_tail(tail);
        } else if matches!(this, ',' | ';' | '\\' | '.' | ':' | '!' | '?')
            || (!*parens && this == ')')
        {
            if let Some(t) = tail.as_deref_mut() {
                t.len += 1;
            }
            return;
        } else {
            self.push_tail(tail);
        }
        self.emit_char();
    }

    fn is_uri_end(&self, this: char, next: char) -> bool {
        let ctx = self.context();
        matches!(this, '\0' | '\n' | '[' | ']' | '<' | '>' | '"' | ' ')
            || (this == '\'' && next == '\'')
            || (this == '|' && ctx & TEMPLATE != 0)
            || (this == '=' && ctx & (TEMPLATE_PARAM_KEY | HEADING) != 0)
            || (this == '}'
                && next == '}'
                && (ctx & TEMPLATE != 0 || (self.read(2) == '}' && ctx & ARGUMENT != 0)))
    }

    fn parse_external_link(&mut self, brackets: bool) {
        if self.context() & NO_EXT_LINKS != 0 || !self.can_recurse() {
            self.not_a_link(brackets);
            return;
        }
        let reset = self.head;
        let depth = self.frames.len();
        self.head += 1;
        let mut tail = FreeTail::default();
        match self.really_parse_external_link(brackets, Some(&mut tail)) {
            Err(_) => {
                self.unwind(depth);
                self.head = reset;
                self.not_a_link(brackets);
            }
            Ok(_) if brackets => {
                self.emit_node(NodeKind::ExternalLink, reset, self.head + 1, 0);
            }
            Ok(scheme_len) => {
                // The scheme was already emitted as text: take it back.
                if let Some(frame) = self.frames.last_mut()
                    && let Some((s, e)) = frame.text
                {
                    let e2 = e.saturating_sub(scheme_len);
                    frame.text = (e2 > s).then_some((s, e2));
                }
                let resume = self.head + 1;
                let extra_end = resume;
                let link_end = if tail.space {
                    self.head - tail.len
                } else {
                    resume - tail.len
                };
                self.emit_node(NodeKind::ExternalLink, reset - scheme_len, link_end, 0);
                self.emit_text(link_end, extra_end);
            }
        }
    }

    fn not_a_link(&mut self, brackets: bool) {
        if !brackets && self.context() & DL_TERM != 0 {
            self.handle_dl_term();
        } else {
            self.emit_char();
        }
    }

    // ----- headings, entities, comments ----------------------------------

    fn parse_heading(&mut self) {
        self.global |= GL_HEADING;
        let reset = self.head;
        let depth = self.frames.len();
        self.head += 1;
        let mut best = 1;
        while self.read(0) == '=' {
            best += 1;
            self.head += 1;
        }
        let context = HEADING_LEVEL_1 << (best.min(6) - 1);
        match self.parse(context, true) {
            Ok(parsed) => {
                self.emit_node(NodeKind::Heading, reset, self.head + 1, parsed.level);
            }
            Err(_) => {
                self.unwind(depth);
                self.head = reset + best - 1;
                self.emit_text(reset, reset + best);
            }
        }
        self.global ^= GL_HEADING;
    }

    fn handle_heading_end(&mut self) -> Route<Parsed> {
        let reset = self.head;
        let depth = self.frames.len();
        self.head += 1;
        let mut best: u8 = 1;
        while self.read(0) == '=' {
            best = best.saturating_add(1);
            self.head += 1;
        }
        let current = heading_level(self.context());
        let mut level = if current > best {
            best.min(6)
        } else {
            current.min(6)
        };
        // Another closing run later on the line wins.
        match self.parse(self.context(), true) {
            Ok(after) => level = after.level,
            Err(_) => {
                self.unwind(depth);
                self.head = reset + usize::from(best) - 1;
            }
        }
        Ok(Parsed {
            items: self.pop(),
            level,
            implicit_open_end: None,
        })
    }

    fn parse_entity(&mut self) {
        let reset = self.head;
        let depth = self.frames.len();
        let ok = self.push_checked(HTML_ENTITY).is_ok() && self.really_parse_entity().is_ok();
        if ok {
            self.pop();
            self.emit_node(NodeKind::HtmlEntity, reset, self.head + 1, 0);
        } else {
            self.unwind(depth);
            self.head = reset;
            self.emit_char();
        }
    }

    fn really_parse_entity(&mut self) -> Route<()> {
        self.head += 1;
        let mut this = self.read(0);
        if this == '\0' {
            return Err(self.fail_route());
        }
        let (mut numeric, mut hexadecimal) = (false, false);
        if this == '#' {
            numeric = true;
            self.head += 1;
            this = self.read(0);
            if this == '\0' {
                return Err(self.fail_route());
            }
            if this == 'x' || this == 'X' {
                hexadecimal = true;
                self.head += 1;
            }
        }
        let mut body = String::new();
        loop {
            let c = self.read(0);
            if c == ';' {
                if body.is_empty() {
                    return Err(self.fail_route());
                }
                break;
            }
            if body.is_empty() && numeric && c == '0' {
                self.head += 1;
                continue;
            }
            let valid = if hexadecimal {
                c.is_ascii_hexdigit()
            } else if numeric {
                c.is_ascii_digit()
            } else {
                c.is_ascii_alphanumeric()
            };
            if body.len() >= MAX_ENTITY_SIZE || is_marker(c) || !valid {
                return Err(self.fail_route());
            }
            body.push(c);
            self.head += 1;
        }
        let known = if numeric {
            let value = u32::from_str_radix(&body, if hexadecimal { 16 } else { 10 }).unwrap_or(0);
            (1..=0x10FFFF).contains(&value)
        } else {
            entities::NAMED.binary_search(&body.as_str()).is_ok()
        };
        if known {
            Ok(())
        } else {
            Err(self.fail_route())
        }
    }

    fn parse_comment(&mut self) {
        let start = self.head;
        self.head += 4;
        match self.find_comment_close(self.head) {
            None => {
                self.head = start + 3;
                self.emit_text(start, start + 4);
            }
            Some(close) => {
                self.emit_node(NodeKind::Comment, start, close + 3, 0);
                self.head = close + 2;
                if self.context() & FAIL_NEXT != 0 {
                    self.toggle_context(FAIL_NEXT);
                }
            }
        }
    }

    /// First `-->` at or after `from`.  Cached, so that a page full of
    /// unclosed comments is scanned once rather than once per comment.
    fn find_comment_close(&mut self, from: usize) -> Option<usize> {
        if let Some((searched, hit)) = self.comment_close
            && searched <= from
            && hit.is_none_or(|h| h >= from)
        {
            return hit;
        }
        // A NUL reads as the end of the text and so ends the search.
        let rest = self.text.get(from..).unwrap_or_default();
        let rest = rest
            .get(..rest.iter().position(|&c| c == '\0').unwrap_or(rest.len()))
            .unwrap_or_default();
        let hit = rest
            .windows(3)
            .position(|w| w == ['-', '-', '>'])
            .map(|p| p + from);
        self.comment_close = Some((from, hit));
        hit
    }

    // ----- HTML and extension tags ---------------------------------------

    fn parse_tag(&mut self) {
        let start = self.head;
        let depth = self.frames.len();
        self.head += 1;
        match self.really_parse_tag() {
            Ok(parsed) => self.emit_tag(start, parsed),
            Err(_) => {
                self.unwind(depth);
                self.head = start;
                self.emit_char();
            }
        }
    }

    fn emit_tag(&mut self, start: usize, parsed: Parsed) {
        match parsed.implicit_open_end {
            Some(open_end) => {
                self.emit_node(NodeKind::Tag, start, open_end, 0);
                self.emit_all(parsed.items);
            }
            None => self.emit_node(NodeKind::Tag, start, self.head + 1, 0),
        }
    }

    /// `</br>` and friends outside a tag body: a self-closing tag.
    fn handle_invalid_tag_start(&mut self) {
        let start = self.head;
        let depth = self.frames.len();
        self.head += 2;
        let mut pos = 0;
        loop {
            let c = self.read(pos);
            if pyunicode::is_space(c) || is_marker(c) {
                break;
            }
            pos += 1;
        }
        let name = self.slice(self.head, self.head + pos);
        let result = if in_list(&name, &SINGLE_ONLY) {
            self.really_parse_tag()
        } else {
            Err(BadRoute { context: 0 })
        };
        match result {
            Ok(parsed) => self.emit_tag(start, parsed),
            Err(_) => {
                self.unwind(depth);
                self.head = start + 1;
                self.emit_text(start, start + 2);
            }
        }
    }

    fn really_parse_tag(&mut self) -> Route<Parsed> {
        let mut data = TagData::new(td::NAME);
        self.push_checked(TAG_OPEN)?;
        self.emit_token();
        let name_start = self.head;
        loop {
            let this = self.read(0);
            let next = self.read(1);
            let can_exit =
                data.context & (td::QUOTED | td::NAME) == 0 || data.context & td::NOTE_SPACE != 0;
            if data.context & td::NAME != 0
                && (pyunicode::is_space(this) || matches!(this, '>' | '/' | '\0'))
            {
                // These characters end the name (or the tag).
                let name = self.slice(name_start, self.head);
                if let Some(f) = self.frames.last_mut() {
                    f.tag_name = name;
                }
            }
            if this == '\0' {
                if self.context() & TAG_ATTR != 0 {
                    if data.context & td::QUOTED != 0 {
                        // Unclosed attribute quote: retry it as plain text.
                        data.context = td::ATTR_VALUE;
                        self.memoize_bad_route();
                        self.pop();
                        self.head = data.reset;
                        continue;
                    }
                    self.pop();
                }
                return Err(self.fail_route());
            } else if this == '>' && can_exit {
                self.handle_tag_close_open(&data);
                self.set_context(TAG_BODY);
                if let Some(f) = self.frames.last_mut() {
                    f.open_end = self.head;
                    // The open tag's own tokens are not body: an implicitly
                    // closed tag hands only its body to the parent.
                    f.items.clear();
                    f.text = None;
                }
                let name = self
                    .frames
                    .last()
                    .map(|f| f.tag_name.clone())
                    .unwrap_or_default();
                if in_list(&name, &SINGLE_ONLY) {
                    self.head -= 1;
                    return Ok(Parsed {
                        items: self.pop(),
                        ..Parsed::default()
                    });
                }
                if in_list(&name, &PARSER_BLACKLIST) {
                    return self.handle_blacklisted_tag(&name);
                }
                return self.parse(0, false);
            } else if this == '/' && next == '>' && can_exit {
                self.handle_tag_close_open(&data);
                return Ok(Parsed {
                    items: self.pop(),
                    ..Parsed::default()
                });
            } else {
                self.handle_tag_data(&mut data, this)?;
            }
            self.head += 1;
        }
    }

    fn handle_tag_close_open(&mut self, data: &TagData) {
        if data.context & (td::ATTR_NAME | td::ATTR_VALUE) != 0 {
            self.push_tag_buffer(data);
        }
        self.emit_token();
        self.head += 1;
    }

    /// Closes the pending attribute: pops its quote frame (if quoted) and
    /// its attribute frame into the tag frame.
    fn push_tag_buffer(&mut self, data: &TagData) {
        if data.context & td::QUOTED != 0 {
            let items = self.pop();
            self.emit_all(items);
        }
        let items = self.pop();
        self.emit_all(items);
    }

    fn handle_tag_space(&mut self, data: &mut TagData) {
        let ctx = data.context;
        let end_of_value = ctx & td::ATTR_VALUE != 0 && ctx & (td::QUOTED | td::NOTE_QUOTE) == 0;
        if end_of_value || (ctx & td::QUOTED != 0 && ctx & td::NOTE_SPACE != 0) {
            self.push_tag_buffer(data);
            data.context = td::ATTR_READY;
        } else if ctx & td::NOTE_SPACE != 0 {
            data.context = td::ATTR_READY;
        } else if ctx & td::ATTR_NAME != 0 {
            data.context |= td::NOTE_EQUALS;
        }
        if ctx & td::QUOTED != 0 && ctx & td::NOTE_SPACE == 0 {
            self.emit_char();
        }
    }

    fn handle_tag_text(&mut self, this: char) -> Route<()> {
        let next = self.read(1);
        if !is_marker(this) || !self.can_recurse() {
            self.emit_char();
        } else if this == '{' && next == '{' {
            self.parse_template_or_argument()?;
        } else if this == '[' && next == '[' {
            self.parse_wikilink();
        } else if this == '<' {
            self.parse_tag();
        } else {
            self.emit_char();
        }
        Ok(())
    }

    fn handle_tag_data(&mut self, data: &mut TagData, this: char) -> Route<()> {
        let space = pyunicode::is_space(this);
        if data.context & td::NAME != 0 {
            let first_time = data.context & td::NOTE_SPACE == 0;
            if is_marker(this) || (space && first_time) {
                // Tags must start with text, not spaces.
                return Err(self.fail_route());
            } else if first_time {
                data.context |= td::NOTE_SPACE;
            } else if space {
                data.context = td::ATTR_READY;
                self.handle_tag_space(data);
                return Ok(());
            }
        } else if space {
            self.handle_tag_space(data);
            return Ok(());
        } else if data.context & td::NOTE_SPACE != 0 {
            if data.context & td::QUOTED != 0 {
                // Text right after a closing quote: retry the value unquoted.
                data.context = td::ATTR_VALUE;
                self.memoize_bad_route();
                self.pop();
                self.head = data.reset.saturating_sub(1);
                return Ok(());
            }
            return Err(self.fail_route());
        } else if data.context & td::ATTR_READY != 0 {
            data.context = td::ATTR_NAME;
            self.push(TAG_ATTR);
        } else if data.context & td::ATTR_NAME != 0 {
            if this == '=' {
                data.context = td::ATTR_VALUE | td::NOTE_QUOTE;
                self.emit_token();
                return Ok(());
            }
            if data.context & td::NOTE_EQUALS != 0 {
                self.push_tag_buffer(data);
                data.context = td::ATTR_NAME;
                self.push(TAG_ATTR);
            }
        } else {
            let escaped = self.read_back(1) == '\\' && self.read_back(2) != '\\';
            if data.context & td::NOTE_QUOTE != 0 {
                data.context ^= td::NOTE_QUOTE;
                if (this == '"' || this == '\'') && !escaped {
                    data.context |= td::QUOTED;
                    data.quoter = this;
                    data.reset = self.head;
                    let ctx = self.context();
                    if self.check_route(ctx).is_err() {
                        data.context = td::ATTR_VALUE;
                        self.head = self.head.saturating_sub(1);
                    } else {
                        self.push(ctx);
                    }
                    return Ok(());
                }
            } else if data.context & td::QUOTED != 0 && this == data.quoter && !escaped {
                data.context |= td::NOTE_SPACE;
                return Ok(());
            }
        }
        self.handle_tag_text(this)
    }

    fn handle_tag_close_close(&mut self) -> Route<Parsed> {
        let closing = self.pop();
        let name = self
            .frames
            .last()
            .map(|f| tag_key(&f.tag_name))
            .unwrap_or_default();
        let valid = match closing.as_slice() {
            [Item::Text(s, e)] => tag_key(&self.slice(*s, *e)) == name,
            _ => false,
        };
        if !valid {
            return Err(self.fail_route());
        }
        self.emit_token();
        Ok(Parsed {
            items: self.pop(),
            ..Parsed::default()
        })
    }

    /// Body of `<nowiki>`, `<pre>`, `<math>` …: only entities and the
    /// matching close tag are recognised.
    fn handle_blacklisted_tag(&mut self, name: &str) -> Route<Parsed> {
        let key = tag_key(name);
        loop {
            let this = self.read(0);
            let next = self.read(1);
            if this == '\0' {
                return Err(self.fail_route());
            } else if this == '<' && next == '/' {
                self.head += 2;
                let reset = self.head - 1;
                let name_start = self.head;
                loop {
                    let c = self.read(0);
                    if c == '>' {
                        if pyunicode::lower(
                            self.slice(name_start, self.head)
                                .trim_end_matches(pyunicode::is_space),
                        ) == key
                        {
                            self.emit_token();
                            return Ok(Parsed {
                                items: self.pop(),
                                ..Parsed::default()
                            });
                        }
                        break;
                    }
                    if c == '\0' || c == '\n' {
                        break;
                    }
                    self.head += 1;
                }
                self.head = reset;
                self.emit_text(reset - 1, reset + 1);
            } else if this == '&' {
                self.parse_entity();
            } else {
                self.emit_char();
            }
            self.head += 1;
        }
    }

    // ----- bold and italics ----------------------------------------------

    /// Returns the finished frame when the ticks close the current style.
    fn parse_style(&mut self) -> Option<Parsed> {
        let context = self.context();
        let start = self.head;
        self.head += 2;
        let mut ticks = 2;
        while self.read(0) == '\'' {
            self.head += 1;
            ticks += 1;
        }
        if ticks > 5 {
            self.emit_text(start, start + ticks - 5);
            ticks = 5;
        } else if ticks == 4 {
            self.emit_text(start, start + 1);
            ticks = 3;
        }
        let off = self.head - ticks;
        if (context & STYLE_ITALICS != 0 && (ticks == 2 || ticks == 5))
            || (context & STYLE_BOLD != 0 && (ticks == 3 || ticks == 5))
        {
            if ticks == 5 {
                self.head -= if context & STYLE_ITALICS != 0 { 3 } else { 2 };
            }
            return Some(Parsed {
                items: self.pop(),
                ..Parsed::default()
            });
        }
        if !self.can_recurse() {
            if ticks == 3 {
                if context & STYLE_SECOND_PASS != 0 {
                    self.emit_text(off, off + 1);
                    return Some(Parsed {
                        items: self.pop(),
                        ..Parsed::default()
                    });
                }
                if context & STYLE_ITALICS != 0 {
                    self.add_context(STYLE_PASS_AGAIN);
                }
            }
            self.emit_text(off, off + ticks);
        } else if ticks == 2 {
            self.parse_italics(off);
        } else if ticks == 3 {
            if self.parse_bold(off) {
                return Some(Parsed {
                    items: self.pop(),
                    ..Parsed::default()
                });
            }
        } else {
            self.parse_italics_and_bold(off);
        }
        self.head -= 1;
        None
    }

    /// Runs a style frame; on failure restores `head` and the frame stack.
    fn try_style(&mut self, context: u64) -> Route<Parsed> {
        let reset = self.head;
        let depth = self.frames.len();
        self.parse(context, true).inspect_err(|_| {
            self.unwind(depth);
            self.head = reset;
        })
    }

    fn parse_italics(&mut self, off: usize) {
        let result = match self.try_style(STYLE_ITALICS) {
            Err(route) if route.context & STYLE_PASS_AGAIN != 0 => {
                self.try_style(STYLE_ITALICS | STYLE_SECOND_PASS)
            }
            other => other,
        };
        match result {
            Ok(_) => self.emit_node(NodeKind::Tag, off, self.head, 0),
            Err(_) => self.emit_text(off, off + 2),
        }
    }

    /// Returns `true` when the current (second-pass italics) frame must end.
    fn parse_bold(&mut self, off: usize) -> bool {
        match self.try_style(STYLE_BOLD) {
            Ok(_) => {
                self.emit_node(NodeKind::Tag, off, self.head, 0);
                false
            }
            Err(_) => {
                let ctx = self.context();
                if ctx & STYLE_SECOND_PASS != 0 {
                    self.emit_text(off, off + 1);
                    return true;
                }
                if ctx & STYLE_ITALICS != 0 {
                    self.add_context(STYLE_PASS_AGAIN);
                    self.emit_text(off, off + 3);
                } else {
                    self.emit_text(off, off + 1);
                    self.parse_italics(off + 1);
                }
                false
            }
        }
    }

    fn parse_italics_and_bold(&mut self, off: usize) {
        if self.try_style(STYLE_BOLD).is_ok() {
            let inner_end = self.head;
            if self.try_style(STYLE_ITALICS).is_ok() {
                self.emit_node(NodeKind::Tag, off, self.head, 0);
            } else {
                self.emit_text(off, off + 2);
                self.emit_node(NodeKind::Tag, off + 2, inner_end, 0);
            }
        } else if self.try_style(STYLE_ITALICS).is_ok() {
            let inner_end = self.head;
            if self.try_style(STYLE_BOLD).is_ok() {
                self.emit_node(NodeKind::Tag, off, self.head, 0);
            } else {
                self.emit_text(off, off + 3);
                self.emit_node(NodeKind::Tag, off + 3, inner_end, 0);
            }
        } else {
            self.emit_text(off, off + 5);
        }
    }

    // ----- lists and rules -----------------------------------------------

    fn handle_list_marker(&mut self) {
        if self.read(0) == ';' {
            self.add_context(DL_TERM);
        }
        self.emit_node(NodeKind::Tag, self.head, self.head + 1, 0);
    }

    fn handle_list(&mut self) {
        self.handle_list_marker();
        while matches!(self.read(1), '#' | '*' | ';' | ':') {
            self.head += 1;
            self.handle_list_marker();
        }
    }

    fn handle_hr(&mut self) {
        let start = self.head;
        self.head += 3;
        while self.read(1) == '-' {
            self.head += 1;
        }
        self.emit_node(NodeKind::Tag, start, self.head + 1, 0);
    }

    fn handle_dl_term(&mut self) {
        self.toggle_context(DL_TERM);
        if self.read(0) == ':' {
            self.handle_list_marker();
        } else {
            self.emit_char();
        }
    }

    // ----- tables ----------------------------------------------------------

    /// Attributes of a table, row or cell up to `end`.
    fn handle_table_style(&mut self, end: char) -> Route<()> {
        let mut data = TagData::new(td::ATTR_READY);
        loop {
            let this = self.read(0);
            let can_exit = data.context & td::QUOTED == 0 || data.context & td::NOTE_SPACE != 0;
            if this == end && can_exit {
                if data.context & (td::ATTR_NAME | td::ATTR_VALUE) != 0 {
                    self.push_tag_buffer(&data);
                }
                return Ok(());
            } else if this == '\0' || this == end {
                if self.context() & TAG_ATTR != 0 {
                    if data.context & td::QUOTED != 0 {
                        data.context = td::ATTR_VALUE;
                        self.memoize_bad_route();
                        self.pop();
                        self.head = data.reset;
                        continue;
                    }
                    self.pop();
                }
                return Err(self.fail_route());
            }
            self.handle_tag_data(&mut data, this)?;
            self.head += 1;
        }
    }

    fn parse_table(&mut self) {
        let reset = self.head;
        let depth = self.frames.len();
        self.head += 2;
        let style = self
            .push_checked(TABLE_OPEN)
            .and_then(|()| self.handle_table_style('\n'));
        if style.is_err() {
            self.unwind(depth);
            self.head = reset;
            self.emit_char();
            return;
        }
        self.pop();
        self.head += 1;
        match self.parse(TABLE_OPEN, true) {
            Ok(_) => {
                self.emit_node(NodeKind::Tag, reset, self.head, 0);
                self.head -= 1;
            }
            Err(_) => {
                // Row and cell failures propagate here without cleanup.
                while self.frames.len() > depth {
                    self.memoize_bad_route();
                    self.pop();
                }
                self.head = reset;
                self.emit_char();
            }
        }
    }

    fn handle_table_row(&mut self) -> Route<()> {
        self.head += 2;
        if !self.can_recurse() {
            self.emit_text(self.head - 2, self.head);
            self.head -= 1;
            return Ok(());
        }
        self.push_checked(TABLE_OPEN | TABLE_ROW_OPEN)?;
        self.handle_table_style('\n')?;
        self.pop();
        self.head += 1;
        self.parse(TABLE_OPEN | TABLE_ROW_OPEN, true)?;
        self.emit_token();
        self.head -= 1;
        Ok(())
    }

    fn handle_table_cell(&mut self, markup_len: usize, line_context: u64) -> Route<()> {
        let old_context = self.context();
        self.head += markup_len;
        let reset = self.head;
        if !self.can_recurse() {
            self.emit_text(self.head - markup_len, self.head);
            self.head -= 1;
            return Ok(());
        }
        self.parse(
            TABLE_OPEN | TABLE_CELL_OPEN | TABLE_CELL_STYLE | line_context,
            true,
        )?;
        let mut cell_context = self.context();
        self.set_context(old_context);
        if cell_context & TABLE_CELL_STYLE != 0 {
            self.head = reset;
            self.push(TABLE_OPEN | TABLE_CELL_OPEN | line_context);
            self.handle_table_style('|')?;
            self.pop();
            self.head += 1;
            self.parse(TABLE_OPEN | TABLE_CELL_OPEN | line_context, true)?;
            cell_context = self.context();
            self.set_context(old_context);
        }
        self.emit_token();
        self.add_context(cell_context & (TABLE_TH_LINE | TABLE_TD_LINE));
        self.head -= 1;
        Ok(())
    }

    fn handle_table_cell_end(&mut self, reset_for_style: bool) -> Parsed {
        let c = self.context();
        self.set_context(if reset_for_style {
            c | TABLE_CELL_STYLE
        } else {
            c & !TABLE_CELL_STYLE
        });
        Parsed {
            items: self.pop_keeping_context(),
            ..Parsed::default()
        }
    }

    /// Table syntax inside a table frame; `Some` when the frame ends.
    fn handle_table_marker(&mut self, ctx: u64, this: char, next: char) -> Route<Option<Parsed>> {
        let cell_open = ctx & TABLE_CELL_OPEN != 0;
        if this == '|' && next == '|' && ctx & TABLE_TD_LINE != 0 {
            if cell_open {
                return Ok(Some(self.handle_table_cell_end(false)));
            }
            self.handle_table_cell(2, TABLE_TD_LINE)?;
        } else if (this == '|' || this == '!') && next == this && ctx & TABLE_TH_LINE != 0 {
            if cell_open {
                return Ok(Some(self.handle_table_cell_end(false)));
            }
            self.handle_table_cell(2, TABLE_TH_LINE)?;
        } else if this == '|' && ctx & TABLE_CELL_STYLE != 0 {
            return Ok(Some(self.handle_table_cell_end(true)));
        } else if this == '\n' && ctx & TABLE_CELL_LINE_CONTEXTS != 0 {
            self.set_context(ctx & !TABLE_CELL_LINE_CONTEXTS);
            self.emit_char();
        } else if self.has_leading_whitespace() {
            if this == '|' && next == '}' {
                if cell_open {
                    return Ok(Some(self.handle_table_cell_end(false)));
                }
                if ctx & TABLE_ROW_OPEN != 0 {
                    return Ok(Some(Parsed {
                        items: self.pop(),
                        ..Parsed::default()
                    }));
                }
                self.head += 2;
                return Ok(Some(Parsed {
                    items: self.pop(),
                    ..Parsed::default()
                }));
            } else if this == '|' && next == '-' {
                if cell_open {
                    return Ok(Some(self.handle_table_cell_end(false)));
                }
                if ctx & TABLE_ROW_OPEN != 0 {
                    return Ok(Some(Parsed {
                        items: self.pop(),
                        ..Parsed::default()
                    }));
                }
                self.handle_table_row()?;
            } else if this == '|' {
                if cell_open {
                    return Ok(Some(self.handle_table_cell_end(false)));
                }
                self.handle_table_cell(1, TABLE_TD_LINE)?;
            } else if this == '!' {
                if cell_open {
                    return Ok(Some(self.handle_table_cell_end(false)));
                }
                self.handle_table_cell(1, TABLE_TH_LINE)?;
            } else {
                self.emit_char();
            }
        } else {
            self.emit_char();
        }
        Ok(None)
    }
}

/// Trailing punctuation held back from a free external link.
#[derive(Debug, Default)]
struct FreeTail {
    /// Number of held characters (they end just before the head).
    len: usize,
    /// The link ended at a space, which also goes after the link.
    space: bool,
}

//! Wikilinks, bracketed external links and free URLs.

use super::*;

impl MwparserfromhellTokenizer<'_> {
    pub(super) fn parse_wikilink(&mut self) {
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
                    Ok(parsed) => {
                        self.recycle(parsed.items);
                        self.emit_node(NodeKind::Wikilink, start, self.head + 1, 0);
                    }
                    Err(_) => {
                        self.unwind(depth);
                        self.head = reset;
                        self.emit_text(start, start + 2);
                    }
                }
            }
        }
    }

    pub(super) fn parse_bracketed_uri_scheme(&mut self) -> Route<()> {
        // Every wikilink is first tried as a bracketed URL; most fail at their first word.
        // Such a failure is settled by looking at the text: charged and memoized as the
        // steps below would, without their frame and text.
        if !self.page.stepwise()
            && let Some(reads) = self.failing_bracketed_scheme()
        {
            self.check_route(EXT_LINK_URI)?;
            self.charge_many(reads);
            self.bad_routes.insert(self.head, EXT_LINK_URI);
            return Err(BadRoute {
                context: EXT_LINK_URI,
            });
        }
        self.push_checked(EXT_LINK_URI)?;
        if self.read(0) == b'/' && self.read(1) == b'/' {
            self.emit_text(self.head, self.head + 2);
            self.head += 2;
            return Ok(());
        }
        let scheme_start = self.head;
        while is_uri_scheme_char(self.read(0)) && self.read(0) != b'\0' {
            self.emit_char();
            self.head += 1;
        }
        let text = self.text;
        let scheme = text.get(scheme_start..self.head).unwrap_or_default();
        if self.read(0) != b':' {
            return Err(self.fail_route());
        }
        self.emit_char();
        self.head += 1;
        let slashes = self.read(0) == b'/' && self.read(1) == b'/';
        if slashes {
            self.emit_text(self.head, self.head + 2);
            self.head += 2;
        }
        if !is_scheme(scheme, slashes) {
            return Err(self.fail_route());
        }
        Ok(())
    }

    /// The reads [`Self::parse_bracketed_uri_scheme`] makes when it fails at the scheme
    /// (neither `//` nor a known scheme and its colon); `None` when it gets past it.
    fn failing_bracketed_scheme(&self) -> Option<u64> {
        let at = |i: usize| self.text.get(self.head + i).copied().unwrap_or(b'\0');
        // `//`: one read, or two when the first is a slash.
        if at(0) == b'/' && at(1) == b'/' {
            return None;
        }
        let mut reads: u64 = if at(0) == b'/' { 2 } else { 1 };
        // Two reads per scheme character, one for the character after the scheme, one
        // for the colon test.
        let mut len = 0;
        while is_uri_scheme_char(at(len)) {
            reads += 2;
            len += 1;
        }
        reads += 2;
        if at(len) != b':' {
            return Some(reads);
        }
        let slashes = at(len + 1) == b'/' && at(len + 2) == b'/';
        reads += if at(len + 1) == b'/' { 2 } else { 1 };
        let scheme = self
            .text
            .get(self.head..self.head + len)
            .unwrap_or_default();
        (!is_scheme(scheme, slashes)).then_some(reads)
    }

    /// Reads the scheme backwards from the pending text before `:`.
    pub(super) fn parse_free_uri_scheme(&mut self) -> Route<usize> {
        let (text_start, text_end) = self
            .frames
            .last()
            .and_then(|f| f.text)
            .unwrap_or((self.head, self.head));
        let mut scheme_start = text_end;
        while scheme_start > text_start {
            let Some((c, before)) = self.char_before(scheme_start) else {
                break;
            };
            if !(pyunicode::is_word(c)) {
                break;
            }
            if !c.is_ascii() || !is_uri_scheme_char(c as u8) {
                return Err(BadRoute { context: 0 });
            }
            scheme_start = before;
        }
        let text = self.text;
        let scheme = text.get(scheme_start..text_end).unwrap_or_default();
        let slashes = self.read(0) == b'/' && self.read(1) == b'/';
        if !is_scheme(scheme, slashes) {
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
        if matches!(this, b'\0' | b'\n' | b' ' | b']') || (!brackets && this == b'[') {
            return Err(self.fail_route());
        }
        let mut parens = false;
        loop {
            if self.take_uri_run(brackets, &mut tail) {
                continue;
            }
            let at = self.head;
            let this = self.read(0);
            let next = self.read(1);
            if this == b'&' {
                self.push_tail(&mut tail);
                self.parse_entity();
            } else if this == b'<' && next == b'!' && self.read(2) == b'-' && self.read(3) == b'-' {
                self.push_tail(&mut tail);
                self.parse_comment();
            } else if this == b'{' && next == b'{' && self.can_recurse() {
                self.push_tail(&mut tail);
                self.parse_template_or_argument()?;
            } else if brackets {
                if this == b'\0' || this == b'\n' {
                    return Err(self.fail_route());
                }
                if this == b']' {
                    self.discard();
                    return Ok(scheme_len);
                }
                if self.is_uri_end(this, next) {
                    self.emit_token();
                    if this == b' ' {
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
                    if this == b' ' {
                        if let Some(t) = tail.as_deref_mut() {
                            t.space = true;
                        }
                    } else {
                        self.head = self.head.saturating_sub(1);
                    }
                    self.discard();
                    return Ok(scheme_len);
                }
                self.handle_free_link_text(&mut parens, &mut tail, this);
            }
            self.advance_from(at);
        }
    }

    /// Takes a run of URL characters that the loop of [`Self::really_parse_external_link`]
    /// would only emit as text, one step per character: ordinary characters, and in free
    /// links also the punctuation held back from their end when an ordinary character
    /// follows it. Charged as those steps' reads (two each); returns whether there was one.
    fn take_uri_run(&mut self, brackets: bool, tail: &mut Option<&mut FreeTail>) -> bool {
        if self.page.stepwise() {
            return false;
        }
        let start = self.head;
        let mut end = start;
        let mut i = start;
        // A run starts with a character that is emitted at once, so that held-back
        // punctuation is never scanned more than twice.
        if !brackets
            && self
                .text
                .get(start)
                .is_none_or(|&c| uri_char_class(c) != UriChar::Plain)
        {
            return false;
        }
        while let Some(&c) = self.text.get(i) {
            let class = uri_char_class(c);
            if class == UriChar::Special {
                break;
            }
            // Classified by table and tested as conditions: a `match` on the character
            // compiles to an indirect jump, mispredicted wherever the class changes.
            let emitted = class == UriChar::Plain || brackets;
            end = if emitted { i + 1 } else { end };
            i += 1;
        }
        if end == start {
            return false;
        }
        self.charge_many(2 * Source::chars_in(self.page, start..end) as u64);
        if self.exhausted() {
            // Every read now sees the end of the text; the loop finishes as it would.
            return false;
        }
        if !brackets {
            self.push_tail(tail);
        }
        self.emit_text(start, end);
        self.head = end;
        true
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
        this: u8,
    ) {
        if this == b'(' && !*parens {
            *parens = true;
            self.push_tail(tail);
        } else if matches!(this, b',' | b';' | b'\\' | b'.' | b':' | b'!' | b'?')
            || (!*parens && this == b')')
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

    pub(super) fn is_uri_end(&self, this: u8, next: u8) -> bool {
        let ctx = self.context();
        matches!(
            this,
            b'\0' | b'\n' | b'[' | b']' | b'<' | b'>' | b'"' | b' '
        ) || (this == b'\'' && next == b'\'')
            || (this == b'|' && ctx & TEMPLATE != 0)
            || (this == b'=' && ctx & (TEMPLATE_PARAM_KEY | HEADING) != 0)
            || (this == b'}'
                && next == b'}'
                && (ctx & TEMPLATE != 0 || (self.read(2) == b'}' && ctx & ARGUMENT != 0)))
    }

    pub(super) fn parse_external_link(&mut self, brackets: bool) {
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

    pub(super) fn not_a_link(&mut self, brackets: bool) {
        if !brackets && self.context() & DL_TERM != 0 {
            self.handle_dl_term();
        } else {
            self.emit_char();
        }
    }
}

/// How the loop over a URL's characters treats a character.
#[derive(Clone, Copy, PartialEq, Eq)]
enum UriChar {
    /// Emitted as text.
    Plain,
    /// Emitted as text in bracketed links; held back from the end of free links.
    Punctuation,
    /// Ends the URL, starts a nested construct or depends on the context or the parentheses.
    Special,
}

/// Bytes from 0x80 up (of characters that are all plain) are plain.
#[inline]
fn uri_char_class(c: u8) -> UriChar {
    URI_CHAR_CLASSES[usize::from(c)]
}

/// [`uri_char_class`] by table.
const URI_CHAR_CLASSES: [UriChar; 256] = {
    let mut classes = [UriChar::Plain; 256];
    let special = b"&<{}[]>\"' |=\0\n()";
    let mut i = 0;
    while i < special.len() {
        classes[special[i] as usize] = UriChar::Special;
        i += 1;
    }
    let punctuation = b",;\\.:!?";
    let mut i = 0;
    while i < punctuation.len() {
        classes[punctuation[i] as usize] = UriChar::Punctuation;
        i += 1;
    }
    classes
};

/// Trailing punctuation held back from a free external link.
#[derive(Debug, Default)]
struct FreeTail {
    /// Number of held characters (they end just before the head).
    len: usize,
    /// The link ended at a space, which also goes after the link.
    space: bool,
}

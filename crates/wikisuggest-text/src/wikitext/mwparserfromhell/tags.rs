//! HTML and extension tags, including unparsed bodies (`<nowiki>` …).

use super::*;

impl MwparserfromhellTokenizer<'_> {
    pub(super) fn parse_tag(&mut self) {
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

    pub(super) fn emit_tag(&mut self, start: usize, parsed: Parsed) {
        match parsed.implicit_open_end {
            Some(open_end) => {
                self.emit_node(NodeKind::Tag, start, open_end, 0);
                self.emit_all(parsed.items);
            }
            None => {
                self.recycle(parsed.items);
                self.emit_node(NodeKind::Tag, start, self.head + 1, 0);
            }
        }
    }

    /// `</br>` and friends outside a tag body: a self-closing tag.
    pub(super) fn handle_invalid_tag_start(&mut self) {
        let start = self.head;
        let depth = self.frames.len();
        self.head += 2;
        // The name: up to a space or a marker, one read per character.
        let mut pos = 0;
        loop {
            let c = self.read(pos);
            if is_marker(c) {
                break;
            }
            if c < 0x80 {
                if pyunicode::is_space(char::from(c)) {
                    break;
                }
                pos += 1;
            } else {
                let c = self.char_at(self.head + pos);
                if pyunicode::is_space(c) {
                    break;
                }
                pos += self.page.width(c);
            }
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

    pub(super) fn really_parse_tag(&mut self) -> Route<Parsed> {
        let mut data = TagData::new(td::NAME);
        self.push_checked(TAG_OPEN)?;
        self.emit_token();
        let name_start = self.head;
        loop {
            // Three reads per character: this loop's two and `handle_tag_text`'s.
            if self.take_tag_run(&data, 3) {
                continue;
            }
            let at = self.head;
            let this = self.read(0);
            let next = self.read(1);
            let can_exit =
                data.context & (td::QUOTED | td::NAME) == 0 || data.context & td::NOTE_SPACE != 0;
            if data.context & td::NAME != 0
                && (matches!(this, b'>' | b'/' | b'\0') || self.is_space_here(this))
            {
                // These characters end the name (or the tag).
                let name = (name_start, self.head);
                if let Some(f) = self.frames.last_mut() {
                    f.tag_name = name;
                }
            }
            if this == b'\0' {
                self.retry_unclosed_quote(&mut data)?;
                continue;
            } else if this == b'>' && can_exit {
                self.handle_tag_close_open(&data);
                self.set_context(TAG_BODY);
                if let Some(f) = self.frames.last_mut() {
                    f.open_end = self.head;
                    // The open tag's own tokens are not body: an implicitly
                    // closed tag hands only its body to the parent.
                    f.items.clear();
                    f.text = None;
                }
                let name = self.tag_name();
                let (single_only, blacklisted) = (
                    in_list(&name, &SINGLE_ONLY),
                    in_list(&name, &PARSER_BLACKLIST),
                );
                if single_only {
                    self.head -= 1;
                    return Ok(Parsed {
                        items: self.pop(),
                        ..Parsed::default()
                    });
                }
                if blacklisted {
                    return self.handle_blacklisted_tag(&name);
                }
                return self.parse(0, false);
            } else if this == b'/' && next == b'>' && can_exit {
                self.handle_tag_close_open(&data);
                return Ok(Parsed {
                    items: self.pop(),
                    ..Parsed::default()
                });
            } else {
                self.handle_tag_data(&mut data, this)?;
            }
            self.advance_from(at);
        }
    }

    /// Takes a run of characters of a tag name, an attribute name or an attribute value
    /// that [`Self::handle_tag_data`] would only emit as text, one step per character:
    /// characters that are neither markers, spaces nor `"`, in the states where such a
    /// character changes nothing (a name past its first character, an attribute name before
    /// any space, a value after its first character). Charged as `reads_per_char` reads
    /// each, as the steps would be; returns whether there was a run.
    pub(super) fn take_tag_run(&mut self, data: &TagData, reads_per_char: u64) -> bool {
        let c = data.context;
        let inert = if c & td::NAME != 0 {
            c & td::NOTE_SPACE != 0
        } else if c & td::ATTR_NAME != 0 {
            c & (td::NOTE_SPACE | td::NOTE_EQUALS | td::ATTR_READY) == 0
        } else if c & td::ATTR_VALUE != 0 {
            c & (td::NOTE_SPACE | td::NOTE_QUOTE | td::ATTR_READY) == 0
        } else {
            false
        };
        if self.page.stepwise() || !inert {
            return false;
        }
        let start = self.head;
        let mut end = start;
        while let Some(&c) = self.text.get(end) {
            if c < 0x80 {
                if is_marker(c) || c == b'"' || pyunicode::is_space(char::from(c)) {
                    break;
                }
                end += 1;
            } else if matches!(c, 0xC2 | 0xE1..=0xE3) {
                // The lead bytes of every space beyond ASCII.
                let c = self.char_at(end);
                if pyunicode::is_space(c) {
                    break;
                }
                end += self.page.width(c);
            } else {
                end += 1;
            }
        }
        if end == start {
            return false;
        }
        self.charge_many(reads_per_char * Source::chars_in(self.page, start..end) as u64);
        if self.exhausted() {
            // Every read now sees the end of the text; the loop finishes as it would.
            return false;
        }
        self.emit_text(start, end);
        self.head = end;
        true
    }

    pub(super) fn handle_tag_close_open(&mut self, data: &TagData) {
        if data.context & (td::ATTR_NAME | td::ATTR_VALUE) != 0 {
            self.push_tag_buffer(data);
        }
        self.emit_token();
        self.head += 1;
    }

    /// Closes the pending attribute: pops its quote frame (if quoted) and
    /// its attribute frame into the tag frame.
    pub(super) fn push_tag_buffer(&mut self, data: &TagData) {
        if data.context & td::QUOTED != 0 {
            let items = self.pop();
            self.emit_all(items);
        }
        let items = self.pop();
        self.emit_all(items);
    }

    pub(super) fn handle_tag_space(&mut self, data: &mut TagData) {
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

    pub(super) fn handle_tag_text(&mut self, this: u8) -> Route<()> {
        let next = self.read(1);
        if !is_marker(this) || !self.can_recurse() {
            self.emit_char();
        } else if this == b'{' && next == b'{' {
            self.parse_template_or_argument()?;
        } else if this == b'[' && next == b'[' {
            self.parse_wikilink();
        } else if this == b'<' {
            self.parse_tag();
        } else {
            self.emit_char();
        }
        Ok(())
    }

    pub(super) fn handle_tag_data(&mut self, data: &mut TagData, this: u8) -> Route<()> {
        let space = self.is_space_here(this);
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
                self.discard();
                self.head = data.reset.saturating_sub(1);
                return Ok(());
            }
            return Err(self.fail_route());
        } else if data.context & td::ATTR_READY != 0 {
            data.context = td::ATTR_NAME;
            self.push(TAG_ATTR);
        } else if data.context & td::ATTR_NAME != 0 {
            if this == b'=' {
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
            let escaped = self.read_back(1) == b'\\' && self.read_back(2) != b'\\';
            if data.context & td::NOTE_QUOTE != 0 {
                data.context ^= td::NOTE_QUOTE;
                if (this == b'"' || this == b'\'') && !escaped {
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

    pub(super) fn handle_tag_close_close(&mut self) -> Route<Parsed> {
        let closing = self.pop();
        let name = self.tag_name();
        let valid = match closing.as_slice() {
            [Item::Text(s, e)] => same_tag(&self.slice(*s, *e), &name),
            _ => false,
        };
        self.recycle(closing);
        if !valid {
            return Err(self.fail_route());
        }
        self.emit_token();
        Ok(Parsed {
            items: self.pop(),
            ..Parsed::default()
        })
    }

    /// Where a tag's attributes end without their end: an unclosed attribute quote is
    /// retried as plain text (`Ok`: the caller's loop goes on from the quote's reset
    /// position); anything else fails the route.
    pub(super) fn retry_unclosed_quote(&mut self, data: &mut TagData) -> Route<()> {
        if self.context() & TAG_ATTR != 0 {
            if data.context & td::QUOTED != 0 {
                data.context = td::ATTR_VALUE;
                self.memoize_bad_route();
                self.discard();
                self.head = data.reset;
                return Ok(());
            }
            self.discard();
        }
        Err(self.fail_route())
    }

    /// Body of `<nowiki>`, `<pre>`, `<math>` …: only entities and the
    /// matching close tag are recognised.
    pub(super) fn handle_blacklisted_tag(&mut self, name: &str) -> Route<Parsed> {
        loop {
            let at = self.head;
            let this = self.read(0);
            let next = self.read(1);
            if this == b'\0' {
                return Err(self.fail_route());
            } else if this == b'<' && next == b'/' {
                self.head += 2;
                let reset = self.head - 1;
                let name_start = self.head;
                loop {
                    let c = self.read(0);
                    if c == b'>' {
                        if same_tag(&self.slice(name_start, self.head), name) {
                            self.emit_token();
                            return Ok(Parsed {
                                items: self.pop(),
                                ..Parsed::default()
                            });
                        }
                        break;
                    }
                    if c == b'\0' || c == b'\n' {
                        break;
                    }
                    self.head += self.char_len(self.head);
                }
                self.head = reset;
                self.emit_text(reset - 1, reset + 1);
            } else if this == b'&' {
                self.parse_entity();
            } else {
                self.emit_char();
            }
            self.advance_from(at);
        }
    }
}

//! Headings, HTML entities and comments.

use super::*;

impl MwparserfromhellTokenizer<'_> {
    pub(super) fn parse_heading(&mut self) {
        self.global |= GL_HEADING;
        let reset = self.head;
        let depth = self.frames.len();
        self.head += 1;
        let mut best = 1;
        while self.read(0) == b'=' {
            best += 1;
            self.head += 1;
        }
        let context = HEADING_LEVEL_1 << (best.min(6) - 1);
        match self.parse(context, true) {
            Ok(parsed) => {
                self.recycle(parsed.items);
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

    pub(super) fn handle_heading_end(&mut self) -> Route<Parsed> {
        let reset = self.head;
        let depth = self.frames.len();
        self.head += 1;
        let mut best: u8 = 1;
        while self.read(0) == b'=' {
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
            ..Parsed::default()
        })
    }

    pub(super) fn parse_entity(&mut self) {
        let reset = self.head;
        let depth = self.frames.len();
        let ok = self.push_checked(HTML_ENTITY).is_ok() && self.really_parse_entity().is_ok();
        if ok {
            self.discard();
            self.emit_node(NodeKind::HtmlEntity, reset, self.head + 1, 0);
        } else {
            self.unwind(depth);
            self.head = reset;
            self.emit_char();
        }
    }

    pub(super) fn really_parse_entity(&mut self) -> Route<()> {
        self.head += 1;
        let mut this = self.read(0);
        if this == b'\0' {
            return Err(self.fail_route());
        }
        let (mut numeric, mut hexadecimal) = (false, false);
        if this == b'#' {
            numeric = true;
            self.head += 1;
            this = self.read(0);
            if this == b'\0' {
                return Err(self.fail_route());
            }
            if this == b'x' || this == b'X' {
                hexadecimal = true;
                self.head += 1;
            }
        }
        // The body's characters are ASCII: a byte range of the page.
        let mut body = 0..0;
        loop {
            let c = self.read(0);
            if c == b';' {
                if body.is_empty() {
                    return Err(self.fail_route());
                }
                break;
            }
            if body.is_empty() && numeric && c == b'0' {
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
            if body.is_empty() {
                body = self.head..self.head;
            }
            body.end = self.head + 1;
            self.head += 1;
        }
        let body = self.slice(body.start, body.end);
        let known = if numeric {
            let value = u32::from_str_radix(&body, if hexadecimal { 16 } else { 10 }).unwrap_or(0);
            (1..=0x10FFFF).contains(&value)
        } else {
            entities::NAMED.binary_search(&&*body).is_ok()
        };
        if known {
            Ok(())
        } else {
            Err(self.fail_route())
        }
    }

    pub(super) fn parse_comment(&mut self) {
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
    pub(super) fn find_comment_close(&mut self, from: usize) -> Option<usize> {
        if let Some((searched, hit)) = self.comment_close
            && searched <= from
            && hit.is_none_or(|h| h >= from)
        {
            return hit;
        }
        // The text ends at its first NUL, as the search does.
        let hit = self.page.comment_close(from);
        self.comment_close = Some((from, hit));
        hit
    }
}

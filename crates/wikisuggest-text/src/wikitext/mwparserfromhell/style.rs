//! Bold and italics (`''`, `'''`, `'''''`) and their retry passes.

use super::*;

impl MwparserfromhellTokenizer<'_> {
    /// Returns the finished frame when the ticks close the current style.
    pub(super) fn parse_style(&mut self) -> Option<Parsed> {
        let context = self.context();
        let start = self.head;
        self.head += 2;
        let mut ticks = 2;
        while self.read(0) == b'\'' {
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
    pub(super) fn try_style(&mut self, context: u64) -> Route<Parsed> {
        let reset = self.head;
        let depth = self.frames.len();
        self.parse(context, true).inspect_err(|_| {
            self.unwind(depth);
            self.head = reset;
        })
    }

    pub(super) fn parse_italics(&mut self, off: usize) {
        let result = match self.try_style(STYLE_ITALICS) {
            Err(route) if route.context & STYLE_PASS_AGAIN != 0 => {
                self.try_style(STYLE_ITALICS | STYLE_SECOND_PASS)
            }
            other => other,
        };
        match result {
            Ok(parsed) => {
                self.recycle(parsed.items);
                self.emit_node(NodeKind::Tag, off, self.head, 0);
            }
            Err(_) => self.emit_text(off, off + 2),
        }
    }

    /// Returns `true` when the current (second-pass italics) frame must end.
    pub(super) fn parse_bold(&mut self, off: usize) -> bool {
        match self.try_style(STYLE_BOLD) {
            Ok(parsed) => {
                self.recycle(parsed.items);
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

    pub(super) fn parse_italics_and_bold(&mut self, off: usize) {
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
}

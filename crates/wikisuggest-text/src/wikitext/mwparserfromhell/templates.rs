//! Templates `{{…}}` and template arguments `{{{…}}}`.

use super::*;

impl MwparserfromhellTokenizer<'_> {
    pub(super) fn parse_template_or_argument(&mut self) -> Route<()> {
        let start = self.head;
        self.head += 2;
        let mut braces = 2;
        while self.read(0) == b'{' && braces < MAX_BRACES {
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
    pub(super) fn parse_template(&mut self, has_content: bool) -> Route<usize> {
        self.parse_body(TEMPLATE_NAME | if has_content { HAS_TEMPLATE } else { 0 })
    }

    /// Parses an argument body; returns the end position on success.
    pub(super) fn parse_argument(&mut self) -> Route<usize> {
        self.parse_body(ARGUMENT_NAME)
    }

    /// Parses a body in `context` for its extent only: its items go back to the pool, and on
    /// failure the frames it pushed are dropped and the head restored.
    fn parse_body(&mut self, context: u64) -> Route<usize> {
        let reset = self.head;
        let depth = self.frames.len();
        match self.parse(context, true) {
            Ok(parsed) => {
                self.recycle(parsed.items);
                Ok(self.head + 1)
            }
            Err(e) => {
                self.unwind(depth);
                self.head = reset;
                Err(e)
            }
        }
    }

    pub(super) fn handle_template_param(&mut self) -> Route<()> {
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

    pub(super) fn handle_template_param_value(&mut self) {
        let items = self.pop();
        self.emit_all(items);
        self.toggle_context(TEMPLATE_PARAM_KEY);
        self.add_context(TEMPLATE_PARAM_VALUE);
        self.emit_token();
    }

    pub(super) fn handle_template_end(&mut self) -> Route<Parsed> {
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
}

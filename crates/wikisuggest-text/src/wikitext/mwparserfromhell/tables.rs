//! Tables `{| … |}` with rows, cells and their attributes.

use super::*;

impl MwparserfromhellTokenizer<'_> {
    /// Attributes of a table, row or cell up to `end`.
    pub(super) fn handle_table_style(&mut self, end: u8) -> Route<()> {
        let mut data = TagData::new(td::ATTR_READY);
        loop {
            let at = self.head;
            let this = self.read(0);
            let can_exit = data.context & td::QUOTED == 0 || data.context & td::NOTE_SPACE != 0;
            if this == end && can_exit {
                if data.context & (td::ATTR_NAME | td::ATTR_VALUE) != 0 {
                    self.push_tag_buffer(&data);
                }
                return Ok(());
            } else if this == b'\0' || this == end {
                self.retry_unclosed_quote(&mut data)?;
                continue;
            }
            self.handle_tag_data(&mut data, this)?;
            self.advance_from(at);
        }
    }

    pub(super) fn parse_table(&mut self) {
        let reset = self.head;
        let depth = self.frames.len();
        self.head += 2;
        let style = self
            .push_checked(TABLE_OPEN)
            .and_then(|()| self.handle_table_style(b'\n'));
        if style.is_err() {
            self.unwind(depth);
            self.head = reset;
            self.emit_char();
            return;
        }
        self.discard();
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
                    self.discard();
                }
                self.head = reset;
                self.emit_char();
            }
        }
    }

    pub(super) fn handle_table_row(&mut self) -> Route<()> {
        self.head += 2;
        if !self.can_recurse() {
            self.emit_text(self.head - 2, self.head);
            self.head -= 1;
            return Ok(());
        }
        self.push_checked(TABLE_OPEN | TABLE_ROW_OPEN)?;
        self.handle_table_style(b'\n')?;
        self.discard();
        self.head += 1;
        self.parse(TABLE_OPEN | TABLE_ROW_OPEN, true)?;
        self.emit_token();
        self.head -= 1;
        Ok(())
    }

    pub(super) fn handle_table_cell(&mut self, markup_len: usize, line_context: u64) -> Route<()> {
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
            self.handle_table_style(b'|')?;
            self.discard();
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

    /// At a `|}` or `|-` on a new line: the open cell ends, else the open row does (its
    /// items handed back); `None` when neither is open.
    #[inline]
    fn end_cell_or_row(&mut self, cell_open: bool, ctx: u64) -> Option<Parsed> {
        if cell_open {
            return Some(self.handle_table_cell_end(false));
        }
        if ctx & TABLE_ROW_OPEN != 0 {
            return Some(Parsed {
                items: self.pop(),
                ..Parsed::default()
            });
        }
        None
    }

    pub(super) fn handle_table_cell_end(&mut self, reset_for_style: bool) -> Parsed {
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
    pub(super) fn handle_table_marker(
        &mut self,
        ctx: u64,
        this: u8,
        next: u8,
    ) -> Route<Option<Parsed>> {
        let cell_open = ctx & TABLE_CELL_OPEN != 0;
        if this == b'|' && next == b'|' && ctx & TABLE_TD_LINE != 0 {
            if cell_open {
                return Ok(Some(self.handle_table_cell_end(false)));
            }
            self.handle_table_cell(2, TABLE_TD_LINE)?;
        } else if (this == b'|' || this == b'!') && next == this && ctx & TABLE_TH_LINE != 0 {
            if cell_open {
                return Ok(Some(self.handle_table_cell_end(false)));
            }
            self.handle_table_cell(2, TABLE_TH_LINE)?;
        } else if this == b'|' && ctx & TABLE_CELL_STYLE != 0 {
            return Ok(Some(self.handle_table_cell_end(true)));
        } else if this == b'\n' && ctx & TABLE_CELL_LINE_CONTEXTS != 0 {
            self.set_context(ctx & !TABLE_CELL_LINE_CONTEXTS);
            self.emit_char();
        } else if self.has_leading_whitespace() {
            if this == b'|' && next == b'}' {
                if let Some(parsed) = self.end_cell_or_row(cell_open, ctx) {
                    return Ok(Some(parsed));
                }
                self.head += 2;
                return Ok(Some(Parsed {
                    items: self.pop(),
                    ..Parsed::default()
                }));
            } else if this == b'|' && next == b'-' {
                if let Some(parsed) = self.end_cell_or_row(cell_open, ctx) {
                    return Ok(Some(parsed));
                }
                self.handle_table_row()?;
            } else if this == b'|' {
                if cell_open {
                    return Ok(Some(self.handle_table_cell_end(false)));
                }
                self.handle_table_cell(1, TABLE_TD_LINE)?;
            } else if this == b'!' {
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

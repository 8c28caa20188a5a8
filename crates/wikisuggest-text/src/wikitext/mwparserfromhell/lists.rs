//! List markers, definition terms and horizontal rules.

use super::*;

impl MwparserfromhellTokenizer<'_> {
    pub(super) fn handle_list_marker(&mut self) {
        if self.read(0) == b';' {
            self.add_context(DL_TERM);
        }
        self.emit_node(NodeKind::Tag, self.head, self.head + 1, 0);
    }

    pub(super) fn handle_list(&mut self) {
        self.handle_list_marker();
        while matches!(self.read(1), b'#' | b'*' | b';' | b':') {
            self.head += 1;
            self.handle_list_marker();
        }
    }

    pub(super) fn handle_hr(&mut self) {
        let start = self.head;
        self.head += 3;
        while self.read(1) == b'-' {
            self.head += 1;
        }
        self.emit_node(NodeKind::Tag, start, self.head + 1, 0);
    }

    pub(super) fn handle_dl_term(&mut self) {
        self.toggle_context(DL_TERM);
        if self.read(0) == b':' {
            self.handle_list_marker();
        } else {
            self.emit_char();
        }
    }
}

//! The one dump reader: any bytes, as plain XML or as a `.bz2` / `.gz` file, with a small page
//! limit. It must never panic, every page it yields starts after the one before, and a page it
//! reads whole fits the limit.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use wikisuggest_dump::{DumpOptions, DumpReader, open};

const LIMIT: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let options = DumpOptions {
        max_page_bytes: LIMIT,
        all_revisions: selector & 4 != 0,
    };
    let mut written = None;
    let reader = match selector % 3 {
        0 => DumpReader::new(Box::new(std::io::Cursor::new(rest.to_vec())), Path::new("-"), &options),
        kind => {
            let name = if kind == 1 { "xml.bz2" } else { "xml.gz" };
            let file = written.insert(Written(
                std::env::temp_dir().join(format!("ws-fuzz-dump-{}.{name}", std::process::id())),
            ));
            if std::fs::write(&file.0, rest).is_err() {
                return;
            }
            open(&file.0, &options)
        }
    };
    let Ok(mut reader) = reader else {
        return;
    };
    let mut last: Option<u64> = None;
    while let Ok(Some(item)) = reader.next_item() {
        let offset = match &item {
            Ok(page) => {
                let held = page.text.len() + page.title.len();
                assert!(held <= LIMIT, "a page of {held} bytes passed a limit of {LIMIT}");
                page.offset
            }
            Err(error) => error.offset,
        };
        assert!(last.is_none_or(|l| offset > l), "pages out of order");
        assert!(offset < reader.offset());
        last = Some(offset);
    }
});

/// The file an input is written to, removed when the input is done (after its reader).
struct Written(std::path::PathBuf);

impl Drop for Written {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

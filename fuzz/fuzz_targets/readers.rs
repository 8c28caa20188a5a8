//! The published-dataset readers: pickles, mysqldump lines, and whole gzip dump files.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wikisuggest_engine::pickle;
use wikisuggest_engine::sqldump::{parse_insert, read_dump};
use wikisuggest_engine::tables::{TableKind, Tables};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    match selector % 4 {
        0 => {
            let _ = pickle::loads(rest);
        }
        1 => {
            let kind = TableKind::ALL[usize::from(selector / 4) % 4];
            let mut tables = Tables::default();
            let _ = tables.push_row(kind, "key".into(), rest);
        }
        2 => {
            if let Ok(rows) = parse_insert(rest, "lr_fuzz_anchors") {
                let mut tables = Tables::default();
                for row in rows {
                    let _ = tables.push_row(TableKind::Anchors, row.lookup, &row.value);
                }
            }
        }
        _ => {
            // A whole `.sql.gz` file: gzip members, bounded lines, INSERT rows.
            let path = std::env::temp_dir().join(format!("ws-fuzz-{}.sql.gz", std::process::id()));
            if std::fs::write(&path, rest).is_ok() {
                let _ = read_dump(&path, "lr_fuzz_redirects", |_| Ok(()));
            }
            let _ = std::fs::remove_file(&path);
        }
    }
});

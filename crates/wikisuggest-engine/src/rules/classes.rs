//! Wikidata classes of link targets: which pages are instances (P31) of which items, and the
//! classes production removed from its datasets when it trained them.
//!
//! The table on disk is tab-separated text, one page per line: a `title` column and a `p31`
//! column (items separated by `|`, `,` or spaces); with a header line the columns are found
//! by name (an `item` column, the page's own Wikidata id, may sit between them), without one
//! they are the first two. Blank lines and lines starting with `#` are skipped.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::{Error, Result};

/// Classes production removed from every wiki's candidate targets: disambiguation pages,
/// lists, dates and times, units and currencies, given names.
pub const PRODUCTION: &[&str] = &[
    // disambiguation page, Wikimedia list article
    "Q4167410",
    "Q13406463",
    // dates and times
    "Q3186692",
    "Q577",
    "Q573",
    "Q39911",
    "Q578",
    "Q36507",
    "Q47150325",
    "Q47018478",
    "Q205892",
    "Q14795564",
    "Q18340514",
    // units and currencies
    "Q1978718",
    "Q1790144",
    "Q1302471",
    "Q3647172",
    "Q2916980",
    "Q3550873",
    "Q8142",
    "Q27084",
    // given names
    "Q202444",
    "Q1243157",
    "Q3409032",
    "Q12308941",
    "Q11879590",
];

/// What production removed on enwiki besides [`PRODUCTION`]: countries and continents.
pub const ENWIKI_EXTRA: &[&str] = &["Q6256", "Q5107"];

/// The preset names accepted in `exclude_classes`, with what they stand for.
pub fn preset(name: &str) -> Option<Vec<&'static str>> {
    match name {
        "production" => Some(PRODUCTION.to_vec()),
        "production-enwiki" => Some(PRODUCTION.iter().chain(ENWIKI_EXTRA).copied().collect()),
        _ => None,
    }
}

/// `Q` followed by digits, the first not zero.
pub fn is_item(id: &str) -> bool {
    let digits = id.strip_prefix('Q').unwrap_or_default();
    !digits.is_empty() && !digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Longest line accepted in a table: a title (255 bytes) and a long list of items.
const MAX_LINE: usize = 64 * 1024;

/// Reads the table at `path`, keeping only the pages that are instances of an item `wanted`
/// says yes to: the rest would never exclude a link. Returns title → the first such item.
///
/// # Errors
/// [`Error::Io`] when the file cannot be read; [`Error::InvalidArgument`] naming the line of
/// a malformed row.
pub fn read_table(path: &Path, wanted: &dyn Fn(&str) -> bool) -> Result<HashMap<String, String>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = BufReader::new(file);
    let mut out = HashMap::new();
    let mut columns: Option<(usize, usize)> = None;
    let mut line = String::new();
    let mut number = 0u64;
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_line(&mut line)
            .map_err(|e| Error::io(path, e))?;
        if read == 0 {
            break;
        }
        number += 1;
        let bad = |reason: &str| {
            Error::InvalidArgument(format!("{}: line {number}: {reason}", path.display()))
        };
        if line.len() > MAX_LINE {
            return Err(bad("line too long"));
        }
        let row = line.trim_end_matches(['\n', '\r']);
        if row.trim().is_empty() || row.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = row.split('\t').collect();
        let (title_at, p31_at) = match columns {
            Some(found) => found,
            None => {
                let header = |name: &str| fields.iter().position(|f| f.trim() == name);
                let found = match (header("title"), header("p31")) {
                    (Some(t), Some(p)) => {
                        columns = Some((t, p));
                        continue;
                    }
                    _ => (0, 1),
                };
                columns = Some(found);
                found
            }
        };
        let (Some(title), Some(items)) = (fields.get(title_at), fields.get(p31_at)) else {
            return Err(bad("expected a title and its P31 items separated by a tab"));
        };
        let title = title.trim();
        if title.is_empty() {
            return Err(bad("empty title"));
        }
        for item in split_items(items) {
            if !is_item(item) {
                return Err(bad(&format!("{item:?} is not a Wikidata item id")));
            }
            if wanted(item) {
                out.entry(title.to_owned())
                    .or_insert_with(|| item.to_owned());
                break;
            }
        }
    }
    Ok(out)
}

/// The header line [`table_row`]'s tables start with.
pub const TABLE_HEADER: &str = "title\titem\tp31\n";

/// One line of a table (with its `\n`), in the form [`read_table`] reads back as written:
/// the title, the page's own item (empty if it has none) and its P31 items separated by `|`.
/// Nothing a value holds can start another cell or row: a title with a tab, a line break or
/// another control character, one starting with `#` (a comment line) or with space at either
/// end, and anything but item ids (`Q…`) among the items are refused, as is a row longer
/// than a table's line may be.
///
/// # Errors
/// [`Error::InvalidArgument`] saying which value cannot be written.
pub fn table_row(title: &str, item: &str, p31: &[String]) -> Result<String> {
    let bad = |what: String| Error::InvalidArgument(format!("classes table: {what}"));
    if title.trim().is_empty() || title.trim() != title {
        return Err(bad(format!(
            "the title {title:?} is empty or has space at an end"
        )));
    }
    if let Some(c) = title.chars().find(|c| c.is_control()) {
        return Err(bad(format!(
            "the title {title:?} holds the control character {c:?}"
        )));
    }
    if title.starts_with('#') {
        return Err(bad(format!("the title {title:?} starts with '#'")));
    }
    if !item.is_empty() && !is_item(item) {
        return Err(bad(format!(
            "{item:?} (the item of {title:?}) is not a Wikidata item id"
        )));
    }
    if let Some(bad_item) = p31.iter().find(|q| !is_item(q)) {
        return Err(bad(format!(
            "{bad_item:?} (a class of {title:?}) is not a Wikidata item id"
        )));
    }
    let line = format!("{title}\t{item}\t{}\n", p31.join("|"));
    if line.len() > MAX_LINE {
        return Err(bad(format!(
            "the row of {title:?} ({} items) is longer than the {MAX_LINE} bytes a line may be",
            p31.len()
        )));
    }
    Ok(line)
}

/// The items of a `p31` cell.
pub fn split_items(cell: &str) -> impl Iterator<Item = &str> {
    cell.split(|c: char| c == '|' || c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn presets_and_item_ids() {
        assert_eq!(preset("production").unwrap().len(), 26);
        let enwiki = preset("production-enwiki").unwrap();
        assert!(enwiki.contains(&"Q6256") && enwiki.contains(&"Q4167410"));
        assert!(preset("Q5").is_none());
        assert!(PRODUCTION.iter().all(|q| is_item(q)));
        for bad in ["Q", "Q0", "Q01", "q5", "P31", "Q5 ", ""] {
            assert!(!is_item(bad), "{bad:?}");
        }
    }

    #[test]
    fn rows_read_back_as_written() {
        let dir = std::env::temp_dir().join(format!("ws-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.tsv");
        let p31 = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let mut text = TABLE_HEADER.to_owned();
        text += &table_row("Neck", "Q9633", &p31(&["Q712378", "Q5"])).unwrap();
        text += &table_row("No item", "", &[]).unwrap();
        text += &table_row("Ünïcode: a story", "Q1", &p31(&["Q5"])).unwrap();
        std::fs::write(&path, &text).unwrap();
        let got = read_table(&path, &|q| q == "Q5").unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got["Neck"], "Q5");
        assert_eq!(got["Ünïcode: a story"], "Q5");
        std::fs::remove_dir_all(&dir).unwrap();
        // What would start another cell or row, or read back as something else, is refused.
        let injected = p31(&["Q5\nMammal\tQ1\tQ5"]);
        for (title, item, items) in [
            ("Neck", "Q9633", injected.clone()),
            ("Neck", "Q9633\tQ5", vec![]),
            ("Neck", "Q1\nMammal", vec![]),
            ("Neck\tQ1", "", vec![]),
            ("Neck\nMammal", "", vec![]),
            ("Neck\r", "", vec![]),
            ("#Neck", "", vec![]),
            (" Neck", "", vec![]),
            ("", "", vec![]),
            ("Neck", "", p31(&["Q5|Q6"])),
            ("Neck", "", p31(&["P31"])),
            ("Neck", "", vec!["Q1".to_owned(); MAX_LINE / 3]),
        ] {
            assert!(
                table_row(title, item, &items).is_err(),
                "{title:?} {item:?} {items:?}"
            );
        }
    }

    #[test]
    fn tables_with_and_without_a_header() {
        let dir = std::env::temp_dir().join(format!("ws-classes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let with = dir.join("with.tsv");
        std::fs::write(
            &with,
            "title\titem\tp31\n# comment\nParis\tQ90\tQ515|Q5119\nMercury\tQ1\tQ4167410\n\n",
        )
        .unwrap();
        let got = read_table(&with, &|q| q == "Q4167410" || q == "Q5119").unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got["Paris"], "Q5119");
        let without = dir.join("without.tsv");
        std::fs::write(&without, "Mercury\tQ4167410, Q5\nVenus\tQ2\n").unwrap();
        let got = read_table(&without, &|q| q == "Q4167410").unwrap();
        assert_eq!(got.keys().collect::<Vec<_>>(), ["Mercury"]);
        let bad = dir.join("bad.tsv");
        std::fs::write(&bad, "Mercury\tQ1\nVenus\tplanet\n").unwrap();
        let err = read_table(&bad, &|_| true).unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("planet"), "{err}");
        std::fs::write(&bad, "Mercury Q1\n").unwrap();
        assert!(read_table(&bad, &|_| true).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

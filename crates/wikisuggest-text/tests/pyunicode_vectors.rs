//! Compares `pyunicode` with values CPython 3.11 produced (see
//! `tools/gen_pyunicode.py`): every table boundary, every case mapping and
//! whole-string lowercasing with the Final_Sigma rule.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
use wikisuggest_text::pyunicode;

fn decode(hex: &str) -> String {
    hex.split_whitespace()
        .map(|h| char::from_u32(u32::from_str_radix(h, 16).unwrap()).unwrap())
        .collect()
}

#[test]
fn matches_cpython_311() {
    let data = include_str!("vectors/pyunicode.tsv");
    let predicates: [fn(char) -> bool; 8] = [
        pyunicode::is_space,
        pyunicode::is_alnum,
        pyunicode::is_alpha,
        pyunicode::is_decimal,
        pyunicode::is_digit,
        pyunicode::is_cased,
        pyunicode::is_case_ignorable,
        pyunicode::is_punctuation_category,
    ];
    let (mut chars, mut strings) = (0, 0);
    for line in data.lines().filter(|l| !l.starts_with('#')) {
        let fields: Vec<&str> = line.split('\t').collect();
        if fields[0] == "lower" {
            assert_eq!(
                pyunicode::lower(&decode(fields[1])),
                decode(fields[2]),
                "{line}"
            );
            strings += 1;
            continue;
        }
        let Some(c) = char::from_u32(u32::from_str_radix(fields[0], 16).unwrap()) else {
            continue; // surrogates cannot be Rust chars
        };
        for (k, pred) in predicates.iter().enumerate() {
            assert_eq!(
                pred(c),
                fields[1 + k] == "1",
                "predicate {k} of U+{:04X}",
                c as u32
            );
        }
        let s = c.to_string();
        assert_eq!(
            pyunicode::lower(&s),
            decode(fields[9]),
            "lower U+{:04X}",
            c as u32
        );
        assert_eq!(
            pyunicode::upper(&s),
            decode(fields[10]),
            "upper U+{:04X}",
            c as u32
        );
        assert_eq!(
            pyunicode::casefold(&s),
            decode(fields[11]),
            "casefold U+{:04X}",
            c as u32
        );
        chars += 1;
    }
    assert!(chars > 5000 && strings >= 10, "{chars} {strings}");
}

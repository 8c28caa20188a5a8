//! Parsing of the link routes' inputs with the service's semantics (Python's `int()` and
//! `float()` on query values, the first of a repeated key winning), into the options every
//! link recommendation takes over their one set of defaults, except that malformed values
//! give a 400 with a JSON body instead of a 500.

use wikisuggest_records::params::LinkOptions;

/// Query parameters of both link operations, as given.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LinkQuery {
    pub language_code: Option<String>,
    pub revision: Option<String>,
    pub threshold: Option<String>,
    pub max_recommendations: Option<String>,
    /// Repeated keys: `?sections_to_exclude=A&sections_to_exclude=B`.
    pub sections_to_exclude: Vec<String>,
}

impl LinkQuery {
    /// The first value of each scalar key wins, as in Werkzeug's `args.get`.
    pub fn parse(raw: &str) -> Self {
        let mut query = Self::default();
        for (key, value) in form_urlencoded::parse(raw.as_bytes()) {
            let slot = match key.as_ref() {
                "language_code" => &mut query.language_code,
                "revision" => &mut query.revision,
                "threshold" => &mut query.threshold,
                "max_recommendations" => &mut query.max_recommendations,
                "sections_to_exclude" => {
                    query.sections_to_exclude.push(value.into_owned());
                    continue;
                }
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(value.into_owned());
            }
        }
        query
    }

    /// `revision`: 0 (the latest) when absent, else a revision id. Werkzeug's `type=int`
    /// turns a value that is no integer (`1|2|3`) into the default, so production fetches
    /// the latest revision in its place; here it is refused, as is a negative one or one
    /// beyond 64 bits.
    pub fn revision(&self) -> Result<i64, String> {
        let Some(text) = self.revision.as_deref() else {
            return Ok(0);
        };
        py_int(text)
            .filter(|&id| id >= 0)
            .ok_or_else(|| format!("Invalid value for revision: {text:?} (a revision id)"))
    }

    /// The options of the request over their defaults: the language is `domain` unless the
    /// query names one, and `sections_to_exclude` are the query's (a body's list replaces
    /// them). Checked as the service checks them: any number is a threshold (upstream
    /// compares against it), but not NaN.
    pub fn options(&self, domain: &str) -> Result<LinkOptions, String> {
        let defaults = LinkOptions::default();
        let threshold = match self.threshold.as_deref() {
            None => defaults.threshold,
            Some(text) => {
                py_float(text).ok_or_else(|| format!("Invalid value for threshold: {text:?}"))?
            }
        };
        let max_recommendations = match self.max_recommendations.as_deref() {
            None => defaults.max_recommendations,
            Some(text) => py_int(text)
                .ok_or_else(|| format!("Invalid value for max_recommendations: {text:?}"))?,
        };
        let options = LinkOptions {
            language_code: Some(
                self.language_code
                    .clone()
                    .unwrap_or_else(|| domain.to_owned()),
            ),
            threshold,
            max_recommendations,
            sections_to_exclude: self.sections_to_exclude.clone(),
        };
        options.validate_as_service().map_err(|e| e.to_string())?;
        Ok(options)
    }
}

/// The title the engine reads for the path value (already percent-decoded once by the
/// router): production's normalisation (decoded again as `urllib.parse.unquote` does,
/// stripped as Python's `str.strip` strips, first letter upper-cased as `str.upper`,
/// underscores as spaces, cut at `#`), then MediaWiki's title rules, the one check every
/// front end applies to the title it reads.
pub fn normalise_title(path_value: &str) -> Result<String, String> {
    wikisuggest_text::title::normalise_and_check_title(path_value)
        .map_err(|e| format!("Invalid page title: {e}"))
}

/// Python's `int(str)`: surrounding whitespace, a sign, digits with single underscores
/// between them. `None` when Python would raise (or the value does not fit in 64 bits).
pub fn py_int(text: &str) -> Option<i64> {
    let cleaned = without_digit_underscores(text.trim())?;
    let digits = cleaned.strip_prefix(['+', '-']).unwrap_or(&cleaned);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    cleaned.parse().ok()
}

/// Python's `float(str)`: also `inf`, `infinity`, `nan` (any case, signed), exponents and
/// digit underscores.
pub fn py_float(text: &str) -> Option<f64> {
    let cleaned = without_digit_underscores(text.trim())?;
    let body = cleaned.strip_prefix(['+', '-']).unwrap_or(&cleaned);
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return cleaned.to_ascii_lowercase().parse().ok();
    }
    // Rust accepts a few spellings Python does not; only digits, '.', 'e' and signs pass.
    let plain = body
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    if !plain || !body.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    cleaned.parse().ok()
}

/// Drops underscores that sit between two digits; any other underscore makes it invalid.
fn without_digit_underscores(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    for (i, ch) in text.char_indices() {
        if ch == '_' {
            let before = i > 0 && bytes[i - 1].is_ascii_digit();
            let after = bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !(before && after) {
                return None;
            }
        } else {
            out.push(ch);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalised(raw: &str) -> String {
        normalise_title(raw).unwrap_or_else(|e| e)
    }

    #[test]
    fn titles_are_decoded_twice_and_normalised() {
        assert_eq!(normalised("%C5%A0koda_auto%20"), "Škoda auto");
        assert_eq!(normalised("AC/DC"), "AC/DC");
        assert_eq!(normalised("élan_vital#History"), "Élan vital");
        assert_eq!(normalised("%ZZbad"), "%ZZbad");
    }

    /// Titles on which Rust's `trim`/`to_uppercase` and CPython's `strip`/`upper` differ.
    #[test]
    fn titles_normalise_with_python_semantics() {
        let cases = [
            // U+001C..U+001F are whitespace to `str.strip`, not to `str::trim`.
            ("\u{1f}cat", "Cat"),
            ("cat\u{1c}\u{1d}\u{1e}", "Cat"),
            // U+0085 and U+00A0 are stripped by both; U+200B by neither.
            ("\u{85}\u{a0}dog", "Dog"),
            ("\u{200b}x", "\u{200b}x"),
            // `str.upper` of a titlecase digraph, and of ß and ﬁ (two letters).
            ("ǆemal", "Ǆemal"),
            ("ßtraße", "SStraße"),
            ("ﬁx", "FIx"),
        ];
        for (raw, want) in cases {
            assert_eq!(normalised(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn titles_mediawiki_would_refuse_are_refused() {
        for bad in [
            "A|B",
            "Cat\u{7f}",
            "Cat\u{1f}Dog",
            "[[Cat]]",
            "A{b}",
            "<b>",
            "a\u{fffd}",
            "%C3",
            // A percent escape split by a non-ASCII character decodes as two halves, each
            // U+FFFD, which MediaWiki refuses in a title.
            "%C3é%A9",
            "  ",
            "#Fragment",
        ] {
            assert!(normalise_title(bad).is_err(), "{bad:?}");
        }
        for good in [
            "Cat",
            "\u{1f}Cat",
            "AC/DC",
            "Foo#Bar",
            "Škoda auto",
            "C++",
            "100%",
        ] {
            assert!(normalise_title(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn python_numbers() {
        assert_eq!(py_int(" 1_000 "), Some(1000));
        assert_eq!(py_int("-3"), Some(-3));
        for bad in ["2.0", "1__0", "_1", "", "+", "0x10", "99999999999999999999"] {
            assert_eq!(py_int(bad), None, "{bad}");
        }
        assert_eq!(py_float(" 0.25\n"), Some(0.25));
        assert_eq!(py_float("1e-1"), Some(0.1));
        assert_eq!(py_float("1_0.5"), Some(10.5));
        assert_eq!(py_float("-Infinity"), Some(f64::NEG_INFINITY));
        assert!(py_float("NaN").is_some_and(f64::is_nan));
        for bad in ["", "abc", "1,5", "0x1p3", "e5", "."] {
            assert_eq!(py_float(bad), None, "{bad}");
        }
    }

    #[test]
    fn query_defaults_and_repeats() {
        let q = LinkQuery::parse("sections_to_exclude=%25LEAD%25&sections_to_exclude=See+also");
        assert_eq!(q.sections_to_exclude, ["%LEAD%", "See also"]);
        let options = q.options("simple").unwrap();
        assert_eq!(
            options,
            LinkOptions {
                language_code: Some("simple".into()),
                sections_to_exclude: vec!["%LEAD%".into(), "See also".into()],
                ..LinkOptions::default()
            }
        );
        assert_eq!(q.revision(), Ok(0));
        let q = LinkQuery::parse("revision=abc&threshold=x&max_recommendations=2.0");
        assert!(q.revision().is_err());
        assert!(q.options("en").is_err());
        for bad in ["threshold=x", "max_recommendations=2.0", "threshold=nan"] {
            assert!(LinkQuery::parse(bad).options("en").is_err(), "{bad}");
        }
        // Upstream's answers for what upstream reads: no range check.
        let q = LinkQuery::parse("threshold=1.5&max_recommendations=-1&language_code=fr");
        let options = q.options("en").unwrap();
        assert_eq!((options.threshold, options.max_recommendations), (1.5, -1));
        assert_eq!(options.language_code.as_deref(), Some("fr"));
        assert_eq!(
            LinkQuery::parse("revision=12&revision=13").revision(),
            Ok(12)
        );
        for bad in ["1|2|3", "-1", "99999999999999999999", "", "1.0"] {
            let q = LinkQuery::parse(&format!("revision={}", bad.replace('|', "%7C")));
            assert!(q.revision().is_err(), "{bad}");
        }
        assert_eq!(LinkQuery::parse("revision=0").revision(), Ok(0));
    }
}

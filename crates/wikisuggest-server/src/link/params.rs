//! Parsing of the link routes' inputs with the service's semantics (link-engine.md §6.3),
//! except that malformed values give a 400 with a JSON body instead of a 500.

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

    pub fn threshold(&self) -> Result<f64, String> {
        match self.threshold.as_deref() {
            None => Ok(0.5),
            Some(text) => {
                py_float(text).ok_or_else(|| format!("Invalid value for threshold: {text:?}"))
            }
        }
    }

    pub fn max_recommendations(&self) -> Result<i64, String> {
        match self.max_recommendations.as_deref() {
            None => Ok(15),
            Some(text) => py_int(text)
                .ok_or_else(|| format!("Invalid value for max_recommendations: {text:?}")),
        }
    }
}

/// The title echoed and used by the engine: the path value (already percent-decoded once by
/// the router) normalised as the engine normalises titles (§2.4.1, §6.2): decoded again as
/// `urllib.parse.unquote` does, stripped of what Python's `str.strip` strips (U+001C–U+001F
/// included), first letter upper-cased as `str.upper`, underscores turned into spaces,
/// anything from `#` on dropped. One function for both front ends: the Python engine and
/// the server normalise every title alike.
pub fn normalise_title(path_value: &str) -> String {
    wikisuggest_text::title::normalise_title(path_value)
}

/// Refuses a title that a wiki's Action API would read as something other than one page
/// title: `|` separates several titles, a leading U+001F announces another separator, and
/// control characters, `[]{}<>` and U+FFFD are not legal in MediaWiki titles.
pub fn check_fetchable_title(raw: &str) -> Result<(), String> {
    let illegal = raw.chars().find(|&c| {
        c.is_control() || matches!(c, '|' | '[' | ']' | '{' | '}' | '<' | '>' | '\u{fffd}')
    });
    match illegal {
        Some(c) => Err(format!(
            "Invalid page title: {c:?} is not allowed in MediaWiki titles"
        )),
        None if normalise_title(raw).is_empty() => Err("Invalid page title: empty".into()),
        None => Ok(()),
    }
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

    #[test]
    fn titles_are_decoded_twice_and_normalised() {
        assert_eq!(normalise_title("%C5%A0koda_auto%20"), "Škoda auto");
        assert_eq!(normalise_title("AC/DC"), "AC/DC");
        assert_eq!(normalise_title("élan_vital#History"), "Élan vital");
        assert_eq!(normalise_title("  "), "");
        assert_eq!(normalise_title("%ZZbad"), "%ZZbad");
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
            // A percent escape split by a non-ASCII character decodes as two halves.
            ("%C3é%A9", "\u{fffd}é\u{fffd}"),
        ];
        for (raw, want) in cases {
            assert_eq!(normalise_title(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn titles_the_action_api_would_misread_are_refused() {
        for bad in [
            "A|B",
            "\u{1f}Cat",
            "Cat\u{7f}",
            "[[Cat]]",
            "A{b}",
            "<b>",
            "a\u{fffd}",
            "  ",
        ] {
            assert!(check_fetchable_title(bad).is_err(), "{bad:?}");
        }
        for good in ["Cat", "AC/DC", "Foo#Bar", "Škoda auto", "C++", "100%"] {
            assert!(check_fetchable_title(good).is_ok(), "{good:?}");
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
        assert_eq!(
            (q.threshold(), q.max_recommendations(), q.revision()),
            (Ok(0.5), Ok(15), Ok(0))
        );
        let q = LinkQuery::parse("revision=abc&threshold=x&max_recommendations=2.0");
        assert!(q.revision().is_err());
        assert!(q.threshold().is_err() && q.max_recommendations().is_err());
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

//! Parsing of the link routes' inputs with the service's semantics (link-engine.md §6.3),
//! except that malformed values give a 400 with a JSON body instead of a 500.

use percent_encoding::percent_decode_str;

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

    /// `revision`: a value that is not an integer silently becomes 0 (Werkzeug's `type=int`).
    pub fn revision(&self) -> i64 {
        self.revision.as_deref().and_then(py_int).unwrap_or(0)
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
/// the router) is decoded again, stripped, its first letter upper-cased, underscores turned
/// into spaces and anything from `#` on dropped (§2.4.1, §6.2).
pub fn normalise_title(path_value: &str) -> String {
    let decoded = percent_decode_str(path_value).decode_utf8_lossy();
    let stripped = decoded.trim();
    let mut chars = stripped.chars();
    let mut title: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    };
    title = title.replace('_', " ");
    if let Some(hash) = title.find('#') {
        title.truncate(hash);
    }
    title
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
            (Ok(0.5), Ok(15), 0)
        );
        let q = LinkQuery::parse("revision=abc&threshold=x&max_recommendations=2.0");
        assert_eq!(q.revision(), 0);
        assert!(q.threshold().is_err() && q.max_recommendations().is_err());
        assert_eq!(LinkQuery::parse("revision=12&revision=13").revision(), 12);
    }
}

//! Encoding of path segments and query strings.
//!
//! We encode more than RFC 3986 strictly requires, because the servers behind these URLs
//! (gateway, Flask, FastAPI) decode differently: `+` becomes a space in some of them, `%` is
//! decoded twice by the link service, `/` would split a title into two path segments.

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};

/// Characters escaped in a page-title path segment. Sub-delimiters that titles use a lot
/// (`: ( ) , ' ! * $ @`) stay readable; everything with a meaning somewhere does not.
const TITLE_SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'&')
    .add(b'+')
    .add(b'/')
    .add(b';')
    .add(b'<')
    .add(b'=')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Query keys and values: everything but RFC 3986 unreserved characters is escaped, so
/// `+` travels as `%2B` (a literal `+` decodes to a space) and `%LEAD%` as `%25LEAD%25`.
const QUERY_COMPONENT: &AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A MediaWiki page title as one path segment: surrounding white space trimmed, spaces as
/// underscores (MediaWiki's canonical URL form), then percent-encoded (non-ASCII as UTF-8).
/// What is trimmed is what production's title normalisation strips (CPython's `str.strip`,
/// which drops U+001C..U+001F too): an underscore made of a space it would have stripped
/// would stay in the title as a space.
pub fn title_segment(title: &str) -> String {
    let canonical = wikisuggest_text::pyunicode::strip(title).replace(' ', "_");
    utf8_percent_encode(&canonical, TITLE_SEGMENT).to_string()
}

/// One path segment that is not a title (project, domain).
pub fn plain_segment(value: &str) -> String {
    utf8_percent_encode(value, QUERY_COMPONENT).to_string()
}

/// A query string builder; keys may repeat (that is how arrays are sent).
#[derive(Debug, Default, Clone)]
pub struct Query(Vec<(String, String)>);

impl Query {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, key: &str, value: impl Into<String>) -> &mut Self {
        self.0.push((key.to_owned(), value.into()));
        self
    }

    /// Pushes `key` when `value` is given.
    pub fn push_some(&mut self, key: &str, value: Option<impl Into<String>>) -> &mut Self {
        if let Some(value) = value {
            self.push(key, value);
        }
        self
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn pairs(&self) -> &[(String, String)] {
        &self.0
    }

    /// `k=v&k=v`, without the leading `?`.
    pub fn encode(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    utf8_percent_encode(k, QUERY_COMPONENT),
                    utf8_percent_encode(v, QUERY_COMPONENT)
                )
            })
            .collect::<Vec<_>>()
            .join("&")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_is_one_safe_segment() {
        assert_eq!(title_segment("AC/DC"), "AC%2FDC");
        assert_eq!(title_segment(" Albert Einstein "), "Albert_Einstein");
        assert_eq!(title_segment("\u{1c} Dog \u{1f}"), "Dog");
        assert_eq!(
            title_segment("What? #1 100% A+B & C"),
            "What%3F_%231_100%25_A%2BB_%26_C"
        );
        assert_eq!(title_segment("Škoda"), "%C5%A0koda");
        assert_eq!(title_segment("東京"), "%E6%9D%B1%E4%BA%AC");
        assert_eq!(
            title_segment("Talk:Foo (bar), 'baz'!"),
            "Talk:Foo_(bar),_'baz'!"
        );
        // An already-encoded-looking title is encoded again, not passed through.
        assert_eq!(title_segment("%20"), "%2520");
    }

    #[test]
    fn query_repeats_keys_and_escapes_plus() {
        let mut q = Query::new();
        q.push("sections_to_exclude", "%LEAD%")
            .push("sections_to_exclude", "See also")
            .push("topic", "Women+Space|Physics")
            .push("seed", "Ä|B");
        assert_eq!(
            q.encode(),
            "sections_to_exclude=%25LEAD%25&sections_to_exclude=See%20also&topic=Women%2BSpace%7CPhysics&seed=%C3%84%7CB"
        );
    }
}

//! Seed titles as MediaWiki's `Title::newFromText` reads them in the main namespace:
//! underscores are spaces, runs of spaces collapse, the ends are trimmed, the first letter is
//! upper case (`$wgCapitalLinks`, on for Wikipedias), a `#fragment` is dropped.

/// The key a title is indexed and looked up under; `None` for a title with nothing in it.
pub fn title_key(title: &str) -> Option<String> {
    let title = title.split('#').next().unwrap_or("");
    let mut out = String::with_capacity(title.len());
    let mut pending_space = false;
    for c in title.chars() {
        if c == '_' || c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        if out.is_empty() {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::title_key;

    #[test]
    fn keys_read_titles_as_mediawiki_does() {
        assert_eq!(title_key("moon").as_deref(), Some("Moon"));
        assert_eq!(
            title_key("  Solar_system  ").as_deref(),
            Some("Solar system")
        );
        assert_eq!(title_key("a  b__c").as_deref(), Some("A b c"));
        assert_eq!(title_key("éclair#History").as_deref(), Some("Éclair"));
        assert_eq!(title_key(" _ "), None);
        assert_eq!(title_key("#only"), None);
    }
}

//! A source wiki's names as the dumps use them, and production's "already exists in the
//! target" rule.

/// Language code → the code its wiki and its interlanguage links use (the service's
/// `utils/language_codes.py`, taken from ContentTranslation).
pub const DOMAIN_MAPPING: [(&str, &str); 10] = [
    ("be-tarask", "be-x-old"),
    ("bho", "bh"),
    ("gsw", "als"),
    ("lzh", "zh-classical"),
    ("nan", "zh-min-nan"),
    ("nb", "no"),
    ("rup", "roa-rup"),
    ("sgs", "bat-smg"),
    ("vro", "fiu-vro"),
    ("yue", "zh-yue"),
];

/// The interlanguage-link code of a language (`nb` → `no`, others unchanged).
pub fn link_code(language: &str) -> &str {
    DOMAIN_MAPPING
        .iter()
        .find(|(l, _)| *l == language)
        .map_or(language, |(_, d)| d)
}

/// Production's missing test: the page has no interlanguage link with the target's code as
/// links store it (`nb` → `no`). The service's own check also accepts the unmapped code, but
/// it only sees the links MediaWiki returns for `lllang=<mapped code>`, so only that code
/// counts (a link stored as `be-tarask` does not make a page present in `be-tarask`).
pub fn is_missing<'a>(target: &str, mut links: impl Iterator<Item = &'a str>) -> bool {
    let mapped = link_code(target);
    !links.any(|l| l == mapped)
}

/// The subdomain of a Wikipedia's database name (`enwiki` → `en`, `zh_min_nanwiki` →
/// `zh-min-nan`, `be_x_oldwiki` → `be-tarask`): the records' wiki-name rule.
pub fn subdomain(wiki_id: &str) -> String {
    let domain = wikisuggest_records::wiki::domain(wiki_id);
    match domain.strip_suffix(".wikipedia.org") {
        Some(subdomain) => subdomain.to_owned(),
        None => domain,
    }
}

/// The project code of a Wikipedia in the pageview files (`en.wikipedia`).
pub fn pageview_project(wiki_id: &str) -> String {
    format!("{}.wikipedia", subdomain(wiki_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_checks_both_codes() {
        assert!(is_missing("sw", ["de", "fr"].into_iter()));
        assert!(!is_missing("sw", ["de", "sw"].into_iter()));
        assert!(!is_missing("nb", ["no"].into_iter()));
        // MediaWiki answers `lllang=no` only with links stored as `no`.
        assert!(is_missing("nb", ["nb"].into_iter()));
        assert!(is_missing("be-tarask", ["be-tarask"].into_iter()));
        assert!(!is_missing("be-tarask", ["be-x-old"].into_iter()));
        assert_eq!(subdomain("zh_min_nanwiki"), "zh-min-nan");
        assert_eq!(pageview_project("enwiki"), "en.wikipedia");
        assert_eq!(subdomain("be_x_oldwiki"), "be-tarask");
    }
}

//! The one rule between a Wikipedia's names: its wiki id (the database name, `frwiki`,
//! `zh_min_nanwiki`), its language code (`fr`, `zh_min_nan`) and its domain
//! (`fr.wikipedia.org`, `zh-min-nan.wikipedia.org`). Datasets, the dataset builder, the
//! published-dataset fetcher, the local engine and the reference server all read a wiki's
//! names from here, and the extension module exports the rule to Python.

use crate::invalid::{Checked, InvalidParameter};

/// Language subdomains whose database name is not the subdomain with `-` turned into `_`
/// (the subdomain first, then the database name).
const SPECIAL: [(&str, &str); 2] = [("be-tarask", "be_x_oldwiki"), ("be-x-old", "be_x_oldwiki")];

/// The wiki id of a Wikipedia as users write it: its database name (`frwiki`), its language
/// (`fr`, `FR`, `zh-min-nan`, `be-tarask`), its domain (`fr.wikipedia.org`, `fr.wikipedia`) or
/// a URL on it. Only the spelling is checked: whether such a wiki exists is not known here.
///
/// # Errors
/// [`InvalidParameter`] (named `wiki`) for a name that is no Wikipedia's.
pub fn wiki_id(name: &str) -> Checked<String> {
    let lowered = name.trim().to_lowercase();
    let mut text = lowered.as_str();
    if let Some((_, rest)) = text.split_once("://") {
        text = rest;
    }
    text = text.split('/').next().unwrap_or_default();
    if let Some(host) = text.strip_suffix(".org") {
        match host.split('.').collect::<Vec<_>>().as_slice() {
            [language, "wikipedia"] => text = language,
            _ => {
                return Err(InvalidParameter::new(
                    "wiki",
                    format!(
                        "{name:?} is not a Wikipedia; the published datasets are per Wikipedia \
                         language (e.g. 'frwiki', 'fr' or 'fr.wikipedia.org')"
                    ),
                ));
            }
        }
    } else if let Some(language) = text.strip_suffix(".wikipedia") {
        text = language;
    }
    if let Some((_, id)) = SPECIAL.iter().find(|(sub, _)| *sub == text) {
        return Ok((*id).to_owned());
    }
    let mut id = text.replace('-', "_");
    if !id.ends_with("wiki") {
        id.push_str("wiki");
    }
    let spelt = id
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !spelt || id == "wiki" {
        return Err(InvalidParameter::new(
            "wiki",
            format!("{name:?} is not a wiki id (e.g. 'frwiki', 'fr' or 'fr.wikipedia.org')"),
        ));
    }
    Ok(id)
}

/// The language code of a Wikipedia's wiki id, as the link service takes it by default: the
/// id without its `wiki` suffix, underscores kept (`enwiki` → `en`, `bat_smgwiki` →
/// `bat_smg`, `simplewiki` → `simple`). The tokenizers know these spellings.
pub fn language_code(wiki_id: &str) -> &str {
    wiki_id.strip_suffix("wiki").unwrap_or(wiki_id)
}

/// The domain of a Wikipedia's wiki id: `frwiki` → `fr.wikipedia.org`, `bat_smgwiki` →
/// `bat-smg.wikipedia.org`, `be_x_oldwiki` → `be-tarask.wikipedia.org`.
pub fn domain(wiki_id: &str) -> String {
    let subdomain = SPECIAL.iter().find(|(_, id)| *id == wiki_id).map_or_else(
        || language_code(wiki_id).replace('_', "-"),
        |(sub, _)| (*sub).to_owned(),
    );
    format!("{subdomain}.wikipedia.org")
}

/// The Action API of a Wikipedia's wiki id (`https://fr.wikipedia.org/w/api.php`).
pub fn api_url(wiki_id: &str) -> String {
    format!("https://{}/w/api.php", domain(wiki_id))
}

/// The wiki id the link service reads from a request's path: `wikipedia`/`simple` →
/// `simplewiki`, any other project `domain + project` (`en`/`wiktionary` → `enwiktionary`).
/// The domain is used verbatim, as the service uses it: `zh-yue` gives `zh-yuewiki`.
pub fn wiki_id_of_path(project: &str, domain: &str) -> String {
    if project == "wikipedia" {
        format!("{domain}wiki")
    } else {
        format!("{domain}{project}")
    }
}

/// The `project/domain` pair of a Wikipedia's wiki id, as the service lists the pairs it
/// serves (`wikipedia/en`).
pub fn project_domain_pair(wiki_id: &str) -> String {
    format!("wikipedia/{}", language_code(wiki_id))
}

/// Language codes and wiki subdomains as parameters: ASCII letters, digits, `-` and `_`
/// (`en`, `simple`, `be-tarask`, `bat_smg`, `zh-min-nan`).
pub fn check_code(name: &str, value: &str) -> Checked {
    if value.is_empty() {
        return Err(InvalidParameter::new(name, "must not be empty"));
    }
    if !value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(InvalidParameter::new(
            name,
            format!(
                "{value:?} is not a language code or wiki subdomain (letters, digits, '-', '_')"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn wiki_ids_as_users_write_them() {
        for (given, want) in [
            ("frwiki", "frwiki"),
            ("fr", "frwiki"),
            ("FR", "frwiki"),
            (" fr ", "frwiki"),
            ("fr.wikipedia.org", "frwiki"),
            ("https://fr.wikipedia.org/wiki/Paris", "frwiki"),
            ("zh-min-nan", "zh_min_nanwiki"),
            ("zh-min-nan.wikipedia.org", "zh_min_nanwiki"),
            ("be-tarask", "be_x_oldwiki"),
            ("be-tarask.wikipedia.org", "be_x_oldwiki"),
            ("simple", "simplewiki"),
            ("en.wikipedia", "enwiki"),
            ("bat_smgwiki", "bat_smgwiki"),
        ] {
            assert_eq!(wiki_id(given).unwrap(), want, "{given}");
        }
        for bad in [
            "",
            "commons.wikimedia.org",
            "a b",
            "../etc",
            "wiki",
            "fr.wiktionary.org",
            "é",
        ] {
            assert_eq!(wiki_id(bad).unwrap_err().name, "wiki", "{bad}");
        }
    }

    #[test]
    fn names_of_a_wiki() {
        for (id, language, host) in [
            ("enwiki", "en", "en.wikipedia.org"),
            ("simplewiki", "simple", "simple.wikipedia.org"),
            ("bat_smgwiki", "bat_smg", "bat-smg.wikipedia.org"),
            ("zh_min_nanwiki", "zh_min_nan", "zh-min-nan.wikipedia.org"),
            ("be_x_oldwiki", "be_x_old", "be-tarask.wikipedia.org"),
        ] {
            assert_eq!(language_code(id), language);
            assert_eq!(domain(id), host);
            // The domain reads back as the same wiki.
            assert_eq!(wiki_id(&domain(id)).unwrap(), id);
        }
        assert_eq!(
            api_url("bat_smgwiki"),
            "https://bat-smg.wikipedia.org/w/api.php"
        );
        assert_eq!(project_domain_pair("bat_smgwiki"), "wikipedia/bat_smg");
    }

    #[test]
    fn the_services_path_rule() {
        assert_eq!(wiki_id_of_path("wikipedia", "simple"), "simplewiki");
        assert_eq!(wiki_id_of_path("wikipedia", "bat_smg"), "bat_smgwiki");
        assert_eq!(wiki_id_of_path("wikipedia", "zh-yue"), "zh-yuewiki");
        assert_eq!(wiki_id_of_path("wiktionary", "en"), "enwiktionary");
        // The path of a wiki's own pair leads back to it.
        let pair = project_domain_pair("bat_smgwiki");
        let (project, dom) = pair.split_once('/').unwrap();
        assert_eq!(wiki_id_of_path(project, dom), "bat_smgwiki");
    }

    #[test]
    fn codes() {
        for good in ["en", "be-tarask", "bat_smg", "zh-min-nan"] {
            check_code("x", good).unwrap();
        }
        for bad in ["", "en/x", "a b", "é"] {
            assert!(check_code("x", bad).is_err(), "{bad}");
        }
    }
}

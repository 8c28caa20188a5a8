//! Wikimedia's User-Agent policy: every client names itself and how to reach its operator.
//!
//! Since the 2026 rate limits the contact must identify the *operator*: a library-wide contact
//! would put every user of the library on one shared rate-limit counter. So we refuse to build
//! a client without one, and append our own product token after the user's.

use crate::error::{Error, Result};

const EXAMPLE: &str = "MyTool/1.0 (https://example.org/MyTool; operator@example.org)";

/// Check `user_agent` and return the header value to send: the user's string followed by
/// `wikisuggest/<version>`.
pub fn compose(user_agent: &str) -> Result<String> {
    let ua = user_agent.trim();
    if ua.is_empty() {
        return Err(missing("no User-Agent was given"));
    }
    if ua.chars().any(|c| c.is_control()) {
        return Err(Error::Config(
            "user_agent must not contain control characters".to_owned(),
        ));
    }
    let (product, rest) = ua.split_once(char::is_whitespace).unwrap_or((ua, ""));
    let has_version = product
        .split_once('/')
        .is_some_and(|(name, version)| !name.is_empty() && !version.is_empty());
    if !has_version {
        return Err(missing(&format!(
            "{product:?} does not start with <name>/<version>"
        )));
    }
    if !contact_in(rest) {
        return Err(missing(
            "it has no operator contact (an e-mail address or URL in parentheses)",
        ));
    }
    let own = format!("wikisuggest/{}", crate::VERSION);
    if ua.split_whitespace().any(|token| token == own) {
        Ok(ua.to_owned())
    } else {
        Ok(format!("{ua} {own}"))
    }
}

fn missing(why: &str) -> Error {
    Error::Config(format!(
        "a User-Agent naming your application and its operator is required by Wikimedia's \
         User-Agent policy, and {why}; pass user_agent=\"{EXAMPLE}\" (or set WIKISUGGEST_USER_AGENT)"
    ))
}

/// True when some parenthesised group holds something one can reach: an e-mail address,
/// a URL, a wiki user page or a domain name.
fn contact_in(text: &str) -> bool {
    let mut rest = text;
    while let Some(open) = rest.find('(') {
        let after = &rest[open + 1..];
        let Some(close) = after.find(')') else {
            return false;
        };
        let group = &after[..close];
        let reachable = group.split([';', ',', ' ']).any(|part| {
            let part = part.trim();
            let domain_like = part.contains('.')
                && !part.starts_with('.')
                && !part.ends_with('.')
                && part
                    .chars()
                    .all(|c| c.is_alphanumeric() || "-._/:~".contains(c));
            (part.contains('@') && part.len() > 2)
                || part.contains("://")
                || part.starts_with("User:")
                || domain_like
        });
        if reachable {
            return true;
        }
        rest = &after[close + 1..];
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_policy_shapes_and_appends_library() {
        let ua = compose("LinkBot/2.1 (https://en.wikipedia.org/wiki/User:Example)").unwrap();
        assert_eq!(
            ua,
            format!(
                "LinkBot/2.1 (https://en.wikipedia.org/wiki/User:Example) wikisuggest/{}",
                crate::VERSION
            )
        );
        compose("Notebook/0.1 (me@example.org)").unwrap();
        compose("Notebook/0.1 (User:Example; research)").unwrap();
        compose("Notebook/0.1 (example.org) requests/2").unwrap();
    }

    #[test]
    fn refuses_without_contact_or_version() {
        for bad in [
            "",
            "   ",
            "python-requests/2.31",
            "MyTool (me@example.org)",
            "MyTool/1.0 (no contact here)",
            "MyTool/1.0 (me@example.org",
            "MyTool/1.0\n(me@example.org)",
        ] {
            let err = compose(bad).unwrap_err().to_string();
            assert!(
                err.contains("User-Agent") || err.contains("control"),
                "{bad:?}: {err}"
            );
        }
    }

    #[test]
    fn library_token_not_duplicated() {
        let own = format!("A/1 (a@b.org) wikisuggest/{}", crate::VERSION);
        assert_eq!(compose(&own).unwrap(), own);
    }
}

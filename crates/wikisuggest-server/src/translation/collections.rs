//! The page-collection routes beside operation 3 (`/translation/page-collections`,
//! `…/page-collection-groups`, `…/page-collection-membership`), over the collections of the
//! catalogs (`collections` part).

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value, json};
use wikisuggest_translation::collections::Collection;

use super::catalogs::TranslationCatalogs;
use super::params::{RawParams, known_language, missing, value_error};

fn listed(data: &TranslationCatalogs) -> &[Collection] {
    data.collections
        .as_ref()
        .map(|c| c.list.as_slice())
        .unwrap_or_default()
}

/// What a listing says of a collection (`PageCollectionResponse`).
fn describe(collection: &Collection) -> Value {
    json!({
        "name": collection.name,
        "description": collection.description,
        "end_date": collection.end_date,
        "articles_count": collection.articles.len(),
    })
}

/// `GET /translation/page-collections`.
pub fn list(data: &TranslationCatalogs) -> Value {
    Value::Array(listed(data).iter().map(describe).collect())
}

/// `GET /translation/page-collection-groups`: the part of a name before `/` groups
/// collections when two or more share it; every other collection is `ungrouped`. Each list is
/// sorted by name, ignoring case.
pub fn groups(data: &TranslationCatalogs) -> Value {
    let mut grouped: BTreeMap<&str, Vec<&Collection>> = BTreeMap::new();
    let mut ungrouped = Vec::new();
    for collection in listed(data) {
        match collection.name.split_once('/') {
            Some((prefix, _)) => grouped.entry(prefix).or_default().push(collection),
            None => ungrouped.push(collection),
        }
    }
    let mut out = Map::new();
    for (prefix, mut collections) in grouped {
        if collections.len() > 1 {
            collections.sort_by_key(|c| c.name.to_lowercase());
            out.insert(
                prefix.to_owned(),
                Value::Array(collections.iter().map(|c| describe(c)).collect()),
            );
        } else {
            ungrouped.extend(collections);
        }
    }
    ungrouped.sort_by_key(|c| c.name.to_lowercase());
    out.insert(
        "ungrouped".into(),
        Value::Array(ungrouped.iter().map(|c| describe(c)).collect()),
    );
    Value::Object(out)
}

/// `GET /translation/page-collection-membership`: `{id: bool}` for `qids=Q1|Q2`, or for
/// `language=xx&titles=A|B`; exactly one form. `Err` holds the `detail` of a 422.
pub fn membership(data: &TranslationCatalogs, raw: &str) -> Result<Value, Vec<Value>> {
    let params = RawParams::new(raw);
    let Some(name) = params.get("collection") else {
        return Err(vec![missing("collection")]);
    };
    let language = params.get("language");
    let titles = params.get("titles");
    let qids = params.get("qids");
    let by_titles = language.is_some() && titles.is_some();
    let problem = if !by_titles && qids.is_none() {
        Some("Must provide either 'language' and 'titles' parameters, or 'qids' parameter")
    } else if by_titles && qids.is_some() {
        Some("Cannot provide both 'language/titles' and 'qids' parameters")
    } else if language.is_some_and(|l| !l.is_empty() && !known_language(data, l)) {
        Some("Invalid language code")
    } else {
        None
    };
    if let Some(message) = problem {
        let input = json!({"collection": name, "language": language, "titles": titles,
                           "qids": qids});
        return Err(vec![value_error(message, input)]);
    }
    let collection = data.collections.as_ref().and_then(|c| c.find(name));
    let split = |text: Option<&str>| -> Vec<String> {
        text.filter(|t| !t.is_empty())
            .map(|t| t.split('|').map(str::to_owned).collect())
            .unwrap_or_default()
    };
    let present: HashSet<String> = match (collection, qids) {
        (None, _) => HashSet::new(),
        (Some(c), Some(_)) => c.articles.iter().map(|a| a.wikidata_id.clone()).collect(),
        (Some(c), None) => {
            let language = language.unwrap_or_default();
            c.articles
                .iter()
                .filter_map(|a| a.title(language).map(str::to_owned))
                .collect()
        }
    };
    let asked = if qids.is_some() {
        split(qids)
    } else {
        split(titles)
    };
    let answer: Map<String, Value> = asked
        .into_iter()
        .map(|id| {
            let found = present.contains(&id);
            (id, Value::Bool(found))
        })
        .collect();
    Ok(Value::Object(answer))
}

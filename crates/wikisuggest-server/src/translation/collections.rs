//! Page collections (translation-service.md §3.9, §6): which collections a `seed` names,
//! their descriptions as items and lists carry them, groups, and membership checks.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value, json};

use super::dataset::{Collection, TranslationData};
use super::params::{RawParams, known_language, link_code, missing, value_error};

/// Collections named `seed` (any case) or inside it (`seed/…`).
pub fn matching<'a>(data: &'a TranslationData, seed: &str) -> Vec<&'a Collection> {
    let wanted = seed.to_lowercase();
    let prefix = format!("{wanted}/");
    data.collections
        .iter()
        .filter(|c| {
            let name = c.info.name.to_lowercase();
            name == wanted || name.starts_with(&prefix)
        })
        .collect()
}

/// Each member article once, with its language: one Wikidata item per article where known.
fn members<'a>(
    data: &'a TranslationData,
    collection: &'a Collection,
) -> impl Iterator<Item = (&'a str, &'a super::dataset::ArticleRecord)> + 'a {
    let mut seen = HashSet::new();
    collection
        .members
        .iter()
        .filter_map(|(lang, indexes)| data.catalogs.get(lang).map(|c| (lang, c, indexes)))
        .flat_map(|(lang, catalog, indexes)| {
            indexes
                .iter()
                .map(move |&i| (lang.as_str(), &catalog.articles[i].record))
        })
        .filter(move |(lang, record)| {
            seen.insert(
                record
                    .wikidata_id
                    .clone()
                    .unwrap_or_else(|| format!("{lang}:{}", record.title)),
            )
        })
}

/// How many distinct articles the collection holds.
pub fn articles_count(data: &TranslationData, collection: &Collection) -> usize {
    members(data, collection).count()
}

/// The `collection` object of an item: with `target`, also how many of its articles exist
/// in that language.
pub fn metadata(data: &TranslationData, collection: &Collection, target: Option<&str>) -> Value {
    let mut out = json!({
        "name": collection.info.name,
        "description": collection.info.description,
        "end_date": collection.info.end_date,
        "articles_count": articles_count(data, collection),
    });
    if let (Some(target), Some(map)) = (target, out.as_object_mut()) {
        let mapped = link_code(target);
        let present = members(data, collection)
            .filter(|(lang, record)| {
                *lang == target || record.langlinks.iter().any(|l| l == target || l == mapped)
            })
            .count();
        map.insert(
            "articles_by_language_count".into(),
            json!({ target: present }),
        );
    }
    out
}

/// `GET /translation/page-collections`.
pub fn list(data: &TranslationData) -> Value {
    Value::Array(
        data.collections
            .iter()
            .map(|c| metadata(data, c, None))
            .collect(),
    )
}

/// `GET /translation/page-collection-groups`: the part of a name before `/` groups
/// collections when two or more share it; every other collection is `ungrouped`. Each list is
/// sorted by name, ignoring case.
pub fn groups(data: &TranslationData) -> Value {
    let mut grouped: BTreeMap<&str, Vec<&Collection>> = BTreeMap::new();
    let mut ungrouped = Vec::new();
    for collection in &data.collections {
        match collection.info.name.split_once('/') {
            Some((prefix, _)) => grouped.entry(prefix).or_default().push(collection),
            None => ungrouped.push(collection),
        }
    }
    let mut out = Map::new();
    for (prefix, mut collections) in grouped {
        if collections.len() > 1 {
            collections.sort_by_key(|c| c.info.name.to_lowercase());
            let listed = collections
                .iter()
                .map(|c| metadata(data, c, None))
                .collect();
            out.insert(prefix.to_owned(), Value::Array(listed));
        } else {
            ungrouped.extend(collections);
        }
    }
    ungrouped.sort_by_key(|c| c.info.name.to_lowercase());
    let listed = ungrouped.iter().map(|c| metadata(data, c, None)).collect();
    out.insert("ungrouped".into(), Value::Array(listed));
    Value::Object(out)
}

/// `GET /translation/page-collection-membership`: `{id: bool}` for `qids=Q1|Q2`, or for
/// `language=xx&titles=A|B`; exactly one form. `Err` holds the `detail` of a 422.
pub fn membership(data: &TranslationData, raw: &str) -> Result<Value, Vec<Value>> {
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
    let collection = data.collection(name);
    let split = |text: Option<&str>| -> Vec<String> {
        text.filter(|t| !t.is_empty())
            .map(|t| t.split('|').map(str::to_owned).collect())
            .unwrap_or_default()
    };
    let present: HashSet<String> = match (collection, qids) {
        (None, _) => HashSet::new(),
        (Some(c), Some(_)) => members(data, c)
            .filter_map(|(_, record)| record.wikidata_id.clone())
            .collect(),
        (Some(c), None) => {
            let language = language.unwrap_or_default();
            members(data, c)
                .filter(|(lang, _)| *lang == language)
                .map(|(_, record)| record.title.clone())
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

#[cfg(test)]
mod tests {
    use super::super::dataset::{ArticleRecord, CollectionInfo};
    use super::*;

    fn data() -> TranslationData {
        let record = |title: &str, qid: &str, links: &[&str], collections: &[&str]| ArticleRecord {
            title: title.into(),
            wikidata_id: Some(qid.into()),
            langlinks: links.iter().map(|s| s.to_string()).collect(),
            collections: collections.iter().map(|s| s.to_string()).collect(),
            ..ArticleRecord::default()
        };
        let mut data = TranslationData::default();
        data.insert(
            "en".into(),
            vec![
                record("Cat", "Q146", &["fr"], &["Wiki99/Animals", "Pets"]),
                record("Lion", "Q140", &[], &["Wiki99/Animals"]),
                record("Violin", "Q8355", &["de"], &["wiki99/Music"]),
                record("Solo", "Q1", &[], &["Lonely/One"]),
            ],
        );
        data.insert(
            "fr".into(),
            vec![record("Chien", "Q144", &["en"], &["Pets"])],
        );
        data.describe_collections(vec![CollectionInfo {
            name: "Pets".into(),
            description: Some("Animals at home".into()),
            end_date: None,
        }]);
        data
    }

    #[test]
    fn lists_and_groups() {
        let data = data();
        let names = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_owned())
                .collect()
        };
        let listed = list(&data);
        assert_eq!(listed.as_array().unwrap().len(), 4);
        let pets = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "Pets")
            .unwrap();
        assert_eq!(
            pets,
            &json!({"name": "Pets", "description": "Animals at home", "end_date": null,
                    "articles_count": 2})
        );
        let grouped = groups(&data);
        // `Wiki99` and `wiki99` are different prefixes: each holds one, so both are ungrouped.
        assert_eq!(grouped.as_object().unwrap().len(), 1);
        assert_eq!(
            names(&grouped["ungrouped"]),
            ["Lonely/One", "Pets", "Wiki99/Animals", "wiki99/Music"]
        );
        let metadata = metadata(&data, data.collection("pets").unwrap(), Some("en"));
        // Cat links to no English article, but Chien does, and the French catalog counts too.
        assert_eq!(metadata["articles_by_language_count"], json!({"en": 2}));
        assert_eq!(matching(&data, "WIKI99").len(), 2);
        assert_eq!(matching(&data, "Wiki9").len(), 0);
    }

    #[test]
    fn groups_of_two_or_more() {
        let mut data = data();
        data.describe_collections(vec![CollectionInfo {
            name: "Lonely/Two".into(),
            ..CollectionInfo::default()
        }]);
        let grouped = groups(&data);
        let lonely: Vec<&str> = grouped["Lonely"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(lonely, ["Lonely/One", "Lonely/Two"]);
        assert_eq!(grouped["Lonely"][1]["articles_count"], 0);
    }

    #[test]
    fn membership_forms_and_errors() {
        let data = data();
        assert_eq!(
            membership(&data, "collection=PETS&qids=Q146|Q144|Q140").unwrap(),
            json!({"Q146": true, "Q144": true, "Q140": false})
        );
        assert_eq!(
            membership(&data, "collection=Pets&language=fr&titles=Chien|Cat").unwrap(),
            json!({"Chien": true, "Cat": false})
        );
        assert_eq!(
            membership(&data, "collection=Nope&qids=Q146").unwrap(),
            json!({"Q146": false})
        );
        assert_eq!(
            membership(&data, "collection=Pets&qids=").unwrap(),
            json!({})
        );
        let message = |raw: &str| membership(&data, raw).unwrap_err()[0]["msg"].clone();
        assert_eq!(
            message("collection=Pets&language=en"),
            "Value error, Must provide either 'language' and 'titles' parameters, or 'qids' parameter"
        );
        assert_eq!(
            message("collection=Pets&language=en&titles=Cat&qids=Q1"),
            "Value error, Cannot provide both 'language/titles' and 'qids' parameters"
        );
        assert_eq!(
            message("collection=Pets&language=xx&titles=Cat"),
            "Value error, Invalid language code"
        );
        let missing = membership(&data, "qids=Q1").unwrap_err();
        assert_eq!(missing[0]["loc"], json!(["query", "collection"]));
        let bad = membership(&data, "collection=Pets&language=xx&titles=Cat").unwrap_err();
        assert_eq!(
            bad[0]["input"],
            json!({"collection": "Pets", "language": "xx", "titles": "Cat", "qids": null})
        );
    }
}

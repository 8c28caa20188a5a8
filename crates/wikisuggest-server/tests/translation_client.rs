//! The core client against the reference server over HTTP: today's translation parameters,
//! pages followed to their end, and the collection routes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;
use std::path::PathBuf;

use wikisuggest_core::models::TranslationPage;
use wikisuggest_core::params::{MembershipParams, RankMethod, TranslationParams};
use wikisuggest_core::{Client, ClientConfig, Error};
use wikisuggest_server::{RunningServer, Server, ServerConfig, TranslationShape};

const ESSENTIAL: &str = "Essential Articles";

/// A server over the translation catalog shipped in the Python package (English Wikipedia
/// articles of the translation test dumps, with every part), and a client of it.
async fn start(shape: TranslationShape) -> (RunningServer, Client) {
    let catalog =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/wikisuggest/data/translation");
    let config = ServerConfig {
        port: 0,
        translation_catalogs: vec![(None, catalog)],
        translation_shape: shape,
        seed: Some(5),
        ..ServerConfig::default()
    };
    let server = Server::bind(config).await.unwrap();
    let mut client = ClientConfig::new("wikisuggest-tests/1.0 (tests@example.org)");
    client.base_url = format!("http://{}", server.local_addr());
    client.retry.max_retries = 0;
    (server, Client::new(client, None).unwrap())
}

/// Every page, following `next_page` until the end or a page with nothing new.
async fn all_pages(client: &Client, first: TranslationParams) -> Vec<TranslationPage> {
    let mut params = first;
    let mut pages = Vec::new();
    let mut seen = HashSet::new();
    loop {
        let page = client.translation_page(&params).await.unwrap();
        let fresh = page
            .items
            .iter()
            .filter(|i| seen.insert(i.wikidata_id.clone()))
            .count();
        let next = params.next_page(&page);
        pages.push(page);
        match next {
            Some(next) if fresh > 0 => params = next,
            _ => return pages,
        }
    }
}

#[tokio::test]
async fn pages_of_a_collection_and_the_collection_routes() {
    let (server, client) = start(TranslationShape::Envelope).await;
    let listed = client.page_collections().await.unwrap();
    let essential = listed.iter().find(|c| c.name == ESSENTIAL).unwrap();
    let params = TranslationParams {
        collections: true,
        seed: vec![ESSENTIAL.to_owned()],
        count: 4,
        ..TranslationParams::new("en", "sw")
    };
    let pages = all_pages(&client, params.clone()).await;
    assert!(pages.len() > 2);
    let items: Vec<_> = pages.iter().flat_map(|p| &p.items).collect();
    let unique: HashSet<_> = items.iter().map(|i| i.wikidata_id.clone()).collect();
    let collection = items[0].collection.as_ref().unwrap();
    let in_target = collection.articles_by_language_count.as_ref().unwrap()["sw"];
    assert_eq!(
        unique.len() as i64,
        essential.articles_count.unwrap() - in_target
    );
    // Only the page overlaps repeat.
    let overlaps = pages.iter().skip(1).filter(|p| !p.items.is_empty()).count();
    assert_eq!(items.len() - unique.len(), overlaps);
    // The same seed gives the same pages.
    let seeded = TranslationParams {
        continue_seed: pages[0].continue_seed,
        ..params
    };
    assert_eq!(all_pages(&client, seeded).await, pages);

    let groups = client.page_collection_groups().await.unwrap();
    let names =
        |group: &str| -> Vec<String> { groups[group].iter().map(|c| c.name.clone()).collect() };
    assert_eq!(names("Wiki99"), ["Wiki99/Food", "Wiki99/Science"]);
    assert_eq!(names("ungrouped"), ["Campaign:Tanzania 2026", ESSENTIAL]);
    let member = items[0].wikidata_id.clone().unwrap();
    let found = client
        .page_collection_membership(&MembershipParams::qids(ESSENTIAL, &[&member, "Q1"]))
        .await
        .unwrap();
    assert_eq!((found[&member], found["Q1"]), (true, false));
    let by_title = client
        .page_collection_membership(&MembershipParams::titles(
            ESSENTIAL,
            "en",
            &[items[0].title.as_str()],
        ))
        .await
        .unwrap();
    assert!(by_title[&items[0].title]);

    // Search with the new filters, decoded into typed fields.
    let page = client
        .translation_page(&TranslationParams {
            country: vec!["can".into()],
            min_size: Some(700),
            lead_section: true,
            rank_method: RankMethod::Sitelinks,
            count: 5,
            ..TranslationParams::new("en", "de")
        })
        .await
        .unwrap();
    assert!(page.items.len() > 1);
    assert_eq!(page.continue_offset, None);
    for item in &page.items {
        assert!(item.lead_section_size.unwrap() >= 700);
        assert!(item.size.is_some() && item.collection.is_none() && item.extra.is_empty());
    }
    let links: Vec<i64> = page
        .items
        .iter()
        .map(|i| i.langlinks_count.unwrap())
        .collect();
    assert!(links.windows(2).all(|w| w[0] >= w[1]), "{links:?}");
    // Refused before sending: the server would answer 422 or nothing sensible.
    let refused = client
        .translation_page(&TranslationParams {
            min_size: Some(10),
            max_size: Some(1),
            ..TranslationParams::new("en", "de")
        })
        .await;
    assert!(matches!(refused, Err(Error::InvalidParameter { .. })));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_array_shape_is_a_page_without_continuation() {
    let (server, client) = start(TranslationShape::Array).await;
    let page = client
        .translation_page(&TranslationParams {
            collections: true,
            seed: vec![ESSENTIAL.to_owned()],
            count: 4,
            ..TranslationParams::new("en", "sw")
        })
        .await
        .unwrap();
    assert_eq!(page.items.len(), 4);
    assert_eq!((page.continue_offset, page.continue_seed), (None, None));
    assert!(
        page.items
            .iter()
            .all(|i| i.size.is_none() && i.collection.is_none())
    );
    let error = client
        .translation_page(&TranslationParams::new("en", "qq"))
        .await
        .unwrap_err();
    match error {
        Error::Http(http) => assert_eq!(http.status, 422),
        other => panic!("{other:?}"),
    }
    server.shutdown().await.unwrap();
}

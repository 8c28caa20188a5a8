//! A catalog built from small dumps written here in the published formats, then queried:
//! the joins, the top list's quirks, the search modes and the gap tables.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};

use wikisuggest_core::params::{RankMethod, TranslationParams};
use wikisuggest_translation::build::{BuildOptions, Sources, SqlSources, build};
use wikisuggest_translation::engine::{Engine, Request};
use wikisuggest_translation::gaps::{GapRequest, OrderBy, missing};

fn gz(path: &Path, text: &str) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    w.write_all(text.as_bytes()).unwrap();
    w.finish().unwrap();
}

fn bz2(path: &Path, text: &str) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = bzip2::write::BzEncoder::new(file, bzip2::Compression::default());
    w.write_all(text.as_bytes()).unwrap();
    w.finish().unwrap();
}

/// A mysqldump file of `table` with `columns` and rows (each already an SQL tuple).
fn sql(path: &Path, table: &str, columns: &[&str], rows: &[&str]) {
    let mut text = String::from("-- MariaDB dump 10.19\n/*!40101 SET NAMES utf8mb4 */;\n");
    text += &format!("DROP TABLE IF EXISTS `{table}`;\nCREATE TABLE `{table}` (\n");
    for c in columns {
        text += &format!("  `{c}` varbinary(255) NOT NULL,\n");
    }
    text += "  PRIMARY KEY (`x`)\n) ENGINE=InnoDB DEFAULT CHARSET=binary;\n";
    text += &format!("/*!40000 ALTER TABLE `{table}` DISABLE KEYS */;\n");
    // Two statements, as mysqldump cuts them.
    let half = rows.len() / 2;
    for chunk in [&rows[..half], &rows[half..]] {
        if !chunk.is_empty() {
            text += &format!("INSERT INTO `{table}` VALUES {};\n", chunk.join(","));
        }
    }
    text += "-- Dump completed on 2026-06-02  7:31:47\n";
    gz(path, &text);
}

struct Fixture {
    dir: PathBuf,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const PAGE: [&str; 12] = [
    "page_id",
    "page_namespace",
    "page_title",
    "page_is_redirect",
    "page_is_new",
    "page_random",
    "page_touched",
    "page_links_updated",
    "page_latest",
    "page_len",
    "page_content_model",
    "page_lang",
];

fn page(id: u64, ns: i32, title: &str, redirect: bool, len: u64) -> String {
    format!(
        "({id},{ns},'{}',{},0,0.5,'20260601000000','20260601000000',{},{len},'wikitext',NULL)",
        title.replace('\'', "\\'"),
        u8::from(redirect),
        id * 10
    )
}

fn doc(id: u64, title: &str, tags: &[&str], bytes: u64, source: &str, extra: &str) -> String {
    let tags: Vec<String> = tags.iter().map(|t| format!("\"{t}\"")).collect();
    format!(
        "{{\"index\":{{\"_id\":\"{id}\"}}}}\n{{\"page_id\":{id},\"namespace\":0,\"title\":\"{title}\",\"text\":\"{title} text\",\"text_bytes\":{bytes},\"source_text\":{},\"weighted_tags\":[{}],\"category\":[\"Astronomy\"]{extra}}}\n",
        serde_json::to_string(source).unwrap(),
        tags.join(",")
    )
}

fn fixture(name: &str) -> (Fixture, Sources) {
    let dir = std::env::temp_dir().join(format!("ws-translation-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = |n: &str| dir.join(n);
    let pages = [
        page(10, 0, "Moon", false, 5000),
        page(11, 0, "Sun", false, 3000),
        page(12, 0, "Luna", true, 20),
        page(13, 0, "Mercury", false, 900),
        page(14, 1, "Moon", false, 100),
        page(15, 0, "Venus", false, 1200),
        page(20, 0, "Jupiter", false, 8000),
        page(21, 0, "Pluto_(dwarf_planet)", false, 4000),
    ];
    let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
    sql(&p("enwiki-20260601-page.sql.gz"), "page", &PAGE, &pages);
    sql(
        &p("enwiki-20260601-page_props.sql.gz"),
        "page_props",
        &["pp_page", "pp_propname", "pp_value", "pp_sortkey"],
        &[
            "(10,'wikibase_item','Q405',NULL)",
            "(11,'wikibase_item','Q525',NULL)",
            "(13,'disambiguation','',NULL)",
            "(13,'wikibase_item','Q1',NULL)",
            "(20,'wikibase_item','Q319',NULL)",
            "(21,'wikibase_item','Q339',NULL)",
        ],
    );
    sql(
        &p("enwiki-20260601-langlinks.sql.gz"),
        "langlinks",
        &["ll_from", "ll_lang", "ll_title"],
        &[
            "(10,'de','Mond')",
            "(10,'fr','Lune')",
            "(11,'fr','Soleil')",
            "(20,'no','Jupiter')",
            "(20,'sw','Jupita')",
            "(21,'be-tarask','Плютон')",
        ],
    );
    sql(
        &p("enwiki-20260601-redirect.sql.gz"),
        "redirect",
        &[
            "rd_from",
            "rd_namespace",
            "rd_title",
            "rd_interwiki",
            "rd_fragment",
        ],
        &["(12,0,'Moon','','')"],
    );
    let shard = [
        doc(
            10,
            "Moon",
            &[
                "classification.prediction.articletopic/STEM.Space|987",
                "classification.prediction.articlecountry/United States|400",
            ],
            5000,
            "Lead of the Moon.\n== Orbit ==\n",
            ",\"redirect\":[{\"namespace\":0,\"title\":\"Luna\"}]",
        ),
        doc(
            11,
            "Sun",
            &["classification.prediction.articletopic/STEM.Space|900"],
            2950,
            "Star.\n",
            "",
        ),
        doc(
            13,
            "Mercury",
            &["classification.prediction.articletopic/STEM.Space|500"],
            900,
            "x",
            "",
        ),
        doc(
            20,
            "Jupiter",
            &[
                "classification.prediction.articletopic/Geography.Regions.Africa.Southern Africa|700",
            ],
            8000,
            "Big.\n\n=== Moons ===\n",
            "",
        ),
        doc(
            21,
            "Pluto (dwarf planet)",
            &["classification.ores.articletopic/STEM.Space|700"],
            4000,
            "",
            "",
        ),
    ];
    bz2(
        &p("enwiki_content-20260607-00000.json.bz2"),
        &shard[..3].concat(),
    );
    bz2(
        &p("enwiki_content-20260607-00001.json.bz2"),
        &shard[3..].concat(),
    );
    bz2(
        &p("pageviews-20260614-user.bz2"),
        "de.wikipedia Mond 1 desktop 99999 A99999\n\
         en.wikipedia Jupiter 20 desktop 40 A40\n\
         en.wikipedia Luna 12 desktop 900 A900\n\
         en.wikipedia Moon 10 desktop 500 A500\n\
         en.wikipedia Moon 10 mobile-web 100 B100\n\
         en.wikipedia No_such_page null desktop 50 C50\n\
         en.wikipedia Special:Search null desktop 1000 A1000\n\
         en.wikipedia Sun 11 mobile-app 300 A300\n\
         en.wikipedia mercury 13 desktop 45 A45\n\
         en.wikipedia.b Moon 1 desktop 7777 A7777\n",
    );
    let sources = Sources {
        wiki: "enwiki".to_owned(),
        sql: SqlSources {
            page: p("enwiki-20260601-page.sql.gz"),
            page_props: p("enwiki-20260601-page_props.sql.gz"),
            langlinks: p("enwiki-20260601-langlinks.sql.gz"),
            redirect: p("enwiki-20260601-redirect.sql.gz"),
            namespaces: None,
        },
        cirrus: vec![
            p("enwiki_content-20260607-00000.json.bz2"),
            p("enwiki_content-20260607-00001.json.bz2"),
        ],
        pageviews: Some(p("pageviews-20260614-user.bz2")),
        collections: None,
    };
    (Fixture { dir }, sources)
}

fn request(target: &str) -> Request {
    Request {
        params: TranslationParams {
            rank_method: RankMethod::Sitelinks,
            count: 500,
            ..TranslationParams::new("en", target)
        },
        random_seed: Some(7),
        follow_redirects: false,
    }
}

fn titles(page: &wikisuggest_core::models::TranslationPage) -> Vec<(String, i64, Option<i64>)> {
    page.items
        .iter()
        .map(|i| {
            (
                i.title.clone(),
                i.rank
                    .as_ref()
                    .and_then(serde_json::Number::as_i64)
                    .unwrap_or(-1),
                i.size,
            )
        })
        .collect()
}

#[test]
fn a_catalog_joins_the_dumps_and_answers_as_production() {
    let (fx, sources) = fixture("joins");
    let out = fx.dir.join("catalog");
    let options = BuildOptions {
        // A tiny budget: every sort spills to work files and merges them back.
        memory: 4 << 20,
        threads: 2,
        ..BuildOptions::default()
    };
    let manifest = build(&sources, &out, &options).unwrap();
    assert_eq!(manifest.counts.articles, 6);
    assert_eq!(manifest.counts.redirects, 1);
    assert_eq!(manifest.counts.disambiguations, 1);
    assert_eq!(manifest.counts.search_documents, 5);
    assert_eq!(manifest.parts, ["sql", "cirrus", "pageviews"]);
    // Nothing but the catalog is left beside it.
    let left: Vec<_> = std::fs::read_dir(&fx.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    let engine = Engine::open(&out).unwrap();
    let c = engine.catalog();
    let moon = c.row_of_title("Moon").unwrap();
    assert_eq!(c.wikidata_id(moon).as_deref(), Some("Q405"));
    assert_eq!(
        c.pageviews(moon),
        Some(600),
        "views summed over access methods"
    );
    assert_eq!(c.text_bytes(moon), Some(5000));
    assert_eq!(c.lead_section_size(moon), Some(18));
    assert_eq!(c.langlinks_count(moon), 2);
    assert_eq!(c.resolve_title("Luna").unwrap(), Some(moon));
    let mercury = c.row_of_title("Mercury").unwrap();
    assert_eq!(
        c.pageviews(mercury),
        Some(0),
        "a lower-case title is another title"
    );
    assert!(c.is_disambiguation(mercury));
    let venus = c.row_of_title("Venus").unwrap();
    assert_eq!(c.text_bytes(venus), None, "not in the search index");

    // Popular, to French: the top list is Special:Search (not namespace 0: dropped), Luna
    // (a redirect: no links, so missing, with its own size), Moon and Sun (in French),
    // No_such_page (no page: first in the pages array, size 0), `mercury` (the
    // disambiguation page: it takes its rank, then is dropped), Jupiter.
    let page = engine.page(&request("fr")).unwrap();
    assert_eq!(
        titles(&page),
        [
            ("Jupiter".to_owned(), 6, Some(8000)),
            ("No such page".to_owned(), 1, Some(0)),
            ("Luna".to_owned(), 4, Some(20)),
        ]
    );
    // Corrected: the redirect stands for its article (here Moon, already on the list), the
    // title of no page is left out.
    let corrected = engine
        .page(&Request {
            follow_redirects: true,
            ..request("sw")
        })
        .unwrap();
    assert_eq!(
        titles(&corrected),
        [
            ("Moon".to_owned(), 1, Some(5000)),
            ("Sun".to_owned(), 2, Some(3000))
        ]
    );
}

#[test]
fn search_modes_and_gap_tables() {
    let (fx, sources) = fixture("search");
    let out = fx.dir.join("catalog");
    let options = BuildOptions::default();
    let manifest = build(&sources, &out, &options).unwrap();
    let engine = Engine::open(&out).unwrap();
    let with = |f: &dyn Fn(&mut TranslationParams)| {
        let mut r = request("sw");
        f(&mut r.params);
        engine.page(&r).unwrap()
    };
    // Topic: every tagged document, in page-id order, the disambiguation page dropped;
    // sizes from the search index.
    let space = with(&|p| p.topic = vec!["space".to_owned()]);
    assert_eq!(
        titles(&space),
        [
            ("Moon".to_owned(), 1, Some(5000)),
            ("Sun".to_owned(), 2, Some(2950))
        ]
    );
    // A label spelled with spaces matches its term; the older tag prefix does not.
    let africa = with(&|p| p.topic = vec!["Southern Africa".to_owned()]);
    assert!(titles(&africa).is_empty(), "Jupiter is in Swahili");
    let mut to_fr = request("fr");
    to_fr.params.topic = vec!["Southern Africa".to_owned()];
    assert_eq!(
        titles(&engine.page(&to_fr).unwrap()),
        [("Jupiter".to_owned(), 1, Some(8000))]
    );
    // Countries, and both at once (every keyword must match).
    let usa = with(&|p| p.country = vec!["usa".to_owned()]);
    assert_eq!(titles(&usa), [("Moon".to_owned(), 1, Some(5000))]);
    let both = with(&|p| {
        p.topic = vec!["space".to_owned()];
        p.country = vec!["USA".to_owned()];
    });
    assert_eq!(titles(&both), [("Moon".to_owned(), 1, Some(5000))]);
    // An unknown term answers nothing, as CirrusSearch does.
    assert!(titles(&with(&|p| p.topic = vec!["arts".to_owned()])).is_empty());
    // Size bounds, lead sections.
    let small = with(&|p| {
        p.topic = vec!["space".to_owned()];
        p.max_size = Some(4000);
    });
    assert_eq!(titles(&small), [("Sun".to_owned(), 2, Some(2950))]);
    let lead = with(&|p| {
        p.topic = vec!["space".to_owned()];
        p.lead_section = true;
    });
    assert_eq!(lead.items[0].lead_section_size, Some(18));
    assert_eq!(lead.items[1].lead_section_size, None, "no heading");
    // A seeded shuffle is reproducible, and a short answer is the start of a long one.
    let shuffled = |count: i64| {
        let mut r = request("sw");
        r.params.rank_method = RankMethod::Default;
        r.params.count = count;
        r.random_seed = Some(99);
        titles(&engine.page(&r).unwrap())
    };
    let all = shuffled(500);
    assert_eq!(all.len(), 4);
    assert_eq!(shuffled(2), all[..2]);
    // Seed mode asks the search index built with the catalog: the fixture's texts
    // ("Moon text") repeat no term, so no term reaches `min_term_freq` and nothing matches.
    assert!(manifest.search_index && engine.has_search_index());
    let seed_request = {
        let mut r = request("sw");
        r.params.seed = vec!["Moon".to_owned()];
        r
    };
    assert!(engine.page(&seed_request).unwrap().items.is_empty());
    let loose = wikisuggest_translation::seed::SimilarOptions {
        min_term_freq: Some(1),
        min_doc_freq: Some(1),
        ..Default::default()
    };
    // Every document holds "text": with the bounds lowered, every other article is like
    // the Moon (redirect Luna followed, the seed itself left out).
    let like = engine.similar(&["Luna".to_owned()], &loose, 500).unwrap();
    let mut like: Vec<String> = like.into_iter().map(|(t, _)| t).collect();
    like.sort();
    assert_eq!(like, ["Jupiter", "Mercury", "Pluto (dwarf planet)", "Sun"]);
    // Built without an index, seed mode says which part it needs.
    let bare = fx.dir.join("bare");
    let options = BuildOptions {
        index: None,
        ..options
    };
    assert!(!build(&sources, &bare, &options).unwrap().search_index);
    let bare = Engine::open(&bare).unwrap();
    for failed in [
        bare.page(&seed_request).map(|_| ()),
        bare.similar(&["Moon".to_owned()], &loose, 5).map(|_| ()),
    ] {
        match failed {
            Err(wikisuggest_translation::Error::MissingPart(m)) => assert!(m.contains("cirrus")),
            other => panic!("{other:?}"),
        }
    }

    // Gap tables: every missing article, most viewed first, disambiguation pages left out.
    let gaps = missing(engine.catalog(), &GapRequest::new("sw")).unwrap();
    let names = |b: &arrow_array::RecordBatch| -> Vec<String> {
        let col = b.column_by_name("title").unwrap();
        let col = col
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        col.iter().map(|t| t.unwrap().to_owned()).collect()
    };
    assert_eq!(
        names(&gaps),
        ["Moon", "Sun", "Pluto (dwarf planet)", "Venus"]
    );
    let by_links = missing(
        engine.catalog(),
        &GapRequest {
            order_by: OrderBy::LanglinksCount,
            ..GapRequest::new("sw")
        },
    )
    .unwrap();
    assert_eq!(
        names(&by_links),
        ["Moon", "Sun", "Pluto (dwarf planet)", "Venus"]
    );
    // A link stored as `be-tarask` is no link for MediaWiki's `lllang=be-x-old`.
    let tarask = missing(engine.catalog(), &GapRequest::new("be-tarask")).unwrap();
    assert!(names(&tarask).contains(&"Pluto (dwarf planet)".to_owned()));
    let several = missing(
        engine.catalog(),
        &GapRequest {
            targets: vec!["sw".to_owned(), "fr".to_owned()],
            topic: vec!["space".to_owned()],
            ..GapRequest::new("sw")
        },
    )
    .unwrap();
    assert_eq!(several.num_rows(), 2, "Moon and Sun in sw; none in fr");
    assert!(several.column_by_name("target").is_some());
    let titled = missing(
        engine.catalog(),
        &GapRequest {
            titles: Some(vec!["Luna".to_owned(), "Nowhere".to_owned()]),
            ..GapRequest::new("sw")
        },
    )
    .unwrap();
    assert_eq!(names(&titled), ["Moon"], "a redirect title is followed");
    let astronomy = missing(
        engine.catalog(),
        &GapRequest {
            category: Some("Category:Astronomy".to_owned()),
            ..GapRequest::new("sw")
        },
    )
    .unwrap();
    assert_eq!(names(&astronomy), ["Moon", "Sun", "Pluto (dwarf planet)"]);
}

#[test]
fn broken_dumps_are_typed_errors_and_leave_nothing() {
    let (fx, mut sources) = fixture("broken");
    // A langlinks table out of page-id order.
    sql(
        &sources.sql.langlinks,
        "langlinks",
        &["ll_from", "ll_lang", "ll_title"],
        &["(20,'sw','Jupita')", "(10,'de','Mond')"],
    );
    let out = fx.dir.join("catalog");
    let err = build(&sources, &out, &BuildOptions::default()).unwrap_err();
    assert!(err.to_string().contains("page-id order"), "{err}");
    assert!(!out.exists());
    // A shard cut short.
    let (fx2, sources2) = fixture("cut");
    let shard = &sources2.cirrus[0];
    let bytes = std::fs::read(shard).unwrap();
    std::fs::write(shard, &bytes[..bytes.len() / 2]).unwrap();
    let err = build(
        &sources2,
        &fx2.dir.join("catalog"),
        &BuildOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            wikisuggest_translation::Error::Io { .. } | wikisuggest_translation::Error::Dump { .. }
        ),
        "{err}"
    );
    sources.pageviews = None;
    drop(fx);
}

//! End to end on a small synthetic dump: the built tables survive the published-format
//! and native readers unchanged, and the same input gives the same bytes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use std::sync::Arc;
use wikisuggest_build::{BuildOptions, Embedding, Scan, scan, set_vectors, write_outputs};

use wikisuggest_build::training::{Lookups, ngram_count};
use wikisuggest_engine::published::read_published;
use wikisuggest_engine::{Dataset, PyLowercase, Scorer};
use wikisuggest_text::MwTokenizer;

/// A one-leaf XGBoost 2.1.4 model (constant score): writing needs a valid model only.
const MODEL: &[u8] = include_bytes!("one-leaf.linkmodel.json");

fn page(title: &str, id: u32, body: &str) -> String {
    format!(
        "<page><title>{title}</title><ns>0</ns><id>{id}</id><revision><id>{}</id>\
         <text xml:space=\"preserve\">{body}</text></revision></page>\n",
        id + 1000
    )
}

fn dump_xml() -> String {
    let mut xml = String::from(
        "<mediawiki><siteinfo><namespaces><namespace key=\"0\" />\
         <namespace key=\"14\">Category</namespace></namespaces></siteinfo>\n",
    );
    xml += &page(
        "Red fox",
        1,
        "The red fox is a [[Canidae|canid]] of the [[Northern Hemisphere]].",
    );
    xml += &page(
        "Canidae",
        2,
        "Canids include the [[Red fox|red fox]] and the [[wolf]]. The [[Red fox]] is small. \
         [[Category:Mammals]] [[Fox]] 1990 [[1990]]",
    );
    xml += &page(
        "Wolf",
        3,
        "The wolf is a [[canidae|canid]]; compare the red fox.",
    );
    xml += &page(
        "Northern Hemisphere",
        4,
        "Half of Earth, home of the [[Wolf|wolves]].",
    );
    xml += "<page><title>Fox</title><ns>0</ns><id>5</id><redirect title=\"Red fox\" />\
            <revision><text>#REDIRECT [[Red fox]]</text></revision></page>\n";
    xml += "<page><title>Category:Mammals</title><ns>14</ns><id>6</id>\
            <revision><text>x</text></revision></page>\n</mediawiki>\n";
    xml
}

/// A fresh empty folder (`wikisuggest-build-<name>-<pid>` in the temporary folder), removed
/// with everything in it when dropped, whether the test passes or panics.
struct TempDir(PathBuf);

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("wikisuggest-build-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

fn build(dir: &Path) -> Scan {
    let dump = dir.join("tiny-pages-articles.xml");
    std::fs::write(&dump, dump_xml()).unwrap();
    let mut options = BuildOptions::new("testwiki", "en");
    options.min_link_count = 1;
    let mut s = scan(&dump, &options).unwrap();
    set_vectors(&mut s, &Embedding::LinkGraph { dim: 50, seed: 7 }).unwrap();
    write_outputs(&s, &dir.join("out"), MODEL).unwrap();
    s
}

#[test]
fn tables_follow_the_production_rules() {
    let dir = temp_dir("rules");
    let s = build(&dir);
    let t = &s.tables;
    assert_eq!(
        t.pageids,
        [
            ("Canidae".to_owned(), 2),
            ("Northern Hemisphere".to_owned(), 4),
            ("Red fox".to_owned(), 1),
            ("Wolf".to_owned(), 3),
        ]
    );
    assert_eq!(t.redirects, [("Fox".to_owned(), "Red fox".to_owned())]);
    let anchors: Vec<(&str, Vec<(&str, u32)>)> = t
        .anchors
        .iter()
        .map(|(k, c)| {
            (
                k.as_str(),
                c.iter().map(|(t, n)| (t.as_str(), *n)).collect(),
            )
        })
        .collect();
    // "red fox" links from one article (twice) and occurs once as text in two others
    // (link probability 2/4); "fox" reaches its article through the redirect; "1990" is
    // numeric and "[[Category:…]]" is not an article link.
    assert_eq!(
        anchors,
        [
            ("canid", vec![("Canidae", 2)]),
            ("fox", vec![("Red fox", 1)]),
            ("northern hemisphere", vec![("Northern Hemisphere", 1)]),
            ("red fox", vec![("Red fox", 1)]),
            ("wolf", vec![("Wolf", 1)]),
            ("wolves", vec![("Wolf", 1)]),
        ]
    );
    assert_eq!(t.vectors.keys.len(), 4);
    assert_eq!(t.vectors.dim, 50);
    assert_eq!(s.stats.articles, 4);
    assert_eq!(s.stats.redirects, 1);
}

#[test]
fn published_and_native_files_round_trip() {
    let dir = temp_dir("roundtrip");
    let s = build(&dir);
    let out = dir.join("out");
    let published = read_published(&out, "testwiki").unwrap();
    assert_eq!(published.tables, s.tables);
    assert_eq!(published.model_json, MODEL);
    let native = Dataset::open(&out, "testwiki").unwrap();
    native.verify().unwrap();
    assert_eq!(native.checksums(), &published.checksums);
    let cands = native.anchor_candidates("canid").unwrap().unwrap();
    assert_eq!((cands[0].title, cands[0].count), ("Canidae", 2));
    assert_eq!(native.redirect("Fox").unwrap(), Some("Red fox"));
    assert_eq!(native.page_id("Wolf").unwrap(), Some(3));
    let checksum =
        std::fs::read_to_string(out.join("lr_testwiki_anchors.sql.gz.checksum")).unwrap();
    assert_eq!(
        checksum,
        format!(
            "{}  lr_testwiki_anchors.sql.gz\n",
            published.checksums.anchors.unwrap()
        )
    );
}

#[test]
fn same_input_same_bytes() {
    let (a, b) = (temp_dir("det-a"), temp_dir("det-b"));
    build(&a);
    build(&b);
    let mut names: Vec<String> = std::fs::read_dir(a.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 11, "{names:?}");
    for name in names {
        let x = std::fs::read(a.join("out").join(&name)).unwrap();
        let y = std::fs::read(b.join("out").join(&name)).unwrap();
        assert!(x == y, "{name} differs between two builds");
    }
}

#[test]
fn training_features_are_the_serving_features() {
    let dir = temp_dir("features");
    let s = build(&dir);
    let dataset = Dataset::open(&dir.join("out"), "testwiki").unwrap();
    let scorer = Scorer::new(Arc::new(PyLowercase));
    let lookups = Lookups::new(&s.tables);
    let tokenizer = MwTokenizer::new("en").unwrap();
    for (page, mention) in [
        ("Wolf", "canid"),
        ("Canidae", "red fox"),
        ("Red fox", "wolves"),
    ] {
        let ngram = ngram_count(&tokenizer, mention);
        let all = &s
            .tables
            .anchors
            .iter()
            .find(|(k, _)| k == mention)
            .unwrap()
            .1;
        let trained = lookups.features(page, mention, ngram, all);
        let served = scorer
            .score(&dataset, page, mention, ngram)
            .unwrap()
            .unwrap();
        let served: Vec<_> = served.candidates.iter().map(|c| c.features).collect();
        assert_eq!(trained.len(), served.len());
        for (t, v) in trained.iter().zip(&served) {
            assert_eq!(
                t.to_row().map(f32::to_bits),
                v.to_row().map(f32::to_bits),
                "{mention}"
            );
        }
        assert!(
            trained.iter().any(|f| f.w2v != 0.0),
            "{mention}: no embedding used"
        );
    }
    assert_eq!(ngram_count(&tokenizer, "red fox"), 2);
    assert_eq!(ngram_count(&tokenizer, "st. louis"), 2);
}

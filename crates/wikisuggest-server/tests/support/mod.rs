//! What the server's tests share: their temporary folders, datasets for the tests that change
//! files under a running server, and the page, request and answer of the tests that stand in
//! for the engine.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use wikisuggest_core::models::LinkRecommendationSet;
use wikisuggest_server::{BackendError, LinkBackend, LinkRequest};

use wikisuggest_engine::native::NativeInput;
use wikisuggest_engine::{DatasetChecksums, Tables, write_native_file};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh empty temporary folder for one test (`wikisuggest-server-<pid>-<n>-<name>` in the
/// system's temporary folder), removed with everything in it when dropped, whether the test
/// passes or panics. It derefs to its path.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "wikisuggest-server-{}-{n}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self { path }
    }
}

impl Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl std::fmt::Debug for TempDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.path.fmt(f)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A pages folder of its own holding the page `Cat`, removed when dropped.
pub fn cat_pages(name: &str) -> TempDir {
    let pages = TempDir::new(name);
    std::fs::write(pages.join("Cat.wikitext"), "The cat.").unwrap();
    pages
}

/// GETs the link recommendations of `Cat` from the server at `addr`: its whole reply.
pub async fn get_cat(addr: SocketAddr) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let path = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/Cat";
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    String::from_utf8_lossy(&raw).into_owned()
}

/// What a stand-in for the engine answers a link request with.
pub type Answer = Result<LinkRecommendationSet, BackendError>;

/// A stand-in for the engine: what it does with each link request of `enwiki`.
pub trait StandIn: Send + Sync + 'static {
    fn answer(&self, request: &LinkRequest, cancel: &AtomicBool) -> Answer;
}

/// The backend of a server that serves `enwiki` with `stand_in`'s answers (the test keeps
/// `stand_in` to look at what it saw).
pub fn enwiki<T: StandIn>(stand_in: &Arc<T>) -> Option<Arc<dyn LinkBackend>> {
    Some(Arc::new(Enwiki(stand_in.clone())))
}

struct Enwiki<T>(Arc<T>);

impl<T: StandIn> LinkBackend for Enwiki<T> {
    fn wikis(&self) -> Vec<String> {
        vec!["enwiki".into()]
    }

    fn recommend_cancellable(&self, _: &str, request: &LinkRequest, cancel: &AtomicBool) -> Answer {
        self.0.answer(request, cancel)
    }
}

/// The answer of a stand-in backend: no links.
pub fn no_links() -> LinkRecommendationSet {
    LinkRecommendationSet {
        links: Vec::new(),
        links_count: Some(0),
        meta: None,
        page_title: None,
        pageid: None,
        revid: None,
        extra: Default::default(),
    }
}

/// The parity sample's tables, model and checksums.
pub fn sample() -> (Tables, Vec<u8>, DatasetChecksums) {
    let dir = repo().join("tests/data/parity/datasets/enwiki");
    let published = wikisuggest_engine::published::read_published(&dir, "enwiki").unwrap();
    (published.tables, published.model_json, published.checksums)
}

/// Writes `tables` as `out_dir/enwiki.linkdata`.
pub fn write(
    tables: &Tables,
    model: Vec<u8>,
    checksums: DatasetChecksums,
    out_dir: &Path,
) -> PathBuf {
    let input = NativeInput::from_tables("enwiki", tables, model, checksums).unwrap();
    write_native_file(&input, out_dir).unwrap()
}

/// An enwiki-shaped native file of more than 64 MiB (so the engine maps it instead of
/// reading it into memory): the sample's tables, plus articles and anchors whose keys are
/// sample keys followed by a word no article holds, so they sort among the sample's keys
/// (as a real wiki's spread through its file) and change no answer.
pub fn large_native(out_dir: &Path) -> PathBuf {
    let (mut tables, model, checksums) = sample();
    let dim = tables.vectors.dim.max(1);
    let titles: Vec<String> = tables.pageids.iter().map(|(t, _)| t.clone()).collect();
    let anchors: Vec<String> = tables.anchors.iter().map(|(a, _)| a.clone()).collect();
    let articles = (72usize << 20) / (dim * 4 + 48);
    let mut fillers = Vec::with_capacity(articles);
    for i in 0..articles {
        let title = format!("{} zq{i:x}", titles[i % titles.len()]);
        tables
            .pageids
            .push((title.clone(), 1_000_000_000 + i as i64));
        tables.vectors.keys.push(title.clone());
        tables
            .vectors
            .data
            .extend((0..dim).map(|d| ((i * 31 + d) % 97) as f32 / 97.0 - 0.5));
        fillers.push(title);
    }
    for i in 0..articles / 2 {
        let anchor = format!("{} zq{i:x}", anchors[i % anchors.len()]);
        let target = fillers[(i * 7) % fillers.len()].clone();
        tables
            .anchors
            .push((anchor, vec![(target, 1 + (i % 5) as u32)]));
    }
    let path = write(&tables, model, checksums, out_dir);
    assert!(std::fs::metadata(&path).unwrap().len() > 64 << 20);
    path
}

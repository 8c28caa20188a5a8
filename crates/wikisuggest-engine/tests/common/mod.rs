//! Paths to the repository's test data, and small helpers shared by the test files.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The published-format enwiki parity datasets.
pub fn parity_dir() -> PathBuf {
    repo_root().join("tests/data/parity/datasets/enwiki")
}

/// The committed small reference fixtures (made by tests/fixtures_builder).
pub fn small_fixtures() -> PathBuf {
    repo_root().join("tests/data/engine-fixtures")
}

/// Fixture directories to check: the committed one, plus the one named by
/// `WIKISUGGEST_MODEL_FIXTURES` (large, generated in CI) when set.
pub fn fixture_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![small_fixtures()];
    match std::env::var_os("WIKISUGGEST_MODEL_FIXTURES") {
        Some(p) => dirs.push(PathBuf::from(p)),
        None => eprintln!(
            "notice: WIKISUGGEST_MODEL_FIXTURES is unset; checking only the committed \
             small fixtures (see tests/fixtures_builder/make_model_fixtures.py)"
        ),
    }
    dirs
}

/// One of the parity articles (tests/data/parity/articles).
pub struct Article {
    /// The file's stem, as the expected outputs are named.
    pub name: String,
    pub page_title: String,
    pub pageid: i64,
    pub revid: i64,
    pub wikitext: String,
}

/// The parity articles, in manifest order.
pub fn parity_articles() -> Vec<Article> {
    let root = repo_root().join("tests/data/parity/articles");
    let manifest = std::fs::read_to_string(root.join("manifest.tsv")).unwrap();
    manifest
        .lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 6, "{line}");
            assert_eq!((f[2], f[3]), ("enwiki", "en"));
            Article {
                name: Path::new(f[0])
                    .file_stem()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned(),
                page_title: f[1].to_owned(),
                pageid: f[4].parse().unwrap(),
                revid: f[5].parse().unwrap(),
                wikitext: std::fs::read_to_string(root.join(f[0])).unwrap(),
            }
        })
        .collect()
}

/// A fresh empty temporary folder for one test (`wikisuggest-engine-<pid>-<n>-<name>` in the
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
            "wikisuggest-engine-{}-{n}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self { path }
    }

    /// The file `path` inside this folder, which keeps the folder alive.
    pub fn file(self, path: PathBuf) -> TempFile {
        assert!(path.starts_with(&self.path), "{path:?} is outside {self:?}");
        TempFile { path, _dir: self }
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

/// A file in a [`TempDir`]: the folder goes when the file is dropped. It derefs to the
/// file's path.
pub struct TempFile {
    path: PathBuf,
    _dir: TempDir,
}

impl Deref for TempFile {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// A fresh empty temporary folder for one test, removed when dropped.
pub fn temp_dir(name: &str) -> TempDir {
    TempDir::new(name)
}

/// Copies the parity datasets into a fresh temporary folder, removed when dropped.
pub fn parity_copy(name: &str) -> TempDir {
    let dir = temp_dir(name);
    for entry in std::fs::read_dir(parity_dir()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    dir
}

/// Rewrites `path.checksum` so that `path` verifies again after a deliberate edit.
pub fn rewrite_checksum(path: &Path) {
    let digest = wikisuggest_engine::checksum::sha256_file(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy();
    std::fs::write(
        wikisuggest_engine::checksum::checksum_path(path),
        format!("{digest}  {name}\n"),
    )
    .unwrap();
}

/// A deterministic xorshift generator (tests need no external crate).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Python's `json.dumps(s, ensure_ascii=False)` for a string.
pub fn py_json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `bytes` gzip-compressed.
pub fn gz(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// The decompressed bytes of the gzip file at `path` (every member).
pub fn gunzip(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

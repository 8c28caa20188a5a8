//! A finished index opens and answers from a read-only folder, and opening and querying it
//! leaves the folder exactly as it was: no lock file, no rewritten `managed.json`, nothing
//! created and deleted (the folder's own modification time would show it). The listing is
//! compared as well as the permission bits, since a superuser writes through those.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use wikisuggest_search::{BuildOptions, Document, SearchError, SearchIndex, build_index};

/// Every entry under `dir` (and `dir` itself): size and modification time.
fn listing(dir: &Path) -> BTreeMap<PathBuf, (u64, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        out.insert(path.clone(), (meta.len(), meta.modified().unwrap()));
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                pending.push(entry.unwrap().path());
            }
        }
    }
    out
}

/// Dates `dir` and everything in it a day back: a file created and deleted, or rewritten, then
/// shows in the listing however coarse the file system's clock (a folder's time may otherwise
/// not move within one clock tick).
fn backdate(dir: &Path) {
    let past = SystemTime::now() - std::time::Duration::from_secs(86_400);
    for path in listing(dir).keys() {
        std::fs::File::open(path)
            .unwrap()
            .set_modified(past)
            .unwrap();
    }
}

/// Sets the write bits of `dir` and everything in it; restores them when dropped so the
/// temporary folder can be removed.
struct ReadOnly(PathBuf);

fn set_writable(dir: &Path, writable: bool) {
    for path in listing(dir).keys() {
        let mut perms = std::fs::metadata(path).unwrap().permissions();
        let mode = perms.mode();
        perms.set_mode(if writable {
            mode | 0o200
        } else {
            mode & !0o222
        });
        std::fs::set_permissions(path, perms).unwrap();
    }
}

impl ReadOnly {
    fn new(dir: &Path) -> Self {
        backdate(dir);
        set_writable(dir, false);
        Self(dir.to_path_buf())
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        set_writable(&self.0, true);
    }
}

fn document(page_id: u64, title: &str, text: &str) -> Document {
    Document {
        page_id,
        title: title.to_owned(),
        text: text.to_owned(),
        redirects: Vec::new(),
        disambiguation: false,
    }
}

#[test]
fn a_finished_index_is_read_from_a_read_only_folder_without_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("search");
    let docs = vec![
        document(1, "Apple", "apple fruit fruit tree tree orchard orchard"),
        document(2, "Pear", "pear fruit tree orchard orchard"),
        document(3, "Cherry", "cherry fruit blossom"),
        document(4, "Granite", "granite rock rock stone stone quarry"),
        document(5, "Basalt", "basalt rock stone lava"),
    ];
    build_index(&dir, docs, &BuildOptions::new("zz"), None).unwrap();
    let _guard = ReadOnly::new(&dir);
    let before = listing(&dir);

    let index = SearchIndex::open(&dir).unwrap();
    assert_eq!(index.documents(), 5);
    let hits = index.similar(&["Apple"], 10).unwrap();
    let titles: Vec<&str> = hits.iter().map(|h| h.title.as_str()).collect();
    assert_eq!(titles, ["Pear", "Cherry"]);
    let rocks = index
        .similar_ids(&["Granite".to_owned()], usize::MAX, Some(&|id| id != 0))
        .unwrap();
    assert_eq!(rocks, [5]);
    // A second reader of the same folder, while the first is open.
    let again = SearchIndex::open(&dir).unwrap();
    assert_eq!(again.similar(&["Apple"], 10).unwrap(), hits);
    drop((index, again));

    assert_eq!(listing(&dir), before);
}

#[test]
fn a_folder_whose_build_never_committed_is_incomplete_and_left_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("search");
    build_index(&dir, Vec::new(), &BuildOptions::new("zz"), None).unwrap();
    // What an interrupted first build leaves: the settings, no commit.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap() != wikisuggest_search::SETTINGS_FILE {
            std::fs::remove_file(path).unwrap();
        }
    }
    let _guard = ReadOnly::new(&dir);
    let before = listing(&dir);
    match SearchIndex::open(&dir) {
        Err(SearchError::Incomplete { documents: 0, .. }) => {}
        other => panic!("expected an incomplete index, got {:?}", other.map(|_| ())),
    }
    assert_eq!(listing(&dir), before);
}

#[test]
fn every_file_of_a_finished_index_is_as_readable_as_its_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("search");
    let docs = vec![
        document(1, "Apple", "apple fruit"),
        document(2, "Pear", "pear fruit"),
    ];
    build_index(&dir, docs, &BuildOptions::new("zz"), None).unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let settings = mode(&dir.join(wikisuggest_search::SETTINGS_FILE));
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(mode(&path), settings, "{}", path.display());
        // The writer's lock files go with it.
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!name.starts_with(".tantivy-"), "{name} is left");
    }
}

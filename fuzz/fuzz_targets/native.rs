//! The native `.linkdata` format: any bytes open to a typed error or a dataset whose every
//! accessor answers or fails typed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wikisuggest_engine::Dataset;

fuzz_target!(|data: &[u8]| {
    let Ok(ds) = Dataset::from_native_bytes(data.to_vec()) else {
        return;
    };
    let _ = ds.verify();
    for key in ["cat", "the", "!", "", "anarchism"] {
        let _ = ds.anchor_candidates(key);
        let _ = ds.redirect(key);
        let _ = ds.page_id(key);
        let _ = ds.vector(key).map(|v| v.map(|v| v.to_vec()));
    }
    let mut answers = Vec::new();
    let _ = ds.has_anchor_prefixes("the cat sat", &[3, 7, 11], &mut answers);
    let _ = ds.for_each_anchor(|_, _| Ok(()));
    for i in 0..ds.title_count().min(64) {
        let _ = ds.title_at(i);
    }
});

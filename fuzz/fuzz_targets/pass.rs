//! The whole placement pass over the shipped enwiki sample: a typed result for any page.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use wikisuggest_engine::{Dataset, Engine, LinkOptions, RecommendOptions};

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../python/wikisuggest/data/enwiki.linkdata");
        match Dataset::open_native(&path) {
            Ok(ds) => Engine::new(ds),
            Err(e) => panic!("the sample dataset does not open: {e}"),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let options = RecommendOptions {
        link: LinkOptions {
            threshold: 0.0,
            max_recommendations: 0,
            ..LinkOptions::default()
        },
        time_budget: Some(Duration::from_secs(2)),
        max_work: None,
        ..RecommendOptions::default()
    };
    let _ = engine().recommend(&text, "Fuzz", None, None, &options);
});

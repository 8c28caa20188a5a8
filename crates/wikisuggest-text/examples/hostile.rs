//! Times the parsers on pathological inputs of growing size.
//!
//! `cargo run --release -p wikisuggest-text --example hostile`

use std::time::Instant;

use wikisuggest_text::wikitext::{Wikitext, wikilinks};

#[path = "../tests/common/hostile_patterns.rs"]
mod hostile_patterns;
use hostile_patterns::PATTERNS;

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000, 100_000, 1_000_000]
    } else {
        sizes
    };
    for p in PATTERNS
        .iter()
        .map(|p| p.to_string())
        .chain(["{{a|[[b|<ref>''c".to_string()])
    {
        let mut line = format!("{p:>14?}");
        for &n in &sizes {
            let text = p.repeat(n / p.len());
            let t = Instant::now();
            let doc = Wikitext::parse(&text);
            let parse = t.elapsed();
            let t = Instant::now();
            let links = wikilinks(&text);
            let link_time = t.elapsed();
            line += &format!(
                "  {n:>8}: parse {:>8.1?} links {:>8.1?} ({} nodes, {} links)",
                parse,
                link_time,
                doc.nodes().len(),
                links.len()
            );
        }
        println!("{line}");
        use std::io::Write;
        let _ = std::io::stdout().flush();
    }
}

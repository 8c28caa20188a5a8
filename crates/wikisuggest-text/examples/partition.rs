//! Prints the top-level partition of a wikitext file: `kind start end level text…`.
//!
//! `cargo run -p wikisuggest-text --example partition -- FILE [FROM TO]`

use wikisuggest_text::wikitext::Wikitext;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: partition FILE [FROM TO]");
        return Ok(());
    };
    let from: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(0);
    let to: usize = args
        .get(3)
        .and_then(|a| a.parse().ok())
        .unwrap_or(usize::MAX);
    let doc = Wikitext::parse(&std::fs::read_to_string(path)?);
    for n in doc.nodes().iter().filter(|n| n.end > from && n.start < to) {
        let text: String = doc.node_text(n).chars().take(60).collect();
        println!(
            "{:?}\t{}\t{}\t{:?}\t{:?}",
            n.kind,
            n.start,
            n.end,
            n.heading_level(),
            text
        );
    }
    Ok(())
}

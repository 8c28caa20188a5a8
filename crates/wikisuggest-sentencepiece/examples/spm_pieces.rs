//! Prints the pieces of each stdin line as a JSON-ish list, for manual comparison.
use std::io::BufRead;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: spm_pieces MODEL < lines")?;
    let model = wikisuggest_sentencepiece::Model::from_bytes(&std::fs::read(path)?)?;
    for line in std::io::stdin().lock().lines() {
        println!("{:?}", model.encode_as_pieces(&line?));
    }
    Ok(())
}

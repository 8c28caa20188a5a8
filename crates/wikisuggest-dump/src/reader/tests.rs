use std::io::Write;

use super::*;
use crate::Revision;

const DUMP: &str = r#"<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="6" case="first-letter">File</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
  <page>
    <title>Fish &amp; Chips</title>
    <ns>0</ns>
    <id>12</id>
    <revision>
      <id>999</id>
      <contributor><username>X</username><id>77</id></contributor>
      <text xml:space="preserve">A [[dish]] &lt;b&gt; &#233;</text>
    </revision>
  </page>
  <page>
    <title>Chips</title>
    <ns>0</ns>
    <id>13</id>
    <redirect title="Fish &amp; Chips" />
    <revision><id>1000</id><text xml:space="preserve" /></revision>
  </page>
</mediawiki>
"#;

fn reader(bytes: &[u8], options: &DumpOptions) -> Result<DumpReader> {
    DumpReader::new(
        Box::new(std::io::Cursor::new(bytes.to_vec())),
        Path::new("t.xml"),
        options,
    )
}

/// Every item, and how the reading ended.
fn items(bytes: &[u8], options: &DumpOptions) -> (Vec<Item>, Result<()>) {
    items_named(
        Box::new(std::io::Cursor::new(bytes.to_vec())),
        "t.xml",
        options,
    )
}

/// Every item of the dump `source` (read as the file `name`) gives, and how the reading
/// ended.
fn items_named(
    source: Box<dyn Read + Send>,
    name: &str,
    options: &DumpOptions,
) -> (Vec<Item>, Result<()>) {
    let mut r = match DumpReader::new(source, Path::new(name), options) {
        Ok(r) => r,
        Err(e) => return (Vec::new(), Err(e)),
    };
    let mut out = Vec::new();
    loop {
        match r.next_item() {
            Ok(Some(item)) => out.push(item),
            Ok(None) => return (out, Ok(())),
            Err(e) => return (out, Err(e)),
        }
    }
}

fn page(title: &str, id: i64, text: &str) -> String {
    format!(
        "  <page>\n    <title>{title}</title>\n    <ns>0</ns>\n    <id>{id}</id>\n    \
         <revision><id>{}</id><text xml:space=\"preserve\">{text}</text></revision>\n  </page>\n",
        id + 100
    )
}

fn dump_of(pages: &[String]) -> String {
    let head = &DUMP[..DUMP.find("  <page>").unwrap_or(0)];
    format!("{head}{}</mediawiki>\n", pages.concat())
}

#[test]
fn reads_pages_namespaces_and_redirects() -> Result<()> {
    let mut r = reader(DUMP.as_bytes(), &DumpOptions::default())?;
    assert_eq!(r.namespaces().lookup("category"), Some(14));
    assert_eq!(r.namespaces().lookup("File"), Some(6));
    assert_eq!(r.namespaces().lookup("Talk"), None);
    assert_eq!(r.site().dbname.as_deref(), Some("enwiki"));
    let first = r.next_page()?;
    assert_eq!(
        first,
        Some(Page {
            ns: 0,
            id: 12,
            revision_id: Some(999),
            title: "Fish & Chips".into(),
            redirect: None,
            text: "A [[dish]] <b> é".into(),
            earlier_revisions: Vec::new(),
            offset: DUMP.find("<page>").unwrap_or(0) as u64,
        })
    );
    let Some(second) = r.next_page()? else {
        panic!("no second page");
    };
    assert_eq!(second.id, 13);
    assert_eq!(second.revision_id, Some(1000));
    assert_eq!(second.redirect.as_deref(), Some("Fish & Chips"));
    assert_eq!(second.text, "");
    assert_eq!(r.next_page()?, None);
    assert_eq!(r.next_page()?, None);
    Ok(())
}

#[test]
fn keeps_every_revision_when_asked() -> Result<()> {
    let text = DUMP.replace(
        "<revision>\n      <id>999</id>",
        "<revision><id>998</id><text>old</text></revision>\n    <revision>\n      <id>999</id>",
    );
    let options = DumpOptions {
        all_revisions: true,
        ..DumpOptions::default()
    };
    let (got, end) = items(text.as_bytes(), &options);
    end?;
    let Some(Ok(first)) = got.first() else {
        panic!("{got:?}");
    };
    assert_eq!(first.revision_id, Some(999));
    assert_eq!(
        first.earlier_revisions,
        [Revision {
            id: Some(998),
            text: "old".into()
        }]
    );
    // By default only the last is kept.
    let (got, _) = items(text.as_bytes(), &DumpOptions::default());
    assert!(
        matches!(got.first(), Some(Ok(p)) if p.earlier_revisions.is_empty() && p.text.starts_with("A [[dish"))
    );
    Ok(())
}

#[test]
fn a_dump_cut_between_pages_or_inside_one_is_truncated() {
    let whole = dump_of(
        &(0..200)
            .map(|i| page(&format!("P{i}"), i, "text"))
            .collect::<Vec<_>>(),
    );
    let (got, end) = items(whole.as_bytes(), &DumpOptions::default());
    assert!(end.is_ok() && got.len() == 200);
    // Cut after page 97: every page before it is read, then the end is refused.
    let cut = whole
        .match_indices("</page>")
        .nth(96)
        .map_or(0, |(i, _)| i + 8);
    let (got, end) = items(&whole.as_bytes()[..cut], &DumpOptions::default());
    assert_eq!(got.len(), 97);
    assert!(
        matches!(end, Err(DumpError::Truncated { ref place, .. }) if place == "between pages"),
        "{end:?}"
    );
    // Cut inside a page.
    let (got, end) = items(&whole.as_bytes()[..cut + 40], &DumpOptions::default());
    assert_eq!(got.len(), 97);
    let message = end.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.contains("inside the page that starts at byte"),
        "{message}"
    );
    // Cut before any page.
    let (_, end) = items(&whole.as_bytes()[..100], &DumpOptions::default());
    assert!(matches!(end, Err(DumpError::Truncated { .. })));
}

#[test]
fn a_dump_without_pages_ends_cleanly() -> Result<()> {
    let empty = dump_of(&[]);
    let mut r = reader(empty.as_bytes(), &DumpOptions::default())?;
    assert_eq!(r.site().dbname.as_deref(), Some("enwiki"));
    assert!(r.next_item()?.is_none());
    Ok(())
}

#[test]
fn an_oversized_page_is_its_error_and_reading_goes_on() -> Result<()> {
    let big = "x".repeat(5000);
    let dump = dump_of(&[
        page("Small", 1, "a"),
        page("Big", 2, &big),
        page("After", 3, "b"),
    ]);
    let options = DumpOptions {
        max_page_bytes: 4096,
        ..DumpOptions::default()
    };
    let (got, end) = items(dump.as_bytes(), &options);
    end?;
    assert_eq!(got.len(), 3);
    let Some(Err(error)) = got.get(1) else {
        panic!("{got:?}");
    };
    assert_eq!(
        (error.title.as_deref(), error.id, error.ns),
        (Some("Big"), Some(2), Some(0))
    );
    assert_eq!(
        error.offset,
        dump.find("<page>\n    <title>Big").unwrap_or(0) as u64
    );
    assert!(
        error
            .to_string()
            .contains("larger than the limit of 4096 bytes"),
        "{error}"
    );
    assert!(matches!(got.get(2), Some(Ok(p)) if p.title == "After" && p.text == "b"));
    Ok(())
}

#[test]
fn an_invalid_utf8_byte_is_that_pages_error_and_reading_resynchronises() -> Result<()> {
    let dump = dump_of(&[
        page("One", 1, "a"),
        page("Two", 2, "b\u{00e9}c"),
        page("Three", 3, "d"),
    ]);
    let mut bytes = dump.into_bytes();
    // The second byte of "é" replaced: an invalid sequence in the second page's text.
    let at = bytes
        .windows(2)
        .position(|w| w == "é".as_bytes())
        .unwrap_or(0);
    bytes[at + 1] = b'(';
    let (got, end) = items(&bytes, &DumpOptions::default());
    end?;
    assert_eq!(got.len(), 3);
    let Some(Err(error)) = got.get(1) else {
        panic!("{got:?}");
    };
    assert_eq!(
        (error.title.as_deref(), error.id, error.revision_id),
        (Some("Two"), Some(2), Some(102))
    );
    assert!(matches!(got.get(2), Some(Ok(p)) if p.title == "Three"));
    Ok(())
}

#[test]
fn malformed_pages_are_their_own_errors() -> Result<()> {
    let bad = [
        "  <page><title>A</title><ns>zero</ns><id>1</id></page>\n".to_owned(),
        "  <page><title>B</title><ns>0</ns><id>2</id><revision><text>&bogus;</text></revision></page>\n".into(),
        "  <page><title>C</title><ns>0</ns><id>3</id><revision></text></revision></page>\n".into(),
        page("Good", 4, "fine"),
    ];
    let (got, end) = items(dump_of(&bad).as_bytes(), &DumpOptions::default());
    end?;
    let errors: Vec<_> = got.iter().filter_map(|i| i.as_ref().err()).collect();
    assert_eq!(errors.len(), 3, "{got:?}");
    assert_eq!(errors[0].ns, None);
    assert_eq!(errors[1].title.as_deref(), Some("B"));
    assert!(matches!(got.last(), Some(Ok(p)) if p.title == "Good"));
    Ok(())
}

fn write_temp(name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let path = std::env::temp_dir().join(format!("ws-dump-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes)?;
    Ok(path)
}

fn bz2(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    enc.write_all(bytes)?;
    enc.finish()
}

fn titles(path: &Path) -> Result<Vec<String>> {
    let mut r = open(path, &DumpOptions::default())?;
    let mut titles = Vec::new();
    while let Some(p) = r.next_page()? {
        titles.push(p.title);
    }
    Ok(titles)
}

#[test]
fn reads_multistream_bz2_and_refuses_one_cut_at_a_stream_boundary() -> std::io::Result<()> {
    // Wikimedia's multistream dumps are concatenated bzip2 streams: the header, then pages.
    let (head, tail) = DUMP.split_at(DUMP.find("  <page>").unwrap_or(0));
    let (pages, end) = tail.split_at(tail.find("</mediawiki>").unwrap_or(0));
    let streams = [
        bz2(head.as_bytes())?,
        bz2(pages.as_bytes())?,
        bz2(end.as_bytes())?,
    ];
    let path = write_temp("multi.xml.bz2", &streams.concat())?;
    assert_eq!(
        titles(&path).ok(),
        Some(vec!["Fish & Chips".to_owned(), "Chips".to_owned()])
    );
    // Without its last stream the dump decompresses cleanly, but it has no end.
    std::fs::write(&path, streams[..2].concat())?;
    assert!(matches!(titles(&path), Err(DumpError::Truncated { .. })));
    std::fs::remove_file(&path)
}

#[test]
fn reads_every_member_of_a_multi_member_gzip() -> std::io::Result<()> {
    // What `cat a.gz b.gz`, pigz and bgzip write: one gzip member after another.
    let (head, tail) = DUMP.split_at(DUMP.find("<page>").unwrap_or(0));
    let mut bytes = Vec::new();
    for part in [head, tail] {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(part.as_bytes())?;
        bytes.extend(enc.finish()?);
    }
    let path = write_temp("members.xml.gz", &bytes)?;
    assert_eq!(
        titles(&path).ok(),
        Some(vec!["Fish & Chips".to_owned(), "Chips".to_owned()])
    );
    std::fs::remove_file(&path)
}

#[test]
fn a_compressed_bomb_is_read_in_bounded_memory_to_the_next_page() -> std::io::Result<()> {
    // One page whose text is 64 MiB of one byte: a few hundred bytes of bzip2.
    let head = &DUMP[..DUMP.find("  <page>").unwrap_or(0)];
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    enc.write_all(head.as_bytes())?;
    enc.write_all(b"<page><title>Bomb</title><ns>0</ns><id>1</id><revision><text>")?;
    let block = vec![b'a'; 1 << 20];
    for _ in 0..64 {
        enc.write_all(&block)?;
    }
    enc.write_all(b"</text></revision></page>")?;
    enc.write_all(page("After", 2, "fine").as_bytes())?;
    enc.write_all(b"</mediawiki>")?;
    let path = write_temp("bomb.xml.bz2", &enc.finish()?)?;
    assert!(std::fs::metadata(&path)?.len() < 64 << 10);
    let options = DumpOptions {
        max_page_bytes: 1 << 20,
        ..DumpOptions::default()
    };
    let (got, end) = match open(&path, &options) {
        Ok(mut r) => {
            let mut got = Vec::new();
            let end = loop {
                match r.next_item() {
                    Ok(Some(item)) => got.push(item),
                    Ok(None) => break Ok(()),
                    Err(e) => break Err(e),
                }
            };
            (got, end)
        }
        Err(e) => (Vec::new(), Err(e)),
    };
    std::fs::remove_file(&path)?;
    assert!(end.is_ok(), "{end:?}");
    assert!(
        matches!(got.first(), Some(Err(e)) if e.title.as_deref() == Some("Bomb")),
        "{got:?}"
    );
    assert!(matches!(got.get(1), Some(Ok(p)) if p.title == "After"));
    Ok(())
}

/// Every item of the dump `source` gives, and how the reading ended.
fn items_of(source: Box<dyn Read + Send>, options: &DumpOptions) -> (Vec<Item>, Result<()>) {
    items_named(source, "t.xml.bz2", options)
}

/// The items of the file at `path` decoded in parallel and by one sequential decoder.
fn parallel_and_sequential(
    path: &Path,
    options: &DumpOptions,
) -> std::io::Result<[(Vec<Item>, Result<()>); 2]> {
    let parallel = crate::multistream::ParallelBz2::open(path, 2)?;
    let file = std::io::BufReader::new(std::fs::File::open(path)?);
    let sequential = bzip2::read::MultiBzDecoder::new(file);
    Ok([
        items_of(Box::new(parallel), options),
        items_of(Box::new(sequential), options),
    ])
}

/// A multistream dump as Wikimedia writes it: the header, streams of 100 pages, the end.
/// The page texts barely compress, so that the file spans several decoding jobs.
fn multistream_dump(pages: usize) -> std::io::Result<Vec<Vec<u8>>> {
    let head = &DUMP[..DUMP.find("  <page>").unwrap_or(0)];
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    let mut text = |len: usize| -> String {
        (0..len)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                char::from(b"abcdefghijklmnop [|]\n"[((x >> 33) % 21) as usize])
            })
            .collect()
    };
    let mut streams = vec![bz2(head.as_bytes())?];
    for first in (0..pages).step_by(100) {
        let chunk: String = (first..pages.min(first + 100))
            .map(|i| page(&format!("P{i}"), i64::try_from(i).unwrap_or(0), &text(4000)))
            .collect();
        streams.push(bz2(chunk.as_bytes())?);
    }
    streams.push(bz2(b"</mediawiki>\n")?);
    Ok(streams)
}

#[test]
fn a_multistream_dump_decoded_in_parallel_gives_the_pages_of_sequential_decoding()
-> std::io::Result<()> {
    let streams = multistream_dump(1500)?;
    let whole = streams.concat();
    assert!(whole.len() > 2 * crate::multistream::JOB_BYTES);
    let path = write_temp("parallel.xml.bz2", &whole)?;
    let options = DumpOptions::default();

    let [(parallel, parallel_end), (sequential, sequential_end)] =
        parallel_and_sequential(&path, &options)?;
    assert!(parallel_end.is_ok() && sequential_end.is_ok());
    assert_eq!(parallel.len(), 1500);
    assert!(parallel == sequential);
    assert!(matches!(parallel.last(), Some(Ok(p)) if p.title == "P1499"));

    // Cut at a stream boundary (the end's stream is missing): every page, then truncated.
    std::fs::write(&path, streams[..streams.len() - 1].concat())?;
    let [(parallel, parallel_end), (sequential, sequential_end)] =
        parallel_and_sequential(&path, &options)?;
    assert!(matches!(parallel_end, Err(DumpError::Truncated { .. })));
    assert!(matches!(sequential_end, Err(DumpError::Truncated { .. })));
    assert!(parallel == sequential && parallel.len() == 1500);

    // Cut inside a stream in the middle: the pages before it, then the decoder's error
    // (as on one thread, up to a chunk of the bytes before a decoder's error is not handed on).
    let cut = streams[..8].concat().len() + streams[8].len() / 2;
    std::fs::write(&path, &whole[..cut])?;
    let [(parallel, parallel_end), (sequential, sequential_end)] =
        parallel_and_sequential(&path, &options)?;
    assert!(parallel_end.is_err() && sequential_end.is_err());
    assert!(sequential.len() < 800 && sequential.starts_with(&parallel));
    let chunk_pages = crate::prefetch::Prefetch::CHUNK / 4000;
    assert!(parallel.len() >= 700 - chunk_pages, "{}", parallel.len());
    std::fs::remove_file(&path)
}

#[test]
fn a_bomb_stream_in_a_multistream_dump_is_that_pages_error_in_parallel_decoding()
-> std::io::Result<()> {
    // One stream in the middle holds a page of more than a decoding job's largest output.
    let mut streams = multistream_dump(300)?;
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    enc.write_all(b"  <page><title>Bomb</title><ns>0</ns><id>9999</id><revision><text>")?;
    let block = vec![b'a'; 1 << 20];
    for _ in 0..(crate::multistream::MAX_JOB_OUTPUT >> 20) + 8 {
        enc.write_all(&block)?;
    }
    enc.write_all(b"</text></revision></page>\n")?;
    streams.insert(2, enc.finish()?);
    let path = write_temp("parallel-bomb.xml.bz2", &streams.concat())?;
    let options = DumpOptions {
        max_page_bytes: 1 << 20,
        ..DumpOptions::default()
    };
    let [(parallel, parallel_end), (sequential, sequential_end)] =
        parallel_and_sequential(&path, &options)?;
    std::fs::remove_file(&path)?;
    assert!(
        parallel_end.is_ok() && sequential_end.is_ok(),
        "{parallel_end:?}"
    );
    assert!(parallel == sequential);
    assert_eq!(parallel.len(), 301);
    assert!(matches!(&parallel[100], Err(e) if e.title.as_deref() == Some("Bomb")));
    assert!(matches!(parallel.last(), Some(Ok(p)) if p.title == "P299"));
    Ok(())
}

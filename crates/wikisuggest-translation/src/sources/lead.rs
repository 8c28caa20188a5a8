//! The lead section's size: bytes of wikitext before the first section heading.
//!
//! Production asks `action=parse&prop=sections` and takes the first section's `byteoffset`.
//! From a dump, the same number is the byte offset of the first line the parser reads as a
//! heading: a line of `=`…`=` (trailing spaces and comments allowed), outside comments and
//! outside tags whose content is not wikitext (`<nowiki>`, `<pre>`, `<math>`, `<ref>`…).
//! What cannot be seen in the page's own text is not counted: a heading that a template
//! writes (production then reports no offset for that section).

/// Tags whose content is never a heading (extension tags and `<nowiki>`/`<pre>`).
const OPAQUE_TAGS: [&str; 17] = [
    "nowiki",
    "pre",
    "math",
    "ref",
    "references",
    "syntaxhighlight",
    "source",
    "gallery",
    "poem",
    "score",
    "timeline",
    "graph",
    "chem",
    "ce",
    "templatedata",
    "mapframe",
    "hiero",
];

/// The byte offset of the first section heading of `wikitext`, or `None` if it has none.
pub fn lead_section_size(wikitext: &str) -> Option<u64> {
    let bytes = wikitext.as_bytes();
    let mut i = 0;
    let mut line_start = true;
    while i < bytes.len() {
        let b = bytes[i];
        if line_start && b == b'=' {
            let end = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n);
            if is_heading(&wikitext[i..end]) {
                return Some(i as u64);
            }
        }
        if b == b'<'
            && let Some(after) = skip_opaque(bytes, i)
        {
            i = after;
            line_start = false;
            continue;
        }
        line_start = b == b'\n';
        i += 1;
    }
    None
}

/// Whether `line` (without its newline) is a heading: `=` runs at both ends around some text,
/// then only spaces, tabs or comments.
fn is_heading(line: &str) -> bool {
    let mut body = line;
    // Trailing whitespace and comments do not end a heading line.
    loop {
        let trimmed = body.trim_end_matches([' ', '\t', '\r']);
        if let Some(stripped) = trimmed.strip_suffix("-->")
            && let Some(start) = stripped.rfind("<!--")
        {
            body = &trimmed[..start];
            continue;
        }
        body = trimmed;
        break;
    }
    let lead = body.bytes().take_while(|&b| b == b'=').count();
    let trail = body.bytes().rev().take_while(|&b| b == b'=').count();
    if lead == 0 || trail == 0 || lead == body.len() {
        // `=` alone or a line of `=` only: `==` is a level-1 heading of `=` for MediaWiki
        // only from three `=` on, which the check below allows.
        return body.len() >= 3 && lead == body.len();
    }
    let level = lead.min(trail);
    !body[level..body.len() - level].trim().is_empty()
}

/// If a comment or an opaque tag starts at `i`, the offset just after its end (or the text's
/// end when it is never closed, as MediaWiki reads an unclosed comment).
fn skip_opaque(bytes: &[u8], i: usize) -> Option<usize> {
    let rest = &bytes[i..];
    if rest.starts_with(b"<!--") {
        return Some(
            memchr::memmem::find(&rest[4..], b"-->").map_or(bytes.len(), |n| i + 4 + n + 3),
        );
    }
    let name_len = rest[1..]
        .iter()
        .take_while(|b| b.is_ascii_alphabetic())
        .count();
    if name_len == 0 {
        return None;
    }
    let name = std::str::from_utf8(&rest[1..=name_len])
        .ok()?
        .to_ascii_lowercase();
    if !OPAQUE_TAGS.contains(&name.as_str()) {
        return None;
    }
    let open_end = memchr::memchr(b'>', rest).map(|n| i + n + 1)?;
    if bytes[open_end - 2] == b'/' {
        // `<ref name="x" />`: nothing inside.
        return Some(open_end);
    }
    let close = format!("</{name}");
    let lower_rest = bytes[open_end..].to_ascii_lowercase();
    Some(
        memchr::memmem::find(&lower_rest, close.as_bytes())
            .and_then(|n| {
                memchr::memchr(b'>', &bytes[open_end + n..]).map(|m| open_end + n + m + 1)
            })
            .unwrap_or(bytes.len()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_heading_ends_the_lead() {
        let text = "Lead text.\n\n== History ==\nMore.\n=== Sub ===\n";
        assert_eq!(lead_section_size(text), Some(12));
        assert_eq!(lead_section_size("No sections at all.\n"), None);
        assert_eq!(lead_section_size("== First ==\nbody"), Some(0));
        // A level-1 heading counts, trailing spaces and comments too.
        assert_eq!(lead_section_size("a\n=Top=  <!-- c -->\n"), Some(2));
    }

    #[test]
    fn headings_hidden_in_comments_and_tags_do_not_count() {
        let text = "x\n<!--\n== Not ==\n-->\n<pre>\n== Nope ==\n</pre>\n== Yes ==\n";
        assert_eq!(
            lead_section_size(text),
            Some(text.find("== Yes").unwrap() as u64)
        );
        let text = "x<ref name=a/>\n<ref>\n== In ref ==\n</ref>\n== Out ==\n";
        assert_eq!(
            lead_section_size(text),
            Some(text.find("== Out").unwrap() as u64)
        );
        // Not a heading: unbalanced, text after, nothing inside.
        assert_eq!(lead_section_size("a\n== x\nb ==\n= = y\n"), None);
        assert_eq!(lead_section_size("a\n==  ==\n"), None);
        // Bytes, not characters.
        assert_eq!(lead_section_size("é\n==b==\n"), Some(3));
    }
}

//! What a top-level node is: the one word the tokenizer and the partition share.

/// Kinds of top-level nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// Plain text: the only kind searched for link candidates.
    Text,
    /// `{{…}}`
    Template,
    /// `{{{…}}}`
    Argument,
    /// `[[…]]`
    Wikilink,
    /// `[url label]` or a bare URL.
    ExternalLink,
    /// `<!-- … -->`
    Comment,
    /// `&name;`, `&#123;`, `&#x7b;`
    HtmlEntity,
    /// `== … ==` at the start of a line.
    Heading,
    /// HTML and extension tags, bold/italics, list markers, `----`, tables.
    Tag,
}

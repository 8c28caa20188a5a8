//! Constructs that are hostile when repeated (unclosed, unbalanced, opening without end):
//! the hostile-input tests repeat each, and the `hostile` example times the parsers on them.

/// One construct a page may repeat thousands of times.
pub const PATTERNS: [&str; 20] = [
    "{{",
    "}}",
    "[[",
    "]]",
    "<ref>",
    "</ref>",
    "''",
    "'''",
    "'''''",
    "{|\n",
    "|}\n",
    "<!--",
    "-->",
    "[http://x ",
    "==a\n",
    "{{a|",
    "[[a|",
    "<b>",
    "&amp",
    "{{{",
];

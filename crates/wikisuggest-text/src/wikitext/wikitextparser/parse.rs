//! The search: extension tags first, then frames of rounds over links, parameters and
//! templates, as wikitextparser's `parse_to_spans` runs them.
//!
//! A *frame* is one call of upstream's `_parse_sub_spans` on a range: HTML tags are found
//! and their brackets blanked; then rounds alternate — links and parameters are matched
//! (searching backwards), each match's inside gets a frame of its own and the match is
//! masked, until a round finds none; then templates are matched and masked — until a
//! template round finds none; last, the HTML tags' pipes, braces and newlines are blanked.
//!
//! Upstream scans the whole range again in every round. Here the first round of each kind
//! tries every candidate position of the range (a `]` or `}` for links and parameters, a
//! `{{` for templates), and later rounds retry only the candidates whose window (what their
//! last attempt read) meets a span masked since: no other attempt can come out otherwise.
//! Candidates are kept as sets of live positions, so masked spans are never scanned again,
//! and every scan steps over masked blocks whole (see `shadow`). The links found, and the
//! order in which spans are masked, are upstream's.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::LinkRanges;
use super::failures::Failures;
use super::live::LiveSet;
use super::shadow::{Blocks, Reader, Shadow};
use super::{BARE_URL_SCHEMES, PARSABLE_TAGS, UNPARSABLE_TAGS};
use crate::wikitext::ParseLimits;
use crate::wikitext::lexer::Lexed;

/// How deeply frames may nest (each a stack frame of the search): real pages need a few;
/// deeper nesting ends the search as over its work limit.
const MAX_FRAME_DEPTH: usize = 200;

/// How much work passes between two looks at the clock and the cancellation flag.
const CHECK_INTERVAL: u64 = 1 << 14;

/// Work accounting for one search (positions read, blocks stepped over, candidates and
/// set entries handled), against optional limits.
pub(in crate::wikitext) struct Work<'c> {
    pub done: u64,
    max: Option<u64>,
    deadline: Option<Instant>,
    cancel: Option<&'c AtomicBool>,
    /// `done / CHECK_INTERVAL` at the last look at the clock.
    checked: u64,
    pub exhausted: bool,
}

impl<'c> Work<'c> {
    pub(in crate::wikitext) fn new(limits: &ParseLimits, cancel: Option<&'c AtomicBool>) -> Self {
        Self {
            done: 0,
            max: limits.max_reads,
            deadline: limits.deadline,
            cancel,
            checked: 0,
            exhausted: false,
        }
    }

    /// Counts `n` units of work; `false` once a limit is hit (everything then stops).
    #[inline]
    fn charge(&mut self, n: u64) -> bool {
        if self.exhausted {
            return false;
        }
        self.done = self.done.saturating_add(n);
        if self.max.is_some_and(|m| self.done > m) {
            self.exhausted = true;
        } else if self.done / CHECK_INTERVAL != self.checked {
            self.checked = self.done / CHECK_INTERVAL;
            self.exhausted = self.deadline.is_some_and(|d| Instant::now() > d)
                || self.cancel.is_some_and(|c| c.load(Ordering::Relaxed));
        }
        !self.exhausted
    }
}

/// The state of one search.
pub(in crate::wikitext) struct Parser<'c> {
    s: Shadow,
    /// Live `]` and `}`: where a link or parameter may end.
    closers: LiveSet,
    /// Live `{{` (the first brace): where a template may start.
    opens: LiveSet,
    /// Live `<` outside masked blocks: where an HTML tag may start.
    tags: LiveSet,
    /// Live `>`: where an HTML tag may end.
    closes: LiveSet,
    pub work: Work<'c>,
    pub found: Vec<LinkRanges>,
    /// The windows of failed attempts at link and parameter candidates, and at template
    /// candidates (one set for all frames, see [`Failures::new`]).
    link_failures: Failures,
    template_failures: Failures,
    /// Retry lists of finished frames, for the next frames.
    spare: Vec<Vec<usize>>,
    depth: usize,
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether `c` may be in a link's or template's title (by table: it runs over every
/// byte of every title, where a `match` becomes a jump per byte).
#[inline]
fn is_title_byte(c: u8) -> bool {
    TITLE_BYTE[usize::from(c)]
}

/// [`is_title_byte`] by table.
const TITLE_BYTE: [bool; 256] = {
    let mut table = [true; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = !matches!(
            i as u8,
            1..=6 | b'|' | b'{' | b'}' | b'[' | b']' | b'<' | b'>' | b'\n'
        );
        i += 1;
    }
    table
};

fn is_url_byte(c: u8) -> bool {
    !matches!(c, b' ' | b'\t' | b'\n' | b'"' | b'<' | b'>' | b'[' | b']')
}

fn is_space_or_nul(c: u8) -> bool {
    c.is_ascii_whitespace() || c == 0
}

/// What a link's mask turns a byte into.
#[inline]
fn link_mask(c: u8) -> u8 {
    LINK_MASK[usize::from(c)]
}

/// [`link_mask`] by table (it runs over every byte of every link).
const LINK_MASK: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = match i as u8 {
            b'|' => 1,
            b'[' => 2,
            b']' => 3,
            b'<' => 4,
            b'{' => 5,
            b'}' => 6,
            b'\'' => 7,
            other => other,
        };
        i += 1;
    }
    table
};

/// The bytes without which a frame has nothing to find: `]`, `}` (links, parameters), `{`
/// (templates), `<` (tags).
const GIVES_FRAME_WORK: [bool; 256] = {
    let mut table = [false; 256];
    table[b']' as usize] = true;
    table[b'}' as usize] = true;
    table[b'{' as usize] = true;
    table[b'<' as usize] = true;
    table
};

/// A byte that is no candidate, in [`CANDIDATE_KIND`].
const NO_CANDIDATE: u8 = 255;

/// The list [`Candidates::of_lexed`] files a byte under: `]` and `}` (0), `{` (1, a
/// template's when another follows, else 4: none), `<` (2), `>` (3).
const CANDIDATE_KIND: [u8; 256] = {
    let mut table = [NO_CANDIDATE; 256];
    table[b']' as usize] = 0;
    table[b'}' as usize] = 0;
    table[b'{' as usize] = 1;
    table[b'<' as usize] = 2;
    table[b'>' as usize] = 3;
    table
};

/// Bytes per candidate of one kind the candidate lists are first sized for.
const CANDIDATES_EVERY: usize = 64;

/// The positions a search starts from: every `]` and `}`, every `{{` (its first brace),
/// every `<` and every `>` of the text, each list ascending.
#[derive(Default)]
pub(in crate::wikitext) struct Candidates {
    pub closers: Vec<u32>,
    pub opens: Vec<u32>,
    pub tags: Vec<u32>,
    pub closes: Vec<u32>,
}

impl Candidates {
    /// The lexer's candidates, each filed by table, without a branch on its kind.
    fn of_lexed(lexed: &Lexed<'_>) -> Self {
        let b = lexed.bytes();
        let each = b.len() / CANDIDATES_EVERY;
        let mut lists = [
            Vec::with_capacity(2 * each),
            Vec::with_capacity(each),
            Vec::with_capacity(each),
            Vec::with_capacity(each),
            Vec::with_capacity(each / 4),
        ];
        for i in lexed.candidates_from(0) {
            let c = b.get(i).copied().unwrap_or(0);
            // Every candidate has a kind (a byte without one would go to no list).
            let kind = CANDIDATE_KIND[usize::from(c)];
            // A `{` is a template candidate only when another follows (else it goes to a
            // list thrown away).
            let lone_brace = (c == b'{') & (b.get(i + 1).copied() != Some(b'{'));
            let kind = kind + 3 * u8::from(lone_brace);
            if let Some(list) = lists.get_mut(usize::from(kind)) {
                list.push(i as u32);
            }
        }
        let [closers, opens, tags, closes, _] = lists;
        Self {
            closers,
            opens,
            tags,
            closes,
        }
    }

    /// Files the byte at `i` of `b` under its kind, if it has one (the oracle's way).
    #[cfg(any(test, feature = "oracle"))]
    pub(in crate::wikitext) fn file(&mut self, b: &[u8], i: usize) {
        match b.get(i) {
            Some(b']' | b'}') => self.closers.push(i as u32),
            Some(b'{') if b.get(i + 1) == Some(&b'{') => self.opens.push(i as u32),
            Some(b'<') => self.tags.push(i as u32),
            Some(b'>') => self.closes.push(i as u32),
            _ => {}
        }
    }
}

impl<'c> Parser<'c> {
    /// The search of the lexed text, from the lexer's candidates.
    pub(super) fn new(lexed: &Lexed<'_>, work: Work<'c>) -> Self {
        let candidates = Candidates::of_lexed(lexed);
        Self::with_candidates(Shadow::new(lexed.text()), candidates, work)
    }

    /// The search over `s` (the text's shadow) from `candidates`.
    pub(in crate::wikitext) fn with_candidates(
        s: Shadow,
        candidates: Candidates,
        work: Work<'c>,
    ) -> Self {
        let Candidates {
            closers,
            opens,
            tags,
            closes,
        } = candidates;
        Self {
            s,
            link_failures: Failures::new(closers.len()),
            template_failures: Failures::new(opens.len()),
            closers: LiveSet::from_positions(closers),
            opens: LiveSet::from_positions(opens),
            tags: LiveSet::from_positions(tags),
            closes: LiveSet::from_positions(closes),
            work,
            found: Vec::new(),
            spare: Vec::new(),
            depth: 0,
        }
    }

    pub(in crate::wikitext) fn run(&mut self) {
        let len = self.s.b.len();
        self.extract_tag_extensions(0, len);
        self.frame(0, len);
        self.found.sort_by_key(|l| (l.span.start, l.span.end));
    }

    // ----- masking -----------------------------------------------------------------

    /// Masks a link: its own `|[]'{}` become control bytes (the blocks inside it are
    /// masked already), so that the link is plain text to the link pattern. Its `<` become
    /// a control byte too: a tag inside a link was found and blanked by the link's own
    /// frame, so finding it again would change nothing.
    fn mask_link(&mut self, span: &Range<usize>) {
        let steps = self.s.visit(span.start, span.end, Blocks::ALL, |run| {
            run.iter_mut().for_each(|c| *c = link_mask(*c));
        });
        self.work.charge(steps);
        self.s.set_block(span.start, span.end);
    }

    /// Masks a span whose every byte becomes `byte` (a parameter `_`, a template `X`):
    /// written over everything but the uniform blocks inside (masked links included, see
    /// `shadow`).
    fn fill(&mut self, span: &Range<usize>, byte: u8) {
        let steps = self
            .s
            .visit(span.start, span.end, Blocks::UNIFORM, |run| run.fill(byte));
        self.work.charge(steps);
        self.s.set_block(span.start, span.end);
    }

    /// Masks a template with an invalid name: `_` but for its second byte, still `{`.
    fn fill_invalid_template(&mut self, span: &Range<usize>) {
        self.s.set(span.start, b'_');
        self.fill(&(span.start + 2..span.end), b'_');
    }

    /// Overwrites every byte of `span` (comments and extension tags, masked before any
    /// frame runs over them, or once a tag's own frame is done).
    fn fill_all(&mut self, span: &Range<usize>, byte: u8) {
        if let Some(bytes) = self.s.b.get_mut(span.clone()) {
            bytes.fill(byte);
        }
        self.work.charge(span.len() as u64 / 16 + 1);
        self.s.set_block(span.start, span.end);
    }

    // ----- extension tags ------------------------------------------------------------

    /// `extract_tag_extensions`: comments, unparsable and parsable extension tags of
    /// `start..end`, in order.
    fn extract_tag_extensions(&mut self, start: usize, end: usize) {
        if !self.work.charge(end.saturating_sub(start) as u64 + 1) {
            return;
        }
        let mut cache = CloseCache::default();
        let mut i = start;
        while i < end {
            if self.s.b.get(i) != Some(&b'<') {
                i = next_byte(&self.s.b, b'<', i, end);
                continue;
            }
            match match_extension_at(&self.s.b, i, end, &mut cache) {
                Some(ExtMatch::Comment(e)) => {
                    self.fill_all(&(i..e), 0);
                    i = e;
                }
                Some(ExtMatch::Unparsable(e)) => {
                    self.fill_all(&(i..e), b'_');
                    i = e;
                }
                Some(ExtMatch::Parsable { end: e, content }) => {
                    self.extract_tag_extensions(content.start, content.end);
                    self.frame(i, e);
                    self.fill_all(&content, b'_');
                    i = e;
                }
                None => i += 1,
            }
        }
    }

    // ----- frames --------------------------------------------------------------------

    /// `_parse_sub_spans` of `start..end`.
    fn frame(&mut self, start: usize, end: usize) {
        if self.depth >= MAX_FRAME_DEPTH {
            self.work.exhausted = true;
        }
        if !self.work.charge(1) {
            return;
        }
        // Most frames are the inside of a short link with nothing to find: no `]` or `}`
        // (links, parameters), no `{` (templates), no `<` (tags). A short range is looked
        // at directly; a byte left inside a masked block only sends it the long way.
        if let Some(range) = self.s.b.get(start..end)
            && range.len() <= 256
        {
            self.work.charge(range.len() as u64 / 16);
            // One pass by table (most are a few bytes long).
            if !range.iter().any(|&c| GIVES_FRAME_WORK[usize::from(c)]) {
                return;
            }
        }
        self.depth += 1;
        let tags = self.html_tags(start, end);
        for tag in &tags {
            self.blank_brackets(tag);
        }
        let mut frame = Frame {
            start,
            end,
            closers: (self.closers.index_at(start), self.closers.index_at(end)),
            // A template needs its two braces inside the range.
            opens: (
                self.opens.index_at(start),
                self.opens.index_at(end.saturating_sub(1).max(start)),
            ),
            link_retries: self.spare.pop().unwrap_or_default(),
            template_retries: self.spare.pop().unwrap_or_default(),
        };
        self.rounds(&mut frame);
        for tag in &tags {
            self.blank_sensitive(tag);
        }
        for mut retries in [frame.link_retries, frame.template_retries] {
            retries.clear();
            self.spare.push(retries);
        }
        self.depth -= 1;
    }

    /// The rounds of a frame.
    fn rounds(&mut self, frame: &mut Frame) {
        let mut first_links = true;
        let mut first_templates = true;
        loop {
            loop {
                let matches = self.scan_links(frame, first_links);
                first_links = false;
                if matches.is_empty() || self.work.exhausted {
                    break;
                }
                // Upstream searches backwards; masked in that order.
                for (span, is_link, index) in matches.into_iter().rev() {
                    let inner_end = span.end.saturating_sub(2).max(span.start + 2);
                    self.frame(span.start + 2, inner_end);
                    if self.work.exhausted {
                        return;
                    }
                    if is_link {
                        let link = self.split_link(&span);
                        self.found.push(link);
                        self.mask_link(&span);
                    } else {
                        self.fill(&span, b'_');
                    }
                    self.changed(frame, &span, Matched::Closer(index));
                }
            }
            let templates = self.scan_templates(frame, first_templates);
            first_templates = false;
            if templates.is_empty() || self.work.exhausted {
                return;
            }
            for (span, valid_name, index) in templates {
                if valid_name {
                    self.fill(&span, b'X');
                } else {
                    self.fill_invalid_template(&span);
                }
                self.changed(frame, &span, Matched::Open(index));
            }
        }
    }

    /// After `span` was masked: the failed attempts of `frame` whose window meets it are
    /// due for a retry. The candidates inside it are dead; `matched` is the one whose
    /// attempt found it, which tells where the candidates around it are without a search.
    fn changed(&mut self, frame: &mut Frame, span: &Range<usize>, matched: Matched) {
        let b = &self.s.b;
        let (closers, opens) = (&mut self.closers, &mut self.opens);
        let (closer, open) = (|p| is_closer(b, p), |p| is_open(b, p));
        // The first candidate indices at or after the span's start and at or after its end
        // (the dead ones in between count as inside: retrying one changes nothing).
        let (closers_at, opens_at) = match matched {
            Matched::Closer(m) => {
                let inside = m.checked_sub(1).and_then(|i| closers.live_until(i, closer));
                let opens_inside = opens.index_at(span.start.saturating_sub(1));
                (
                    (inside.map_or(0, |i| i + 1), m + 1),
                    (opens_inside, opens.live_from(opens_inside, open)),
                )
            }
            Matched::Open(m) => {
                let closers_inside = closers.index_at(span.start);
                (
                    (closers_inside, closers.live_from(closers_inside, closer)),
                    (m, opens.live_from(m + 1, open)),
                )
            }
        };
        let clamp = |(inside, after): (usize, usize), (lo, hi): (usize, usize)| {
            (inside.clamp(lo, hi), after.clamp(lo, hi))
        };
        let steps = self.link_failures.take_meeting(
            frame.closers,
            (span.start, span.end),
            clamp(closers_at, frame.closers),
            self.closers.positions(),
            &mut frame.link_retries,
        ) + self.template_failures.take_meeting(
            frame.opens,
            (span.start, span.end),
            clamp(opens_at, frame.opens),
            self.opens.positions(),
            &mut frame.template_retries,
        );
        self.work.charge(steps + 2);
    }

    /// One backward search for links and parameters in the frame: every live candidate
    /// the first time, then the ones due for a retry. Matches in page order, each with the
    /// candidate index that found it.
    fn scan_links(&mut self, frame: &mut Frame, first: bool) -> Vec<(Range<usize>, bool, usize)> {
        let (lo, hi) = frame.closers;
        let mut retries = std::mem::take(&mut frame.link_retries);
        if !first {
            retries.sort_unstable_by(|a, b| b.cmp(a));
            retries.dedup();
        }
        let mut out = Vec::new();
        // Candidates end at or before the cursor: a match moves it to the match's start.
        let mut cursor = frame.end;
        let mut next = retries.iter().copied();
        let mut current = if first {
            let b = &self.s.b;
            hi.checked_sub(1)
                .and_then(|i| self.closers.live_until(i, |p| is_closer(b, p)))
        } else {
            next.next()
        };
        while let Some(index) = current.filter(|&i| i >= lo) {
            let q = self.closers.at(index);
            let p = q + 1;
            if p <= cursor && q >= frame.start && (first || is_closer(&self.s.b, q)) {
                let mut r = self.s.reader();
                let found = match r.at(q) {
                    b']' => link_ending_at(&mut r, p, frame.start, frame.end).map(|s| (s, true)),
                    b'}' => parameter_ending_at(&mut r, p, frame.start).map(|s| (s, false)),
                    _ => None,
                };
                let (window, steps) = ((r.lo, r.hi), r.steps);
                if !self.work.charge(steps + 1) {
                    return Vec::new();
                }
                match found {
                    Some((s, is_link)) => {
                        out.push((s..p, is_link, index));
                        cursor = s;
                    }
                    None => self.link_failures.record(index, window.0, window.1),
                }
            }
            current = if first {
                let b = &self.s.b;
                index
                    .checked_sub(1)
                    .and_then(|i| self.closers.live_until(i, |p| is_closer(b, p)))
            } else {
                next.next()
            };
        }
        retries.clear();
        frame.link_retries = retries;
        out.reverse();
        out
    }

    /// One forward search for templates in the frame: every live candidate the first
    /// time, then the ones due for a retry. Matches in page order, with whether the name is
    /// valid and the candidate index that found each.
    fn scan_templates(
        &mut self,
        frame: &mut Frame,
        first: bool,
    ) -> Vec<(Range<usize>, bool, usize)> {
        let (lo, hi) = frame.opens;
        let mut retries = std::mem::take(&mut frame.template_retries);
        if !first {
            retries.sort_unstable();
            retries.dedup();
        }
        let mut out = Vec::new();
        let mut cursor = frame.start;
        let mut next = retries.iter().copied();
        let mut current = if first {
            let b = &self.s.b;
            Some(self.opens.live_from(lo, |p| is_open(b, p)))
        } else {
            next.next()
        };
        while let Some(index) = current.filter(|&i| i < hi) {
            let i = self.opens.at(index);
            if i >= cursor && i + 1 < frame.end && (first || is_open(&self.s.b, i)) {
                let mut r = self.s.reader();
                let found = match_template(&mut r, i, frame.end);
                // The window holds the candidate's own `{{` (see `Failures::record`).
                let (window, steps) = ((r.lo.min(i), r.hi.max(i + 1)), r.steps);
                if !self.work.charge(steps + 1) {
                    return Vec::new();
                }
                match found {
                    Some((e, valid)) => {
                        out.push((i..e, valid, index));
                        cursor = e;
                    }
                    None => self.template_failures.record(index, window.0, window.1),
                }
            }
            current = if first {
                let b = &self.s.b;
                Some(self.opens.live_from(index + 1, |p| is_open(b, p)))
            } else {
                next.next()
            };
        }
        retries.clear();
        frame.template_retries = retries;
        out
    }

    // ----- HTML tags -------------------------------------------------------------------

    /// HTML start and end tags with a known name (case-sensitive) in `start..end`: start
    /// tags first, then end tags, each `<` up to the first `>` after its name.
    fn html_tags(&mut self, start: usize, end: usize) -> Vec<Range<usize>> {
        let mut tags = Vec::new();
        let mut steps = 0u64;
        let b = &self.s.b;
        let (lts, gts) = (&mut self.tags, &mut self.closes);
        let (lt, gt) = (|p| is_byte(b, p, b'<'), |p| is_byte(b, p, b'>'));
        for closing in [false, true] {
            let mut index = lts.live_from(lts.index_at(start), lt);
            loop {
                steps += 1;
                let i = lts.at(index);
                if i >= end || (closing && i + 1 >= end) {
                    break;
                }
                let name = i + 1 + usize::from(closing);
                let is_candidate = !closing || b.get(i + 1) == Some(&b'/');
                let tag_end = is_candidate
                    .then(|| known_tag_name(b, name, end))
                    .flatten()
                    .and_then(|n| {
                        let after = b.get(n).copied().unwrap_or(0);
                        let spaced =
                            matches!(after, b' ' | b'\t' | b'\n' | 0x0c | b'\r' | 0) && n < end;
                        if closing && !(after == b'>' || spaced) {
                            return None;
                        }
                        let first = gts.index_at(n);
                        let g = gts.live_from(first, gt);
                        let g = gts.at(g);
                        (g < end).then_some(g)
                    });
                match tag_end {
                    Some(g) => {
                        tags.push(i..g + 1);
                        index = lts.live_from(lts.index_at(g + 1), lt);
                    }
                    None => index = lts.live_from(index + 1, lt),
                }
            }
        }
        self.work.charge(steps);
        tags
    }

    /// Blanks the brackets of a tag: they are not link syntax.
    fn blank_brackets(&mut self, tag: &Range<usize>) {
        let steps = self.s.visit(tag.start, tag.end, Blocks::ALL, |run| {
            run.iter_mut()
                .filter(|c| matches!(**c, b'[' | b']'))
                .for_each(|c| *c = b' ');
        });
        self.work.charge(steps);
    }

    /// Blanks the pipes, braces and newlines of a tag, once its frame is done.
    fn blank_sensitive(&mut self, tag: &Range<usize>) {
        let steps = self.s.visit(tag.start, tag.end, Blocks::UNIFORM, |run| {
            run.iter_mut()
                .filter(|c| matches!(**c, b'|' | b'{' | b'}' | b'\n'))
                .for_each(|c| *c = b' ');
        });
        self.work.charge(steps);
    }

    /// Title and label of a link just matched (`FULLMATCH` upstream).
    fn split_link(&mut self, span: &Range<usize>) -> LinkRanges {
        let mut r = self.s.reader();
        let k = r.forward(span.start + 1, span.end, Blocks::COMMENTS, |c| c == 0);
        let title_start = k + 1;
        // The closing `]\0*]`: the last byte before the run of NULs ending at `end - 1`.
        let floor = title_start + 1;
        let close = r.back(
            span.end.saturating_sub(1).max(floor),
            floor,
            Blocks::COMMENTS,
            |c| c == 0,
        ) - 1;
        let stop = r.forward(title_start, close, Blocks::UNIFORM, |c| {
            !matches!(c, b'|' | b'#' | b']')
        });
        let mut text_from = stop;
        if r.at(stop) == b'#' {
            text_from = r.forward(stop, close, Blocks::UNIFORM, |c| !matches!(c, b'|' | b']'));
        }
        let text = (r.at(text_from) == b'|').then(|| text_from + 1..close.max(text_from + 1));
        self.work.charge(r.steps);
        LinkRanges {
            span: span.clone(),
            title: title_start..stop,
            text,
        }
    }
}

/// The candidate whose attempt found a match (its index).
#[derive(Debug, Clone, Copy)]
enum Matched {
    /// The link's or parameter's last `]` or `}`.
    Closer(usize),
    /// The template's `{{`.
    Open(usize),
}

/// Whether the shadow holds `]` or `}` at `p`: a live link or parameter candidate.
fn is_closer(b: &[u8], p: usize) -> bool {
    matches!(b.get(p), Some(b']' | b'}'))
}

/// Whether the shadow holds `{{` at `p`: a live template candidate.
fn is_open(b: &[u8], p: usize) -> bool {
    b.get(p) == Some(&b'{') && b.get(p + 1) == Some(&b'{')
}

/// Whether the shadow holds `byte` at `p`.
fn is_byte(b: &[u8], p: usize, byte: u8) -> bool {
    b.get(p) == Some(&byte)
}

/// A frame's range, candidate index ranges and retries.
struct Frame {
    start: usize,
    end: usize,
    /// Index range of the frame's link and parameter candidates (`closers`).
    closers: (usize, usize),
    /// Index range of the frame's template candidates (`opens`).
    opens: (usize, usize),
    link_retries: Vec<usize>,
    template_retries: Vec<usize>,
}

/// The end of a known HTML tag name starting at `k` (the word there, in the list), if
/// there is one.
fn known_tag_name(b: &[u8], k: usize, end: usize) -> Option<usize> {
    // The longest name in the list, plus one: a longer word is no name.
    const LONGEST: usize = 10;
    let run = b.get(k..end.min(k + LONGEST + 1)).unwrap_or_default();
    let len = run
        .iter()
        .position(|&c| !is_word_byte(c))
        .unwrap_or(run.len());
    is_html_tag(run.get(..len)?).then_some(k + len)
}

/// Whether `name` is one of the HTML tag names wikitextparser recognises (a `match` the
/// compiler turns into a length and byte dispatch: this runs for every `<` of every frame).
pub(super) fn is_html_tag(name: &[u8]) -> bool {
    matches!(
        name,
        b"abbr"
            | b"b"
            | b"bdi"
            | b"bdo"
            | b"big"
            | b"blockquote"
            | b"br"
            | b"caption"
            | b"center"
            | b"cite"
            | b"code"
            | b"data"
            | b"dd"
            | b"del"
            | b"dfn"
            | b"div"
            | b"dl"
            | b"dt"
            | b"em"
            | b"font"
            | b"h1"
            | b"h2"
            | b"h3"
            | b"h4"
            | b"h5"
            | b"h6"
            | b"hr"
            | b"i"
            | b"ins"
            | b"kbd"
            | b"li"
            | b"mark"
            | b"ol"
            | b"p"
            | b"q"
            | b"rb"
            | b"rp"
            | b"rt"
            | b"rtc"
            | b"ruby"
            | b"s"
            | b"samp"
            | b"small"
            | b"span"
            | b"strike"
            | b"strong"
            | b"sub"
            | b"sup"
            | b"table"
            | b"td"
            | b"th"
            | b"time"
            | b"tr"
            | b"tt"
            | b"u"
            | b"ul"
            | b"var"
            | b"wbr"
    )
}

// ----- matching at a candidate ---------------------------------------------------------

/// Steps back over `[^\[\]|]*`.
fn back_plain(r: &mut Reader<'_>, k: usize, start: usize) -> usize {
    r.back_to(k, start, b"[]|")
}

/// Steps back over NULs.
fn back_nul(r: &mut Reader<'_>, k: usize, floor: usize) -> usize {
    r.back(k, floor, Blocks::COMMENTS, |c| c == 0)
}

/// Whether the byte before `j`, NULs skipped, is `c`.
fn prev_is(r: &mut Reader<'_>, j: usize, c: u8) -> bool {
    let k = back_nul(r, j, 0);
    k > 0 && r.at(k - 1) == c
}

/// `(?:\0*\]){3}` at `k`.
fn three_closers(r: &mut Reader<'_>, mut k: usize, end: usize) -> bool {
    for _ in 0..3 {
        k = r.forward(k, end, Blocks::COMMENTS, |c| c == 0);
        if k >= end || r.at(k) != b']' {
            return false;
        }
        k += 1;
    }
    true
}

/// Start of a wikilink whose closing `]\0*]` ends at `e`, matched backwards (upstream runs
/// its pattern with the `REVERSE` flag, so the possessive pieces bind from the right).
fn link_ending_at(r: &mut Reader<'_>, e: usize, start: usize, end: usize) -> Option<usize> {
    let mut k = back_nul(r, e - 1, start);
    if k == start || r.at(k - 1) != b']' {
        return None;
    }
    k -= 1;
    // Label segments, right to left: plain text, an optional `[…]` pair, an optional lone
    // `]`, an optional lone `[`, then the `|`.
    loop {
        let segment_end = k;
        k = back_plain(r, k, start);
        if k > start && r.at(k - 1) == b']' && !three_closers(r, k, end) {
            let m = back_plain(r, k - 1, start);
            if m > start && r.at(m - 1) == b'[' {
                k = back_plain(r, m - 1, start);
            }
        }
        if k > start && r.at(k - 1) == b']' && !prev_is(r, k - 1, b']') {
            k -= 1;
        }
        if k > start && r.at(k - 1) == b'[' && !prev_is(r, k - 1, b'[') {
            k -= 1;
        }
        if k > start && r.at(k - 1) == b'|' {
            k -= 1;
        } else {
            k = segment_end;
            break;
        }
    }
    let title_end = k;
    k = r.back(k, start, Blocks::UNIFORM, is_title_byte);
    if k == title_end {
        return None;
    }
    let title_start = k;
    if k == start || r.at(k - 1) != b'[' {
        return None;
    }
    k -= 1;
    k = back_nul(r, k, start);
    if k == start || r.at(k - 1) != b'[' {
        return None;
    }
    k -= 1;
    if starts_with_bare_url(r, title_start, end) {
        return None;
    }
    // Not preceded by an odd number of `[` (NULs between them ignored).
    let mut brackets = 0usize;
    let mut j = k;
    while j > 0 {
        match r.at(j - 1) {
            b'[' => {
                brackets += 1;
                j -= 1;
            }
            0 => j = back_nul(r, j, 0),
            _ => break,
        }
    }
    brackets.is_multiple_of(2).then_some(k)
}

/// `[ \0]*` then a bare URL scheme and at least one URL byte.
fn starts_with_bare_url(r: &mut Reader<'_>, u: usize, end: usize) -> bool {
    let u = r.forward(u, end, Blocks::COMMENTS, |c| matches!(c, b' ' | 0));
    let first = r.at(u);
    // The schemes' first letters: most titles start with another byte.
    if !matches!(
        first,
        b'b' | b'f' | b'g' | b'h' | b'i' | b'm' | b'n' | b'r' | b's' | b't' | b'u' | b'w' | b'x'
    ) {
        return false;
    }
    let word_boundary = u == 0 || !is_word_byte(r.at(u - 1));
    word_boundary
        && BARE_URL_SCHEMES.iter().any(|s| {
            let after = u + s.len();
            s.as_bytes().first() == Some(&first)
                && r.equals(u, s.as_bytes())
                && after < end
                && (is_url_byte(r.at(after)) || r.at(after) == b'[')
        })
}

/// Start of a `{{{…}}}` ending at `e`, matched backwards.
fn parameter_ending_at(r: &mut Reader<'_>, e: usize, start: usize) -> Option<usize> {
    if e < start + 6 || !r.equals(e - 3, b"}}}") {
        return None;
    }
    let mut k = e - 3;
    let body_end = k;
    while k > start {
        let c = r.at(k - 1);
        if c != b'{' && c != b'}' {
            // A run without braces (masked blocks have none) is taken at once.
            k = r.back_to(k, start, b"{}");
            continue;
        }
        let before = if k >= 2 { r.at(k - 2) } else { 0 };
        let ok = if c == b'}' {
            before != b'}' && r.at(k) != b'}'
        } else {
            before != b'{'
        };
        if !ok {
            break;
        }
        k -= 1;
    }
    (k < body_end && k >= start + 3 && r.equals(k - 3, b"{{{")).then(|| k - 3)
}

/// From `k`, the first `{{` or `}}` before `end` (or `end`).
fn to_double_brace(r: &mut Reader<'_>, mut k: usize, end: usize) -> usize {
    loop {
        k = r.forward_to(k, end, b"{}");
        if k >= end {
            return k;
        }
        let c = r.at(k);
        if r.at(k + 1) == c {
            return k;
        }
        k += 1;
    }
}

/// Arguments: `|` then anything without `{{` or `}}`, up to the closing `}}`.
fn match_args_and_close(r: &mut Reader<'_>, mut k: usize, end: usize) -> Option<usize> {
    if k < end && r.at(k) == b'|' {
        k = to_double_brace(r, k + 1, end);
    }
    (k + 2 <= end && r.equals(k, b"}}")).then_some(k + 2)
}

/// A template (or parser function) at `i`: its end and whether its name is valid.
fn match_template(r: &mut Reader<'_>, i: usize, end: usize) -> Option<(usize, bool)> {
    let k = r.forward(i + 2, end, Blocks::COMMENTS, is_space_or_nul);
    // Parser function `{{#name:…}}`.
    if r.at(k) == b'#' {
        let fills = Blocks {
            links: false,
            underscores: true,
            templates: true,
            comments: false,
        };
        let n = r.forward(k + 1, end, fills, |c| {
            !(c == b'{' || c == b'}' || c == b':' || c == b'|' || is_space_or_nul(c))
        });
        if n > k + 1 {
            let mut m = n;
            if r.at(m) == b':' {
                m = to_double_brace(r, m + 1, end);
            }
            if m + 2 <= end && r.equals(m, b"}}") {
                return Some((m + 2, true));
            }
        }
    }
    // Invalid (empty) name.
    let spaces_and_underscores = Blocks {
        links: false,
        underscores: true,
        templates: false,
        comments: true,
    };
    let n = r.forward(i + 2, end, spaces_and_underscores, |c| {
        is_space_or_nul(c) || c == b'_'
    });
    if let Some(e) = match_args_and_close(r, n, end) {
        return Some((e, false));
    }
    // Template with a valid name.
    let t = r.forward(k, end, Blocks::UNIFORM, is_title_byte);
    if t == k {
        return None;
    }
    let t = r.forward(t, end, Blocks::COMMENTS, is_space_or_nul);
    match_args_and_close(r, t, end).map(|e| (e, true))
}

// ----- extension tags ------------------------------------------------------------------

/// The first position of `byte` in `b[from..end]`.
pub(super) fn find_byte(b: &[u8], byte: u8, from: usize, end: usize) -> Option<usize> {
    b.get(from..end.min(b.len()))
        .and_then(|hay| memchr::memchr(byte, hay))
        .map(|p| from + p)
}

/// [`find_byte`], or `end` when there is none.
pub(super) fn next_byte(b: &[u8], byte: u8, from: usize, end: usize) -> usize {
    find_byte(b, byte, from, end).unwrap_or(end)
}

/// The longest extension tag name (`syntaxhighlight`).
const LONGEST_EXTENSION: usize = 15;

/// The extension tag name at `i` (case-insensitive, followed by a non-word byte or by
/// `end`), and whether its content is parsed: the word there, lowercased, looked up in the
/// lists (a listed name is the whole word, so one comparison of lengths rules out most).
pub(super) fn extension_name_at(b: &[u8], i: usize, end: usize) -> Option<(&'static str, bool)> {
    let run = b
        .get(i..end.min(i + LONGEST_EXTENSION + 1).max(i))
        .unwrap_or_default();
    let len = run
        .iter()
        .position(|&c| !is_word_byte(c))
        .unwrap_or(run.len());
    if len == 0 || len > LONGEST_EXTENSION {
        return None;
    }
    let mut lower = [0u8; LONGEST_EXTENSION];
    for (l, c) in lower.iter_mut().zip(run) {
        *l = c.to_ascii_lowercase();
    }
    let word = lower.get(..len)?;
    let listed = |names: &[&'static str]| names.iter().copied().find(|n| n.as_bytes() == word);
    match listed(&UNPARSABLE_TAGS) {
        Some(name) => Some((name, false)),
        None => listed(&PARSABLE_TAGS).map(|name| (name, true)),
    }
}

/// The listed tag name at `i` (case-insensitive, followed by a non-word byte): the
/// lists read name by name, as [`extension_name_at`] must find them.
#[cfg(test)]
pub(super) fn tag_name_at(
    b: &[u8],
    i: usize,
    end: usize,
    names: &[&'static str],
) -> Option<&'static str> {
    names.iter().copied().find(|n| {
        let e = i + n.len();
        e <= end
            && b.get(i..e)
                .is_some_and(|s| s.eq_ignore_ascii_case(n.as_bytes()))
            && !(e < end && b.get(e).is_some_and(|&c| is_word_byte(c)))
    })
}

/// What starts at a `<`: a comment, an extension tag whose content is not parsed, or one
/// whose content is; each with where it ends.
pub(super) enum ExtMatch {
    Comment(usize),
    Unparsable(usize),
    Parsable { end: usize, content: Range<usize> },
}

/// Remembers the last search for each closing tag so that many unclosed tags of one name
/// cost one scan, not one scan each.
#[derive(Default)]
struct CloseCache {
    found: Vec<CloseSearch>,
}

/// A search for `</name` up to `end`: from where, and the first match at or after it.
struct CloseSearch {
    name: &'static str,
    end: usize,
    from: usize,
    hit: Option<usize>,
}

/// Where an extension tag's closing `</name` is looked for.
pub(super) trait FindClosing {
    /// The first `</name` (case-insensitive) in `b[from..end]`.
    fn find(&mut self, b: &[u8], from: usize, end: usize, name: &'static str) -> Option<usize>;
}

impl FindClosing for CloseCache {
    fn find(&mut self, b: &[u8], from: usize, end: usize, name: &'static str) -> Option<usize> {
        let entry = self
            .found
            .iter()
            .position(|s| s.name == name && s.end == end);
        if let Some(search) = entry.and_then(|e| self.found.get(e))
            && search.from <= from
            && search.hit.is_none_or(|h| h >= from)
        {
            return search.hit;
        }
        let hit = find_closing(b, from, end, name);
        let search = CloseSearch {
            name,
            end,
            from,
            hit,
        };
        match entry.and_then(|e| self.found.get_mut(e)) {
            Some(slot) => *slot = search,
            None => self.found.push(search),
        }
        hit
    }
}

/// The first `</name` (case-insensitive) in `b[from..end]`.
fn find_closing(b: &[u8], from: usize, end: usize, name: &str) -> Option<usize> {
    let hay = b.get(from..end)?;
    let len = 2 + name.len();
    memchr::memchr_iter(b'<', hay)
        .find(|&p| {
            hay.get(p + 1) == Some(&b'/')
                && hay
                    .get(p + 2..p + len)
                    .is_some_and(|w| w.eq_ignore_ascii_case(name.as_bytes()))
        })
        .map(|p| p + from)
}

/// The comment or extension tag starting at the `<` at `i`, if one does (ending by `end`).
pub(super) fn match_extension_at(
    b: &[u8],
    i: usize,
    end: usize,
    cache: &mut impl FindClosing,
) -> Option<ExtMatch> {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    if b.get(i + 1..i + 4) == Some(b"!--") && i + 4 <= end {
        let close = b
            .get(i + 4..end)
            .and_then(|s| memchr::memmem::find(s, b"-->"))
            .map_or(end, |p| i + 4 + p + 3);
        return Some(ExtMatch::Comment(close));
    }
    let (name, parsable) = extension_name_at(b, i + 1, end)?;
    let gt = find_byte(b, b'>', i + 1 + name.len(), end)?;
    if at(gt - 1) == b'/' {
        return Some(if parsable {
            ExtMatch::Parsable {
                end: gt + 1,
                content: gt + 1..gt + 1,
            }
        } else {
            ExtMatch::Unparsable(gt + 1)
        });
    }
    // Lazy content up to the first `</name\s*>`.
    let mut from = gt + 1;
    let closing = loop {
        let pos = cache.find(b, from, end, name)?;
        let mut k = pos + 2 + name.len();
        while k < end && at(k).is_ascii_whitespace() {
            k += 1;
        }
        if k < end && at(k) == b'>' {
            break (pos, k + 1);
        }
        from = pos + 1;
    };
    Some(if parsable {
        ExtMatch::Parsable {
            end: closing.1,
            content: gt + 1..closing.0,
        }
    } else {
        ExtMatch::Unparsable(closing.1)
    })
}

//! One day of per-article views: `other/pageview_complete/<Y>/<Y-M>/pageviews-YYYYMMDD-user.bz2`.
//!
//! Each line is `project title page_id access daily_total hourly_counts`, space-separated
//! (`en.wikipedia Moon 19331 desktop 4321 A12B9…`); the title is as requested (underscores,
//! not normalised), the page id may be `null`, and a title has one line per access method
//! (and per page id it was seen with). The Pageview API counts by title: its per-article
//! number and its top list are the sums, over those lines, of one title's daily totals.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};

/// Longest line read (a title is at most 255 bytes; the hourly counts a few hundred).
const MAX_LINE: u64 = 64 << 10;

/// What reading a day's file found for one project.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DayStats {
    /// Lines of the file.
    pub lines: u64,
    /// Lines of the project.
    pub matched: u64,
    /// Lines that were not six fields with a number for a total (skipped).
    pub malformed: u64,
}

/// Streams the lines of `project` (`en.wikipedia`) in the file at `path` to `on_line` as
/// (title, daily total); stops with [`Error::Cancelled`] when `cancel` is set.
pub fn read_day(
    path: &Path,
    project: &str,
    cancel: &AtomicBool,
    on_line: impl FnMut(&[u8], u64) -> Result<()>,
) -> Result<DayStats> {
    let source = wikisuggest_dump::decompressed(path).map_err(|e| Error::io(path, e))?;
    read_day_from(source, path, project, cancel, on_line)
}

/// [`read_day`] of the decompressed bytes `source` gives.
pub fn read_day_from(
    source: impl Read,
    path: &Path,
    project: &str,
    cancel: &AtomicBool,
    mut on_line: impl FnMut(&[u8], u64) -> Result<()>,
) -> Result<DayStats> {
    let mut reader = BufReader::with_capacity(1 << 20, source);
    let mut prefix = project.as_bytes().to_vec();
    prefix.push(b' ');
    let mut stats = DayStats::default();
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        let n = reader
            .by_ref()
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        if n as u64 > MAX_LINE {
            return Err(Error::dump(
                path,
                format!("line {} is longer than {MAX_LINE} bytes", stats.lines + 1),
            ));
        }
        stats.lines += 1;
        if stats.lines.is_multiple_of(65536) && cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        if !line.starts_with(&prefix) {
            continue;
        }
        let mut fields = line.trim_ascii_end().split(|&b| b == b' ');
        let (Some(_), Some(title), Some(_page_id), Some(_access), Some(total)) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            stats.malformed += 1;
            continue;
        };
        let Some(total) = std::str::from_utf8(total)
            .ok()
            .and_then(|t| t.parse::<u64>().ok())
        else {
            stats.malformed += 1;
            continue;
        };
        if title.is_empty() {
            stats.malformed += 1;
            continue;
        }
        stats.matched += 1;
        on_line(title, total)?;
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn lines_of_the_project_only() {
        let text = "de.wikipedia Mond 1 desktop 5 A5\n\
                    en.wikipedia Moon 19331 desktop 7 A3B4\n\
                    en.wikipedia Moon 19331 mobile-web 3 C3\n\
                    en.wikipedia.b Moon 1 desktop 100 A100\n\
                    en.wikipedia Main_Page null desktop 900 A900\n\
                    en.wikipedia broken\n\
                    en.wikipedia X 1 desktop many A1\n";
        let mut got = Vec::new();
        let stats = read_day_from(
            text.as_bytes(),
            Path::new("day"),
            "en.wikipedia",
            &AtomicBool::new(false),
            |t, n| {
                got.push((String::from_utf8(t.to_vec()).unwrap(), n));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(
            got,
            [
                ("Moon".to_owned(), 7),
                ("Moon".to_owned(), 3),
                ("Main_Page".to_owned(), 900)
            ]
        );
        assert_eq!(stats.lines, 7);
        assert_eq!(stats.matched, 3);
        assert_eq!(stats.malformed, 2);
    }
}

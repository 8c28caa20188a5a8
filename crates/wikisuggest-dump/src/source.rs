//! The dump's bytes, decompressed by file name on a thread of their own.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::multistream::ParallelBz2;
use crate::prefetch::Prefetch;

/// Opens `path`, decompressing `.bz2` and `.gz` by name. Every stream or member is read:
/// Wikimedia writes multistream bzip2, and `cat`, pigz or bgzip multi-member gzip.
/// Decompression runs on threads of its own, so that it stays off the reader's path: the
/// streams of a multistream `.bz2` are decoded in parallel on up to four cores
/// ([`ParallelBz2`]), anything else on one thread ahead of the reader ([`Prefetch`]).
pub fn decompressed(path: &Path) -> std::io::Result<Box<dyn Read + Send>> {
    let name = path.as_os_str().as_encoded_bytes();
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    if name.ends_with(b".bz2") && cores > 1 {
        return Ok(Box::new(ParallelBz2::open(path, cores)?));
    }
    let file = File::open(path)?;
    Ok(if name.ends_with(b".bz2") {
        let decoder = bzip2::read::MultiBzDecoder::new(BufReader::new(file));
        Box::new(Prefetch::spawn(decoder))
    } else if name.ends_with(b".gz") {
        let decoder = flate2::read::MultiGzDecoder::new(BufReader::new(file));
        Box::new(Prefetch::spawn(decoder))
    } else {
        Box::new(file)
    })
}

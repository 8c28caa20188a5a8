//! Work files of a conversion: the folder that holds them, buffered writers and readers,
//! and string tables kept as an offsets file and a bytes file.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::extsort::{Metered, Sorter, WorkMeter};
use crate::native::NONE_U32;

/// A directory of work files beside the output, removed when dropped. Every byte written
/// to it counts on its meter, which refuses more than the conversion may use.
pub(super) struct WorkDir(pub(super) PathBuf, pub(super) Arc<WorkMeter>);

impl WorkDir {
    pub(super) fn create(out_dir: &Path, wiki_id: &str, limit: Option<u64>) -> Result<Self> {
        let path = out_dir.join(format!(".{wiki_id}.convert-{}", std::process::id()));
        if path.exists() {
            std::fs::remove_dir_all(&path).map_err(|e| Error::io(&path, e))?;
        }
        std::fs::create_dir_all(&path).map_err(|e| Error::io(&path, e))?;
        Ok(Self(path, WorkMeter::new(limit)))
    }

    pub(super) fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    pub(super) fn create_file(&self, name: &str) -> Result<Out> {
        Out::create(self.file(name), &self.1)
    }

    /// An external sorter whose run files are work files of this folder.
    pub(super) fn sorter(&self, name: &str, budget: usize) -> Sorter {
        Sorter::metered(&self.0, name, budget, self.1.clone())
    }

    pub(super) fn meter(&self) -> &WorkMeter {
        &self.1
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A buffered work file being written.
pub(super) struct Out {
    pub(super) path: PathBuf,
    pub(super) w: BufWriter<Metered<File>>,
}

impl Out {
    fn create(path: PathBuf, meter: &Arc<WorkMeter>) -> Result<Self> {
        let file = File::create(&path).map_err(|e| Error::io(&path, e))?;
        Ok(Self {
            w: BufWriter::with_capacity(1 << 20, Metered::new(file, meter.clone())),
            path,
        })
    }

    pub(super) fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.w
            .write_all(bytes)
            .map_err(|e| Error::io(&self.path, e))
    }

    pub(super) fn finish(self) -> Result<PathBuf> {
        self.w
            .into_inner()
            .map_err(|e| Error::io(&self.path, e.into_error()))?;
        Ok(self.path)
    }
}

/// A buffered work file being read back.
pub(super) struct In {
    pub(super) path: PathBuf,
    pub(super) r: BufReader<File>,
}

impl In {
    pub(super) fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        Ok(Self {
            path: path.to_owned(),
            r: BufReader::with_capacity(1 << 16, file),
        })
    }

    pub(super) fn bytes<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut b = [0u8; N];
        self.r
            .read_exact(&mut b)
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(b)
    }

    pub(super) fn u32(&mut self) -> Result<u32> {
        self.bytes().map(u32::from_le_bytes)
    }

    pub(super) fn u64(&mut self) -> Result<u64> {
        self.bytes().map(u64::from_le_bytes)
    }

    pub(super) fn fill(&mut self, buf: &mut Vec<u8>, len: usize) -> Result<()> {
        buf.resize(len, 0);
        self.r.read_exact(buf).map_err(|e| Error::io(&self.path, e))
    }
}

/// Reads back a string table written as an offsets file and a bytes file.
pub(super) struct StringsIn {
    pub(super) offsets: In,
    pub(super) bytes: In,
    pub(super) left: u64,
    pub(super) end: u64,
    pub(super) buf: Vec<u8>,
}

impl StringsIn {
    pub(super) fn open(offsets: &Path, bytes: &Path, n: u64) -> Result<Self> {
        let mut offsets = In::open(offsets)?;
        let end = offsets.u64()?;
        Ok(Self {
            offsets,
            bytes: In::open(bytes)?,
            left: n,
            end,
            buf: Vec::new(),
        })
    }

    pub(super) fn next(&mut self) -> Result<Option<&[u8]>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let start = self.end;
        self.end = self.offsets.u64()?;
        let len = self
            .end
            .checked_sub(start)
            .ok_or_else(|| Error::Internal("string offsets of a work file go backwards".into()))?;
        self.bytes.fill(&mut self.buf, len as usize)?;
        Ok(Some(&self.buf))
    }
}

/// A string table written as an offsets file (`n + 1` u64) and a bytes file.
pub(super) struct StringsOut {
    pub(super) offsets: Out,
    pub(super) bytes: Out,
    pub(super) end: u64,
    pub(super) len: u64,
}

impl StringsOut {
    pub(super) fn create(work: &WorkDir, name: &str) -> Result<Self> {
        let mut offsets = work.create_file(&format!("{name}.offsets"))?;
        offsets.put(&0u64.to_le_bytes())?;
        Ok(Self {
            offsets,
            bytes: work.create_file(&format!("{name}.bytes"))?,
            end: 0,
            len: 0,
        })
    }

    /// Appends a string and returns its index, refusing more than the format addresses.
    pub(super) fn push(&mut self, s: &[u8]) -> Result<u32> {
        let index = u32::try_from(self.len)
            .ok()
            .filter(|&i| i < NONE_U32)
            .ok_or_else(|| Error::TooLarge("more than 2^32 − 1 strings".into()))?;
        self.bytes.put(s)?;
        self.end += s.len() as u64;
        self.offsets.put(&self.end.to_le_bytes())?;
        self.len += 1;
        Ok(index)
    }

    pub(super) fn finish(self) -> Result<(PathBuf, PathBuf, u64)> {
        Ok((self.offsets.finish()?, self.bytes.finish()?, self.len))
    }
}

//! A native file put in place: written under a temporary name, read back, then renamed.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Writes the native file of `wiki_id` into `out_dir`: `fill` writes it under a temporary
/// name, `verify` reads back what was written, and only then is it renamed into place. On
/// any failure the temporary file is removed.
pub(crate) fn publish_native_file(
    out_dir: &Path,
    wiki_id: &str,
    fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<()>,
    verify: impl FnOnce(&Path) -> Result<()>,
) -> Result<PathBuf> {
    crate::published::validate_wiki_id(wiki_id)?;
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let path = out_dir.join(super::native_file_name(wiki_id));
    let tmp = path.with_extension("linkdata.tmp");
    let written = (|| {
        let file = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        fill(&mut w)?;
        let file = w
            .into_inner()
            .map_err(|e| Error::io(&tmp, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&tmp, e))?;
        drop(file);
        // Read back and verify what was written before it replaces anything.
        verify(&tmp)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
    Ok(path)
}

//! sha256 verification against `shasum -a 256`-style `.checksum` files.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Lowercase hex sha256 of a file's bytes, streamed.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(to_hex(&hasher.finalize()))
}

/// Lowercase hex of bytes.
pub fn to_hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The path of the `.checksum` file that accompanies `path`.
pub fn checksum_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".checksum");
    PathBuf::from(name)
}

/// Reads the digest of a `.checksum` file: its first whitespace-separated field, which
/// must be 64 hex digits (returned lowercased). The file-name field is not checked
/// because legacy files carry relative paths of the old pipeline there.
pub fn read_checksum_file(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let bad = |reason: &str| Error::BadChecksumFile {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    let field = text.split_whitespace().next().ok_or_else(|| bad("empty"))?;
    if field.len() != 64 || !field.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad("first field is not a 64-digit hex sha256"));
    }
    Ok(field.to_ascii_lowercase())
}

/// Verifies `path` against `path.checksum` and returns the verified digest.
pub fn verify_file(path: &Path) -> Result<String> {
    let expected = read_checksum_file(&checksum_path(path))?;
    let actual = sha256_file(path)?;
    if actual != expected {
        return Err(Error::ChecksumMismatch {
            path: path.to_owned(),
            expected,
            actual,
        });
    }
    Ok(actual)
}

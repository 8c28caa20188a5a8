//! The byte layout of the build's work records (sort payloads and work files): integers
//! little-endian, byte strings and lists length-prefixed. Written and read only by the build.

use std::io::{self, Read, Write};

/// Appends to a record.
#[derive(Default)]
pub struct Enc(pub Vec<u8>);

impl Enc {
    pub fn clear(&mut self) {
        self.0.clear();
    }

    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn i16(&mut self, v: i16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }

    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.u32(u32::try_from(v.len()).unwrap_or(u32::MAX));
        self.0
            .extend_from_slice(&v[..v.len().min(u32::MAX as usize)]);
        self
    }

    pub fn opt_i64(&mut self, v: Option<i64>) -> &mut Self {
        match v {
            Some(v) => self.u8(1).i64(v),
            None => self.u8(0),
        }
    }

    pub fn opt_bytes(&mut self, v: Option<&[u8]>) -> &mut Self {
        match v {
            Some(v) => self.u8(1).bytes(v),
            None => self.u8(0),
        }
    }
}

/// Reads a record back.
pub struct Dec<'a> {
    data: &'a [u8],
    at: usize,
}

/// A record that does not decode: the work files were damaged (they are the build's own).
fn short() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "a work record ends early")
}

impl<'a> Dec<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, at: 0 }
    }

    fn take(&mut self, n: usize) -> io::Result<&'a [u8]> {
        let end = self.at.checked_add(n).ok_or_else(short)?;
        let out = self.data.get(self.at..end).ok_or_else(short)?;
        self.at = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub fn u64(&mut self) -> io::Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    pub fn i64(&mut self) -> io::Result<i64> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    pub fn u32(&mut self) -> io::Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub fn i16(&mut self) -> io::Result<i16> {
        Ok(i16::from_le_bytes(self.array()?))
    }

    pub fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub fn bytes(&mut self) -> io::Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    pub fn opt_i64(&mut self) -> io::Result<Option<i64>> {
        Ok(if self.u8()? == 1 {
            Some(self.i64()?)
        } else {
            None
        })
    }

    pub fn opt_bytes(&mut self) -> io::Result<Option<&'a [u8]>> {
        Ok(if self.u8()? == 1 {
            Some(self.bytes()?)
        } else {
            None
        })
    }
}

/// A sequential work file of length-prefixed records.
pub struct RecordWriter<W: Write>(pub W);

impl<W: Write> RecordWriter<W> {
    pub fn write(&mut self, record: &[u8]) -> io::Result<()> {
        let n = u32::try_from(record.len()).map_err(|_| io::Error::other("record too large"))?;
        self.0.write_all(&n.to_le_bytes())?;
        self.0.write_all(record)
    }
}

/// Reads what [`RecordWriter`] wrote.
pub struct RecordReader<R: Read> {
    reader: R,
    buf: Vec<u8>,
}

impl<R: Read> RecordReader<R> {
    pub fn new(reader: R) -> Self {
        Self {
            reader,
            buf: Vec::new(),
        }
    }

    /// The next record, or `None` at the end.
    pub fn next_record(&mut self) -> io::Result<Option<&[u8]>> {
        let mut len = [0u8; 4];
        match self.reader.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        self.buf.resize(u32::from_le_bytes(len) as usize, 0);
        self.reader.read_exact(&mut self.buf)?;
        Ok(Some(&self.buf))
    }
}

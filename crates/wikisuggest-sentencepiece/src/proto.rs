//! A minimal protobuf reader: just enough of the wire format to read the fields of
//! `ModelProto` this crate uses. Unknown fields are skipped, as protobuf parsers do.

use crate::error::ModelError;

/// One field of a message: its number and its payload.
pub(crate) enum Value<'a> {
    Varint(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
    /// 64-bit fixed fields are skipped by every reader here.
    Fixed64,
}

/// Iterates over the fields of one encoded message.
pub(crate) struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    pub(crate) fn new(message: &'a [u8]) -> Self {
        Self { rest: message }
    }

    fn varint(&mut self) -> Result<u64, ModelError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self
                .rest
                .split_first()
                .ok_or(ModelError::Malformed("truncated varint"))?;
            self.rest = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(ModelError::Malformed("varint longer than 10 bytes"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ModelError> {
        if n > self.rest.len() {
            return Err(ModelError::Malformed(
                "field runs past the end of its message",
            ));
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u32, Value<'a>), ModelError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let field = (|| {
            let key = self.varint()?;
            let number = u32::try_from(key >> 3)
                .map_err(|_| ModelError::Malformed("field number out of range"))?;
            let value = match key & 7 {
                0 => Value::Varint(self.varint()?),
                1 => {
                    self.take(8)?;
                    Value::Fixed64
                }
                2 => {
                    let len = usize::try_from(self.varint()?)
                        .map_err(|_| ModelError::Malformed("length out of range"))?;
                    Value::Bytes(self.take(len)?)
                }
                5 => {
                    let b = self.take(4)?;
                    Value::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                }
                _ => return Err(ModelError::Malformed("unsupported wire type")),
            };
            Ok((number, value))
        })();
        if field.is_err() {
            // Stop after the first error: the rest cannot be framed.
            self.rest = &[];
        }
        Some(field)
    }
}

/// Reads a bool or enum field's varint.
pub(crate) fn varint(value: &Value<'_>) -> Result<u64, ModelError> {
    match value {
        Value::Varint(v) => Ok(*v),
        _ => Err(ModelError::Malformed("expected a varint field")),
    }
}

/// Reads a length-delimited field's bytes.
pub(crate) fn bytes<'a>(value: &Value<'a>) -> Result<&'a [u8], ModelError> {
    match value {
        Value::Bytes(b) => Ok(b),
        _ => Err(ModelError::Malformed("expected a length-delimited field")),
    }
}

/// Reads a `string` field, which protobuf requires to be UTF-8.
pub(crate) fn string<'a>(value: &Value<'a>) -> Result<&'a str, ModelError> {
    std::str::from_utf8(bytes(value)?)
        .map_err(|_| ModelError::Malformed("string field is not UTF-8"))
}

/// Reads a `float` field.
pub(crate) fn float(value: &Value<'_>) -> Result<f32, ModelError> {
    match value {
        Value::Fixed32(bits) => Ok(f32::from_bits(*bits)),
        _ => Err(ModelError::Malformed("expected a float field")),
    }
}

//! `str()` of a numpy `float32`: the shortest digits that round-trip as
//! float32, written the way Python writes a float (`0.9`, `1.0`, `1e-05`).

use std::fmt::Write;

/// Formats `value` as numpy prints a `float32`.
pub fn format_f32(value: f32) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `d.ddde±x`, written into a
    // buffer on the stack; the result is the one allocation.
    let mut sci = Digits::default();
    // Writing into `Digits` cannot fail: it only drops what would not fit.
    let _ = write!(sci, "{:e}", value.abs());
    let sci = sci.as_str();
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits = |out: &mut String, range: std::ops::RangeFrom<usize>| {
        out.extend(
            mantissa
                .chars()
                .filter(char::is_ascii_digit)
                .skip(range.start),
        );
    };
    let count = mantissa.chars().filter(char::is_ascii_digit).count();
    let first = mantissa.chars().find(char::is_ascii_digit).unwrap_or('0');
    let mut out = String::with_capacity(count + 24);
    if value < 0.0 {
        out.push('-');
    }
    if (-4..16).contains(&exponent) {
        let point = exponent + 1; // digits before the decimal point
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
            digits(&mut out, 0..);
        } else {
            let point = point as usize;
            if count > point {
                out.extend(mantissa.chars().filter(char::is_ascii_digit).take(point));
                out.push('.');
                digits(&mut out, point..);
            } else {
                digits(&mut out, 0..);
                out.extend(std::iter::repeat_n('0', point - count));
                out.push_str(".0");
            }
        }
    } else {
        out.push(first);
        if count > 1 {
            out.push('.');
            digits(&mut out, 1..);
        }
        out.push('e');
        out.push(if exponent < 0 { '-' } else { '+' });
        let _ = write!(out, "{:02}", exponent.unsigned_abs());
    }
    out
}

/// A short text on the stack (a float's `{:e}` form has at most 16 bytes).
#[derive(Default)]
struct Digits {
    bytes: [u8; 32],
    len: usize,
}

impl Digits {
    fn as_str(&self) -> &str {
        self.bytes
            .get(..self.len)
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or_default()
    }
}

impl Write for Digits {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let Some(slot) = self.bytes.get_mut(self.len..end) else {
            return Err(std::fmt::Error);
        };
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::format_f32;

    #[test]
    fn python_style() {
        assert_eq!(format_f32(0.9), "0.9");
        assert_eq!(format_f32(0.513_347_2), "0.5133472");
        assert_eq!(format_f32(1.0), "1.0");
        assert_eq!(format_f32(0.0), "0.0");
        assert_eq!(format_f32(1e-5), "1e-05");
        assert_eq!(format_f32(1.5e-5), "1.5e-05");
        assert_eq!(format_f32(1e-4), "0.0001");
        assert_eq!(format_f32(123.5), "123.5");
        assert_eq!(format_f32(1e16), "1e+16");
        assert_eq!(format_f32(-2.5e-7), "-2.5e-07");
        assert_eq!(format_f32(-0.25), "-0.25");
        assert_eq!(format_f32(1.234_567_8e15), "1234567800000000.0");
        assert_eq!(format_f32(3.4e38), "3.4e+38");
    }
}

//! `str()` of a numpy `float32`: the shortest digits that round-trip as
//! float32, written the way Python writes a float (`0.9`, `1.0`, `1e-05`).

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
    // Rust's `{:e}` gives the shortest round-trip digits: `d.ddde±x`.
    let sci = format!("{:e}", value.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if value < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exponent) {
        let point = exponent + 1; // digits before the decimal point
        let body = if point <= 0 {
            format!("0.{}{}", "0".repeat(point.unsigned_abs() as usize), digits)
        } else {
            let point = point as usize;
            if digits.len() > point {
                format!("{}.{}", &digits[..point], &digits[point..])
            } else {
                format!("{}{}.0", digits, "0".repeat(point - digits.len()))
            }
        };
        format!("{sign}{body}")
    } else {
        let mantissa = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{exp_sign}{:02}", exponent.unsigned_abs())
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
    }
}

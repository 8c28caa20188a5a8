//! Protocol-4 pickles of the four value types the published tables hold, byte for byte
//! what CPython's `pickle.dumps(value, protocol=4)` writes (numpy arrays as numpy 1.x
//! pickles them), so datasets built here are indistinguishable from Python-built ones.

const PROTO: u8 = 0x80;
const FRAME: u8 = 0x95;
const STOP: u8 = b'.';
const MEMOIZE: u8 = 0x94;
const EMPTY_DICT: u8 = b'}';
const MARK: u8 = b'(';
const SETITEM: u8 = b's';
const SETITEMS: u8 = b'u';
const SHORT_BINUNICODE: u8 = 0x8c;
const BINUNICODE: u8 = b'X';
const BINUNICODE8: u8 = 0x8d;
const BININT1: u8 = b'K';
const BININT2: u8 = b'M';
const BININT: u8 = b'J';
const LONG1: u8 = 0x8a;
const STACK_GLOBAL: u8 = 0x93;
const TUPLE1: u8 = 0x85;
const TUPLE3: u8 = 0x87;
const TUPLE: u8 = b't';
const REDUCE: u8 = b'R';
const BUILD: u8 = b'b';
const SHORT_BINBYTES: u8 = b'C';
const BINBYTES: u8 = b'B';
const NEWFALSE: u8 = 0x89;
const NEWTRUE: u8 = 0x88;
const NONE: u8 = b'N';

/// CPython's pickler batches dict items by this many per `SETITEMS`.
const BATCH_SIZE: usize = 1000;
/// CPython only frames bodies of at least this many bytes.
const FRAME_SIZE_MIN: usize = 4;

/// `pickle.dumps(value, protocol=4)` of a `str`.
pub fn dumps_str(s: &str) -> Vec<u8> {
    let mut body = Vec::with_capacity(s.len() + 12);
    put_str(&mut body, s);
    finish(body)
}

/// `pickle.dumps(value, protocol=4)` of an `int`.
pub fn dumps_int(v: i64) -> Vec<u8> {
    let mut body = Vec::with_capacity(10);
    put_int(&mut body, v);
    finish(body)
}

/// `pickle.dumps(value, protocol=4)` of a `dict` {str → int} in the given order.
pub fn dumps_str_int_dict(items: &[(String, u32)]) -> Vec<u8> {
    let mut body = Vec::with_capacity(items.iter().map(|(k, _)| k.len() + 8).sum::<usize>() + 8);
    body.push(EMPTY_DICT);
    body.push(MEMOIZE);
    for batch in items.chunks(BATCH_SIZE) {
        if let [(k, v)] = batch {
            put_str(&mut body, k);
            put_int(&mut body, i64::from(*v));
            body.push(SETITEM);
        } else {
            body.push(MARK);
            for (k, v) in batch {
                put_str(&mut body, k);
                put_int(&mut body, i64::from(*v));
            }
            body.push(SETITEMS);
        }
    }
    finish(body)
}

/// `pickle.dumps(numpy.asarray(values, dtype="<f4"), protocol=4)` as numpy 1.x writes
/// it: `numpy.core.multiarray._reconstruct(numpy.ndarray, (0,), b'b')`, then `BUILD`
/// with the state `(1, shape, dtype('<f4'), False, raw little-endian bytes)`.
pub fn dumps_f32_array(values: &[f32]) -> Vec<u8> {
    let mut body = Vec::with_capacity(values.len() * 4 + 160);
    put_global(&mut body, "numpy.core.multiarray", "_reconstruct");
    put_global(&mut body, "numpy", "ndarray");
    put_int(&mut body, 0);
    body.extend([TUPLE1, MEMOIZE]);
    put_bytes(&mut body, b"b");
    body.extend([TUPLE3, MEMOIZE, REDUCE, MEMOIZE]);
    // state = (version, shape, dtype, is_fortran, data)
    body.push(MARK);
    put_int(&mut body, 1);
    put_int(&mut body, values.len() as i64);
    body.extend([TUPLE1, MEMOIZE]);
    // dtype('f4', False, True) with state (3, '<', None, None, None, -1, -1, 0)
    put_global(&mut body, "numpy", "dtype");
    put_str(&mut body, "f4");
    body.extend([NEWFALSE, NEWTRUE, TUPLE3, MEMOIZE, REDUCE, MEMOIZE]);
    body.push(MARK);
    put_int(&mut body, 3);
    put_str(&mut body, "<");
    body.extend([NONE, NONE, NONE]);
    put_int(&mut body, -1);
    put_int(&mut body, -1);
    put_int(&mut body, 0);
    body.extend([TUPLE, MEMOIZE, BUILD]);
    body.push(NEWFALSE);
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    put_bytes(&mut body, &raw);
    body.extend([TUPLE, MEMOIZE, BUILD]);
    finish(body)
}

fn put_global(out: &mut Vec<u8>, module: &str, name: &str) {
    put_str(out, module);
    put_str(out, name);
    out.extend([STACK_GLOBAL, MEMOIZE]);
}

/// A `str` followed by `MEMOIZE` (every distinct string is memoized once; callers never
/// repeat one within a pickle, so no memo lookups are needed).
fn put_str(out: &mut Vec<u8>, s: &str) {
    let n = s.len();
    if n < 256 {
        out.push(SHORT_BINUNICODE);
        out.push(n as u8);
    } else if let Ok(n32) = u32::try_from(n) {
        out.push(BINUNICODE);
        out.extend(n32.to_le_bytes());
    } else {
        out.push(BINUNICODE8);
        out.extend((n as u64).to_le_bytes());
    }
    out.extend_from_slice(s.as_bytes());
    out.push(MEMOIZE);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    if b.len() < 256 {
        out.push(SHORT_BINBYTES);
        out.push(b.len() as u8);
    } else {
        out.push(BINBYTES);
        out.extend((b.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(b);
    out.push(MEMOIZE);
}

fn put_int(out: &mut Vec<u8>, v: i64) {
    if let Ok(b) = u8::try_from(v) {
        out.extend([BININT1, b]);
    } else if let Ok(w) = u16::try_from(v) {
        out.push(BININT2);
        out.extend(w.to_le_bytes());
    } else if let Ok(d) = i32::try_from(v) {
        out.push(BININT);
        out.extend(d.to_le_bytes());
    } else {
        // LONG1: minimal two's-complement little-endian bytes.
        let bytes = v.to_le_bytes();
        let mut n = 8;
        while n > 1 {
            let top = bytes[n - 1];
            let next_sign = bytes[n - 2] & 0x80;
            if (top == 0 && next_sign == 0) || (top == 0xff && next_sign != 0) {
                n -= 1;
            } else {
                break;
            }
        }
        out.extend([LONG1, n as u8]);
        out.extend_from_slice(&bytes[..n]);
    }
}

/// Prepends `PROTO 4` and the frame header, appends `STOP`.
fn finish(mut body: Vec<u8>) -> Vec<u8> {
    body.push(STOP);
    let mut out = Vec::with_capacity(body.len() + 11);
    out.extend([PROTO, 4]);
    if body.len() >= FRAME_SIZE_MIN {
        out.push(FRAME);
        out.extend((body.len() as u64).to_le_bytes());
    }
    out.extend(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use wikisuggest_engine::pickle::{PickleValue, loads};

    /// Expected bytes recorded from CPython 3.11 `pickle.dumps(v, protocol=4)`.
    #[test]
    fn matches_cpython_bytes() {
        assert_eq!(dumps_int(1), b"\x80\x04K\x01.");
        assert_eq!(
            dumps_int(300),
            b"\x80\x04\x95\x04\x00\x00\x00\x00\x00\x00\x00M,\x01."
        );
        assert_eq!(
            dumps_str("a"),
            b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00\x8c\x01a\x94."
        );
        assert_eq!(
            dumps_str_int_dict(&[("Cat".into(), 2)]),
            b"\x80\x04\x95\x0c\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x03Cat\x94K\x02s."
        );
    }

    #[test]
    fn round_trips_through_the_engine_reader() {
        for v in [
            0,
            255,
            256,
            65_535,
            65_536,
            -1,
            90_000_000,
            i64::from(i32::MAX) + 1,
            i64::MIN,
        ] {
            assert_eq!(loads(&dumps_int(v)), Ok(PickleValue::Int(v)), "{v}");
        }
        let long = "é".repeat(300);
        assert_eq!(loads(&dumps_str(&long)), Ok(PickleValue::Str(long.clone())));
        let items: Vec<(String, u32)> = (0..2500).map(|i| (format!("T{i}"), i)).collect();
        let Ok(PickleValue::Dict(got)) = loads(&dumps_str_int_dict(&items)) else {
            unreachable!("not a dict")
        };
        let got: Vec<(PickleValue, PickleValue)> = got;
        let want: Vec<(PickleValue, PickleValue)> = items
            .iter()
            .map(|(k, v)| (PickleValue::Str(k.clone()), PickleValue::Int(i64::from(*v))))
            .collect();
        assert_eq!(got, want);
        let vector: Vec<f32> = (0..50).map(|i| i as f32 / 7.0 - 3.0).collect();
        let Ok(PickleValue::Array(a)) = loads(&dumps_f32_array(&vector)) else {
            unreachable!("not an array")
        };
        assert_eq!(a.to_f32_vec(), Some(vector));
    }
}

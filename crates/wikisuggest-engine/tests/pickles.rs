//! The pickle decoder against `pickle.dumps` of the value kinds the datasets hold, in
//! protocols 2–5 (made by tests/fixtures_builder/make_model_fixtures.py).

// Test support code: failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use serde_json::{Value, json};
use wikisuggest_engine::PickleError;
use wikisuggest_engine::pickle::{PickleValue, loads};

/// The JSON form the fixture builder writes for an expected value.
fn to_json(v: &PickleValue) -> Value {
    match v {
        PickleValue::None => Value::Null,
        PickleValue::Bool(b) => json!(b),
        PickleValue::Int(i) => json!(i),
        PickleValue::Float(f) => json!(f),
        PickleValue::Str(s) => json!(s),
        PickleValue::Bytes(b) => json!(b),
        PickleValue::Tuple(items) | PickleValue::List(items) => {
            Value::Array(items.iter().map(to_json).collect())
        }
        PickleValue::Dict(items) => Value::Array(
            items
                .iter()
                .map(|(k, v)| Value::Array(vec![to_json(k), to_json(v)]))
                .collect(),
        ),
        PickleValue::Array(a) => {
            let v = a.to_f32_vec().expect("1-d float32 array");
            json!({ "f32": v.iter().map(|x| x.to_bits()).collect::<Vec<_>>() })
        }
    }
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn decodes_every_protocol_and_numpy_form() {
    let text = std::fs::read_to_string(common::small_fixtures().join("pickles.jsonl")).unwrap();
    let mut names = Vec::new();
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let name = case[0].as_str().unwrap();
        let bytes = unhex(case[1].as_str().unwrap());
        let got = loads(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(to_json(&got), case[2], "{name}");
        names.push(name.to_owned());
    }
    for required in [
        "vector/p2",
        "vector/p4",
        "vector/p5",
        "vector/p2-numpy2",
        "anchors-numpy-int64/p2",
        "anchors-numpy-int64/p4",
        "vector-big-endian/p5",
    ] {
        assert!(
            names.iter().any(|n| n == required),
            "missing case {required}"
        );
    }
}

#[test]
fn unsupported_input_is_a_typed_error() {
    // A global outside the allow-list (here the classic code-execution gadget).
    assert!(matches!(
        loads(b"\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03."),
        Err(PickleError::UnsupportedGlobal { .. })
    ));
    assert!(matches!(
        loads(b"\x80\x04\x00."),
        Err(PickleError::UnsupportedOpcode { opcode: 0, pos: 2 })
    ));
    // Protocol 0 text opcodes and out-of-band buffers are not part of the subset.
    assert!(matches!(
        loads(b"I1\n."),
        Err(PickleError::UnsupportedOpcode { .. })
    ));
    assert!(matches!(
        loads(b"\x80\x05\x97."),
        Err(PickleError::UnsupportedOpcode { .. })
    ));
    assert!(matches!(
        loads(b"\x80\x01N."),
        Err(PickleError::Malformed { .. })
    ));
    assert!(matches!(loads(b""), Err(PickleError::Truncated(0))));
    assert!(matches!(
        loads(b"\x80\x04X\xff\xff\xff\xff"),
        Err(PickleError::Truncated(_))
    ));
    assert!(matches!(
        loads(b"\x80\x04."),
        Err(PickleError::Malformed { .. })
    ));
    assert!(matches!(
        loads(b"\x80\x04h\x05."),
        Err(PickleError::Malformed { .. })
    ));
    // A list that contains itself cannot be turned into a value.
    assert!(matches!(
        loads(b"\x80\x04]\x94h\x00a."),
        Err(PickleError::Malformed { .. })
    ));
    // Trailing bytes after STOP are ignored, as by pickle.loads.
    assert_eq!(loads(b"\x80\x04K\x07.junk"), Ok(PickleValue::Int(7)));
    // Repeated dict keys keep the first position and the last value.
    assert_eq!(
        loads(b"\x80\x04}(\x8c\x01aK\x01\x8c\x01bK\x02\x8c\x01aK\x03u."),
        Ok(PickleValue::Dict(vec![
            (PickleValue::Str("a".into()), PickleValue::Int(3)),
            (PickleValue::Str("b".into()), PickleValue::Int(2)),
        ]))
    );
}

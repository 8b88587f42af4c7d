//! Python scalar literals as Python evaluates them (`tests/fixtures/python_literals.json`,
//! written by `tools/gen_python_literal_fixtures.py` from Python 3.11's `ast.literal_eval`):
//! `Value`'s parser gives the same value bit for bit, signed zeros included (`(-1-0j)` is
//! `complex(-1, +0.0)`, `-1j` is `complex(-0.0, -1)`, `(-0.0+1j)` is `1j`).

use dtype_lattice::Value;
use serde_json::Value as Json;

#[test]
fn literals_evaluate_as_python_does() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/python_literals.json"
    ))
    .expect("tests/fixtures/python_literals.json");
    let fixture: Json = serde_json::from_str(&text).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() > 200);
    for case in cases {
        let literal = case["literal"].as_str().unwrap();
        let got: Value = literal.parse().unwrap_or_else(|e| panic!("{literal}: {e}"));
        let value = &case["value"];
        match (case["type"].as_str().unwrap(), got) {
            ("int", Value::Int(i)) => assert_eq!(i.to_string(), value.as_str().unwrap()),
            ("float", Value::Float(x)) => {
                assert_eq!(x.to_bits(), value.as_u64().unwrap(), "{literal}")
            }
            ("complex", Value::Complex(re, im)) => assert_eq!(
                [re.to_bits(), im.to_bits()],
                [value[0].as_u64().unwrap(), value[1].as_u64().unwrap()],
                "{literal}: got ({re:?}, {im:?})"
            ),
            (t, v) => panic!("{literal}: Python gives a {t}, we {v:?}"),
        }
    }
}

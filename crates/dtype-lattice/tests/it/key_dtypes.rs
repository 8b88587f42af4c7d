//! PRNG key dtypes in promotion, against what real JAX 0.10 says
//! (tests/fixtures/jax/random_promotion_{x32,x64}.json, written by
//! tools/gen_jax_random_fixtures.py): result_type, every jnp op of the op tables,
//! promote_types and issubdtype. Keys are operands of the one promotion path.

use crate::common;

use dtype_lattice::dtype::{DTypeClass, issubdtype};
use dtype_lattice::{DType, Error, Op, Operand, Rules};
use serde_json::Value;

/// What JAX says about key dtypes in promotion (tests/fixtures/jax/random_promotion_*.json):
/// result_type, every jnp op of the op tables, promote_types, issubdtype.
fn check_promotion(mode: &str, x64: bool) {
    let path = common::fixture_path(&format!("jax/random_promotion_{mode}.json"));
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(fixture["mode"]["x64"], x64);
    let rules = Rules::jax().x64(x64);
    let operand = |s: &str| -> Operand {
        // The fixture's `int` and `float` are the Python values 1 and 1.0.
        match s {
            "int" => "1",
            "float" => "1.0",
            other => other,
        }
        .parse()
        .unwrap()
    };
    let mut n = 0;
    for case in fixture["cases"].as_array().unwrap() {
        let names: Vec<&str> = case["operands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let function = case["function"].as_str().unwrap();
        let got: Result<(String, Option<bool>), Error> = match function {
            "promote_types" => rules
                .promote_types(
                    names[0].parse::<DType>().unwrap(),
                    names[1].parse::<DType>().unwrap(),
                )
                .map(|d| (d.to_string(), None)),
            _ => {
                let ops: Vec<Operand> = names.iter().map(|s| operand(s)).collect();
                let op = match function {
                    "result_type" => None,
                    name => Some(name.parse::<Op>().unwrap()),
                };
                rules
                    .evaluate(op, &ops)
                    .map(|p| (p.dtype.to_string(), op.is_none().then_some(p.weak_type)))
            }
        };
        match (&got, case.get("error")) {
            (Ok((dtype, weak)), None) => {
                assert_eq!(dtype, case["dtype"].as_str().unwrap(), "{case}");
                if let Some(w) = weak {
                    assert_eq!(*w, case["weak_type"].as_bool().unwrap(), "{case}");
                }
            }
            (Err(e), Some(want)) => {
                assert_eq!(common::class(e), want["kind"].as_str().unwrap(), "{case}");
                // JAX names the first key of a *set* of dtypes (its order varies from run to
                // run): with two key dtypes, either may be named.
                let want = want["message"].as_str().unwrap();
                let keys: Vec<&&str> = names.iter().filter(|n| n.starts_with("key<")).collect();
                let ok = e.message() == want
                    || (want.starts_with("dtype=key<")
                        && keys.iter().any(|k| {
                            e.message()
                                == format!("dtype={k} is not a valid dtype for JAX type promotion.")
                        }));
                assert!(ok, "{case}: got {}", e.message());
            }
            _ => panic!("{case}: got {got:?}"),
        }
        n += 1;
    }
    for row in fixture["issubdtype"].as_array().unwrap() {
        let dtype: DType = row["dtype"].as_str().unwrap().parse().unwrap();
        let class: DTypeClass = row["class"].as_str().unwrap().parse().unwrap();
        assert_eq!(
            issubdtype(dtype, class),
            row["issubdtype"].as_bool().unwrap(),
            "{row}"
        );
        n += 1;
    }
    eprintln!("{mode}: {n} key-dtype promotion cases agree");
}

#[test]
fn key_dtypes_in_promotion_x32() {
    check_promotion("x32", false);
}

#[test]
fn key_dtypes_in_promotion_x64() {
    check_promotion("x64", true);
}

proptest::proptest! {
    /// Key operands mixed with anything, through every rule set and op: JAX's rule sets answer
    /// a key only for keys of one dtype (that dtype, or bool for `equal`); every other rule
    /// set refuses them as an operand it cannot represent. Never a panic, never a number.
    #[test]
    fn key_operands_follow_the_rule_sets_row(
        ops in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::sample::select(vec!["key<fry>", "key<rbg>", "key<urbg>"]),
                proptest::sample::select(vec!["int8", "~float32", "2.5", "-3", "bool", "int", "uint64(7)"]),
            ],
            1..5,
        ),
        op in proptest::option::of(proptest::sample::select(Op::ALL.to_vec())),
    ) {
        let ops: Vec<Operand> = ops.iter().map(|s| s.parse().unwrap()).collect();
        let keys: Vec<DType> = ops.iter().filter_map(Operand::dtype).filter(|d| d.is_extended()).collect();
        proptest::prop_assume!(!keys.is_empty());
        let one_key_dtype = keys.len() == ops.len() && keys.iter().all(|&k| k == keys[0]);
        for set in dtype_lattice::RuleSet::all() {
            for x64 in [false, true] {
                let got = Rules::new(set).x64(x64).evaluate(op, &ops);
                match got {
                    Ok(p) => {
                        proptest::prop_assert_eq!(set, dtype_lattice::RuleSet::JAX);
                        proptest::prop_assert!(one_key_dtype, "{:?} answered {:?}", ops, p);
                        let want = if op == Some(Op::Equal) { DType::Bool } else { keys[0] };
                        proptest::prop_assert_eq!(p.dtype, want);
                        proptest::prop_assert!(!p.weak_type);
                    }
                    Err(e) => proptest::prop_assert!(
                        set == dtype_lattice::RuleSet::JAX || e.to_string().contains("PRNG key dtypes"),
                        "{}: {}", set, e
                    ),
                }
            }
        }
    }
}

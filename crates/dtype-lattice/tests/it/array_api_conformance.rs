//! `--rules array-api` against every case array-api-strict 2.6.1 (API 2025.12) recorded
//! (`tools/gen_numpy_fixtures.py`): `xp.result_type` and the ten binary functions. Operands the
//! library cannot build (`float16`, `bfloat16`: an `AttributeError`) are refused by us with
//! `UnsupportedOperand` and the library's message: those cases are set aside, counted exactly
//! per fixture (`common::SetAside`).

use crate::common;

use common::{
    ARRAY_API_BFLOAT16, ARRAY_API_FLOAT16, MessageCheck, check_op_files, check_result_type_file,
    edge_operands,
};
use dtype_lattice::error::{ErrorKind, Exception};
use dtype_lattice::{DType, Op, PyType, RuleSet, Rules};

fn rules() -> Rules {
    Rules::new(RuleSet::ARRAY_API)
}

#[test]
fn result_type_agrees_with_array_api_strict() {
    check_result_type_file(
        "array-api/result_type.json",
        rules(),
        MessageCheck::Exact,
        &[(ARRAY_API_FLOAT16, 73), (ARRAY_API_BFLOAT16, 88)],
    );
}

#[test]
fn ops_agree_with_array_api_strict() {
    check_op_files(
        "array-api",
        "",
        rules(),
        &[],
        MessageCheck::Exact,
        &[(ARRAY_API_FLOAT16, 34), (ARRAY_API_BFLOAT16, 34)],
    );
}

#[test]
fn promote_types_and_lattice() {
    let r = rules();
    assert_eq!(
        r.promote_types(DType::Int8, DType::UInt8).unwrap(),
        DType::Int16
    );
    assert_eq!(
        r.promote_types(DType::Float32, PyType::Complex).unwrap(),
        DType::Complex64
    );
    let e = r.promote_types(DType::UInt64, DType::Int64).unwrap_err();
    assert_eq!(
        e.message(),
        "array_api_strict.uint64 and array_api_strict.int64 cannot be type promoted together"
    );
    let e = r.promote_types(PyType::Int, PyType::Float).unwrap_err();
    assert_eq!(e.exception(), Some(Exception::ValueError));
    assert_eq!(
        r.promote_types(DType::Float16, DType::Float32)
            .unwrap_err()
            .kind(),
        ErrorKind::UnsupportedOperand
    );
    let l = r.lattice().unwrap();
    assert!(l.is_partial_lattice() && !l.is_lattice());
    assert_eq!(r.dtypes().len(), 13);
}

#[test]
fn binary_functions_take_two_operands() {
    let r = rules();
    let ops = |s: &str| dtype_lattice::operand::parse_list(s).unwrap();
    let e = r.op_result(Op::Add, &ops("int8")).unwrap_err();
    assert_eq!(e.exception(), Some(Exception::TypeError));
    let e = r.op_result(Op::Add, &ops("int8, int8, int8")).unwrap_err();
    assert!(
        e.message()
            .ends_with("takes 2 positional arguments but 3 were given")
    );
    assert_eq!(
        r.op_result(Op::Add, &[]).unwrap_err().kind(),
        ErrorKind::EmptyOperands
    );
}

#[test]
fn no_input_panics() {
    let r = rules();
    let ops = edge_operands();
    for a in &ops {
        let _ = r.result_type(std::slice::from_ref(a));
        for b in ops.iter().step_by(3) {
            let _ = r.result_type(&[*a, *b, *a]);
            for op in Op::ALL {
                let _ = r.op_result(op, &[*a, *b]);
            }
            let _ = r.op_result(Op::Add, &[*a, *b, *a]);
        }
    }
    let _ = r.result_type(&[]);
}

//! `--rules numpy-legacy` against every case NumPy 1.26 recorded (`tools/gen_numpy_fixtures.py`):
//! `np.result_type` and the ten ufuncs. Operands the rule set cannot represent (bfloat16, Python
//! ints NumPy makes `object`) are refused by us with `UnsupportedOperand` while NumPy raises or
//! answers `object`: those cases are set aside, counted exactly per fixture (`common::SetAside`). (`np.min_scalar_type`'s fixture is
//! checked by the rule set's unit tests, where the crate-private function is visible.)

use crate::common;

use common::{
    MessageCheck, NUMPY_BFLOAT16, NUMPY_OBJECT, check_op_files, check_result_type_file,
    edge_operands,
};
use dtype_lattice::error::ErrorKind;
use dtype_lattice::{Op, RuleSet, Rules};

fn rules() -> Rules {
    Rules::new(RuleSet::NUMPY_LEGACY)
}

#[test]
fn result_type_agrees_with_numpy_1_26() {
    check_result_type_file(
        "numpy-legacy/result_type.json",
        rules(),
        MessageCheck::Exact,
        &[(NUMPY_BFLOAT16, 110), (NUMPY_OBJECT, 47)],
    );
}

#[test]
fn ops_agree_with_numpy_1_26() {
    check_op_files(
        "numpy-legacy",
        "",
        rules(),
        &[],
        MessageCheck::Exact,
        &[(NUMPY_BFLOAT16, 35)],
    );
}

#[test]
fn promote_types_is_numpys_safe_cast_order() {
    use dtype_lattice::{DType, PyType};
    let r = rules();
    assert_eq!(
        r.promote_types(DType::Int8, DType::UInt8).unwrap(),
        DType::Int16
    );
    assert_eq!(
        r.promote_types(DType::UInt64, DType::Int64).unwrap(),
        DType::Float64
    );
    assert_eq!(
        r.promote_types(PyType::Int, DType::Int8).unwrap(),
        DType::Int64
    );
    assert_eq!(
        r.promote_types(DType::BFloat16, DType::Int8)
            .unwrap_err()
            .kind(),
        ErrorKind::UnsupportedOperand
    );
    assert!(r.lattice().is_some());
}

#[test]
fn value_based_examples_from_the_notes() {
    let r = rules();
    let rt = |ops: &str| {
        r.result_type(&dtype_lattice::operand::parse_list(ops).unwrap())
            .map(|p| p.dtype.name())
    };
    assert_eq!(rt("uint8, 300").unwrap(), "uint16");
    assert_eq!(rt("uint8, -200").unwrap(), "int16");
    assert_eq!(rt("int8, 3").unwrap(), "int8");
    assert_eq!(rt("uint8, int8(3)").unwrap(), "uint8");
    assert_eq!(rt("uint64, -1").unwrap(), "float64");
    assert_eq!(rt("bool, 3").unwrap(), "int64");
    assert_eq!(rt("float16, 70000").unwrap(), "float64");
    assert_eq!(rt("float16, complex128(1j)").unwrap(), "complex64");
    // Order matters on the value-based path.
    assert_eq!(rt("uint16, int8, float16, 2.5").unwrap(), "float64");
    assert_eq!(rt("float16, uint16, int8, 2.5").unwrap(), "float32");
    assert_eq!(
        rt("int8, 18446744073709551616").unwrap_err().kind(),
        ErrorKind::UnsupportedOperand
    );
    let ops = dtype_lattice::operand::parse_list("uint8, 300").unwrap();
    assert_eq!(r.op_result(Op::Add, &ops).unwrap().dtype.name(), "uint16");
    assert_eq!(
        r.op_result(Op::FloorDivide, &ops).unwrap().dtype.name(),
        "int16"
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
        }
    }
    for op in Op::ALL {
        let _ = r.op_result(op, &[]);
    }
    let _ = r.result_type(&[]);
}

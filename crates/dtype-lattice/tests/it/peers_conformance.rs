//! The peers' rule sets against fixtures written from the real libraries by `tools/`.
//! Operands a rule set cannot represent are refused by us with `UnsupportedOperand` while the
//! library raises its own error: those cases are set aside, counted exactly (`common::SetAside`).

use crate::common;

use common::{MessageCheck, NUMPY_OBJECT, check_result_type_file};

use dtype_lattice::Rules;

#[test]
fn numpy_result_type_agrees_with_numpy_2() {
    check_result_type_file(
        "numpy/result_type.json",
        Rules::numpy(),
        MessageCheck::Exact,
        &[(NUMPY_OBJECT, 6)],
    );
}

//! `--op`: every op fixture written from the real libraries by `tools/`.

use crate::common;

use common::{MessageCheck, check_op_files};
use dtype_lattice::{Op, Rules};

#[test]
fn jax_numpy_ops_agree_with_jax() {
    for mode in ["x32", "x64"] {
        check_op_files(
            "jax",
            &format!("_jnp_{mode}"),
            Rules::jax(),
            &[],
            MessageCheck::UpToTupleOrder,
            &[],
        );
    }
}

#[test]
fn jax_lax_ops_agree_with_jax() {
    for mode in ["x32", "x64"] {
        check_op_files(
            "jax",
            &format!("_lax_{mode}"),
            Rules::jax_lax(),
            &[Op::FloorDivide],
            MessageCheck::Exact,
            &[],
        );
    }
}

#[test]
fn numpy_ops_agree_with_numpy_2() {
    check_op_files("numpy", "", Rules::numpy(), &[], MessageCheck::Exact, &[]);
}

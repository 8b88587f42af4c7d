//! NumPy 1.x value-based casting.

use crate::dtype::DType;
use crate::error::Error;
use crate::lattice::Lattice;
use crate::operand::{Node, Operand};
use crate::ops::Op;
use crate::rules::{unsupported, Options, Promotion};

const NAME: &str = "numpy-legacy";

/// Whether the library has this dtype.
pub(crate) fn knows(_dtype: DType) -> bool {
    false
}

/// Plain promotion.
pub(crate) fn result_type(_opts: Options, operands: &[Operand]) -> Result<Promotion, Error> {
    match operands.first() {
        None => Err(crate::error::Reason::EmptyOperands.into()),
        Some(op) => Err(unsupported(NAME, op, "not implemented yet".into())),
    }
}

/// Promotion of two types.
pub(crate) fn promote_types(_opts: Options, a: Node, _b: Node) -> Result<DType, Error> {
    Err(unsupported(
        NAME,
        &Operand::array(a.dtype_or_default()),
        "not implemented yet".into(),
    ))
}

/// The result of `op`.
pub(crate) fn op_result(opts: Options, _op: Op, operands: &[Operand]) -> Result<Promotion, Error> {
    result_type(opts, operands)
}

/// The lattice, if the rule set is one.
pub(crate) fn lattice(_opts: Options) -> Option<&'static Lattice<Node>> {
    None
}

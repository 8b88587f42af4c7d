//! Promotion tables: cell (i, j) is the promotion of row operand i and column operand j.

use crate::dtype::DType;
use crate::error::Error;
use crate::operand::{Operand, PyType};
use crate::ops::Op;
use crate::rules::{Promotion, Rules};

/// The 18 types of the table in JAX's documentation: bool, the unsigned and signed integers,
/// bfloat16, the IEEE floats, the complex types and the three weak Python types.
pub const JAX_DOC_TYPES: [Operand; 18] = [
    Operand::Array {
        dtype: DType::Bool,
        weak: false,
    },
    Operand::Array {
        dtype: DType::UInt8,
        weak: false,
    },
    Operand::Array {
        dtype: DType::UInt16,
        weak: false,
    },
    Operand::Array {
        dtype: DType::UInt32,
        weak: false,
    },
    Operand::Array {
        dtype: DType::UInt64,
        weak: false,
    },
    Operand::Array {
        dtype: DType::Int8,
        weak: false,
    },
    Operand::Array {
        dtype: DType::Int16,
        weak: false,
    },
    Operand::Array {
        dtype: DType::Int32,
        weak: false,
    },
    Operand::Array {
        dtype: DType::Int64,
        weak: false,
    },
    Operand::Array {
        dtype: DType::BFloat16,
        weak: false,
    },
    Operand::Array {
        dtype: DType::Float16,
        weak: false,
    },
    Operand::Array {
        dtype: DType::Float32,
        weak: false,
    },
    Operand::Array {
        dtype: DType::Float64,
        weak: false,
    },
    Operand::Array {
        dtype: DType::Complex64,
        weak: false,
    },
    Operand::Array {
        dtype: DType::Complex128,
        weak: false,
    },
    Operand::PyType(PyType::Int),
    Operand::PyType(PyType::Float),
    Operand::PyType(PyType::Complex),
];

/// The most row/column operands a table takes (a table is quadratic in them).
pub const MAX_TYPES: usize = 1024;

/// A computed promotion table.
///
/// ```
/// use dtype_lattice::{table::{Table, JAX_DOC_TYPES}, Rules};
/// let t = Table::compute(Rules::jax().x64(true), None, &JAX_DOC_TYPES);
/// assert_eq!(t.cells.len(), 18);
/// // u4 × i4 → i8 with x64 (row uint32, column int32)
/// assert_eq!(t.cells[3][7].as_ref().unwrap().to_string(), "int64");
/// // Key dtypes take part: a key promotes only with itself.
/// let keys = dtype_lattice::operand::parse_list("key<fry>,int32").unwrap();
/// let t = Table::compute(Rules::jax(), None, &keys);
/// assert_eq!(t.cells[0][0].as_ref().unwrap().to_string(), "key<fry>");
/// assert!(t.cells[0][1].is_err());
/// ```
#[derive(Clone, Debug)]
pub struct Table {
    /// The rules that produced it.
    pub rules: Rules,
    /// The operation (`None`: plain promotion).
    pub op: Option<Op>,
    /// Row and column operands.
    pub types: Vec<Operand>,
    /// `cells[i][j]` = result of (types\[i\], types\[j\]).
    pub cells: Vec<Vec<Result<Promotion, Error>>>,
}

impl Table {
    /// Computes every cell: `op` of the row and column operands, or their plain promotion.
    /// Key dtypes take part like any other (a key promotes only with itself).
    pub fn compute(rules: Rules, op: Option<Op>, types: &[Operand]) -> Table {
        let types = types.to_vec();
        let cells = types
            .iter()
            .map(|a| {
                types
                    .iter()
                    .map(|b| rules.evaluate(op, &[*a, *b]))
                    .collect()
            })
            .collect();
        Table {
            rules,
            op,
            types,
            cells,
        }
    }

    /// The cells where `self` and `other` (same types) differ: one succeeds and the other
    /// refuses, or the dtypes or weak flags differ. Refusals do not differ among themselves.
    ///
    /// ```
    /// use dtype_lattice::{table::{Table, JAX_DOC_TYPES}, Rules};
    /// let jax = Table::compute(Rules::jax().x64(true), None, &JAX_DOC_TYPES);
    /// let np = Table::compute(Rules::numpy(), None, &JAX_DOC_TYPES);
    /// let d = jax.diff(&np);
    /// assert!(d[7][10]); // int32 + float16: float16 in JAX, float64 in NumPy
    /// assert!(!d[0][0]); // bool + bool: bool in both
    /// ```
    pub fn diff(&self, other: &Table) -> Vec<Vec<bool>> {
        self.cells
            .iter()
            .zip(&other.cells)
            .map(|(a, b)| {
                a.iter()
                    .zip(b)
                    .map(|(x, y)| match (x, y) {
                        (Ok(p), Ok(q)) => p != q,
                        (Err(_), Err(_)) => false,
                        _ => true,
                    })
                    .collect()
            })
            .collect()
    }
}

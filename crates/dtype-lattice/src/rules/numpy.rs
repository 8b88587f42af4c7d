//! NumPy ≥ 2 (NEP 50; CuPy and Dask follow it), with ml_dtypes imported: `np.promote_types`
//! of NumPy's own dtypes is the smallest type both cast to safely, ties going to the lower
//! type number; Python scalars are weak and meet the strong result through a small table by
//! kind; NumPy scalars and 0-d arrays are strong.
//!
//! ml_dtypes' types (bfloat16, the float8/float6/float4 formats, int1/int2/int4 and their
//! unsigned forms, complex32, bcomplex32) are *legacy user DTypes* to NumPy: importing
//! ml_dtypes changes no answer among NumPy's own dtypes (`tools/gen_numpy_ml_dtypes_fixtures.py`
//! checks it), and NumPy promotes its types pair by pair through the safe casts ml_dtypes
//! registers ([`ML_SAFE_CASTS`], which form no order: e4m3 and e4m3fn cast safely to each
//! other) and their type numbers, as `common_dtype` and `PyArray_PromoteDTypeSequence` do
//! ([`common_dtype`], [`promote_dtype_sequence`]). Their ufunc loops: [`super::ufunc`].

use std::sync::OnceLock;

use crate::dtype::DType::{self, *};
use crate::dtype::Kind;
use crate::error::{Error, Exception, Reason};
use crate::lattice::{Lattice, Lub};
use crate::operand::{Node, Operand, PyType, Value};
use crate::ops::{Op, OpRule, Outcome};
use crate::rules::compiled::{Compiled, NO_JOIN};
use crate::rules::{Defaults, Promotion, RuleSetDef, WeakRule, no_weak, unsupported};

const fn d(t: DType) -> Node {
    Node::Dtype(t)
}

/// NumPy's safe casts between its numeric dtypes, node → dtypes it casts to directly
/// (`np.can_cast(a, b, "safe")`, transitively reduced).
const SAFE_CASTS: &[(Node, &[Node])] = &[
    (d(Bool), &[d(UInt8), d(Int8)]),
    (d(UInt8), &[d(UInt16), d(Int16), d(Float16)]),
    (d(Int8), &[d(Int16), d(Float16)]),
    (d(UInt16), &[d(UInt32), d(Int32), d(Float32)]),
    (d(Int16), &[d(Int32), d(Float32)]),
    (d(UInt32), &[d(UInt64), d(Int64), d(Float64)]),
    (d(Int32), &[d(Int64), d(Float64)]),
    (d(UInt64), &[d(Float64)]),
    (d(Int64), &[d(Float64)]),
    (d(Float16), &[d(Float32), d(Complex64)]),
    (d(Float32), &[d(Float64), d(Complex64)]),
    (d(Float64), &[d(Complex128)]),
    (d(Complex64), &[d(Complex128)]),
    (d(Complex128), &[]),
];

/// NumPy's type numbers (`np.dtype(t).num`): where two smallest safe casts tie (int8 with
/// uint8: int16 or float16), the lower number wins.
const TYPE_NUMBER: &[(DType, usize)] = &[
    (Bool, 0),
    (Int8, 1),
    (UInt8, 2),
    (Int16, 3),
    (UInt16, 4),
    (Int32, 5),
    (UInt32, 6),
    (Int64, 7),
    (UInt64, 8),
    (Float32, 11),
    (Float64, 12),
    (Complex64, 14),
    (Complex128, 15),
    (Float16, 23),
];

/// ml_dtypes' types (0.6.0), NumPy's legacy user DTypes: the type number NumPy gives each
/// when ml_dtypes is imported (registration order; the higher number decides a promotion) and
/// its `dtype.kind` (`V` for most: only float8_e5m2 says `f`, which gives it NumPy's
/// fallback search by kind).
const ML_DTYPES: &[(DType, usize, char)] = &[
    (BFloat16, 256, 'V'),
    (Float8E3M4, 257, 'V'),
    (Float8E4M3, 258, 'V'),
    (Float8E4M3B11Fnuz, 259, 'V'),
    (Float8E4M3Fn, 260, 'V'),
    (Float8E4M3Fnuz, 261, 'V'),
    (Float8E5M2, 262, 'f'),
    (Float8E5M2Fnuz, 263, 'V'),
    (Float6E2M3Fn, 264, 'V'),
    (Float6E3M2Fn, 265, 'V'),
    (Float4E2M1Fn, 266, 'V'),
    (Float8E8M0Fnu, 267, 'V'),
    (Int1, 268, 'V'),
    (UInt1, 269, 'V'),
    (Int2, 270, 'V'),
    (UInt2, 271, 'V'),
    (Int4, 272, 'V'),
    (UInt4, 273, 'V'),
    (BComplex32, 274, 'W'),
    (Complex32, 275, 'W'),
];

/// Groups of dtypes in [`ML_SAFE_CASTS`].
const ML_FLOATS: &[DType] = &[
    BFloat16,
    Float8E3M4,
    Float8E4M3,
    Float8E4M3B11Fnuz,
    Float8E4M3Fn,
    Float8E4M3Fnuz,
    Float8E5M2,
    Float8E5M2Fnuz,
    Float6E2M3Fn,
    Float6E3M2Fn,
    Float4E2M1Fn,
    Float8E8M0Fnu,
];
const ML_INTS: &[DType] = &[Int1, UInt1, Int2, UInt2, Int4, UInt4];
const ML_COMPLEX: &[DType] = &[BComplex32, Complex32];
const WIDE_FLOATS: &[DType] = &[Float32, Float64, Complex64, Complex128];
const INT_FLOATS: &[DType] = &[Float16, Float32, Float64, Complex64, Complex128];
const SIGNED: &[DType] = &[Int8, Int16, Int32, Int64];
const UNSIGNED: &[DType] = &[UInt8, UInt16, UInt32, UInt64];
/// The narrow floats ml_dtypes lets cast safely into one another (and into its integers).
const MX_FLOATS: &[DType] = &[
    Float8E3M4,
    Float8E4M3,
    Float8E4M3B11Fnuz,
    Float8E4M3Fn,
    Float8E4M3Fnuz,
    Float8E5M2Fnuz,
    Float6E2M3Fn,
    Float6E3M2Fn,
    Float4E2M1Fn,
];
const MX_FLOATS_BUT_E2M3: &[DType] = &[
    Float8E3M4,
    Float8E4M3,
    Float8E4M3B11Fnuz,
    Float8E4M3Fn,
    Float8E4M3Fnuz,
    Float8E5M2Fnuz,
    Float6E3M2Fn,
    Float4E2M1Fn,
];

/// The safe casts ml_dtypes registers (`np.can_cast(a, b, "safe")` with ml_dtypes imported),
/// every one that involves its types: a dtype → the groups of dtypes it casts to safely.
/// Unlike NumPy's own casts they are neither antisymmetric nor transitive (float4_e2m1fn
/// casts to int2, int2 to int8, float4_e2m1fn not to int8), so they are a relation, not a
/// lattice. NumPy's longdouble and clongdouble, which the model does not have, are left out.
const ML_SAFE_CASTS: &[(DType, &[&[DType]])] = &[
    (Bool, &[ML_FLOATS, ML_INTS, ML_COMPLEX]),
    (Int8, &[ML_FLOATS, ML_COMPLEX]),
    (UInt8, &[ML_FLOATS, ML_COMPLEX]),
    (BFloat16, &[WIDE_FLOATS]),
    (Float8E5M2, &[WIDE_FLOATS]),
    (Float8E8M0Fnu, &[WIDE_FLOATS]),
    (Float8E3M4, &[WIDE_FLOATS, MX_FLOATS, ML_INTS]),
    (Float8E4M3, &[WIDE_FLOATS, MX_FLOATS, ML_INTS]),
    (Float8E4M3B11Fnuz, &[WIDE_FLOATS, MX_FLOATS, ML_INTS]),
    (Float8E4M3Fn, &[WIDE_FLOATS, MX_FLOATS, ML_INTS]),
    (Float8E4M3Fnuz, &[WIDE_FLOATS, MX_FLOATS, ML_INTS]),
    (Float8E5M2Fnuz, &[WIDE_FLOATS, MX_FLOATS, ML_INTS]),
    (Float6E3M2Fn, &[WIDE_FLOATS, MX_FLOATS, ML_INTS]),
    (Float4E2M1Fn, &[WIDE_FLOATS, MX_FLOATS, ML_INTS]),
    (
        Float6E2M3Fn,
        &[WIDE_FLOATS, MX_FLOATS, &[Int1, UInt1, Int2, UInt2]],
    ),
    (Int1, &[SIGNED, INT_FLOATS, MX_FLOATS, &[Int2, Int4]]),
    (
        UInt1,
        &[SIGNED, UNSIGNED, INT_FLOATS, MX_FLOATS, &[UInt2, UInt4]],
    ),
    (Int2, &[SIGNED, INT_FLOATS, MX_FLOATS, &[Int4]]),
    (UInt2, &[SIGNED, UNSIGNED, INT_FLOATS, MX_FLOATS, &[UInt4]]),
    (Int4, &[SIGNED, INT_FLOATS, MX_FLOATS_BUT_E2M3]),
    (UInt4, &[SIGNED, UNSIGNED, INT_FLOATS, MX_FLOATS_BUT_E2M3]),
    (BComplex32, &[&[Complex64, Complex128, Complex32]]),
    (Complex32, &[&[Complex64, Complex128, BComplex32]]),
];

/// The casts ml_dtypes registers no function for: `x.astype(to)` raises NumPy's `TypeError`
/// (from → the dtypes it cannot cast to at all).
const ML_NO_CASTS: &[(DType, &[DType])] = &[
    (Float8E3M4, &[Float8E8M0Fnu]),
    (Float8E4M3, &[Float8E8M0Fnu]),
    (Float8E4M3B11Fnuz, &[Float8E8M0Fnu]),
    (Float8E4M3Fn, &[Float8E8M0Fnu]),
    (Float8E4M3Fnuz, &[Float8E8M0Fnu]),
    (Float8E5M2, &[Float8E8M0Fnu]),
    (Float8E5M2Fnuz, &[Float8E8M0Fnu]),
    (Float6E2M3Fn, &[Float8E8M0Fnu, Int4, UInt4]),
    (Float6E3M2Fn, &[Float8E8M0Fnu]),
    (Float4E2M1Fn, &[Float8E8M0Fnu]),
    (
        Float8E8M0Fnu,
        &[
            Float8E3M4,
            Float8E4M3,
            Float8E4M3B11Fnuz,
            Float8E4M3Fn,
            Float8E4M3Fnuz,
            Float8E5M2,
            Float8E5M2Fnuz,
            Float6E2M3Fn,
            Float6E3M2Fn,
            Float4E2M1Fn,
            Int1,
            UInt1,
            Int2,
            UInt2,
            Int4,
            UInt4,
            BComplex32,
            Complex32,
        ],
    ),
    (Int1, &[Float8E8M0Fnu, UInt1, UInt2, UInt4]),
    (UInt1, &[Float8E8M0Fnu, Int1, Int2, Int4]),
    (Int2, &[Float8E8M0Fnu, Int1, UInt1, UInt2, UInt4]),
    (UInt2, &[Float8E8M0Fnu, Int1, UInt1, Int2, Int4]),
    (
        Int4,
        &[Float6E2M3Fn, Float8E8M0Fnu, Int1, UInt1, Int2, UInt2, UInt4],
    ),
    (
        UInt4,
        &[Float6E2M3Fn, Float8E8M0Fnu, Int1, UInt1, Int2, UInt2, Int4],
    ),
    (BComplex32, &[Float8E8M0Fnu]),
    (Complex32, &[Float8E8M0Fnu]),
];

/// NumPy's builtin dtypes of each scalar kind, smallest first (`_npy_smallest_type_of_kind_table`
/// and `_npy_next_larger_type_table`): the fallback search of a legacy user DType whose kind
/// is one of these (longdouble left out: no search in these rules reaches it).
const KIND_LADDERS: &[(char, &[DType])] = &[
    ('b', &[Bool]),
    ('u', &[UInt8, UInt16, UInt32, UInt64]),
    ('i', &[Int8, Int16, Int32, Int64]),
    ('f', &[Float16, Float32, Float64]),
    ('c', &[Complex64, Complex128]),
];

/// NEP 50: a Python scalar meets the strong result by kind.
pub(crate) const WEAK_RULES: &[(PyType, Kind, WeakRule)] = &[
    (PyType::Int, Kind::Bool, WeakRule::Default),
    (PyType::Int, Kind::UnsignedInt, WeakRule::Keep),
    (PyType::Int, Kind::SignedInt, WeakRule::Keep),
    (PyType::Int, Kind::Float, WeakRule::Keep),
    (PyType::Int, Kind::Complex, WeakRule::Keep),
    (PyType::Float, Kind::Bool, WeakRule::Default),
    (PyType::Float, Kind::UnsignedInt, WeakRule::Default),
    (PyType::Float, Kind::SignedInt, WeakRule::Default),
    (PyType::Float, Kind::Float, WeakRule::Keep),
    (PyType::Float, Kind::Complex, WeakRule::Keep),
    (PyType::Complex, Kind::Bool, WeakRule::Default),
    (PyType::Complex, Kind::UnsignedInt, WeakRule::Default),
    (PyType::Complex, Kind::SignedInt, WeakRule::Default),
    (PyType::Complex, Kind::Float, WeakRule::ToComplex),
    (PyType::Complex, Kind::Complex, WeakRule::Keep),
];

/// NumPy's dtypes for Python scalars, and complex of a float's precision.
pub(crate) const DEFAULTS: Defaults = Defaults {
    int: Int64,
    float: Float64,
    complex: Complex128,
    to_complex: |f| if f == Float64 { Complex128 } else { Complex64 },
};

/// NumPy's refusal when no loop of a ufunc accepts the inputs by safe casting.
pub(crate) const UFUNC_NO_LOOP: Outcome = Outcome::Refuse(
    Exception::TypeError,
    "ufunc '{op}' not supported for the input types, and the inputs could not be safely \
     coerced to any supported types according to the casting rule ''safe''",
);

/// What each ufunc's loops make of the promoted dtype (bool, unsigned, signed, float,
/// complex); ops not listed keep it.
pub(crate) const OPS: &[OpRule] = &[
    OpRule::kinds(
        Op::Subtract,
        [
            Outcome::Refuse(
                Exception::TypeError,
                "numpy boolean subtract, the `-` operator, is not supported, use the \
                 bitwise_xor, the `^` operator, or the logical_xor function instead.",
            ),
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
        ],
    ),
    OpRule::integers_to(Op::TrueDivide, Outcome::To(Float64)),
    OpRule::kinds(
        Op::FloorDivide,
        [
            Outcome::To(Int8),
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
            UFUNC_NO_LOOP,
        ],
    ),
    OpRule::kinds(
        Op::Power,
        [
            Outcome::To(Int8),
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
        ],
    ),
    OpRule::all(Op::Equal, Outcome::Bool),
    OpRule::all(Op::Less, Outcome::Bool),
    OpRule::all(Op::LogicalAnd, Outcome::Bool),
    OpRule::kinds(
        Op::BitwiseAnd,
        [
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
            UFUNC_NO_LOOP,
            UFUNC_NO_LOOP,
        ],
    ),
];

fn compiled() -> &'static Compiled {
    static C: OnceLock<Compiled> = OnceLock::new();
    C.get_or_init(|| {
        let lattice = Lattice::from_edges(SAFE_CASTS.iter().map(|&(n, a)| (n, a.to_vec())))
            .expect("acyclic")
            .with_tie_break(|n| match n {
                Node::Dtype(t) => TYPE_NUMBER
                    .iter()
                    .find(|(d, _)| d == t)
                    .map_or(usize::MAX, |&(_, k)| k),
                Node::Weak(_) => usize::MAX,
            });
        Compiled::from_lattice(lattice)
    })
}

/// The safe-cast order (not a lattice: see [`Lattice::ambiguous_pairs`]).
pub(crate) fn lattice() -> &'static Lattice<Node> {
    &compiled().lattice
}

/// Whether NumPy has this dtype of its own (without ml_dtypes).
pub(crate) fn knows_builtin(dtype: DType) -> bool {
    TYPE_NUMBER.iter().any(|&(d, _)| d == dtype)
}

/// Whether this is one of ml_dtypes' types (a legacy user DType to NumPy).
pub(crate) fn is_ml(dtype: DType) -> bool {
    ML_DTYPES.iter().any(|&(d, _, _)| d == dtype)
}

/// Whether NumPy with ml_dtypes imported has this dtype.
pub(crate) fn knows(dtype: DType) -> bool {
    knows_builtin(dtype) || is_ml(dtype)
}

/// NumPy's type number of a dtype it has.
fn type_number(dtype: DType) -> usize {
    TYPE_NUMBER
        .iter()
        .map(|&(d, n)| (d, n))
        .chain(ML_DTYPES.iter().map(|&(d, n, _)| (d, n)))
        .find(|&(d, _)| d == dtype)
        .map_or(usize::MAX, |(_, n)| n)
}

/// `dtype.kind` as NumPy reports it (`V` or `W` for most of ml_dtypes' types).
pub(crate) fn kind_char(dtype: DType) -> char {
    if let Some(&(_, _, k)) = ML_DTYPES.iter().find(|&&(d, _, _)| d == dtype) {
        return k;
    }
    match dtype.kind() {
        Kind::Bool => 'b',
        Kind::UnsignedInt => 'u',
        Kind::SignedInt => 'i',
        Kind::Float => 'f',
        Kind::Complex => 'c',
        Kind::Extended | Kind::Void => 'V',
    }
}

/// `np.can_cast(from, to, "safe")` between dtypes NumPy (with ml_dtypes) has.
pub(crate) fn can_cast_safely(from: DType, to: DType) -> bool {
    if from == to {
        return true;
    }
    if knows_builtin(from) && knows_builtin(to) {
        let l = &compiled().lattice;
        return match (l.index_of(&d(from)), l.index_of(&d(to))) {
            (Some(a), Some(b)) => l.leq(a, b),
            _ => false,
        };
    }
    ML_SAFE_CASTS
        .iter()
        .find(|(f, _)| *f == from)
        .is_some_and(|(_, groups)| groups.iter().any(|g| g.contains(&to)))
}

/// `x.astype(to)` for an array of `from` in NumPy with ml_dtypes: refused where ml_dtypes
/// registers no cast function.
pub(crate) fn astype(from: DType, to: DType) -> Result<(), Error> {
    if ML_NO_CASTS
        .iter()
        .any(|(f, tos)| *f == from && tos.contains(&to))
    {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "Cannot cast array data from dtype({from}) to dtype({to}) according to the rule \
                 'unsafe'"
            ),
        ));
    }
    Ok(())
}

/// NumPy's `__common_dtype__` of the DType `cls` with `other` (a dtype, or the abstract DType
/// of a Python scalar); `None` is NumPy's `NotImplemented` (let `other` decide).
pub(crate) fn common_dtype(cls: Node, other: Node) -> Option<Node> {
    if cls == other {
        return Some(cls);
    }
    match cls {
        Node::Weak(t) => python_common_dtype(t, other),
        Node::Dtype(c) if is_ml(c) => legacy_user_common_dtype(c, other),
        Node::Dtype(c) => builtin_common_dtype(c, other),
    }
}

/// `default_builtin_common_dtype`: NEP 50's rules for Python scalars; the promotion table
/// for a builtin of no higher type number; `NotImplemented` for ml_dtypes' types.
fn builtin_common_dtype(c: DType, other: Node) -> Option<Node> {
    let kind = c.kind();
    match other {
        Node::Weak(PyType::Complex) => match kind {
            Kind::Complex => Some(d(c)),
            Kind::Float => Some(d((DEFAULTS.to_complex)(c))),
            _ => None,
        },
        Node::Weak(PyType::Float) => matches!(kind, Kind::Float | Kind::Complex).then_some(d(c)),
        Node::Weak(PyType::Int) => (kind != Kind::Bool).then_some(d(c)),
        Node::Dtype(o) if is_ml(o) || type_number(o) > type_number(c) => None,
        Node::Dtype(o) => Some(d(builtin_promote(c, o))),
    }
}

/// NumPy's promotion table between two of its own dtypes.
fn builtin_promote(a: DType, b: DType) -> DType {
    let r = compiled().step(a.index() as u8, b.index());
    debug_assert_ne!(
        r, NO_JOIN,
        "NumPy promotes every pair of its numeric dtypes"
    );
    Node::from_index(r as usize).dtype_or_default()
}

/// `legacy_userdtype_common_dtype_function`: the higher type number decides; `other` if
/// `cls` casts to it safely, else `cls` if `other` casts to `cls`, else (both of a builtin
/// kind) the smallest builtin of the higher kind both cast to.
fn legacy_user_common_dtype(c: DType, other: Node) -> Option<Node> {
    let Node::Dtype(o) = other else {
        return None;
    };
    if type_number(c) < type_number(o) {
        return None;
    }
    if can_cast_safely(c, o) {
        return Some(d(o));
    }
    if can_cast_safely(o, c) {
        return Some(d(c));
    }
    let rank = |t: DType| KIND_LADDERS.iter().position(|&(k, _)| k == kind_char(t));
    let start = rank(c)?.max(rank(o)?);
    KIND_LADDERS[start..]
        .iter()
        .flat_map(|&(_, ladder)| ladder.iter().copied())
        .find(|&t| can_cast_safely(c, t) && can_cast_safely(o, t))
        .map(d)
}

/// The abstract Python DTypes' `__common_dtype__` (`int_common_dtype`, `float_common_dtype`,
/// `complex_common_dtype`): their default dtype with bool (and integers), the higher Python
/// type with a lower one, and for a legacy user DType the first of two builtins it promotes
/// with (int: uint8, int8, then int64; float: float16, then float64; complex: complex64, then
/// complex128).
fn python_common_dtype(t: PyType, other: Node) -> Option<Node> {
    let o = match other {
        Node::Weak(u) => return (u < t).then_some(Node::Weak(t)),
        Node::Dtype(o) => o,
    };
    if is_ml(o) {
        let tries: &[DType] = match t {
            PyType::Int => &[UInt8, Int8, Int64],
            PyType::Float => &[Float16, Float64],
            PyType::Complex => &[Complex64, Complex128],
        };
        return tries
            .iter()
            .find_map(|&b| legacy_user_common_dtype(o, d(b)));
    }
    match (t, o.kind()) {
        (PyType::Int, Kind::Bool) => Some(d(DEFAULTS.int)),
        (PyType::Int, _) => None,
        (_, Kind::Bool | Kind::SignedInt | Kind::UnsignedInt) => Some(d(DEFAULTS.of(t))),
        _ => None,
    }
}

/// NumPy's name of a DType class, as its errors print it.
pub(crate) fn dtype_class(n: Node) -> String {
    match n {
        Node::Weak(PyType::Int) => "<class 'numpy.dtypes._PyLongDType'>".into(),
        Node::Weak(PyType::Float) => "<class 'numpy.dtypes._PyFloatDType'>".into(),
        Node::Weak(PyType::Complex) => "<class 'numpy.dtypes._PyComplexDType'>".into(),
        Node::Dtype(t) if is_ml(t) => format!("<class 'numpy.dtype[{t}]'>"),
        Node::Dtype(t) => {
            let name = t.name();
            let class = match name.strip_prefix("uint") {
                Some(bits) => format!("UInt{bits}"),
                None => {
                    let mut c = name.chars();
                    c.next()
                        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                        .unwrap_or_default()
                }
            };
            format!("<class 'numpy.dtypes.{class}DType'>")
        }
    }
}

/// `PyArray_CommonDType`: `common_dtype` asked both ways, NumPy's `DTypePromotionError` when
/// neither knows the other.
pub(crate) fn common_dtype_pair(a: Node, b: Node) -> Result<Node, Error> {
    common_dtype(a, b)
        .or_else(|| common_dtype(b, a))
        .ok_or_else(|| {
            Error::refused(
                Exception::DTypePromotionError,
                format!(
                    "The DTypes {} and {} do not have a common DType. For example they cannot \
                     be stored in a single array unless the dtype is `object`.",
                    dtype_class(a),
                    dtype_class(b)
                ),
            )
        })
}

/// `reduce_dtypes_to_most_knowledgeable`: pairs the first half with the second half (in
/// reverse), moving the DType that knows more to the front and clearing those that cannot
/// change the result; the last pairing's `common_dtype` (`None`: `NotImplemented`).
fn reduce_most_knowledgeable(dtypes: &mut [Option<Node>], length: usize) -> Option<Node> {
    let half = length / 2;
    let mut res = None;
    for low in 0..half {
        let high = length - 1 - low;
        let (a, b) = (dtypes[low], dtypes[high]);
        res = match (a, b) {
            (Some(a), Some(b)) if a == b => Some(a),
            (Some(a), Some(b)) => common_dtype(a, b),
            _ => None,
        };
        match res {
            None => dtypes.swap(low, high),
            Some(r) if Some(r) == a => dtypes[high] = None,
            Some(_) => {}
        }
    }
    if length == 2 {
        res
    } else {
        reduce_most_knowledgeable(dtypes, length - half)
    }
}

/// `PyArray_PromoteDTypeSequence`: the DType that knows most promotes every other one, and
/// the results are reduced with [`common_dtype_pair`]; NumPy's `DTypePromotionError` when it
/// does not know one of them.
pub(crate) fn promote_dtype_sequence(dtypes_in: &[Node]) -> Result<Node, Error> {
    match dtypes_in {
        [] => return Err(Reason::EmptyOperands.into()),
        [one] => return Ok(*one),
        _ => {}
    }
    let mut dtypes: Vec<Option<Node>> = dtypes_in.iter().copied().map(Some).collect();
    let n = dtypes.len();
    let mut result = reduce_most_knowledgeable(&mut dtypes, n);
    let main = dtypes[0].expect("the reduction keeps the first DType");
    let start = if result.is_some() { 2 } else { 1 };
    for t in dtypes[start..].iter().flatten().copied() {
        let promotion = common_dtype(main, t).ok_or_else(|| {
            let all: Vec<String> = dtypes_in.iter().map(|&n| dtype_class(n)).collect();
            Error::refused(
                Exception::DTypePromotionError,
                format!(
                    "The DType {} could not be promoted by {}. This means that no common DType \
                     exists for the given inputs. For example they cannot be stored in a single \
                     array unless the dtype is `object`. The full list of DTypes is: ({})",
                    dtype_class(t),
                    dtype_class(main),
                    all.join(", ")
                ),
            )
        })?;
        result = Some(match result {
            None => promotion,
            Some(r) => common_dtype_pair(r, promotion)?,
        });
    }
    Ok(result.expect("at least two DTypes"))
}

/// What an operand contributes in NumPy 2: a strong dtype, or a weak Python scalar type.
pub(crate) enum Part {
    Strong(DType),
    Weak(PyType),
}

impl Part {
    /// The operand's DType: its dtype, or the abstract DType of its Python type.
    pub(crate) fn node(&self) -> Node {
        match *self {
            Part::Strong(t) => Node::Dtype(t),
            Part::Weak(t) => Node::Weak(t),
        }
    }
}

pub(crate) fn classify(
    rules: &'static str,
    op: &Operand,
    knows: fn(DType) -> bool,
) -> Result<Part, Error> {
    let check = |dtype: DType| {
        if knows(dtype) {
            Ok(dtype)
        } else {
            Err(unsupported(rules, op, format!("it has no dtype {dtype}")))
        }
    };
    Ok(match *op {
        Operand::Array { weak: true, .. } => return Err(no_weak(rules, op, "arrays")),
        Operand::Array { dtype, .. } | Operand::Scalar { dtype, .. } => Part::Strong(check(dtype)?),
        Operand::Literal(Value::Bool(_)) => Part::Strong(Bool),
        Operand::Literal(v) => Part::Weak(v.py_type().expect("non-bool literal")),
        Operand::PyType(t) => Part::Weak(t),
    })
}

/// `np.promote_types(a, b)`; Python types stand for NumPy's dtype of them (int → int64).
/// Two of NumPy's own dtypes meet in the safe-cast order; one of ml_dtypes' types through
/// `PyArray_CommonDType`.
pub(crate) fn promote_types(a: Node, b: Node) -> Result<DType, Error> {
    let dtype = |n: Node| match n {
        Node::Dtype(t) if knows(t) => Ok(t),
        Node::Dtype(t) => Err(unsupported(
            "numpy",
            &Operand::array(t),
            format!("it has no dtype {t}"),
        )),
        Node::Weak(t) => Ok(t.default_dtype()),
    };
    let (a, b) = (dtype(a)?, dtype(b)?);
    if is_ml(a) || is_ml(b) {
        return common_dtype_pair(d(a), d(b)).map(Node::dtype_or_default);
    }
    Ok(builtin_promote(a, b))
}

/// `np.result_type(*operands)`.
pub(crate) fn result_type(operands: &[Operand]) -> Result<Promotion, Error> {
    let parts = operands
        .iter()
        .map(|op| classify("numpy", op, knows))
        .collect::<Result<Vec<Part>, Error>>()?;
    if parts
        .iter()
        .any(|p| matches!(p, Part::Strong(t) if is_ml(*t)))
    {
        // A legacy user DType among them: NumPy's DType sequence promotion (a strong operand
        // makes the result concrete).
        let nodes: Vec<Node> = parts.iter().map(Part::node).collect();
        return Ok(Promotion {
            dtype: promote_dtype_sequence(&nodes)?.dtype_or_default(),
            weak_type: false,
        });
    }
    let c = compiled();
    let mut strong: Vec<usize> = Vec::with_capacity(operands.len());
    let mut weak: Option<PyType> = None;
    for p in &parts {
        match *p {
            Part::Strong(t) => strong.push(c.lattice.index_of(&d(t)).expect("a NumPy dtype")),
            Part::Weak(t) => weak = weak.max(Some(t)),
        }
    }
    let dtype = if strong.is_empty() {
        // Only Python scalars: NumPy's dtypes for them (a Python int by its value).
        match weak {
            None => return Err(Reason::EmptyOperands.into()),
            Some(PyType::Int) => python_int_dtype(operands)?,
            Some(t) => t.default_dtype(),
        }
    } else {
        // The smallest type every strong dtype casts to safely (ties by type number); NumPy
        // promotes the whole set at once, not pairwise.
        let s = match c.lattice.lub_index(&strong) {
            Lub::Node(i) => c.lattice.node(i).dtype_or_default(),
            _ => unreachable!("NumPy promotes every set of its numeric dtypes"),
        };
        match weak {
            None => s,
            Some(t) => {
                WeakRule::apply(WEAK_RULES, t, s, &DEFAULTS).expect("NEP 50 covers every kind")
            }
        }
    };
    Ok(Promotion {
        dtype,
        weak_type: false,
    })
}

/// The dtype NumPy gives Python ints without strong operands: int64, except that a single
/// Python int is converted by its value (`np.result_type(2**63)` is uint64; beyond 64 bits
/// NumPy makes it an object array, which the model does not have: a refusal).
fn python_int_dtype(operands: &[Operand]) -> Result<DType, Error> {
    let [op @ Operand::Literal(Value::Int(v))] = operands else {
        return Ok(Int64);
    };
    [Int64, UInt64]
        .into_iter()
        .find(|t| {
            let (min, max) = t.int_range().expect("integer");
            (min..=max).contains(v)
        })
        .ok_or_else(|| {
            unsupported(
                "numpy",
                op,
                "NumPy gives this Python int the object dtype, which dtype-lattice does not model"
                    .into(),
            )
        })
}

/// NEP 50's checks on Python ints going into an integer loop of `dtype`: they must fit it.
pub(crate) fn check_python_ints(operands: &[Operand], loop_dtypes: &[DType]) -> Result<(), Error> {
    for (o, &t) in operands.iter().zip(loop_dtypes) {
        if let (Operand::Literal(Value::Int(v)), Some((min, max))) = (*o, builtin_int_range(t))
            && !(min..=max).contains(&v)
        {
            return Err(Error::refused(
                Exception::OverflowError,
                format!("Python integer {v} out of bounds for {t}"),
            ));
        }
    }
    Ok(())
}

/// The range of one of NumPy's own integer dtypes (not bool, not ml_dtypes' integers).
fn builtin_int_range(t: DType) -> Option<(i128, i128)> {
    if is_ml(t) || !t.kind().is_integer() {
        return None;
    }
    t.int_range()
}

/// `power`'s refusal of a negative integer exponent in an integer loop.
pub(crate) fn check_negative_power(operands: &[Operand], base: DType) -> Result<(), Error> {
    let negative = |o: &Operand| matches!(o, Operand::Literal(Value::Int(v)) | Operand::Scalar { value: Value::Int(v), .. } if *v < 0);
    if builtin_int_range(base).is_some() && operands.get(1).is_some_and(negative) {
        return Err(Error::refused(
            Exception::ValueError,
            "Integers to negative integer powers are not allowed.",
        ));
    }
    Ok(())
}

/// The result of NumPy's ufunc for `op` on `operands`: promotion, the ufunc's loops, and
/// NEP 50's checks on Python ints where the loop runs in the promoted integer dtype (they
/// must fit it; `power` refuses a negative one as exponent). With one of ml_dtypes' types
/// among the operands, the loop NumPy's legacy type resolution picks ([`super::ufunc`]).
pub(crate) fn op_result(op: Op, operands: &[Operand]) -> Result<Promotion, Error> {
    if let Some(u) = super::ufunc::numpy_ufunc(op.name())
        && let Some(l) = u.resolve(operands)?
    {
        return Ok(Promotion {
            dtype: l.output,
            weak_type: false,
        });
    }
    let promoted = result_type(operands)?;
    let result = crate::ops::rule_for(OPS, op).apply(promoted, Float64, &[])?;
    let integer_loop = result.dtype == promoted.dtype && promoted.dtype.kind().is_integer();
    if !integer_loop {
        return Ok(result);
    }
    check_python_ints(operands, &vec![promoted.dtype; operands.len()])?;
    if op == Op::Power {
        check_negative_power(operands, promoted.dtype)?;
    }
    Ok(result)
}

/// The rule set's row in the registry.
pub(crate) static DEF: RuleSetDef = RuleSetDef::new(
    &["numpy", "np", "cupy", "dask"],
    "NumPy >= 2 (NEP 50) with ml_dtypes; CuPy and Dask follow it",
    (
        |_, a, b| promote_types(a, b),
        |_, ops| result_type(ops),
        |_, op, ops| op_result(op, ops),
        |_| Some(lattice()),
        knows,
    ),
);

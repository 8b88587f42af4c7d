//! JAX's `jax.numpy` promotion (JAX 0.10): the standard and strict lattices of
//! `jax._src.dtypes._type_promotion_lattice`, with x64 on and off, and the semantics of
//! `jax.dtypes.result_type(*args, return_weak_type_flag=True)` and `jnp.promote_types`.

use std::sync::OnceLock;

use crate::dtype::DType::{self, *};
use crate::dtype::Kind;
use crate::error::{Error, Exception, Reason};
use crate::lattice::Lub;
use crate::operand::{Node, Operand, PyType, Value};
use crate::ops::{Op, OpRule, Outcome};
use crate::rules::compiled::{Compiled, NO_JOIN, edges};
use crate::rules::{Extended, OptionName, Options, Promotion, RuleSetDef};

const I_: Node = Node::Weak(PyType::Int);
const F_: Node = Node::Weak(PyType::Float);
const C_: Node = Node::Weak(PyType::Complex);

const fn d(t: DType) -> Node {
    Node::Dtype(t)
}

/// JAX's standard lattice, node → nodes directly above, as `_type_promotion_lattice` writes it.
const STANDARD: &[(Node, &[Node])] = &[
    (d(Bool), &[I_]),
    (
        I_,
        &[
            d(UInt8),
            d(UInt2),
            d(UInt4),
            d(Int8),
            d(Int2),
            d(Int4),
            d(Int1),
            d(UInt1),
        ],
    ),
    (d(UInt1), &[]),
    (d(UInt2), &[]),
    (d(UInt4), &[]),
    (d(UInt8), &[d(Int16), d(UInt16)]),
    (d(UInt16), &[d(Int32), d(UInt32)]),
    (d(UInt32), &[d(Int64), d(UInt64)]),
    (d(UInt64), &[F_]),
    (d(Int1), &[]),
    (d(Int2), &[]),
    (d(Int4), &[]),
    (d(Int8), &[d(Int16)]),
    (d(Int16), &[d(Int32)]),
    (d(Int32), &[d(Int64)]),
    (d(Int64), &[F_]),
    (
        F_,
        &[
            d(Float4E2M1Fn),
            d(Float6E2M3Fn),
            d(Float6E3M2Fn),
            d(Float8E3M4),
            d(Float8E4M3),
            d(Float8E8M0Fnu),
            d(Float8E4M3B11Fnuz),
            d(Float8E4M3Fn),
            d(Float8E4M3Fnuz),
            d(Float8E5M2),
            d(Float8E5M2Fnuz),
            d(BFloat16),
            d(Float16),
            C_,
        ],
    ),
    (d(Float4E2M1Fn), &[]),
    (d(Float6E2M3Fn), &[]),
    (d(Float6E3M2Fn), &[]),
    (d(Float8E3M4), &[]),
    (d(Float8E4M3), &[]),
    (d(Float8E8M0Fnu), &[]),
    (d(Float8E4M3B11Fnuz), &[]),
    (d(Float8E4M3Fn), &[]),
    (d(Float8E4M3Fnuz), &[]),
    (d(Float8E5M2), &[]),
    (d(Float8E5M2Fnuz), &[]),
    (d(BFloat16), &[d(Float32)]),
    (d(Float16), &[d(Float32)]),
    (d(Float32), &[d(Float64), d(Complex64)]),
    (d(Float64), &[d(Complex128)]),
    (C_, &[d(Complex64)]),
    (d(Complex64), &[d(Complex128)]),
    (d(Complex128), &[]),
];

/// With x64 off, JAX replaces uint32's edges so that uint32 × int32 does not form int64.
const X32_PATCH: &[(Node, &[Node])] = &[(d(UInt32), &[d(Int32), d(UInt64)])];

/// JAX's strict lattice: weak types reach every dtype of their kind and above; dtypes are
/// pairwise incomparable. (JAX builds it once, for x64 on and off alike.)
const STRICT: &[(Node, &[Node])] = &[
    (
        I_,
        &[
            F_,
            d(UInt1),
            d(UInt2),
            d(UInt4),
            d(UInt8),
            d(UInt16),
            d(UInt32),
            d(UInt64),
            d(Int1),
            d(Int2),
            d(Int4),
            d(Int8),
            d(Int16),
            d(Int32),
            d(Int64),
        ],
    ),
    (
        F_,
        &[
            C_,
            d(Float4E2M1Fn),
            d(Float6E2M3Fn),
            d(Float6E3M2Fn),
            d(Float8E3M4),
            d(Float8E4M3),
            d(Float8E8M0Fnu),
            d(Float8E4M3B11Fnuz),
            d(Float8E4M3Fn),
            d(Float8E4M3Fnuz),
            d(Float8E5M2),
            d(Float8E5M2Fnuz),
            d(BFloat16),
            d(Float16),
            d(Float32),
            d(Float64),
        ],
    ),
    (C_, &[d(Complex64), d(Complex128)]),
    (d(Bool), &[]),
];

/// `jax.numpy`'s ops after promotion (bool, unsigned, signed, float, complex); the refusals
/// come from the `lax` primitive each op lowers to.
pub(crate) const OPS: &[OpRule] = &[
    OpRule::kinds(
        Op::Subtract,
        [
            Outcome::Refuse(
                Exception::TypeError,
                "sub does not accept dtype bool at position 0. Accepted dtypes at position 0 \
                 are subtypes of integer, floating, complexfloating.",
            ),
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
        ],
    ),
    // `_dtype_to_inexact`: narrow integers divide in float32 even with x64 on.
    OpRule::integers_to(Op::TrueDivide, Outcome::To(Float32)).except(&[
        (Int64, Outcome::To(Float64)),
        (UInt64, Outcome::To(Float64)),
    ]),
    OpRule::kinds(
        Op::FloorDivide,
        [
            Outcome::To(Int32),
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
            Outcome::Refuse(
                Exception::TypeError,
                "floor_divide does not support complex-valued inputs",
            ),
        ],
    ),
    OpRule::kinds(
        Op::Power,
        [
            Outcome::To(Int32),
            Outcome::Strong,
            Outcome::Strong,
            Outcome::Same,
            Outcome::Same,
        ],
    )
    .except(SUB_BYTE_INT_POWER),
    OpRule::all(Op::Equal, Outcome::WeakBool),
    OpRule::all(Op::Less, Outcome::WeakBool),
    OpRule::all(Op::LogicalAnd, Outcome::Bool),
    OpRule::kinds(
        Op::BitwiseAnd,
        [
            Outcome::Same,
            Outcome::Same,
            Outcome::Same,
            AND_REFUSES,
            AND_REFUSES,
        ],
    ),
];

/// `jnp.power` looks sub-byte integers up with `iinfo`, which fails on their NumPy kind.
const SUB_BYTE_INT_POWER: &[(DType, Outcome)] = &[
    (Int1, INVALID_INT),
    (Int2, INVALID_INT),
    (Int4, INVALID_INT),
    (UInt1, INVALID_INT),
    (UInt2, INVALID_INT),
    (UInt4, INVALID_INT),
];

const INVALID_INT: Outcome =
    Outcome::Refuse(Exception::ValueError, "Invalid integer data type 'V'.");

const AND_REFUSES: Outcome = Outcome::Refuse(
    Exception::TypeError,
    "and does not accept dtype {dtype} at position 0. Accepted dtypes at position 0 are \
     subtypes of integer, bool.",
);

/// Dtypes JAX does not know (the model's PyTorch-only complex dtypes).
const NOT_IN_JAX: &[DType] = &[Complex32, BComplex32];

/// The compiled lattices of the three modes (built once per process, in microseconds).
struct Lattices {
    standard_x32: Compiled,
    standard_x64: Compiled,
    strict: Compiled,
}

/// The compiled lattice for a mode.
#[inline(always)]
pub(crate) fn lattice(opts: Options) -> &'static Compiled {
    static LATTICES: OnceLock<Lattices> = OnceLock::new();
    let l = LATTICES.get_or_init(|| Lattices {
        standard_x32: Compiled::new(definition(Options::default())),
        standard_x64: Compiled::new(definition(Options {
            x64: true,
            ..Options::default()
        })),
        strict: Compiled::new(definition(Options {
            strict: true,
            ..Options::default()
        })),
    });
    match (opts.strict, opts.x64) {
        (true, _) => &l.strict,
        (false, true) => &l.standard_x64,
        (false, false) => &l.standard_x32,
    }
}

/// The lattice definition of a mode as "node → nodes directly above".
pub fn definition(opts: Options) -> Vec<(Node, Vec<Node>)> {
    match (opts.strict, opts.x64) {
        (true, _) => edges(STRICT, &[]),
        (false, true) => edges(STANDARD, &[]),
        (false, false) => edges(STANDARD, X32_PATCH),
    }
}

/// [`NOT_IN_JAX`] as a lookup table by [`DType::index`].
const KNOWN: [bool; DType::COUNT] = {
    let mut table = [true; DType::COUNT];
    let mut k = 0;
    while k < NOT_IN_JAX.len() {
        table[NOT_IN_JAX[k] as usize] = false;
        k += 1;
    }
    table
};

/// `canonicalize_dtype`: 64-bit dtypes become 32-bit when x64 is off.
#[inline]
pub(crate) fn canonicalize(dtype: DType, x64: bool) -> DType {
    dtype.canonicalize(x64)
}

/// The dtype JAX gives a value of a Python scalar type (`int` → int32 when x64 is off).
#[inline]
pub(crate) fn python_scalar_dtype(t: PyType, x64: bool) -> DType {
    canonicalize(t.default_dtype(), x64)
}

#[inline]
pub(crate) fn check_known(dtype: DType) -> Result<DType, Error> {
    if KNOWN[dtype.index()] {
        Ok(dtype)
    } else {
        Err(unknown_to_jax(dtype))
    }
}

#[cold]
fn unknown_to_jax(dtype: DType) -> Error {
    Error::refused(
        Exception::TypeError,
        format!(
            "dtype {dtype} is not a valid dtype for JAX type promotion (rules jax): JAX has no \
             {dtype}"
        ),
    )
}

/// `_dtype_and_weaktype`: an operand's (canonical dtype, weak flag) in JAX.
#[inline]
pub(crate) fn dtype_and_weak(op: &Operand, x64: bool) -> Result<(DType, bool), Error> {
    Ok(match *op {
        Operand::Array { dtype, weak } => (canonicalize(check_known(dtype)?, x64), weak),
        Operand::Scalar { dtype, .. } => (canonicalize(check_known(dtype)?, x64), false),
        Operand::PyType(t) => (python_scalar_dtype(t, x64), true),
        Operand::Literal(Value::Bool(_)) => (Bool, false),
        Operand::Literal(v) => {
            let t = v.py_type().expect("non-bool literal");
            (python_scalar_dtype(t, x64), true)
        }
    })
}

/// The dtype of a lattice node as JAX's `dtype()` returns it for a promotion result.
#[inline]
fn node_dtype(n: Node, x64: bool) -> DType {
    match n {
        Node::Dtype(d) => canonicalize(d, x64),
        Node::Weak(t) => python_scalar_dtype(t, x64),
    }
}

/// `default_types[kind]`: the dtype a weak result is reported as. JAX looks the default up by
/// NumPy's `dtype.kind`, which is `'V'` for ml_dtypes' 1-, 2- and 4-bit integers, so a weak
/// result of one of those fails in JAX 0.10 with `KeyError: 'V'`; the model reproduces that.
#[inline]
fn default_of_kind(dtype: DType, x64: bool) -> Result<DType, Error> {
    let wide = match dtype.kind() {
        _ if dtype.is_sub_byte_int() => return Err(Error::refused(Exception::KeyError, "'V'")),
        Kind::Bool => Bool,
        Kind::UnsignedInt => UInt64,
        Kind::SignedInt => Int64,
        Kind::Float => Float64,
        Kind::Complex => Complex128,
        Kind::Extended | Kind::Void => return Ok(dtype),
    };
    Ok(canonicalize(wide, x64))
}

/// `repr(str(node))` as Python prints it inside a tuple: `'int8'`, `"<class 'int'>"`.
fn python_repr(n: Node) -> String {
    match n {
        Node::Dtype(d) => format!("'{d}'"),
        Node::Weak(t) => format!("\"<class '{t}'>\""),
    }
}

/// `_least_upper_bound`'s error for nodes without a least upper bound, with JAX's wording.
fn no_promotion_path(nodes: &[Node], strict: bool) -> Error {
    let listed: Vec<String> = nodes.iter().map(|&n| python_repr(n)).collect();
    let tuple = if listed.len() == 1 {
        format!("({},)", listed[0])
    } else {
        format!("({})", listed.join(", "))
    };
    let prefix = format!("Input dtypes {tuple} have no available implicit dtype promotion path");
    let has = |pred: fn(DType) -> bool| {
        nodes
            .iter()
            .any(|n| matches!(n, Node::Dtype(d) if pred(*d)))
    };
    let small_float = |bits: u32| {
        format!(
            "{prefix}. To avoid unintended promotion, {bits}-bit floats do not support implicit \
             promotion. If you'd like your inputs to be promoted to another type, you can do so \
             explicitly using e.g. x.astype('float32')"
        )
    };
    let message = if strict {
        format!(
            "{prefix} when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to \
             the desired output type, or set jax_numpy_dtype_promotion=standard."
        )
    } else if has(|d| d.is_small_float() && d.bits() == 8) {
        small_float(8)
    } else if has(|d| d.is_small_float() && d.bits() == 6) {
        small_float(6)
    } else if has(|d| d.is_small_float() && d.bits() == 4) {
        small_float(4)
    } else if has(DType::is_sub_byte_int) {
        format!(
            "{prefix}. To avoid unintended promotion, 1-bit, 2-bit and 4-bit integers do not \
             support implicit promotion. If you'd like your inputs to be promoted to another \
             type, you can do so explicitly using e.g. x.astype('int32')"
        )
    } else {
        format!("{prefix}. Try explicitly casting inputs to the desired output type.")
    };
    Error::refused(Exception::TypePromotionError, message)
}

fn ambiguous(nodes: &[Node], options: &[Node]) -> Error {
    let list = |ns: &[Node]| {
        ns.iter()
            .map(|&n| python_repr(n))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Error::refused(
        Exception::TypePromotionError,
        format!(
            "Internal Type Promotion error: ({}) do not have a unique least upper bound on the \
             specified lattice; options are {{{}}}. This is an unexpected error in JAX's \
             internal logic; please report it to the JAX maintainers.",
            list(nodes),
            list(options)
        ),
    )
}

/// `_least_upper_bound` over a list of nodes (duplicates allowed; the message lists them as
/// given, as JAX does).
fn least_upper_bound(c: &Compiled, nodes: &[Node], strict: bool) -> Result<Node, Error> {
    match c.lattice.lub(nodes) {
        Some(Lub::Node(i)) => Ok(*c.lattice.node(i)),
        Some(Lub::Ambiguous(options)) => {
            let options: Vec<Node> = options.iter().map(|&i| *c.lattice.node(i)).collect();
            Err(ambiguous(nodes, &options))
        }
        Some(Lub::Undefined) | None => Err(no_promotion_path(nodes, strict)),
    }
}

/// `jnp.promote_types(a, b)`: the join of two nodes, without canonicalisation; a weak
/// result is NumPy's dtype for the Python type (`int` → int64). The fast path is one table
/// lookup; refusals take the cold path, which builds JAX's message.
#[inline(always)]
pub(crate) fn promote_types(opts: Options, a: Node, b: Node) -> Result<DType, Error> {
    let r = lattice(opts).promote[a.index()][b.index()];
    if r != NO_JOIN {
        Ok(DType::ALL[r as usize])
    } else {
        promote_types_refused(opts, a, b)
    }
}

#[cold]
#[inline(never)]
fn promote_types_refused(opts: Options, a: Node, b: Node) -> Result<DType, Error> {
    for n in [a, b] {
        if let Node::Dtype(t) = n {
            check_known(t)?;
        }
    }
    Ok(
        match least_upper_bound(lattice(opts), &[a, b], opts.strict)? {
            Node::Dtype(t) => t,
            Node::Weak(t) => t.default_dtype(),
        },
    )
}

/// The slow path of [`result_type`]: JAX passes the *set* of nodes to `_least_upper_bound`,
/// so deduplicate them in order, then let the engine decide (or word the refusal).
#[cold]
#[inline(never)]
fn lub_of_operands(opts: Options, operands: &[Operand], weak_case: bool) -> Result<Node, Error> {
    let c = lattice(opts);
    let mut nodes: Vec<Node> = Vec::with_capacity(operands.len());
    for op in operands {
        let (d, w) = dtype_and_weak(op, opts.x64)?;
        let n = if weak_case {
            Node::Dtype(d)
        } else {
            Node::from_index(c.jax_type_index(d, w))
        };
        if !nodes.contains(&n) {
            nodes.push(n);
        }
    }
    least_upper_bound(c, &nodes, opts.strict)
}

/// `jax.dtypes.result_type(*operands, return_weak_type_flag=True)`.
#[inline]
pub(crate) fn result_type(opts: Options, operands: &[Operand]) -> Result<Promotion, Error> {
    let p = lattice_result_type(opts, operands)?;
    Ok(if p.weak_type {
        Promotion {
            dtype: default_of_kind(p.dtype, opts.x64)?,
            weak_type: true,
        }
    } else {
        p
    })
}

/// `dtypes.lattice_result_type`: what JAX's ops promote their operands to. A weak result
/// keeps the joined dtype (`~float32` with `~float32` stays float32 with x64 on), where
/// `result_type` reports the default dtype of its kind.
#[inline]
pub(crate) fn lattice_result_type(opts: Options, operands: &[Operand]) -> Result<Promotion, Error> {
    let x64 = opts.x64;
    let c = lattice(opts);
    let (first, rest) = operands
        .split_first()
        .ok_or_else(|| Error::from(Reason::EmptyOperands))?;
    let (d0, w0) = dtype_and_weak(first, x64)?;
    let (mut all_same, mut all_weak) = (true, w0);
    // Fold both candidate joins in one pass: over `_jax_type`s (the general case) and over
    // the dtypes themselves (the all-weak case joins the strong counterparts).
    let mut mixed = c.jax_type_index(d0, w0) as u8;
    let mut strong = d0.index() as u8;
    for op in rest {
        let (d, w) = dtype_and_weak(op, x64)?;
        all_same &= d == d0;
        all_weak &= w;
        mixed = c.step(mixed, c.jax_type_index(d, w));
        strong = c.step(strong, d.index());
    }
    let (out_dtype, out_weak) = if rest.is_empty() {
        (d0, w0)
    } else if all_same && !all_weak {
        // The trivial case: one dtype, at least one strong operand.
        (d0, false)
    } else {
        // All weak (standard mode): join the strong counterparts, the result stays weak.
        let weak_case = all_weak && !opts.strict;
        let code = if weak_case { strong } else { mixed };
        let r = if code != NO_JOIN {
            Node::from_index(code as usize)
        } else {
            lub_of_operands(opts, operands, weak_case)?
        };
        (node_dtype(r, x64), weak_case || matches!(r, Node::Weak(_)))
    };
    Ok(Promotion {
        dtype: out_dtype,
        weak_type: out_dtype != Bool && out_weak,
    })
}

/// The names of `jax.numpy`'s op's two parameters, as its jitted argument parsing reports them.
fn parameter_names(op: Op) -> [&'static str; 2] {
    match op {
        Op::TrueDivide | Op::FloorDivide | Op::Power => ["x1", "x2"],
        _ => ["x", "y"],
    }
}

/// A Python int operand outside the default int dtype (int32 with x64 off, int64 with x64 on):
/// `jax.numpy`'s ops are jitted, and parsing such an argument raises `OverflowError` (the first
/// operand first). `jnp.result_type` itself does not raise.
fn check_python_ints(opts: Options, op: Op, operands: &[Operand]) -> Result<(), Error> {
    let (lo, hi) = canonicalize(Int64, opts.x64)
        .int_range()
        .expect("an integer dtype");
    for (name, operand) in parameter_names(op).into_iter().zip(operands) {
        if let Operand::Literal(Value::Int(v)) = *operand
            && !(lo..=hi).contains(&v)
        {
            return Err(Error::refused(
                Exception::OverflowError,
                format!(
                    "An overflow was encountered while parsing an argument to a jitted \
                     computation, whose argument path is {name}. Got <class 'int'> with value {v}"
                ),
            ));
        }
    }
    Ok(())
}

/// The result of `jax.numpy`'s `op` on `operands`.
pub(crate) fn op_result(opts: Options, op: Op, operands: &[Operand]) -> Result<Promotion, Error> {
    if op == Op::Power
        && let [base, exponent] = operands
        && let Some(p) = power_shortcut(opts, base, exponent)?
    {
        return Ok(p);
    }
    check_python_ints(opts, op, operands)?;
    let promoted = lattice_result_type(opts, operands)?;
    let default_float = canonicalize(Float64, opts.x64);
    let mut result = crate::ops::rule_for(OPS, op).apply(promoted, default_float, &[])?;
    if op == Op::FloorDivide && result.weak_type && opts.x64 {
        // `jnp.floor_divide` corrects its quotient with the Python scalar 1, which re-promotes
        // a weak 32-bit result with x64 on: int32 becomes int64, float32 trips `lax.select`.
        match result.dtype {
            Int32 => result.dtype = Int64,
            Float32 => {
                return Err(Error::refused(
                    Exception::TypeError,
                    "lax.select requires arguments to have the same dtypes, got float32, float64.",
                ));
            }
            _ => {}
        }
    }
    if op == Op::LogicalAnd {
        // `jnp.logical_and` converts each operand to bool on its own: a Python scalar becomes
        // a weak bool, an array a strong one.
        result.weak_type = operands.iter().all(|o| {
            matches!(o, Operand::PyType(_))
                || matches!(o, Operand::Literal(v) if v.py_type().is_some())
        });
    }
    Ok(result)
}

/// `jnp.power`'s two paths around promotion: a Python int exponent runs `integer_pow` on the
/// base alone (bool becomes the default int), and an inexact base with an integer array
/// exponent keeps the base's dtype (weak only if both are). `None`: the general path.
/// (`promote_dtypes_numeric` turns bool into int32 even with x64 on.)
fn power_shortcut(
    opts: Options,
    base: &Operand,
    exponent: &Operand,
) -> Result<Option<Promotion>, Error> {
    let python_int = matches!(
        exponent,
        Operand::Literal(Value::Int(_)) | Operand::PyType(PyType::Int)
    );
    if python_int {
        // `lax.integer_pow(base, exponent)`: the exponent is static, the base a Python int
        // only within a C long (as JAX 0.10 converts it: up to 2^64 - 1) ...
        if let Operand::Literal(Value::Int(v)) = *base
            && !(i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(&v)
        {
            return Err(Error::refused(
                Exception::OverflowError,
                "Python int too large to convert to C long",
            ));
        }
        let b = lattice_result_type(opts, std::slice::from_ref(base))?;
        let b = if b.dtype == Bool {
            Promotion {
                dtype: Int32,
                weak_type: false,
            }
        } else {
            b
        };
        // ... and an integer base takes no negative exponent. The base's aval: a Python scalar
        // or zero-dimensional array has shape `[]`, an array the fixtures' `[2]`.
        if let Operand::Literal(Value::Int(e)) = *exponent
            && e < 0
            && b.dtype.kind().is_integer()
        {
            let shape = match base {
                Operand::Array { .. } => "[2]",
                _ => "[]",
            };
            return Err(Error::refused(
                Exception::TypeError,
                format!(
                    "Integers cannot be raised to negative powers, got integer_pow({}{}{shape}, {e})",
                    if b.weak_type { "~" } else { "" },
                    b.dtype
                ),
            ));
        }
        return Ok(Some(b));
    }
    check_python_ints(opts, Op::Power, &[*base, *exponent])?;
    let b = lattice_result_type(opts, std::slice::from_ref(base))?;
    // The operands are still promoted together first (its refusals stand).
    lattice_result_type(opts, &[*base, *exponent])?;
    let (e, e_weak) = dtype_and_weak(exponent, opts.x64)?;
    let inexact = matches!(b.dtype.kind(), Kind::Float | Kind::Complex);
    Ok((inexact && e.kind().is_integer()).then_some(Promotion {
        dtype: b.dtype,
        weak_type: b.weak_type && e_weak,
    }))
}

/// The rule set's row in the registry.
pub(crate) static DEF: RuleSetDef = RuleSetDef {
    options: &[OptionName::Strict, OptionName::X64],
    extended: Extended::Jax,
    promoted: lattice_result_type,
    promote_table: Some(|o| &lattice(o).promote),
    ..RuleSetDef::new(
        &["jax", "jax-numpy", "jnp"],
        "jax.numpy (JAX 0.10): the promotion lattice with weak types",
        (
            promote_types,
            result_type,
            op_result,
            |o| Some(&lattice(o).lattice),
            |d| check_known(d).is_ok(),
        ),
    )
};

//! `jax.numpy`'s elementwise functions as data: one row per function ([`Ufunc`]), and one
//! dispatch ([`Ufunc::call`]) in which the rules in force choose, once, how it resolves:
//!
//! - **JAX's rules** (XLA's CPU backend): two arrays of one aval go straight to the function's
//!   primitive (`same_aval`: they promote to themselves); else XLA's rewrite of the call, if
//!   the row has one (the algebraic simplifier's, which changes values: `convert(p) * a` ⇒
//!   `select(p, a, 0)`, [`super::simplify`]); else the function's composition (`jnp`'s:
//!   promotion, then the `lax` primitives).
//! - **NumPy's rules** (NumPy's loops, with ml_dtypes): the row's step before the loop, if any
//!   (a comparison with a Python int beyond an integer dtype); then the loop NumPy picks for
//!   the row's ufunc ([`super::ml::through_loop`]): operands not already of their loop's
//!   dtypes are cast to them and computed by the row's `in_loop` (default: the function again,
//!   on the cast operands); operands already of their loop's dtypes are computed by NumPy's
//!   own kernel where the row has one (`kernel`: where NumPy's loop computes otherwise than
//!   the primitive: float32 in float64, libm's functions, NumPy's divmod), else by the
//!   composition.
//!
//! Adding a function is one row of [`ufuncs!`]: its composition, its primitive, the steps
//! each semantics adds. The registry of `eval` ([`super::FUNCTIONS`]) lists every row.

use dtype_lattice::ufunc::Loop;
use dtype_lattice::{DType, Error, Kind, Op, Value};

use super::{ArrayLike, Family, ml, rules};
use crate::array::Array;
use crate::config::is_numpy;
use crate::core::Primitive;
use crate::lax;

/// A function's composition: what `jnp` computes (promotion, then `lax`), given its row.
#[derive(Clone, Copy)]
pub enum Compose {
    /// One operand.
    Unary(for<'a> fn(&'static Ufunc, ArrayLike<'a>) -> Result<Array, Error>),
    /// Two operands.
    Binary(for<'a> fn(&'static Ufunc, ArrayLike<'a>, ArrayLike<'a>) -> Result<Array, Error>),
}

/// A step a semantics may take instead of the composition (`None`: it does not apply).
pub(crate) type Step = for<'a> fn(&'static Ufunc, &[ArrayLike<'a>]) -> Option<Result<Array, Error>>;

/// What NumPy's loop computes on its cast operands.
pub(crate) type InLoop = fn(&'static Ufunc, Vec<ArrayLike<'static>>, &Loop) -> Result<Array, Error>;

/// One elementwise `jax.numpy` function: its composition and the steps each semantics adds
/// (see the module doc).
pub struct Ufunc {
    /// `jax.numpy`'s name (`abs`, `true_divide`).
    pub name: &'static str,
    /// NumPy's ufunc, whose loop computes it under NumPy's rules (`absolute`, `rint`).
    pub(crate) ufunc: &'static str,
    pub(crate) compose: Compose,
    /// The `lax` primitive the composition binds, where it binds one.
    pub(crate) prim: Option<&'static Primitive>,
    /// The primitive for bool operands where `jnp` substitutes one (`add` is `or`).
    pub(crate) on_bool: Option<&'static Primitive>,
    /// The operation whose promotion checks the composition applies (`dtype_lattice::Op`).
    pub(crate) op: Option<Op>,
    /// JAX: two arrays of one aval go straight to `prim`.
    pub(crate) same_aval: bool,
    /// JAX: XLA's rewrite of the call, tried before the composition.
    pub(crate) xla: Option<Step>,
    /// NumPy: tried before the loop.
    pub(crate) before_loop: Option<Step>,
    /// NumPy: the loop's computation on cast operands (default: the function again).
    pub(crate) in_loop: Option<InLoop>,
    /// NumPy: NumPy's own kernel on operands of the loop's dtypes.
    pub(crate) kernel: Option<Step>,
}

impl std::fmt::Debug for Ufunc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ufunc({})", self.name)
    }
}

impl Ufunc {
    const fn new(name: &'static str, compose: Compose) -> Ufunc {
        Ufunc {
            name,
            ufunc: name,
            compose,
            prim: None,
            on_bool: None,
            op: None,
            same_aval: false,
            xla: None,
            before_loop: None,
            in_loop: None,
            kernel: None,
        }
    }

    const fn unary(
        name: &'static str,
        f: for<'a> fn(&'static Ufunc, ArrayLike<'a>) -> Result<Array, Error>,
    ) -> Ufunc {
        Ufunc::new(name, Compose::Unary(f))
    }

    const fn binary(
        name: &'static str,
        f: for<'a> fn(&'static Ufunc, ArrayLike<'a>, ArrayLike<'a>) -> Result<Array, Error>,
    ) -> Ufunc {
        Ufunc::new(name, Compose::Binary(f))
    }

    const fn ufunc(mut self, ufunc: &'static str) -> Ufunc {
        self.ufunc = ufunc;
        self
    }

    const fn prim(mut self, prim: &'static Primitive) -> Ufunc {
        self.prim = Some(prim);
        self
    }

    const fn on_bool(mut self, prim: &'static Primitive) -> Ufunc {
        self.on_bool = Some(prim);
        self
    }

    const fn op(mut self, op: Op) -> Ufunc {
        self.op = Some(op);
        self
    }

    const fn same_aval(mut self) -> Ufunc {
        self.same_aval = true;
        self
    }

    const fn xla(mut self, step: Step) -> Ufunc {
        self.xla = Some(step);
        self
    }

    const fn before_loop(mut self, step: Step) -> Ufunc {
        self.before_loop = Some(step);
        self
    }

    const fn in_loop(mut self, f: InLoop) -> Ufunc {
        self.in_loop = Some(f);
        self
    }

    const fn kernel(mut self, step: Step) -> Ufunc {
        self.kernel = Some(step);
        self
    }

    /// How many operands it takes.
    pub fn arity(&self) -> usize {
        match self.compose {
            Compose::Unary(_) => 1,
            Compose::Binary(_) => 2,
        }
    }

    /// The function on `args` (as many as its arity), under the rules in force.
    ///
    /// # Errors
    ///
    /// The function's refusals (promotion, shapes, dtypes), with JAX's or NumPy's exception
    /// class and message.
    pub fn call(&'static self, args: Vec<ArrayLike<'_>>) -> Result<Array, Error> {
        if is_numpy(&rules()) {
            self.numpy(args)
        } else {
            self.jax(args)
        }
    }

    /// [`Ufunc::call`] on operands by value: two arrays of one aval under JAX's rules go to
    /// the primitive before any allocation (an 8-element add is dominated by its dispatch).
    pub(crate) fn call_args<const N: usize>(
        &'static self,
        args: [ArrayLike<'_>; N],
    ) -> Result<Array, Error> {
        if self.same_aval
            && let (Some(p), [x, y]) = (self.prim, args.as_slice())
            && let Some((a, b)) = super::same_operands(x, y)
        {
            return lax::bind_same_aval(p, a, b);
        }
        self.call(Vec::from(args))
    }

    /// JAX's rules: the primitive at once for two arrays of one aval, XLA's rewrite, or the
    /// composition.
    fn jax(&'static self, args: Vec<ArrayLike<'_>>) -> Result<Array, Error> {
        if self.same_aval
            && let (Some(p), [x, y]) = (self.prim, args.as_slice())
            && let Some((a, b)) = super::same_operands(x, y)
        {
            return lax::bind_same_aval(p, a, b);
        }
        if let Some(r) = self.xla.and_then(|step| step(self, &args)) {
            return r;
        }
        self.compose(args)
    }

    /// NumPy's rules: the step before the loop, the loop, NumPy's kernel, or the
    /// composition.
    fn numpy(&'static self, args: Vec<ArrayLike<'_>>) -> Result<Array, Error> {
        if let Some(r) = self.before_loop.and_then(|step| step(self, &args)) {
            return r;
        }
        if let Some(r) = ml::through_loop(self.ufunc, &args, |v, l| match self.in_loop {
            Some(f) => f(self, v, l),
            None => self.call(v),
        }) {
            return r;
        }
        if let Some(r) = self.kernel.and_then(|step| step(self, &args)) {
            return r;
        }
        self.compose(args)
    }

    /// The composition.
    pub(crate) fn compose(&'static self, args: Vec<ArrayLike<'_>>) -> Result<Array, Error> {
        let mut it = args.into_iter();
        let mut next = || it.next().unwrap_or(ArrayLike::Scalar(Value::Int(0)));
        match self.compose {
            Compose::Unary(f) => f(self, next()),
            Compose::Binary(f) => {
                let x = next();
                f(self, x, next())
            }
        }
    }

    /// The row's primitive (every row whose composition binds one has it).
    pub(crate) fn primitive(&self) -> Result<&'static Primitive, Error> {
        self.prim.ok_or_else(|| {
            Error::refused(
                dtype_lattice::error::Exception::NotImplementedError,
                format!("{} binds no single primitive", self.name),
            )
        })
    }
}

// ---- steps

/// NumPy's float32 loop of a binary ufunc on two float32 arrays keeps subnormals (the
/// primitives read them as zeros and flush results, as XLA does): the function on the values
/// in float64, where float32's subnormals are normal numbers, rounded back once (`round`).
/// Exact for the comparisons, `maximum` and `minimum`; correctly rounded for `add`,
/// `subtract`, `multiply`, `true_divide` and `remainder` (one operation each: float64 holds
/// 2·24 + 2 bits); `power` within an ulp of `powf`.
fn float32_in_float64(
    u: &'static Ufunc,
    args: &[ArrayLike<'_>],
    round: bool,
) -> Option<Result<Array, Error>> {
    let [x, y] = args else { return None };
    let (a, b) = (x.as_array()?, y.as_array()?);
    if a.dtype() != DType::Float32 || b.dtype() != DType::Float32 {
        return None;
    }
    Some((|| {
        let r = u.call(vec![
            ArrayLike::Owned(a.astype(DType::Float64)?),
            ArrayLike::Owned(b.astype(DType::Float64)?),
        ])?;
        if round {
            r.astype(DType::Float32)
        } else {
            Ok(r)
        }
    })())
}

/// [`float32_in_float64`] rounded back to float32 (arithmetic, `maximum`, `minimum`).
fn float32_rounded(u: &'static Ufunc, args: &[ArrayLike<'_>]) -> Option<Result<Array, Error>> {
    float32_in_float64(u, args, true)
}

/// [`float32_in_float64`] of a comparison (bool results).
fn float32_compared(u: &'static Ufunc, args: &[ArrayLike<'_>]) -> Option<Result<Array, Error>> {
    float32_in_float64(u, args, false)
}

/// NumPy's own binary loop where it computes otherwise than the composition
/// (`npmath::binary`: NumPy's divmod).
fn numpy_binary(u: &'static Ufunc, args: &[ArrayLike<'_>]) -> Option<Result<Array, Error>> {
    let [x, y] = args else { return None };
    super::npmath::binary(u.ufunc, x.as_array()?, y.as_array()?)
}

/// The binary functions' kernel: NumPy's own loop where it computes otherwise
/// ([`numpy_binary`]: divmod, `maximum`/`minimum`'s zero signs), else float32 in float64,
/// rounded back.
fn binary_rounded(u: &'static Ufunc, args: &[ArrayLike<'_>]) -> Option<Result<Array, Error>> {
    numpy_binary(u, args).or_else(|| float32_rounded(u, args))
}

/// [`binary_rounded`] for the comparisons (bool results).
fn binary_compared(u: &'static Ufunc, args: &[ArrayLike<'_>]) -> Option<Result<Array, Error>> {
    numpy_binary(u, args).or_else(|| float32_compared(u, args))
}

/// NumPy's own unary loop (`npmath::unary`: libm's functions, glibc-style complex ones) on
/// the operand promoted into `family` as the composition promotes it.
fn numpy_unary_in(
    u: &'static Ufunc,
    args: &[ArrayLike<'_>],
    family: Family,
) -> Option<Result<Array, Error>> {
    let [x] = args else { return None };
    let x = match super::functions::one(x.clone(), family) {
        Ok(x) => x,
        Err(e) => return Some(Err(e)),
    };
    super::npmath::unary(u.ufunc, &x)
}

/// [`numpy_unary_in`] for the functions computing in the inexact family.
fn numpy_unary_inexact(u: &'static Ufunc, args: &[ArrayLike<'_>]) -> Option<Result<Array, Error>> {
    numpy_unary_in(u, args, Family::Inexact)
}

/// [`numpy_unary_in`] for `sign` (no promotion but to an array).
fn numpy_unary_any(u: &'static Ufunc, args: &[ArrayLike<'_>]) -> Option<Result<Array, Error>> {
    numpy_unary_in(u, args, Family::Any)
}

/// `floor`, `ceil`, `rint` (round): integers and booleans are the composition's (unchanged),
/// floats NumPy's kernel.
fn numpy_rounding(u: &'static Ufunc, args: &[ArrayLike<'_>]) -> Option<Result<Array, Error>> {
    let [x] = args else { return None };
    let a = match super::functions::arraylike(x.clone()) {
        Ok(a) => a,
        Err(e) => return Some(Err(e)),
    };
    if super::functions::is_integral_or_bool(a.dtype()) {
        return None;
    }
    numpy_unary_inexact(u, args)
}

/// `reciprocal`: NumPy's integer loops keep the dtype (`1 / x` converted back); floats
/// NumPy's kernel.
fn numpy_reciprocal(u: &'static Ufunc, args: &[ArrayLike<'_>]) -> Option<Result<Array, Error>> {
    let [x] = args else { return None };
    let a = match super::functions::arraylike(x.clone()) {
        Ok(a) => a,
        Err(e) => return Some(Err(e)),
    };
    if a.dtype().kind().is_integer() {
        return Some(super::npmath::integer_reciprocal(&a));
    }
    numpy_unary_inexact(u, &[ArrayLike::Owned(a)])
}

/// NumPy's comparison of an array of its integers with a Python int beyond their range: the
/// same answer for every element (the int compares exactly, as its sign decides).
fn beyond_integers(u: &'static Ufunc, args: &[ArrayLike<'_>]) -> Option<Result<Array, Error>> {
    let [x, y] = args else { return None };
    // `array OP int`, the int's operand flipped to the right.
    let order = Order::of(u.name)?;
    let (a, v, order) = match (x, y) {
        (a, ArrayLike::Scalar(Value::Int(v))) => (a.as_array()?, *v, order),
        (ArrayLike::Scalar(Value::Int(v)), a) => (a.as_array()?, *v, order.flipped()),
        _ => return None,
    };
    let t = a.dtype();
    if !t.kind().is_integer() || ml::is_ml(t) {
        return None;
    }
    let (min, max) = t.int_range()?;
    if (min..=max).contains(&v) {
        return None;
    }
    // Every element is below the int (it is above the range) or above it.
    let below = v > max;
    let answer = match order {
        Order::Eq => false,
        Order::Ne => true,
        Order::Lt | Order::Le => below,
        Order::Gt | Order::Ge => !below,
    };
    Some(super::full(a.shape(), Value::Bool(answer), DType::Bool))
}

/// A comparison's order.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Order {
    fn of(name: &str) -> Option<Order> {
        Some(match name {
            "equal" => Order::Eq,
            "not_equal" => Order::Ne,
            "less" => Order::Lt,
            "less_equal" => Order::Le,
            "greater" => Order::Gt,
            "greater_equal" => Order::Ge,
            _ => return None,
        })
    }

    /// The order of `y OP x` for `x OP y`.
    fn flipped(self) -> Order {
        match self {
            Order::Lt => Order::Gt,
            Order::Le => Order::Ge,
            Order::Gt => Order::Lt,
            Order::Ge => Order::Le,
            o => o,
        }
    }
}

/// `maximum`/`minimum` in an ml_dtypes loop: ml_dtypes' own (`isnan(a) || a > b ? a : b`) on
/// its float32 values; NumPy's own loops compute the function again.
fn extremum_in_loop(
    u: &'static Ufunc,
    v: Vec<ArrayLike<'static>>,
    l: &Loop,
) -> Result<Array, Error> {
    if !l.ml_dtypes {
        return u.call(v);
    }
    let (a, b) = ml::two(v);
    let (a, b) = (
        super::functions::arraylike(a)?,
        super::functions::arraylike(b)?,
    );
    let beyond = if std::ptr::eq(u, &MAXIMUM) {
        GREATER.call(vec![(&a).into(), (&b).into()])?
    } else {
        LESS.call(vec![(&a).into(), (&b).into()])?
    };
    let take = LOGICAL_OR.call(vec![ISNAN.call(vec![(&a).into()])?.into(), beyond.into()])?;
    super::functions::r#where(take, &a, &b)
}

/// `floor_divide`/`remainder` in an ml_dtypes float loop: NumPy's divmod on ml_dtypes'
/// values; other loops compute the function again.
fn divmod_in_loop(u: &'static Ufunc, v: Vec<ArrayLike<'static>>, l: &Loop) -> Result<Array, Error> {
    if !(l.ml_dtypes && l.output.kind() == Kind::Float) {
        return u.call(v);
    }
    let (a, b) = ml::two(v);
    super::npmath::ml_divmod(
        &super::functions::arraylike(a)?,
        &super::functions::arraylike(b)?,
        std::ptr::eq(u, &FLOOR_DIVIDE),
    )
}

/// `sign` in an ml_dtypes loop: ml_dtypes' sign keeps a zero's sign and a NaN;
/// float8_e8m0fnu's zero, T(0), is its smallest value 2⁻¹²⁷, which it keeps too.
fn sign_in_loop(u: &'static Ufunc, v: Vec<ArrayLike<'static>>, l: &Loop) -> Result<Array, Error> {
    let a = super::functions::arraylike(ml::one(v))?;
    if l.ml_dtypes && a.dtype() == DType::Float64 {
        let zero = if l.output == DType::Float8E8M0Fnu {
            f64::powi(2.0, -127)
        } else {
            0.0
        };
        let keep = LOGICAL_OR.call(vec![
            EQUAL.call(vec![(&a).into(), zero.into()])?.into(),
            ISNAN.call(vec![(&a).into()])?.into(),
        ])?;
        return super::functions::r#where(keep, &a, u.call(vec![(&a).into()])?);
    }
    u.call(vec![a.into()])
}

/// `round`: NumPy's round keeps its own integers (and Python ints) as they are; booleans and
/// ml_dtypes' integers, which it does not count as integers, go through `rint`.
fn round_builtin_int(_: &'static Ufunc, args: &[ArrayLike<'_>]) -> Option<Result<Array, Error>> {
    let [x] = args else { return None };
    super::compositions::builtin_int(x).then(|| super::functions::arraylike(x.clone()))
}

// ---- the table

/// Every row, and a public function per row.
macro_rules! ufuncs {
    ($($(#[$doc:meta])* $c:ident, $f:ident($($arg:ident),+) = $row:expr;)*) => {
        $(
            #[doc = concat!("The row of `jnp.", stringify!($f), "`.")]
            pub(crate) static $c: Ufunc = $row;

            $(#[$doc])*
            ///
            /// # Errors
            ///
            /// JAX's (or NumPy's) refusals: a promotion the rules refuse (`TypePromotionError`
            /// in strict mode), a Python int out of range (`OverflowError`), shapes that do not
            /// broadcast (`ValueError`), a dtype the primitive does not accept (`TypeError`).
            pub fn $f<'a>($($arg: impl Into<ArrayLike<'a>>),+) -> Result<Array, Error> {
                $c.call_args([$($arg.into()),+])
            }
        )*

        /// Every elementwise function, one row each.
        pub static UFUNCS: &[&Ufunc] = &[$(&$c,)*];
    };
}

use super::compositions as F;
use super::compositions as O;

ufuncs! {
    /// `jnp.add(x, y)`, `x + y`.
    ADD, add(x, y) = Ufunc::binary("add", O::binary).prim(&lax::ADD).on_bool(&lax::OR)
        .op(Op::Add).same_aval().kernel(binary_rounded);
    /// `jnp.subtract(x, y)`, `x - y`.
    SUBTRACT, subtract(x, y) = Ufunc::binary("subtract", O::binary).prim(&lax::SUB)
        .op(Op::Subtract).same_aval().kernel(binary_rounded);
    /// `jnp.multiply(x, y)`, `x * y`.
    MULTIPLY, multiply(x, y) = Ufunc::binary("multiply", O::binary).prim(&lax::MUL)
        .on_bool(&lax::AND).op(Op::Multiply).same_aval().xla(super::simplify::product_of_bool)
        .kernel(binary_rounded);
    /// `jnp.maximum(x, y)` (NaN propagates).
    MAXIMUM, maximum(x, y) = Ufunc::binary("maximum", O::binary).prim(&lax::MAX).op(Op::Add)
        .same_aval().in_loop(extremum_in_loop).kernel(binary_rounded);
    /// `jnp.minimum(x, y)` (NaN propagates).
    MINIMUM, minimum(x, y) = Ufunc::binary("minimum", O::binary).prim(&lax::MIN).op(Op::Add)
        .same_aval().in_loop(extremum_in_loop).kernel(binary_rounded);
    /// `jnp.equal(x, y)`, `x == y`.
    EQUAL, equal(x, y) = Ufunc::binary("equal", O::binary).prim(&lax::EQ).op(Op::Equal)
        .same_aval().before_loop(beyond_integers).kernel(binary_compared);
    /// `jnp.not_equal(x, y)`, `x != y`.
    NOT_EQUAL, not_equal(x, y) = Ufunc::binary("not_equal", O::binary).prim(&lax::NE)
        .op(Op::Equal).same_aval().before_loop(beyond_integers).kernel(binary_compared);
    /// `jnp.less(x, y)`, `x < y`.
    LESS, less(x, y) = Ufunc::binary("less", O::binary).prim(&lax::LT).op(Op::Less)
        .same_aval().before_loop(beyond_integers).kernel(binary_compared);
    /// `jnp.less_equal(x, y)`, `x <= y`.
    LESS_EQUAL, less_equal(x, y) = Ufunc::binary("less_equal", O::binary).prim(&lax::LE)
        .op(Op::Less).same_aval().before_loop(beyond_integers).kernel(binary_compared);
    /// `jnp.greater(x, y)`, `x > y`.
    GREATER, greater(x, y) = Ufunc::binary("greater", O::binary).prim(&lax::GT).op(Op::Less)
        .same_aval().before_loop(beyond_integers).kernel(binary_compared);
    /// `jnp.greater_equal(x, y)`, `x >= y`.
    GREATER_EQUAL, greater_equal(x, y) = Ufunc::binary("greater_equal", O::binary)
        .prim(&lax::GE).op(Op::Less).same_aval().before_loop(beyond_integers)
        .kernel(binary_compared);
    /// `jnp.true_divide(x, y)` (`/`): integers divide as the default float.
    TRUE_DIVIDE, true_divide(x, y) = Ufunc::binary("true_divide", F::true_divide)
        .xla(super::simplify::quotient_of_bool).kernel(float32_rounded);
    /// `jnp.divide(x, y)`, the same as [`true_divide`].
    DIVIDE, divide(x, y) = Ufunc::binary("divide", F::true_divide).ufunc("true_divide")
        .xla(super::simplify::quotient_of_bool).kernel(float32_rounded);
    /// `jnp.floor_divide(x, y)` (`//`): rounds toward negative infinity.
    FLOOR_DIVIDE, floor_divide(x, y) = Ufunc::binary("floor_divide", F::floor_divide)
        .in_loop(divmod_in_loop).kernel(numpy_binary);
    /// `jnp.remainder(x, y)` (`%`): the remainder with the divisor's sign.
    REMAINDER, remainder(x, y) = Ufunc::binary("remainder", F::remainder)
        .in_loop(divmod_in_loop).kernel(binary_rounded);
    /// `jnp.power(x, y)` (`**`): an integer exponent known now (a Python int, or a 0-d integer
    /// array) is `integer_pow`; integers raise by repeated squaring; floats use `pow`.
    POWER, power(x, y) = Ufunc::binary("power", F::power).kernel(float32_rounded);
    /// `jnp.arctan2(x, y)`.
    ARCTAN2, arctan2(x, y) = Ufunc::binary("arctan2", F::arctan2).prim(&lax::ATAN2);
    /// `jnp.bitwise_and(x, y)` (`&`).
    BITWISE_AND, bitwise_and(x, y) = Ufunc::binary("bitwise_and", F::bitwise)
        .prim(&lax::AND).op(Op::BitwiseAnd);
    /// `jnp.bitwise_or(x, y)` (`|`).
    BITWISE_OR, bitwise_or(x, y) = Ufunc::binary("bitwise_or", F::bitwise).prim(&lax::OR)
        .op(Op::BitwiseAnd);
    /// `jnp.bitwise_xor(x, y)` (`^`).
    BITWISE_XOR, bitwise_xor(x, y) = Ufunc::binary("bitwise_xor", F::bitwise)
        .prim(&lax::XOR).op(Op::BitwiseAnd);
    /// `jnp.left_shift(x, y)` (`<<`).
    LEFT_SHIFT, left_shift(x, y) = Ufunc::binary("left_shift", F::left_shift)
        .prim(&lax::SHIFT_LEFT).op(Op::BitwiseAnd);
    /// `jnp.right_shift(x, y)` (`>>`): logical for unsigned integers, arithmetic otherwise.
    /// jnp asks NumPy's `np.issubdtype(x.dtype, np.unsignedinteger)`, under which ml_dtypes'
    /// uint1/uint2/uint4 are no unsigned integers (their scalar types derive from
    /// `np.generic` only): they shift arithmetically, `uint2(3) >> 1` is 3.
    RIGHT_SHIFT, right_shift(x, y) = Ufunc::binary("right_shift", F::right_shift)
        .op(Op::BitwiseAnd);
    /// `jnp.logical_and(x, y)` (the result weak only when both operands are Python scalars,
    /// as JAX answers).
    LOGICAL_AND, logical_and(x, y) = Ufunc::binary("logical_and", F::logical)
        .prim(&lax::AND);
    /// `jnp.logical_or(x, y)`.
    LOGICAL_OR, logical_or(x, y) = Ufunc::binary("logical_or", F::logical).prim(&lax::OR);
    /// `jnp.logical_xor(x, y)`.
    LOGICAL_XOR, logical_xor(x, y) = Ufunc::binary("logical_xor", F::logical)
        .prim(&lax::XOR);
    /// `jnp.negative(x)`, `-x`.
    NEGATIVE, negative(x) = Ufunc::unary("negative", O::negative).prim(&lax::NEG);
    /// `jnp.positive(x)` (`+x`): `x` promoted.
    POSITIVE, positive(x) = Ufunc::unary("positive", F::positive);
    /// `jnp.abs(x)`: booleans and unsigned integers unchanged; complex gives its float.
    ABS, abs(x) = Ufunc::unary("abs", F::abs).ufunc("absolute").prim(&lax::ABS);
    /// `jnp.sign(x)`.
    SIGN, sign(x) = Ufunc::unary("sign", F::sign).prim(&lax::SIGN).in_loop(sign_in_loop)
        .kernel(numpy_unary_any);
    /// `jnp.floor(x)`: integers and booleans unchanged.
    FLOOR, floor(x) = Ufunc::unary("floor", F::integers_kept).prim(&lax::FLOOR)
        .kernel(numpy_rounding);
    /// `jnp.ceil(x)`: integers and booleans unchanged.
    CEIL, ceil(x) = Ufunc::unary("ceil", F::integers_kept).prim(&lax::CEIL)
        .kernel(numpy_rounding);
    /// `jnp.round(x)`: half to even; integers unchanged; complex rounds both parts.
    ROUND, round(x) = Ufunc::unary("round", F::round).ufunc("rint").prim(&lax::ROUND)
        .before_loop(round_builtin_int).kernel(numpy_rounding);
    /// `jnp.trunc(x)`: toward zero; integers and booleans unchanged.
    TRUNC, trunc(x) = Ufunc::unary("trunc", F::trunc);
    /// `jnp.sqrt(x)`.
    SQRT, sqrt(x) = Ufunc::unary("sqrt", F::inexact).prim(&lax::SQRT)
        .kernel(numpy_unary_inexact);
    /// `jnp.square(x)`: booleans square as the default integer.
    SQUARE, square(x) = Ufunc::unary("square", F::square).prim(&lax::SQUARE);
    /// `jnp.reciprocal(x)`: `integer_pow(x, -1)` in the promoted float dtype (under the NumPy
    /// rules NumPy's loops: integers keep their dtype, `1 / x` converted back).
    RECIPROCAL, reciprocal(x) = Ufunc::unary("reciprocal", F::reciprocal)
        .kernel(numpy_reciprocal);
    /// `jnp.exp(x)`.
    EXP, exp(x) = Ufunc::unary("exp", F::inexact).prim(&lax::EXP).kernel(numpy_unary_inexact);
    /// `jnp.exp2(x)`.
    EXP2, exp2(x) = Ufunc::unary("exp2", F::inexact).prim(&lax::EXP2)
        .kernel(numpy_unary_inexact);
    /// `jnp.expm1(x)`.
    EXPM1, expm1(x) = Ufunc::unary("expm1", F::inexact).prim(&lax::EXPM1)
        .kernel(numpy_unary_inexact);
    /// `jnp.log(x)`.
    LOG, log(x) = Ufunc::unary("log", F::inexact).prim(&lax::LOG).kernel(numpy_unary_inexact);
    /// `jnp.log2(x)`: `log(x) / log(2)` in the promoted float dtype.
    LOG2, log2(x) = Ufunc::unary("log2", F::log2).kernel(numpy_unary_inexact);
    /// `jnp.log1p(x)`.
    LOG1P, log1p(x) = Ufunc::unary("log1p", F::inexact).prim(&lax::LOG1P)
        .kernel(numpy_unary_inexact);
    /// `jnp.sin(x)`.
    SIN, sin(x) = Ufunc::unary("sin", F::inexact).prim(&lax::SIN).kernel(numpy_unary_inexact);
    /// `jnp.cos(x)`.
    COS, cos(x) = Ufunc::unary("cos", F::inexact).prim(&lax::COS).kernel(numpy_unary_inexact);
    /// `jnp.tan(x)`.
    TAN, tan(x) = Ufunc::unary("tan", F::inexact).prim(&lax::TAN).kernel(numpy_unary_inexact);
    /// `jnp.tanh(x)`.
    TANH, tanh(x) = Ufunc::unary("tanh", F::inexact).prim(&lax::TANH)
        .kernel(numpy_unary_inexact);
    /// `jnp.arcsin(x)`.
    ARCSIN, arcsin(x) = Ufunc::unary("arcsin", F::inexact).prim(&lax::ASIN)
        .kernel(numpy_unary_inexact);
    /// `jnp.arctan(x)`.
    ARCTAN, arctan(x) = Ufunc::unary("arctan", F::inexact).prim(&lax::ATAN)
        .kernel(numpy_unary_inexact);
    /// `jnp.sinh(x)`.
    SINH, sinh(x) = Ufunc::unary("sinh", F::inexact).prim(&lax::SINH)
        .kernel(numpy_unary_inexact);
    /// `jnp.cosh(x)`.
    COSH, cosh(x) = Ufunc::unary("cosh", F::inexact).prim(&lax::COSH)
        .kernel(numpy_unary_inexact);
    /// `jnp.isnan(x)`: `x != x`.
    ISNAN, isnan(x) = Ufunc::unary("isnan", F::isnan);
    /// `jnp.isinf(x)`.
    ISINF, isinf(x) = Ufunc::unary("isinf", F::isinf);
    /// `jnp.isfinite(x)`.
    ISFINITE, isfinite(x) = Ufunc::unary("isfinite", F::isfinite);
    /// `jnp.logical_not(x)`.
    LOGICAL_NOT, logical_not(x) = Ufunc::unary("logical_not", F::logical_not);
    /// `jnp.invert(x)` (`~x`): bitwise not.
    INVERT, invert(x) = Ufunc::unary("invert", F::invert).prim(&lax::NOT);
}

/// The row of a `jax.numpy` elementwise function name.
pub(crate) fn ufunc(name: &str) -> Option<&'static Ufunc> {
    UFUNCS.iter().copied().find(|u| u.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_arities_match_the_compositions() {
        for (i, u) in UFUNCS.iter().enumerate() {
            assert!(UFUNCS[..i].iter().all(|v| v.name != u.name), "{}", u.name);
            // A row that goes straight to its primitive names one.
            assert!(!u.same_aval || u.prim.is_some(), "{}", u.name);
        }
        assert_eq!(ufunc("arctan2").map(Ufunc::arity), Some(2));
        assert_eq!(ufunc("abs").map(|u| u.ufunc), Some("absolute"));
    }
}

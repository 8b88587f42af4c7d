//! `conv_general_dilated`, as JAX 0.10.2 defines, prints and computes it
//! (`jax/_src/lax/convolution.py`, XLA's convolution semantics): the left operand's windows
//! (after padding, negative padding cropping, and `lhs_dilation` holes), spaced by
//! `window_strides`, contracted with the kernel (its taps spaced by `rhs_dilation`) over the
//! input features; `feature_group_count` splits the features into groups each convolved with
//! its slice of the kernel's output features, `batch_group_count` splits the batch likewise;
//! `dimension_numbers` (JAX's `ConvDimensionNumbers`, a typed
//! [`Param::ConvDimensionNumbers`], or its text as the reader keeps it) say where the batch,
//! feature and spatial dimensions of each operand and of the result lie.
//!
//! Parameters, in the order jaxprs print them (all printed): `batch_group_count`,
//! `dimension_numbers`, `feature_group_count`, `lhs_dilation`, `out_sharding`, `padding`
//! (`(low, high)` pairs, [`Param::Pairs`]; `'SAME'` and `'VALID'` arrive resolved),
//! `precision` (kept, not modelled: XLA's CPU backend computes float32 at full precision
//! whatever it asks), `preferred_element_type`, `rhs_dilation`, `window_strides`.
//!
//! Rules: JAX's shape rule (its `ValueError`s and `TypeError`s, in its order), its dtype rule
//! (one dtype for both operands; `preferred_element_type` integral or floating for integers,
//! floating for floats, complex for complex, never narrower, signed for signed), the CPU
//! implementation, the JVP (bilinear, JAX's `ad.defbilinear`), the transposes in either
//! operand (JAX's `_conv_general_dilated_transpose_lhs`/`_rhs`: convolutions of the
//! cotangent with the reversed kernel, or of the left operand with the cotangent, with
//! swapped dimension numbers, the padding of `_conv_general_vjp_lhs_padding`/`_rhs_padding`,
//! and feature and batch groups exchanged) and JAX's batching rule (the batch folded into the
//! batch or feature dimension, or into the groups, by reshapes).
//!
//! The implementation converts both operands to the result dtype (XLA converts them for a
//! `preferred_element_type`), transposes them to one of the two layouts of
//! `kernels::conv` (`[batch, spatial…, feature]` and `[window…, in, out]`; or, for a left
//! operand whose batch is its innermost dimension, as a kernel gradient's is,
//! `[feature, spatial…, batch]` and `[in, window…, out]`: no transpose of NHWC operands
//! either way), and multiplies patches of the input by the kernel (im2col by blocks, on
//! rayon's pool): float32 and float64 through the `gemm` crate, subnormal operands and
//! results flushed to zero as XLA's CPU backend computes; float16, bfloat16 and the 8-bit
//! floats in float32, rounded once at the end (as XLA computes them); integers and bools
//! exactly (integers wrap, bools are the OR of ANDs); complex numbers as XLA's CPU lowering
//! computes them, by Gauss's three real convolutions (`k1 = conv(re x + im x, re w)`, `k2 =
//! conv(re x, im w − re w)`, `k3 = conv(im x, re w + im w)`, the result `(k1 − k3) + i(k1 +
//! k2)`).
//!
//! Accumulation order: each float result element is the sum of its products over window
//! positions (row-major) then input features (or input features then window positions, for
//! the batch-inner layout), in chunks of at most 4096 terms, each chunk summed by the matrix
//! product (`kernels::gemm`: in order with fused multiply-adds for products of at most 2¹²
//! multiply-adds, `gemm`'s blocked kernels above) and the chunks' sums added in order. XLA's
//! CPU backend sums in its own order (Eigen's spatial convolution for float32), so float
//! results may differ from JAX's by rounding, within a few ulps of the result's largest
//! magnitude (the corpus's rule). In the fixtures, most small float32, float64, float16,
//! bfloat16 and complex convolutions agree bit for bit; those with a long contraction or an
//! lhs dilation, and the gradients, differ in the last bits of some elements. Integer and
//! bool results are exact.

use dtype_lattice::{DType, Error, Kind};

use super::structural::{py_ints, type_error, value_error};
use super::{Avals, Outputs, Param, Params, Primitive, ad, bind1};
use crate::array::{Array, ShapedArray, Storage, element_bytes, py_shape};
use crate::core::{BatchDims, Lin};
use crate::kernels::conv::{Geometry, Layout, conv, matmul_wrapping};

/// The `conv_general_dilated` primitive.
pub static CONV_GENERAL_DILATED: Primitive =
    Primitive::new("conv_general_dilated", Some(2), shape_rule, impl_rule)
        .jvp(jvp)
        .transpose(transpose)
        .batch(batch);

const NAME: &str = "conv_general_dilated";

/// `dimension_numbers`: each spec's dimensions (batch or output feature, feature or input
/// feature, spatial…).
#[derive(Clone, Debug, PartialEq)]
struct Dn {
    lhs: Vec<usize>,
    rhs: Vec<usize>,
    out: Vec<usize>,
}

impl Dn {
    fn param(&self) -> Param {
        let v = |s: &[usize]| s.iter().map(|&d| d as i64).collect();
        Param::ConvDimensionNumbers {
            lhs_spec: v(&self.lhs),
            rhs_spec: v(&self.rhs),
            out_spec: v(&self.out),
        }
    }

    /// The spatial dimensions of a spec.
    fn sdims(spec: &[usize]) -> &[usize] {
        spec.get(2..).unwrap_or_default()
    }

    /// A spec with its first two dimensions swapped (JAX's `_conv_spec_transpose`).
    fn swapped(spec: &[usize]) -> Vec<usize> {
        let mut s = spec.to_vec();
        if s.len() >= 2 {
            s.swap(0, 1);
        }
        s
    }
}

/// The integers of `key=(…)` in JAX's text of `ConvDimensionNumbers(…)`.
fn spec_of(text: &str, key: &str) -> Option<Vec<i64>> {
    let start = text.find(&format!("{key}=("))? + key.len() + 2;
    let end = start + text[start..].find(')')?;
    text[start..end]
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().ok())
        .collect()
}

/// The dimension numbers of `params` (typed, or JAX's text as the reader keeps it), each
/// spec's entries non-negative.
fn dnums(params: &Params) -> Result<Dn, Error> {
    let bad = || super::bad_param(NAME, "dimension_numbers", "not ConvDimensionNumbers");
    let (l, r, o) = match params.require(NAME, "dimension_numbers")? {
        Param::ConvDimensionNumbers {
            lhs_spec,
            rhs_spec,
            out_spec,
        } => (lhs_spec.clone(), rhs_spec.clone(), out_spec.clone()),
        Param::Name(text) if text.starts_with("ConvDimensionNumbers(") => (
            spec_of(text, "lhs_spec").ok_or_else(bad)?,
            spec_of(text, "rhs_spec").ok_or_else(bad)?,
            spec_of(text, "out_spec").ok_or_else(bad)?,
        ),
        _ => return Err(bad()),
    };
    let u = |v: Vec<i64>| -> Result<Vec<usize>, Error> {
        v.into_iter()
            .map(|d| usize::try_from(d).map_err(|_| bad()))
            .collect()
    };
    Ok(Dn {
        lhs: u(l)?,
        rhs: u(r)?,
        out: u(o)?,
    })
}

/// A convolution's parameters.
#[derive(Clone, Debug)]
struct Conv {
    dn: Dn,
    strides: Vec<i64>,
    padding: Vec<(i64, i64)>,
    lhs_dilation: Vec<i64>,
    rhs_dilation: Vec<i64>,
    feature_groups: i64,
    batch_groups: i64,
    /// `precision`, as given.
    precision: Param,
    /// `preferred_element_type`, as given.
    preferred: Param,
}

impl Conv {
    fn of(params: &Params) -> Result<Conv, Error> {
        let ints = |name: &str| super::structural::param_ints(params, NAME, name);
        let int = |name: &str| super::structural::param_int(params, NAME, name);
        let padding = match params.require(NAME, "padding")? {
            Param::Pairs(p) => p.clone(),
            Param::Ints(v) if v.is_empty() => Vec::new(),
            _ => {
                return Err(super::bad_param(
                    NAME,
                    "padding",
                    "not a tuple of (low, high) pairs",
                ));
            }
        };
        let preferred = params
            .get("preferred_element_type")
            .cloned()
            .unwrap_or(Param::None);
        if !matches!(preferred, Param::None | Param::DType(_)) {
            return Err(super::bad_param(
                NAME,
                "preferred_element_type",
                "not a dtype or None",
            ));
        }
        Ok(Conv {
            dn: dnums(params)?,
            strides: ints("window_strides")?,
            padding,
            lhs_dilation: ints("lhs_dilation")?,
            rhs_dilation: ints("rhs_dilation")?,
            feature_groups: int("feature_group_count")?,
            batch_groups: int("batch_group_count")?,
            precision: params.get("precision").cloned().unwrap_or(Param::None),
            preferred,
        })
    }

    /// The parameters, in the order jaxprs print them.
    fn params(&self) -> Params {
        Params::new()
            .with("batch_group_count", Param::Int(self.batch_groups))
            .with("dimension_numbers", self.dn.param())
            .with("feature_group_count", Param::Int(self.feature_groups))
            .with("lhs_dilation", Param::Ints(self.lhs_dilation.clone()))
            .with("out_sharding", Param::None)
            .with("padding", Param::Pairs(self.padding.clone()))
            .with("precision", self.precision.clone())
            .with("preferred_element_type", self.preferred.clone())
            .with("rhs_dilation", Param::Ints(self.rhs_dilation.clone()))
            .with("window_strides", Param::Ints(self.strides.clone()))
    }

    fn preferred(&self) -> Option<DType> {
        match self.preferred {
            Param::DType(d) => Some(d),
            _ => None,
        }
    }

    /// This convolution of `lhs` and `rhs`, bound.
    fn bind(&self, lhs: &Array, rhs: &Array) -> Result<Array, Error> {
        bind1(&CONV_GENERAL_DILATED, &[lhs, rhs], &self.params())
    }
}

// ---- shape and dtype rules

/// `core.dilate_dim`: `max(0, 1 + dilation·(d − 1))`.
fn dilate_dim(d: i128, dilation: i128) -> i128 {
    if dilation == 1 {
        d
    } else {
        (1 + dilation * (d - 1)).max(0)
    }
}

/// A dilated size as JAX's message prints it: a NumPy integer, or Python's `0` where
/// `max(…, 0)` chose the 0.
fn np_dim(d: i128, dilation: i128) -> String {
    if dilation != 1 && 1 + dilation * (d - 1) < 0 {
        "0".into()
    } else {
        format!("np.int64({})", dilate_dim(d, dilation))
    }
}

/// `lax._dilate_shape` of the spatial sizes, after its check.
fn dilated(shape: &[i128], dilation: &[i64], what: &str) -> Result<Vec<i128>, Error> {
    if dilation.iter().any(|&d| d <= 0) {
        return type_error(format!(
            "All dilations must be positive, got {}.",
            py_ints(dilation)
        ));
    }
    if dilation.len() != shape.len() {
        return type_error(format!(
            "conv_general_dilated {what} must have one entry per spatial dimension, got {} for \
             {} spatial dimensions",
            py_ints(dilation),
            shape.len()
        ));
    }
    Ok(shape
        .iter()
        .zip(dilation)
        .map(|(&s, &d)| dilate_dim(s, i128::from(d)))
        .collect())
}

/// Whether `spec` is a permutation of `0..n`.
fn is_permutation(spec: &[usize], n: usize) -> bool {
    let mut seen = vec![false; n];
    spec.len() == n
        && spec
            .iter()
            .all(|&d| d < n && !std::mem::replace(&mut seen[d], true))
}

/// The result's shape (JAX's `_conv_general_dilated_shape_rule` and `conv_shape_tuple`, their
/// refusals in their order).
fn out_shape(lhs: &[usize], rhs: &[usize], c: &Conv) -> Result<Vec<usize>, Error> {
    if lhs.len() != rhs.len() {
        return value_error(format!(
            "conv_general_dilated lhs and rhs must have the same number of dimensions, but got \
             {} and {}.",
            py_shape(lhs),
            py_shape(rhs)
        ));
    }
    let n = lhs.len();
    let dn = &c.dn;
    if n < 2
        || ![&dn.lhs, &dn.rhs, &dn.out]
            .iter()
            .all(|s| is_permutation(s, n))
    {
        return type_error(format!(
            "conv_general_dilated dimension_numbers must be permutations of the {n} dimensions \
             of lhs and rhs, got {}",
            dn.param()
        ));
    }
    let (fg, bg) = (i128::from(c.feature_groups), i128::from(c.batch_groups));
    if fg <= 0 {
        return value_error(format!(
            "conv_general_dilated feature_group_count must be a positive integer, got {fg}."
        ));
    }
    let lhs_features = lhs[dn.lhs[1]] as i128;
    if lhs_features % fg != 0 {
        return value_error(format!(
            "conv_general_dilated feature_group_count must divide lhs feature dimension size, \
             but {fg} does not divide {lhs_features}."
        ));
    }
    let rhs_in = rhs[dn.rhs[1]] as i128;
    if lhs_features / fg != rhs_in {
        return value_error(format!(
            "conv_general_dilated lhs feature dimension size divided by feature_group_count must \
             equal the rhs input feature dimension size, but {lhs_features} // {fg} != {rhs_in}."
        ));
    }
    let rhs_out = rhs[dn.rhs[0]] as i128;
    if rhs_out % fg != 0 {
        return value_error(format!(
            "conv_general_dilated rhs output feature dimension size must be a multiple of \
             feature_group_count, but {rhs_out} is not a multiple of {fg}."
        ));
    }
    if bg <= 0 {
        return value_error(format!(
            "conv_general_dilated batch_group_count must be a positive integer, got {bg}."
        ));
    }
    let lhs_batch = lhs[dn.lhs[0]] as i128;
    if bg > 1 && lhs_batch % bg != 0 {
        return value_error(format!(
            "conv_general_dilated batch_group_count must divide lhs batch dimension size, but \
             {bg} does not divide {lhs_batch}."
        ));
    }
    if rhs_out % bg != 0 {
        return value_error(format!(
            "conv_general_dilated rhs output feature dimension size must be a multiple of \
             batch_group_count, but {rhs_out} is not a multiple of {bg}."
        ));
    }
    if bg > 1 && fg > 1 {
        return value_error(format!(
            "At most one of batch_group_count and feature_group_count may be > 1, got \
             batch_group_count={bg} and feature_group_count={fg}"
        ));
    }
    let d = n - 2;
    if d != c.strides.len() {
        return value_error(format!(
            "conv_general_dilated window and window_strides must have the same number of \
             dimensions, but got {d} and {}",
            c.strides.len()
        ));
    }
    let spatial = |shape: &[usize], spec: &[usize]| -> Vec<i128> {
        Dn::sdims(spec).iter().map(|&i| shape[i] as i128).collect()
    };
    let lhs_s = spatial(lhs, &dn.lhs);
    let lhs_t = dilated(&lhs_s, &c.lhs_dilation, "lhs_dilation")?;
    let rhs_t = dilated(&spatial(rhs, &dn.rhs), &c.rhs_dilation, "rhs_dilation")?;
    if c.padding.len() != d {
        return type_error(format!(
            "Wrong number of explicit pads for convolution: expected {d}, got {}.",
            c.padding.len()
        ));
    }
    let padded: Vec<i128> = lhs_t
        .iter()
        .zip(&c.padding)
        .map(|(&s, &(lo, hi))| s + i128::from(lo) + i128::from(hi))
        .collect();
    if padded.iter().any(|&p| p < 0) {
        let dims: Vec<String> = lhs_s
            .iter()
            .zip(&c.lhs_dilation)
            .map(|(&s, &dl)| np_dim(s, i128::from(dl)))
            .collect();
        let dims = match dims.as_slice() {
            [one] => format!("({one},)"),
            _ => format!("({})", dims.join(", ")),
        };
        return value_error(format!(
            "Negative padding is larger than the size of the corresponding dimension: got \
             padding={} for lhs_shape[2:]={dims}",
            Param::Pairs(c.padding.clone())
        ));
    }
    // `core.stride_dim`: `max(0, (d − window) // stride + 1)`, NumPy's division (by zero: 0).
    let out_space = padded
        .iter()
        .zip(&rhs_t)
        .zip(&c.strides)
        .map(|((&p, &w), &s)| {
            let q = if s == 0 {
                0
            } else {
                (p - w).div_euclid(i128::from(s))
                    - i128::from(s < 0 && (p - w).rem_euclid(i128::from(s)) != 0)
            };
            (q + 1).max(0)
        });
    let out_batch = if bg > 1 { lhs_batch / bg } else { lhs_batch };
    let trans: Vec<i128> = [out_batch, rhs_out].into_iter().chain(out_space).collect();
    let mut shape = vec![0usize; n];
    for (j, &axis) in dn.out.iter().enumerate() {
        shape[axis] = usize::try_from(trans[j])
            .map_err(|_| crate::array::invalid(NAME, "a result too large"))?;
    }
    if crate::array::checked_size(&shape).is_none() {
        return Err(crate::array::invalid(NAME, "a result too large"));
    }
    Ok(shape)
}

/// Whether `d` is one of NumPy's integer dtypes (`np.integer`).
fn is_int(d: DType) -> bool {
    d.kind().is_integer()
}

/// The result dtype (JAX's `_conv_general_dilated_dtype_rule`).
fn out_dtype(l: DType, r: DType, preferred: Option<DType>) -> Result<DType, Error> {
    for (i, d) in [l, r].into_iter().enumerate() {
        if !matches!(
            d.kind(),
            Kind::Bool | Kind::SignedInt | Kind::UnsignedInt | Kind::Float | Kind::Complex
        ) {
            return type_error(format!(
                "{NAME} does not accept dtype {d} at position {i}. Accepted dtypes at position \
                 {i} are subtypes of integer, floating, complexfloating, bool_."
            ));
        }
    }
    if l != r {
        return type_error(format!(
            "lax.{NAME} requires arguments to have the same dtypes, got {l}, {r}."
        ));
    }
    let Some(p) = preferred else { return Ok(l) };
    // `lax._validate_preferred_element_type`.
    if !(is_int(l) && p.kind() == Kind::Float) {
        let classes = [
            |d: DType| is_int(d),
            |d: DType| d.kind() == Kind::Float,
            |d: DType| d.kind() == Kind::Complex,
        ];
        if classes.iter().any(|class| class(l) && !class(p)) {
            return type_error(
                "Input type is incompatible with `preferred_element_type`. The compatible \
                 combinations of (input_type, preferred_element_type) are (integral, integral), \
                 (integral, floating), (floating, floating), (complex, complex."
                    .into(),
            );
        }
        if l.kind() == Kind::SignedInt && p.kind() != Kind::SignedInt {
            return type_error(
                "`preferred_element_type` must have the same signedness as the original type."
                    .into(),
            );
        }
    }
    if element_bytes(p) < element_bytes(l) {
        return type_error(
            "`preferred_element_type` must not be narrower than the original type.".into(),
        );
    }
    Ok(p)
}

fn shape_rule(
    _prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Avals, Error> {
    let [lhs, rhs] = inputs else {
        return type_error(format!(
            "{NAME}() takes 2 positional arguments but {} were given",
            inputs.len()
        ));
    };
    let c = Conv::of(params)?;
    let shape = out_shape(lhs.shape(), rhs.shape(), &c)?;
    let dtype = out_dtype(lhs.dtype(), rhs.dtype(), c.preferred())?;
    Ok(smallvec::smallvec![ShapedArray::new(
        &shape,
        dtype,
        lhs.weak_type() && rhs.weak_type()
    )])
}

// ---- the implementation

fn impl_rule(
    _prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    avals: &[ShapedArray],
) -> Result<Outputs, Error> {
    let ([lhs, rhs], [out]) = (inputs, avals) else {
        return type_error(format!("{NAME} takes two operands and gives one result"));
    };
    let c = Conv::of(params)?;
    // XLA's verifier refuses what JAX's shape rule lets through.
    for (i, &s) in c.strides.iter().enumerate() {
        if s <= 0 {
            return value_error(format!(
                "Cannot lower jaxpr with verifier errors:\n\texpects window to have positive \
                 stride for {i}-th window dimension, but got {s}."
            ));
        }
    }
    for (i, &k) in Dn::sdims(&c.dn.rhs).iter().enumerate() {
        if rhs.shape().get(k) == Some(&0) {
            return value_error(format!(
                "Cannot lower jaxpr with verifier errors:\n\texpects window to have positive \
                 value for {i}-th window dimension, but got 0."
            ));
        }
    }
    super::structural::check_alloc(out)?;
    if out.size() == 0 {
        let empty = Array::from_bytes(out.dtype(), out.shape(), &[])?;
        return Ok(smallvec::smallvec![empty.with_weak_type(out.weak_type())]);
    }
    let y = compute(lhs, rhs, &c, out.dtype())?;
    if y.shape() != out.shape() || y.dtype() != out.dtype() {
        return Err(crate::array::invalid(NAME, "a result of another type"));
    }
    Ok(smallvec::smallvec![y.with_weak_type(out.weak_type())])
}

/// `x` as `dtype` (nothing done when it is).
fn as_dtype(x: &Array, dtype: DType) -> Result<Array, Error> {
    if x.dtype() == dtype {
        Ok(x.clone())
    } else {
        x.astype(dtype)
    }
}

/// The convolution of concrete operands into `dt` (the result dtype).
fn compute(lhs: &Array, rhs: &Array, c: &Conv, dt: DType) -> Result<Array, Error> {
    if dt.kind() == Kind::Complex {
        return gauss(lhs, rhs, c, dt);
    }
    let (l, r) = (as_dtype(lhs, dt)?, as_dtype(rhs, dt)?);
    match dt {
        DType::Float32 | DType::Float64 => real(&l, &r, c),
        _ if dt.kind() == Kind::Float => {
            let y = real(&l.astype(DType::Float32)?, &r.astype(DType::Float32)?, c)?;
            y.astype(dt)
        }
        _ => integral(&l, &r, c, dt),
    }
}

/// XLA's CPU lowering of a complex convolution: Gauss's three real convolutions, the
/// operands' parts combined in their own dtype, each convolution into the result's
/// component dtype.
fn gauss(lhs: &Array, rhs: &Array, c: &Conv, dt: DType) -> Result<Array, Error> {
    use super::ops;
    let part = |p: &'static Primitive, x: &Array| ops::unary(p, x);
    let (xr, xi) = (part(&super::REAL, lhs)?, part(&super::IMAG, lhs)?);
    let (yr, yi) = (part(&super::REAL, rhs)?, part(&super::IMAG, rhs)?);
    let comp = dt.component();
    let conv = |a: &Array, b: &Array| compute(a, b, c, comp);
    let k1 = conv(&ops::add(&xr, &xi)?, &yr)?;
    let k2 = conv(&xr, &ops::sub(&yi, &yr)?)?;
    let k3 = conv(&xi, &ops::add(&yr, &yi)?)?;
    let re = ops::sub(&k1, &k3)?;
    let im = ops::add(&k1, &k2)?;
    bind1(&super::COMPLEX, &[&re, &im], &Params::new())
}

/// The kernel's layout for a convolution of these dimension numbers and shapes: batch inner
/// where the left operand's batch dimension is its innermost and holds enough examples per
/// group for the products (a kernel gradient's, whose batch is the input's features), else
/// feature inner.
fn layout_of(dn: &Dn, lhs: &[usize], batch_groups: i64) -> Layout {
    let n = lhs.len();
    let per_group = lhs[dn.lhs[0]] / usize::try_from(batch_groups).unwrap_or(1).max(1);
    if n >= 2 && dn.lhs[0] == n - 1 && per_group >= 16 {
        Layout::BatchInner
    } else {
        Layout::FeatureInner
    }
}

/// The layouts' permutations (see `kernels::conv`): the left operand's and the kernel's to
/// the layout's, and the layout's result's to the result's.
fn layouts(dn: &Dn, layout: Layout) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let d = dn.lhs.len().saturating_sub(2);
    let (ls, rs, os) = (Dn::sdims(&dn.lhs), Dn::sdims(&dn.rhs), Dn::sdims(&dn.out));
    let mut op = vec![0usize; dn.out.len()];
    match layout {
        Layout::FeatureInner => {
            // [batch, spatial…, feature], [window…, in, out] → [batch, spatial…, out].
            let lp = [&[dn.lhs[0]][..], ls, &[dn.lhs[1]]].concat();
            let rp = [rs, &[dn.rhs[1], dn.rhs[0]]].concat();
            op[dn.out[0]] = 0;
            op[dn.out[1]] = d + 1;
            for (i, &a) in os.iter().enumerate() {
                op[a] = 1 + i;
            }
            (lp, rp, op)
        }
        Layout::BatchInner => {
            // [feature, spatial…, batch], [in, window…, out] → [spatial…, batch, out].
            let lp = [&[dn.lhs[1]][..], ls, &[dn.lhs[0]]].concat();
            let rp = [&[dn.rhs[1]][..], rs, &[dn.rhs[0]]].concat();
            op[dn.out[0]] = d;
            op[dn.out[1]] = d + 1;
            for (i, &a) in os.iter().enumerate() {
                op[a] = i;
            }
            (lp, rp, op)
        }
    }
}

/// The operands in the kernel's layout, its geometry and the shape of its result.
fn canonical(
    lhs: &Array,
    rhs: &Array,
    c: &Conv,
) -> Result<(Array, Array, Geometry, Vec<usize>), Error> {
    let dn = &c.dn;
    let layout = layout_of(dn, lhs.shape(), c.batch_groups);
    let (lp, rp, _) = layouts(dn, layout);
    let (ls, rs) = (lhs.shape(), rhs.shape());
    let d = ls.len() - 2;
    let pos = |v: &[i64]| -> Result<Vec<usize>, Error> {
        v.iter()
            .map(|&x| {
                usize::try_from(x)
                    .ok()
                    .filter(|&u| u > 0)
                    .ok_or_else(|| crate::array::invalid(NAME, "a non-positive stride"))
            })
            .collect()
    };
    let (n, features, out_features) = (ls[dn.lhs[0]], ls[dn.lhs[1]], rs[dn.rhs[0]]);
    let bg = c.batch_groups as usize;
    let spatial: Vec<usize> = Dn::sdims(&dn.lhs).iter().map(|&i| ls[i]).collect();
    let window: Vec<usize> = Dn::sdims(&dn.rhs).iter().map(|&i| rs[i]).collect();
    let strides = pos(&c.strides)?;
    let (lhs_dilation, rhs_dilation) = (pos(&c.lhs_dilation)?, pos(&c.rhs_dilation)?);
    let out_spatial: Vec<usize> = (0..d)
        .map(|i| {
            let dil = |s: usize, k: usize| if s == 0 { 0 } else { 1 + k * (s - 1) } as i128;
            let (lo, hi) = c.padding[i];
            let padded = dil(spatial[i], lhs_dilation[i]) + i128::from(lo) + i128::from(hi);
            let w = dil(window[i], rhs_dilation[i]);
            let o = if padded < w {
                0
            } else {
                (padded - w) / strides[i] as i128 + 1
            };
            o as usize
        })
        .collect();
    let shape: Vec<usize> = match layout {
        Layout::FeatureInner => [&[n / bg][..], &out_spatial, &[out_features]].concat(),
        Layout::BatchInner => [&out_spatial[..], &[n / bg, out_features]].concat(),
    };
    let g = Geometry {
        layout,
        batch: n,
        features,
        spatial,
        window,
        out_features,
        out_spatial,
        strides,
        pad_lo: c.padding.iter().map(|p| p.0).collect(),
        lhs_dilation,
        rhs_dilation,
        feature_groups: c.feature_groups as usize,
        batch_groups: bg,
    };
    let (l, r) = (ad::transpose(lhs, &lp)?, ad::transpose(rhs, &rp)?);
    Ok((l, r, g, shape))
}

/// The kernel's result put in the result's layout.
fn placed(y: Array, c: &Conv, layout: Layout) -> Result<Array, Error> {
    let (_, _, op) = layouts(&c.dn, layout);
    ad::transpose(&y, &op)
}

fn sizes_differ() -> Error {
    crate::array::invalid(NAME, "operands that do not fit the geometry")
}

/// `x` with subnormal elements as zeros of their sign (float32, float64), as XLA's CPU code
/// reads and writes them.
fn flushed(x: Array) -> Result<Array, Error> {
    use crate::kernels::flush::{any_subnormal, flush32, flush64};
    if !super::on_xla() || !any_subnormal(x.dtype(), x.as_bytes()) {
        return Ok(x);
    }
    match x.dtype() {
        DType::Float32 => {
            let v = x.as_slice::<f32>()?.iter().map(|&e| flush32(e)).collect();
            Array::from_shape_vec(x.shape(), v)
        }
        DType::Float64 => {
            let v = x.as_slice::<f64>()?.iter().map(|&e| flush64(e)).collect();
            Array::from_shape_vec(x.shape(), v)
        }
        _ => Ok(x),
    }
}

/// A float32 or float64 convolution, through `gemm`.
fn real(lhs: &Array, rhs: &Array, c: &Conv) -> Result<Array, Error> {
    let (l, r, g, shape) = canonical(lhs, rhs, c)?;
    let (l, r) = (flushed(l)?, flushed(r)?);
    let size = crate::array::checked_size(&shape).ok_or_else(sizes_differ)?;
    fn run<T>(l: &Array, r: &Array, g: &Geometry, size: usize) -> Result<Storage, Error>
    where
        T: crate::kernels::gemm::GemmScalar
            + crate::array::Element
            + bytemuck::Pod
            + std::ops::Add<Output = T>,
        T::Word: bytemuck::Pod,
    {
        let (a, b) = (l.as_slice::<T>()?, r.as_slice::<T>()?);
        let mm = |a: &[T], a_t: bool, b: &[T], mkn, out: &mut [T]| {
            crate::kernels::gemm::matmul((a, a_t), (b, false), mkn, out);
        };
        Storage::overwritten(size_of::<T>(), size, |bytes| {
            let out: &mut [T] = bytemuck::cast_slice_mut(bytes);
            if conv(g, a, b, out, &mm, |x, y| x + y) {
                Ok(())
            } else {
                Err(sizes_differ())
            }
        })
    }
    let data = match l.dtype() {
        DType::Float32 => run::<f32>(&l, &r, &g, size)?,
        DType::Float64 => run::<f64>(&l, &r, &g, size)?,
        d => {
            return Err(crate::array::invalid(
                NAME,
                format!("no float kernel for {d}"),
            ));
        }
    };
    let y = Array::from_parts(ShapedArray::new(&shape, l.dtype(), false), data);
    placed(flushed(y)?, c, g.layout)
}

/// The elements of an integer or bool array as `i64` (wrapping unsigned 64-bit ones: the
/// products' low bits are the same).
fn ints_of(x: &Array) -> Result<Vec<i64>, Error> {
    fn all<T: crate::array::Element>(x: &Array, f: fn(T) -> i64) -> Result<Vec<i64>, Error> {
        Ok(x.to_vec::<T>()?.into_iter().map(f).collect())
    }
    match x.dtype() {
        DType::Bool => all::<bool>(x, i64::from),
        DType::Int8 => all::<i8>(x, i64::from),
        DType::Int16 => all::<i16>(x, i64::from),
        DType::Int32 => all::<i32>(x, i64::from),
        DType::Int64 => all::<i64>(x, |v| v),
        DType::UInt8 => all::<u8>(x, i64::from),
        DType::UInt16 => all::<u16>(x, i64::from),
        DType::UInt32 => all::<u32>(x, i64::from),
        DType::UInt64 => all::<u64>(x, |v| v as i64),
        d if d.kind() == Kind::SignedInt => ints_of(&x.astype(DType::Int8)?),
        d if d.kind() == Kind::UnsignedInt => ints_of(&x.astype(DType::UInt8)?),
        d => Err(crate::array::invalid(NAME, format!("no kernel for {d}"))),
    }
}

/// An array of `dt` from wrapped `i64` results (bools: nonzero).
fn ints_to(v: Vec<i64>, shape: &[usize], dt: DType) -> Result<Array, Error> {
    fn all<T: crate::array::Element>(
        v: Vec<i64>,
        shape: &[usize],
        f: fn(i64) -> T,
    ) -> Result<Array, Error> {
        Array::from_shape_vec(shape, v.into_iter().map(f).collect())
    }
    match dt {
        DType::Bool => all(v, shape, |x| x != 0),
        DType::Int8 => all(v, shape, |x| x as i8),
        DType::Int16 => all(v, shape, |x| x as i16),
        DType::Int32 => all(v, shape, |x| x as i32),
        DType::Int64 => all(v, shape, |x| x),
        DType::UInt8 => all(v, shape, |x| x as u8),
        DType::UInt16 => all(v, shape, |x| x as u16),
        DType::UInt32 => all(v, shape, |x| x as u32),
        DType::UInt64 => all(v, shape, |x| x as u64),
        // The 2- and 4-bit integers: the low bits, through 8.
        d if d.kind() == Kind::SignedInt => all(v, shape, |x| x as i8)?.astype(d),
        d if d.kind() == Kind::UnsignedInt => all(v, shape, |x| x as u8)?.astype(d),
        d => Err(crate::array::invalid(NAME, format!("no kernel for {d}"))),
    }
}

/// An integer or bool convolution, exact (integers wrap; bools are the OR of ANDs).
fn integral(lhs: &Array, rhs: &Array, c: &Conv, dt: DType) -> Result<Array, Error> {
    let (l, r, g, shape) = canonical(lhs, rhs, c)?;
    let (a, b) = (ints_of(&l)?, ints_of(&r)?);
    let size = crate::array::checked_size(&shape).ok_or_else(sizes_differ)?;
    let mut out = vec![0i64; size];
    if !conv(&g, &a, &b, &mut out, &matmul_wrapping, i64::wrapping_add) {
        return Err(sizes_differ());
    }
    placed(ints_to(out, &shape, dt)?, c, g.layout)
}

// ---- differentiation

/// Bilinear (JAX's `ad.defbilinear`): the convolution of the left tangent with the kernel
/// plus that of the left operand with the kernel's tangent.
fn jvp(
    prim: &'static Primitive,
    primals: &[Array],
    tangents: &[Option<Array>],
    params: &Params,
) -> Result<(Outputs, Vec<Option<Array>>), Error> {
    let out = ad::primal_out(prim, primals, params)?;
    let [lhs, rhs] = primals else {
        return type_error(format!("{NAME} takes two operands"));
    };
    let a = match tangents.first().cloned().flatten() {
        Some(t) => Some(bind1(prim, &[&t, rhs], params)?),
        None => None,
    };
    let b = match tangents.get(1).cloned().flatten() {
        Some(t) => Some(bind1(prim, &[lhs, &t], params)?),
        None => None,
    };
    let t = ad::fit(ad::plus(a, b)?, &out[0])?;
    Ok((out, vec![t]))
}

/// A shape's entries at `dims`, as `i128`.
fn take(shape: &[usize], dims: &[usize]) -> Vec<i128> {
    dims.iter().map(|&d| shape[d] as i128).collect()
}

/// `lax._dilate_shape` of sizes already checked.
fn dilate_all(shape: &[i128], dilation: &[i64]) -> Vec<i128> {
    shape
        .iter()
        .zip(dilation)
        .map(|(&s, &d)| dilate_dim(s, i128::from(d)))
        .collect()
}

fn pad_pair(lo: i128, hi: i128) -> Result<(i64, i64), Error> {
    match (i64::try_from(lo), i64::try_from(hi)) {
        (Ok(l), Ok(h)) => Ok((l, h)),
        _ => Err(crate::array::invalid(NAME, "padding out of range")),
    }
}

/// JAX's `_conv_general_vjp_lhs_padding`.
fn vjp_lhs_padding(
    in_shape: &[i128],
    window: &[i128],
    strides: &[i64],
    out_shape: &[i128],
    padding: &[(i64, i64)],
    lhs_dilation: &[i64],
    rhs_dilation: &[i64],
) -> Result<Vec<(i64, i64)>, Error> {
    let ld = dilate_all(in_shape, lhs_dilation);
    let rd = dilate_all(window, rhs_dilation);
    let od = dilate_all(out_shape, strides);
    (0..in_shape.len())
        .map(|i| {
            let before = rd[i] - i128::from(padding[i].0) - 1;
            let after = ld[i] + rd[i] - 1 - od[i] - before;
            pad_pair(before, after)
        })
        .collect()
}

/// JAX's `_conv_general_vjp_rhs_padding`.
fn vjp_rhs_padding(
    in_shape: &[i128],
    window: &[i128],
    strides: &[i64],
    out_shape: &[i128],
    padding: &[(i64, i64)],
    lhs_dilation: &[i64],
    rhs_dilation: &[i64],
) -> Result<Vec<(i64, i64)>, Error> {
    let ld = dilate_all(in_shape, lhs_dilation);
    let rd = dilate_all(window, rhs_dilation);
    let od = dilate_all(out_shape, strides);
    (0..in_shape.len())
        .map(|i| {
            let lo = i128::from(padding[i].0);
            let hi = (od[i] - ld[i]) + (rd[i] - lo - 1);
            pad_pair(lo, hi)
        })
        .collect()
}

/// JAX's `_reshape_axis_into`: dimension `src` merged into dimension `dst` (numbered after
/// `src` is removed), `src` the major part.
fn axis_into(src: usize, dst: usize, x: &Array) -> Result<Array, Error> {
    let n = x.ndim();
    if src >= n || dst >= n {
        return Err(super::batching::internal(NAME));
    }
    let mut perm: Vec<usize> = (0..n).filter(|&i| i != src).collect();
    perm.insert(dst, src);
    let mut shape: Vec<usize> = x
        .shape()
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != src)
        .map(|(_, &s)| s)
        .collect();
    shape[dst] *= x.shape()[src];
    ad::reshape(&ad::transpose(x, &perm)?, &shape)
}

/// JAX's `_reshape_axis_out_of`: dimension `src` split into `(size, rest)`.
fn axis_out_of(src: usize, size: usize, x: &Array) -> Result<Array, Error> {
    let mut shape = x.shape().to_vec();
    let Some(&s) = shape.get(src) else {
        return Err(super::batching::internal(NAME));
    };
    if size == 0 || !s.is_multiple_of(size) {
        return Err(super::batching::internal(NAME));
    }
    shape.splice(src..=src, [size, s / size]);
    ad::reshape(x, &shape)
}

/// `x` reversed along `dims` (`lax.rev`).
fn rev(x: &Array, dims: &[usize]) -> Result<Array, Error> {
    let p = Params::new().with("dimensions", super::ints(dims.iter().copied()));
    bind1(&super::REV, &[x], &p)
}

/// JAX's `_conv_general_dilated_transpose_lhs`: the cotangent convolved with the reversed
/// kernel (input and output features swapped, groups moved into its output features), the
/// strides as the cotangent's dilation.
fn transpose_lhs(g: &Array, lhs: &ShapedArray, rhs: &Array, c: &Conv) -> Result<Array, Error> {
    let Dn {
        lhs: ls,
        rhs: rs,
        out: os,
    } = &c.dn;
    let rhs_shape = rhs.shape().to_vec();
    let (mut fg, bg) = (c.feature_groups, c.batch_groups);
    let mut w = rhs.clone();
    if fg > 1 {
        w = axis_out_of(rs[0], fg as usize, &w)?;
        w = axis_into(rs[0], rs[1], &w)?;
    } else if bg > 1 {
        w = axis_out_of(rs[0], bg as usize, &w)?;
        w = axis_into(rs[0], rs[1], &w)?;
        fg = bg;
    }
    let padding = vjp_lhs_padding(
        &take(lhs.shape(), Dn::sdims(ls)),
        &take(&rhs_shape, Dn::sdims(rs)),
        &c.strides,
        &take(g.shape(), Dn::sdims(os)),
        &c.padding,
        &c.lhs_dilation,
        &c.rhs_dilation,
    )?;
    let mut w = rev(&w, Dn::sdims(rs))?;
    if g.dtype() != w.dtype() {
        w = super::ops::convert(&w, g.dtype(), false)?;
    }
    let t = Conv {
        dn: Dn {
            lhs: os.clone(),
            rhs: Dn::swapped(rs),
            out: ls.clone(),
        },
        strides: c.lhs_dilation.clone(),
        padding,
        lhs_dilation: c.strides.clone(),
        rhs_dilation: c.rhs_dilation.clone(),
        feature_groups: fg,
        batch_groups: 1,
        precision: c.precision.clone(),
        preferred: c.preferred.clone(),
    };
    let mut out = t.bind(g, &w)?;
    if out.dtype() != lhs.dtype() {
        out = super::ops::convert(&out, lhs.dtype(), false)?;
    }
    if bg > 1 {
        out = axis_out_of(ls[1], bg as usize, &out)?;
        out = axis_into(ls[1], ls[0], &out)?;
    }
    Ok(out)
}

/// JAX's `_conv_general_dilated_transpose_rhs`: the left operand convolved with the
/// cotangent (batch and feature roles swapped, feature groups becoming batch groups and back),
/// the strides as the kernel's dilation. `None`: an empty cotangent (JAX's symbolic zero).
fn transpose_rhs(
    g: &Array,
    lhs: &Array,
    rhs: &ShapedArray,
    c: &Conv,
) -> Result<Option<Array>, Error> {
    if g.size() == 0 {
        return Ok(None);
    }
    let Dn {
        lhs: ls,
        rhs: rs,
        out: os,
    } = &c.dn;
    let (mut fg, mut bg) = (c.feature_groups, c.batch_groups);
    if bg > 1 {
        fg = bg;
        bg = 1;
    } else if fg > 1 {
        bg = fg;
        fg = 1;
    }
    let padding = vjp_rhs_padding(
        &take(lhs.shape(), Dn::sdims(ls)),
        &take(rhs.shape(), Dn::sdims(rs)),
        &c.strides,
        &take(g.shape(), Dn::sdims(os)),
        &c.padding,
        &c.lhs_dilation,
        &c.rhs_dilation,
    )?;
    let lhs = if g.dtype() != lhs.dtype() {
        super::ops::convert(lhs, g.dtype(), false)?
    } else {
        lhs.clone()
    };
    let t = Conv {
        dn: Dn {
            lhs: Dn::swapped(ls),
            rhs: Dn::swapped(os),
            out: Dn::swapped(rs),
        },
        strides: c.rhs_dilation.clone(),
        padding,
        lhs_dilation: c.lhs_dilation.clone(),
        rhs_dilation: c.strides.clone(),
        feature_groups: fg,
        batch_groups: bg,
        precision: c.precision.clone(),
        preferred: c.preferred.clone(),
    };
    let mut out = t.bind(&lhs, g)?;
    if out.dtype() != rhs.dtype() {
        out = super::ops::convert(&out, rhs.dtype(), false)?;
    }
    Ok(Some(out))
}

/// The transposes in either operand (JAX's `ad.bilinear_transpose`).
fn transpose(
    _prim: &'static Primitive,
    cts: &[Option<Array>],
    ins: &[Lin],
    params: &Params,
) -> Result<Vec<Option<Array>>, Error> {
    let Some(ct) = cts.first().cloned().flatten() else {
        return Ok(vec![None; ins.len()]);
    };
    let c = Conv::of(params)?;
    match ins {
        [Lin::Linear(lhs), Lin::Known(rhs)] => {
            Ok(vec![Some(transpose_lhs(&ct, lhs, rhs, &c)?), None])
        }
        [Lin::Known(lhs), Lin::Linear(rhs)] => Ok(vec![None, transpose_rhs(&ct, lhs, rhs, &c)?]),
        _ => Err(crate::core::nonlinear()),
    }
}

// ---- batching

/// JAX's `_conv_general_dilated_batch_rule`: the batch folded into the left operand's batch
/// dimension (or its batch groups), into the kernel's output features (or its groups), or,
/// both batched, into feature (or batch) groups; then split out of the result.
fn batch(
    prim: &'static Primitive,
    _size: usize,
    args: &[Array],
    dims: &[Option<usize>],
    params: &Params,
) -> Result<(Outputs, BatchDims), Error> {
    let ([lhs, rhs], [lb, rb]) = (args, dims) else {
        return Err(super::batching::internal(NAME));
    };
    let c = Conv::of(params)?;
    let Dn {
        lhs: ls,
        rhs: rs,
        out: os,
    } = &c.dn;
    if ls.len() < 2 || rs.len() < 2 || os.len() < 2 {
        return Err(super::batching::internal(NAME));
    }
    let one = |x: Array, d: usize| -> Result<(Outputs, BatchDims), Error> {
        Ok((smallvec::smallvec![x], vec![Some(d)]))
    };
    let size_of = |x: &Array, b: &Option<usize>| b.and_then(|b| x.shape().get(b).copied());
    // A batch of no examples: zeros of the examples' result shape.
    if size_of(lhs, lb) == Some(0) || size_of(rhs, rb) == Some(0) {
        let example = |x: &Array, b: &Option<usize>| {
            let mut s = x.shape().to_vec();
            if let Some(b) = *b {
                s.remove(b);
            }
            s
        };
        let shape = out_shape(&example(lhs, lb), &example(rhs, rb), &c)?;
        let dtype = c.preferred().unwrap_or(lhs.dtype());
        let full: Vec<usize> = std::iter::once(0).chain(shape).collect();
        return one(
            super::ops::zeros(&ShapedArray::new(&full, dtype, false))?,
            0,
        );
    }
    let (fg, bg) = (c.feature_groups, c.batch_groups);
    match (*lb, *rb) {
        (None, None) => Ok((super::bind(prim, &[lhs, rhs], params)?, vec![None])),
        (Some(lb), Some(rb)) => {
            let n = lhs.shape()[lb];
            let mut t = c.clone();
            let new_lhs = if bg > 1 {
                t.batch_groups *= n as i64;
                axis_into(lb, ls[0], lhs)?
            } else {
                t.feature_groups *= n as i64;
                axis_into(lb, ls[1], lhs)?
            };
            let new_rhs = axis_into(rb, rs[0], rhs)?;
            let out = t.bind(&new_lhs, &new_rhs)?;
            one(axis_out_of(os[1], n, &out)?, os[1])
        }
        (Some(lb), None) => {
            let n = lhs.shape()[lb];
            let new_lhs = if bg == 1 {
                axis_into(lb, ls[0], lhs)?
            } else {
                let x = axis_out_of(ls[0] + usize::from(lb <= ls[0]), bg as usize, lhs)?;
                let x = axis_into(lb + usize::from(ls[0] < lb), ls[0] + 1, &x)?;
                axis_into(ls[0], ls[0], &x)?
            };
            let out = c.bind(&new_lhs, rhs)?;
            one(axis_out_of(os[0], n, &out)?, os[0])
        }
        (None, Some(rb)) => {
            let n = rhs.shape()[rb];
            if fg == 1 && bg == 1 {
                let new_rhs = axis_into(rb, rs[0], rhs)?;
                let out = c.bind(lhs, &new_rhs)?;
                return one(axis_out_of(os[1], n, &out)?, os[1]);
            }
            let groups = if fg > 1 { fg } else { bg } as usize;
            let w = axis_out_of(rs[0] + usize::from(rb <= rs[0]), groups, rhs)?;
            let w = axis_into(rb + usize::from(rs[0] < rb), rs[0] + 1, &w)?;
            let w = axis_into(rs[0], rs[0], &w)?;
            let out = c.bind(lhs, &w)?;
            let out = axis_out_of(os[1], groups, &out)?;
            let out = axis_out_of(os[1] + 1, n, &out)?;
            one(axis_into(os[1], os[1] + 1, &out)?, os[1])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimension_numbers_print_as_jax_prints_them_and_read_back_from_text() {
        let dn = Dn {
            lhs: vec![0, 3, 1, 2],
            rhs: vec![3, 2, 0, 1],
            out: vec![0, 3, 1, 2],
        };
        let text = dn.param().to_string();
        assert_eq!(
            text,
            "ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, \
             1, 2))"
        );
        let p = Params::new().with("dimension_numbers", Param::Name(text));
        assert_eq!(dnums(&p).unwrap(), dn);
    }
}

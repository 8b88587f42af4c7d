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
use crate::kernels::conv::{Geometry, Layout, conv as conv_kernel, matmul_wrapping};

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
            if conv_kernel(g, a, b, out, &mm, |x, y| x + y) {
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
    if !conv_kernel(&g, &a, &b, &mut out, &matmul_wrapping, i64::wrapping_add) {
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

// ---- the library functions (`jax.lax.conv_general_dilated`, `conv`,
// `conv_with_general_padding`, `conv_transpose`, `padtype_to_pads`)

/// A padding as JAX's convolution and windowed-reduction functions take it: one of the
/// strings `'SAME'`, `'SAME_LOWER'`, `'VALID'` (each resolved to `(low, high)` pairs by
/// [`padtype_to_pads`]), or explicit pairs, one per spatial dimension.
///
/// Parsing a string never fails: `"SAME"`, `"SAME_LOWER"` and `"VALID"` are the named kinds,
/// and any other string (`"same"`, `"FULL"`) is kept as [`Padding::Text`], resolved where
/// JAX resolves it (case-insensitively, or JAX's `RuntimeError`). `conv_transpose` treats only
/// the exact strings `'SAME'` and `'VALID'` as the forward convolution's padding, as JAX does.
///
/// ```
/// use dtype_lattice_array::lax::Padding;
/// assert_eq!("SAME".parse::<Padding>()?, Padding::Same);
/// assert_eq!("same".parse::<Padding>()?, Padding::Text("same".into()));
/// assert_eq!(Padding::from([(1, 0), (0, 2)]), Padding::Explicit(vec![(1, 0), (0, 2)]));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Padding {
    /// `'SAME'`: the output size is the input size over the stride, rounded up; an odd total
    /// padding puts the extra element at the end.
    Same,
    /// `'SAME_LOWER'`: as `'SAME'`, the extra element at the start.
    SameLower,
    /// `'VALID'`: no padding.
    Valid,
    /// Another string, as given (resolved case-insensitively where JAX resolves it).
    Text(String),
    /// `(low, high)` per spatial dimension (negative pads crop).
    Explicit(Vec<(i64, i64)>),
}

impl std::str::FromStr for Padding {
    type Err = Error;

    fn from_str(s: &str) -> Result<Padding, Error> {
        Ok(match s {
            "SAME" => Padding::Same,
            "SAME_LOWER" => Padding::SameLower,
            "VALID" => Padding::Valid,
            other => Padding::Text(other.to_string()),
        })
    }
}

impl From<&str> for Padding {
    fn from(s: &str) -> Padding {
        match s.parse() {
            Ok(p) => p,
            Err(_) => Padding::Text(s.to_string()),
        }
    }
}

impl From<Vec<(i64, i64)>> for Padding {
    fn from(p: Vec<(i64, i64)>) -> Padding {
        Padding::Explicit(p)
    }
}

impl From<&[(i64, i64)]> for Padding {
    fn from(p: &[(i64, i64)]) -> Padding {
        Padding::Explicit(p.to_vec())
    }
}

impl<const N: usize> From<[(i64, i64); N]> for Padding {
    fn from(p: [(i64, i64); N]) -> Padding {
        Padding::Explicit(p.to_vec())
    }
}

impl Padding {
    /// Whether JAX sees a string here (`isinstance(padding, str)`).
    fn is_string(&self) -> bool {
        !matches!(self, Padding::Explicit(_))
    }

    /// The named kind of a string padding, as `PaddingType[padding.upper()]` finds it.
    fn kind(&self) -> Result<Option<Padding>, Error> {
        let text = match self {
            Padding::Explicit(_) => return Ok(None),
            Padding::Same => "SAME".to_string(),
            Padding::SameLower => "SAME_LOWER".to_string(),
            Padding::Valid => "VALID".to_string(),
            Padding::Text(t) => t.to_uppercase(),
        };
        match text.as_str() {
            "SAME" => Ok(Some(Padding::Same)),
            "SAME_LOWER" => Ok(Some(Padding::SameLower)),
            "VALID" => Ok(Some(Padding::Valid)),
            _ => Err(Error::refused(
                dtype_lattice::error::Exception::RuntimeError,
                format!(
                    "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got \
                     {}.",
                    self.text()
                ),
            )),
        }
    }

    /// The string as given (Python's `str(padding)` of a string).
    fn text(&self) -> String {
        match self {
            Padding::Same => "SAME".into(),
            Padding::SameLower => "SAME_LOWER".into(),
            Padding::Valid => "VALID".into(),
            Padding::Text(t) => t.clone(),
            Padding::Explicit(p) => Param::Pairs(p.clone()).to_string(),
        }
    }
}

/// `jax.lax.padtype_to_pads(in_shape, window_shape, window_strides, padding)`: the `(low,
/// high)` pairs of a padding over inputs of `in_shape` and windows of `window_shape` (already
/// dilated) spaced by `window_strides`. `'SAME'` pads so that the output size is
/// `ceil(in / stride)`, the odd element at the end (`'SAME_LOWER'`: at the start); `'VALID'`
/// pads nothing; explicit pairs are returned as they are.
///
/// ```
/// use dtype_lattice_array::lax::{Padding, padtype_to_pads};
/// assert_eq!(padtype_to_pads(&[7, 6], &[3, 2], &[1, 2], &Padding::Same)?, [(1, 1), (0, 0)]);
/// assert_eq!(padtype_to_pads(&[5], &[4], &[1], &Padding::SameLower)?, [(2, 1)]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// JAX's `RuntimeError` for a string other than `'SAME'`, `'SAME_LOWER'` and `'VALID'` (in
/// any case).
pub fn padtype_to_pads(
    in_shape: &[usize],
    window_shape: &[usize],
    window_strides: &[i64],
    padding: &Padding,
) -> Result<Vec<(i64, i64)>, Error> {
    let kind = match padding.kind()? {
        None => {
            let Padding::Explicit(p) = padding else {
                return Ok(Vec::new());
            };
            return Ok(p.clone());
        }
        Some(k) => k,
    };
    if kind == Padding::Valid {
        return Ok(vec![(0, 0); in_shape.len()]);
    }
    Ok(in_shape
        .iter()
        .zip(window_shape)
        .zip(window_strides)
        .map(|((&d, &w), &s)| {
            let (d, w) = (d as i64, w as i64);
            // `-np.floor_divide(-in, stride)` (NumPy's division by zero: 0).
            let out = if s == 0 {
                0
            } else {
                -((-d).div_euclid(s) - i64::from(s < 0 && (-d).rem_euclid(s) != 0))
            };
            let pad = ((out - 1) * s + w - d).max(0);
            if kind == Padding::Same {
                (pad / 2, pad - pad / 2)
            } else {
                (pad - pad / 2, pad / 2)
            }
        })
        .collect())
}

/// `jax.lax.Precision`: the precision asked of a convolution's operands (XLA's CPU backend
/// computes at full precision whatever it asks: the parameter is carried and printed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// `Precision.DEFAULT` (`'default'`, `'fastest'`, `'bfloat16'`).
    Default,
    /// `Precision.HIGH` (`'high'`, `'tensorfloat32'`).
    High,
    /// `Precision.HIGHEST` (`'highest'`, `'float32'`).
    Highest,
}

impl std::str::FromStr for Precision {
    type Err = Error;

    fn from_str(s: &str) -> Result<Precision, Error> {
        match s.to_lowercase().as_str() {
            "default" | "fastest" | "bfloat16" => Ok(Precision::Default),
            "high" | "tensorfloat32" => Ok(Precision::High),
            "highest" | "float32" => Ok(Precision::Highest),
            _ => Err(Error::refused(
                dtype_lattice::error::Exception::ValueError,
                format!("'{s}' is not a valid Precision"),
            )),
        }
    }
}

impl Precision {
    fn name(self) -> &'static str {
        match self {
            Precision::Default => "Precision.DEFAULT",
            Precision::High => "Precision.HIGH",
            Precision::Highest => "Precision.HIGHEST",
        }
    }
}

/// `lax.canonicalize_precision`: the parameter of a precision for both operands.
fn precision_param(p: Option<(Precision, Precision)>) -> Param {
    match p {
        None => Param::None,
        Some((a, b)) => Param::Name(format!("({}, {})", a.name(), b.name())),
    }
}

/// A convolution's `dimension_numbers` as `lax.conv_general_dilated` takes them: `None` (every
/// operand `(batch, feature, spatial…)` in order: NCHW, OIHW, NCHW), three strings such as
/// `("NHWC", "HWIO", "NHWC")` (`N` batch, `C` feature, `I`/`O` the kernel's input and output
/// features, spatial dimensions any other letters, matched by letter; window strides follow
/// the kernel's order of spatial letters), or `ConvDimensionNumbers` itself (each spec the
/// positions of batch, feature, then spatial dimensions).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DimensionNumbers {
    /// `None`: the default layout.
    #[default]
    Default,
    /// Three strings: the input's, the kernel's and the output's layout.
    Strings(String, String, String),
    /// `ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec)`.
    Specs {
        /// The input's batch, feature and spatial dimensions.
        lhs: Vec<usize>,
        /// The kernel's output feature, input feature and spatial dimensions.
        rhs: Vec<usize>,
        /// The output's batch, feature and spatial dimensions.
        out: Vec<usize>,
    },
}

impl From<(&str, &str, &str)> for DimensionNumbers {
    fn from((l, r, o): (&str, &str, &str)) -> DimensionNumbers {
        DimensionNumbers::Strings(l.into(), r.into(), o.into())
    }
}

impl From<[&str; 3]> for DimensionNumbers {
    fn from([l, r, o]: [&str; 3]) -> DimensionNumbers {
        DimensionNumbers::Strings(l.into(), r.into(), o.into())
    }
}

/// A Python tuple of strings as JAX prints one (`('NHWC', 'HWIO', 'NHXC')`).
fn py_strs(v: &[&str]) -> String {
    let items: Vec<String> = v.iter().map(|s| format!("'{s}'")).collect();
    format!("({})", items.join(", "))
}

/// `conv_general_permutations`: the specs of three layout strings (JAX's `TypeError`s).
fn permutations(specs: [&str; 3]) -> Result<Dn, Error> {
    let pairs = [('N', 'C'), ('O', 'I'), ('N', 'C')];
    for (i, (spec, (a, b))) in specs.iter().zip(pairs).enumerate() {
        if spec.matches(a).count() != 1 || spec.matches(b).count() != 1 {
            return type_error(format!(
                "convolution dimension_numbers[{i}] must contain the characters '{a}' and '{b}' \
                 exactly once, got {spec}."
            ));
        }
        let mut chars: Vec<char> = spec.chars().collect();
        chars.sort_unstable();
        chars.dedup();
        if chars.len() != spec.chars().count() {
            return type_error(format!(
                "convolution dimension_numbers[{i}] cannot have duplicate characters, got {spec}."
            ));
        }
    }
    let spatial = |spec: &str, (a, b): (char, char)| -> std::collections::BTreeSet<char> {
        spec.chars().filter(|&c| c != a && c != b).collect()
    };
    let sets: Vec<_> = specs
        .iter()
        .zip(pairs)
        .map(|(s, p)| spatial(s, p))
        .collect();
    if sets[0] != sets[1] || sets[1] != sets[2] {
        return type_error(format!(
            "convolution dimension_numbers elements must each have the same set of spatial \
             characters, got {}.",
            py_strs(&specs)
        ));
    }
    let rhs: Vec<char> = specs[1].chars().collect();
    let perm = |k: usize| -> Vec<usize> {
        let chars: Vec<char> = specs[k].chars().collect();
        let (a, b) = pairs[k];
        let pos = |c: char| chars.iter().position(|&x| x == c).unwrap_or(0);
        let mut spatial: Vec<usize> = (0..chars.len())
            .filter(|&i| chars[i] != a && chars[i] != b)
            .collect();
        if k != 1 {
            spatial.sort_by_key(|&i| rhs.iter().position(|&c| c == chars[i]));
        }
        let mut out = vec![pos(a), pos(b)];
        out.extend(spatial);
        out
    };
    Ok(Dn {
        lhs: perm(0),
        rhs: perm(1),
        out: perm(2),
    })
}

/// `conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)`.
fn conv_dimension_numbers(
    lhs: &[usize],
    rhs: &[usize],
    dn: &DimensionNumbers,
) -> Result<Dn, Error> {
    if let DimensionNumbers::Specs { lhs, rhs, out } = dn {
        return Ok(Dn {
            lhs: lhs.clone(),
            rhs: rhs.clone(),
            out: out.clone(),
        });
    }
    if lhs.len() != rhs.len() {
        return type_error(format!(
            "convolution requires lhs and rhs ndim to be equal, got {} and {}.",
            lhs.len(),
            rhs.len()
        ));
    }
    match dn {
        DimensionNumbers::Strings(l, r, o) => {
            for (i, s) in [l, r, o].iter().enumerate() {
                if s.chars().count() != lhs.len() {
                    return type_error(format!(
                        "convolution dimension_numbers[{i}] must have len equal to the ndim of \
                         lhs and rhs, got {} for lhs and rhs shapes {} and {}.",
                        s.chars().count(),
                        py_shape(lhs),
                        py_shape(rhs)
                    ));
                }
            }
            permutations([l, r, o])
        }
        _ => {
            let iota: Vec<usize> = (0..lhs.len()).collect();
            Ok(Dn {
                lhs: iota.clone(),
                rhs: iota.clone(),
                out: iota,
            })
        }
    }
}

/// `jax.lax.conv_general_dilated`'s keyword arguments, a builder; [`ConvGeneralDilated::apply`]
/// convolves (`lax.conv_general_dilated(lhs, rhs, window_strides, padding, ...)`).
///
/// ```
/// use dtype_lattice_array::{Array, lax::ConvGeneralDilated};
/// // NHWC input, HWIO kernel: a 3×3 box filter over a 4×4 image of ones.
/// let x = Array::from_shape_vec(&[1, 4, 4, 1], vec![1.0f32; 16])?;
/// let w = Array::from_shape_vec(&[3, 3, 1, 1], vec![1.0f32; 9])?;
/// let y = ConvGeneralDilated::new(&[1, 1], "SAME")
///     .dimension_numbers(("NHWC", "HWIO", "NHWC"))
///     .apply(&x, &w)?;
/// assert_eq!(y.shape(), &[1, 4, 4, 1]);
/// assert_eq!(y.to_vec::<f32>()?[..4], [4.0, 6.0, 6.0, 4.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ConvGeneralDilated {
    window_strides: Vec<i64>,
    padding: Padding,
    lhs_dilation: Option<Vec<i64>>,
    rhs_dilation: Option<Vec<i64>>,
    dimension_numbers: DimensionNumbers,
    feature_group_count: i64,
    batch_group_count: i64,
    precision: Option<(Precision, Precision)>,
    preferred_element_type: Option<DType>,
}

impl ConvGeneralDilated {
    /// A convolution with these window strides and padding; no dilation, the default layout,
    /// one group, no precision, no preferred element type.
    pub fn new(window_strides: &[i64], padding: impl Into<Padding>) -> ConvGeneralDilated {
        ConvGeneralDilated {
            window_strides: window_strides.to_vec(),
            padding: padding.into(),
            lhs_dilation: None,
            rhs_dilation: None,
            dimension_numbers: DimensionNumbers::Default,
            feature_group_count: 1,
            batch_group_count: 1,
            precision: None,
            preferred_element_type: None,
        }
    }

    /// `lhs_dilation` (transposed convolutions): holes between the input's elements.
    #[must_use]
    pub fn lhs_dilation(mut self, d: &[i64]) -> ConvGeneralDilated {
        self.lhs_dilation = Some(d.to_vec());
        self
    }

    /// `rhs_dilation` (atrous convolutions): holes between the kernel's taps.
    #[must_use]
    pub fn rhs_dilation(mut self, d: &[i64]) -> ConvGeneralDilated {
        self.rhs_dilation = Some(d.to_vec());
        self
    }

    /// `dimension_numbers`: three layout strings or the specs ([`DimensionNumbers`]).
    #[must_use]
    pub fn dimension_numbers(mut self, dn: impl Into<DimensionNumbers>) -> ConvGeneralDilated {
        self.dimension_numbers = dn.into();
        self
    }

    /// `feature_group_count` (grouped and depthwise convolutions).
    #[must_use]
    pub fn feature_group_count(mut self, n: i64) -> ConvGeneralDilated {
        self.feature_group_count = n;
        self
    }

    /// `batch_group_count`.
    #[must_use]
    pub fn batch_group_count(mut self, n: i64) -> ConvGeneralDilated {
        self.batch_group_count = n;
        self
    }

    /// `precision` for both operands (JAX's `canonicalize_precision` of one value).
    #[must_use]
    pub fn precision(mut self, p: Precision) -> ConvGeneralDilated {
        self.precision = Some((p, p));
        self
    }

    /// `precision` per operand.
    #[must_use]
    pub fn precisions(mut self, lhs: Precision, rhs: Precision) -> ConvGeneralDilated {
        self.precision = Some((lhs, rhs));
        self
    }

    /// `preferred_element_type`: the result's dtype (canonicalised: 64-bit types are 32-bit
    /// with x64 off).
    #[must_use]
    pub fn preferred_element_type(mut self, dtype: DType) -> ConvGeneralDilated {
        self.preferred_element_type = Some(dtype);
        self
    }

    /// `lax.conv_general_dilated(lhs, rhs, ...)`: the dimension numbers resolved, a string
    /// padding resolved by [`padtype_to_pads`] over the input's spatial sizes and the dilated
    /// kernel's, then one `conv_general_dilated` equation.
    ///
    /// # Errors
    ///
    /// JAX's: `TypeError`s for dimension numbers that are not layouts of the operands' rank;
    /// `ValueError` for a string padding with an `lhs_dilation` other than ones; the
    /// `RuntimeError` of an unknown padding string; then the primitive's shape and dtype
    /// rules' refusals (groups, dtypes, dilations, negative padding larger than the input).
    pub fn apply(&self, lhs: &Array, rhs: &Array) -> Result<Array, Error> {
        let dn = conv_dimension_numbers(lhs.shape(), rhs.shape(), &self.dimension_numbers)?;
        let lhs_dilation = match &self.lhs_dilation {
            None => vec![1; lhs.ndim().saturating_sub(2)],
            Some(d) if self.padding.is_string() && d.iter().any(|&v| v != 1) => {
                return value_error(
                    "String padding is not implemented for transposed convolution using this \
                     op. Please either exactly specify the required padding or use \
                     conv_transpose."
                        .into(),
                );
            }
            Some(d) => d.clone(),
        };
        let rhs_dilation = self
            .rhs_dilation
            .clone()
            .unwrap_or_else(|| vec![1; rhs.ndim().saturating_sub(2)]);
        let padding = if self.padding.is_string() {
            let spatial = |shape: &[usize], spec: &[usize]| -> Vec<usize> {
                Dn::sdims(spec)
                    .iter()
                    .map(|&i| shape.get(i).copied().unwrap_or(0))
                    .collect()
            };
            let window: Vec<usize> = spatial(rhs.shape(), &dn.rhs)
                .iter()
                .zip(rhs_dilation.iter().chain(std::iter::repeat(&1)))
                .map(|(&k, &r)| dilate_dim(k as i128, i128::from(r)).max(0) as usize)
                .collect();
            padtype_to_pads(
                &spatial(lhs.shape(), &dn.lhs),
                &window,
                &self.window_strides,
                &self.padding,
            )?
        } else {
            match &self.padding {
                Padding::Explicit(p) => p.clone(),
                _ => Vec::new(),
            }
        };
        let preferred = self
            .preferred_element_type
            .map(|d| d.canonicalize(crate::config::rules().options().x64));
        Conv {
            dn,
            strides: self.window_strides.clone(),
            padding,
            lhs_dilation,
            rhs_dilation,
            feature_groups: self.feature_group_count,
            batch_groups: self.batch_group_count,
            precision: precision_param(self.precision),
            preferred: preferred.map_or(Param::None, Param::DType),
        }
        .bind(lhs, rhs)
    }
}

/// `jax.lax.conv_general_dilated(lhs, rhs, window_strides, padding)` with the default keyword
/// arguments ([`ConvGeneralDilated`] for the others).
///
/// ```
/// use dtype_lattice_array::{Array, lax};
/// let x = Array::from_shape_vec(&[1, 1, 5], vec![1.0f32, 2.0, 3.0, 4.0, 5.0])?;
/// let w = Array::from_shape_vec(&[1, 1, 2], vec![1.0f32, -1.0])?;
/// let y = lax::conv_general_dilated(&x, &w, &[1], "VALID")?;
/// assert_eq!(y.to_vec::<f32>()?, [-1.0, -1.0, -1.0, -1.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`ConvGeneralDilated::apply`].
pub fn conv_general_dilated(
    lhs: &Array,
    rhs: &Array,
    window_strides: &[i64],
    padding: impl Into<Padding>,
) -> Result<Array, Error> {
    ConvGeneralDilated::new(window_strides, padding).apply(lhs, rhs)
}

/// `jax.lax.conv(lhs, rhs, window_strides, padding, precision, preferred_element_type)`: NCHW
/// input, OIHW kernel.
///
/// ```
/// use dtype_lattice_array::{Array, lax};
/// let x = Array::from_shape_vec(&[1, 1, 3, 3], vec![1.0f32; 9])?;
/// let w = Array::from_shape_vec(&[1, 1, 2, 2], vec![1.0f32; 4])?;
/// assert_eq!(lax::conv(&x, &w, &[1, 1], "SAME", None, None)?.shape(), &[1, 1, 3, 3]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`ConvGeneralDilated::apply`].
pub fn conv(
    lhs: &Array,
    rhs: &Array,
    window_strides: &[i64],
    padding: impl Into<Padding>,
    precision: Option<Precision>,
    preferred_element_type: Option<DType>,
) -> Result<Array, Error> {
    let mut c = ConvGeneralDilated::new(window_strides, padding);
    c.precision = precision.map(|p| (p, p));
    c.preferred_element_type = preferred_element_type;
    c.apply(lhs, rhs)
}

/// `jax.lax.conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation,
/// rhs_dilation, precision, preferred_element_type)`: NCHW input, OIHW kernel, dilations.
///
/// ```
/// use dtype_lattice_array::{Array, lax};
/// let x = Array::from_shape_vec(&[1, 1, 3], vec![1.0f32, 2.0, 3.0])?;
/// let w = Array::from_shape_vec(&[1, 1, 1], vec![2.0f32])?;
/// let y = lax::conv_with_general_padding(&x, &w, &[1], [(0, 0)], Some(&[2]), None, None, None)?;
/// assert_eq!(y.to_vec::<f32>()?, [2.0, 0.0, 4.0, 0.0, 6.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`ConvGeneralDilated::apply`].
#[allow(clippy::too_many_arguments)]
pub fn conv_with_general_padding(
    lhs: &Array,
    rhs: &Array,
    window_strides: &[i64],
    padding: impl Into<Padding>,
    lhs_dilation: Option<&[i64]>,
    rhs_dilation: Option<&[i64]>,
    precision: Option<Precision>,
    preferred_element_type: Option<DType>,
) -> Result<Array, Error> {
    let mut c = ConvGeneralDilated::new(window_strides, padding);
    c.lhs_dilation = lhs_dilation.map(<[i64]>::to_vec);
    c.rhs_dilation = rhs_dilation.map(<[i64]>::to_vec);
    c.precision = precision.map(|p| (p, p));
    c.preferred_element_type = preferred_element_type;
    c.apply(lhs, rhs)
}

/// `_conv_transpose_padding(k, s, padding)`: the transposed convolution's pads of one
/// dimension (kernel size `k`, dilated; stride `s`) for the forward convolution's `'SAME'`
/// (`same`) or `'VALID'`.
fn transpose_padding(k: i64, s: i64, same: bool) -> (i64, i64) {
    let (pad_a, pad_len) = if same {
        let len = k + s - 2;
        // `int(np.ceil(pad_len / 2))`
        let a = if s > k - 1 {
            k - 1
        } else {
            len.div_euclid(2) + len.rem_euclid(2)
        };
        (a, len)
    } else {
        (k - 1, k + s - 2 + (k - s).max(0))
    };
    (pad_a, pad_len - pad_a)
}

/// `jax.lax.conv_transpose`'s keyword arguments, a builder: the convolution "transpose"
/// computed directly as a fractionally strided convolution (the input dilated by the
/// strides); [`ConvTranspose::apply`] convolves.
///
/// Padding: `'SAME'` and `'VALID'` are the forward convolution's (JAX's
/// `_conv_transpose_padding` of the dilated kernel size and the stride); explicit pairs are
/// the transposed convolution's own; any other string goes to
/// [`ConvGeneralDilated::apply`] as it is (which refuses it with strides other than one).
/// Layouts default to TensorFlow's: `NC`/`IO`, `NHC`/`HIO`, `NHWC`/`HWIO`, `NHWDC`/`HWDIO`.
/// With `transpose_kernel`, the kernel's spatial axes are reversed and its input and output
/// features exchanged (Keras' `Conv2DTranspose`).
///
/// ```
/// use dtype_lattice_array::{Array, lax::ConvTranspose};
/// let x = Array::from_shape_vec(&[1, 2, 2, 1], vec![1.0f32, 2.0, 3.0, 4.0])?;
/// let w = Array::from_shape_vec(&[2, 2, 1, 1], vec![1.0f32; 4])?;
/// let y = ConvTranspose::new(&[2, 2], "SAME").apply(&x, &w)?;
/// assert_eq!(y.shape(), &[1, 4, 4, 1]);
/// assert_eq!(y.to_vec::<f32>()?[..4], [1.0, 1.0, 2.0, 2.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ConvTranspose {
    strides: Vec<i64>,
    padding: Padding,
    rhs_dilation: Option<Vec<i64>>,
    dimension_numbers: Option<DimensionNumbers>,
    transpose_kernel: bool,
    consistent_padding: bool,
    precision: Option<(Precision, Precision)>,
    preferred_element_type: Option<DType>,
}

impl ConvTranspose {
    /// A transposed convolution with these strides and padding.
    pub fn new(strides: &[i64], padding: impl Into<Padding>) -> ConvTranspose {
        ConvTranspose {
            strides: strides.to_vec(),
            padding: padding.into(),
            rhs_dilation: None,
            dimension_numbers: None,
            transpose_kernel: false,
            consistent_padding: false,
            precision: None,
            preferred_element_type: None,
        }
    }

    /// `use_consistent_padding`: explicit padding pairs are the forward convolution's, as
    /// PyTorch's `ConvTranspose` reads them (each becomes `(k − low − 1, k − high − 1)` of the
    /// dilated kernel size `k`), and a padding string other than `'SAME'`/`'VALID'` is JAX's
    /// `ValueError`. Off (the default), pairs are the transposed convolution's own.
    #[must_use]
    pub fn use_consistent_padding(mut self, on: bool) -> ConvTranspose {
        self.consistent_padding = on;
        self
    }

    /// `rhs_dilation`.
    #[must_use]
    pub fn rhs_dilation(mut self, d: &[i64]) -> ConvTranspose {
        self.rhs_dilation = Some(d.to_vec());
        self
    }

    /// `dimension_numbers` (default: TensorFlow's layouts for the rank).
    #[must_use]
    pub fn dimension_numbers(mut self, dn: impl Into<DimensionNumbers>) -> ConvTranspose {
        self.dimension_numbers = Some(dn.into());
        self
    }

    /// `transpose_kernel`: reverse the kernel's spatial axes and exchange its features.
    #[must_use]
    pub fn transpose_kernel(mut self, on: bool) -> ConvTranspose {
        self.transpose_kernel = on;
        self
    }

    /// `precision` for both operands.
    #[must_use]
    pub fn precision(mut self, p: Precision) -> ConvTranspose {
        self.precision = Some((p, p));
        self
    }

    /// `preferred_element_type`.
    #[must_use]
    pub fn preferred_element_type(mut self, dtype: DType) -> ConvTranspose {
        self.preferred_element_type = Some(dtype);
        self
    }

    /// `lax.conv_transpose(lhs, rhs, strides, padding, ...)`.
    ///
    /// # Errors
    ///
    /// JAX's: `ValueError` for operands of rank other than 2 to 5 without dimension numbers
    /// (`No 4+ dimensional dimension_number defaults.`), and for operands of different ranks
    /// or of rank below 2 (JAX asserts: `AssertionError`, which this crate's exceptions do
    /// not have); then [`ConvGeneralDilated::apply`]'s.
    pub fn apply(&self, lhs: &Array, rhs: &Array) -> Result<Array, Error> {
        if lhs.ndim() != rhs.ndim() || lhs.ndim() < 2 {
            return value_error(format!(
                "conv_transpose needs operands of one rank of at least 2, got {} and {}",
                py_shape(lhs.shape()),
                py_shape(rhs.shape())
            ));
        }
        let dn = match &self.dimension_numbers {
            Some(dn) => dn.clone(),
            None => match lhs.ndim() {
                2 => ("NC", "IO", "NC").into(),
                3 => ("NHC", "HIO", "NHC").into(),
                4 => ("NHWC", "HWIO", "NHWC").into(),
                5 => ("NHWDC", "HWDIO", "NHWDC").into(),
                _ => {
                    return value_error("No 4+ dimensional dimension_number defaults.".into());
                }
            },
        };
        let d = conv_dimension_numbers(lhs.shape(), rhs.shape(), &dn)?;
        let k_sdims: Vec<i64> = Dn::sdims(&d.rhs)
            .iter()
            .map(|&i| rhs.shape().get(i).copied().unwrap_or(0) as i64)
            .collect();
        let rhs_dilation = self
            .rhs_dilation
            .clone()
            .unwrap_or_else(|| vec![1; rhs.ndim() - 2]);
        let dilated: Vec<i64> = k_sdims
            .iter()
            .zip(&rhs_dilation)
            .map(|(&k, &r)| dilate_dim(i128::from(k), i128::from(r)) as i64)
            .collect();
        let pads: Padding = match &self.padding {
            p @ (Padding::Same | Padding::Valid) => Padding::Explicit(
                dilated
                    .iter()
                    .zip(&self.strides)
                    .map(|(&k, &s)| transpose_padding(k, s, *p == Padding::Same))
                    .collect(),
            ),
            Padding::Explicit(pairs) if self.consistent_padding => Padding::Explicit(
                dilated
                    .iter()
                    .zip(pairs)
                    .map(|(&k, &(lo, hi))| (k - lo - 1, k - hi - 1))
                    .collect(),
            ),
            Padding::SameLower if self.consistent_padding => {
                return value_error("Invalid padding mode: SAME_LOWER".into());
            }
            Padding::Text(t) if self.consistent_padding => {
                return value_error(format!("Invalid padding mode: {t}"));
            }
            other => other.clone(),
        };
        let mut rhs = rhs.clone();
        if self.transpose_kernel {
            for &axis in Dn::sdims(&d.rhs) {
                rhs = bind1(
                    &super::REV,
                    &[&rhs],
                    &Params::new().with("dimensions", Param::Ints(vec![axis as i64])),
                )?;
            }
            let mut perm: Vec<i64> = (0..rhs.ndim() as i64).collect();
            perm.swap(d.rhs[0], d.rhs[1]);
            rhs = bind1(
                &super::TRANSPOSE,
                &[&rhs],
                &Params::new().with("permutation", Param::Ints(perm)),
            )?;
        }
        let one = vec![1; lhs.ndim() - 2];
        let mut c = ConvGeneralDilated::new(&one, pads)
            .lhs_dilation(&self.strides)
            .rhs_dilation(&rhs_dilation)
            .dimension_numbers(DimensionNumbers::Specs {
                lhs: d.lhs,
                rhs: d.rhs,
                out: d.out,
            });
        c.precision = self.precision;
        c.preferred_element_type = self.preferred_element_type;
        c.apply(lhs, &rhs)
    }
}

/// `jax.lax.conv_transpose(lhs, rhs, strides, padding)` with the default keyword arguments
/// ([`ConvTranspose`] for the others).
///
/// ```
/// use dtype_lattice_array::{Array, lax};
/// let x = Array::from_shape_vec(&[1, 3, 1], vec![1.0f32, 2.0, 3.0])?;
/// let w = Array::from_shape_vec(&[1, 1, 1], vec![1.0f32])?;
/// let y = lax::conv_transpose(&x, &w, &[2], "VALID")?;
/// assert_eq!(y.to_vec::<f32>()?, [1.0, 0.0, 2.0, 0.0, 3.0, 0.0]);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`ConvTranspose::apply`].
pub fn conv_transpose(
    lhs: &Array,
    rhs: &Array,
    strides: &[i64],
    padding: impl Into<Padding>,
) -> Result<Array, Error> {
    ConvTranspose::new(strides, padding).apply(lhs, rhs)
}

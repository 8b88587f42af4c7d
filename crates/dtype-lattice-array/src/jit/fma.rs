//! The fused multiply-add of compiled `jit` plans: XLA's CPU backend lets LLVM contract a
//! float32/float64 multiply whose only use is an addition or subtraction into one fused
//! multiply-add (one rounding instead of two), as measured against JAX 0.10 on every form:
//! `a*b + c`, `c + a*b`, `a*b - c`, `c - a*b`, `-(a*b) + c`, `a*a + c` from `square` or
//! `integer_pow[y=2]`, chains of them, and `a*b + c*d` (the first product fused); a product
//! used twice in one fusion (or also returned, or reduced) is not fused. Nor is anything in
//! float16, bfloat16 or the 8-bit formats on an x86-64 CPU with AVX2 and FMA, the machine
//! modelled (XLA computes those in float32 with a conversion after each operation; a CPU
//! with AVX512-FP16 has float16 FMA instructions, and there XLA fuses float16 too: the
//! fixture generators run XLA with `--xla_cpu_max_isa=AVX2`).
//!
//! [`FMA`] is internal: jaxprs never hold it (JAX's print `mul` and `add`); `jit::plan`
//! substitutes it for such pairs when it compiles a jaxpr under JAX's rules, so that a jitted
//! function computes XLA's bits. `round(±a·b ± c)`: denormal operands read as zeros and a
//! denormal result flushed. A NaN operand gives the first NaN of `a`, `b`, `c`, quieted.

use dtype_lattice::{DType, Error};

use crate::array::{Array, ShapedArray, Storage};
use crate::core::{Avals, Outputs, Param, Params, Primitive};
use crate::kernels::fast::Side;
use crate::lax::elementwise::lanes::{flush32, flush64};
use crate::lax::elementwise::{broadcast_operands, broadcasting_shape};

/// The parameter that negates the product (`c - a*b`, `-(a*b) + c`).
pub(crate) const NEG_PRODUCT: &str = "negate_product";
/// The parameter that negates the addend (`a*b - c`).
pub(crate) const NEG_ADDEND: &str = "negate_addend";

/// Whether XLA contracts products of this dtype (on the CPU modelled: see the module
/// documentation).
pub(crate) fn contracts(dtype: DType) -> bool {
    matches!(dtype, DType::Float32 | DType::Float64)
}

fn flag(params: &Params, name: &str) -> bool {
    matches!(params.get(name), Some(Param::Bool(true)))
}

fn shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    _: &Params,
) -> Result<Avals, Error> {
    let d = inputs[0].dtype();
    if !contracts(d) || inputs.iter().any(|a| a.dtype() != d) {
        return Err(crate::array::invalid(
            prim.name,
            format!("operands of {d} are not float32 or float64 alike"),
        ));
    }
    let shape = broadcasting_shape(prim.name, inputs)?;
    let weak = inputs.iter().all(|a| a.weak_type());
    Ok(smallvec::smallvec![ShapedArray::new(&shape, d, weak)])
}

/// `±x·y ± z` rounded once, NaN operands first (quieted); `sign_p`/`sign_z` are ±1.
macro_rules! fused {
    ($x:expr, $y:expr, $z:expr, $sign_p:expr, $sign_z:expr) => {{
        let (x, y, z) = ($x, $y, $z);
        // Every value computed, then selected (the first NaN operand, quieted, wins): the
        // loop stays branch-free, so it vectorises.
        let r = ($sign_p * x).mul_add(y, $sign_z * z);
        let r = if z.is_nan() { z + z } else { r };
        let r = if y.is_nan() { y + y } else { r };
        if x.is_nan() { x + x } else { r }
    }};
}

/// One float32 element of [`fma32_into`].
#[inline(always)]
pub(super) fn f32_word(a: u32, b: u32, c: u32, sp: f32, sz: f32) -> u32 {
    let f = |w| flush32(f32::from_bits(w));
    let r = fused!(f(a), f(b), f(c), sp, sz);
    flush32(r).to_bits()
}

/// One float64 element of [`fma64_into`].
#[inline(always)]
pub(super) fn f64_word(a: u64, b: u64, c: u64, sp: f64, sz: f64) -> u64 {
    let f = |w| flush64(f64::from_bits(w));
    let r = fused!(f(a), f(b), f(c), sp, sz);
    flush64(r).to_bits()
}

/// The signs of the product and the addend (±1) from [`FMA`]'s parameters.
pub(super) fn signs(params: &Params) -> (f64, f64) {
    let sign = |neg: bool| if neg { -1.0 } else { 1.0 };
    (
        sign(flag(params, NEG_PRODUCT)),
        sign(flag(params, NEG_ADDEND)),
    )
}

/// float32 `round(±a·b ± c)` of three sides into `out` (the signs of [`signs`]).
pub(super) fn fma32_into(
    (sp, sz): (f64, f64),
    a: Side<'_, u32>,
    b: Side<'_, u32>,
    c: Side<'_, u32>,
    out: &mut [u32],
) {
    let (sp, sz) = (sp as f32, sz as f32);
    crate::kernels::simd::zip3_sides(a, b, c, out, |a, b, c| f32_word(a, b, c, sp, sz));
}

/// float64 `round(±a·b ± c)` of three sides into `out` (the signs of [`signs`]).
pub(super) fn fma64_into(
    (sp, sz): (f64, f64),
    a: Side<'_, u64>,
    b: Side<'_, u64>,
    c: Side<'_, u64>,
    out: &mut [u64],
) {
    crate::kernels::simd::zip3_sides(a, b, c, out, |a, b, c| f64_word(a, b, c, sp, sz));
}

fn impl_rule(
    _: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    avals: &[ShapedArray],
) -> Result<Outputs, Error> {
    let out = &avals[0];
    let ins = broadcast_operands(inputs, out.shape())?;
    let n = out.size();
    let data = match (ins[0].storage(), ins[1].storage(), ins[2].storage()) {
        (Storage::W32(a), Storage::W32(b), Storage::W32(c)) if out.dtype() == DType::Float32 => {
            Storage::words::<u32>(n, |o| {
                fma32_into(
                    signs(params),
                    Side::Words(a),
                    Side::Words(b),
                    Side::Words(c),
                    o,
                );
            })
        }
        (Storage::W64(a), Storage::W64(b), Storage::W64(c)) if out.dtype() == DType::Float64 => {
            Storage::words::<u64>(n, |o| {
                fma64_into(
                    signs(params),
                    Side::Words(a),
                    Side::Words(b),
                    Side::Words(c),
                    o,
                );
            })
        }
        _ => {
            return Err(crate::array::invalid(
                "fma",
                format!("operands of {} are not float32 or float64", out.dtype()),
            ));
        }
    };
    Ok(smallvec::smallvec![Array::from_parts(out.clone(), data)])
}

/// `fma(a, b, c)` = `round(±a·b ± c)` (see the module documentation): internal to jit's plan.
pub(crate) static FMA: Primitive = Primitive::new("fma", Some(3), shape_rule, impl_rule);

/// Whether a float word is neither NaN nor subnormal (what the rank-one kernel's fast path
/// asks of the product's operands).
trait Clean: Copy {
    fn clean(self) -> bool;
}

impl Clean for u32 {
    #[inline(always)]
    fn clean(self) -> bool {
        let e = self & 0x7f80_0000;
        let m = self & 0x007f_ffff;
        m == 0 || (e != 0 && e != 0x7f80_0000)
    }
}

impl Clean for u64 {
    #[inline(always)]
    fn clean(self) -> bool {
        let e = self & 0x7ff0_0000_0000_0000;
        let m = self & 0x000f_ffff_ffff_ffff;
        m == 0 || (e != 0 && e != 0x7ff0_0000_0000_0000)
    }
}

/// `fma(a, b, c)` on a row of the product where `a` (the row's one element) and `b` are
/// [`Clean`]: only `c` is flushed and tested for NaN. The same bits as [`f32_word`] there
/// (flushing a clean operand changes nothing, and neither is a NaN to choose).
#[inline(always)]
fn f32_clean(a: u32, b: u32, c: u32, sp: f32, sz: f32) -> u32 {
    let z = flush32(f32::from_bits(c));
    let r = (sp * f32::from_bits(a)).mul_add(f32::from_bits(b), sz * z);
    flush32(if z.is_nan() { z + z } else { r }).to_bits()
}

/// [`f32_clean`] for float64.
#[inline(always)]
fn f64_clean(a: u64, b: u64, c: u64, sp: f64, sz: f64) -> u64 {
    let z = flush64(f64::from_bits(c));
    let r = (sp * f64::from_bits(a)).mul_add(f64::from_bits(b), sz * z);
    flush64(if z.is_nan() { z + z } else { r }).to_bits()
}

/// The sizes of a rank-one update's operands: `a` and `b` whose shapes, joined, are `z`'s.
fn rank_one_sizes(a: &ShapedArray, b: &ShapedArray, z: &ShapedArray) -> Option<(usize, usize)> {
    let joined: Vec<usize> = a.shape().iter().chain(b.shape()).copied().collect();
    let d = z.dtype();
    (joined == z.shape() && a.dtype() == d && b.dtype() == d && contracts(d))
        .then(|| (a.size(), b.size()))
}

fn outer_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    _: &Params,
) -> Result<Avals, Error> {
    let [a, b, z] = inputs else {
        return Err(crate::array::invalid(prim.name, "takes three operands"));
    };
    if rank_one_sizes(a, b, z).is_none() {
        return Err(crate::array::invalid(
            prim.name,
            format!("operands {a}, {b} are not the factors of an update of {z}"),
        ));
    }
    let weak = inputs.iter().all(|x| x.weak_type());
    Ok(smallvec::smallvec![ShapedArray::new(
        z.shape(),
        z.dtype(),
        weak
    )])
}

/// [`OUTER_FMA`]: its kernel where it covers the operands, else (the definition) [`FMA`] on
/// the broadcast operands.
fn outer_impl_rule(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    avals: &[ShapedArray],
) -> Result<Outputs, Error> {
    let ([a, b, z], [out]) = (inputs, avals) else {
        return Err(crate::array::invalid(prim.name, "takes three operands"));
    };
    let (m, n) = rank_one_sizes(a.aval(), b.aval(), z.aval()).ok_or_else(|| {
        crate::array::invalid(prim.name, "operands are not the factors of the update")
    })?;
    let d = out.dtype();
    // The kernel on the operands as they are, where it covers them.
    let ins = [a.aval().clone(), b.aval().clone(), z.aval().clone()];
    if let Some(crate::core::Prepared::Kernel(k)) = outer_prepare(prim, params, &ins, out) {
        let ops = [*a, *b, *z].map(crate::core::Operand::of);
        let width = crate::array::layout(d).0;
        let mut buf = vec![0u64; (m * n * width).div_ceil(8)];
        let bytes = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut buf)[..m * n * width];
        if k(&ops, bytes) {
            let data = Storage::from_bytes(width, bytes);
            return Ok(smallvec::smallvec![Array::from_parts(out.clone(), data)]);
        }
    }
    let view = |x: &Array, shape: &[usize]| {
        Array::from_parts(ShapedArray::new(shape, d, false), x.storage().clone())
    };
    let (a, b, z) = (view(a, &[m, 1]), view(b, &[1, n]), view(z, &[m, n]));
    let flat = ShapedArray::new(&[m, n], d, out.weak_type());
    let r = impl_rule(&FMA, &[&a, &b, &z], params, std::slice::from_ref(&flat))?;
    let data = r
        .first()
        .map(|x| x.storage().clone())
        .ok_or_else(|| crate::array::invalid(prim.name, "no result"))?;
    Ok(smallvec::smallvec![Array::from_parts(out.clone(), data)])
}

/// The update on words: each row `i` is `fma(a[i], b[j], z[i][j])`, by the `clean` form
/// where `a[i]` and every `b[j]` are [`Clean`], else by the full `word`.
fn rank_one<W: Clean + bytemuck::Pod>(
    ops: &[crate::core::Operand<'_>],
    out: &mut [u8],
    (m, n): (usize, usize),
    clean: impl Fn(W, W, W) -> W + Copy,
    word: impl Fn(W, W, W) -> W + Copy,
) -> bool {
    let [a, b, z] = ops else { return false };
    let (Ok(a), Ok(b), Ok(z), Ok(out)) = (
        bytemuck::try_cast_slice::<u8, W>(a.bytes),
        bytemuck::try_cast_slice::<u8, W>(b.bytes),
        bytemuck::try_cast_slice::<u8, W>(z.bytes),
        bytemuck::try_cast_slice_mut::<u8, W>(out),
    ) else {
        return false;
    };
    if a.len() != m || b.len() != n || z.len() != m * n || out.len() != m * n || n == 0 {
        return false;
    }
    let b_clean = b.iter().all(|w| w.clean());
    if b_clean && a.iter().all(|w| w.clean()) {
        crate::kernels::simd::rows_into(a, b, z, out, clean);
        return true;
    }
    for ((&x, zr), or) in a.iter().zip(z.chunks_exact(n)).zip(out.chunks_exact_mut(n)) {
        if b_clean && x.clean() {
            crate::kernels::simd::zip_into(b, zr, or, |y, c| clean(x, y, c));
        } else {
            crate::kernels::simd::zip3_sides(
                Side::Scalar(x),
                Side::Words(b),
                Side::Words(zr),
                or,
                word,
            );
        }
    }
    true
}

/// The prepare rule: [`rank_one`] for float32 and float64.
fn outer_prepare(
    _: &'static Primitive,
    params: &Params,
    ins: &[ShapedArray],
    out: &ShapedArray,
) -> Option<crate::core::Prepared> {
    let [a, b, z] = ins else { return None };
    let mn = rank_one_sizes(a, b, z)?;
    let (sp, sz) = signs(params);
    let kernel: crate::core::PreparedKernel = match out.dtype() {
        DType::Float32 => {
            let (sp, sz) = (sp as f32, sz as f32);
            Box::new(move |ops, o| {
                rank_one::<u32>(
                    ops,
                    o,
                    mn,
                    move |a, b, c| f32_clean(a, b, c, sp, sz),
                    move |a, b, c| f32_word(a, b, c, sp, sz),
                )
            })
        }
        DType::Float64 => Box::new(move |ops, o| {
            rank_one::<u64>(
                ops,
                o,
                mn,
                move |a, b, c| f64_clean(a, b, c, sp, sz),
                move |a, b, c| f64_word(a, b, c, sp, sz),
            )
        }),
        _ => return None,
    };
    Some(crate::core::Prepared::Kernel(kernel))
}

/// `outer_fma(a, b, z)`: [`FMA`] of `broadcast(a)` (its dimensions first), `broadcast(b)`
/// (its dimensions after `a`'s) and `z`, a rank-one update such as a gradient's `W += h ⊗ g`,
/// reading `a` and `b` where they are (XLA fuses the broadcasts into the loop that updates
/// `z`). The same elements in the same operations as [`FMA`] of the broadcasts; internal to
/// jit's plan (`plan::rank_one_updates`).
pub(crate) static OUTER_FMA: Primitive =
    Primitive::new("outer_fma", Some(3), outer_shape_rule, outer_impl_rule).prepare(outer_prepare);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::bind1;

    fn arr<T: crate::array::Element>(v: Vec<T>) -> Array {
        Array::from_vec(v)
    }

    /// Exact products and sums agree with the two primitives; an inexact product rounds
    /// once; the signs, NaNs, a scalar operand, float64; no 16-bit floats.
    #[test]
    fn fused_products_round_once() {
        let fma = |a: &Array, b: &Array, c: &Array, np: bool, na: bool| {
            let p = Params::new()
                .with(NEG_PRODUCT, Param::Bool(np))
                .with(NEG_ADDEND, Param::Bool(na));
            bind1(&FMA, &[a, b, c], &p).unwrap()
        };
        let (a, b, c) = (
            arr(vec![1.5f32, 3.0, 1.0 + f32::EPSILON, 1e-40, f32::NAN]),
            arr(vec![2.0f32, -0.5, 1.0 - f32::EPSILON, 2.0, 1.0]),
            arr(vec![0.25f32, 1.0, -1.0, 1.0, f32::NAN]),
        );
        let got = fma(&a, &b, &c, false, false).to_vec::<f32>().unwrap();
        // (1 + e)(1 - e) - 1 = -e^2 exactly: the two-step form would give 0.
        assert_eq!(got[..4], [3.25, -0.5, -f32::EPSILON * f32::EPSILON, 1.0]);
        assert!(got[4].is_nan());
        let (mul, add) = (&crate::lax::MUL, &crate::lax::ADD);
        let two_step = bind1(
            add,
            &[&bind1(mul, &[&a, &b], &Params::new()).unwrap(), &c],
            &Params::new(),
        )
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
        assert_eq!(two_step[2], 0.0);
        let neg = fma(&a, &b, &c, true, true).to_vec::<f32>().unwrap();
        assert_eq!(neg[..2], [-3.25, 0.5]);
        // A scalar addend broadcasts; float64 and float16.
        let x = arr(vec![1.0f64 + f64::EPSILON, 2.0]);
        let y = arr(vec![1.0f64 - f64::EPSILON, 3.0]);
        let got = fma(&x, &y, &Array::scalar(-1.0f64), false, false)
            .to_vec::<f64>()
            .unwrap();
        assert_eq!(got, [-f64::EPSILON * f64::EPSILON, 5.0]);
        // Not for 16-bit floats.
        let b16 = Array::scalar(half::bf16::ONE);
        assert!(crate::lax::bind(&FMA, &[&b16, &b16, &b16], &Params::new()).is_err());
        let f16 = Array::scalar(half::f16::ONE);
        assert!(crate::lax::bind(&FMA, &[&f16, &f16, &f16], &Params::new()).is_err());
    }

    /// `outer_fma`'s kernel (both of its paths) and its implementation compute what `fma`
    /// computes on the broadcast operands, bit for bit: float32 and float64, every sign, NaNs
    /// (of either sign) and subnormals in each operand, operands of two dimensions.
    #[test]
    fn rank_one_updates_compute_what_fma_of_broadcasts_computes() {
        use crate::lax::BROADCAST_IN_DIM;
        let specials = [
            1.5,
            -0.0,
            f64::NAN,
            -f64::NAN,
            1e-310,
            f64::INFINITY,
            0.3,
            -2.0,
        ];
        for d in [DType::Float32, DType::Float64] {
            let tiny = if d == DType::Float32 { 1e-41 } else { 1e-310 };
            let vals = |shape: &[usize], seed: usize, special: Option<usize>| {
                let n: usize = shape.iter().product();
                let v: Vec<f64> = (0..n)
                    .map(|i| match special {
                        Some(k) if i == k % n => {
                            let s = specials[(seed + i) % specials.len()];
                            if s == 1e-310 { tiny } else { s }
                        }
                        _ => ((i * 7 + seed) as f64 * 0.37).sin(),
                    })
                    .collect();
                if d == DType::Float32 {
                    let v: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                    Array::from_shape_vec(shape, v).unwrap()
                } else {
                    Array::from_shape_vec(shape, v).unwrap()
                }
            };
            for case in 0..24 {
                let special = |k: usize| (case % 4 == k).then_some(case / 4 + k);
                let a = vals(&[2, 3], case, special(1));
                let b = vals(&[5], case + 1, special(2));
                let z = vals(&[2, 3, 5], case + 2, special(3));
                for (np, na) in [(false, false), (true, false), (false, true), (true, true)] {
                    let p = Params::new()
                        .with(NEG_PRODUCT, Param::Bool(np))
                        .with(NEG_ADDEND, Param::Bool(na));
                    let bcast = |x: &Array, dims: Vec<i64>| {
                        let q = Params::new()
                            .with("shape", Param::Ints(vec![2, 3, 5]))
                            .with("broadcast_dimensions", Param::Ints(dims))
                            .with("sharding", Param::None);
                        bind1(&BROADCAST_IN_DIM, &[x], &q).unwrap()
                    };
                    let want = bind1(&FMA, &[&bcast(&a, vec![0, 1]), &bcast(&b, vec![2]), &z], &p)
                        .unwrap();
                    let got = bind1(&OUTER_FMA, &[&a, &b, &z], &p).unwrap();
                    assert_eq!(got.as_bytes(), want.as_bytes(), "{d} case {case} {np} {na}");
                    assert_eq!(got.aval(), want.aval());
                    // The definition (FMA of the broadcasts) where the kernel does not run.
                    let avals = [a.aval(), b.aval(), z.aval()];
                    let out = OUTER_FMA.abstract_eval(&avals, &p).unwrap();
                    let k = outer_prepare(&OUTER_FMA, &p, &avals.map(Clone::clone), &out[0]);
                    assert!(k.is_some());
                }
            }
        }
    }

    /// The plan reads the factors of an outer product added to an array where they are: one
    /// `outer_fma`, no broadcast left, the eager bits.
    #[test]
    fn plans_update_by_rank_one() {
        let f = |(a, b, z): (Array, Array, Array)| -> Result<Array, Error> {
            crate::numpy::add(&z, crate::lax::outer_product(&a, &b)?)
        };
        let args = (
            Array::from_vec(vec![0.5f32, -1.25, 3.0]),
            Array::from_vec(vec![1.0f32 / 3.0, 0.1, -7.0, 1e-3]),
            Array::from_shape_vec(&[3, 4], (0..12).map(|i| i as f32 * 0.21).collect()).unwrap(),
        );
        let j = crate::make_jaxpr(f, &args).unwrap();
        let exe = super::super::plan::Executable::compile(&j).unwrap();
        let names: Vec<&str> = exe
            .steps
            .iter()
            .filter_map(|(s, _)| match s {
                super::super::plan::Step::Call(c) => Some(c.prim.name),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["outer_fma"], "{j}");
        let jitted: Array = crate::jit(f).call(&args).unwrap();
        let eager = f(args.clone()).unwrap();
        assert_eq!(jitted.as_bytes().len(), eager.as_bytes().len());
        // Contracted (one rounding) where eager rounds twice; here the same as FMA's.
        let fused = bind1(
            &FMA,
            &[
                &crate::numpy::reshape(&args.0, &[3, 1]).unwrap(),
                &crate::numpy::reshape(&args.1, &[1, 4]).unwrap(),
                &args.2,
            ],
            &Params::new(),
        )
        .unwrap();
        assert_eq!(jitted.as_bytes(), fused.as_bytes());
    }
}

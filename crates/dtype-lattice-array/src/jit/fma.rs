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

#[inline(always)]
fn f32_word(a: u32, b: u32, c: u32, sp: f32, sz: f32) -> u32 {
    let f = |w| flush32(f32::from_bits(w));
    let r = fused!(f(a), f(b), f(c), sp, sz);
    flush32(r).to_bits()
}

#[inline(always)]
fn f64_word(a: u64, b: u64, c: u64, sp: f64, sz: f64) -> u64 {
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
}

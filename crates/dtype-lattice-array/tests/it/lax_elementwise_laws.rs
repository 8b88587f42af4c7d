//! Laws of the elementwise primitives, by property testing: `select_n` picks its cases,
//! `clamp` stays within its bounds, `bitcast_convert_type` round-trips, integer arithmetic
//! wraps, and the low-precision formats agree with float32 arithmetic rounded once.

use dtype_lattice::DType;
use dtype_lattice_array::Array;
use dtype_lattice_array::core::{self, Param, Params};
use dtype_lattice_array::registry;
use proptest::prelude::*;

fn bind1(name: &str, inputs: &[&Array], params: &Params) -> Array {
    let p = registry::by_name(name).unwrap();
    core::bind(p, inputs, params).unwrap().remove(0)
}

fn bitcast(x: &Array, to: DType) -> Array {
    bind1(
        "bitcast_convert_type",
        &[x],
        &Params::new().with("new_dtype", Param::DType(to)),
    )
}

proptest! {
    /// `select_n(which, a, b)` is `b` where `which` holds, `a` elsewhere.
    #[test]
    fn select_n_picks(v in prop::collection::vec((any::<bool>(), any::<i32>(), any::<i32>()), 0..40)) {
        let which = Array::from_vec(v.iter().map(|t| t.0).collect());
        let a = Array::from_vec(v.iter().map(|t| t.1).collect());
        let b = Array::from_vec(v.iter().map(|t| t.2).collect());
        let r = bind1("select_n", &[&which, &a, &b], &Params::new()).to_vec::<i32>().unwrap();
        for (i, t) in v.iter().enumerate() {
            prop_assert_eq!(r[i], if t.0 { t.2 } else { t.1 });
        }
    }

    /// `clamp(lo, x, hi)` lies in `[lo, hi]` when `lo <= hi`, and is `x` when `x` does.
    #[test]
    fn clamp_within_bounds(v in prop::collection::vec(any::<i16>(), 1..40), lo in any::<i16>(), span in 0i16..1000) {
        let hi = lo.saturating_add(span);
        let x = Array::from_vec(v.clone());
        let r = bind1("clamp", &[&Array::scalar(lo), &x, &Array::scalar(hi)], &Params::new())
            .to_vec::<i16>()
            .unwrap();
        for (a, b) in v.iter().zip(&r) {
            prop_assert!(lo <= *b && *b <= hi);
            if lo <= *a && *a <= hi {
                prop_assert_eq!(a, b);
            }
        }
    }

    /// Bitcasting to another type of the same width and back, or to bytes and back, is the
    /// identity on the bits (NaN payloads included).
    #[test]
    fn bitcast_round_trips(v in prop::collection::vec(any::<u32>(), 0..40)) {
        let x = Array::from_vec(v.clone());
        let f = bitcast(&x, DType::Float32);
        prop_assert_eq!(bitcast(&f, DType::UInt32).to_vec::<u32>().unwrap(), v.clone());
        let bytes = bitcast(&x, DType::UInt8);
        prop_assert_eq!(bytes.shape(), &[v.len(), 4][..]);
        prop_assert_eq!(bytes.as_bytes(), x.as_bytes());
        prop_assert_eq!(bitcast(&bytes, DType::UInt32).to_vec::<u32>().unwrap(), v);
    }

    /// int8 arithmetic wraps; division truncates toward zero; `x == (x / y) * y + x % y`.
    #[test]
    fn int_division_identity(v in prop::collection::vec((any::<i8>(), any::<i8>()), 1..40)) {
        let x = Array::from_vec(v.iter().map(|t| t.0).collect());
        let y = Array::from_vec(v.iter().map(|t| t.1).collect());
        let q = bind1("div", &[&x, &y], &Params::new()).to_vec::<i8>().unwrap();
        let r = bind1("rem", &[&x, &y], &Params::new()).to_vec::<i8>().unwrap();
        for (i, (a, b)) in v.iter().enumerate() {
            if *b != 0 {
                prop_assert_eq!(q[i].wrapping_mul(*b).wrapping_add(r[i]), *a);
                prop_assert_eq!(q[i], a.wrapping_div(*b));
            }
        }
    }

    /// float16 `mul` is float32 multiplication rounded once to nearest even.
    #[test]
    fn float16_mul_rounds_once(v in prop::collection::vec((any::<u16>(), any::<u16>()), 1..40)) {
        let a: Vec<half::f16> = v.iter().map(|t| half::f16::from_bits(t.0)).collect();
        let b: Vec<half::f16> = v.iter().map(|t| half::f16::from_bits(t.1)).collect();
        let r = bind1("mul", &[&Array::from_vec(a.clone()), &Array::from_vec(b.clone())], &Params::new())
            .to_vec::<half::f16>()
            .unwrap();
        for i in 0..a.len() {
            let want = half::f16::from_f32(a[i].to_f32() * b[i].to_f32());
            prop_assert!(want.is_nan() && r[i].is_nan() || want.to_bits() == r[i].to_bits());
        }
    }

    /// Shifts by the bit width or more give 0 (or the sign for arithmetic right shifts).
    #[test]
    fn wide_shifts_empty(x in any::<i32>(), s in 32i32..200) {
        let xa = Array::from_vec(vec![x]);
        let sa = Array::from_vec(vec![s]);
        let l = bind1("shift_left", &[&xa, &sa], &Params::new()).to_vec::<i32>().unwrap();
        let r = bind1("shift_right_logical", &[&xa, &sa], &Params::new()).to_vec::<i32>().unwrap();
        let a = bind1("shift_right_arithmetic", &[&xa, &sa], &Params::new()).to_vec::<i32>().unwrap();
        prop_assert_eq!((l[0], r[0], a[0]), (0, 0, if x < 0 { -1 } else { 0 }));
    }
}

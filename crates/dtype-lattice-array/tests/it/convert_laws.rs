//! Laws of the float encoders, for both semantics (proptest): for every float dtype of at most
//! 16 bits and finite float32 inputs in its range, `decode(encode(x))` is a representable value
//! nearest to `x`; encoding is monotone; every representable value round-trips.

use dtype_lattice::DType;
use dtype_lattice_array::convert::{self, Semantics, decode_f64, element_size};
use proptest::prelude::*;

const NARROW: [DType; 13] = [
    DType::Float4E2M1Fn,
    DType::Float6E2M3Fn,
    DType::Float6E3M2Fn,
    DType::Float8E3M4,
    DType::Float8E4M3,
    DType::Float8E4M3B11Fnuz,
    DType::Float8E4M3Fn,
    DType::Float8E4M3Fnuz,
    DType::Float8E5M2,
    DType::Float8E5M2Fnuz,
    DType::Float8E8M0Fnu,
    DType::BFloat16,
    DType::Float16,
];
const SEMS: [Semantics; 2] = [Semantics::Jax, Semantics::NumPy];

/// A finite value and its code.
type Coded = (f64, Vec<u8>);

/// Every finite value of `t`, sorted, with its code (computed once per dtype).
fn values(t: DType) -> &'static [Coded] {
    static CACHE: std::sync::OnceLock<Vec<Vec<Coded>>> = std::sync::OnceLock::new();
    let all = CACHE.get_or_init(|| NARROW.iter().map(|t| values_of(*t)).collect());
    &all[NARROW.iter().position(|u| *u == t).unwrap()]
}

fn values_of(t: DType) -> Vec<(f64, Vec<u8>)> {
    let w = element_size(t).unwrap();
    let bits = t.info().bits;
    let mut v: Vec<(f64, Vec<u8>)> = (0..1u32 << bits)
        .map(|c| c.to_le_bytes()[..w].to_vec())
        .map(|b| (decode_f64(t, &b).unwrap(), b))
        .filter(|(x, _)| x.is_finite())
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

fn enc(sem: Semantics, t: DType, x: f32) -> f64 {
    let mut out = vec![0u8; element_size(t).unwrap()];
    convert::encode_f32(sem, t, x, &mut out).unwrap();
    decode_f64(t, &out).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// In range (between the smallest and largest finite value, and above the smallest
    /// positive value for float8_e8m0fnu, which has no zero), the result is a nearest value.
    #[test]
    fn nearest(k in any::<usize>(), frac in 0.0..=1.0f64, ti in 0..NARROW.len(), si in 0..2usize) {
        let (t, sem) = (NARROW[ti], SEMS[si]);
        let vals = values(t);
        let (lo, hi) = (vals[0].0, vals[vals.len() - 1].0);
        // A float32 between two consecutive values (ties and their neighbours included).
        let i = k % (vals.len() - 1);
        let x = ((vals[i].0 + frac * (vals[i + 1].0 - vals[i].0)) as f32).clamp(lo as f32, hi as f32);
        let xf = f64::from(x);
        // Both libraries round float8_e8m0fnu's lowest binade, (2^-127, 2^-126), up.
        prop_assume!(t != DType::Float8E8M0Fnu || xf >= f64::from(f32::MIN_POSITIVE) || xf == lo);
        let y = enc(sem, t, x);
        let best = vals.iter().map(|(v, _)| (v - xf).abs()).fold(f64::INFINITY, f64::min);
        prop_assert!(y.is_finite(), "{t} {sem:?} {x:e} -> {y}");
        prop_assert_eq!((y - xf).abs(), best, "{} {:?} {:e} -> {}", t, sem, x, y);
    }

    /// x <= y implies encode(x) <= encode(y) (finite results, numeric order; -0 == +0).
    #[test]
    fn monotone(a in any::<u32>(), b in any::<u32>(), ti in 0..NARROW.len(), si in 0..2usize) {
        let (t, sem) = (NARROW[ti], SEMS[si]);
        let (x, y) = (f32::from_bits(a), f32::from_bits(b));
        prop_assume!(x.is_finite() && y.is_finite());
        let (x, y) = if x <= y { (x, y) } else { (y, x) };
        let (ex, ey) = (enc(sem, t, x), enc(sem, t, y));
        prop_assume!(!ex.is_nan() && !ey.is_nan());
        prop_assert!(ex <= ey, "{t} {sem:?}: {x:e} -> {ex}, {y:e} -> {ey}");
    }
}

/// Every finite value of every narrow format converts to float32 and back to its own code
/// (the canonical code: -0 of the `fnuz` formats does not exist), under both semantics.
#[test]
fn representable_values_round_trip() {
    for t in NARROW {
        for sem in SEMS {
            for (v, code) in values(t) {
                let (v, f) = (*v, *v as f32);
                assert_eq!(f64::from(f), v);
                let mut out = vec![0u8; code.len()];
                convert::encode_f32(sem, t, f, &mut out).unwrap();
                assert_eq!(
                    decode_f64(t, &out).unwrap().to_bits(),
                    v.to_bits(),
                    "{t} {sem:?} {v}"
                );
                let back =
                    convert::convert_to_vec_with(sem, DType::Float32, &f.to_le_bytes(), t).unwrap();
                assert_eq!(back, out, "{t} {sem:?} {v}");
            }
        }
    }
}

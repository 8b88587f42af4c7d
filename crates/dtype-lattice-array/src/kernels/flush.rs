//! Flushing subnormals: XLA's CPU backend runs with denormals off (denormals-are-zero,
//! flush-to-zero), so its arithmetic reads a subnormal operand as a zero of its sign and writes
//! a subnormal result as one.

/// A float32 subnormal as a zero of its sign, branch-free (so that loops vectorise): how XLA's
/// CPU code reads an operand and writes a result (denormals-are-zero, flush-to-zero).
#[inline(always)]
pub(crate) fn flush32(x: f32) -> f32 {
    let b = x.to_bits();
    let keep = if b & 0x7f80_0000 == 0 {
        0x8000_0000
    } else {
        u32::MAX
    };
    f32::from_bits(b & keep)
}

/// [`flush32`] for float64.
#[inline(always)]
pub(crate) fn flush64(x: f64) -> f64 {
    let b = x.to_bits();
    let keep = if b & 0x7ff0_0000_0000_0000 == 0 {
        0x8000_0000_0000_0000
    } else {
        u64::MAX
    };
    f64::from_bits(b & keep)
}

/// Whether any of these float32 bit patterns is subnormal: `0 < |x| < 2⁻¹²⁶` is
/// `(bits & 0x7fff_ffff) - 1 < 0x007f_ffff` (unsigned; zero wraps). A branch-free fold per
/// chunk, so that the scan vectorizes and still stops at the first chunk holding one.
pub(crate) fn any_subnormal32(v: &[u32]) -> bool {
    v.chunks(256).any(|c| {
        c.iter().fold(0u32, |m, &b| {
            m | u32::from((b & 0x7fff_ffff).wrapping_sub(1) < 0x007f_ffff)
        }) != 0
    })
}

/// [`any_subnormal32`] for float64 bit patterns.
pub(crate) fn any_subnormal64(v: &[u64]) -> bool {
    v.chunks(256).any(|c| {
        c.iter().fold(0u32, |m, &b| {
            m | u32::from((b & 0x7fff_ffff_ffff_ffff).wrapping_sub(1) < 0x000f_ffff_ffff_ffff)
        }) != 0
    })
}

/// [`any_subnormal32`] for bfloat16 bit patterns.
pub(crate) fn any_subnormal_bf16(v: &[u16]) -> bool {
    v.chunks(256).any(|c| {
        c.iter().fold(0u32, |m, &b| {
            m | u32::from((b & 0x7fff).wrapping_sub(1) < 0x007f)
        }) != 0
    })
}

/// Whether the little-endian `bytes` of `dtype` elements hold a subnormal of a type XLA
/// flushes (float32, float64, bfloat16; false for others). Bytes not aligned to the type's
/// words answer true (the caller then takes its flushing path).
pub(crate) fn any_subnormal(dtype: dtype_lattice::DType, bytes: &[u8]) -> bool {
    use dtype_lattice::DType;
    match dtype {
        DType::Float32 => bytemuck::try_cast_slice(bytes).map_or(true, any_subnormal32),
        DType::Float64 => bytemuck::try_cast_slice(bytes).map_or(true, any_subnormal64),
        DType::BFloat16 => bytemuck::try_cast_slice(bytes).map_or(true, any_subnormal_bf16),
        _ => false,
    }
}

#[cfg(test)]
mod scan_tests {
    use super::*;

    #[test]
    fn the_scans_find_exactly_the_subnormals() {
        for (bits, sub) in [
            (0u32, false),
            (0x8000_0000, false),
            (1, true),
            (0x8000_0001, true),
            (0x007f_ffff, true),
            (0x0080_0000, false),
            (0x7f80_0000, false),
            (0x7fc0_0000, false),
        ] {
            let mut v = vec![0x3f80_0000u32; 300];
            v[299] = bits;
            assert_eq!(any_subnormal32(&v), sub, "{bits:#x}");
            assert_eq!(any_subnormal32(&v), f32::from_bits(bits).is_subnormal());
        }
        for x in [
            0.0f64,
            -0.0,
            1.0,
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE / 2.0,
            -5e-324,
            f64::NAN,
        ] {
            assert_eq!(
                any_subnormal64(&[1f64.to_bits(), x.to_bits()]),
                x.is_subnormal(),
                "{x}"
            );
        }
        for b in 0..=u16::MAX {
            let x = half::bf16::from_bits(b);
            assert_eq!(
                any_subnormal_bf16(&[b]),
                x.to_f32().is_subnormal(),
                "{b:#x}"
            );
        }
    }
}

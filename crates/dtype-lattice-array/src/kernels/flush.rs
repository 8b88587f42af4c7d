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

//! The 8-bit float formats' `add`, `sub`, `mul` and `div` computed rather than looked up, 64
//! elements at a time with AVX-512 VBMI's byte permutes (`vpermi2b`), where this CPU has them.
//!
//! `lax::elementwise::fast` otherwise answers these operations from a 65,536-entry table of every pair
//! of operands: three loads an element, one of them into a 64 KiB table that does not fit a
//! 48 KiB L1 cache. Here each operand's codes become float32s by two 128-byte lookups (the
//! two high bytes of the float32 bits of each code's magnitude: every 8-bit format's values
//! are bfloat16 values) and one more permute per 16 elements to place them, the operation is
//! one float32 instruction (exact for `add`, `sub` and `mul`: the operands' significands are
//! short enough), and the results are rounded to the format by the AVX-512 copy of the casts'
//! float32 encoder ([`Encoder32`]) that `astype` to an 8-bit format runs too
//! (`kernels::encode_simd::avx512::encode`, driven by its constants, [`Rounding`]), and two packs
//! put four registers of sixteen codes into one store. Outputs larger than the caches are written with streaming
//! stores, as [`super::simd`] does for float32.
//!
//! [`Planes::new`] builds the lookup from the format's decoded values and refuses a format
//! whose codes do not read this way (`float8_e8m0fnu`: unsigned, and its smallest value is a
//! float32 subnormal). `lax::elementwise::fast` runs the kernel on every pair of codes before it uses
//! it and keeps the table wherever the two differ in a single bit, so this module can only
//! ever be faster, never different.
//!
//! # Why this module may use `unsafe`
//!
//! Calling a `#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]` function is only
//! sound on a CPU that has those features: the one call sits right behind the
//! `is_x86_feature_detected!` tests ([`available`]). The loads and stores are of whole
//! 64-byte blocks inside the operand and output slices (`i + 64 <= n`, lengths asserted) and
//! of the kernel's own stack buffers; the streaming stores are followed by one `sfence`
//! before the function returns. The tests compare every lane with the table on every pair of
//! codes, with scalar operands on either side, at odd lengths and offsets, streamed or not.

use super::fast::Side;
use crate::kernels::encode::{Encoder32, Rounding};

/// How one 8-bit float format's codes read as float32 bits, in two planes of 128 bytes: code
/// `c`'s bits are `(hi[c & 0x7f] | c & 0x80) << 24 | lo[c & 0x7f] << 16` (the sign bit is
/// the code's high bit), but for at most one `special` code, `(code, lo, hi)` (an fnuz
/// format's NaN, `0x80`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Planes {
    lo: [u8; 128],
    hi: [u8; 128],
    special: Option<[u8; 3]>,
}

impl Planes {
    /// The planes of a format whose codes `0..=255` have the float32 values `values` (as the
    /// generic kernel reads them), if every value is a bfloat16 value, none a float32
    /// subnormal, and the high bit of each code but one is the value's sign.
    pub(crate) fn new(values: &[f32; 256]) -> Option<Planes> {
        let bits = values.map(f32::to_bits);
        if bits
            .iter()
            .any(|&b| b & 0xffff != 0 || (b & 0x7f80_0000 == 0 && b & 0x7fff_ffff != 0))
        {
            return None;
        }
        let mut p = Planes {
            lo: [0; 128],
            hi: [0; 128],
            special: None,
        };
        for (m, b) in bits[..128].iter().enumerate() {
            p.lo[m] = (b >> 16) as u8;
            p.hi[m] = (b >> 24) as u8;
        }
        for (c, &b) in bits.iter().enumerate() {
            if p.bits(c as u8) != b {
                if p.special.is_some() || c < 128 {
                    return None;
                }
                p.special = Some([c as u8, (b >> 16) as u8, (b >> 24) as u8]);
            }
        }
        Some(p)
    }

    /// The float32 bits of code `c`.
    fn bits(&self, c: u8) -> u32 {
        let m = usize::from(c & 0x7f);
        match self.special {
            Some([s, lo, hi]) if s == c => u32::from(hi) << 24 | u32::from(lo) << 16,
            _ => u32::from(self.hi[m] | c & 0x80) << 24 | u32::from(self.lo[m]) << 16,
        }
    }
}

/// Whether this CPU has the AVX-512 subsets [`zip`] is compiled for.
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512vbmi")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// A format's `add`, `sub`, `mul` and `div` by [`zip`]: its [`Planes`], the constants of the
/// float32 encoder's rounding into it, and the codes of NaN results where the rounding's own
/// differ (`float8_e5m2`'s are all `0x7f`, as XLA computes them, where the rounding's
/// overflow path gives infinity's code).
#[derive(Clone, Debug)]
pub(crate) struct Kernel {
    planes: Planes,
    round: Rounding,
    /// The codes of NaN results with the sign bit clear and set.
    nans: [u8; 2],
}

impl Kernel {
    /// The kernel for the format whose codes have the float32 values `values`, rounded as
    /// `enc` rounds, whose NaN results of either sign are `nans`; `None` for a format
    /// [`Planes::new`] or [`Encoder32::rounding`] refuses (`float8_e8m0fnu`).
    pub(crate) fn new(values: &[f32; 256], enc: &Encoder32, nans: [u8; 2]) -> Option<Kernel> {
        Some(Kernel {
            planes: Planes::new(values)?,
            round: enc.rounding()?,
            nans,
        })
    }
}

/// `out[i] = x[i] OP y[i]` for the codes of `k`'s format (`OP` one of [`super::fast::BinOp`]'s
/// `ADD`, `SUB`, `MUL`, `DIV`), a scalar side the same for every `i`, a side of words as long
/// as `out`; `false` (nothing written) if this CPU cannot run it ([`available`]) or both sides
/// are scalars.
pub(crate) fn zip<const OP: u8>(
    k: &Kernel,
    x: Side<'_, u8>,
    y: Side<'_, u8>,
    out: &mut [u8],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if available() {
        macro_rules! on {
            ($xs:literal, $ys:literal, $x:expr, $y:expr) => {{
                // SAFETY: the CPU has AVX-512 F, BW, VL and VBMI (checked above).
                unsafe { avx512::zip::<OP, $xs, $ys>(k, $x, $y, out) };
                return true;
            }};
        }
        match (x, y) {
            (Side::Words(a), Side::Words(b)) => on!(false, false, a, b),
            (Side::Words(a), Side::Scalar(s)) => on!(false, true, a, &[s]),
            (Side::Scalar(s), Side::Words(b)) => on!(true, false, &[s], b),
            (Side::Scalar(_), Side::Scalar(_)) => {}
        }
    }
    let _ = (k, x, y, out);
    false
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::{
        __m512, __m512i, _CMP_UNORD_Q, _mm_sfence, _mm512_add_ps, _mm512_castsi512_ps,
        _mm512_cmp_ps_mask, _mm512_cmpeq_epi8_mask, _mm512_div_ps, _mm512_loadu_si512,
        _mm512_mask_mov_epi8, _mm512_mask_mov_ps, _mm512_mul_ps, _mm512_packus_epi16,
        _mm512_packus_epi32, _mm512_permutex2var_epi8, _mm512_set1_epi8, _mm512_set1_epi32,
        _mm512_setzero_si512, _mm512_storeu_si512, _mm512_sub_ps, _mm512_ternarylogic_epi32,
        _mm512_unpackhi_epi8, _mm512_unpackhi_epi16, _mm512_unpacklo_epi8, _mm512_unpacklo_epi16,
    };

    use super::Kernel;
    use crate::kernels::encode::Rounding;
    use crate::kernels::encode_simd::avx512::{Round, encode, store64};
    use crate::kernels::fast::BinOp;

    /// The kernel's constants in registers.
    #[derive(Clone, Copy)]
    struct Regs {
        lo: [__m512i; 2],
        hi: [__m512i; 2],
        special: Option<(__m512i, __m512i, __m512i)>,
        round: Round,
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
    fn regs(k: &Kernel) -> Regs {
        let load = |b: &[u8]| {
            let b: &[u8; 64] = b.try_into().expect("64 bytes");
            // SAFETY: 64 bytes read from a 64-byte array.
            unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
        };
        let (p, r) = (&k.planes, &k.round);
        let splat8 = |b: u8| _mm512_set1_epi8(b as i8);
        Regs {
            lo: [load(&p.lo[..64]), load(&p.lo[64..])],
            hi: [load(&p.hi[..64]), load(&p.hi[64..])],
            special: p
                .special
                .map(|[c, lo, hi]| (splat8(c), splat8(lo), splat8(hi))),
            round: Round::new(&Rounding { nans: k.nans, ..*r }),
        }
    }

    /// The float32s of 64 codes, 16 a register, in the order of unpacking: register `q`
    /// holds codes `16l + 4q..16l + 4q + 4` in its 128-bit lane `l` ([`pack`] restores the
    /// order; an operation of two decoded blocks pairs the same codes).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
    fn decode(r: &Regs, x: __m512i) -> [__m512; 4] {
        // `vpermi2b` reads the low seven bits of each index: the magnitude.
        let mut lo = _mm512_permutex2var_epi8(r.lo[0], x, r.lo[1]);
        let hi = _mm512_permutex2var_epi8(r.hi[0], x, r.hi[1]);
        // hi | (x & 0x80).
        let mut hi = _mm512_ternarylogic_epi32::<0xf8>(hi, x, _mm512_set1_epi8(i8::MIN));
        if let Some((code, s_lo, s_hi)) = r.special {
            let at = _mm512_cmpeq_epi8_mask(x, code);
            lo = _mm512_mask_mov_epi8(lo, at, s_lo);
            hi = _mm512_mask_mov_epi8(hi, at, s_hi);
        }
        // Bytes to the bfloat16 bits `hi << 8 | lo`, then to the high halves of float32s.
        let (w0, w1) = (_mm512_unpacklo_epi8(lo, hi), _mm512_unpackhi_epi8(lo, hi));
        let z = _mm512_setzero_si512();
        [
            _mm512_unpacklo_epi16(z, w0),
            _mm512_unpackhi_epi16(z, w0),
            _mm512_unpacklo_epi16(z, w1),
            _mm512_unpackhi_epi16(z, w1),
        ]
        .map(|v| _mm512_castsi512_ps(v))
    }

    /// The 64 codes of four registers of 16 codes a dword (at most `0xff` each) in
    /// [`decode`]'s order, back in order: the two packs invert its two unpacks lane by lane.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
    fn pack(c: [__m512i; 4]) -> __m512i {
        _mm512_packus_epi16(
            _mm512_packus_epi32(c[0], c[1]),
            _mm512_packus_epi32(c[2], c[3]),
        )
    }

    /// `a OP b` on 16 lanes; a NaN `a` is the result (as the generic kernel's `nan_first!`),
    /// whichever operand order the instruction is emitted with.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
    fn apply<const OP: u8>(a: __m512, b: __m512) -> __m512 {
        let b = _mm512_mask_mov_ps(b, _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, a), a);
        match OP {
            BinOp::ADD => _mm512_add_ps(a, b),
            BinOp::SUB => _mm512_sub_ps(a, b),
            BinOp::MUL => _mm512_mul_ps(a, b),
            BinOp::DIV => _mm512_div_ps(a, b),
            _ => unreachable!("only add, sub, mul and div"),
        }
    }

    /// The 64 codes of `a OP b` for 64 operands each (`$r` the [`Regs`], `$a` and `$b` four
    /// registers of 16 float32s each): a macro rather than a function, which LLVM would not
    /// inline into the loop.
    macro_rules! block {
        ($op:ident, $r:expr, $a:expr, $b:expr) => {{
            let (r, a, b): (&Regs, [__m512; 4], [__m512; 4]) = ($r, $a, $b);
            let c0 = encode(&r.round, apply::<$op>(a[0], b[0]));
            let c1 = encode(&r.round, apply::<$op>(a[1], b[1]));
            let c2 = encode(&r.round, apply::<$op>(a[2], b[2]));
            let c3 = encode(&r.round, apply::<$op>(a[3], b[3]));
            pack([c0, c1, c2, c3])
        }};
    }

    /// See [`super::zip`]. `XS` (`YS`): `x` (`y`) is one code standing for every element;
    /// else it has `out.len()` codes. Outputs of `STREAM_MIN_BYTES` or more are written
    /// with non-temporal stores from their first 64-byte boundary, fenced at the end.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
    pub(crate) fn zip<const OP: u8, const XS: bool, const YS: bool>(
        k: &Kernel,
        x: &[u8],
        y: &[u8],
        out: &mut [u8],
    ) {
        let n = out.len();
        assert!(x.len() == if XS { 1 } else { n } && y.len() == if YS { 1 } else { n });
        let r = regs(k);
        let splat = |v: &[u8]| {
            [_mm512_castsi512_ps(_mm512_set1_epi32(
                k.planes.bits(v.first().copied().unwrap_or(0)) as i32,
            )); 4]
        };
        let (xs, ys) = (splat(x), splat(y));
        // 64 codes from `v[i..]` (at least 64 there).
        let read = |v: &[u8], i: usize| {
            assert!(i + 64 <= v.len());
            // SAFETY: 64 bytes at `i`, inside `v` (asserted).
            unsafe { decode(&r, _mm512_loadu_si512(v.as_ptr().add(i).cast())) }
        };
        let side = |v: &[u8], scalar: bool, s: &[__m512; 4], i: usize| {
            if scalar { *s } else { read(v, i) }
        };
        // `out[i..i + m]` (`m <= 64`) through zero-padded copies.
        let few = |i: usize, out: &mut [u8]| {
            let m = out.len();
            let pad = |v: &[u8], scalar: bool| {
                let mut b = [0u8; 64];
                if !scalar {
                    b[..m].copy_from_slice(&v[i..i + m]);
                }
                b
            };
            let (px, py) = (pad(x, XS), pad(y, YS));
            let c = block!(OP, &r, side(&px, XS, &xs, 0), side(&py, YS, &ys, 0));
            let mut po = [0u8; 64];
            // SAFETY: 64 bytes into a 64-byte array.
            unsafe { _mm512_storeu_si512(po.as_mut_ptr().cast(), c) };
            out.copy_from_slice(&po[..m]);
        };
        let stream = n >= crate::kernels::simd::STREAM_MIN_BYTES;
        let head = if stream {
            out.as_ptr().align_offset(64).min(n)
        } else {
            0
        };
        few(0, &mut out[..head]);
        let mut i = head;
        while i + 64 <= n {
            let c = block!(OP, &r, side(x, XS, &xs, i), side(y, YS, &ys, i));
            // A streamed one at a 64-byte boundary (`head` plus a multiple of 64).
            store64(out, i, c, stream);
            i += 64;
        }
        few(i, &mut out[i..]);
        if stream {
            // The streamed stores are weakly ordered: fence them before anyone reads `out`.
            _mm_sfence();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::fast::BinOp;
    use crate::lax::elementwise::Op;
    use crate::lax::elementwise::fast::eight;
    use dtype_lattice::DType;

    #[test]
    fn planes_read_every_code_as_the_generic_kernel_does() {
        for dtype in [
            DType::Float8E4M3Fn,
            DType::Float8E5M2,
            DType::Float8E4M3B11Fnuz,
            DType::Float8E4M3Fnuz,
            DType::Float8E5M2Fnuz,
            DType::Float8E3M4,
            DType::Float8E4M3,
        ] {
            let values = crate::lax::elementwise::lanes::decode_table(dtype);
            let p = Planes::new(&values).unwrap_or_else(|| panic!("{}", dtype.name()));
            for c in 0..=255u8 {
                assert_eq!(
                    p.bits(c),
                    values[usize::from(c)].to_bits(),
                    "{dtype} {c:#x}"
                );
            }
            // Only the fnuz formats' NaN (0x80) is special.
            assert_eq!(
                p.special.is_some(),
                dtype.name().ends_with("fnuz"),
                "{dtype}"
            );
        }
        // Unsigned, and 2^-127 is a float32 subnormal.
        let e8m0 = crate::lax::elementwise::lanes::decode_table(DType::Float8E8M0Fnu);
        assert_eq!(Planes::new(&e8m0), None);
        // A value that is not a bfloat16 value.
        let mut odd = crate::lax::elementwise::lanes::decode_table(DType::Float8E4M3Fn);
        odd[3] = f32::from_bits(odd[3].to_bits() | 1);
        assert_eq!(Planes::new(&odd), None);
    }

    /// Every lane against the table: lengths around the 64- and 256-element blocks, at odd
    /// offsets into the operands and the output, with arrays and scalars on either side.
    #[test]
    fn every_lane_agrees_with_the_table_at_odd_lengths_and_offsets() {
        if !available() {
            eprintln!("no AVX-512 VBMI here: the kernel cannot run (the table serves)");
            return;
        }
        let codes: Vec<u8> = (0..3000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for dtype in [
            DType::Float8E4M3Fn,
            DType::Float8E5M2,
            DType::Float8E4M3Fnuz,
        ] {
            for op in [Op::Add, Op::Sub, Op::Mul, Op::Div] {
                let e = eight(op, dtype).unwrap();
                assert!(e.computed(), "{dtype} {op:?}");
                let k = e.kernel().unwrap();
                let table = e.table();
                let want = |a: u8, b: u8| table[usize::from(a) << 8 | usize::from(b)];
                let run = |x: Side<'_, u8>, y: Side<'_, u8>, out: &mut [u8]| match op {
                    Op::Add => zip::<{ BinOp::ADD }>(k, x, y, out),
                    Op::Sub => zip::<{ BinOp::SUB }>(k, x, y, out),
                    Op::Mul => zip::<{ BinOp::MUL }>(k, x, y, out),
                    _ => zip::<{ BinOp::DIV }>(k, x, y, out),
                };
                for n in [0, 1, 63, 64, 65, 255, 256, 257, 511, 1000] {
                    for off in [0, 1, 3] {
                        let (x, y) = (&codes[off..off + n], &codes[off + 7..off + 7 + n]);
                        let mut out = vec![0xa5u8; n + off];
                        assert!(run(Side::Words(x), Side::Words(y), &mut out[off..]));
                        for i in 0..n {
                            assert_eq!(out[off + i], want(x[i], y[i]), "{dtype} {op:?} {n} {i}");
                        }
                        assert!(out[..off].iter().all(|&b| b == 0xa5));
                        for s in [0x00, 0x80, 0x7f, 0xff, 0x01, 0x38, codes[n]] {
                            let mut out = vec![0u8; n];
                            assert!(run(Side::Words(x), Side::Scalar(s), &mut out));
                            assert!((0..n).all(|i| out[i] == want(x[i], s)), "{op:?} by {s:#x}");
                            assert!(run(Side::Scalar(s), Side::Words(y), &mut out));
                            assert!((0..n).all(|i| out[i] == want(s, y[i])), "{op:?} {s:#x} by");
                        }
                    }
                }
                assert!(!run(Side::Scalar(1), Side::Scalar(2), &mut [0u8; 4]));
                if op == Op::Add {
                    // Streamed: an output past `STREAM_MIN_BYTES`, 5 bytes off a line.
                    let n = crate::kernels::simd::STREAM_MIN_BYTES + 77;
                    let x: Vec<u8> = (0..n).map(|i| codes[i % 2999]).collect();
                    let y: Vec<u8> = (0..n).map(|i| codes[(i + 1) % 2999]).collect();
                    let mut out = vec![0u8; n + 64];
                    let at = 5 + out.as_ptr().align_offset(64);
                    assert!(run(Side::Words(&x), Side::Words(&y), &mut out[at..at + n]));
                    assert!(
                        (0..n).all(|i| out[at + i] == want(x[i], y[i])),
                        "{dtype} streamed"
                    );
                }
            }
        }
    }
}

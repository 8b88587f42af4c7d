//! The real functions XLA's CPU backend emits inside its complex formulas, step for step:
//! its own approximations of `exp`, `log` (float32), `tanh` and `expm1` (polynomial and
//! rational, the constants below), the `cos x − 1` series of its complex `expm1`, and glibc's
//! `pow`, `atan2`, `sin`, `cos` (and float64 `log`), which it calls (this crate reaches the
//! same glibc functions through Rust's `std` on glibc platforms; [`super::glibc`] adds their
//! subnormal cases). Each operation is one IEEE operation of the type, in XLA's order, and a
//! product whose only use is an addition or subtraction is fused into it, as LLVM contracts
//! them for x86 with FMA (of two such products, the first operand's); so on glibc the complex
//! `pow`, `tanh`, `tan` and `expm1` of [`super::math`] are XLA's results bit for bit
//! (denormals aside: XLA runs with them off, these do not flush intermediate values).
//!
//! (Read from the LLVM IR XLA 0.10.2 emits for `jnp.power`, `jnp.tanh`, `jnp.tan` and
//! `jnp.expm1` of complex64 and complex128 operands.)

/// The real arithmetic XLA's complex formulas use, per float type.
pub(crate) trait XlaReal: Copy + PartialOrd + std::ops::Neg<Output = Self> {
    /// XLA's `exp`.
    fn exp(self) -> Self;
    /// XLA's `log` (float32: its approximation; float64: glibc's).
    fn log(self) -> Self;
    /// XLA's `expm1`: `eˣ − 1` above ½ in magnitude, `tanh(x/2)·(eˣ + 1)` below, `x` at zero.
    fn expm1(self) -> Self;
    /// `cos x − 1` as XLA's complex `expm1` computes it: a series in `x²` (fused
    /// multiply-adds) below `x² = 0.61685`, glibc's `cos x − 1` above.
    fn cosm1(self) -> Self;
    /// glibc's functions.
    fn pow(self, y: Self) -> Self;
    fn atan2(self, x: Self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
}

#[inline(always)]
fn f32c(bits: u32) -> f32 {
    f32::from_bits(bits)
}

#[inline(always)]
fn f64c(bits: u64) -> f64 {
    f64::from_bits(bits)
}

/// `x` clamped to `[lo, hi]` by two selects that let NaN through.
/// `c₀·xⁿ + c₁·xⁿ⁻¹ + … + cₙ` by Horner's rule, each step one fused multiply-add, as XLA's
/// polynomials are evaluated (the coefficients as float32 bits).
#[inline(always)]
fn horner32(x: f32, cs: &[u32]) -> f32 {
    let (&c0, rest) = cs.split_first().unwrap_or((&0, &[]));
    rest.iter().fold(f32c(c0), |p, &k| x.mul_add(p, f32c(k)))
}

/// [`horner32`] in float64.
#[inline(always)]
fn horner64(x: f64, cs: &[u64]) -> f64 {
    let (&c0, rest) = cs.split_first().unwrap_or((&0, &[]));
    rest.iter().fold(f64c(c0), |p, &k| x.mul_add(p, f64c(k)))
}

#[inline(always)]
fn clamp32(x: f32, lo: f32, hi: f32) -> f32 {
    let x = if x < lo { lo } else { x };
    if x > hi { hi } else { x }
}

/// `x` clamped by LLVM's `minimum`/`maximum` (NaN propagating).
fn clamp64(x: f64, lo: f64, hi: f64) -> f64 {
    if x.is_nan() { x } else { x.min(hi).max(lo) }
}

fn exp_f32(x: f32) -> f32 {
    let x = clamp32(x, -87.8, 88.8);
    let n = clamp32(x.mul_add(f32c(0x3fb8_aa3b), 0.5).floor(), -127.0, 127.0);
    let r = (-n).mul_add(f32c(0x3f31_8000), x);
    let r = (-n).mul_add(f32c(0xb95e_8083), r);
    let r2 = r * r;
    let mut p = r.mul_add(f32c(0x3950_6967), f32c(0x3ab7_43ce));
    for c in [0x3c08_8908, 0x3d2a_a9c1, 0x3e2a_aaaa] {
        p = p.mul_add(r, f32c(c));
    }
    p = p.mul_add(r, 0.5);
    let y = p.mul_add(r2, r) + 1.0;
    // 2ⁿ from the bits (n is an integer in [-127, 127]; NaN's is immaterial).
    let scale = f32::from_bits((((n as i32) << 23) as u32).wrapping_add(0x3f80_0000));
    y * scale
}

fn log_f32(x: f32) -> f32 {
    // Denormals off: a subnormal compares equal to zero.
    if x == 0.0 || x.is_subnormal() {
        return f32::NEG_INFINITY;
    }
    if x == f32::INFINITY {
        return f32::INFINITY;
    }
    if x.is_nan() || x < 0.0 {
        // The invalid mask ORed into the result: all bits set.
        return f32::from_bits(u32::MAX);
    }
    let x = if f32c(0x0080_0000) >= x {
        f32c(0x0080_0000)
    } else {
        x
    };
    let bits = x.to_bits();
    let m = f32::from_bits((bits & 0x807f_ffff) | 0x3f00_0000);
    let mut e = ((bits >> 23) as i32 - 127) as f32 + 1.0;
    let small = m < f32c(0x3f35_04f3);
    let tmp = if small { m } else { 0.0 };
    let m1 = m - 1.0;
    if small {
        e -= 1.0;
    }
    let r = m1 + tmp;
    let r2 = r * r;
    let r3 = r2 * r;
    let mut y1 = r.mul_add(f32c(0x3d90_21bb), f32c(0xbdeb_d1b8));
    let mut y2 = r.mul_add(f32c(0xbdfe_5d4f), f32c(0x3e11_e9bf));
    let mut y3 = r.mul_add(f32c(0x3e4c_ceac), f32c(0xbe7f_fffc));
    y1 = y1.mul_add(r, f32c(0x3def_251a));
    y2 = y2.mul_add(r, f32c(0xbe2a_ae50));
    y3 = y3.mul_add(r, f32c(0x3eaa_aaaa));
    let mut y = y1.mul_add(r3, y2);
    y = y.mul_add(r3, y3);
    // y·r³ + e·c₂: the first product fused.
    let y = y.mul_add(r3, e * f32c(0xb95e_8083));
    let r = (-0.5f32).mul_add(r2, r);
    e.mul_add(f32c(0x3f31_8000), r + y)
}

/// XLA's float32 `tanh`, Eigen's rational function: the argument clamped to ±7.998812, an
/// odd polynomial over an even one in `x²` (Horner, fused multiply-adds), `x` itself below
/// 4·10⁻⁴ and ±1 from 20 on. It is what `jnp.tanh` of float32 (and, rounded once, float16 and
/// bfloat16) computes on CPU, bit for bit; branch-free, so that it vectorises.
#[inline(always)]
pub(crate) fn tanh_f32(x: f32) -> f32 {
    let c = clamp32(x, f32c(0xc0ff_f644), f32c(0x40ff_f644));
    let x2 = c * c;
    let p = horner32(
        x2,
        &[
            0xa59f_25c0,
            0x2a61_337e,
            0xaebd_37ff,
            0x335c_0041,
            0x3779_434a,
            0x3a27_0ded,
            0x3ba0_59dc,
        ],
    );
    let num = c * p;
    let q = horner32(x2, &[0x35a0_d3d8, 0x38f8_95d6, 0x3b14_aa05, 0x3ba0_59dd]);
    let r = if x.abs() < 4e-4 { x } else { num / q };
    if x.abs() >= 20.0 { 1f32.copysign(x) } else { r }
}

fn exp_f64(x: f64) -> f64 {
    let lo = f64c(0xc086_232b_dd7a_bcd2);
    let hi = f64c(0x4086_2e42_fefa_39ef);
    let c = clamp64(x, lo, hi);
    let n = c.mul_add(f64c(0x3ff7_1547_652b_82fe), 0.5).floor();
    let g = (-n).mul_add(f64c(0x3fe6_2e40_0000_0000), c);
    let g = (-n).mul_add(f64c(0x3eb7_f7d1_cf79_abca), g);
    let g2 = g * g;
    let pg = horner64(
        g2,
        &[
            0x3f20_89cd_d5e4_4be8,
            0x3f9f_06d1_0cca_2c7e,
            0x3ff0_0000_0000_0000,
        ],
    );
    let p = pg * g;
    let q = horner64(
        g2,
        &[
            0x3ec9_2eb6_bc36_5fa0,
            0x3f64_ae39_b508_b6c0,
            0x3fcd_1709_9887_e074,
            0x4000_0000_0000_0000,
        ],
    );
    // p has two uses: q − p is not fused.
    let e = (p / (q - p)).mul_add(2.0, 1.0);
    // ×2ⁿ in four factors (2ᵇ three times and 2ⁿ⁻³ᵇ, b = n >> 2), n clamped to ±2099.
    let n = if n.is_nan() {
        0
    } else {
        (n as i64).clamp(-2099, 2099)
    };
    let b = n >> 2;
    let pow2 = |k: i64| f64::from_bits((k << 52).wrapping_add(0x3ff0_0000_0000_0000) as u64);
    let r = ((e * pow2(b)) * pow2(b)) * pow2(b) * pow2(n - 3 * b);
    if x > hi {
        f64::INFINITY
    } else if x < lo {
        0.0
    } else {
        r
    }
}

/// XLA's float64 `tanh`: its rational function over the argument clamped to
/// ±17.714196154005176, ±1 from 20 on; `jnp.tanh` of float64 on CPU, bit for bit.
#[inline(always)]
pub(crate) fn tanh_f64(x: f64) -> f64 {
    let lim = f64c(0x4031_b6d5_8f24_6197);
    let c = if x < -lim { -lim } else { x };
    let c = if c > lim { lim } else { c };
    let x2 = c * c;
    const ONE: u64 = 0x3ff0_0000_0000_0000;
    let p = horner64(
        x2,
        &[
            0x3b3f_9f82_e5d7_82df,
            0x3c2c_3c83_6c04_b4c8,
            0x3cec_3379_f905_e662,
            0x3d92_9aff_6c8e_dd96,
            0x3e25_25a3_89dc_e7c2,
            0x3ea7_0881_9be5_1cd9,
            0x3f18_996f_4026_a7fa,
            0x3f78_7f80_b957_ed00,
            0x3fc3_6fba_9b45_0e5a,
            ONE,
        ],
    );
    let num = c * p;
    let q = horner64(
        x2,
        &[
            0x3bbe_8630_cf90_3250,
            0x3c90_aabc_a9a5_fea0,
            0x3d42_3298_1aa2_bba8,
            0x3dde_e2f0_15ea_8065,
            0x3e68_1f19_47c5_2304,
            0x3ee2_6c82_ab46_d140,
            0x3f4b_2e7c_4d48_8c04,
            0x3fa1_9988_3026_5b50,
            0x3fdf_0d32_a2f7_dc79,
            ONE,
        ],
    );
    let r = num / q;
    if x.abs() >= 20.0 { 1f64.copysign(x) } else { r }
}

macro_rules! expm1_and_cosm1 {
    ($t:ty, $exp:ident, $tanh:ident, $horner:ident, [$($k:expr),*]) => {
        fn expm1(self) -> $t {
            let e = $exp(self);
            let h = self * 0.5;
            let small = $tanh(h) * (e + 1.0);
            let r = if self.abs() > 0.5 { e - 1.0 } else { small };
            if h == 0.0 { self } else { r }
        }
        fn cosm1(self) -> $t {
            let x2 = self * self;
            let x4 = x2 * x2;
            let p = $horner(x2, &[$($k),*]);
            let series = x4.mul_add(p, -(x2 * 0.5));
            if x2 >= 0.61685 { self.cos() - 1.0 } else { series }
        }
    };
}

impl XlaReal for f32 {
    fn exp(self) -> f32 {
        exp_f32(self)
    }
    fn log(self) -> f32 {
        log_f32(self)
    }
    expm1_and_cosm1!(
        f32,
        exp_f32,
        tanh_f32,
        horner32,
        [
            0x2955_5e8c,
            0xad49_c992,
            0x310f_76c6,
            0xb493_f27e,
            0x37d0_0d01,
            0xbab6_0b61,
            0x3d2a_aaab
        ]
    );
    fn pow(self, y: f32) -> f32 {
        super::glibc::pow(self, y, f32::powf)
    }
    fn atan2(self, x: f32) -> f32 {
        super::glibc::atan2f(self, x, f32::atan, f32::atan2)
    }
    fn sin(self) -> f32 {
        f32::sin(self)
    }
    fn cos(self) -> f32 {
        f32::cos(self)
    }
}

impl XlaReal for f64 {
    fn exp(self) -> f64 {
        exp_f64(self)
    }
    fn log(self) -> f64 {
        // glibc's `log` (GLIBC_2.2.5: a zero or negative operand through the SVID wrapper).
        if self == 0.0 {
            f64::NEG_INFINITY
        } else {
            self.ln()
        }
    }
    expm1_and_cosm1!(
        f64,
        exp_f64,
        tanh_f64,
        horner64,
        [
            0x3d2a_abd1_874d_f32f,
            0xbda9_3932_41eb_1e86,
            0x3e21_eed8_c90c_b3ca,
            0xbe92_7e4f_b75e_b8ca,
            0x3efa_01a0_1a01_8cca,
            0xbf56_c16c_16c1_6c0f,
            0x3fa5_5555_5555_5555
        ]
    );
    fn pow(self, y: f64) -> f64 {
        super::glibc::pow(self, y, f64::powf)
    }
    fn atan2(self, x: f64) -> f64 {
        super::glibc::atan2(self, x, f64::atan2)
    }
    fn sin(self) -> f64 {
        f64::sin(self)
    }
    fn cos(self) -> f64 {
        f64::cos(self)
    }
}

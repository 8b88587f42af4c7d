//! Kernels: functions over slices and numbers, which know nothing of arrays, dtypes' storage
//! or the configuration in force (a kernel that must agree with a reference, or compute under
//! one semantics or another, is handed it as an argument). Every `unsafe` of the crate is
//! here: calls of `#[target_feature]` functions behind run-time CPU detection, vector loads
//! and stores inside the slices, the one raw-pointer call of the `gemm` crate. Each SIMD path
//! is tested lane by lane against its scalar reference (in its own module, or beside the
//! reference where that lives above: the float8 kernel against the generic kernel's table in
//! `lax::elementwise::fast`).
//!
//! | module | kernels |
//! |---|---|
//! | [`simd`] | the generic fused loops (`zip_into`, `map_into`, `zip3_into`, streamed outputs, `prefetch`) compiled for AVX2+FMA beside the baseline; the bfloat16 arithmetic in AVX-512 and AVX2 intrinsics (`bf16_zip`) |
//! | [`fast`] | float32/bfloat16 arithmetic, comparisons, bit operations and shifts of words, the parallel split ([`fast::par_zip`]) |
//! | [`simd8`] | 8-bit float arithmetic in AVX-512 VBMI registers |
//! | [`encode`], [`encode_simd`] | the float32 → narrow float encoder and its AVX-512/AVX2 copies |
//! | [`flush`] | subnormals flushed as XLA's CPU backend does |
//! | [`flush_sum`] | float32 sums and differences accumulated in place as XLA computes them, by the processor's sum where it is provably the flushed one (scatter-add's combining) |
//! | [`math`], [`vmath`], [`xla_math`], [`glibc`], [`erfinv`] | transcendental functions: XLA's, glibc's under DAZ/FTZ, libm's for NumPy's loops; vectorised float32 forms |
//! | [`fma`] | the fused multiply-add loops of jit's contraction |
//! | [`gemm`] | float32/float64 matrix products (XLA's order for small ones, the `gemm` crate for large) |
//! | [`rows`] | the row moves of gather and scatter (offsets computed above; prefetching ahead, split over threads) |
//! | [`threefry`], [`threefry_simd`] | Threefry-2x32, scalar and in AVX-512/AVX2 |
//! | [`philox`], [`threefry4x32`] | Philox-4x32/2x32 and Threefry-4x32 (JAX's other key implementations) |
//! | [`rng_bit`] | XLA's `RngBitGenerator` as its CPU backend expands it (Philox, ThreeFry layouts and state updates) |

pub(crate) mod conv;
pub(crate) mod encode;
pub(crate) mod encode_simd;
pub(crate) mod erfinv;
pub(crate) mod fast;
pub(crate) mod flush;
pub(crate) mod flush_sum;
pub(crate) mod gemm;
pub(crate) mod glibc;
pub(crate) mod math;
pub(crate) mod philox;
pub(crate) mod rng_bit;
pub(crate) mod rows;
pub(crate) mod simd;
pub(crate) mod simd8;
pub(crate) mod sort;
pub(crate) mod threefry;
pub(crate) mod threefry4x32;
pub(crate) mod threefry_simd;
pub(crate) mod vmath;
pub(crate) mod xla_math;

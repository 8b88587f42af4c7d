//! Bulk conversion of whole buffers: a kernel is chosen once per call, then run over chunks
//! of the buffers on every core for large inputs.

use dtype_lattice::DType;

use super::fast::Encoder32;
use super::scalar::{self, Class};
use super::{Error, Semantics, class};

/// Elements from which a conversion is split over threads.
const PARALLEL_MIN: usize = 1 << 16;
/// Elements from which a 16-bit source is converted through a 65,536-entry table.
const TABLE16_MIN: usize = 1 << 20;

/// How one call converts its elements.
enum Kernel {
    /// `src == dst`.
    Copy,
    /// A table of every result, indexed by the source's 8 or 16 bits.
    Table { src_size: usize, table: Vec<u8> },
    /// float32 → a float of at most 16 bits.
    Narrow(Encoder32, usize),
    /// float32 → float64 (non-NaN values exactly; NaN quieted as x86 does; `daz`: subnormal
    /// inputs read as zero, as XLA CPU).
    F32ToF64 { daz: bool },
    /// float64 → float32 (rounded once by the hardware; `ftz`: subnormal results flushed to
    /// zero, as XLA CPU).
    F64ToF32 { ftz: bool },
    /// Element by element through the scalar reference.
    Scalar(Semantics, Class, Class),
    /// NumPy's float → uint32 cast: its vectorised loop on the leading elements
    /// ([`scalar::numpy_uint32_vector_len`]), the scalar reference on the rest.
    NumPyUInt32(DType, Class),
}

fn build_table(sem: Semantics, sc: &Class, dc: &Class, src_bits: u32) -> Vec<u8> {
    let ds = dc.size();
    let mut table = vec![0u8; ds << src_bits];
    for (code, out) in table.chunks_exact_mut(ds).enumerate() {
        scalar::store(scalar::convert(sem, sc, code as u128, dc), out);
    }
    table
}

/// `dst[i] = table[src[i]]` for a 256-entry table of `D`-byte results (fixed-size types: no
/// bounds checks, one `D`-byte move per element).
fn lookup8<const D: usize>(table: &[u8], src: &[u8], dst: &mut [u8]) {
    let table: &[[u8; D]; 256] = table.as_chunks::<D>().0.try_into().expect("256 entries");
    for (d, s) in dst.as_chunks_mut::<D>().0.iter_mut().zip(src) {
        *d = table[usize::from(*s)];
    }
}

/// `dst[i] = table[src[i]]` for a 65,536-entry table indexed by little-endian 16-bit sources.
fn lookup16<const D: usize>(table: &[u8], src: &[u8], dst: &mut [u8]) {
    let table: &[[u8; D]; 65536] = table.as_chunks::<D>().0.try_into().expect("2^16 entries");
    for (d, s) in dst
        .as_chunks_mut::<D>()
        .0
        .iter_mut()
        .zip(src.as_chunks::<2>().0)
    {
        *d = table[usize::from(u16::from_le_bytes(*s))];
    }
}

impl Kernel {
    fn choose(sem: Semantics, src: DType, sc: Class, dst: DType, dc: Class, n: usize) -> Kernel {
        if src == dst {
            return Kernel::Copy;
        }
        if sem == Semantics::NumPy
            && dst == DType::UInt32
            && scalar::numpy_uint32_vector_len(src, usize::MAX) > 0
        {
            return Kernel::NumPyUInt32(src, sc);
        }
        if let (Class::Float(sl), Class::Float(dl)) = (sc, dc)
            && (sl.e, sl.m) == (8, 23)
        {
            if let Some(enc) = Encoder32::new(&dl, sem) {
                return Kernel::Narrow(enc, dc.size());
            }
            if (dl.e, dl.m) == (11, 52) {
                return Kernel::F32ToF64 {
                    daz: sem == Semantics::Jax,
                };
            }
        }
        if let (Class::Float(sl), Class::Float(dl)) = (sc, dc)
            && (sl.e, sl.m, dl.e, dl.m) == (11, 52, 8, 23)
        {
            return Kernel::F64ToF32 {
                ftz: sem == Semantics::Jax,
            };
        }
        match sc.size() {
            1 if n >= 64 => Kernel::Table {
                src_size: 1,
                table: build_table(sem, &sc, &dc, 8),
            },
            2 if n >= TABLE16_MIN && !matches!(sc, Class::Complex(_)) => Kernel::Table {
                src_size: 2,
                table: build_table(sem, &sc, &dc, 16),
            },
            _ => Kernel::Scalar(sem, sc, dc),
        }
    }

    fn run(&self, src: &[u8], dst: &mut [u8]) {
        match self {
            Kernel::Copy => dst.copy_from_slice(src),
            Kernel::Table { src_size, table } => {
                let ds = table.len() >> (8 * src_size);
                match (src_size, ds) {
                    (1, 1) => lookup8::<1>(table, src, dst),
                    (1, 2) => lookup8::<2>(table, src, dst),
                    (1, 4) => lookup8::<4>(table, src, dst),
                    (1, 8) => lookup8::<8>(table, src, dst),
                    (1, 16) => lookup8::<16>(table, src, dst),
                    (_, 1) => lookup16::<1>(table, src, dst),
                    (_, 2) => lookup16::<2>(table, src, dst),
                    (_, 4) => lookup16::<4>(table, src, dst),
                    (_, 8) => lookup16::<8>(table, src, dst),
                    _ => lookup16::<16>(table, src, dst),
                }
            }
            Kernel::Narrow(enc, 1) => enc.encode_to_u8(src, dst),
            Kernel::Narrow(enc, _) => enc.encode_to_u16(src, dst),
            Kernel::F32ToF64 { daz } => {
                for (d, s) in dst.chunks_exact_mut(8).zip(src.chunks_exact(4)) {
                    let b = u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
                    let b = if *daz && b & 0x7f80_0000 == 0 {
                        b & 0x8000_0000
                    } else {
                        b
                    };
                    let x = f32::from_bits(b);
                    let y = if x.is_nan() {
                        let sign = u64::from(b >> 31) << 63;
                        sign | 0x7ff8_0000_0000_0000 | (u64::from(b & 0x007f_ffff) << 29)
                    } else {
                        f64::from(x).to_bits()
                    };
                    d.copy_from_slice(&y.to_le_bytes());
                }
            }
            Kernel::F64ToF32 { ftz } => {
                for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(8)) {
                    let b = u64::from_le_bytes(s.try_into().expect("8 bytes"));
                    let x = f64::from_bits(b);
                    let y = if x.is_nan() {
                        let sign = ((b >> 63) as u32) << 31;
                        sign | 0x7fc0_0000 | ((b & 0x000f_ffff_ffff_ffff) >> 29) as u32
                    } else {
                        let y = (x as f32).to_bits();
                        if *ftz && y & 0x7f80_0000 == 0 {
                            y & 0x8000_0000
                        } else {
                            y
                        }
                    };
                    d.copy_from_slice(&y.to_le_bytes());
                }
            }
            Kernel::Scalar(sem, sc, dc) => {
                let (ss, ds) = (sc.size(), dc.size());
                for (d, s) in dst.chunks_exact_mut(ds).zip(src.chunks_exact(ss)) {
                    scalar::store(scalar::convert(*sem, sc, scalar::load(s), dc), d);
                }
            }
            Kernel::NumPyUInt32(src_dtype, sc) => {
                let ss = sc.size();
                let dc = Class::of(DType::UInt32).expect("uint32 is numeric");
                let vector = scalar::numpy_uint32_vector_len(*src_dtype, src.len() / ss);
                for (i, (d, s)) in dst
                    .chunks_exact_mut(4)
                    .zip(src.chunks_exact(ss))
                    .enumerate()
                {
                    let raw = scalar::load(s);
                    if i < vector {
                        d.copy_from_slice(&scalar::numpy_uint32_vector(sc, raw).to_le_bytes());
                    } else {
                        scalar::store(scalar::convert(Semantics::NumPy, sc, raw, &dc), d);
                    }
                }
            }
        }
    }
}

/// [`convert_with`] under the default semantics, JAX's.
///
/// # Errors
///
/// As [`convert_with`].
pub fn convert(
    src_dtype: DType,
    src: &[u8],
    dst_dtype: DType,
    dst: &mut [u8],
) -> Result<(), Error> {
    convert_with(Semantics::default(), src_dtype, src, dst_dtype, dst)
}

/// Converts every element of `src` (dtype `src_dtype`, stored as the module doc says) into
/// `dst` (dtype `dst_dtype`) under `sem`: `dst = src.astype(dst_dtype)`. Large buffers are
/// converted on all cores.
///
/// # Errors
///
/// [`Error::NotNumeric`] for key dtypes; [`Error::Length`] if a buffer is not a whole number
/// of elements or the two hold different numbers of elements. Nothing is written then.
pub fn convert_with(
    sem: Semantics,
    src_dtype: DType,
    src: &[u8],
    dst_dtype: DType,
    dst: &mut [u8],
) -> Result<(), Error> {
    let sc = class(src_dtype)?;
    let dc = class(dst_dtype)?;
    let (ss, ds) = (sc.size(), dc.size());
    if !src.len().is_multiple_of(ss)
        || !dst.len().is_multiple_of(ds)
        || src.len() / ss != dst.len() / ds
    {
        return Err(Error::Length {
            src: src_dtype,
            src_len: src.len(),
            dst: dst_dtype,
            dst_len: dst.len(),
        });
    }
    let n = src.len() / ss;
    let kernel = Kernel::choose(sem, src_dtype, sc, dst_dtype, dc, n);
    // NumPy's float → uint32 cast depends on each element's place in the whole array.
    let threads = if n >= PARALLEL_MIN && !matches!(kernel, Kernel::NumPyUInt32(..)) {
        rayon::current_num_threads()
    } else {
        1
    };
    if threads <= 1 {
        kernel.run(src, dst);
        return Ok(());
    }
    let per = n.div_ceil(threads);
    // On rayon's pool, with the other parallel kernels (freshly spawned threads compete with
    // its workers for the cores).
    rayon::scope(|scope| {
        let kernel = &kernel;
        for (s, d) in src.chunks(per * ss).zip(dst.chunks_mut(per * ds)) {
            scope.spawn(move |_| kernel.run(s, d));
        }
    });
    Ok(())
}

/// [`convert`] into a new buffer (JAX's semantics).
///
/// # Errors
///
/// As [`convert`] (the destination always has the right length).
pub fn convert_to_vec(src_dtype: DType, src: &[u8], dst_dtype: DType) -> Result<Vec<u8>, Error> {
    convert_to_vec_with(Semantics::default(), src_dtype, src, dst_dtype)
}

/// [`convert_with`] into a new buffer.
///
/// # Errors
///
/// As [`convert_with`] (the destination always has the right length).
pub fn convert_to_vec_with(
    sem: Semantics,
    src_dtype: DType,
    src: &[u8],
    dst_dtype: DType,
) -> Result<Vec<u8>, Error> {
    let ds = class(dst_dtype)?.size();
    let ss = class(src_dtype)?.size();
    let mut out = vec![0u8; (src.len() / ss) * ds];
    if !src.len().is_multiple_of(ss) {
        return Err(Error::Length {
            src: src_dtype,
            src_len: src.len(),
            dst: dst_dtype,
            dst_len: out.len(),
        });
    }
    convert_with(sem, src_dtype, src, dst_dtype, &mut out)?;
    Ok(out)
}

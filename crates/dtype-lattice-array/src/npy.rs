//! NumPy's `.npy` and `.npz` files: [`write()`]/[`read`] on any `Write`/`Read`,
//! [`Array::to_npy_bytes`]/[`Array::from_npy_bytes`], [`save`]/[`load`] on paths, and `.npz`
//! archives of named arrays ([`write_npz`]/[`read_npz`], [`savez`], [`savez_compressed`],
//! [`load_npz`]) as `np.savez` (stored) and `np.savez_compressed` (deflated) write them.
//!
//! # Encoding
//!
//! - NumPy's own dtypes (bool, the 8- to 64-bit integers, float16/32/64, complex64/128) are
//!   written exactly as `np.save` writes them: format 1.0 (2.0 for a header beyond 64 KiB),
//!   descr `|b1`, `|i1`, `<i4`, `<f2`, `<c8`…, C order, the header padded with spaces to a
//!   multiple of 64 bytes and ended by `\n`. The bytes equal `np.save`'s.
//! - **ml_dtypes types** (bfloat16, the float8/float6/float4 formats, int4, uint4, int2, uint2)
//!   and complex32/bcomplex32: `np.save` of an ml_dtypes array writes the raw bytes under a
//!   *void* descr, `<V2` for bfloat16 and `<V1` for the 1-byte types (float8_e5m2 is the
//!   exception: `<f1`, which `np.load` itself cannot read back). The header does not name the
//!   dtype: it is **not recoverable** from the file. This module writes the same: `<V2` for
//!   bfloat16 (and `<V4` for complex32/bcomplex32), `<V1` for every 1-byte type, float8_e5m2
//!   included (so that Python loads it: `np.load(f).view(ml_dtypes.float8_e5m2)`). Reading a
//!   void descr needs the dtype from the caller ([`read_as`], [`read_npz_with`]); plain
//!   [`read`] refuses it, saying so. `<f1` is read as float8_e5m2. One element per byte, as
//!   ml_dtypes stores them (the value in the low bits: int4 `-1` is the byte `0x0f`).
//! - To keep the dtype name, [`Encoding::Named`] ([`write_with`], [`write_npz_with`]) writes
//!   a single raw field named after the dtype, `[('bfloat16', '|V2')]`, exactly what
//!   `np.save(a.view([('bfloat16', 'V2')]))` writes: Python loads it (then
//!   `.view(ml_dtypes.bfloat16)`), and [`read`] recovers the dtype from it.
//! - **Key arrays** are refused (`key<fry>` is not a NumPy dtype): save
//!   [`random::key_data`](crate::random::key_data) and
//!   [`random::wrap_key_data`](crate::random::wrap_key_data) it back.
//! - Reading: format versions 1.0, 2.0 and 3.0; little-, big-endian (`>`, swapped on reading)
//!   and native (`=`) descrs; C and Fortran order (Fortran arrays are reordered to row-major).
//!   Structured dtypes, objects, strings and datetimes are refused. Every array read is
//!   strongly typed.
//!
//! ```
//! use dtype_lattice::DType;
//! use dtype_lattice_array::{npy, Array};
//!
//! let x = Array::from_shape_vec(&[2, 2], vec![1.5f32, 2.0, -3.0, 4.0])?;
//! let bytes = x.to_npy_bytes()?;
//! assert_eq!(&bytes[..10], b"\x93NUMPY\x01\x00\x76\x00");
//! let y = Array::from_npy_bytes(&bytes)?;
//! assert_eq!((y.shape(), y.to_vec::<f32>()?), (&[2usize, 2][..], vec![1.5, 2.0, -3.0, 4.0]));
//!
//! let b = x.astype(DType::BFloat16)?;                    // written as '<V2', like np.save
//! let raw = b.to_npy_bytes()?;
//! assert!(npy::read(&mut &raw[..]).is_err());            // the header does not say bfloat16
//! let back = npy::read_as(&mut &raw[..], DType::BFloat16)?;
//! assert_eq!(back.as_bytes(), b.as_bytes());
//! # Ok::<(), dtype_lattice::Error>(())
//! ```
//!
//! # Limits
//!
//! Reading is bounded by what the input really holds: bad input returns an `Err` that names
//! what is wrong, never panics, and never allocates for what a header merely claims.
//!
//! - The magic string and a format version 1.0, 2.0 or 3.0, else refused.
//! - Headers: at most [`MAX_HEADER_LEN`] bytes (10,000, `np.load`'s `max_header_size`),
//!   checked before the header is read; a Python dictionary of exactly the keys `descr`,
//!   `fortran_order` and `shape`, nested at most 8 deep, nothing but spaces after it.
//! - Shapes: at most [`MAX_NDIM`] dimensions (64, NumPy's own); the product of the element
//!   size and of every nonzero dimension (NumPy's overflow rule; a `float0` element counts as
//!   one byte) at most [`MAX_BYTES`] (2 GiB), computed with checked multiplication and
//!   refused *before* any data is allocated. So `(2**60,)` and `(0, 2**62, 2**62)` are
//!   refused, and so is a `float0` array of more than 2³¹ elements.
//! - Data: read as it arrives (memory grows with the bytes actually read, at most about
//!   twice the data while the buffer grows, never with the size the header claims); fewer
//!   bytes than the shape needs is "truncated data". Fortran-order data is reordered in time
//!   linear in its size, whatever the number of dimensions.
//! - `.npz` (zip bombs): a member's array must fit in the uncompressed size the archive
//!   declares for it (which the `zip` crate enforces while decompressing), and everything
//!   decompressed from one archive's `.npy` members (headers, data and any bytes after the
//!   data, which are read to check the member's CRC) is at most
//!   `min(MAX_BYTES, MAX_NPZ_RATIO × the archive's size)`: [`MAX_NPZ_RATIO`] is 1032,
//!   deflate's largest possible ratio, so an honest archive never reaches it, and output past
//!   it is refused as soon as it is produced. Archives whose members share compressed data
//!   (the overlapping zip bomb, whose output grows with the number of members and not with
//!   the archive's size) are refused before anything is decompressed, as Python's `zipfile`
//!   refuses them. Members that are not `.npy` files are skipped without being decompressed.

use std::io::{Read, Seek, Write};
use std::path::Path;

use dtype_lattice::error::Reason;
use dtype_lattice::{DType, Error, Kind};

use crate::array::{Array, element_bytes, invalid, py_shape};

/// The most data bytes one array read may hold (2 GiB), and the most bytes decompressed from
/// one `.npz` archive; larger shapes are refused before anything is allocated (see the
/// module's [limits](self#limits)).
pub const MAX_BYTES: usize = 1 << 31;

/// The most dimensions of a shape read: NumPy's `NPY_MAXDIMS` (64 since NumPy 2.0).
pub const MAX_NDIM: usize = 64;

/// The longest header read, in bytes: NumPy's limit (`np.load`'s default `max_header_size`).
pub const MAX_HEADER_LEN: usize = 10_000;

/// The most bytes decompressed from an `.npz` archive's `.npy` members per byte of the archive
/// (also at most [`MAX_BYTES`] in all): 1032, the largest ratio deflate can reach, so an
/// honest archive never reaches it. Archives whose members share compressed data are refused
/// outright; this cap bounds memory by the archive's size whatever else a crafted archive
/// does.
pub const MAX_NPZ_RATIO: usize = 1032;

const MAGIC: &[u8; 6] = b"\x93NUMPY";

fn bad(reason: impl Into<String>) -> Error {
    invalid("npy", reason)
}

fn io(e: std::io::Error) -> Error {
    bad(format!("I/O error: {e}"))
}

/// The descr a dtype is written with (`<f4`, `|b1`, `<V2`), or `None` for key dtypes.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::npy::descr;
/// assert_eq!(descr(DType::Float32).as_deref(), Some("<f4"));
/// assert_eq!(descr(DType::Int8).as_deref(), Some("|i1"));
/// assert_eq!(descr(DType::BFloat16).as_deref(), Some("<V2"));
/// assert_eq!(descr(DType::Float8E5M2).as_deref(), Some("<V1"));
/// assert_eq!(descr(DType::KeyThreefry2x32), None);
/// assert_eq!(descr(DType::Float0).as_deref(), Some("<V0"));
/// ```
pub fn descr(dtype: DType) -> Option<String> {
    if dtype.is_extended() {
        return None;
    }
    let size = element_bytes(dtype);
    let code = match dtype {
        DType::Bool => "b",
        DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64 => "i",
        DType::UInt8 | DType::UInt16 | DType::UInt32 | DType::UInt64 => "u",
        DType::Float16 | DType::Float32 | DType::Float64 => "f",
        DType::Complex64 | DType::Complex128 => "c",
        _ => "V",
    };
    let order = if size == 1 && code != "V" { '|' } else { '<' };
    Some(format!("{order}{code}{size}"))
}

/// A descr read from a header: the dtype, or raw bytes of a width; and whether it is
/// big-endian.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Parsed {
    Typed(DType),
    Void(usize),
}

fn parse_descr(d: &str) -> Result<(Parsed, bool), Error> {
    let (big, rest) = match d.as_bytes().first() {
        Some(b'<' | b'=') => (false, &d[1..]),
        Some(b'|') => (false, &d[1..]),
        Some(b'>') => (true, &d[1..]),
        _ => (false, d),
    };
    let typed = |t| Ok((Parsed::Typed(t), big));
    match rest {
        "b1" | "?" => typed(DType::Bool),
        "i1" => typed(DType::Int8),
        "i2" => typed(DType::Int16),
        "i4" => typed(DType::Int32),
        "i8" => typed(DType::Int64),
        "u1" => typed(DType::UInt8),
        "u2" => typed(DType::UInt16),
        "u4" => typed(DType::UInt32),
        "u8" => typed(DType::UInt64),
        "f1" => typed(DType::Float8E5M2),
        "f2" => typed(DType::Float16),
        "f4" => typed(DType::Float32),
        "f8" => typed(DType::Float64),
        "c8" => typed(DType::Complex64),
        "c16" => typed(DType::Complex128),
        v if v.starts_with('V') => match v[1..].parse::<usize>() {
            Ok(n @ (0 | 1 | 2 | 4)) => Ok((Parsed::Void(n), big)),
            _ => Err(bad(format!(
                "descr '{d}': raw bytes of a width no dtype of this crate has"
            ))),
        },
        _ => Err(bad(format!(
            "descr '{d}' is not supported (numbers and bool only: no structured, object, \
             string or datetime dtypes)"
        ))),
    }
}

/// A Python literal of `.npy` headers.
#[derive(Debug, PartialEq)]
enum Lit {
    Str(String),
    Bool(bool),
    Int(u64),
    Seq(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn skip(&mut self) {
        while self.s.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Lit, Error> {
        if depth > 8 {
            return Err(bad("header nested too deeply"));
        }
        self.skip();
        let rest = &self.s[self.i.min(self.s.len())..];
        match rest.first() {
            Some(&q @ (b'\'' | b'"')) => {
                let end = rest[1..]
                    .iter()
                    .position(|&c| c == q)
                    .ok_or_else(|| bad("unterminated string in header"))?;
                let text = std::str::from_utf8(&rest[1..=end])
                    .map_err(|_| bad("header string is not UTF-8"))?;
                self.i += end + 2;
                Ok(Lit::Str(text.to_string()))
            }
            Some(b'(' | b'[') => {
                let close = if rest[0] == b'(' { b')' } else { b']' };
                self.i += 1;
                let mut items = Vec::new();
                while !self.eat(close) {
                    items.push(self.value(depth + 1)?);
                    if !self.eat(b',') {
                        if self.eat(close) {
                            break;
                        }
                        return Err(bad("malformed sequence in header"));
                    }
                }
                Ok(Lit::Seq(items))
            }
            Some(b'{') => {
                self.i += 1;
                let mut items = Vec::new();
                while !self.eat(b'}') {
                    let k = self.value(depth + 1)?;
                    if !self.eat(b':') {
                        return Err(bad("malformed dictionary in header"));
                    }
                    items.push((k, self.value(depth + 1)?));
                    if !self.eat(b',') {
                        if self.eat(b'}') {
                            break;
                        }
                        return Err(bad("malformed dictionary in header"));
                    }
                }
                Ok(Lit::Dict(items))
            }
            Some(c) if c.is_ascii_digit() => {
                let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
                let text = std::str::from_utf8(&rest[..n]).unwrap_or("");
                let v = text
                    .parse::<u64>()
                    .map_err(|_| bad(format!("dimension {text} is too large")))?;
                self.i += n;
                if self.s.get(self.i) == Some(&b'L') {
                    self.i += 1;
                }
                Ok(Lit::Int(v))
            }
            _ if rest.starts_with(b"True") => {
                self.i += 4;
                Ok(Lit::Bool(true))
            }
            _ if rest.starts_with(b"False") => {
                self.i += 5;
                Ok(Lit::Bool(false))
            }
            _ => Err(bad("unexpected text in header")),
        }
    }
}

/// What a header says.
struct Header {
    descr: Parsed,
    big_endian: bool,
    fortran: bool,
    shape: Vec<usize>,
}

/// The one structured descr read: a single void field named after the dtype
/// (`[('bfloat16', '|V2')]`, [`Encoding::Named`]).
fn named_descr(fields: &[Lit]) -> Result<Parsed, Error> {
    if let [Lit::Seq(field)] = fields
        && let [Lit::Str(name), Lit::Str(d)] = &field[..]
        && let Ok(dtype) = name.parse::<DType>()
        && let Ok((Parsed::Void(n), _)) = parse_descr(d)
        && !dtype.is_extended()
        && element_bytes(dtype) == n
    {
        return Ok(Parsed::Typed(dtype));
    }
    Err(bad(
        "structured dtypes are not supported (but a single raw field named after its dtype, \
         as Encoding::Named writes it)",
    ))
}

fn parse_header(text: &[u8]) -> Result<Header, Error> {
    let mut p = Parser { s: text, i: 0 };
    let Lit::Dict(items) = p.value(0)? else {
        return Err(bad("header is not a dictionary"));
    };
    // np.load's literal_eval refuses anything but spaces (and the final newline) after it.
    p.skip();
    if p.i < p.s.len() {
        return Err(bad("header has text after its dictionary"));
    }
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (k, v) in items {
        match (k, v) {
            (Lit::Str(k), Lit::Str(d)) if k == "descr" => descr = Some(parse_descr(&d)?),
            (Lit::Str(k), Lit::Seq(fields)) if k == "descr" => {
                descr = Some((named_descr(&fields)?, false));
            }
            (Lit::Str(k), Lit::Bool(b)) if k == "fortran_order" => fortran = Some(b),
            (Lit::Str(k), Lit::Seq(dims)) if k == "shape" => {
                let dims = dims
                    .into_iter()
                    .map(|d| match d {
                        Lit::Int(n) => usize::try_from(n).map_err(|_| bad("dimension too large")),
                        _ => Err(bad("shape is not a tuple of integers")),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                shape = Some(dims);
            }
            (k, _) => return Err(bad(format!("unexpected header entry {k:?}"))),
        }
    }
    let (Some((descr, big_endian)), Some(fortran), Some(shape)) = (descr, fortran, shape) else {
        return Err(bad(
            "header does not contain the keys 'descr', 'fortran_order' and 'shape'",
        ));
    };
    Ok(Header {
        descr,
        big_endian,
        fortran,
        shape,
    })
}

fn read_header<R: Read>(r: &mut R) -> Result<Header, Error> {
    let mut pre = [0u8; 8];
    r.read_exact(&mut pre)
        .map_err(|_| bad("not a .npy file: shorter than its magic"))?;
    if &pre[..6] != MAGIC {
        return Err(bad("not a .npy file: wrong magic string"));
    }
    if pre[7] != 0 {
        return Err(bad(format!(
            "format version {}.{} is not supported (1.0, 2.0, 3.0)",
            pre[6], pre[7]
        )));
    }
    let len = match pre[6] {
        1 => {
            let mut b = [0u8; 2];
            r.read_exact(&mut b).map_err(|_| bad("truncated header"))?;
            usize::from(u16::from_le_bytes(b))
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            r.read_exact(&mut b).map_err(|_| bad("truncated header"))?;
            usize::try_from(u32::from_le_bytes(b)).unwrap_or(usize::MAX)
        }
        v => {
            return Err(bad(format!(
                "format version {v}.{} is not supported (1.0, 2.0, 3.0)",
                pre[7]
            )));
        }
    };
    if len > MAX_HEADER_LEN {
        return Err(bad(format!(
            "header length ({len}) is larger than NumPy's limit ({MAX_HEADER_LEN})"
        )));
    }
    let mut text = vec![0u8; len];
    r.read_exact(&mut text)
        .map_err(|_| bad("truncated header"))?;
    parse_header(&text)
}

/// Reads `n` bytes, growing only with what the reader gives.
fn read_data<R: Read>(r: &mut R, n: usize) -> Result<Vec<u8>, Error> {
    let mut data = Vec::new();
    Read::take(&mut *r, n as u64)
        .read_to_end(&mut data)
        .map_err(io)?;
    if data.len() != n {
        return Err(bad(format!(
            "truncated data: expected {n} bytes, got {}",
            data.len()
        )));
    }
    Ok(data)
}

/// Reverses the bytes of each `width`-byte component (complex: each half).
fn swap_bytes(data: &mut [u8], width: usize) {
    if width > 1 {
        for c in data.chunks_exact_mut(width) {
            c.reverse();
        }
    }
}

/// Column-major elements of `shape` (`size` bytes each) in row-major order. Dimensions of 1
/// move nothing and are dropped, so at most 31 remain and each element costs amortised
/// constant time, however many dimensions the header lists.
fn fortran_to_c(data: &[u8], shape: &[usize], size: usize) -> Vec<u8> {
    let dims: Vec<usize> = shape.iter().copied().filter(|&d| d != 1).collect();
    if dims.len() < 2 || data.is_empty() {
        return data.to_vec();
    }
    let n = data.len() / size;
    // Column-major strides, in elements (each at most n: no dimension is 0 here).
    let mut fstride = Vec::with_capacity(dims.len());
    let mut s = 1usize;
    for &d in &dims {
        fstride.push(s);
        s = s.saturating_mul(d);
    }
    let mut out = Vec::with_capacity(data.len());
    let mut index = vec![0usize; dims.len()];
    // The column-major offset of `index`, kept up to date as `index` steps in row-major order.
    let mut j = 0usize;
    for _ in 0..n {
        out.extend_from_slice(&data[j * size..(j + 1) * size]);
        for k in (0..dims.len()).rev() {
            index[k] += 1;
            if index[k] < dims[k] {
                j += fstride[k];
                break;
            }
            index[k] = 0;
            j -= fstride[k] * (dims[k] - 1);
        }
    }
    out
}

/// The data bytes of a shape of `size`-byte elements: at most [`MAX_NDIM`] dimensions, and
/// NumPy's overflow rule (the element size times every nonzero dimension, `float0` elements
/// counted as one byte) within [`MAX_BYTES`]; checked before anything is allocated.
fn data_bytes(shape: &[usize], size: usize, dtype: DType) -> Result<usize, Error> {
    if shape.len() > MAX_NDIM {
        return Err(bad(format!(
            "shape has {} dimensions, more than NumPy's limit ({MAX_NDIM})",
            shape.len()
        )));
    }
    let bound = shape
        .iter()
        .try_fold(size.max(1), |n, &d| n.checked_mul(d.max(1)))
        .filter(|&b| b <= MAX_BYTES);
    if bound.is_none() {
        return Err(bad(format!(
            "shape {} of {dtype} is larger than {MAX_BYTES} bytes (npy::MAX_BYTES)",
            py_shape(shape)
        )));
    }
    // At most `bound`: no overflow.
    Ok(shape.iter().product::<usize>() * size)
}

/// A header read and checked: what to read next.
struct Head {
    header: Header,
    dtype: DType,
    /// Bytes per element.
    size: usize,
    /// Data bytes.
    bytes: usize,
}

/// Reads and checks the header: the dtype (`want` for a void descr), the shape's size.
fn read_head<R: Read>(r: &mut R, want: Option<DType>) -> Result<Head, Error> {
    let h = read_header(r)?;
    let dtype = match (h.descr, want) {
        (Parsed::Typed(t), None) => t,
        (Parsed::Typed(t), Some(w)) if t == w => t,
        (Parsed::Typed(t), Some(w)) => {
            return Err(bad(format!("the file holds {t}, not {w}")));
        }
        (Parsed::Void(n), None) => {
            return Err(bad(format!(
                "descr '<V{n}' is raw bytes without a dtype name (np.save writes ml_dtypes \
                 arrays such as bfloat16 so); read it with npy::read_as and the dtype"
            )));
        }
        (Parsed::Void(n), Some(w)) => {
            if w.is_extended() || element_bytes(w) != n {
                return Err(bad(format!(
                    "raw {n}-byte elements cannot be read as {w} ({} bytes)",
                    element_bytes(w)
                )));
            }
            w
        }
    };
    let size = element_bytes(dtype);
    let bytes = data_bytes(&h.shape, size, dtype)?;
    Ok(Head {
        header: h,
        dtype,
        size,
        bytes,
    })
}

/// Reads the data a checked header announced.
fn read_body<R: Read>(r: &mut R, head: Head) -> Result<Array, Error> {
    let Head {
        header: h,
        dtype,
        size,
        bytes,
    } = head;
    let mut data = read_data(r, bytes)?;
    if h.big_endian && matches!(h.descr, Parsed::Typed(_)) {
        let width = if dtype.kind() == Kind::Complex {
            size / 2
        } else {
            size
        };
        swap_bytes(&mut data, width);
    }
    if h.fortran && size > 0 {
        data = fortran_to_c(&data, &h.shape, size);
    }
    Array::from_bytes(dtype, &h.shape, &data)
}

fn read_impl<R: Read>(r: &mut R, want: Option<DType>) -> Result<Array, Error> {
    let head = read_head(r, want)?;
    read_body(r, head)
}

/// Reads one `.npy` array.
///
/// # Errors
///
/// `InvalidArgument` for input that is not a `.npy` file of a supported dtype (see the
/// module's documentation), a void descr (ml_dtypes: use [`read_as`]), a shape beyond
/// [`MAX_BYTES`], or truncated data.
pub fn read<R: Read>(r: &mut R) -> Result<Array, Error> {
    read_impl(r, None)
}

/// Reads one `.npy` array of `dtype`: a void descr of `dtype`'s width is read as `dtype` (the
/// ml_dtypes arrays `np.save` writes); a typed descr must be `dtype`.
///
/// # Errors
///
/// As [`read`]; also when the file's dtype or element width is not `dtype`'s.
pub fn read_as<R: Read>(r: &mut R, dtype: DType) -> Result<Array, Error> {
    read_impl(r, Some(dtype))
}

/// The header `np.save` writes for an array: the dictionary, padded with spaces and ended by
/// a newline so that the data starts at a multiple of 64 bytes.
fn header_bytes(descr: &str, shape: &[usize]) -> Vec<u8> {
    let dict = format!(
        "{{'descr': {descr}, 'fortran_order': False, 'shape': {}, }}",
        py_shape(shape)
    );
    let make = |prefix: usize| {
        let total = prefix + dict.len() + 1;
        let pad = (64 - total % 64) % 64;
        let mut h = dict.clone().into_bytes();
        h.extend(std::iter::repeat_n(b' ', pad));
        h.push(b'\n');
        h
    };
    let h = make(10);
    let mut out = Vec::with_capacity(h.len() + 12);
    out.extend_from_slice(MAGIC);
    if let Ok(len) = u16::try_from(h.len()) {
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&h);
    } else {
        let h = make(12);
        out.extend_from_slice(&[2, 0]);
        out.extend_from_slice(&(h.len() as u32).to_le_bytes());
        out.extend_from_slice(&h);
    }
    out
}

/// How the dtypes NumPy does not know (ml_dtypes, complex32) are described in a header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Encoding {
    /// As `np.save` writes them: raw bytes, `<V1`/`<V2`; the dtype name is lost.
    #[default]
    NumPy,
    /// A single raw field named after the dtype, `[('bfloat16', '|V2')]`: what `np.save` writes
    /// for `a.view([('bfloat16', 'V2')])`. `np.load` reads it as a structured array, which
    /// `.view(ml_dtypes.bfloat16)` turns back into the values; [`read`] recovers the dtype.
    /// NumPy's own dtypes are written as [`Encoding::NumPy`] writes them.
    Named,
}

/// Writes one `.npy` array, as `np.save` does (see the module's documentation for the
/// ml_dtypes types; a `float0` array as NumPy's structured `[('float0', '|V0')]`, no data).
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::{Array, npy};
/// let t = Array::from_vec(vec![(); 2]);
/// let mut file = Vec::new();
/// npy::write(&mut file, &t)?;
/// assert!(file.starts_with(b"\x93NUMPY\x01\x00v\x00{'descr': [('float0', '|V0')], 'fortran_order': False, 'shape': (2,), }"));
/// let back = npy::read(&mut file.as_slice())?;
/// assert_eq!((back.dtype(), back.shape()), (DType::Float0, &[2usize][..]));
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// `InvalidArgument` for a key array (not a NumPy dtype) or an I/O error of the writer.
pub fn write<W: Write>(w: &mut W, a: &Array) -> Result<(), Error> {
    write_with(w, a, Encoding::NumPy)
}

/// Writes one `.npy` array with the ml_dtypes types encoded as `encoding` says.
///
/// ```
/// use dtype_lattice::DType;
/// use dtype_lattice_array::npy::{self, Encoding};
/// use dtype_lattice_array::Array;
/// let x = Array::from_vec(vec![1.5f32, -2.0]).astype(DType::Float8E4M3Fn)?;
/// let mut file = Vec::new();
/// npy::write_with(&mut file, &x, Encoding::Named)?;
/// assert!(file.starts_with(b"\x93NUMPY\x01\x00v\x00{'descr': [('float8_e4m3fn', '|V1')]"));
/// assert_eq!(npy::read(&mut &file[..])?.dtype(), DType::Float8E4M3Fn);
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
///
/// # Errors
///
/// As [`write()`].
pub fn write_with<W: Write>(w: &mut W, a: &Array, encoding: Encoding) -> Result<(), Error> {
    let d = descr(a.dtype()).ok_or_else(|| {
        bad(format!(
            "{} arrays have no NumPy dtype: save random::key_data(keys) instead",
            a.dtype()
        ))
    })?;
    // float0 is a structured dtype to NumPy: np.save writes its field, whatever the encoding.
    let literal = match d.strip_prefix("<V") {
        Some(n) if encoding == Encoding::Named || a.dtype().is_float0() => {
            format!("[('{}', '|V{n}')]", a.dtype())
        }
        _ => format!("'{d}'"),
    };
    w.write_all(&header_bytes(&literal, a.shape()))
        .map_err(io)?;
    w.write_all(a.as_bytes()).map_err(io)
}

impl Array {
    /// The array as the bytes of a `.npy` file ([`npy::write`](write())).
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a key array.
    pub fn to_npy_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        write(&mut out, self)?;
        Ok(out)
    }

    /// An array from the bytes of a `.npy` file ([`npy::read`](read)).
    ///
    /// # Errors
    ///
    /// As [`npy::read`](read).
    pub fn from_npy_bytes(bytes: &[u8]) -> Result<Array, Error> {
        read(&mut &bytes[..])
    }
}

/// `np.save(path, a)`.
///
/// # Errors
///
/// As [`write()`], and the file's I/O errors.
pub fn save(path: impl AsRef<Path>, a: &Array) -> Result<(), Error> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    write(&mut f, a)?;
    f.flush().map_err(io)
}

/// `np.load(path)` of a `.npy` file.
///
/// # Errors
///
/// As [`read`], and the file's I/O errors.
pub fn load(path: impl AsRef<Path>) -> Result<Array, Error> {
    read(&mut std::io::BufReader::new(
        std::fs::File::open(path).map_err(io)?,
    ))
}

fn zip_err(e: zip::result::ZipError) -> Error {
    bad(format!("npz archive: {e}"))
}

/// Writes an `.npz` archive: one `NAME.npy` member per array, stored (`np.savez`) or
/// deflated (`np.savez_compressed`).
///
/// # Errors
///
/// As [`write()`] for each array, and the archive's errors.
pub fn write_npz<W: Write + Seek>(
    w: W,
    arrays: &[(&str, &Array)],
    compressed: bool,
) -> Result<(), Error> {
    write_npz_with(w, arrays, compressed, Encoding::NumPy)
}

/// [`write_npz`] with the ml_dtypes types encoded as `encoding` says.
///
/// # Errors
///
/// As [`write_npz`].
pub fn write_npz_with<W: Write + Seek>(
    w: W,
    arrays: &[(&str, &Array)],
    compressed: bool,
    encoding: Encoding,
) -> Result<(), Error> {
    use zip::write::SimpleFileOptions;
    let method = if compressed {
        zip::CompressionMethod::Deflated
    } else {
        zip::CompressionMethod::Stored
    };
    let options = SimpleFileOptions::default().compression_method(method);
    let mut z = zip::ZipWriter::new(w);
    for (name, a) in arrays {
        let mut bytes = Vec::new();
        write_with(&mut bytes, a, encoding)?;
        z.start_file(format!("{name}.npy"), options)
            .map_err(zip_err)?;
        z.write_all(&bytes).map_err(io)?;
    }
    z.finish().map_err(zip_err)?;
    Ok(())
}

/// Reads every array of an `.npz` archive, in archive order, named as `np.load` names them
/// (the member's name without `.npy`; members that are not `.npy` files are skipped).
///
/// # Errors
///
/// As [`read`] for each member (a void descr included: see [`read_npz_with`]), and the
/// archive's errors.
pub fn read_npz<R: Read + Seek>(r: R) -> Result<Vec<(String, Array)>, Error> {
    read_npz_with(r, |_| None)
}

/// [`read_npz`], with the dtype of members whose header does not name it (ml_dtypes arrays)
/// given by `dtype_of(name)` (a member with a typed header must then be of that dtype).
/// Everything decompressed from the archive is at most `min(MAX_BYTES, MAX_NPZ_RATIO × its
/// size)`, and each member's array fits in its declared size (see the module's
/// [limits](self#limits)); each member read is checked against its CRC.
///
/// # Errors
///
/// As [`read_npz`].
pub fn read_npz_with<R: Read + Seek>(
    r: R,
    dtype_of: impl Fn(&str) -> Option<DType>,
) -> Result<Vec<(String, Array)>, Error> {
    read_npz_capped(r, dtype_of, MAX_BYTES)
}

/// [`read_npz_with`] with everything decompressed at most `min(max, MAX_NPZ_RATIO × the
/// archive's size)`.
fn read_npz_capped<R: Read + Seek>(
    mut r: R,
    dtype_of: impl Fn(&str) -> Option<DType>,
    max: usize,
) -> Result<Vec<(String, Array)>, Error> {
    use std::io::SeekFrom;
    let start = r.stream_position().map_err(io)?;
    let len = r.seek(SeekFrom::End(0)).map_err(io)?.saturating_sub(start);
    r.seek(SeekFrom::Start(start)).map_err(io)?;
    let cap = usize::try_from(len)
        .unwrap_or(usize::MAX)
        .saturating_mul(MAX_NPZ_RATIO)
        .min(max);
    let mut z = zip::ZipArchive::new(r).map_err(zip_err)?;
    // Members sharing compressed data make output grow with their number, not the archive's
    // size: Python's zipfile (so np.load) refuses them too.
    if z.has_overlapping_files().map_err(zip_err)? {
        return Err(bad(
            "npz archive: members share compressed data (or overlap the central directory): \
             refused as a possible zip bomb",
        ));
    }
    let mut out = Vec::new();
    // What may still be decompressed from the archive.
    let mut left = cap;
    for i in 0..z.len() {
        let name = match z.name_for_index(i) {
            Some(name) => name.map_err(zip_err)?.into_owned(),
            None => continue,
        };
        let Some(stem) = name.strip_suffix(".npy") else {
            continue;
        };
        let stem = stem.to_string();
        let member = |e: Error| {
            let why = match e.reason() {
                Reason::InvalidArgument { reason, .. } => reason.clone(),
                _ => e.message(),
            };
            bad(format!("member {name}: {why}"))
        };
        let mut f = z.by_index(i).map_err(|e| member(zip_err(e)))?;
        let declared = f.size();
        let mut m = Capped {
            inner: &mut f,
            left,
            exceeded: false,
        };
        let bomb = || {
            bad(format!(
                "member {name}: the archive's members decompress to more than {cap} bytes, \
                 the limit for an archive of {len} bytes (npy::MAX_NPZ_RATIO = \
                 {MAX_NPZ_RATIO} times its size, at most npy::MAX_BYTES): refused as a \
                 possible zip bomb"
            ))
        };
        let head = match read_head(&mut m, dtype_of(&stem)) {
            Ok(head) => head,
            Err(_) if m.exceeded => return Err(bomb()),
            Err(e) => return Err(member(e)),
        };
        if u64::try_from(head.bytes).map_or(true, |b| b > declared) {
            return Err(member(bad(format!(
                "its header's shape {} needs {} bytes, more than the member's declared \
                 uncompressed size ({declared} bytes)",
                py_shape(&head.header.shape),
                head.bytes
            ))));
        }
        if head.bytes > m.left {
            return Err(member(bad(format!(
                "its header's shape {} needs {} bytes, more than the {} bytes left of what \
                 an archive of {len} bytes may decompress to ({cap} bytes: \
                 npy::MAX_NPZ_RATIO = {MAX_NPZ_RATIO} times its size, at most npy::MAX_BYTES)",
                py_shape(&head.header.shape),
                head.bytes,
                m.left
            ))));
        }
        let a = read_body(&mut m, head);
        // Read the rest of the member (NumPy writes none), so that the zip crate checks its
        // CRC: corrupted data is an error, never an array.
        let rest = a
            .as_ref()
            .ok()
            .map(|_| std::io::copy(&mut m, &mut std::io::sink()));
        if m.exceeded {
            return Err(bomb());
        }
        let a = a.map_err(member)?;
        if let Some(Err(e)) = rest {
            return Err(member(io(e)));
        }
        left = m.left;
        out.push((stem, a));
    }
    Ok(out)
}

/// A reader that refuses to give more than `left` bytes (an error once its inner reader has
/// more), counting down what it gives.
struct Capped<R> {
    inner: R,
    left: usize,
    exceeded: bool,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // At the cap: only the end of the member is allowed.
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            self.exceeded = true;
            return Err(std::io::Error::other("npz output cap reached"));
        }
        let n = buf.len().min(self.left);
        let got = self.inner.read(&mut buf[..n])?;
        self.left -= got.min(self.left);
        Ok(got)
    }
}

/// `np.savez(path, **arrays)`.
///
/// # Errors
///
/// As [`write_npz`], and the file's I/O errors.
pub fn savez(path: impl AsRef<Path>, arrays: &[(&str, &Array)]) -> Result<(), Error> {
    write_npz(std::fs::File::create(path).map_err(io)?, arrays, false)
}

/// `np.savez_compressed(path, **arrays)`.
///
/// # Errors
///
/// As [`write_npz`], and the file's I/O errors.
pub fn savez_compressed(path: impl AsRef<Path>, arrays: &[(&str, &Array)]) -> Result<(), Error> {
    write_npz(std::fs::File::create(path).map_err(io)?, arrays, true)
}

/// `np.load(path)` of an `.npz` file: its arrays by name.
///
/// # Errors
///
/// As [`read_npz`], and the file's I/O errors.
pub fn load_npz(path: impl AsRef<Path>) -> Result<Vec<(String, Array)>, Error> {
    read_npz(std::io::BufReader::new(
        std::fs::File::open(path).map_err(io)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_with_any_spacing_and_order() {
        let h = parse_header(b"{\"shape\":(2,3L),'fortran_order':True,'descr':'>i2'}").unwrap();
        assert_eq!(
            (h.descr, h.big_endian, h.fortran, h.shape),
            (Parsed::Typed(DType::Int16), true, true, vec![2, 3])
        );
        for bad in [
            &b"{'descr': '<f4', 'shape': (2,)}"[..],
            b"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
            b"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}",
            b"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}",
            b"{'descr': '|O', 'fortran_order': False, 'shape': ()}",
            b"((((((((((((((((((((",
            b"{'descr",
        ] {
            assert!(
                parse_header(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn fortran_order_becomes_row_major() {
        // [[1, 2, 3], [4, 5, 6]] stored column-major: 1 4 2 5 3 6.
        let out = fortran_to_c(&[1, 4, 2, 5, 3, 6], &[2, 3], 1);
        assert_eq!(out, [1, 2, 3, 4, 5, 6]);
        // Dimensions of 1 anywhere change nothing; 2-byte elements move whole.
        let out = fortran_to_c(&[1, 4, 2, 5, 3, 6], &[1, 2, 1, 1, 3, 1], 1);
        assert_eq!(out, [1, 2, 3, 4, 5, 6]);
        let out = fortran_to_c(&[1, 0, 4, 0, 2, 0, 5, 0, 3, 0, 6, 0], &[2, 3], 2);
        assert_eq!(out, [1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0]);
        // Three dimensions: element (i, j, k) sits at i + 2j + 4k in the file.
        let fortran: Vec<u8> = (0..8).collect();
        let out = fortran_to_c(&fortran, &[2, 2, 2], 1);
        assert_eq!(out, [0, 4, 2, 6, 1, 5, 3, 7]);
        assert!(fortran_to_c(&[], &[0, 3], 4).is_empty());
    }

    /// Bytes of every `.npy` member of an archive as decompressed.
    fn decompressed(zip: &[u8]) -> usize {
        let mut z = zip::ZipArchive::new(std::io::Cursor::new(zip)).unwrap();
        (0..z.len())
            .map(|i| z.by_index(i).unwrap().size() as usize)
            .sum()
    }

    #[test]
    fn an_archive_decompresses_to_at_most_its_cap() {
        let a = Array::from_vec(vec![1.5f32; 300]);
        let b = Array::from_vec(vec![7i64; 100]);
        let mut buf = std::io::Cursor::new(Vec::new());
        write_npz(&mut buf, &[("a", &a), ("b", &b)], true).unwrap();
        let zip = buf.into_inner();
        let total = decompressed(&zip);
        let read = |max| read_npz_capped(std::io::Cursor::new(&zip), |_| None, max);
        assert_eq!(read(total).unwrap().len(), 2);
        let first = total - (128 + 800);
        // One byte less: refused from the second member's header, before its data is read.
        let m = read(total - 1).unwrap_err().message();
        assert!(
            m.contains(
                "member b.npy: its header's shape (100,) needs 800 bytes, more than the 799"
            ),
            "{m}"
        );
        // Not even room for its header: refused while reading it.
        let m = read(first + 10).unwrap_err().message();
        assert!(
            m.contains("member b.npy: the archive's members decompress to more than"),
            "{m}"
        );
        assert!(m.contains("refused as a possible zip bomb"), "{m}");
        // Bytes after the data count too (they are read for the CRC).
        let mut file = Vec::new();
        write(&mut file, &b).unwrap();
        file.extend_from_slice(&[0; 100]);
        let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        z.start_file("b.npy", zip::write::SimpleFileOptions::default())
            .unwrap();
        z.write_all(&file).unwrap();
        let zip = z.finish().unwrap().into_inner();
        let read = |max| read_npz_capped(std::io::Cursor::new(&zip), |_| None, max);
        assert_eq!(read(file.len()).unwrap()[0].1.as_bytes(), b.as_bytes());
        let m = read(file.len() - 1).unwrap_err().message();
        assert!(m.contains("refused as a possible zip bomb"), "{m}");
    }

    #[test]
    fn headers_end_on_a_64_byte_boundary() {
        for shape in [&[][..], &[3], &[2, 3, 4]] {
            let h = header_bytes("'<f4'", shape);
            assert_eq!(h.len() % 64, 0);
            assert_eq!(h.last(), Some(&b'\n'));
        }
    }
}

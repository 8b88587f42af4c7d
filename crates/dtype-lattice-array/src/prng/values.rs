//! Sampled values: [`Values`] (one vector per dtype) and [`Sample`] (with its shape), and their
//! JSON form (values and IEEE bit patterns).

use std::io::{self, Write};

use dtype_lattice::{DType, Kind};
use half::{bf16, f16};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::Shape;

/// The values of a sample, by dtype.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
#[non_exhaustive]
pub enum Values {
    Bool(Vec<bool>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

macro_rules! each_values {
    ($v:expr, $x:ident => $body:expr) => {
        match $v {
            Values::Bool($x) => $body,
            Values::U8($x) => $body,
            Values::U16($x) => $body,
            Values::U32($x) => $body,
            Values::U64($x) => $body,
            Values::I8($x) => $body,
            Values::I16($x) => $body,
            Values::I32($x) => $body,
            Values::I64($x) => $body,
            Values::F16($x) => $body,
            Values::BF16($x) => $body,
            Values::F32($x) => $body,
            Values::F64($x) => $body,
        }
    };
}

impl Values {
    /// The dtype of the values.
    pub fn dtype(&self) -> DType {
        match self {
            Values::Bool(_) => DType::Bool,
            Values::U8(_) => DType::UInt8,
            Values::U16(_) => DType::UInt16,
            Values::U32(_) => DType::UInt32,
            Values::U64(_) => DType::UInt64,
            Values::I8(_) => DType::Int8,
            Values::I16(_) => DType::Int16,
            Values::I32(_) => DType::Int32,
            Values::I64(_) => DType::Int64,
            Values::F16(_) => DType::Float16,
            Values::BF16(_) => DType::BFloat16,
            Values::F32(_) => DType::Float32,
            Values::F64(_) => DType::Float64,
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        each_values!(self, v => v.len())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i` as an `f64` (exact for every dtype but 64-bit integers beyond 2^53).
    pub fn get_f64(&self, i: usize) -> Option<f64> {
        Some(match self {
            Values::Bool(v) => f64::from(u8::from(*v.get(i)?)),
            Values::U8(v) => f64::from(*v.get(i)?),
            Values::U16(v) => f64::from(*v.get(i)?),
            Values::U32(v) => f64::from(*v.get(i)?),
            Values::U64(v) => *v.get(i)? as f64,
            Values::I8(v) => f64::from(*v.get(i)?),
            Values::I16(v) => f64::from(*v.get(i)?),
            Values::I32(v) => f64::from(*v.get(i)?),
            Values::I64(v) => *v.get(i)? as f64,
            Values::F16(v) => v.get(i)?.to_f64(),
            Values::BF16(v) => v.get(i)?.to_f64(),
            Values::F32(v) => f64::from(*v.get(i)?),
            Values::F64(v) => *v.get(i)?,
        })
    }

    /// For float dtypes, the IEEE bit pattern of value `i`; `None` otherwise.
    pub fn float_bits(&self, i: usize) -> Option<u64> {
        Some(match self {
            Values::F16(v) => u64::from(v.get(i)?.to_bits()),
            Values::BF16(v) => u64::from(v.get(i)?.to_bits()),
            Values::F32(v) => u64::from(v.get(i)?.to_bits()),
            Values::F64(v) => v.get(i)?.to_bits(),
            _ => return None,
        })
    }

    /// Writes the values little-endian, as NumPy's `tofile` would (bool as one byte).
    ///
    /// # Errors
    ///
    /// Any I/O error of the writer.
    pub fn write_le(&self, w: &mut impl Write) -> io::Result<()> {
        const CHUNK: usize = 1 << 14;
        macro_rules! put {
            ($v:expr, $f:expr) => {{
                let mut buf = Vec::with_capacity(CHUNK * 8);
                for part in $v.chunks(CHUNK) {
                    buf.clear();
                    for x in part {
                        buf.extend_from_slice(&$f(x));
                    }
                    w.write_all(&buf)?;
                }
                Ok(())
            }};
        }
        match self {
            Values::Bool(v) => put!(v, |x: &bool| [u8::from(*x)]),
            Values::U8(v) => w.write_all(v),
            Values::U16(v) => put!(v, |x: &u16| x.to_le_bytes()),
            Values::U32(v) => put!(v, |x: &u32| x.to_le_bytes()),
            Values::U64(v) => put!(v, |x: &u64| x.to_le_bytes()),
            Values::I8(v) => put!(v, |x: &i8| x.to_le_bytes()),
            Values::I16(v) => put!(v, |x: &i16| x.to_le_bytes()),
            Values::I32(v) => put!(v, |x: &i32| x.to_le_bytes()),
            Values::I64(v) => put!(v, |x: &i64| x.to_le_bytes()),
            Values::F16(v) => put!(v, |x: &f16| x.to_le_bytes()),
            Values::BF16(v) => put!(v, |x: &bf16| x.to_le_bytes()),
            Values::F32(v) => put!(v, |x: &f32| x.to_le_bytes()),
            Values::F64(v) => put!(v, |x: &f64| x.to_le_bytes()),
        }
    }
}

/// A sampled array: its shape and values (row-major).
///
/// Serialises as the CLI prints it: `{"dtype", "shape", "values"}`, plus `"bits"` (the IEEE
/// bit patterns as unsigned integers) for float dtypes.
///
/// ```
/// use dtype_lattice_array::random::Random;
/// let rng = Random::new();
/// let s = rng.uniform(&rng.key(0).unwrap(), &[2], dtype_lattice::DType::Float16, 0.0, 1.0).unwrap();
/// let json = serde_json::to_value(&s).unwrap();
/// assert_eq!(json["dtype"], "float16");
/// assert_eq!(json["bits"].as_array().unwrap().len(), 2);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub(crate) shape: Shape,
    pub(crate) values: Values,
}

impl Sample {
    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.values.dtype()
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The values, row-major.
    pub fn values(&self) -> &Values {
        &self.values
    }

    /// Consumes the sample, giving its values.
    pub fn into_values(self) -> Values {
        self.values
    }

    /// The values of a concrete array of one of [`Values`]' dtypes (what the samplers of
    /// `random` on arrays return), as a sample.
    ///
    /// ```
    /// use dtype_lattice_array::{Array, random::Sample};
    /// let s = Sample::from_array(&Array::from_shape_vec(&[2], vec![1.5f32, 2.0])?)?;
    /// assert_eq!((s.shape(), s.values().get_f64(1)), (&[2usize][..], Some(2.0)));
    /// # Ok::<(), dtype_lattice::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a tracer or a dtype [`Values`] has no vector for.
    pub fn from_array(a: &crate::array::Array) -> Result<Sample, dtype_lattice::Error> {
        let values = match a.dtype() {
            DType::Bool => Values::Bool(a.to_vec()?),
            DType::UInt8 => Values::U8(a.to_vec()?),
            DType::UInt16 => Values::U16(a.to_vec()?),
            DType::UInt32 => Values::U32(a.to_vec()?),
            DType::UInt64 => Values::U64(a.to_vec()?),
            DType::Int8 => Values::I8(a.to_vec()?),
            DType::Int16 => Values::I16(a.to_vec()?),
            DType::Int32 => Values::I32(a.to_vec()?),
            DType::Int64 => Values::I64(a.to_vec()?),
            DType::Float16 => Values::F16(a.to_vec()?),
            DType::BFloat16 => Values::BF16(a.to_vec()?),
            DType::Float32 => Values::F32(a.to_vec()?),
            DType::Float64 => Values::F64(a.to_vec()?),
            other => {
                return Err(crate::array::invalid(
                    "sample",
                    format!("no sample of {other} values"),
                ));
            }
        };
        Ok(Sample {
            shape: a.shape().into(),
            values,
        })
    }
}

pub(crate) struct JsonValues<'a>(&'a Values);

impl Serialize for JsonValues<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            // Floats print as the f64 they convert to exactly, as Python's float(x) does.
            Values::F16(v) => s.collect_seq(v.iter().map(|x| x.to_f64())),
            Values::BF16(v) => s.collect_seq(v.iter().map(|x| x.to_f64())),
            Values::F32(v) => s.collect_seq(v.iter().map(|&x| f64::from(x))),
            Values::F64(v) => v.serialize(s),
            Values::Bool(v) => v.serialize(s),
            Values::U8(v) => v.serialize(s),
            Values::U16(v) => v.serialize(s),
            Values::U32(v) => v.serialize(s),
            Values::U64(v) => v.serialize(s),
            Values::I8(v) => v.serialize(s),
            Values::I16(v) => v.serialize(s),
            Values::I32(v) => v.serialize(s),
            Values::I64(v) => v.serialize(s),
        }
    }
}

pub(crate) struct JsonBits<'a>(&'a Values);

impl Serialize for JsonBits<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = self.0.len();
        s.collect_seq((0..n).filter_map(|i| self.0.float_bits(i)))
    }
}

impl Serialize for Sample {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let is_float = self.dtype().kind() == Kind::Float;
        let mut m = s.serialize_map(Some(if is_float { 4 } else { 3 }))?;
        m.serialize_entry("dtype", &self.dtype())?;
        m.serialize_entry("shape", &self.shape)?;
        m.serialize_entry("values", &JsonValues(&self.values))?;
        if is_float {
            m.serialize_entry("bits", &JsonBits(&self.values))?;
        }
        m.end()
    }
}

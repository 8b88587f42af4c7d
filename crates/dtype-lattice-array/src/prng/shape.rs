//! Shapes: sizes, JAX's limits and the in-memory limit, Python's tuple notation, allocation.

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::invalid;
pub use crate::array::MAX_ELEMENTS;
pub(crate) use crate::array::py_shape;

/// The number of elements, or `None` if it overflows 128 bits.
pub(crate) fn checked_size(shape: &[usize]) -> Option<u128> {
    shape
        .iter()
        .try_fold(1u128, |acc, &d| acc.checked_mul(d as u128))
}

/// The size of a sampler's output: JAX refuses more than 2^64 elements; beyond that, the
/// output must have at most [`MAX_ELEMENTS`] elements.
pub(crate) fn output_size(shape: &[usize]) -> Result<usize, Error> {
    let size = checked_size(shape).unwrap_or(u128::MAX);
    if size > 1u128 << 64 {
        return Err(Error::refused(
            Exception::NotImplementedError,
            "random bits array of size exceeding 2 ** 64",
        ));
    }
    usize::try_from(size)
        .ok()
        .filter(|&n| n <= MAX_ELEMENTS)
        .ok_or_else(|| {
            invalid(
                "shape",
                format!(
                    "shape {} has {size} elements; an array held in memory has at most 2^28 \
                     ({MAX_ELEMENTS})",
                    py_shape(shape)
                ),
            )
        })
}

/// A zero-filled vector of `n` elements, or a clear error when memory is short.
///
/// The reservation is tried first (so that a shape too large for memory is an error, not an
/// abort); the vector itself comes from `vec!`, which for zero-valued integers, floats and
/// bools asks the allocator for zeroed memory: fresh pages, first touched by the parallel fill
/// rather than zeroed here on one thread.
pub(crate) fn alloc<T: Clone + Default>(n: usize) -> Result<Vec<T>, Error> {
    let mut probe: Vec<T> = Vec::new();
    probe.try_reserve_exact(n).map_err(|_| {
        invalid(
            "shape",
            format!(
                "cannot allocate {n} values of {} bytes",
                std::mem::size_of::<T>()
            ),
        )
    })?;
    drop(probe);
    Ok(vec![T::default(); n])
}

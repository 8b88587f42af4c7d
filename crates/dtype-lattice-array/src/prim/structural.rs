//! Structural primitives: they move elements without looking at them, so one kernel per
//! storage word width serves every dtype (`broadcast_in_dim`, `reshape`).

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use super::{Params, Primitive};
use crate::array::py_shape;
use crate::array::{Array, ShapedArray, Storage, Word};

/// Row-major strides of a shape, in elements.
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// `out[i] = x[index(i)]` for every output element, `words` storage words per element.
fn gather<W: Word>(x: &[W], n_out: usize, words: usize, index: impl Fn(usize) -> usize) -> Storage {
    let mut out = Vec::with_capacity(n_out * words);
    for i in 0..n_out {
        let j = index(i) * words;
        out.extend_from_slice(&x[j..j + words]);
    }
    W::into_storage(out)
}

/// [`gather`] on whatever width `x` is stored in.
pub(crate) fn gather_any(x: &Array, n_out: usize, index: impl Fn(usize) -> usize) -> Storage {
    let words = crate::array::layout(x.dtype()).1;
    match x.storage() {
        Storage::W8(v) => gather(v, n_out, words, index),
        Storage::W16(v) => gather(v, n_out, words, index),
        Storage::W32(v) => gather(v, n_out, words, index),
        Storage::W64(v) => gather(v, n_out, words, index),
        Storage::W128(v) => gather(v, n_out, words, index),
    }
}

fn broadcast_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Vec<ShapedArray>, Error> {
    let x = inputs[0];
    let shape = params.usizes(prim.name, "shape")?;
    let dims = params.usizes(prim.name, "broadcast_dimensions")?;
    let refuse = |why: String| Err(Error::refused(Exception::TypeError, why));
    if dims.len() != x.ndim() {
        return refuse(format!(
            "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got \
             broadcast_dimensions {} for operand ndim {}.",
            py_shape(&dims),
            x.ndim()
        ));
    }
    if dims.windows(2).any(|w| w[0] >= w[1]) {
        return refuse(format!(
            "broadcast_in_dim broadcast_dimensions must be strictly increasing; got \
             broadcast_dimensions {}",
            py_shape(&dims)
        ));
    }
    for (i, &d) in dims.iter().enumerate() {
        if d >= shape.len() || (x.shape()[i] != 1 && x.shape()[i] != shape[d]) {
            return refuse(format!(
                "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their \
                 corresponding dimensions in the target broadcast shape; got operand of shape \
                 {}, target broadcast shape {}, broadcast_dimensions {} ",
                py_shape(x.shape()),
                py_shape(&shape),
                py_shape(&dims)
            ));
        }
    }
    Ok(vec![ShapedArray::new(&shape, x.dtype(), x.weak_type())])
}

fn broadcast_impl(
    prim: &'static Primitive,
    inputs: &[&Array],
    params: &Params,
    out: &[ShapedArray],
) -> Result<Vec<Array>, Error> {
    let x = inputs[0];
    let dims = params.usizes(prim.name, "broadcast_dimensions")?;
    let out_shape = out[0].shape();
    let out_strides = strides(out_shape);
    let in_strides = strides(x.shape());
    // Each output dimension's stride in the input (0 where it broadcasts).
    let mut step = vec![0; out_shape.len()];
    for (i, &d) in dims.iter().enumerate() {
        if x.shape()[i] != 1 {
            step[d] = in_strides[i];
        }
    }
    let data = gather_any(x, out[0].size(), |mut i| {
        let mut j = 0;
        for (k, &s) in out_strides.iter().enumerate() {
            j += (i / s) * step[k];
            i %= s;
        }
        j
    });
    Ok(vec![Array::from_parts(out[0].clone(), data)])
}

pub(crate) static BROADCAST_IN_DIM: Primitive = Primitive {
    name: "broadcast_in_dim",
    arity: Some(1),
    shape_rule: broadcast_shape_rule,
    impl_rule: broadcast_impl,
};

fn reshape_shape_rule(
    prim: &'static Primitive,
    inputs: &[&ShapedArray],
    params: &Params,
) -> Result<Vec<ShapedArray>, Error> {
    let x = inputs[0];
    let new_sizes = params.usizes(prim.name, "new_sizes")?;
    if crate::array::checked_size(&new_sizes) != Some(x.size()) {
        return Err(Error::refused(
            Exception::TypeError,
            format!(
                "reshape total size must be unchanged, got new_sizes {} (of total size {}) for \
                 shape {} (of total size {}).",
                py_shape(&new_sizes),
                crate::array::checked_size(&new_sizes).map_or("overflow".into(), |n| n.to_string()),
                py_shape(x.shape()),
                x.size()
            ),
        ));
    }
    Ok(vec![ShapedArray::new(&new_sizes, x.dtype(), x.weak_type())])
}

fn reshape_impl(
    _: &'static Primitive,
    inputs: &[&Array],
    _: &Params,
    out: &[ShapedArray],
) -> Result<Vec<Array>, Error> {
    // Row-major elements stay in order: the words are shared.
    Ok(vec![Array::from_parts(
        out[0].clone(),
        inputs[0].storage().clone(),
    )])
}

pub(crate) static RESHAPE: Primitive = Primitive {
    name: "reshape",
    arity: Some(1),
    shape_rule: reshape_shape_rule,
    impl_rule: reshape_impl,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prim::{Param, bind1};

    #[test]
    fn broadcast_in_dim_repeats_along_new_and_unit_dimensions() {
        let x = Array::from_shape_vec(&[2, 1], vec![1i32, 2]).unwrap();
        let p = Params::new()
            .with("shape", Param::Ints(vec![3, 2, 4]))
            .with("broadcast_dimensions", Param::Ints(vec![1, 2]));
        let y = bind1(&BROADCAST_IN_DIM, &[&x], &p).unwrap();
        assert_eq!(y.shape(), &[3, 2, 4]);
        let v = y.to_vec::<i32>().unwrap();
        assert_eq!(&v[..8], &[1, 1, 1, 1, 2, 2, 2, 2]);
        assert_eq!(&v[8..16], &v[..8]);
    }

    #[test]
    fn reshape_keeps_the_order_and_refuses_another_size() {
        let x = Array::from_vec(vec![1u8, 2, 3, 4, 5, 6]);
        let p = Params::new().with("new_sizes", Param::Ints(vec![2, 3]));
        let y = bind1(&RESHAPE, &[&x], &p).unwrap();
        assert_eq!(
            (y.shape(), y.to_vec::<u8>().unwrap()),
            (&[2usize, 3][..], vec![1, 2, 3, 4, 5, 6])
        );
        let p = Params::new().with("new_sizes", Param::Ints(vec![4]));
        let e = bind1(&RESHAPE, &[&x], &p).unwrap_err();
        assert_eq!(e.exception(), Some(Exception::TypeError));
    }
}

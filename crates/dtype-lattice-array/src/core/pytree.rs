//! Pytrees: values made of arrays (JAX's nested tuples, lists and dicts), flattened into their
//! leaves and rebuilt with other leaves of the same structure, so that a transformation can
//! take and return a model's parameters as one value.

use std::collections::BTreeMap;

use dtype_lattice::Error;
use dtype_lattice::error::Exception;

use crate::array::Array;

/// A value made of arrays: flattened into its leaves (row order: tuple and vector order, map
/// keys sorted) and rebuilt with the same structure from other leaves.
///
/// ```
/// use dtype_lattice_array::{Array, core::Pytree};
/// let params = vec![(Array::scalar(1.0f32), Array::scalar(2.0f32))];
/// let leaves = params.leaves();
/// assert_eq!(leaves.len(), 2);
/// let twice = params.rebuild(&mut leaves.into_iter().map(|x| x.with_weak_type(true)))?;
/// assert!(twice[0].1.weak_type());
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
pub trait Pytree: Sized {
    /// Appends the leaves, in order.
    fn flatten_into(&self, out: &mut Vec<Array>);

    /// A value of `self`'s structure with the next leaves of `leaves`.
    ///
    /// # Errors
    ///
    /// `TypeError` when `leaves` runs out.
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self, Error>;

    /// The leaves, in order.
    fn leaves(&self) -> Vec<Array> {
        let mut out = Vec::new();
        self.flatten_into(&mut out);
        out
    }
}

fn too_few() -> Error {
    Error::refused(
        Exception::TypeError,
        "too few leaves to rebuild the pytree (its structure changed)",
    )
}

impl Pytree for Array {
    fn flatten_into(&self, out: &mut Vec<Array>) {
        out.push(self.clone());
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self, Error> {
        leaves.next().ok_or_else(too_few)
    }
}

impl Pytree for () {
    fn flatten_into(&self, _: &mut Vec<Array>) {}
    fn rebuild(&self, _: &mut dyn Iterator<Item = Array>) -> Result<Self, Error> {
        Ok(())
    }
}

impl<T: Pytree> Pytree for Vec<T> {
    fn flatten_into(&self, out: &mut Vec<Array>) {
        self.iter().for_each(|x| x.flatten_into(out));
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self, Error> {
        self.iter().map(|x| x.rebuild(leaves)).collect()
    }
}

impl<T: Pytree> Pytree for Option<T> {
    fn flatten_into(&self, out: &mut Vec<Array>) {
        if let Some(x) = self {
            x.flatten_into(out);
        }
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self, Error> {
        self.as_ref().map(|x| x.rebuild(leaves)).transpose()
    }
}

impl<K: Ord + Clone, T: Pytree> Pytree for BTreeMap<K, T> {
    fn flatten_into(&self, out: &mut Vec<Array>) {
        self.values().for_each(|x| x.flatten_into(out));
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self, Error> {
        self.iter()
            .map(|(k, x)| Ok((k.clone(), x.rebuild(leaves)?)))
            .collect()
    }
}

macro_rules! tuples {
    ($(($($t:ident $i:tt),+)),*) => {$(
        impl<$($t: Pytree),+> Pytree for ($($t,)+) {
            fn flatten_into(&self, out: &mut Vec<Array>) {
                $(self.$i.flatten_into(out);)+
            }
            fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self, Error> {
                Ok(($(self.$i.rebuild(leaves)?,)+))
            }
        }
    )*};
}

tuples! {
    (A 0),
    (A 0, B 1),
    (A 0, B 1, C 2),
    (A 0, B 1, C 2, D 3),
    (A 0, B 1, C 2, D 3, E 4),
    (A 0, B 1, C 2, D 3, E 4, G 5)
}

//! The array crate's layers (ARCHITECTURE.md, "Layers"): a module uses only modules of its own
//! layer and of those below it. Kernels know slices; configuration sits below what reads it;
//! nothing reaches up. The one edge against the order is the array's tracer.

use std::path::PathBuf;

use crate::common::layering::Layers;

/// Lowest first.
const LAYERS: Layers = Layers {
    layers: &[
        // Functions over slices and numbers; every `unsafe`.
        &["kernels"],
        // Element codecs (every dtype to every other).
        &["convert"],
        // The rules in force.
        &["config"],
        // Array, ShapedArray, storage, scalar constants, limits.
        &["array"],
        // JAX's and NumPy's repr of arrays; .npy/.npz files.
        &["repr", "npy"],
        // The PRNG on plain keys and vectors.
        &["prng"],
        // Primitive, Params, bind, traces, jaxprs, pytrees.
        &["core"],
        // The primitives, one file per family with all their rules.
        &["lax"],
        // The transformations: drivers of the primitives' rules.
        &["interpreters"],
        // jit: the call primitive, the plan and its passes.
        &["jit"],
        // jax.numpy, then jax.random (which indexes with numpy's Index and defines the
        // `random_gamma` primitive: its rejection sampler is a `while_loop` of jax.random's
        // normal and uniform draws).
        &["numpy"],
        &["random"],
        // Every primitive by name (for text that names one), above every definition.
        &["registry"],
        // The jaxpr reader: text to jaxprs of the registry's primitives.
        &["reader"],
        // jax.nn and flax's pooling, on jax.numpy, jit and the custom rules.
        &["nn"],
        // jax.experimental.ode on control flow, custom_vjp and jax.numpy.
        &["ode"],
    ],
    allowed: &[(
        "array",
        "core",
        "an Array may hold a core::Tracer (its data is concrete storage or a tracer), as JAX's \
         core.py holds Tracer beside the array type",
    )],
};

#[test]
fn every_module_uses_only_its_layer_and_those_below() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    LAYERS.assert_layered(&src);
}

#[test]
fn the_allowed_edge_is_still_needed() {
    // An allow-list entry nothing uses any more is stale: remove it.
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let (edges, _) = LAYERS.check(&src);
    for (from, to, _) in LAYERS.allowed {
        assert!(
            edges.iter().any(|e| e.from == *from && e.to == *to),
            "{from} -> {to} is allowed but unused"
        );
    }
}

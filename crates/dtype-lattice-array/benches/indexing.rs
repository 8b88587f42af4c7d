//! Issue 28's indexing, sorting and pooling benchmarks, timed beside
//! tools/bench_indexing_peers.py (jitted JAX, and NumPy where it has the operation, on the
//! same programs and inputs). Each program is the jaxpr JAX prints for it, read and jitted
//! here:
//!
//! - `gather_rows_f32_1m`: `table[idx]`, 1,048,576 random rows of 64 float32 from a
//!   65,536×64 table (target: at least JAX's speed);
//! - `scatter_add_rows_f32_1m`: its transpose, `zeros.at[idx].add(updates)` (target: at
//!   least JAX's speed);
//! - `sort_f32_2e20`, `argsort_f32_2e20`: `jnp.sort`, `jnp.argsort` of 2^20 float32
//!   (targets: at least NumPy's `np.sort`/`np.argsort`);
//! - `conv2d_nhwc_3x3`, `conv2d_nhwc_3x3_grad_input`, `conv2d_nhwc_3x3_grad_kernel`: a
//!   3×3 SAME convolution of (32, 32, 32, 64) NHWC float32 activations with a 3×3×64×64
//!   HWIO kernel, and the gradients of its sum in the input and in the kernel (target:
//!   within 1.5× of JAX's time);
//! - `max_pool_2x2_grad`: the gradient of a 2×2, stride-2 max pool of (32, 32, 32, 64)
//!   float32 activations (target: at least JAX's speed).
//!
//! The inputs are hashes of the element index, computed the same way by the peers script:
//! `h(k) = (k · 2654435761 mod 2^32) / 2^32 − 0.5` as float32, row indices
//! `(i · 2246822519 mod 2^32) >> 16`.

use criterion::{Criterion, criterion_group, criterion_main};
use dtype_lattice_array::core::ClosedJaxpr;
use dtype_lattice_array::{Array, jit};
use std::hint::black_box;

fn hash(k: usize) -> f32 {
    ((k as u64 * 2654435761) % (1 << 32)) as f32 / 4294967296.0 - 0.5
}

fn floats(shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    Array::from_shape_vec(shape, (0..n).map(hash).collect()).unwrap()
}

fn rows(n: usize) -> Array {
    Array::from_vec(
        (0..n)
            .map(|i| (((i as u64 * 2246822519) % (1 << 32)) >> 16) as i32)
            .collect(),
    )
}

const GATHER: &str = "{ lambda ; a:f32[65536,64] b:i32[1048576]. let
    c:bool[1048576] = lt b 0:i32[]
    d:i32[1048576] = add b 65536:i32[]
    e:i32[1048576] = select_n c b d
    f:i32[1048576,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[1048576,64] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 64)
      unique_indices=False
    ] a f
  in (g,) }";

const SCATTER_ADD: &str = "{ lambda ; a:f32[1048576,64] b:i32[1048576]. let
    c:f32[65536,64] = broadcast_in_dim 0.0:f32[]
    d:bool[1048576] = lt b 0:i32[]
    e:i32[1048576] = add b 65536:i32[]
    f:i32[1048576] = select_n d b e
    g:i32[1048576,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
    h:f32[65536,64] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = add i j in (k,) }
    ] c g a
  in (h,) }";

const SORT: &str = "{ lambda ; a:f32[1048576]. let
    b:f32[1048576] = sort[dimension=0 is_stable=True num_keys=1] a
  in (b,) }";

const ARGSORT: &str = "{ lambda ; a:f32[1048576]. let
    c:i32[1048576] = iota[dimension=0 dtype=int32 shape=(1048576,) sharding=None] 
    d:f32[1048576] b:i32[1048576] = sort[dimension=0 is_stable=True num_keys=1] a c
  in (b,) }";

const MAX_POOL_GRAD: &str = "{ lambda ; a:f32[32,32,32,64]. let
    b:f32[32,16,16,64] = reduce_window_max[
      base_dilation=(1, 1, 1, 1)
      padding=((0, 0), (0, 0), (0, 0), (0, 0))
      window_dilation=(1, 1, 1, 1)
      window_dimensions=(1, 2, 2, 1)
      window_strides=(1, 2, 2, 1)
    ] a
    _:f32[] = reduce_sum[axes=(0, 1, 2, 3) out_sharding=None] b
    c:f32[32,16,16,64] = broadcast_in_dim 1.0:f32[]
    d:f32[32,32,32,64] = select_and_scatter_add[
      padding=((0, 0), (0, 0), (0, 0), (0, 0))
      select_prim=ge
      window_dimensions=(1, 2, 2, 1)
      window_strides=(1, 2, 2, 1)
    ] c a
  in (d,) }";

const CONV: &str = "{ lambda ; a:f32[32,32,32,64] b:f32[3,3,64,64]. let
    c:f32[32,32,32,64] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
  in (c,) }";

const CONV_GRAD_INPUT: &str = "{ lambda ; a:f32[32,32,32,64] b:f32[3,3,64,64]. let
    c:f32[32,32,32,64] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1, 2, 3) out_sharding=None] c
    d:f32[32,32,32,64] = broadcast_in_dim 1.0:f32[]
    e:f32[3,3,64,64] = rev[dimensions=(0, 1)] b
    f:f32[32,32,32,64] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(2, 3, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] d e
  in (f,) }";

const CONV_GRAD_KERNEL: &str = "{ lambda ; a:f32[32,32,32,64] b:f32[3,3,64,64]. let
    c:f32[32,32,32,64] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1, 2, 3) out_sharding=None] c
    d:f32[32,32,32,64] = broadcast_in_dim 1.0:f32[]
    e:f32[3,3,64,64] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(3, 0, 1, 2), rhs_spec=(3, 0, 1, 2), out_spec=(2, 3, 0, 1))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a d
  in (e,) }";

/// Benchmarks `text` jitted on `args`, printing the sum of the first output as a check.
fn program(c: &mut Criterion, name: &str, text: &str, args: Vec<Array>) {
    let f: ClosedJaxpr = text.parse().unwrap();
    let g = jit(move |a: Vec<Array>| f.call(&a));
    let out: Vec<Array> = g.call(&args).unwrap();
    let check: f64 = out[0]
        .astype(dtype_lattice::DType::Float64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap()
        .iter()
        .sum();
    println!("{name} check {check:?}");
    c.bench_function(name, |b| b.iter(|| black_box(g.call(&args).unwrap())));
}

fn indexing(c: &mut Criterion) {
    let idx = rows(1 << 20);
    program(
        c,
        "gather_rows_f32_1m",
        GATHER,
        vec![floats(&[65536, 64]), idx.clone()],
    );
    program(
        c,
        "scatter_add_rows_f32_1m",
        SCATTER_ADD,
        vec![floats(&[1 << 20, 64]), idx],
    );
    program(c, "sort_f32_2e20", SORT, vec![floats(&[1 << 20])]);
    program(c, "argsort_f32_2e20", ARGSORT, vec![floats(&[1 << 20])]);
    let (act, kernel) = (floats(&[32, 32, 32, 64]), floats(&[3, 3, 64, 64]));
    program(
        c,
        "conv2d_nhwc_3x3",
        CONV,
        vec![act.clone(), kernel.clone()],
    );
    program(
        c,
        "conv2d_nhwc_3x3_grad_input",
        CONV_GRAD_INPUT,
        vec![act.clone(), kernel.clone()],
    );
    program(
        c,
        "conv2d_nhwc_3x3_grad_kernel",
        CONV_GRAD_KERNEL,
        vec![act, kernel],
    );
    program(
        c,
        "max_pool_2x2_grad",
        MAX_POOL_GRAD,
        vec![floats(&[32, 32, 32, 64])],
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = indexing
}
criterion_main!(benches);

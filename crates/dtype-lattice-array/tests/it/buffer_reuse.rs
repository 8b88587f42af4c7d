//! Results written into recycled buffers: large freed buffers are pooled and handed back
//! without clearing to kernels that write every word (matmul, conversions, fused elementwise
//! loops), and small ones are cached per thread. Garbage left in a buffer (NaN here) must
//! never show through, whatever runs next.

use dtype_lattice::DType;
use dtype_lattice_array::{Array, numpy as jnp};

/// Frees `count` arrays of `n` float32 NaNs (4-byte words), filling the pool with NaN words.
fn poison(n: usize, count: usize) {
    let arrays: Vec<Array> = (0..count)
        .map(|_| Array::from_vec(vec![f32::NAN; n]))
        .collect();
    // Results computed from them land in pooled buffers too; drop everything.
    let sums: Vec<Array> = arrays.iter().map(|a| jnp::add(a, a).unwrap()).collect();
    drop((arrays, sums));
}

#[test]
fn matmul_into_a_recycled_buffer_reads_none_of_its_old_words() {
    let n = 1024;
    poison(n * n, 4);
    let ones = jnp::ones(&[n, n], DType::Float32).unwrap();
    let p = jnp::matmul(&ones, &ones).unwrap();
    assert!(p.to_vec::<f32>().unwrap().iter().all(|&v| v == n as f32));
}

#[test]
fn elementwise_and_conversions_into_recycled_buffers_are_exact() {
    let n = 1 << 21;
    poison(n, 4);
    let x = Array::from_vec((0..n).map(|i| (i % 97) as f32).collect::<Vec<_>>());
    let y = jnp::add(&x, &x).unwrap();
    let want: Vec<f32> = (0..n).map(|i| 2.0 * (i % 97) as f32).collect();
    assert_eq!(y.to_vec::<f32>().unwrap(), want);
    poison(n, 4);
    let bf = x
        .astype(DType::BFloat16)
        .unwrap()
        .astype(DType::Float32)
        .unwrap();
    assert_eq!(bf.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    // Small arrays: the per-thread cache.
    for _ in 0..100 {
        poison(5, 8);
        let s = jnp::add(Array::from_vec(vec![1.0f32, 2.0, 3.0]), 1.0).unwrap();
        assert_eq!(s.to_vec::<f32>().unwrap(), vec![2.0, 3.0, 4.0]);
    }
}

/// `scatter-add` of rows into its operand `d`, which the program also reads afterwards (when
/// `reuse_after`) or not: jit hands `d` to the scatter to update in place only at its last
/// use, never the caller's argument.
fn scatter_program(reuse_after: bool) -> dtype_lattice_array::core::ClosedJaxpr {
    let (tail, outs) = if reuse_after {
        ("    g:f32[4096,64] = add d 1.0:f32[]\n", "(f, g)")
    } else {
        ("", "(f,)")
    };
    format!(
        "{{ lambda ; a:f32[4096,64] b:i32[8192] c:f32[8192,64]. let
    d:f32[4096,64] = mul a 2.0:f32[]
    e:i32[8192,1] = broadcast_in_dim[broadcast_dimensions=(0,) shape=(8192, 1) sharding=None] b
    f:f32[4096,64] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr=None
    ] d e c
{tail}  in {outs} }}"
    )
    .parse()
    .unwrap()
}

#[test]
fn jit_scatters_into_its_operand_only_at_its_last_use() {
    use dtype_lattice_array::jit;
    let (rows, n) = (4096usize, 8192usize);
    let a = Array::from_shape_vec(
        &[rows, 64],
        (0..rows * 64).map(|i| (i % 89) as f32 * 0.25).collect(),
    )
    .unwrap();
    // Every fifth index out of range (dropped), the rest repeated.
    let b = Array::from_vec(
        (0..n)
            .map(|i| {
                if i % 5 == 4 {
                    rows as i32
                } else {
                    ((i * 7) % rows) as i32
                }
            })
            .collect::<Vec<_>>(),
    );
    let c =
        Array::from_shape_vec(&[n, 64], (0..n * 64).map(|i| (i % 13) as f32).collect()).unwrap();
    let a_before = a.to_vec::<f32>().unwrap();
    for reuse_after in [false, true] {
        let f = scatter_program(reuse_after);
        let eager = f.call(&[a.clone(), b.clone(), c.clone()]).unwrap();
        let g = jit(move |x: Vec<Array>| f.call(&x));
        for _ in 0..2 {
            let got: Vec<Array> = g.call(&vec![a.clone(), b.clone(), c.clone()]).unwrap();
            assert_eq!(got.len(), eager.len());
            for (x, y) in got.iter().zip(&eager) {
                assert_eq!(x.to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
            }
            if reuse_after {
                // `g = d + 1` reads `d` after the scatter: untouched by it.
                let want: Vec<f32> = a_before.iter().map(|&v| v * 2.0 + 1.0).collect();
                assert_eq!(got[1].to_vec::<f32>().unwrap(), want);
            }
        }
    }
    assert_eq!(a.to_vec::<f32>().unwrap(), a_before);
}

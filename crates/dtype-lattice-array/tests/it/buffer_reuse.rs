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

//! Criterion benches for the promotion hot paths.
//!
//! - `promote_types`: one binary `promote_types` call (JAX standard rules, x64 off).
//! - `result_type_4`: `result_type` of int8, uint8 and float16 arrays and a Python float.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dtype_lattice::{DType, Operand, Rules, Value};

fn benches(c: &mut Criterion) {
    let rules = Rules::jax();
    // Build the lattice outside the timed loop.
    let _ = rules.promote_types(DType::Int8, DType::UInt8);
    c.bench_function("promote_types", |b| {
        b.iter(|| rules.promote_types(black_box(DType::Int8), black_box(DType::UInt8)))
    });
    let ops = [
        Operand::array(DType::Int8),
        Operand::array(DType::UInt8),
        Operand::array(DType::Float16),
        Operand::Literal(Value::Float(2.5)),
    ];
    c.bench_function("result_type_4", |b| {
        b.iter(|| rules.result_type(black_box(&ops)))
    });
}

criterion_group!(promotion, benches);
criterion_main!(promotion);

use dtype_lattice::DType;
use dtype_lattice_array::numpy as jnp;
use dtype_lattice_array::{Array, prim, random};
fn t(name: &str, f: &dyn Fn() -> Array) {
    for _ in 0..50 {
        f();
    }
    let n = 2000;
    let s = std::time::Instant::now();
    for _ in 0..n {
        std::hint::black_box(f());
    }
    eprintln!(
        "{name:30} {:8.2} us",
        s.elapsed().as_secs_f64() / n as f64 * 1e6
    );
}
fn main() {
    if std::env::var("DOTS").is_ok() {
        dots();
        return;
    }
    let k = random::key(0).unwrap();
    let x = random::normal(&k, &[256, 32], DType::Float32).unwrap();
    let y = random::normal(&random::fold_in(&k, 1).unwrap(), &[256, 32], DType::Float32).unwrap();
    let m = jnp::less(&x, &y).unwrap();
    let lax = |n: &str, a: &[&Array]| {
        prim::bind(prim::by_name(n).unwrap(), a, &prim::Params::new()).unwrap()[0].clone()
    };
    t("add", &|| jnp::add(&x, &y).unwrap());
    t("mul", &|| jnp::multiply(&x, &y).unwrap());
    t("div", &|| jnp::true_divide(&x, &y).unwrap());
    t("div scalar", &|| jnp::true_divide(&x, 0.9).unwrap());
    t("max", &|| jnp::maximum(&x, &y).unwrap());
    t("exp", &|| jnp::exp(&x).unwrap());
    t("log1p", &|| jnp::log1p(&x).unwrap());
    t("logistic", &|| lax("logistic", &[&x]));
    t("abs", &|| jnp::abs(&x).unwrap());
    t("where", &|| jnp::r#where(&m, &x, &y).unwrap());
    t("lt", &|| jnp::less(&x, &y).unwrap());
    t("bitcast", &|| jnp::astype(&x, DType::Float32).unwrap());
    t("normal", &|| {
        random::normal(&k, &[256, 32], DType::Float32).unwrap()
    });
    t("bernoulli", &|| {
        random::bernoulli(&k, 0.9, &[256, 32]).unwrap()
    });
}
pub fn dots() {
    use dtype_lattice_array::prim::{Param, Params};
    let k = random::key(0).unwrap();
    let du = random::normal(&k, &[256, 1, 32], DType::Float32).unwrap();
    let x2 = random::normal(&k, &[256, 1, 2], DType::Float32).unwrap();
    let c = random::normal(&k, &[32, 32], DType::Float32).unwrap();
    let dg = |lc: Vec<i64>, rc: Vec<i64>| {
        Params::new()
            .with(
                "dimension_numbers",
                Param::DotDimensionNumbers {
                    lhs_contracting: lc,
                    rhs_contracting: rc,
                    lhs_batch: vec![],
                    rhs_batch: vec![],
                },
            )
            .with("out_sharding", Param::None)
            .with("precision", Param::None)
            .with("preferred_element_type", Param::None)
    };
    let p = prim::by_name("dot_general").unwrap();
    let p1 = dg(vec![0, 1], vec![0, 1]);
    t("dot du^T du [32,32]", &|| {
        prim::bind(p, &[&du, &du], &p1).unwrap()[0].clone()
    });
    t("dot du^T x2 [32,2]", &|| {
        prim::bind(p, &[&du, &x2], &p1).unwrap()[0].clone()
    });
    let p2 = dg(vec![2], vec![0]);
    t("dot du c [256,1,32]", &|| {
        prim::bind(p, &[&du, &c], &p2).unwrap()[0].clone()
    });
    let tp = Params::new().with("permutation", Param::Ints(vec![2, 0, 1]));
    t("transpose [256,1,32]->[32,256,1]", &|| {
        prim::bind(prim::by_name("transpose").unwrap(), &[&du], &tp).unwrap()[0].clone()
    });
}

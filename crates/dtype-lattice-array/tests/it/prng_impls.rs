//! Pluggable PRNGs against JAX 0.10.2 (tests/fixtures/random_arrays/impls_{x32,x64}.json,
//! tools/gen_prng_impls_fixtures.py): every built-in implementation — `threefry2x32`, `rbg`,
//! `unsafe_rbg`, `threefry4x32`, `philox2x32`, `philox4x32` — through `random`'s key functions
//! and first samplers, eagerly, under `jit` and under `vmap` over a batch of keys, and JAX's
//! printed programs read back and run; and a user-defined implementation (philox4x32 written
//! here with lax primitives, registered at run time as `key<uphx4>`) giving JAX's philox4x32
//! numbers for every case.

use std::sync::OnceLock;

use crate::common;
use crate::random_arrays::{array, close, compare, compare_normal, dtype, hex, lit, shape};

use dtype_lattice::{DType, Error, Rules};
use dtype_lattice_array::core::{ClosedJaxpr, Params, bind};
use dtype_lattice_array::{Array, jit, lax, numpy, random, vmap};
use serde_json::Value;

// ---- a user-defined implementation: Philox-4x32-10 with lax primitives --------------------

fn op2(p: &'static dtype_lattice_array::core::Primitive, a: &Array, b: &Array) -> Array {
    bind(p, &[a, b], &Params::new()).unwrap().remove(0)
}

fn u32s(v: u32, n: usize) -> Array {
    Array::from_vec(vec![v; n])
}

/// The high word of the 64-bit product of `a` and `b` (u32 lanes), by 16-bit halves.
fn mulhi(a: &Array, b: &Array) -> Array {
    let n = a.size();
    let (mask, sixteen) = (u32s(0xffff, n), u32s(16, n));
    let (ah, al) = (
        op2(&lax::SHIFT_RIGHT_LOGICAL, a, &sixteen),
        op2(&lax::AND, a, &mask),
    );
    let (bh, bl) = (
        op2(&lax::SHIFT_RIGHT_LOGICAL, b, &sixteen),
        op2(&lax::AND, b, &mask),
    );
    let (lo, mid1, mid2, hi) = (
        op2(&lax::MUL, &al, &bl),
        op2(&lax::MUL, &ah, &bl),
        op2(&lax::MUL, &al, &bh),
        op2(&lax::MUL, &ah, &bh),
    );
    let t = op2(
        &lax::ADD,
        &op2(&lax::SHIFT_RIGHT_LOGICAL, &lo, &sixteen),
        &op2(
            &lax::ADD,
            &op2(&lax::AND, &mid1, &mask),
            &op2(&lax::AND, &mid2, &mask),
        ),
    );
    let carries = op2(
        &lax::ADD,
        &op2(
            &lax::ADD,
            &op2(&lax::SHIFT_RIGHT_LOGICAL, &mid1, &sixteen),
            &op2(&lax::SHIFT_RIGHT_LOGICAL, &mid2, &sixteen),
        ),
        &op2(&lax::SHIFT_RIGHT_LOGICAL, &t, &sixteen),
    );
    op2(&lax::ADD, &hi, &carries)
}

/// Philox-4x32 with 10 rounds of key `(k0, k1)` (one key, broadcast) at the counters
/// `(x0, x1, x2, x3)` (u32 vectors of one length), as JAX 0.10.2's `philox4x32_p`.
fn philox(k: [u32; 2], x: [Array; 4]) -> [Array; 4] {
    let n = x[0].size();
    let [mut x0, mut x1, mut x2, mut x3] = x;
    let (mut k0, mut k1) = (k[0], k[1]);
    let (m0, m1) = (u32s(0xD251_1F53, n), u32s(0xCD9E_8D57, n));
    for round in 0..10 {
        if round > 0 {
            k0 = k0.wrapping_add(0x9E37_79B9);
            k1 = k1.wrapping_add(0xBB67_AE85);
        }
        let (lo0, hi0) = (op2(&lax::MUL, &m0, &x0), mulhi(&m0, &x0));
        let (lo1, hi1) = (op2(&lax::MUL, &m1, &x2), mulhi(&m1, &x2));
        let y0 = op2(&lax::XOR, &op2(&lax::XOR, &hi1, &x1), &u32s(k0, n));
        let y2 = op2(&lax::XOR, &op2(&lax::XOR, &hi0, &x3), &u32s(k1, n));
        (x0, x1, x2, x3) = (y0, lo1, y2, lo0);
    }
    [x0, x1, x2, x3]
}

fn words(a: &Array) -> Result<Vec<u32>, Error> {
    a.to_vec::<u32>()
}

/// The flat index of each element of `shape` as (high, low) words (JAX's `iota_2x32_shape`).
fn counters(shape: &[usize]) -> (Array, Array) {
    let n: usize = shape.iter().product();
    let hi = (0..n as u64).map(|i| (i >> 32) as u32).collect();
    let lo = (0..n as u64).map(|i| i as u32).collect();
    (Array::from_vec(hi), Array::from_vec(lo))
}

/// Interleaves the first two outputs as keys of `shape`: `uint32[*shape, 2]`.
fn stacked(out: &[Array; 4], shape: &[usize]) -> Result<Array, Error> {
    let (a, b) = (words(&out[0])?, words(&out[1])?);
    let data: Vec<u32> = a.iter().zip(&b).flat_map(|(&x, &y)| [x, y]).collect();
    let mut full = shape.to_vec();
    full.push(2);
    Array::from_shape_vec(&full, data)
}

struct UserPhilox;

impl random::PrngImpl for UserPhilox {
    fn seed(&self, seed: &Array) -> Result<Array, Error> {
        // k0: the seed shifted right by 32 (nothing of a 32-bit seed), k1: its low word.
        let wide = seed.dtype().bits() == 64;
        let v = seed.astype(DType::Int64)?.to_vec::<i64>()?[0] as u64;
        let (k0, k1) = (if wide { (v >> 32) as u32 } else { 0 }, v as u32);
        let out = philox([0, 0], [u32s(k0, 1), u32s(k1, 1), u32s(0, 1), u32s(0, 1)]);
        stacked(&out, &[])
    }
    fn split(&self, key: &Array, shape: &[usize]) -> Result<Array, Error> {
        let k = words(key)?;
        let (hi, lo) = counters(shape);
        let zeros = u32s(0, hi.size());
        let out = philox([k[0], k[1]], [zeros.clone(), zeros, hi, lo]);
        stacked(&out, shape)
    }
    fn fold_in(&self, key: &Array, data: &Array) -> Result<Array, Error> {
        let k = words(key)?;
        let z = u32s(0, 1);
        let d = Array::from_vec(words(data)?);
        let out = philox([k[0], k[1]], [z.clone(), z.clone(), z, d]);
        stacked(&out, &[])
    }
    fn random_bits(&self, key: &Array, bit_width: u32, shape: &[usize]) -> Result<Array, Error> {
        let k = words(key)?;
        let (hi, lo) = counters(shape);
        let zeros = u32s(0, hi.size());
        let [o0, o1, o2, o3] = philox([k[0], k[1]], [hi, lo, zeros.clone(), zeros]);
        let flat: Vec<u64> = if bit_width == 64 {
            let (a, b) = (words(&o0)?, words(&o1)?);
            a.iter()
                .zip(&b)
                .map(|(&h, &l)| u64::from(h) << 32 | u64::from(l))
                .collect()
        } else {
            let x = op2(
                &lax::XOR,
                &op2(&lax::XOR, &o0, &o1),
                &op2(&lax::XOR, &o2, &o3),
            );
            words(&x)?.into_iter().map(u64::from).collect()
        };
        let bits = Array::from_shape_vec(shape, flat)?;
        bits.astype(match bit_width {
            8 => DType::UInt8,
            16 => DType::UInt16,
            32 => DType::UInt32,
            _ => DType::UInt64,
        })
    }
}

const USER: &str = "user_philox4x32";

/// The user-defined implementation's dtype, registered once for the whole test binary.
fn user_dtype() -> DType {
    static DTYPE: OnceLock<DType> = OnceLock::new();
    *DTYPE.get_or_init(|| random::define_prng_impl(USER, "uphx4", 2, UserPhilox).unwrap())
}

// ---- running the fixture's cases ----------------------------------------------------------

/// A case's function of one key, as a closure (for eager, `jit` and `vmap` alike).
fn function(case: &Value) -> impl Fn(Array) -> Result<Array, Error> + use<> {
    let case = case.clone();
    move |k: Array| {
        let s = || shape(&case["shape"]);
        let float = |name: &str| lit(&case[name]).parse::<f64>().unwrap();
        let int = |name: &str| lit(&case[name]).parse::<i128>().unwrap();
        match case["fn"].as_str().unwrap() {
            "split" => random::split_shape(&k, &s()),
            "fold_in" => random::fold_in(&k, int("data")),
            "bits" => match &case["dtype"] {
                Value::Null => random::bits(&k, &s()),
                d => random::bits_dtype(&k, &s(), dtype(d)),
            },
            "uniform" => random::uniform(
                &k,
                &s(),
                dtype(&case["dtype"]),
                float("minval"),
                float("maxval"),
            ),
            "normal" => random::normal(&k, &s(), dtype(&case["dtype"])),
            "bernoulli" => random::bernoulli(&k, float("p"), &s()),
            "sampler" => sampler(&case, &k),
            "randint" => random::randint(
                &k,
                &s(),
                int("minval"),
                int("maxval"),
                dtype(&case["dtype"]),
            ),
            other => panic!("unknown function {other}"),
        }
    }
}

/// A Python int (weakly typed).
fn py_int(v: i128) -> Array {
    Array::python_scalar(dtype_lattice::Value::Int(v)).unwrap()
}

/// A `"sampler"` case: every sampler of `random` once, on `k` (the default dtypes of the
/// rules in force).
fn sampler(case: &Value, k: &Array) -> Result<Array, Error> {
    let x64 = numpy::rules().options().x64;
    let (float, int) = if x64 {
        (DType::Float64, DType::Int64)
    } else {
        (DType::Float32, DType::Int32)
    };
    let args: Vec<Array> = case
        .get("args")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| match v {
                    Value::Array(items) => Array::from_vec(
                        items
                            .iter()
                            .map(|x| x.as_f64().unwrap() as f32)
                            .collect::<Vec<f32>>(),
                    ),
                    v => Array::python_scalar(v.as_f64().unwrap()).unwrap(),
                })
                .collect()
        })
        .unwrap_or_default();
    let a = |i: usize| &args[i];
    let s: &[usize] = &[4];
    let f32s = |v: &[f32]| Array::from_vec(v.to_vec());
    match case["sampler"].as_str().unwrap() {
        "exponential" => random::exponential(k, s, float),
        "cauchy" => random::cauchy(k, s, float),
        "laplace" => random::laplace(k, s, float),
        "logistic" => random::logistic(k, s, float),
        "gumbel" => random::gumbel(k, s, float, None),
        "maxwell" => random::maxwell(k, s, float),
        "rademacher" => random::rademacher(k, s, int),
        "normal" => random::normal(k, s, float),
        "pareto" => random::pareto(k, a(0), Some(s), float),
        "rayleigh" => random::rayleigh(k, a(0), Some(s), float),
        "wald" => random::wald(k, a(0), Some(s), float),
        "lognormal" => random::lognormal(k, a(0), Some(s), float),
        "weibull_min" => random::weibull_min(k, a(0), a(1), s, float),
        "double_sided_maxwell" => random::double_sided_maxwell(k, a(0), a(1), s, float),
        "triangular" => random::triangular(k, a(0), a(1), a(2), Some(s), float),
        "truncated_normal" => random::truncated_normal(k, a(0), a(1), Some(s), float),
        "geometric" => random::geometric(k, a(0), Some(s), int),
        "bernoulli" => random::bernoulli_array(k, a(0), Some(s), "low"),
        "categorical" => random::categorical(k, a(0), -1, Some(s), true, None),
        "gamma" => random::gamma(k, a(0), Some(s), float),
        "loggamma" => random::loggamma(k, a(0), Some(s), float),
        "beta" => random::beta(k, a(0), a(1), Some(s), float),
        "chisquare" => random::chisquare(k, a(0), Some(s), float),
        "f" => random::f(k, a(0), a(1), Some(s), float),
        "t" => random::t(k, a(0), Some(s), float),
        "generalized_normal" => random::generalized_normal(k, a(0), s, float),
        "poisson" => random::poisson(k, a(0), Some(s), int),
        "binomial" => random::binomial(k, a(0), a(1), Some(s), float),
        "dirichlet" => random::dirichlet(k, &f32s(&[1.0, 2.0, 3.0]), Some(&[2]), float),
        "ball" => random::ball(k, 3, &Array::python_scalar(2.0).unwrap(), &[2], float),
        "multinomial" => random::multinomial(
            k,
            &Array::python_scalar(10.0).unwrap(),
            &f32s(&[0.2, 0.3, 0.5]),
            Some(&[2, 3]),
            float,
        ),
        "choice" => random::choice(k, &py_int(10), &[3], false, None, 0, None),
        "choice_p" => random::choice(
            k,
            &py_int(5),
            &[4],
            true,
            Some(&f32s(&[0.1, 0.2, 0.3, 0.2, 0.2])),
            0,
            None,
        ),
        "permutation" => random::permutation(k, &py_int(6), 0, false),
        other => panic!("unknown sampler {other}"),
    }
}

/// Keys of the case's implementation as keys of `user` (same key data) when given.
fn as_user(keys: Array, user: Option<DType>) -> Array {
    match user {
        Some(d) => random::wrap_key_data(&random::key_data(&keys).unwrap(), d).unwrap(),
        None => keys,
    }
}

/// Runs one case with its own implementation, or (with `user`) with the user-defined one.
fn run(case: &Value, user: Option<DType>) -> Result<Array, Error> {
    let f = function(case);
    match (case["fn"].as_str().unwrap(), case["how"].as_str().unwrap()) {
        ("key", _) => {
            let name = if user.is_some() {
                USER
            } else {
                case["impl"].as_str().unwrap()
            };
            random::key_with(lit(&case["seed"]).parse().unwrap(), name)
        }
        (_, "eager") => f(as_user(array(&case["key"]), user)),
        (_, "jit") => jit(&f).call(&as_user(array(&case["key"]), user)),
        (_, "vmap") => vmap(&f).call(&as_user(array(&case["keys"]), user)),
        (_, how) => panic!("unknown how {how}"),
    }
}

/// Compares the user-defined implementation's result with JAX's philox4x32: key data and
/// values bit for bit (the key dtype is the user's, `key<uphx4>`).
fn compare_user(case: &Value, got: Result<Array, Error>) -> Option<String> {
    let out = &case["out"];
    let got = match got {
        Ok(a) => a,
        Err(e) => return Some(format!("error {}: {}", common::class(&e), e.message())),
    };
    if case["fn"] == "sampler" {
        // The same numbers as the built-in philox4x32, bit for bit; those are JAX's within
        // the samplers' tolerance.
        let builtin = run(case, None);
        let same = builtin
            .as_ref()
            .is_ok_and(|b| b.as_bytes() == got.as_bytes() && b.aval() == got.aval());
        if !same {
            return Some(format!(
                "{got} but the built-in philox4x32 gives {builtin:?}"
            ));
        }
        return compare_sampler(case, Ok(got));
    }
    if case["fn"] == "normal" {
        return compare_normal(case, Ok(got));
    }
    let want_aval = out["aval"]
        .as_str()
        .unwrap()
        .replace("key<phx4>", "key<uphx4>");
    let bytes = if got.dtype().is_extended() {
        random::key_data(&got).unwrap().as_bytes().to_vec()
    } else {
        got.as_bytes().to_vec()
    };
    (got.aval().to_string() != want_aval || hex(&bytes) != out["hex"].as_str().unwrap()).then(
        || {
            format!(
                "{} {} != {want_aval} {}",
                got.aval(),
                hex(&bytes),
                out["hex"]
            )
        },
    )
}

/// [`compare_normal`], and the float outputs of the other samplers within 1e-6 relative
/// (at least 1e-6 absolute): their transcendental functions (`log`, `tan`, `log1p`, the
/// gamma sampler's loop) are XLA's CPU approximations, reproduced to an ulp or two, and to
/// more near zero (`cauchy`'s `tan`). The samplers' own tests (random_samplers.rs,
/// random_gamma.rs) bound each one more tightly.
fn compare_sampler(c: &Value, got: Result<Array, Error>) -> Option<String> {
    match (&got, c["fn"].as_str(), c.get("out")) {
        (Ok(a), Some("sampler"), Some(out)) if a.dtype().kind() == dtype_lattice::Kind::Float => {
            let want = Array::from_bytes(
                a.dtype(),
                a.shape(),
                &crate::random_arrays::unhex(out["hex"].as_str().unwrap()),
            );
            let Ok(want) = want else {
                return Some(format!("aval {} != {}", a.aval(), out["aval"]));
            };
            let f64s = |x: &Array| x.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
            let near = f64s(a)
                .iter()
                .zip(f64s(&want))
                .all(|(x, y)| (x - y).abs() <= 1e-6 * y.abs().max(1.0));
            (a.aval().to_string() != out["aval"].as_str().unwrap() || !near)
                .then(|| format!("{:?} != {:?}", f64s(a), f64s(&want)))
        }
        _ => compare_normal(c, got),
    }
}

/// Reads JAX's printed program back, runs it on the seed, compares every output.
fn run_text(case: &Value) -> Option<String> {
    let f: ClosedJaxpr = match case["text"].as_str().unwrap().parse() {
        Ok(f) => f,
        Err(e) => return Some(format!("read: {e}")),
    };
    let outs = match f.call(&[array(&case["seed"])]) {
        Ok(o) => o,
        Err(e) => return Some(format!("run: {e}")),
    };
    let want = case["outs"].as_array().unwrap();
    if outs.len() != want.len() {
        return Some(format!("{} outputs, JAX {}", outs.len(), want.len()));
    }
    let diffs: Vec<String> = outs
        .into_iter()
        .zip(want)
        .filter_map(|(o, w)| match o.dtype() {
            // The normal samples of float64 (see `compare_normal`).
            DType::Float64 => close(&o, w, 1e-6),
            _ => compare(&serde_json::json!({ "out": w }), Ok(o)),
        })
        .collect();
    (!diffs.is_empty()).then(|| diffs.join("; "))
}

fn check(x64: bool, only: Option<&str>) -> usize {
    numpy::with_rules(Rules::jax().x64(x64), || {
        let rel = format!(
            "random_arrays/impls_{}.json",
            if x64 { "x64" } else { "x32" }
        );
        let fixture: Value =
            serde_json::from_str(&std::fs::read_to_string(common::fixture_path(&rel)).unwrap())
                .unwrap();
        assert_eq!(fixture["mode"]["x64"], x64);
        let cases: Vec<&Value> = fixture["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| only.is_none_or(|i| c["impl"] == i))
            .collect();
        assert!(!cases.is_empty());
        let failures: Vec<String> = cases
            .iter()
            .filter_map(|c| {
                let d = if c["fn"] == "text" {
                    run_text(c)
                } else {
                    compare_sampler(c, run(c, None))
                };
                d.map(|d| format!("{c}\n  -> {d}"))
            })
            .collect();
        common::assert_all_agree(&rel, cases.len(), &failures);
        cases.len()
    })
}

macro_rules! each_impl {
    ($($test:ident: $name:literal;)*) => {$(
        #[test]
        fn $test() {
            assert!(check(false, Some($name)) + check(true, Some($name)) > 100);
        }
    )*};
}

each_impl! {
    threefry2x32_agrees_with_jax: "threefry2x32";
    rbg_agrees_with_jax: "rbg";
    unsafe_rbg_agrees_with_jax: "unsafe_rbg";
    threefry4x32_agrees_with_jax: "threefry4x32";
    philox2x32_agrees_with_jax: "philox2x32";
    philox4x32_agrees_with_jax: "philox4x32";
}

#[test]
fn a_user_defined_philox_gives_jaxs_philox4x32_numbers() {
    let d = user_dtype();
    assert_eq!(d.to_string(), "key<uphx4>");
    for x64 in [false, true] {
        numpy::with_rules(Rules::jax().x64(x64), || {
            let rel = format!(
                "random_arrays/impls_{}.json",
                if x64 { "x64" } else { "x32" }
            );
            let fixture: Value =
                serde_json::from_str(&std::fs::read_to_string(common::fixture_path(&rel)).unwrap())
                    .unwrap();
            let cases: Vec<&Value> = fixture["cases"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| {
                    c["impl"] == "philox4x32" && c["fn"] != "text" && c.get("out").is_some()
                })
                .collect();
            assert!(cases.len() > 50);
            let failures: Vec<String> = cases
                .iter()
                .filter_map(|c| compare_user(c, run(c, Some(d))).map(|e| format!("{c}\n  -> {e}")))
                .collect();
            common::assert_all_agree(&format!("{rel} (user-defined)"), cases.len(), &failures);
        });
    }
}

#[test]
fn user_defined_keys_print_promote_and_stage_as_builtin_ones() {
    let d = user_dtype();
    let k = random::key_with(1, USER).unwrap();
    assert_eq!(k.dtype(), d);
    assert!(
        k.to_string()
            .starts_with("Array((), dtype=key<uphx4>) overlaying:")
    );
    assert_eq!(random::key_impl(&k).unwrap().name, USER);
    // Promotion: a key with itself only.
    let rules = Rules::jax();
    let key = dtype_lattice::Operand::array(d);
    assert_eq!(rules.result_type(&[key, key]).unwrap().dtype, d);
    let e = rules
        .result_type(&[key, dtype_lattice::Operand::array(DType::Float32)])
        .unwrap_err();
    assert_eq!(
        e.message(),
        "dtype=key<uphx4> is not a valid dtype for JAX type promotion."
    );
    // Staged and printed with its tag, read back, run.
    let f = |s: Array| {
        let k = random::key_with(0, USER)?;
        let k = random::fold_in_array(&k, &s)?;
        random::bits(&k, &[3])
    };
    let text = dtype_lattice_array::make_jaxpr(f, &Array::scalar(4u32))
        .unwrap()
        .to_string();
    assert!(text.contains("random_seed[impl=uphx4]"), "{text}");
    let read: ClosedJaxpr = text.parse().unwrap();
    let out = read.call(&[Array::scalar(4u32)]).unwrap();
    assert_eq!(
        out[0].to_vec::<u32>().unwrap(),
        f(Array::scalar(4u32)).unwrap().to_vec::<u32>().unwrap()
    );
    // A name taken is JAX's ValueError.
    let e = random::define_prng_impl(USER, "other", 2, UserPhilox).unwrap_err();
    assert_eq!(common::class(&e), "ValueError");
    // Functions returning the wrong shape are refused, not trusted.
    struct Broken;
    impl random::PrngImpl for Broken {
        fn seed(&self, _: &Array) -> Result<Array, Error> {
            Ok(Array::from_vec(vec![1u32, 2, 3]))
        }
        fn split(&self, k: &Array, _: &[usize]) -> Result<Array, Error> {
            Ok(k.clone())
        }
        fn fold_in(&self, k: &Array, _: &Array) -> Result<Array, Error> {
            Ok(k.clone())
        }
        fn random_bits(&self, _: &Array, _: u32, _: &[usize]) -> Result<Array, Error> {
            Ok(Array::scalar(1.5f32))
        }
    }
    random::define_prng_impl("broken_impl_test", "brk", 2, Broken).unwrap();
    let e = random::key_with(0, "broken_impl_test").unwrap_err();
    assert_eq!(
        e.message(),
        "the seed function of the PRNG implementation broken_impl_test returned uint32(3,), \
         expected uint32(2,)"
    );
}

// ---- jax_default_prng_impl ------------------------------------------------------------------

/// `jax_default_prng_impl` (tests/fixtures/random_arrays/default_impl.json,
/// tools/gen_default_prng_impl_fixtures.py): with each implementation the default,
/// `key(seed)`, the legacy raw `prng_key(seed)` and the functions on raw key data compute what
/// JAX computes with `jax.config.update("jax_default_prng_impl", name)`, bit for bit; raw key
/// data of another shape is refused with JAX's `TypeError`. Scoped to this thread
/// (`config::with_default_prng_impl`), so that the tests running beside it keep threefry2x32.
#[test]
fn the_default_implementation_makes_keys_and_reads_raw_key_data() {
    let text =
        std::fs::read_to_string(common::fixture_path("random_arrays/default_impl.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 6);
    for case in cases {
        let name = case["impl"].as_str().unwrap();
        let k = random::resolve_impl(name).unwrap();
        let same = |what: &str, got: Result<Array, Error>, want: &Value| {
            let got = got.unwrap_or_else(|e| panic!("{name} {what}: {e}"));
            assert_eq!(
                (
                    got.dtype().name(),
                    got.shape().to_vec(),
                    hex(got.as_bytes())
                ),
                (
                    want["dtype"].as_str().unwrap(),
                    shape(&want["shape"]),
                    want["hex"].as_str().unwrap().to_string()
                ),
                "{name} {what}"
            );
        };
        dtype_lattice_array::config::with_default_prng_impl(k, || {
            let key = random::key(0).unwrap();
            assert_eq!(key.dtype().to_string(), case["key_dtype"].as_str().unwrap());
            same(
                "key_data(key(0))",
                random::key_data(&key),
                &case["key_data"],
            );
            let raw = random::prng_key(7).unwrap();
            same("PRNGKey(7)", Ok(raw.clone()), &case["prng_key"]);
            assert_eq!(random::key_impl(&raw).unwrap().name, case["key_impl"]);
            same("split", random::split(&raw, 3), &case["split"]);
            same("fold_in", random::fold_in(&raw, 3), &case["fold_in"]);
            same("bits", random::bits(&raw, &[4]), &case["bits"]);
            let f32_ = DType::Float32;
            same(
                "uniform",
                random::uniform(&raw, &[3], f32_, 0.0, 1.0),
                &case["uniform"],
            );
            same("normal", random::normal(&raw, &[2], f32_), &case["normal"]);
            same(
                "randint",
                random::randint(&raw, &[3], 0, 10, DType::Int32),
                &case["randint"],
            );
            let other = crate::fixture_arrays::array(&case["other_shape"]);
            let e = random::uniform(&other, &[2], f32_, 0.0, 1.0).unwrap_err();
            let want = &case["other_shape_uniform"]["error"];
            assert!(
                e.to_string().starts_with(&format!(
                    "{}: {}",
                    want["kind"].as_str().unwrap(),
                    want["message"].as_str().unwrap()
                )),
                "{name}: {e}"
            );
        });
    }
    // Outside the scope: threefry2x32 again.
    assert_eq!(random::key(0).unwrap().dtype(), DType::KeyThreefry2x32);
}

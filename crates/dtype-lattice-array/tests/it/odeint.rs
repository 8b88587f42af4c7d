//! `ode::odeint` against JAX 0.10's `jax.experimental.ode.odeint` (tools/gen_odeint_fixtures.py):
//! the solution and the gradients of `sum(ys ** 2)` with respect to `y0` and the parameters,
//! float64 (x64) within 1e-9 and float32 within 1e-4 of JAX's, through the example's own code
//! (examples/odeint.rs, compiled in here: its command line, its jitted solve and `vjp`, its
//! output) and through the library (`hmax`, `mxstep`, a pytree state, eager and under `jit`);
//! the adjoint gradient against finite differences; JAX's refusals.

#[allow(dead_code)]
#[path = "../../examples/odeint.rs"]
mod example;

use dtype_lattice::error::Exception;
use dtype_lattice::{DType, Error, Rules};
use dtype_lattice_array::numpy::{self as jnp, Axes, Index};
use dtype_lattice_array::ode::{Options, odeint};
use dtype_lattice_array::{Array, grad, jit, jvp, vjp, vmap};
use example::{Args, System};

fn fixture() -> serde_json::Value {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/odeint/cases.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("the fixture")).expect("JSON")
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|s| s.as_str().expect("a string").to_string())
        .collect()
}

/// The case's numbers: the solution's rows, the gradient w.r.t. y0, w.r.t. the parameters.
type Numbers = Vec<Vec<f64>>;

fn numbers(text: &str) -> Numbers {
    text.lines()
        .map(|l| l.split(' ').map(|x| x.parse().expect("a float")).collect())
        .collect()
}

fn jax_numbers(case: &serde_json::Value) -> Numbers {
    let mut rows: Numbers = case["ys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| strings(r).iter().map(|x| x.parse().unwrap()).collect())
        .collect();
    for k in ["grad_y0", "grad_params"] {
        rows.push(
            strings(&case[k])
                .iter()
                .map(|x| x.parse().unwrap())
                .collect(),
        );
    }
    rows
}

/// Every number within `tol` of JAX's, relative to the largest magnitude of its line (the
/// solvers' errors are relative to the state's scale, not to each component's).
fn assert_close(name: &str, got: &Numbers, want: &Numbers, tol: f64) {
    assert_eq!(got.len(), want.len(), "{name}: number of lines");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.len(), w.len(), "{name} line {i}");
        let scale = w.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for (a, b) in g.iter().zip(w) {
            assert!(
                (a - b).abs() <= tol * scale,
                "{name} line {i}: {g:?} vs JAX's {w:?}"
            );
        }
    }
}

fn tolerance(args: &Args) -> f64 {
    if args.dtype == DType::Float64 && args.x64 {
        1e-9
    } else {
        1e-4
    }
}

fn with_x64<T>(x64: bool, f: impl FnOnce() -> T) -> T {
    if x64 {
        jnp::with_rules(Rules::jax().x64(true), f)
    } else {
        f()
    }
}

fn cases() -> Vec<serde_json::Value> {
    fixture()["cases"].as_array().unwrap().clone()
}

#[test]
fn the_example_prints_what_jax_prints() {
    let mut seen = 0;
    for case in cases() {
        if !strings(&case["library"]).is_empty() {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        let args = example::parse(strings(&case["args"])).expect("the case's command line");
        let text = example::run(&args).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = case["stdout"].as_str().unwrap();
        assert_close(name, &numbers(&text), &numbers(want), tolerance(&args));
        assert_close(name, &numbers(want), &jax_numbers(&case), 0.0);
        seen += 1;
    }
    assert_eq!(seen, 8);
}

/// The solution and gradients of a case through the library: eagerly, or jitted; the
/// library-only flags (`--hmax`, `--mxstep`, `--tree`) honoured.
fn library(args: &Args, extra: &[String], jitted: bool) -> Result<Numbers, Error> {
    let mut options = Options::new().rtol(args.rtol).atol(args.atol);
    let mut tree = false;
    let mut it = extra.iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--hmax" => options = options.hmax(it.next().unwrap().parse().unwrap()),
            "--mxstep" => options = options.mxstep(it.next().unwrap().parse().unwrap()),
            "--tree" => tree = true,
            _ => panic!("{flag}"),
        }
    }
    let y0 = Array::from_vec(args.y0.clone()).astype(args.dtype)?;
    let params: Vec<Array> = args
        .params
        .iter()
        .map(|&p| Array::scalar(p).astype(args.dtype))
        .collect::<Result<_, _>>()?;
    let ts = jnp::linspace(0.0, args.t1, args.points, args.dtype)?;
    let system = args.system;
    let loss = |leaves: &[Array]| -> Result<Array, Error> {
        let mut total = jnp::sum(jnp::power(&leaves[0], 2)?, Axes::All, false)?;
        for l in &leaves[1..] {
            total = jnp::add(&total, jnp::sum(jnp::power(l, 2)?, Axes::All, false)?)?;
        }
        Ok(total)
    };
    // (ys as one matrix, the gradient w.r.t. y0 as one vector, the parameters' gradients).
    let compute =
        move |(y0, params): (Array, Vec<Array>)| -> Result<(Array, Array, Vec<Array>), Error> {
            if tree {
                let at = |x: &Array, i| jnp::index(x, &[Index::At(i)]);
                let state = (at(&y0, 0)?, at(&y0, 1)?);
                let f = move |y: &(Array, Array), _t: &Array, p: &Vec<Array>| {
                    let (theta, omega) = y;
                    let v = jnp::multiply(
                        jnp::negative(jnp::true_divide(&p[0], &p[1])?)?,
                        jnp::sin(theta)?,
                    )?;
                    Ok((omega.clone(), v))
                };
                let ((a, b), pullback) = vjp(
                    |(s, p): ((Array, Array), Vec<Array>)| odeint(f, &s, &ts, &p, options),
                    &(state, params),
                )?;
                let ct = grad(
                    |(a, b): (Array, Array)| loss(&[a, b]),
                    &(a.clone(), b.clone()),
                )?;
                let ((ga, gb), gp) = pullback(&ct)?;
                let ys = jnp::stack(&[a.into(), b.into()], 1)?;
                let gy0 = jnp::stack(&[ga.into(), gb.into()], 0)?;
                return Ok((ys, gy0, gp));
            }
            let f = move |y: &Array, t: &Array, p: &Vec<Array>| system.dynamics(y, t, p);
            let (ys, pullback) = vjp(
                |(y0, p): (Array, Vec<Array>)| odeint(f, &y0, &ts, &p, options),
                &(y0, params),
            )?;
            let ct = grad(|ys: Array| loss(&[ys]), &ys)?;
            let (gy0, gp) = pullback(&ct)?;
            Ok((ys, gy0, gp))
        };
    let (ys, gy0, gp) = if jitted {
        jit(compute).call(&(y0, params))?
    } else {
        compute((y0, params))?
    };
    let vec = |x: &Array| x.astype(DType::Float64)?.to_vec::<f64>();
    let n = ys.shape()[1];
    let flat = vec(&ys)?;
    let mut rows: Numbers = flat.chunks(n).map(<[f64]>::to_vec).collect();
    rows.push(vec(&gy0)?);
    rows.push(
        gp.iter()
            .map(|g| Ok(vec(g)?[0]))
            .collect::<Result<Vec<f64>, Error>>()?,
    );
    Ok(rows)
}

fn check_library(jitted: bool) {
    for case in cases() {
        let name = case["name"].as_str().unwrap();
        let args = example::parse(strings(&case["args"])).unwrap();
        let extra = strings(&case["library"]);
        let got = with_x64(args.x64, || library(&args, &extra, jitted))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_close(name, &got, &jax_numbers(&case), tolerance(&args));
    }
}

#[test]
fn every_case_through_the_library_follows_jax() {
    check_library(false);
}

#[test]
fn every_case_under_jit_follows_jax() {
    check_library(true);
}

fn decay(y: &Array, t: &Array, k: &Array) -> Result<Array, Error> {
    System::Decay.dynamics(y, t, std::slice::from_ref(k))
}

/// The adjoint gradient of a float64 solve against central differences of the solve itself.
#[test]
fn the_adjoint_gradient_matches_finite_differences() {
    jnp::with_rules(Rules::jax().x64(true), || {
        let ts = jnp::linspace(0.0, 2.0, 5, DType::Float64).unwrap();
        let opts = Options::new().rtol(1e-10).atol(1e-12);
        let loss = |(y0, k, ts): (Array, Array, Array)| -> Result<Array, Error> {
            let ys = odeint(decay, &y0, &ts, &k, opts)?;
            jnp::sum(jnp::power(ys, 2)?, Axes::All, false)
        };
        let y0 = Array::from_vec(vec![1.0f64, -0.5]);
        let k = Array::scalar(0.8f64);
        let (gy, gk, gt) = grad(loss, &(y0.clone(), k.clone(), ts.clone())).unwrap();
        let value = |y0: Vec<f64>, k: f64, ts: Vec<f64>| {
            loss((Array::from_vec(y0), Array::scalar(k), Array::from_vec(ts)))
                .unwrap()
                .to_vec::<f64>()
                .unwrap()[0]
        };
        let h = 1e-6;
        let (y, kv, t) = (
            y0.to_vec::<f64>().unwrap(),
            0.8,
            ts.to_vec::<f64>().unwrap(),
        );
        let close =
            |a: f64, b: f64| assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{a} vs {b}");
        for i in 0..2 {
            let (mut up, mut down) = (y.clone(), y.clone());
            up[i] += h;
            down[i] -= h;
            let fd = (value(up, kv, t.clone()) - value(down, kv, t.clone())) / (2.0 * h);
            close(gy.to_vec::<f64>().unwrap()[i], fd);
        }
        let fd =
            (value(y.clone(), kv + h, t.clone()) - value(y.clone(), kv - h, t.clone())) / (2.0 * h);
        close(gk.to_vec::<f64>().unwrap()[0], fd);
        for i in 0..5 {
            let (mut up, mut down) = (t.clone(), t.clone());
            up[i] += h;
            down[i] -= h;
            let fd = (value(y.clone(), kv, up) - value(y.clone(), kv, down)) / (2.0 * h);
            close(gt.to_vec::<f64>().unwrap()[i], fd);
        }
    });
}

/// `vmap` of the solve over initial states is the solves one by one.
#[test]
fn vmap_over_initial_states_is_each_solve() {
    jnp::with_rules(Rules::jax().x64(true), || {
        let ts = jnp::linspace(0.0, 1.0, 4, DType::Float64).unwrap();
        let k = Array::scalar(0.3f64);
        let y0s = Array::from_shape_vec(&[3, 2], vec![1.0f64, 2.0, -1.0, 0.5, 3.0, 0.0]).unwrap();
        let opts = Options::new().rtol(1e-9).atol(1e-9);
        let batched: Array = vmap(|y0: Array| odeint(decay, &y0, &ts, &k, opts))
            .call(&y0s)
            .unwrap();
        assert_eq!(batched.shape(), [3, 4, 2]);
        for i in 0..3 {
            let y0 = jnp::index(&y0s, &[Index::At(i)]).unwrap();
            let one = odeint(decay, &y0, &ts, &k, opts).unwrap();
            let row = jnp::index(&batched, &[Index::At(i)]).unwrap();
            let (a, b) = (row.to_vec::<f64>().unwrap(), one.to_vec::<f64>().unwrap());
            for (x, y) in a.iter().zip(&b) {
                assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "{a:?} vs {b:?}");
            }
        }
    });
}

fn jax_error(name: &str) -> (String, String) {
    let f = fixture();
    let e = f["notes"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("{name}"))["error"]
        .clone();
    (
        e["kind"].as_str().unwrap().to_string(),
        e["message"].as_str().unwrap().to_string(),
    )
}

fn first_line(e: &Error) -> String {
    e.message()
        .lines()
        .next()
        .unwrap_or("")
        .trim_end()
        .to_string()
}

#[test]
fn jaxs_refusals() {
    let ones = Array::from_vec(vec![1.0f32, 1.0]);
    let k = Array::python_scalar(1.0).unwrap();
    let f = |y: &Array, _t: &Array, k: &Array| jnp::multiply(jnp::negative(k)?, y);
    let linspace = jnp::linspace(0.0, 1.0, 3, DType::Float32).unwrap();
    let run = |y0: &Array, ts: &Array| odeint(f, y0, ts, &k, Options::new()).unwrap_err();
    let cases = [
        ("int_ts", run(&ones, &Array::from_vec(vec![0i32, 1, 2]))),
        (
            "complex_ts",
            run(&ones, &linspace.astype(DType::Complex64).unwrap()),
        ),
        ("zero_dim_ts", run(&ones, &Array::scalar(1.0f32))),
        ("int_y0", run(&Array::from_vec(vec![1i32, 1]), &linspace)),
        (
            "jvp",
            jvp(
                |y: Array| odeint(f, &y, &linspace, &k, Options::new()),
                &ones,
                &ones,
            )
            .unwrap_err(),
        ),
    ];
    for (name, e) in cases {
        let (kind, message) = jax_error(name);
        assert_eq!(
            e.exception().map(Exception::name),
            Some(kind.as_str()),
            "{name}: {e}"
        );
        assert_eq!(first_line(&e), message, "{name}");
    }
}

#[test]
fn the_examples_command_line() {
    let parse = |s: &str| example::parse(s.split_whitespace().map(String::from));
    let a = parse(
        "--system lotka --y0 10,5 --params 1.5,1,3,1 --t1 10 --points 50 --rtol 1e-6 --atol 1e-6",
    )
    .unwrap();
    assert_eq!(
        (a.system, a.dtype, a.x64, a.repeat),
        (System::Lotka, DType::Float32, false, 1)
    );
    for bad in [
        "--system lorenz --y0 1 --params 1 --t1 1 --points 2 --rtol 1 --atol 1",
        "--system decay --y0 1 --params 1,2 --t1 1 --points 2 --rtol 1 --atol 1",
        "--system lotka --y0 1 --params 1,2,3,4 --t1 1 --points 2 --rtol 1 --atol 1",
        "--system decay --y0 1 --params 1 --t1 1 --points 2 --rtol 1",
        "--system decay --y0 1,x --params 1 --t1 1 --points 2 --rtol 1 --atol 1",
        "--system decay --y0 1 --params 1 --t1 1 --points 2 --rtol 1 --atol 1 --dtype int32",
        "--system decay --y0 1 --params 1 --t1 1 --points 0 --rtol 1 --atol 1",
        "--system decay --y0 1 --params 1 --t1 1 --points 2 --rtol 1 --atol 1 --bogus 3",
        "--system decay --y0 1 --params 1 --t1 1 --points 2 --rtol 1 --atol",
    ] {
        assert!(parse(bad).is_err(), "{bad}");
    }
}

/// `grad` of `grad` (and its `jit`), as JAX computes it: the forward pass calls the
/// custom-VJP function again, so the derivative of the residuals is the adjoint solve.
#[test]
fn grad_of_grad_follows_jax() {
    let f = fixture();
    let case = &f["notes"]["second_order"];
    let k: f64 = case["k"].as_str().unwrap().parse().unwrap();
    let want: f64 = case["value"].as_str().unwrap().parse().unwrap();
    jnp::with_rules(Rules::jax().x64(true), || {
        let ts = jnp::linspace(0.0, 1.0, 3, DType::Float64).unwrap();
        let y0 = Array::from_vec(vec![1.0f64, -0.5]);
        let opts = Options::new().rtol(1e-10).atol(1e-12);
        let g = |k: Array| {
            grad(
                |k: Array| {
                    let ys = odeint(decay, &y0, &ts, &k, opts)?;
                    jnp::sum(jnp::power(ys, 2)?, Axes::All, false)
                },
                &k,
            )
        };
        let eager = grad(g, &Array::scalar(k)).unwrap();
        let jitted: Array = jit(|k: Array| grad(g, &k)).call(&Array::scalar(k)).unwrap();
        for got in [eager, jitted] {
            let got = got.to_vec::<f64>().unwrap()[0];
            assert!(
                (got - want).abs() <= 1e-9 * want.abs(),
                "{got} vs JAX's {want}"
            );
        }
    });
}

/// A value of an enclosing transformation that the dynamics capture is differentiated as if
/// it were an argument (JAX's `closure_convert`), eagerly and under `jit`.
#[test]
fn captured_values_are_differentiated_as_arguments() {
    let ts = jnp::linspace(0.0, 2.0, 4, DType::Float32).unwrap();
    let y0 = Array::from_vec(vec![1.0f32, 0.5]);
    let opts = Options::new().rtol(1e-6).atol(1e-6);
    let as_argument = |k: Array| {
        let ys = odeint(decay, &y0, &ts, &k, opts)?;
        jnp::sum(jnp::power(ys, 2)?, Axes::All, false)
    };
    let captured = |k: Array| {
        let f = |y: &Array, t: &Array, _: &()| decay(y, t, &k);
        let ys = odeint(f, &y0, &ts, &(), opts)?;
        jnp::sum(jnp::power(ys, 2)?, Axes::All, false)
    };
    let k = Array::scalar(0.7f32);
    let value = |g: Array| g.to_vec::<f32>().unwrap();
    assert_eq!(
        value(grad(captured, &k).unwrap()),
        value(grad(as_argument, &k).unwrap())
    );
    // Under jit both contract the same products into additions (bits apart from eager).
    let jitted = |f: &dyn Fn(Array) -> Result<Array, Error>| -> Array {
        jit(|k: Array| grad(f, &k)).call(&k).unwrap()
    };
    assert_eq!(value(jitted(&captured)), value(jitted(&as_argument)));
}

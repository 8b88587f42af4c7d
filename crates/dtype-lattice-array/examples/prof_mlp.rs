//! Issue 11's MLP, line for line as the Python program in
//! tools/gen_train_mlp_fixtures.py (`softplus` with a custom JVP, `clip_gradient` with a custom
//! VJP, dropout masks from `bernoulli(fold_in(key, i))` under `vmap`, `value_and_grad` inside a
//! jitted `step`). Prints one line per step: the loss as Python's `repr(float(loss))` prints it.
//!
//! `cargo run --release --example train_mlp -- --seed S --steps N --n N --d D --hidden H
//! --lr LR --keep P --dtype T [--x64]` (defaults 0, 100, 256, 2, 32, 0.1, 0.9, float32).

use std::process::ExitCode;
use std::sync::Arc;

use dtype_lattice::{DType, Error, Rules, Value};
use dtype_lattice_array::core::{CustomJvp, CustomVjp, jit, value_and_grad, vmap};
use dtype_lattice_array::numpy::{self as jnp, Axes, Index};
use dtype_lattice_array::{Array, prim, random};

type Params = Vec<(Array, Array)>;

/// The command line.
pub struct Args {
    pub seed: i128,
    pub steps: usize,
    pub n: usize,
    pub d: usize,
    pub hidden: usize,
    pub lr: f64,
    pub keep: f64,
    pub dtype: DType,
    pub x64: bool,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        seed: 0,
        steps: 100,
        n: 256,
        d: 2,
        hidden: 32,
        lr: 0.1,
        keep: 0.9,
        dtype: DType::Float32,
        x64: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--x64" {
            a.x64 = true;
            continue;
        }
        let v = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {v}: {e}");
        match flag.as_str() {
            "--seed" => a.seed = v.parse().map_err(|e| bad(&e))?,
            "--steps" => a.steps = v.parse().map_err(|e| bad(&e))?,
            "--n" => a.n = v.parse().map_err(|e| bad(&e))?,
            "--d" => a.d = v.parse().map_err(|e| bad(&e))?,
            "--hidden" => a.hidden = v.parse().map_err(|e| bad(&e))?,
            "--lr" => a.lr = v.parse().map_err(|e| bad(&e))?,
            "--keep" => a.keep = v.parse().map_err(|e| bad(&e))?,
            "--dtype" => a.dtype = v.parse().map_err(|e: Error| bad(&e))?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

fn lax(name: &str, x: &Array) -> Result<Array, Error> {
    let p = prim::by_name(name).ok_or_else(|| {
        Error::refused(
            dtype_lattice::error::Exception::NotImplementedError,
            name.to_string(),
        )
    })?;
    Ok(prim::bind(p, &[x], &prim::Params::new())?[0].clone())
}

/// `jnp.maximum(x, 0) + jnp.log1p(jnp.exp(-jnp.abs(x)))`.
fn softplus_body(x: &Array) -> Result<Array, Error> {
    jnp::add(
        jnp::maximum(x, 0)?,
        jnp::log1p(jnp::exp(jnp::negative(jnp::abs(x)?)?)?)?,
    )
}

fn at(x: &Array, i: usize) -> Result<Array, Error> {
    jnp::index(x, &[Index::At(i as isize)])
}

fn init_params(key: &Array, sizes: &[usize], dtype: DType) -> Result<Params, Error> {
    let keys = random::split(key, sizes.len() - 1)?;
    (0..sizes.len() - 1)
        .map(|i| {
            let (m, n) = (sizes[i], sizes[i + 1]);
            let w = random::normal(&at(&keys, i)?, &[m, n], dtype)?;
            let w = jnp::multiply(w, (1.0 / m as f64).powf(0.5))?;
            Ok((w, jnp::zeros(&[n], dtype)?))
        })
        .collect()
}

fn make_data(key: &Array, n: usize, d: usize, dtype: DType) -> Result<(Array, Array), Error> {
    let keys = random::split(key, 2)?;
    let x = random::uniform(&at(&keys, 0)?, &[n, d], dtype, -2.0, 2.0)?;
    let noise = random::normal(&at(&keys, 1)?, &[n], dtype)?;
    let y = jnp::add(
        jnp::sin(jnp::sum(&x, Axes::Some(vec![1]), false)?)?,
        jnp::multiply(0.1, noise)?,
    )?;
    Ok((x, y))
}

struct Model {
    softplus: CustomJvp<Array, Array>,
    clip_gradient: CustomVjp<Array, Array, ()>,
    keep: f64,
}

impl Model {
    fn example_loss(
        &self,
        params: &Params,
        x: &Array,
        y: &Array,
        key: &Array,
    ) -> Result<Array, Error> {
        let mut h = x.clone();
        for (i, (w, b)) in params[..params.len() - 1].iter().enumerate() {
            h = self.softplus.call(&jnp::add(jnp::matmul(&h, w)?, b)?)?;
            let mask = random::bernoulli(&random::fold_in(key, i as i128)?, self.keep, h.shape())?;
            let kept = jnp::r#where(&mask, jnp::true_divide(&h, self.keep)?, 0)?;
            h = self.clip_gradient.call(&kept)?;
        }
        let (w, b) = &params[params.len() - 1];
        let out = at(&jnp::add(jnp::matmul(&h, w)?, b)?, 0)?;
        jnp::power(jnp::subtract(out, y)?, 2)
    }

    fn loss(&self, params: &Params, x: &Array, y: &Array, key: &Array) -> Result<Array, Error> {
        let keys = random::split(key, x.shape()[0])?;
        let per: Array =
            vmap(|(x, y, k): (Array, Array, Array)| self.example_loss(params, &x, &y, &k))
                .call(&(x.clone(), y.clone(), keys))?;
        jnp::mean(jnp::astype(&per, DType::Float32)?, Axes::All, false)
    }
}

/// The losses of every step.
pub fn losses(a: &Args) -> Result<Vec<f64>, Error> {
    let keep = a.keep;
    let model = Arc::new(Model {
        softplus: CustomJvp::new(
            |x: Array| softplus_body(&x),
            |x: Array, t: Array| Ok((softplus_body(&x)?, jnp::multiply(&t, lax("logistic", &x)?)?)),
        ),
        clip_gradient: CustomVjp::new(
            |x: Array| Ok(x),
            |x: Array| Ok((x, ())),
            |_: (), g: Array| jnp::clip(&g, Some((-1.0).into()), Some(1.0.into())),
        ),
        keep,
    });
    let lr = a.lr;
    let step = {
        let model = model.clone();
        jit(move |(params, x, y, key): (Params, Array, Array, Array)| {
            let (l, g) = value_and_grad(|p: Params| model.loss(&p, &x, &y, &key), &params)?;
            let new = params
                .iter()
                .zip(&g)
                .map(|((w, b), (gw, gb))| {
                    Ok((
                        jnp::subtract(w, jnp::multiply(lr, gw)?)?,
                        jnp::subtract(b, jnp::multiply(lr, gb)?)?,
                    ))
                })
                .collect::<Result<Params, Error>>()?;
            Ok((new, l))
        })
        .named("step")
    };
    let keys = random::split(&random::key(a.seed)?, 3)?;
    let (kd, kp, kt) = (at(&keys, 0)?, at(&keys, 1)?, at(&keys, 2)?);
    let (x, y) = make_data(&kd, a.n, a.d, a.dtype)?;
    let mut params = init_params(&kp, &[a.d, a.hidden, a.hidden, 1], a.dtype)?;
    let key0 = random::fold_in(&kt, 0)?;
    let cj = step.lower::<(Params, Array, Array, Array), (Params, Array)>(&(
        params.clone(),
        x.clone(),
        y.clone(),
        key0.clone(),
    ))?;
    let j = cj.jaxpr();
    eprintln!("eqns: {}", j.eqns().len());
    let mut env: Vec<(dtype_lattice_array::core::Var, Array)> = Vec::new();
    let args = [
        params[0].0.clone(),
        params[0].1.clone(),
        params[1].0.clone(),
        params[1].1.clone(),
        params[2].0.clone(),
        params[2].1.clone(),
        x.clone(),
        y.clone(),
        key0.clone(),
    ];
    for (v, c) in j.constvars().iter().zip(cj.consts()) {
        env.push((v.clone(), c.clone()));
    }
    for (v, c) in j.invars().iter().zip(args.iter()) {
        env.push((v.clone(), c.clone()));
    }
    let mut times: std::collections::BTreeMap<String, (f64, usize)> = Default::default();
    for _rep in 0..200 {
        let mut env = env.clone();
        for e in j.eqns() {
            let ins: Vec<Array> = e
                .inputs()
                .iter()
                .map(|a| match a {
                    dtype_lattice_array::core::Atom::Literal(x) => x.clone(),
                    dtype_lattice_array::core::Atom::Var(v) => {
                        env.iter().rev().find(|(w, _)| w == v).unwrap().1.clone()
                    }
                })
                .collect();
            let refs: Vec<&Array> = ins.iter().collect();
            let t = std::time::Instant::now();
            let outs = prim::bind(e.primitive(), &refs, e.params())?;
            let dt = t.elapsed().as_secs_f64();
            let key = format!("{} {:?}", e.primitive().name, e.outputs()[0].aval().shape());
            let ent = times.entry(key).or_default();
            ent.0 += dt;
            ent.1 += 1;
            for (v, o) in e.outputs().iter().zip(outs) {
                env.push((v.clone(), o));
            }
        }
    }
    let mut tv: Vec<_> = times.into_iter().collect();
    tv.sort_by(|a, b| b.1.0.partial_cmp(&a.1.0).unwrap());
    let tot: f64 = tv.iter().map(|t| t.1.0).sum();
    eprintln!("total per step {:.1} us", tot / 200.0 * 1e6);
    for (k, (t, n)) in tv.iter().take(45) {
        eprintln!("{:8.1} us  x{:3}  {}", t / 200.0 * 1e6, n / 200, k);
    }
    if std::env::var("PRINT").is_ok() {
        println!("{cj}");
    }
    let mut out = Vec::with_capacity(a.steps);
    for i in 0..a.steps {
        let key = random::fold_in(&kt, i as i128)?;
        let (p, l): (Params, Array) = step.call(&(params, x.clone(), y.clone(), key))?;
        params = p;
        out.push(l.astype(DType::Float64)?.to_vec::<f64>()?[0]);
    }
    Ok(out)
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // x64 is global configuration, as jax_enable_x64 is.
    if args.x64 {
        jnp::set_rules(Rules::jax().x64(true));
    }
    match losses(&args) {
        Ok(ls) => {
            for l in ls {
                // Python's repr(float(loss)).
                println!("{}", Value::Float(l));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

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
use dtype_lattice_array::numpy::{self as jnp, Axes, Index};
use dtype_lattice_array::{Array, core, random, registry};
use dtype_lattice_array::{CustomJvp, CustomVjp, Jit, jit, value_and_grad, vmap};

/// The parameters: a weight matrix and a bias per layer.
pub type Params = Vec<(Array, Array)>;

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

impl Default for Args {
    /// The program's defaults.
    fn default() -> Args {
        Args {
            seed: 0,
            steps: 100,
            n: 256,
            d: 2,
            hidden: 32,
            lr: 0.1,
            keep: 0.9,
            dtype: DType::Float32,
            x64: false,
        }
    }
}

fn parse() -> Result<Args, String> {
    let mut a = Args::default();
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
    let p = registry::by_name(name).ok_or_else(|| {
        Error::refused(
            dtype_lattice::error::Exception::NotImplementedError,
            name.to_string(),
        )
    })?;
    Ok(core::bind(p, &[x], &core::Params::new())?[0].clone())
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

/// The model's custom functions and its dropout rate.
pub struct Model {
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

/// The arguments of `step`: the parameters, the data and the step's key.
pub type StepArgs = (Params, Array, Array, Array);

/// A function of the step's arguments.
pub type StepFn<O> = Box<dyn Fn(StepArgs) -> Result<O, Error>>;

/// A jitted function of the step's arguments.
pub type Jitted<O> = Jit<StepFn<O>>;

/// The model of the program: `softplus` and `clip_gradient` with their custom rules.
pub fn model(keep: f64) -> Arc<Model> {
    Arc::new(Model {
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
    })
}

/// The jitted `step`: `value_and_grad` of the loss and the parameters' update.
pub fn step(model: &Arc<Model>, lr: f64) -> Jitted<(Params, Array)> {
    let model = model.clone();
    let f: StepFn<(Params, Array)> = Box::new(move |(params, x, y, key): StepArgs| {
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
    });
    jit(f).named("step")
}

/// The jitted loss alone (`jax.jit(loss)`), to time beside its gradient.
pub fn loss(model: &Arc<Model>) -> Jitted<Array> {
    let model = model.clone();
    jit(Box::new(move |(params, x, y, key): StepArgs| {
        model.loss(&params, &x, &y, &key)
    }))
}

/// The jitted gradient of the loss (`jax.jit(jax.grad(loss))`).
pub fn grad(model: &Arc<Model>) -> Jitted<Params> {
    let model = model.clone();
    jit(Box::new(move |(params, x, y, key): StepArgs| {
        dtype_lattice_array::grad(|p: Params| model.loss(&p, &x, &y, &key), &params)
    }))
}

/// The data, the initial parameters and the key the steps' keys are folded from.
pub fn setup(a: &Args) -> Result<(Array, Array, Params, Array), Error> {
    let keys = random::split(&random::key(a.seed)?, 3)?;
    let (kd, kp, kt) = (at(&keys, 0)?, at(&keys, 1)?, at(&keys, 2)?);
    let (x, y) = make_data(&kd, a.n, a.d, a.dtype)?;
    let params = init_params(&kp, &[a.d, a.hidden, a.hidden, 1], a.dtype)?;
    Ok((x, y, params, kt))
}

/// The arguments of step `i` (its key folded from `kt`).
pub fn step_args(
    params: Params,
    x: &Array,
    y: &Array,
    kt: &Array,
    i: usize,
) -> Result<StepArgs, Error> {
    Ok((
        params,
        x.clone(),
        y.clone(),
        random::fold_in(kt, i as i128)?,
    ))
}

/// The losses of every step.
pub fn losses(a: &Args) -> Result<Vec<f64>, Error> {
    let step = step(&model(a.keep), a.lr);
    let (x, y, mut params, kt) = setup(a)?;
    let mut out = Vec::with_capacity(a.steps);
    for i in 0..a.steps {
        let (p, l): (Params, Array) = step.call(&step_args(params, &x, &y, &kt, i)?)?;
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

//! The seed design notes' examples, run through this crate's transformations: the omnistaging
//! note (JEP 4410: two staged jaxprs, the shape-computation error and the escaped PRNG key) and
//! the custom-derivatives note (JEP 2026: `f(x) = 2x` with a custom derivative of 3).
//!
//! `cargo run --release --example seed_notes`

use std::sync::Mutex;

use dtype_lattice::{DType, Error};
use dtype_lattice_array::core::{self, Params};
use dtype_lattice_array::lax;
use dtype_lattice_array::numpy::{self as jnp, Axes};
use dtype_lattice_array::registry;
use dtype_lattice_array::{Array, random};
use dtype_lattice_array::{CustomJvp, grad, jit, vmap};

fn lax(name: &str, args: &[&Array]) -> Result<Array, Error> {
    let p = registry::by_name(name).ok_or_else(|| {
        Error::refused(
            dtype_lattice::error::Exception::NotImplementedError,
            name.to_string(),
        )
    })?;
    Ok(core::bind(p, args, &Params::new())?[0].clone())
}

fn section(title: &str) {
    println!("== {title}");
}

fn main() -> Result<(), Error> {
    // Omnistaging, the toy example: `y = jnp.add(1, 1)` is staged although it does not
    // depend on the argument.
    section("omnistaging: f(x) = x * jnp.add(1, 1), jitted, traced at f(3)");
    let f = jit(|x: Array| jnp::multiply(&x, jnp::add(1, 1)?)).named("f");
    let j = f.lower::<Array, Array>(&Array::scalar(3i32))?;
    println!("{j}");
    println!("f(3) = {}", f.call::<Array, Array>(&Array::scalar(3i32))?);

    // The less toy example: the mask is built from staged iota, broadcast and gt.
    section("omnistaging: select_tril, jitted, traced at arange(12).reshape((3, 4))");
    let select_tril = jit(|x: Array| {
        let rows = lax::expand_dims(
            &jnp::arange(0.0, x.shape()[0] as f64, 1.0, DType::Int32)?,
            &[1],
        )?;
        let cols = jnp::arange(0.0, x.shape()[1] as f64, 1.0, DType::Int32)?;
        let mask = jnp::greater(&rows, &cols)?;
        let zeros = jnp::zeros(x.shape(), x.dtype())?;
        lax("select_n", &[&mask, &zeros, &x])
    })
    .named("select_tril");
    let x = jnp::reshape(&jnp::arange(0.0, 12.0, 1.0, DType::Int32)?, &[3, 4])?;
    println!("{}", select_tril.lower::<Array, Array>(&x)?);
    println!("select_tril(x) = {}", select_tril.call::<Array, Array>(&x)?);

    // Shape computations with jax.numpy inside jit are refused.
    section("omnistaging: ex1 (a shape computed with jnp.prod inside jit)");
    let ex1 = jit(|x: Array| {
        let dims = Array::from_vec(x.shape().iter().map(|&d| d as i32).collect::<Vec<_>>());
        let size = jnp::prod(&dims, Axes::All, false)?;
        let size = size.to_vec::<i32>()?[0] as isize;
        jnp::reshape(&x, &[size])
    });
    match ex1.call::<Array, Array>(&jnp::ones(&[3, 4], DType::Float32)?) {
        Ok(y) => println!("unexpected: {y}"),
        Err(e) => println!("{e}"),
    }

    // Side effects: a key kept in global state escapes the jitted function.
    section("omnistaging: init() splitting a global key, then jitted");
    let key = Mutex::new(random::key(0)?);
    let init = |(): ()| -> Result<Array, Error> {
        let mut k = key.lock().map_err(|_| {
            Error::refused(dtype_lattice::error::Exception::RuntimeError, "poisoned")
        })?;
        let keys = random::split(&k, 2)?;
        *k = jnp::index(&keys, &[jnp::Index::At(0)])?;
        let sub = jnp::index(&keys, &[jnp::Index::At(1)])?;
        random::normal(&sub, &[], DType::Float32)
    };
    println!("init() = {}", init(())?);
    println!("init() = {}", init(())?);
    let jitted = jit(init);
    println!("jit(init)() = {}", jitted.call::<(), Array>(&())?);
    println!("jit(init)() = {}", jitted.call::<(), Array>(&())?);
    let leaked = key
        .lock()
        .map(|k| k.clone())
        .map_err(|_| Error::refused(dtype_lattice::error::Exception::RuntimeError, "poisoned"))?;
    println!("key = {leaked}");
    match random::normal(&leaked, &[], DType::Float32) {
        Ok(y) => println!("unexpected: {y}"),
        Err(e) => println!("{e}"),
    }

    // Custom derivatives: f(x) = 2x whose derivative is declared to be 3.
    section("custom_jvp: f(x) = 2x with a custom derivative of 3");
    let f = note_f();
    println!("f(1.) = {}", f.call(&Array::scalar(1.0f32))?);
    println!(
        "grad(f)(1.) = {}",
        grad(|x: Array| f.call(&x), &Array::scalar(1.0f32))?
    );
    let g = jit(|x: Array| grad(|x: Array| f.call(&x), &x));
    println!(
        "jit(grad(f))(1.) = {}",
        g.call::<Array, Array>(&Array::scalar(1.0f32))?
    );
    let ones = jnp::ones(&[4], DType::Float32)?;
    let a: Array = vmap(|x: Array| grad(|x: Array| f.call(&x), &x)).call(&ones)?;
    println!("vmap(grad(f))(ones(4)) = {a}");
    let b = grad(
        |x: Array| {
            let y: Array = vmap(|x: Array| f.call(&x)).call(&x)?;
            jnp::sum(&y, Axes::All, false)
        },
        &ones,
    )?;
    println!("grad(lambda x: vmap(f)(x).sum())(ones(4)) = {b}");

    // The note's open problem: initial-style primitives (the loops trace f into a jaxpr
    // they hold), and the custom rule kept through them.
    section("custom_jvp inside control flow: f called in a loop body over ones(4)");
    for line in custom_rule_through_loops(&f, &ones)? {
        println!("{line}");
    }
    Ok(())
}

/// The custom-derivatives note's `f(x) = 2x`, whose derivative is declared to be 3.
pub fn note_f() -> CustomJvp<Array, Array> {
    CustomJvp::new(
        |x: Array| jnp::multiply(2.0, &x),
        |x: Array, t: Array| Ok((jnp::multiply(2.0, &x)?, jnp::multiply(3.0, &t)?)),
    )
}

/// A function of `x` through one loop.
pub type Loop<'a> = Box<dyn Fn(Array) -> Result<Array, Error> + 'a>;

/// `f` called once in the body of each loop over `x`: `scan` (one step), `cond` (the true
/// branch), `fori_loop` (bounds 0 and 1: a scan) and `while_loop` (one trip), by name.
pub fn through_loops(f: &CustomJvp<Array, Array>) -> Vec<(&'static str, Loop<'_>)> {
    use dtype_lattice_array::interpreters::control;
    vec![
        (
            "scan",
            Box::new(move |x: Array| {
                let body = |c: Array, ()| Ok((f.call(&c)?, ()));
                let (c, ()) = control::scan(body, &x, &(), Some(1), false)?;
                Ok(c)
            }),
        ),
        (
            "cond",
            Box::new(move |x: Array| {
                control::cond(&Array::scalar(true), |x: Array| f.call(&x), Ok, &x)
            }),
        ),
        (
            "fori_loop",
            Box::new(move |x: Array| {
                let (lo, hi) = (Array::python_scalar(0)?, Array::python_scalar(1)?);
                control::fori_loop(&lo, &hi, |_, c: Array| f.call(&c), &x)
            }),
        ),
        (
            "while_loop",
            Box::new(move |x: Array| {
                let (_, y) = control::while_loop(
                    |(i, _): (Array, Array)| jnp::less(&i, 1),
                    |(i, c): (Array, Array)| Ok((jnp::add(&i, 1)?, f.call(&c)?)),
                    &(Array::scalar(0i32), x),
                )?;
                Ok(y)
            }),
        ),
    ]
}

/// For each loop, one line: the gradient of the loop calling `f` once over `x` (for
/// `while_loop`, which reverse mode refuses, the tangent); the custom derivative 3 survives,
/// never 2.
pub fn custom_rule_through_loops(
    f: &CustomJvp<Array, Array>,
    x: &Array,
) -> Result<Vec<String>, Error> {
    use dtype_lattice_array::jvp;
    through_loops(f)
        .into_iter()
        .map(|(name, l)| {
            if name == "while_loop" {
                let (_, t): (Array, Array) = jvp(&l, x, x)?;
                return Ok(format!("jvp through {name}: {}", t.str()));
            }
            let g = grad(|x: Array| jnp::sum(l(x)?, Axes::All, false), x)?;
            Ok(format!("grad through {name}: {}", g.str()))
        })
        .collect()
}

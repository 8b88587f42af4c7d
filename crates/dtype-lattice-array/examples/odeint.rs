//! `jax.experimental.ode.odeint` on three systems, with the gradient of `sum(ys ** 2)` by the
//! adjoint method, as the Python program in tools/gen_odeint_fixtures.py computes them (one
//! jitted function: the solve and its `vjp`).
//!
//! ```text
//! cargo run --release --example odeint -- --system lotka|pendulum|decay --y0 A,B,..
//!     --params P,Q,.. --t1 T --points N --rtol R --atol A [--dtype float32|float64] [--x64]
//!     [--repeat K]
//! ```
//!
//! Systems: `lotka(y, t, a, b, c, d) = [a*y0 - b*y0*y1, c*y0*y1 - d*y1]`, `pendulum(y, t, g, l)
//! = [y1, -(g/l)*sin(y0)]`, `decay(y, t, k) = -k*y*(1 + sin(t))`; the times are
//! `jnp.linspace(0, T, N, dtype)`. Prints the N rows of the solution (its components separated
//! by spaces, each as Python's `repr(float(v))`), then the gradient of `jnp.sum(ys ** 2)` with
//! respect to `y0`, then with respect to the parameters. `--repeat K` runs the jitted function
//! K times (printing once). Bad arguments: exit code 2; a refusal by the library: 1.

use std::process::ExitCode;

use dtype_lattice::{DType, Error, Rules, Value};
use dtype_lattice_array::numpy::{self as jnp, Axes, Index};
use dtype_lattice_array::ode::{Options, odeint};
use dtype_lattice_array::{Array, grad, jit, vjp};

/// One of the example's dynamical systems.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum System {
    /// Lotka–Volterra: `[a*y0 - b*y0*y1, c*y0*y1 - d*y1]`.
    Lotka,
    /// The pendulum: `[y1, -(g/l)*sin(y0)]`.
    Pendulum,
    /// Decay at a varying rate: `-k*y*(1 + sin(t))`.
    Decay,
}

impl System {
    fn parse(s: &str) -> Result<System, String> {
        match s {
            "lotka" => Ok(System::Lotka),
            "pendulum" => Ok(System::Pendulum),
            "decay" => Ok(System::Decay),
            _ => Err(format!(
                "--system {s}: expected one of lotka, pendulum, decay"
            )),
        }
    }

    /// How many parameters it takes, and how many state components (`None`: any number).
    fn arity(self) -> (usize, Option<usize>) {
        match self {
            System::Lotka => (4, Some(2)),
            System::Pendulum => (2, Some(2)),
            System::Decay => (1, None),
        }
    }

    /// `dy/dt` at `(y, t)`.
    pub fn dynamics(self, y: &Array, t: &Array, p: &[Array]) -> Result<Array, Error> {
        let at = |i: isize| jnp::index(y, &[Index::At(i)]);
        match self {
            System::Lotka => {
                let (y0, y1) = (at(0)?, at(1)?);
                let (a, b, c, d) = (&p[0], &p[1], &p[2], &p[3]);
                let u = jnp::subtract(
                    jnp::multiply(a, &y0)?,
                    jnp::multiply(jnp::multiply(b, &y0)?, &y1)?,
                )?;
                let v = jnp::subtract(
                    jnp::multiply(jnp::multiply(c, &y0)?, &y1)?,
                    jnp::multiply(d, &y1)?,
                )?;
                jnp::stack(&[u.into(), v.into()], 0)
            }
            System::Pendulum => {
                let (y0, y1) = (at(0)?, at(1)?);
                let (g, l) = (&p[0], &p[1]);
                let v = jnp::multiply(jnp::negative(jnp::true_divide(g, l)?)?, jnp::sin(&y0)?)?;
                jnp::stack(&[y1.into(), v.into()], 0)
            }
            System::Decay => jnp::multiply(
                jnp::multiply(jnp::negative(&p[0])?, y)?,
                jnp::add(1, jnp::sin(t)?)?,
            ),
        }
    }
}

/// The command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Args {
    pub system: System,
    pub y0: Vec<f64>,
    pub params: Vec<f64>,
    pub t1: f64,
    pub points: usize,
    pub rtol: f64,
    pub atol: f64,
    pub dtype: DType,
    pub x64: bool,
    pub repeat: usize,
}

fn floats(flag: &str, v: &str) -> Result<Vec<f64>, String> {
    v.split(',')
        .map(|x| {
            x.trim()
                .parse::<f64>()
                .map_err(|e| format!("{flag} {v}: {x:?}: {e}"))
        })
        .collect()
}

/// Parses the command line (without the program's name).
///
/// # Errors
///
/// A message for a missing, unknown or malformed flag, or values that do not fit the system.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let (mut system, mut y0, mut params, mut t1, mut points, mut rtol, mut atol) =
        (None, None, None, None, None, None, None);
    let (mut dtype, mut x64, mut repeat) = (DType::Float32, false, 1usize);
    let mut it = args.into_iter();
    while let Some(flag) = it.next() {
        if flag == "--x64" {
            x64 = true;
            continue;
        }
        let v = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {v}: {e}");
        let float = || v.parse::<f64>().map_err(|e| bad(&e));
        match flag.as_str() {
            "--system" => system = Some(System::parse(&v)?),
            "--y0" => y0 = Some(floats(&flag, &v)?),
            "--params" => params = Some(floats(&flag, &v)?),
            "--t1" => t1 = Some(float()?),
            "--points" => points = Some(v.parse::<usize>().map_err(|e| bad(&e))?),
            "--rtol" => rtol = Some(float()?),
            "--atol" => atol = Some(float()?),
            "--dtype" => {
                dtype = match v.as_str() {
                    "float32" => DType::Float32,
                    "float64" => DType::Float64,
                    _ => return Err(bad(&"expected float32 or float64")),
                }
            }
            "--repeat" => repeat = v.parse::<usize>().map_err(|e| bad(&e))?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let need = |name: &str| format!("--{name} is required");
    let a = Args {
        system: system.ok_or_else(|| need("system"))?,
        y0: y0.ok_or_else(|| need("y0"))?,
        params: params.ok_or_else(|| need("params"))?,
        t1: t1.ok_or_else(|| need("t1"))?,
        points: points.ok_or_else(|| need("points"))?,
        rtol: rtol.ok_or_else(|| need("rtol"))?,
        atol: atol.ok_or_else(|| need("atol"))?,
        dtype,
        x64,
        repeat,
    };
    let (np, ny) = a.system.arity();
    if a.params.len() != np {
        return Err(format!(
            "--params: {:?} takes {np} parameters, got {}",
            a.system,
            a.params.len()
        ));
    }
    if ny.is_some_and(|n| n != a.y0.len()) {
        return Err(format!(
            "--y0: {:?} has {} components, got {}",
            a.system,
            ny.unwrap_or(0),
            a.y0.len()
        ));
    }
    if a.points == 0 || a.repeat == 0 {
        return Err("--points and --repeat must be at least 1".to_string());
    }
    Ok(a)
}

/// The solution, the gradient with respect to `y0` and the parameters' gradients.
pub type Solved = (Array, Array, Vec<Array>);

/// The jitted solve and gradient, run `repeat` times.
///
/// # Errors
///
/// Whatever the library refuses.
pub fn solve(a: &Args) -> Result<Solved, Error> {
    let values = |v: &[f64]| v.iter().map(|&x| Value::Float(x)).collect::<Vec<_>>();
    let y0 = jnp::array(&values(&a.y0), &[a.y0.len()], a.dtype)?;
    let params = a
        .params
        .iter()
        .map(|&p| jnp::array(&[Value::Float(p)], &[], a.dtype))
        .collect::<Result<Vec<_>, Error>>()?;
    let ts = jnp::linspace(0.0, a.t1, a.points, a.dtype)?;
    let options = Options::new().rtol(a.rtol).atol(a.atol);
    let system = a.system;
    let f = move |y: &Array, t: &Array, p: &Vec<Array>| system.dynamics(y, t, p);
    // ys, pullback = jax.vjp(solve, y0, params); pullback(jax.grad(sum(ys ** 2))(ys)).
    let run = jit(
        move |(y0, params): (Array, Vec<Array>)| -> Result<Solved, Error> {
            let (ys, pullback) = vjp(
                |(y0, p): (Array, Vec<Array>)| odeint(f, &y0, &ts, &p, options),
                &(y0, params),
            )?;
            let ct = grad(
                |ys: Array| jnp::sum(jnp::power(&ys, 2)?, Axes::All, false),
                &ys,
            )?;
            let (gy0, gp) = pullback(&ct)?;
            Ok((ys, gy0, gp))
        },
    )
    .named("run");
    let args = (y0, params);
    let mut out = run.call(&args)?;
    for _ in 1..a.repeat {
        out = run.call(&args)?;
    }
    Ok(out)
}

/// Python's `repr(float(v))` of each element, separated by spaces.
fn line(x: &Array) -> Result<String, Error> {
    let v = x.astype(DType::Float64)?.to_vec::<f64>()?;
    let items: Vec<String> = v.into_iter().map(|x| Value::Float(x).to_string()).collect();
    Ok(items.join(" "))
}

/// What the program prints: the solution's rows, then the two gradients, a line each.
///
/// # Errors
///
/// Whatever the library refuses.
pub fn output(a: &Args) -> Result<String, Error> {
    let (ys, gy0, gp) = solve(a)?;
    let mut out = String::new();
    for i in 0..ys.shape()[0] {
        out += &line(&jnp::index(&ys, &[Index::At(i as isize)])?)?;
        out.push('\n');
    }
    out += &line(&gy0)?;
    out.push('\n');
    let stacked = jnp::stack(
        &gp.iter().map(Into::into).collect::<Vec<jnp::ArrayLike>>(),
        0,
    )?;
    out += &line(&stacked)?;
    out.push('\n');
    Ok(out)
}

/// [`output`] with x64 switched on when asked (global configuration, as `jax_enable_x64`).
///
/// # Errors
///
/// Whatever the library refuses.
pub fn run(a: &Args) -> Result<String, Error> {
    if a.x64 {
        jnp::with_rules(Rules::jax().x64(true), || output(a))
    } else {
        output(a)
    }
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(text) => {
            // A reader that stops reading (`| head`) is not an error of ours: no panic.
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    eprintln!("error: {e}");
                    ExitCode::from(1)
                }
                _ => ExitCode::SUCCESS,
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

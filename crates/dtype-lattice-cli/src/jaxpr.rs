//! `dtype-lattice jaxpr FILE|- [--consts NPZ] [--args NPZ] [--apply T]... [--x64]
//! [--json | --out NPZ] [--print]`: a jaxpr as JAX prints it, read
//! (`dtype_lattice_array::reader`), transformed and run. Parsing and rendering only.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use dtype_lattice::error::{Exception, Reason};
use dtype_lattice::{Error, Rules};
use dtype_lattice_array::config::with_rules;
use dtype_lattice_array::reader::{self, MAX_TEXT};
use dtype_lattice_array::{Array, ShapedArray, Vmap, grad, jit, jvp, make_jaxpr, npy, vmap};

use crate::render;

/// Arguments of `jaxpr`.
#[derive(Args, Debug)]
pub(crate) struct JaxprArgs {
    /// The jaxpr, as `print(jax.make_jaxpr(f)(*args))` writes it (`-`: stdin).
    #[arg(value_name = "FILE")]
    file: String,
    /// The constvars' values, `c0, c1, …` in constvar order (`closed_jaxpr.consts`).
    #[arg(long, value_name = "NPZ")]
    consts: Option<PathBuf>,
    /// The inputs, `a0, a1, …` in invar order (and `t0, t1, …`: the tangents of `--apply jvp`).
    #[arg(long, value_name = "NPZ")]
    args: Option<PathBuf>,
    /// A transformation, wrapping the function so far (the first innermost): `jit`, `grad`,
    /// `grad:I,J` (argnums), `vmap`, `vmap:AX,...` (an integer or `none` per input), `jvp`
    /// (outermost only).
    #[arg(long = "apply", value_name = "T")]
    apply: Vec<String>,
    /// 64-bit mode (jax_enable_x64=True).
    #[arg(long)]
    x64: bool,
    /// Print a JSON list with one {"dtype", "weak_type", "shape", "values", "bits"} object per
    /// output, or {"error": {"kind", "message"}}.
    #[arg(long, conflicts_with = "out")]
    json: bool,
    /// Write the outputs to an .npz archive as `o0, o1, …`.
    #[arg(long, value_name = "NPZ")]
    out: Option<PathBuf>,
    /// Print the jaxpr read (with --apply: of the transformed function) instead of running it.
    #[arg(long)]
    print: bool,
    /// Stop a loop still running after this many seconds (a `while` whose predicate never
    /// fails runs forever in JAX): exit code 1. 0: no limit.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    timeout: f64,
}

/// A transformation of `--apply`.
#[derive(Clone, Debug, PartialEq)]
enum Transform {
    Jit,
    Grad(Vec<usize>),
    Vmap(Option<Vec<Option<usize>>>),
    Jvp,
}

fn unusable(argument: &str, reason: impl Into<String>) -> Error {
    Reason::InvalidArgument {
        argument: argument.into(),
        reason: reason.into(),
    }
    .into()
}

fn list(r: &str) -> Vec<&str> {
    r.split(',').map(str::trim).collect()
}

fn parse_transform(t: &str) -> Result<Transform, Error> {
    let (name, rest) = t.split_once(':').map_or((t, None), |(n, r)| (n, Some(r)));
    match (name, rest) {
        ("jit", None) => Ok(Transform::Jit),
        ("jvp", None) => Ok(Transform::Jvp),
        ("grad", None) => Ok(Transform::Grad(vec![0])),
        ("grad", Some(r)) => list(r)
            .into_iter()
            .map(|i| i.parse::<usize>())
            .collect::<Result<Vec<_>, _>>()
            .map(Transform::Grad)
            .map_err(|_| unusable("--apply", format!("grad's argnums are integers, not {r:?}"))),
        ("vmap", None) => Ok(Transform::Vmap(None)),
        ("vmap", Some(r)) => list(r)
            .into_iter()
            .map(|a| match a {
                "none" | "None" => Ok(None),
                a => a.parse::<usize>().map(Some),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|v| Transform::Vmap(Some(v)))
            .map_err(|_| {
                unusable(
                    "--apply",
                    format!("vmap's in_axes are integers or none, not {r:?}"),
                )
            }),
        _ => Err(unusable(
            "--apply",
            format!("{t:?} is not a transformation: jit, grad[:I,J], vmap[:AX,...], jvp"),
        )),
    }
}

/// The text of FILE (`-`: stdin), at most [`MAX_TEXT`] bytes of UTF-8.
fn read_text(file: &str, stdin: &mut dyn Read) -> Result<String, Error> {
    let mut bytes = Vec::new();
    let limit = MAX_TEXT as u64 + 1;
    let read = if file == "-" {
        stdin.take(limit).read_to_end(&mut bytes)
    } else {
        File::open(file).and_then(|f| f.take(limit).read_to_end(&mut bytes))
    };
    read.map_err(|e| unusable("FILE", format!("cannot read {file}: {e}")))?;
    if bytes.len() > MAX_TEXT {
        return Err(unusable(
            "FILE",
            format!("{file} is larger than {MAX_TEXT} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        unusable(
            "FILE",
            format!(
                "{file} is not UTF-8 (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// The members of an .npz archive, an ml_dtypes array saved with a void descr taking the
/// dtype declared at its position (`a1` the second input's, `t1` its tangent's).
fn members(
    path: &Path,
    flag: &str,
    groups: &[(&str, &[ShapedArray])],
) -> Result<Vec<(String, Array)>, Error> {
    let file = File::open(path)
        .map_err(|e| unusable(flag, format!("cannot read {}: {e}", path.display())))?;
    let dtype_of = |name: &str| {
        groups.iter().find_map(|(prefix, avals)| {
            name.strip_prefix(prefix)
                .and_then(|i| i.parse::<usize>().ok())
                .and_then(|i| avals.get(i))
                .map(ShapedArray::dtype)
                // Keys travel as their key data (uint32), which has a descr of its own.
                .filter(|d| d.key_impl().is_none())
        })
    };
    npy::read_npz_with(BufReader::new(file), dtype_of)
        .map_err(|e| unusable(flag, format!("{}: {e}", path.display())))
}

/// The members named `prefix0, prefix1, …` for `avals`, taken out of `members`; a missing
/// (unless `optional`: tangents) or mistyped entry is an error naming it. Under `vmap`
/// (`batched`) an entry may have more dimensions than declared.
fn take(
    members: &mut Vec<(String, Array)>,
    flag: &str,
    prefix: &str,
    avals: &[ShapedArray],
    optional: bool,
    batched: bool,
) -> Result<Vec<Option<Array>>, Error> {
    let mut out = vec![None; avals.len()];
    let mut rest = Vec::new();
    for (name, a) in members.drain(..) {
        let slot = name
            .strip_prefix(prefix)
            .and_then(|i| i.parse::<usize>().ok())
            .filter(|&i| i < avals.len() && name == format!("{prefix}{i}"));
        let Some(i) = slot else {
            rest.push((name, a));
            continue;
        };
        let want = &avals[i];
        let a = key_from_data(a, want)?;
        let shape_ok = if batched {
            a.ndim() >= want.ndim()
        } else {
            a.shape() == want.shape()
        };
        if !shape_ok || a.dtype() != want.dtype() {
            return Err(unusable(
                flag,
                format!(
                    "{name} is {} but the jaxpr declares {}",
                    a.aval().long_name(),
                    want.long_name()
                ),
            ));
        }
        out[i] = Some(a);
    }
    *members = rest;
    if !optional && let Some(i) = out.iter().position(Option::is_none) {
        return Err(unusable(
            flag,
            format!("no {prefix}{i} (the jaxpr takes {} of them)", avals.len()),
        ));
    }
    Ok(out)
}

/// A key input given as its key data (`jax.random.key_data(k)`: uint32, the key's shape and
/// then its words), as the declared key dtype; any other array as it is.
fn key_from_data(a: Array, want: &ShapedArray) -> Result<Array, Error> {
    let Some(k) = want.dtype().key_impl() else {
        return Ok(a);
    };
    let words = k.key_words;
    match a.shape().split_last() {
        Some((&w, shape)) if a.dtype() == dtype_lattice::DType::UInt32 && w == words => {
            Array::from_bytes(want.dtype(), shape, a.as_bytes())
        }
        _ => Ok(a),
    }
}

type Fun<'a> = Box<dyn Fn(Vec<Array>) -> Result<Vec<Array>, Error> + 'a>;

/// `f` under `t`.
fn wrap<'a>(f: Fun<'a>, t: &Transform) -> Fun<'a> {
    match t.clone() {
        Transform::Jit => Box::new(move |a| jit(|x: Vec<Array>| f(x)).call(&a)),
        Transform::Grad(argnums) => Box::new(move |a: Vec<Array>| {
            if let Some(&i) = argnums.iter().find(|&&i| i >= a.len()) {
                return Err(Error::refused(
                    Exception::ValueError,
                    format!(
                        "argnums {i} is out of bounds for a function of {} positional arguments",
                        a.len()
                    ),
                ));
            }
            let selected: Vec<Array> = argnums.iter().map(|&i| a[i].clone()).collect();
            let outputs = std::cell::Cell::new(1);
            let g = grad(
                |sel: Vec<Array>| {
                    let mut full = a.clone();
                    for (&i, x) in argnums.iter().zip(sel) {
                        full[i] = x;
                    }
                    let mut out = f(full)?;
                    outputs.set(out.len());
                    if out.len() != 1 {
                        return Err(Error::refused(Exception::TypeError, "not one output"));
                    }
                    Ok(out.remove(0))
                },
                &selected,
            );
            match g {
                // JAX's message shows the outputs' values: computed again, outside grad.
                Err(_) if outputs.get() != 1 => {
                    let values: Vec<String> =
                        f(a.clone())?.iter().map(ToString::to_string).collect();
                    Err(Error::refused(
                        Exception::TypeError,
                        format!(
                            "Gradient only defined for scalar-output functions. Output was ({}{}).",
                            values.join(", "),
                            if values.len() == 1 { "," } else { "" }
                        ),
                    ))
                }
                g => g,
            }
        }),
        Transform::Vmap(axes) => Box::new(move |a: Vec<Array>| {
            let v: Vmap<_> = vmap(|x: Vec<Array>| f(x));
            let v = match &axes {
                None => v,
                Some(axes) => v.in_axes(axes.clone()),
            };
            v.call(&a)
        }),
        // Applied by `run`, outermost.
        Transform::Jvp => f,
    }
}

/// Runs `jaxpr`; returns the exit code.
pub(crate) fn run(args: &JaxprArgs, stdin: &mut dyn Read, out: &mut impl Write) -> i32 {
    let json = args.json;
    let rules = Rules::jax().x64(args.x64);
    if args.timeout.is_nan() || args.timeout < 0.0 {
        let e = unusable(
            "--timeout",
            format!("{} is not a number of seconds", args.timeout),
        );
        return render::fail(out, &e, json);
    }
    let timeout = std::time::Duration::try_from_secs_f64(args.timeout)
        .ok()
        .filter(|d| !d.is_zero());
    #[allow(clippy::redundant_closure)]
    let mut run = || with_rules(rules, || execute(args, stdin));
    let result = match timeout.and_then(|d| std::time::Instant::now().checked_add(d)) {
        Some(deadline) => dtype_lattice_array::config::with_deadline(deadline, run),
        None => run(),
    };
    let written = match result {
        Err(e) => return render::fail(out, &e, json),
        Ok(Output::Text(t)) => writeln!(out, "{t}"),
        Ok(Output::Arrays(arrays)) => match &args.out {
            Some(path) => match save(path, &arrays) {
                Ok(()) => Ok(()),
                Err(e) => return render::fail(out, &e, json),
            },
            None if json => {
                let items: Vec<String> = arrays.iter().map(leaf_json).collect();
                writeln!(out, "[{}]", items.join(", "))
            }
            None => arrays.iter().try_for_each(|a| writeln!(out, "{a}")),
        },
    };
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            eprintln!("error: cannot write output: {e}");
            2
        }
        _ => 0,
    }
}

enum Output {
    Text(String),
    Arrays(Vec<Array>),
}

fn leaf_json(a: &Array) -> String {
    if a.dtype().is_float0() {
        return serde_json::json!({"dtype": "float0", "shape": a.shape(), "values": []})
            .to_string();
    }
    crate::eval::to_json(a)
}

fn save(path: &Path, arrays: &[Array]) -> Result<(), Error> {
    let names: Vec<String> = (0..arrays.len()).map(|i| format!("o{i}")).collect();
    let items: Vec<(&str, &Array)> = names.iter().map(String::as_str).zip(arrays).collect();
    let file = File::create(path)
        .map_err(|e| unusable("--out", format!("cannot write {}: {e}", path.display())))?;
    npy::write_npz(io::BufWriter::new(file), &items, false)
}

fn execute(args: &JaxprArgs, stdin: &mut dyn Read) -> Result<Output, Error> {
    let transforms = args
        .apply
        .iter()
        .map(|t| parse_transform(t))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(k) = transforms.iter().position(|t| *t == Transform::Jvp)
        && k + 1 != transforms.len()
    {
        return Err(unusable("--apply", "jvp applies outermost only (last)"));
    }
    let text = read_text(&args.file, stdin)?;
    let f = reader::read(&text).map_err(|e| unusable("FILE", e.to_string()))?;
    let consts: Vec<ShapedArray> = f
        .jaxpr()
        .constvars()
        .iter()
        .map(|v| v.aval().clone())
        .collect();
    let f = match (&args.consts, consts.is_empty()) {
        (None, true) => f,
        (None, false) => {
            return Err(unusable(
                "--consts",
                format!(
                    "the jaxpr has {} constvars: give their values (c0, c1, …) with --consts",
                    consts.len()
                ),
            ));
        }
        (Some(path), _) => {
            let mut all = members(path, "--consts", &[("c", &consts)])?;
            let values = take(&mut all, "--consts", "c", &consts, false, false)?;
            if let Some((extra, _)) = all.first() {
                return Err(unusable(
                    "--consts",
                    format!(
                        "{extra} is not a constvar of the jaxpr (c0 … c{})",
                        consts.len().saturating_sub(1)
                    ),
                ));
            }
            f.with_consts(values.into_iter().flatten().collect())?
        }
    };
    let invars: Vec<ShapedArray> = f
        .jaxpr()
        .invars()
        .iter()
        .map(|v| v.aval().clone())
        .collect();
    let jvp_last = transforms.last() == Some(&Transform::Jvp);
    if args.print && transforms.is_empty() {
        return Ok(Output::Text(f.to_string()));
    }
    let (inputs, tangents) = match &args.args {
        None if invars.is_empty() => (Vec::new(), Vec::new()),
        // Printing needs only the inputs' types: zeros of the declared ones.
        None if args.print => (
            invars
                .iter()
                .map(|a| dtype_lattice_array::numpy::zeros(a.shape(), a.dtype()))
                .collect::<Result<Vec<_>, _>>()?,
            Vec::new(),
        ),
        None => {
            return Err(unusable(
                "--args",
                format!(
                    "the jaxpr takes {} inputs: give them (a0, a1, …) with --args",
                    invars.len()
                ),
            ));
        }
        Some(path) => {
            let batched = transforms.iter().any(|t| matches!(t, Transform::Vmap(_)));
            let tangent_avals: Vec<ShapedArray> = invars.iter().map(tangent_aval).collect();
            let groups: &[(&str, &[ShapedArray])] = if jvp_last {
                &[("a", &invars), ("t", &tangent_avals)]
            } else {
                &[("a", &invars)]
            };
            let mut all = members(path, "--args", groups)?;
            let values = take(&mut all, "--args", "a", &invars, false, batched)?;
            let tangents = if jvp_last {
                take(&mut all, "--args", "t", &tangent_avals, true, batched)?
            } else {
                Vec::new()
            };
            let extra = all.first().map(|(n, _)| n.clone());
            if let Some(extra) = extra {
                return Err(unusable(
                    "--args",
                    format!(
                        "{extra} is not an input of the jaxpr (a0 … a{}{})",
                        invars.len().saturating_sub(1),
                        if jvp_last {
                            ", and their tangents t0 …"
                        } else {
                            ""
                        }
                    ),
                ));
            }
            (values.into_iter().flatten().collect(), tangents)
        }
    };
    let mut fun: Fun<'_> = Box::new(|a: Vec<Array>| f.call(&a));
    for t in &transforms {
        fun = wrap(fun, t);
    }
    if args.print {
        let text = if jvp_last {
            let tangents = fill_tangents(&inputs, tangents)?;
            make_jaxpr(
                |(p, t): (Vec<Array>, Vec<Array>)| {
                    let (po, to): (Vec<Array>, Vec<Array>) = jvp(&fun, &p, &t)?;
                    Ok(po.into_iter().chain(to).collect::<Vec<_>>())
                },
                &(inputs, tangents),
            )?
        } else {
            make_jaxpr(&fun, &inputs)?
        };
        return Ok(Output::Text(text.to_string()));
    }
    let outputs = if jvp_last {
        let tangents = fill_tangents(&inputs, tangents)?;
        let (p, t): (Vec<Array>, Vec<Array>) = jvp(&fun, &inputs, &tangents)?;
        p.into_iter().chain(t).collect()
    } else {
        fun(inputs)?
    };
    Ok(Output::Arrays(outputs))
}

/// The tangent type of an input (`DType::tangent_dtype`: float0 for integers, bools and
/// keys), strongly typed.
fn tangent_aval(a: &ShapedArray) -> ShapedArray {
    a.with_dtype(a.dtype().tangent_dtype())
        .with_weak_type(false)
}

/// The tangents given, float0 zeros for integer and bool inputs without one; a float input
/// needs its tangent.
fn fill_tangents(inputs: &[Array], given: Vec<Option<Array>>) -> Result<Vec<Array>, Error> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, x)| match given.get(i).cloned().flatten() {
            Some(t) => Ok(t),
            None if x.dtype().tangent_dtype().is_float0() => Ok(dtype_lattice_array::numpy::zeros(
                x.shape(),
                dtype_lattice::DType::Float0,
            )?),
            None => Err(unusable(
                "--args",
                format!("--apply jvp needs t{i}, the tangent of a{i}"),
            )),
        })
        .collect()
}

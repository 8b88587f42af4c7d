//! `jaxpr`: the jaxpr reader (`dtype_lattice_array::reader`) and what the CLI feeds it. The
//! input is the text, then (after the first 0xFF byte, which UTF-8 never holds) an `.npz`
//! archive of inputs `a0, a1, …`.
//!
//! Whatever reads must print to a text that reads again and prints the same (the printer and
//! the reader agree), typecheck, and, when its inputs are small, evaluate on zeros (or on the
//! archive's arrays, read with the jaxpr's declared dtypes) without panicking, eagerly and
//! under `jit` (the compiled plan): an error is fine, a panic or a hang is not. The reader's limits (`MAX_TEXT`, `MAX_DEPTH`, `MAX_EQNS`,
//! declared shapes) bound the work, and a deadline the loops.
#![no_main]

use std::io::Cursor;

use dtype_lattice_array::core::ClosedJaxpr;
use dtype_lattice_array::{Array, npy, reader};
use libfuzzer_sys::fuzz_target;

/// Inputs this small are evaluated.
const SMALL: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let (text, npz) = match data.iter().position(|&b| b == 0xFF) {
        Some(k) => (&data[..k], Some(&data[k + 1..])),
        None => (data, None),
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let Ok(f) = reader::read(text) else {
        return;
    };
    let printed = f.to_string();
    let again: ClosedJaxpr = printed
        .parse()
        .unwrap_or_else(|e| panic!("the printed jaxpr does not read: {e}\n{printed}"));
    assert_eq!(again.to_string(), printed, "printing is not a fixed point");
    f.jaxpr().typecheck().unwrap_or_else(|e| panic!("read but ill-typed: {e}"));
    if !f.jaxpr().constvars().is_empty() {
        return;
    }
    let avals: Vec<_> = f.jaxpr().invars().iter().map(|v| v.aval().clone()).collect();
    if avals.iter().map(|a| a.size()).sum::<usize>() > SMALL {
        return;
    }
    let args: Vec<Array> = match npz {
        Some(bytes) => {
            let dtype_of = |name: &str| {
                name.strip_prefix('a')
                    .and_then(|i| i.parse::<usize>().ok())
                    .and_then(|i| avals.get(i))
                    .map(|a| a.dtype())
            };
            let Ok(members) = npy::read_npz_with(Cursor::new(bytes), dtype_of) else {
                return;
            };
            let mut args = Vec::new();
            for (i, a) in avals.iter().enumerate() {
                match members.iter().find(|(n, _)| *n == format!("a{i}")) {
                    Some((_, x)) if x.shape() == a.shape() && x.dtype() == a.dtype() => {
                        args.push(x.clone())
                    }
                    _ => return,
                }
            }
            args
        }
        None => {
            let zeros: Result<Vec<Array>, _> = avals
                .iter()
                .map(|a| dtype_lattice_array::numpy::zeros(a.shape(), a.dtype()))
                .collect();
            let Ok(zeros) = zeros else { return };
            zeros
        }
    };
    // A `while` whose predicate never fails runs forever (as in JAX): the deadline stops it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    let _ = dtype_lattice_array::config::with_deadline(deadline, || f.call(&args));
    // And jitted: the compiled plan (folding, fusion, contraction, loops on buffers).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    let _ = dtype_lattice_array::config::with_deadline(deadline, || {
        dtype_lattice_array::jit(|xs: Vec<Array>| f.call(&xs)).call(&args)
    });
});

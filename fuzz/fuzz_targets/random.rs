//! `random`: the operation, seed or key data, shape or count, data, width, dtype, bounds, p,
//! the PRNG implementation and the samplers' parameters through the CLI's `run` (never
//! `--out`, which streams without bound by design). Fields are the input's lines; the first
//! byte picks the operation (one of the first eight, or with bit 0x20 a sampler) and flags.
#![no_main]

use libfuzzer_sys::fuzz_target;

const OPS: [&str; 8] = [
    "key",
    "split",
    "fold-in",
    "bits",
    "uniform",
    "normal",
    "randint",
    "bernoulli",
];
const SAMPLERS: [&str; 31] = [
    "exponential",
    "cauchy",
    "laplace",
    "logistic",
    "gumbel",
    "maxwell",
    "rademacher",
    "pareto",
    "rayleigh",
    "wald",
    "lognormal",
    "weibull-min",
    "double-sided-maxwell",
    "triangular",
    "truncated-normal",
    "geometric",
    "categorical",
    "choice",
    "permutation",
    "gamma",
    "loggamma",
    "beta",
    "dirichlet",
    "chisquare",
    "f",
    "t",
    "generalized-normal",
    "ball",
    "poisson",
    "binomial",
    "multinomial",
];
const FIELDS: [&str; 33] = [
    "--seed",
    "--key",
    "--num",
    "--shape",
    "--data",
    "--width",
    "--dtype",
    "--minval",
    "--maxval",
    "--p",
    "--impl",
    "--a",
    "--b",
    "--scale",
    "--concentration",
    "--loc",
    "--mean",
    "--sigma",
    "--left",
    "--mode",
    "--right",
    "--lower",
    "--upper",
    "--lam",
    "--n",
    "--df",
    "--dfnum",
    "--dfden",
    "--alpha",
    "--logits",
    "--d",
    "--axis",
    "--replace",
];

/// Elements a shape or count asks for, when it parses as one (saturating).
fn elements(s: &str) -> Option<u128> {
    s.split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .try_fold(1u128, |acc, d| {
            Some(acc.saturating_mul(d.parse::<u128>().ok()?))
        })
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let mut args = vec!["dtype-lattice".to_string(), "random".into()];
    if flags & 0x20 != 0 {
        let i = usize::from(flags & 7) + 8 * usize::from(flags >> 6);
        args.push(SAMPLERS[i % SAMPLERS.len()].into());
    } else {
        args.push(OPS[usize::from(flags & 7)].into());
    }
    if flags & 0x08 != 0 {
        args.push("--x64".into());
    }
    if flags & 0x10 != 0 {
        args.push("--json".into());
    }
    // Each line "K:VALUE" sets field K (a digit) to VALUE.
    for line in text.lines().take(12) {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let Some(field) = k.parse::<usize>().ok().and_then(|k| FIELDS.get(k)) else {
            continue;
        };
        // Large outputs are legitimate and slow (up to the 2^24 printed): tested elsewhere.
        if matches!(*field, "--num" | "--shape")
            && elements(v).is_some_and(|n| n > 4096 && n <= 1 << 64)
        {
            return;
        }
        args.push(format!("{field}={v}"));
    }
    let mut stdin: &[u8] = b"";
    let mut out = Vec::new();
    let code = dtype_lattice_cli::run(args, &mut stdin, &mut out);
    assert!((0..=2).contains(&code), "exit code {code}");
});

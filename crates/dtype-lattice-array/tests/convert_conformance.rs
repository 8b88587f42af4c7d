//! Element conversions against the real libraries: every case of tests/fixtures/convert/*.json
//! (tools/gen_convert_fixtures.py: NumPy 2.4.6 + ml_dtypes 0.6.0 and JAX 0.10.2 on CPU) through
//! `convert::convert`, bit for bit. Inputs are every byte of the 8-bit-storage dtypes, every
//! 16-bit pattern of the 16-bit ones, and edge-rich samples of the wider ones, each converted
//! to every dtype.
//!
//! The reference for each (src, dst) pair ([`reference`]):
//! - float/complex → integer: JAX (saturating; NumPy's out-of-range results are C's undefined
//!   behaviour). Where JAX cannot convert (uint1, float6 sources), ml_dtypes on the inputs whose
//!   truncated value is in range.
//! - sources wider than float32 (float64, complex128, 32/64-bit integers) → float: the correctly
//!   rounded result (`exact`, made by the libraries from a round-to-odd float32), where ml_dtypes
//!   rounds twice.
//! - pairs ml_dtypes refuses (float8_e8m0fnu with the other narrow types): JAX where it has them.
//! - everything else: ml_dtypes. JAX's differences there (subnormals flushed to zero, NaN
//!   payloads quieted, float4's NaN, int1 as a predicate) are counted and printed, not followed.

use std::collections::BTreeMap;
use std::path::PathBuf;

use dtype_lattice::DType;
use dtype_lattice_array::convert::{self, element_size};
use serde_json::Value;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/convert")
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// zlib's CRC-32 (the fixtures' `crc32`).
fn crc32(data: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *t = c;
    }
    let mut crc = !0u32;
    for &b in data {
        crc = table[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// A recorded result: full bytes, or a CRC with a sample.
enum Recorded {
    Full(Vec<u8>),
    Crc {
        crc: u32,
        bytes: usize,
        sample: Vec<(usize, Vec<u8>)>,
    },
}

fn recorded(v: &Value) -> Recorded {
    if let Some(s) = v.as_str() {
        return Recorded::Full(unhex(s));
    }
    if let Some(s) = v.get("hex").and_then(Value::as_str) {
        return Recorded::Full(unhex(s));
    }
    Recorded::Crc {
        crc: v["crc32"].as_u64().unwrap() as u32,
        bytes: v["bytes"].as_u64().unwrap() as usize,
        sample: v["sample"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p[0].as_u64().unwrap() as usize,
                    unhex(p[1].as_str().unwrap()),
                )
            })
            .collect(),
    }
}

/// Indices (up to 5) where `got` differs from `want`; empty if equal.
fn mismatches(
    got: &[u8],
    want: &Recorded,
    size: usize,
    only: Option<&dyn Fn(usize) -> bool>,
    nan_ok: Option<DType>,
) -> Vec<String> {
    let both_nan = |g: &[u8], e: &[u8]| {
        let t = nan_ok.unwrap();
        convert::decode_f64(t, g).unwrap().is_nan() && convert::decode_f64(t, e).unwrap().is_nan()
    };
    let nan_ok = nan_ok.is_some()
        && nan_ok.unwrap().float_format().is_some()
        && nan_ok.unwrap().kind() != dtype_lattice::Kind::Complex;
    match want {
        Recorded::Full(w) => {
            let n = w.len() / size;
            let mut out = vec![];
            if got.len() < w.len() {
                return vec![format!("length {} < {}", got.len(), w.len())];
            }
            for i in 0..n {
                if only.is_some_and(|f| !f(i)) {
                    continue;
                }
                let (g, e) = (&got[i * size..(i + 1) * size], &w[i * size..(i + 1) * size]);
                if g != e && !(nan_ok && both_nan(g, e)) {
                    out.push(format!("[{i}] got {} want {}", hex(g), hex(e)));
                    if out.len() == 5 {
                        break;
                    }
                }
            }
            out
        }
        Recorded::Crc { crc, bytes, sample } => {
            let g = &got[..(*bytes).min(got.len())];
            if crc32(g) == *crc && g.len() == *bytes {
                return vec![];
            }
            // A filtered comparison cannot use the CRC: only the sample is compared.
            let mut out = if only.is_some() {
                vec![]
            } else {
                vec![format!("crc32 {:08x} != {crc:08x}", crc32(g))]
            };
            for (i, e) in sample {
                if only.is_some_and(|f| !f(*i)) {
                    continue;
                }
                let gi = &got[i * size..(i + 1) * size];
                if gi != &e[..] {
                    out.push(format!("[{i}] got {} want {}", hex(gi), hex(e)));
                }
            }
            if only.is_some() && out.is_empty() {
                return out;
            }
            if out.is_empty() {
                out.push(format!("crc32 {:08x} != {crc:08x}", crc32(g)));
            }
            out
        }
    }
}

fn is_float(t: DType) -> bool {
    t.float_format().is_some()
}

fn is_int(t: DType) -> bool {
    t.int_range().is_some() && t != DType::Bool
}

#[derive(Default)]
struct Tally {
    pairs: usize,
    conversions: usize,
    by_reference: BTreeMap<&'static str, usize>,
    jax_differs: BTreeMap<String, usize>,
    ml_differs: BTreeMap<String, usize>,
    unreferenced: Vec<String>,
    failures: Vec<String>,
}

fn check_file(path: &std::path::Path, tally: &mut Tally) {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let src: DType = doc["src"].as_str().unwrap().parse().unwrap();
    let input = unhex(doc["inputs"].as_str().unwrap());
    let ss = element_size(src).unwrap();
    let n = input.len() / ss;
    assert_eq!(n, doc["count"].as_u64().unwrap() as usize);
    let canonical = match src {
        DType::UInt1 | DType::Int1 => 2,
        DType::UInt2 | DType::Int2 => 4,
        DType::UInt4 | DType::Int4 | DType::Float4E2M1Fn => 16,
        DType::Float6E2M3Fn | DType::Float6E3M2Fn => 64,
        _ => n,
    };
    for case in doc["cases"].as_array().unwrap() {
        let dst: DType = case["dst"].as_str().unwrap().parse().unwrap();
        let ds = element_size(dst).unwrap();
        let got = convert::convert_to_vec(src, &input, dst).unwrap();
        let label = format!("{src} -> {dst}");
        tally.pairs += 1;
        tally.conversions += n;
        if matches!(src, DType::Complex32 | DType::BComplex32)
            || matches!(dst, DType::Complex32 | DType::BComplex32)
        {
            // ml_dtypes 0.6's casts of its own complex types are not usable as a reference:
            // complex32 -> bool writes bytes other than 0/1, complex32 -> bcomplex32 gives 1+0j
            // for every input, and NaNs go through float32 inconsistently. JAX has no such
            // dtypes. These pairs are checked by the component law in `complex_components`.
            tally
                .unreferenced
                .push(format!("{label}: ml_dtypes' complex32/bcomplex32 casts"));
            continue;
        }
        let jax = case.get("jax").filter(|j| !j.is_null());
        let float_to_int = (is_float(src) && is_int(dst)) && src != dst;
        // In-range inputs of a float → int pair, for the ml_dtypes fallback.
        let in_range = |i: usize| {
            let x = convert::decode_f64(src, &input[i * ss..(i + 1) * ss]).unwrap();
            let (lo, hi) = dst.int_range().unwrap();
            !x.is_nan() && (x.trunc() as i128) >= lo && (x.trunc() as i128) <= hi
        };
        let (name, want, only): (&'static str, Recorded, Option<&dyn Fn(usize) -> bool>) =
            if let Some(err) = case.get("ml_error") {
                match jax.filter(|_| !matches!(dst, DType::Int1)) {
                    Some(j) => ("jax (ml_dtypes refuses)", recorded(j), None),
                    None => {
                        tally
                            .unreferenced
                            .push(format!("{label}: {}", err.as_str().unwrap()));
                        continue;
                    }
                }
            } else if float_to_int {
                // JAX is not an integer conversion for int1 (XLA treats s1 as a predicate:
                // any non-zero becomes -1) nor for float4_e2m1fn sources (XLA reads 6.0, the
                // largest value, as inf and saturates); ml_dtypes on in-range inputs there.
                let jax = jax.filter(|_| {
                    !matches!(dst, DType::Int1 | DType::UInt1) && src != DType::Float4E2M1Fn
                });
                match jax {
                    Some(Value::String(s)) if s == "same" => {
                        ("jax (float→int)", recorded(&case["ml"]), None)
                    }
                    Some(j) => ("jax (float→int)", recorded(j), None),
                    None => (
                        "ml_dtypes (float→int, in range)",
                        recorded(&case["ml"]),
                        Some(&in_range),
                    ),
                }
            } else if let Some(e) = case.get("exact") {
                *tally
                    .ml_differs
                    .entry(format!("{label} (rounds twice)"))
                    .or_default() += e["diff"].as_u64().unwrap() as usize;
                ("exact", recorded(e), None)
            } else {
                ("ml_dtypes", recorded(&case["ml"]), None)
            };
        if !float_to_int
            && let Some(j) = jax
            && j.as_str() != Some("same")
            && case.get("ml_error").is_none()
        {
            *tally.jax_differs.entry(label.clone()).or_default() +=
                j["diff"].as_u64().unwrap() as usize;
        }
        // JAX was given only the canonical inputs of a sub-byte source.
        let got_cmp = if name.starts_with("jax") {
            &got[..canonical * ds]
        } else {
            &got[..]
        };
        *tally.by_reference.entry(name).or_default() += 1;
        // Where ml_dtypes refuses, JAX's NaN bits are not ml_dtypes' canonical ones (XLA keeps
        // payload bits): any NaN for a NaN.
        let nan_ok = name.starts_with("jax (ml").then_some(dst);
        let bad = mismatches(got_cmp, &want, ds, only, nan_ok);
        if !bad.is_empty() {
            let inputs: Vec<String> = bad
                .iter()
                .filter_map(|b| {
                    b.strip_prefix('[')?
                        .split(']')
                        .next()?
                        .parse::<usize>()
                        .ok()
                })
                .map(|i| hex(&input[i * ss..(i + 1) * ss]))
                .collect();
            tally.failures.push(format!(
                "{label} vs {name}: {} (inputs {})",
                bad.join("; "),
                inputs.join(" ")
            ));
        }
    }
}

#[test]
fn conversions_match_the_libraries() {
    let mut files: Vec<_> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 34, "one fixture per numeric dtype");
    let mut tally = Tally::default();
    for f in &files {
        check_file(f, &mut tally);
    }
    eprintln!(
        "{} pairs, {} conversions checked; references: {:?}",
        tally.pairs, tally.conversions, tally.by_reference
    );
    eprintln!(
        "ml_dtypes rounds twice (followed: the exact result): {:?}",
        tally.ml_differs
    );
    eprintln!(
        "JAX differs from ml_dtypes (followed: ml_dtypes): {:?}",
        tally.jax_differs
    );
    eprintln!(
        "pairs without a library reference: {:?}",
        tally.unreferenced
    );
    for f in tally.failures.iter().take(60) {
        eprintln!("MISMATCH {f}");
    }
    assert!(
        tally.failures.is_empty(),
        "{} pairs disagree",
        tally.failures.len()
    );
}

/// complex32/bcomplex32 (no library reference): a complex conversion is the conversion of its
/// components; complex → real takes the real part, real → complex adds +0.
#[test]
fn complex_components() {
    let comps = [
        (DType::Complex32, DType::Float16),
        (DType::BComplex32, DType::BFloat16),
        (DType::Complex64, DType::Float32),
        (DType::Complex128, DType::Float64),
    ];
    let samples: Vec<u64> = (0..4000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 3)
        .collect();
    for (c, r) in comps {
        let rs = element_size(r).unwrap();
        let mut src = vec![];
        for s in &samples {
            src.extend_from_slice(&s.to_le_bytes()[..rs]);
        }
        let reals = &src[..];
        // complex from pairs of samples
        let complex: Vec<u8> = src.chunks(rs * 2).flat_map(|p| p.to_vec()).collect();
        let re_part: Vec<u8> = src.chunks(rs * 2).flat_map(|p| p[..rs].to_vec()).collect();
        let im_part: Vec<u8> = src.chunks(rs * 2).flat_map(|p| p[rs..].to_vec()).collect();
        for (dc, dr) in comps {
            let ds = element_size(dr).unwrap();
            let whole = convert::convert_to_vec(c, &complex, dc).unwrap();
            let re = convert::convert_to_vec(r, &re_part, dr).unwrap();
            let im = convert::convert_to_vec(r, &im_part, dr).unwrap();
            for i in 0..re.len() / ds {
                assert_eq!(
                    &whole[2 * i * ds..(2 * i + 1) * ds],
                    &re[i * ds..(i + 1) * ds],
                    "{c}->{dc}"
                );
                assert_eq!(
                    &whole[(2 * i + 1) * ds..(2 * i + 2) * ds],
                    &im[i * ds..(i + 1) * ds],
                    "{c}->{dc}"
                );
            }
            // real -> complex: (x, +0)
            let rc = convert::convert_to_vec(r, reals, dc).unwrap();
            let rr = convert::convert_to_vec(r, reals, dr).unwrap();
            for i in 0..rr.len() / ds {
                assert_eq!(&rc[2 * i * ds..(2 * i + 1) * ds], &rr[i * ds..(i + 1) * ds]);
                assert!(
                    rc[(2 * i + 1) * ds..(2 * i + 2) * ds]
                        .iter()
                        .all(|b| *b == 0)
                );
            }
        }
        // complex -> every non-complex dtype: the real part's conversion.
        for &t in DType::NUMERIC {
            if t.kind() == dtype_lattice::Kind::Complex || t == DType::Bool {
                continue;
            }
            let whole = convert::convert_to_vec(c, &complex, t).unwrap();
            let re = convert::convert_to_vec(r, &re_part, t).unwrap();
            assert_eq!(whole, re, "{c}->{t}");
        }
    }
}

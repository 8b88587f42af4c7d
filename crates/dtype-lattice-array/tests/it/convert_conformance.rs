//! Element conversions against the real libraries, both semantics: every case of
//! tests/fixtures/convert/*.json (tools/gen_convert_fixtures.py) through
//! `convert::convert_to_vec_with`, bit for bit, NaNs included:
//!
//! - [`Semantics::NumPy`] against NumPy 2.4.6 + ml_dtypes 0.6.0 (`numpy`), every pair ml_dtypes
//!   converts, every element (float → integer casts out of range included: NumPy's x86-64
//!   results, its vectorised float → uint32 loop on the leading elements of each array).
//! - [`Semantics::Jax`] against JAX 0.10.2 on CPU, x64 on (`jax`), every pair XLA's CPU backend
//!   holds (no uint1, float6 or complex32/bcomplex32; no int1 sources), on the canonical inputs
//!   of sub-byte sources.
//!
//! Inputs are every byte of the 8-bit-storage dtypes, every 16-bit pattern of the 16-bit ones,
//! and edge-rich samples of the wider ones, each converted to every dtype.

use std::collections::BTreeMap;
use std::path::PathBuf;

use dtype_lattice::DType;
use dtype_lattice_array::convert::{self, Semantics, element_size};
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

/// Up to 5 descriptions of where `got` differs from `want`; empty if equal.
fn mismatches(got: &[u8], want: &Recorded, size: usize) -> Vec<String> {
    match want {
        Recorded::Full(w) => {
            if got.len() != w.len() {
                return vec![format!("length {} != {}", got.len(), w.len())];
            }
            got.chunks(size)
                .zip(w.chunks(size))
                .enumerate()
                .filter(|(_, (g, e))| g != e)
                .take(5)
                .map(|(i, (g, e))| format!("[{i}] got {} want {}", hex(g), hex(e)))
                .collect()
        }
        Recorded::Crc { crc, bytes, sample } => {
            if crc32(got) == *crc && got.len() == *bytes {
                return vec![];
            }
            let mut out = vec![format!("crc32 {:08x} != {crc:08x}", crc32(got))];
            for (i, e) in sample {
                let g = &got[i * size..(i + 1) * size];
                if g != &e[..] {
                    out.push(format!("[{i}] got {} want {}", hex(g), hex(e)));
                }
            }
            out
        }
    }
}

#[derive(Default)]
struct Tally {
    pairs: BTreeMap<&'static str, usize>,
    conversions: BTreeMap<&'static str, usize>,
    jax_differs: BTreeMap<String, usize>,
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
        let label = format!("{src} -> {dst}");
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
        // NumPy + ml_dtypes.
        let mut numpy_ok = false;
        let ours_np = convert::convert_to_vec_with(Semantics::NumPy, src, &input, dst).unwrap();
        match case.get("numpy").filter(|v| !v.is_null()) {
            None => tally.unreferenced.push(format!(
                "{label} (NumPy): {}",
                case["numpy_error"].as_str().unwrap()
            )),
            Some(want) => {
                let bad = mismatches(&ours_np, &recorded(want), ds);
                *tally.pairs.entry("numpy").or_default() += 1;
                *tally.conversions.entry("numpy").or_default() += n;
                numpy_ok = bad.is_empty();
                if !bad.is_empty() {
                    tally.failures.push(fail(&label, "NumPy", &bad, &input, ss));
                }
            }
        }
        // JAX.
        let Some(j) = case.get("jax").filter(|v| !v.is_null()) else {
            tally.unreferenced.push(format!(
                "{label} (JAX): {}",
                case["jax_error"].as_str().unwrap_or("")
            ));
            continue;
        };
        let ours = convert::convert_to_vec_with(Semantics::Jax, src, &input[..canonical * ss], dst)
            .unwrap();
        let want = if j.as_str() == Some("same") || j.get("patch").is_some() {
            // Relative to NumPy's result, which is ours when the NumPy check passed.
            if !numpy_ok {
                tally.failures.push(format!(
                    "{label} (JAX): stored against a NumPy result we miss"
                ));
                continue;
            }
            let mut w = ours_np[..canonical * ds].to_vec();
            for p in j
                .get("patch")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let i = p[0].as_u64().unwrap() as usize;
                w[i * ds..(i + 1) * ds].copy_from_slice(&unhex(p[1].as_str().unwrap()));
            }
            Recorded::Full(w)
        } else {
            recorded(j)
        };
        if let Some(d) = case.get("jax_diff").and_then(Value::as_u64)
            && d > 0
        {
            *tally.jax_differs.entry(label.clone()).or_default() += d as usize;
        }
        *tally.pairs.entry("jax").or_default() += 1;
        *tally.conversions.entry("jax").or_default() += canonical;
        let bad = mismatches(&ours, &want, ds);
        if !bad.is_empty() {
            tally.failures.push(fail(&label, "JAX", &bad, &input, ss));
        }
    }
}

fn fail(label: &str, lib: &str, bad: &[String], input: &[u8], ss: usize) -> String {
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
    format!(
        "{label} vs {lib}: {} (inputs {})",
        bad.join("; "),
        inputs.join(" ")
    )
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
        "pairs checked {:?}, conversions {:?}",
        tally.pairs, tally.conversions
    );
    eprintln!("JAX differs from NumPy (elements): {:?}", tally.jax_differs);
    eprintln!(
        "pairs without a library reference: {:?}",
        tally.unreferenced
    );
    for f in tally.failures.iter().take(80) {
        eprintln!("MISMATCH {f}");
    }
    assert!(
        tally.failures.is_empty(),
        "{} pairs disagree",
        tally.failures.len()
    );
    // Every pair of the 32 dtypes other than complex32/bcomplex32 is checked against NumPy
    // unless ml_dtypes refuses it, and against JAX where XLA's CPU backend has it.
    assert!(tally.pairs["numpy"] >= 850, "{:?}", tally.pairs);
    assert!(tally.pairs["jax"] >= 700, "{:?}", tally.pairs);
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

//! The `.npy`/`.npz` reader's limits (`npy`'s module documentation, issue 25): every
//! truncation of every file NumPy wrote, headers that lie about the data's size, huge shapes,
//! too many dimensions, zip bombs (members sharing data, members lying about their size) and
//! corrupted members are clear errors, and none allocates more than the input holds: a
//! counting allocator measures the peak each test's thread allocates while reading.

use crate::common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Cursor, Write};

use dtype_lattice::{DType, Error};
use dtype_lattice_array::{Array, npy};
use serde_json::Value;

/// The system allocator, counting the bytes each thread holds and the most it has held.
struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn grew(n: usize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get().saturating_add(n);
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn shrank(n: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get().saturating_sub(n)));
}

// SAFETY: every call is forwarded to `System` unchanged; the counters only read sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `System.alloc`, with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `System.alloc_zeroed`, with the caller's layout.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation goes there).
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `System.realloc`, with the caller's pointer, layout and size.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            shrank(layout.size());
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// `f`'s result and the most bytes this thread held at once during it, above what it held
/// before.
fn peak<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    (out, PEAK.with(Cell::get) - base)
}

const MIB: usize = 1 << 20;

/// A version 1.0 `.npy` file of this header dictionary and data.
fn npy_file(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    let header = format!("{dict}\n");
    file.extend_from_slice(&u16::try_from(header.len()).unwrap().to_le_bytes());
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(data);
    file
}

fn dict(descr: &str, shape: &str) -> String {
    format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}")
}

/// The error of reading `file`, and the peak bytes the read allocated.
fn refused(file: &[u8]) -> (Error, usize) {
    let (r, bytes) = peak(|| Array::from_npy_bytes(file));
    (r.expect_err("refused"), bytes)
}

/// Asserts the error says `what`.
fn says(e: &Error, what: &str) {
    assert!(
        e.message().contains(what),
        "{what:?} not in: {}",
        e.message()
    );
}

fn fixtures() -> Vec<Value> {
    let path = common::fixture_path("npy/index.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["cases"].as_array().unwrap().clone()
}

/// A one-member archive written by the `zip` crate: `a.npy` holding `file`.
fn archive(file: &[u8], compressed: bool) -> Vec<u8> {
    let method = if compressed {
        zip::CompressionMethod::Deflated
    } else {
        zip::CompressionMethod::Stored
    };
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(method)
        .compression_level(compressed.then_some(9));
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    z.start_file("a.npy", options).unwrap();
    z.write_all(file).unwrap();
    z.finish().unwrap().into_inner()
}

fn u16_at(b: &[u8], i: usize) -> usize {
    usize::from(u16::from_le_bytes([b[i], b[i + 1]]))
}

fn u32_at(b: &[u8], i: usize) -> usize {
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap()) as usize
}

/// Offsets of the local header, the central directory entry and the end record of a
/// one-member archive.
fn records(zip: &[u8]) -> (usize, usize, usize) {
    let find = |sig: &[u8]| zip.windows(4).rposition(|w| w == sig).unwrap();
    (0, find(b"PK\x01\x02"), find(b"PK\x05\x06"))
}

#[test]
fn every_truncation_of_every_file_numpy_wrote_is_an_error() {
    let mut prefixes = 0;
    for case in fixtures() {
        let name = case["file"].as_str().unwrap();
        let bytes = std::fs::read(common::fixture_path(&format!("npy/{name}"))).unwrap();
        if case["refused"].as_bool() == Some(true) {
            continue;
        }
        let dtype = case["dtype"].as_str().and_then(|d| d.parse::<DType>().ok());
        for n in 0..bytes.len() {
            let prefix = &bytes[..n];
            let e = match dtype {
                None => npy::read_npz_with(Cursor::new(prefix), |m| {
                    (m == "bf").then_some(DType::BFloat16)
                })
                .unwrap_err(),
                Some(d) => {
                    assert!(Array::from_npy_bytes(prefix).is_err(), "{name}[..{n}]");
                    npy::read_as(&mut &prefix[..], d).unwrap_err()
                }
            };
            let m = e.message();
            assert!(
                ["truncated", "shorter than its magic", "npz archive"]
                    .iter()
                    .any(|w| m.contains(w)),
                "{name}[..{n}]: {m}"
            );
            prefixes += 1;
        }
    }
    assert!(prefixes > 5000, "{prefixes}");
}

#[test]
fn a_header_claiming_more_data_than_the_file_holds_allocates_only_what_is_there() {
    // 2 GiB claimed (exactly npy::MAX_BYTES), 64 bytes there.
    let file = npy_file(&dict("'<f8'", "(268435456,)"), &[0; 64]);
    let (e, bytes) = refused(&file);
    says(&e, "truncated data: expected 2147483648 bytes, got 64");
    assert!(bytes < MIB, "{bytes} bytes allocated");
    // A small lie: 1000 elements, two there.
    let (e, _) = refused(&npy_file(&dict("'<i4'", "(10, 100)"), &[1; 8]));
    says(&e, "truncated data: expected 4000 bytes, got 8");
    // Inside an archive: a member declaring 2 GiB is refused before it is read (an archive
    // of 248 bytes decompresses to at most 1032 times that, 76 of them its header)...
    let claim = |zip: &mut Vec<u8>, size: usize| {
        let (_, cd, _) = records(zip);
        let size = u32::try_from(size).unwrap().to_le_bytes();
        zip[22..26].copy_from_slice(&size);
        zip[cd + 24..cd + 28].copy_from_slice(&size);
    };
    let mut zip = archive(&file, false);
    claim(&mut zip, file.len() - 64 + (1 << 31));
    let (r, bytes) = peak(|| npy::read_npz(Cursor::new(&zip)));
    says(
        &r.unwrap_err(),
        "member a.npy: its header's shape (268435456,) needs 2147483648 bytes, more than the \
         255860 bytes left of what an archive of 248 bytes may decompress to (255936 bytes",
    );
    assert!(bytes < MIB, "{bytes} bytes allocated");
    // ... and one claiming what the allowance holds ends first.
    let file = npy_file(&dict("'<i4'", "(10, 100)"), &[1; 8]);
    let mut zip = archive(&file, false);
    claim(&mut zip, file.len() - 8 + 4000);
    let e = npy::read_npz(Cursor::new(&zip)).unwrap_err();
    says(
        &e,
        "member a.npy: truncated data: expected 4000 bytes, got 8",
    );
}

#[test]
fn huge_shapes_are_refused_before_anything_is_allocated() {
    for (descr, shape, what) in [
        (
            "'<f4'",
            "(1152921504606846976,)",
            "larger than 2147483648 bytes",
        ),
        ("'<f8'", "(1099511627776, 1099511627776)", "larger than"),
        ("'|u1'", "(2147483649,)", "larger than"),
        ("'<c16'", "(18446744073709551615,)", "larger than"),
        // NumPy's rule: nonzero dimensions must fit even when another is 0.
        (
            "'|b1'",
            "(0, 4611686018427387904, 4611686018427387904)",
            "larger than",
        ),
        (
            "[('float0', '|V0')]",
            "(1099511627776,)",
            "of float0 is larger than",
        ),
        (
            "'<f4'",
            "(99999999999999999999999,)",
            "dimension 99999999999999999999999",
        ),
    ] {
        let (e, bytes) = refused(&npy_file(&dict(descr, shape), &[0; 16]));
        says(&e, what);
        assert!(bytes < 64 * 1024, "{shape}: {bytes} bytes allocated");
    }
    // At most 64 dimensions, as NumPy.
    let ones = |n| "1, ".repeat(n);
    let (e, _) = refused(&npy_file(&dict("'|u1'", &format!("({})", ones(65))), &[7]));
    says(&e, "shape has 65 dimensions, more than NumPy's limit (64)");
    let a = Array::from_npy_bytes(&npy_file(&dict("'|u1'", &format!("({})", ones(64))), &[7]));
    assert_eq!(a.unwrap().shape(), [1; 64]);
    // float0 holds no bytes: 2**31 elements are allowed and allocate nothing.
    let f0 = npy_file(&dict("[('float0', '|V0')]", "(2147483648,)"), &[]);
    let (a, bytes) = peak(|| Array::from_npy_bytes(&f0).unwrap());
    assert_eq!((a.dtype(), a.size()), (DType::Float0, 1 << 31));
    assert!(bytes < 64 * 1024, "{bytes} bytes allocated");
}

#[test]
fn malformed_headers_are_named() {
    for (file, what) in [
        (
            npy_file(&dict("'<U5'", "(2,)"), &[0; 40]),
            "descr '<U5' is not supported",
        ),
        (npy_file(&dict("'|O'", "(2,)"), &[0; 16]), "descr '|O'"),
        (npy_file(&dict("'<V3'", "(2,)"), &[0; 6]), "descr '<V3'"),
        (npy_file(&dict("'<q8'", "(2,)"), &[0; 16]), "descr '<q8'"),
        (
            npy_file(&dict("[('a', '<f4'), ('b', '<i4')]", "(2,)"), &[0; 16]),
            "structured dtypes are not supported",
        ),
        (
            npy_file(&(dict("'<f4'", "(1,)") + " junk"), &[0; 4]),
            "header has text after its dictionary",
        ),
        (
            npy_file("{'descr': '<f4', 'shape': (1,)}", &[0; 4]),
            "header does not contain the keys",
        ),
        (
            npy_file(&dict("'<f4'", "(1, -2)"), &[0; 4]),
            "unexpected text in header",
        ),
        (
            [&b"\x93NUMPX\x01\x00"[..], &[0; 80]].concat(),
            "wrong magic string",
        ),
        (
            [&b"\x93NUMPY\x01\x05"[..], &[0; 80]].concat(),
            "format version 1.5 is not supported",
        ),
        (
            [&b"\x93NUMPY\x04\x00"[..], &[0; 80]].concat(),
            "format version 4.0 is not supported",
        ),
        (
            [&b"\x93NUMPY\x02\x00\x11\x27\x00\x00"[..], &[b' '; 10001]].concat(),
            "header length (10001) is larger than NumPy's limit (10000)",
        ),
    ] {
        let (e, bytes) = refused(&file);
        says(&e, what);
        assert!(bytes < 64 * 1024, "{what}: {bytes} bytes allocated");
    }
}

/// An archive whose `copies` central directory entries all point at the one deflated member
/// of `zip` (named `m0000.npy`, `m0001.npy`...): the overlapping zip bomb.
fn overlapping(zip: &[u8], copies: usize) -> Vec<u8> {
    let (_, cd, end) = records(zip);
    let entry = &zip[cd..end];
    let name_len = u16_at(entry, 28);
    let tail = &entry[46 + name_len..];
    let mut out = zip[..cd].to_vec();
    for i in 0..copies {
        let name = format!("m{i:04}.npy");
        out.extend_from_slice(&entry[..28]);
        out.extend_from_slice(&u16::try_from(name.len()).unwrap().to_le_bytes());
        out.extend_from_slice(&entry[30..46]);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(tail);
    }
    let size = out.len() - cd;
    let count = u16::try_from(copies).unwrap().to_le_bytes();
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    out.extend_from_slice(&count);
    out.extend_from_slice(&count);
    out.extend_from_slice(&u32::try_from(size).unwrap().to_le_bytes());
    out.extend_from_slice(&u32::try_from(cd).unwrap().to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

#[test]
fn zip_bombs_are_refused_quickly_without_allocating_their_output() {
    // 16 MiB of zeros deflates to about 16 KiB.
    let zeros = Array::from_vec(vec![0u8; 16 * MIB]).to_npy_bytes().unwrap();
    let zip = archive(&zeros, true);
    assert!(zip.len() < 64 * 1024, "{}", zip.len());

    // 1000 entries sharing it: 16 GiB from about 70 KiB.
    let bomb = overlapping(&zip, 1000);
    let start = std::time::Instant::now();
    let (r, bytes) = peak(|| npy::read_npz(Cursor::new(&bomb)));
    says(&r.unwrap_err(), "members share compressed data");
    assert!(bytes < 4 * MIB, "{bytes} bytes allocated");
    assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
    // One such entry alone is an honest archive.
    let one = npy::read_npz(Cursor::new(overlapping(&zip, 1))).unwrap();
    assert_eq!((one[0].0.as_str(), one[0].1.size()), ("m0000", 16 * MIB));

    // The member says it decompresses to 1000 bytes; its header needs 16 MiB.
    let mut liar = zip.clone();
    let (_, cd, _) = records(&liar);
    liar[22..26].copy_from_slice(&1000u32.to_le_bytes());
    liar[cd + 24..cd + 28].copy_from_slice(&1000u32.to_le_bytes());
    let (r, bytes) = peak(|| npy::read_npz(Cursor::new(&liar)));
    says(
        &r.unwrap_err(),
        "its header's shape (16777216,) needs 16777216 bytes, more than the member's declared \
         uncompressed size (1000 bytes)",
    );
    assert!(bytes < 4 * MIB, "{bytes} bytes allocated");

    // A 16-byte array followed by 16 MiB the member does not declare: refused when the
    // output passes the declared size, without holding it.
    let mut file = Array::from_vec(vec![1u8; 16]).to_npy_bytes().unwrap();
    let declared = u32::try_from(file.len() + 100).unwrap();
    file.resize(file.len() + 16 * MIB, 0);
    let mut trailing = archive(&file, true);
    let (_, cd, _) = records(&trailing);
    trailing[22..26].copy_from_slice(&declared.to_le_bytes());
    trailing[cd + 24..cd + 28].copy_from_slice(&declared.to_le_bytes());
    let (r, bytes) = peak(|| npy::read_npz(Cursor::new(&trailing)));
    says(
        &r.unwrap_err(),
        "member a.npy: I/O error: File is larger than its declared uncompressed size",
    );
    assert!(bytes < 4 * MIB, "{bytes} bytes allocated");
}

#[test]
fn an_honest_archive_at_deflates_best_ratio_reads() {
    // zlib's best compression of zeros comes within a few percent of deflate's limit,
    // npy::MAX_NPZ_RATIO: the cap never refuses an honest archive.
    let zeros = Array::from_vec(vec![0u8; 32 * MIB]).to_npy_bytes().unwrap();
    let zip = archive(&zeros, true);
    let ratio = zeros.len() / zip.len();
    assert!(ratio > 900 && ratio < npy::MAX_NPZ_RATIO, "{ratio}");
    let arrays = npy::read_npz(Cursor::new(&zip)).unwrap();
    assert_eq!(arrays[0].1.as_bytes(), &zeros[zeros.len() - 32 * MIB..]);
}

#[test]
fn a_corrupted_member_is_an_error_not_an_array() {
    let file = Array::from_vec(vec![1.5f32, -2.0, 3.25])
        .to_npy_bytes()
        .unwrap();
    let good = archive(&file, false);
    assert_eq!(npy::read_npz(Cursor::new(&good)).unwrap().len(), 1);
    // The last data byte of the stored member (its CRC no longer matches).
    let data_end = 30 + u16_at(&good, 26) + u16_at(&good, 28) + u32_at(&good, 18);
    let mut bad = good.clone();
    bad[data_end - 1] ^= 0x40;
    let e = npy::read_npz(Cursor::new(&bad)).unwrap_err();
    says(&e, "member a.npy: I/O error");
    says(&e, "checksum");
}

#[test]
fn fortran_order_files_numpy_wrote_read_in_row_major_order() {
    let mut seen = 0;
    for case in fixtures() {
        let name = case["file"].as_str().unwrap();
        if !name.starts_with("fortran_") {
            continue;
        }
        let a = npy::load(common::fixture_path(&format!("npy/{name}"))).unwrap();
        let hex: String = a.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, case["hex"].as_str().unwrap(), "{name}");
        let shape: Vec<usize> = case["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| usize::try_from(d.as_u64().unwrap()).unwrap())
            .collect();
        assert_eq!(a.shape(), shape, "{name}");
        seen += 1;
    }
    assert_eq!(seen, 4);
}

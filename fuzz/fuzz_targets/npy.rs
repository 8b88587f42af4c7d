//! `npy`: `.npy` and `.npz` reading (`dtype_lattice_array::npy`). The first byte picks the
//! entry (bits 0-1), whether a built archive is deflated (bit 2) and the dtype given to
//! `read_as` / `read_npz_with` (bits 3-7: none, or one of `DType::ALL`); the rest is
//!
//! - 0: a whole `.npy` file, to `read` and `read_as`;
//! - 1: a header dictionary up to its first newline, then data: wrapped in a version 1.0
//!   preamble (magic and length), so that mutations reach the header parser directly;
//! - 2: a whole `.npz` archive, to `read_npz_with`;
//! - 3: a `.npy` file, stored or deflated as the member `a.npy` of an archive built here.
//!
//! Whatever is read must respect the documented limits (data no larger than the file, at
//! most `MAX_BYTES` and `MAX_NDIM`; an archive's arrays at most `MAX_NPZ_RATIO` times its
//! size) and write back to a file that reads to the same array.
#![no_main]

use std::io::{Cursor, Write};

use dtype_lattice::DType;
use dtype_lattice_array::{Array, npy};
use libfuzzer_sys::fuzz_target;

/// Data bytes per element (none for `float0`).
fn element_bytes(a: &Array) -> usize {
    let (width, words) = dtype_lattice_array::array::layout(a.dtype());
    width * words
}

/// The limits every array read respects, and the named encoding's round trip.
fn check(a: &Array, file_len: usize) {
    assert!(a.ndim() <= npy::MAX_NDIM, "{:?}", a.shape());
    let bound = a
        .shape()
        .iter()
        .try_fold(element_bytes(a).max(1), |n, &d| n.checked_mul(d.max(1)));
    assert!(
        bound.is_some_and(|b| b <= npy::MAX_BYTES),
        "shape {:?} of {} beyond MAX_BYTES",
        a.shape(),
        a.dtype()
    );
    assert_eq!(a.as_bytes().len(), a.size() * element_bytes(a));
    assert!(
        a.as_bytes().len() <= file_len,
        "more data than the file holds"
    );
    let mut file = Vec::new();
    npy::write_with(&mut file, a, npy::Encoding::Named).expect("an array read writes");
    let b = npy::read(&mut &file[..]).expect("the named encoding reads back");
    assert_eq!(
        (b.dtype(), b.shape(), b.as_bytes()),
        (a.dtype(), a.shape(), a.as_bytes())
    );
}

fn read_npy(file: &[u8], want: Option<DType>) {
    let plain = npy::read(&mut &file[..]);
    if let Ok(a) = &plain {
        check(a, file.len());
        // Given its own dtype, the same file reads to the same array.
        let again = npy::read_as(&mut &file[..], a.dtype()).expect("read_as of its dtype");
        assert_eq!(
            (again.dtype(), again.shape(), again.as_bytes()),
            (a.dtype(), a.shape(), a.as_bytes())
        );
    }
    if let Some(w) = want
        && let Ok(a) = npy::read_as(&mut &file[..], w)
    {
        assert_eq!(a.dtype(), w);
        check(&a, file.len());
    }
}

fn read_npz(archive: &[u8], want: Option<DType>) {
    if let Ok(arrays) = npy::read_npz_with(Cursor::new(archive), |_| want) {
        let total: usize = arrays.iter().map(|(_, a)| a.as_bytes().len()).sum();
        let cap = npy::MAX_BYTES.min(archive.len().saturating_mul(npy::MAX_NPZ_RATIO));
        assert!(
            total <= cap,
            "{total} bytes from a {}-byte archive",
            archive.len()
        );
        for (_, a) in &arrays {
            check(a, cap);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let want = match usize::from(sel >> 3) {
        0 => None,
        i => Some(DType::ALL[(i - 1) % DType::ALL.len()]),
    };
    match sel & 3 {
        0 => read_npy(rest, want),
        1 => {
            let cut = rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(rest.len(), |i| i + 1);
            let Ok(len) = u16::try_from(cut) else {
                return;
            };
            let mut file = b"\x93NUMPY\x01\x00".to_vec();
            file.extend_from_slice(&len.to_le_bytes());
            file.extend_from_slice(rest);
            read_npy(&file, want);
        }
        2 => read_npz(rest, want),
        _ => {
            let method = if sel & 4 != 0 {
                zip::CompressionMethod::Deflated
            } else {
                zip::CompressionMethod::Stored
            };
            let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
            let options = zip::write::SimpleFileOptions::default().compression_method(method);
            z.start_file("a.npy", options).expect("start_file");
            z.write_all(rest).expect("write");
            let archive = z.finish().expect("finish").into_inner();
            read_npz(&archive, want);
        }
    }
});

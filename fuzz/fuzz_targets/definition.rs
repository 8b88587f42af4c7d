//! Definition files (JSON or TOML lattices and tables) through `check`, `audit` and `graph`
//! of the CLI's `run`: the first byte picks the command, the rest is the file.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;

fn path() -> std::path::PathBuf {
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    dir.join(format!("dtype-lattice-fuzz-{}.def", std::process::id()))
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, file)) = data.split_first() else {
        return;
    };
    let p = path();
    std::fs::File::create(&p)
        .and_then(|mut f| f.write_all(file))
        .expect("temp file");
    let f = p.to_str().expect("UTF-8 temp path");
    let args: Vec<&str> = match which % 9 {
        0 => vec!["check", f],
        1 => vec!["check", "--json", f],
        2 => vec!["audit", "--lattice", f],
        3 => vec!["audit", "--json", "--lattice", f],
        4 => vec!["audit", "--compare", "--lattice", f],
        5 => vec!["graph", "--lattice", f],
        6 => vec!["graph", "--format", "dot", "--lattice", f],
        7 => vec!["graph", "--format", "mermaid", "--lattice", f],
        _ => vec!["audit", "--types", "int8,uint8,float16", "--lattice", f],
    };
    let mut stdin: &[u8] = b"";
    let mut out = Vec::new();
    let code = dtype_lattice_cli::run(
        std::iter::once("dtype-lattice").chain(args),
        &mut stdin,
        &mut out,
    );
    assert!((0..=2).contains(&code), "exit code {code}");
    if which % 9 == 1 && code != 2 {
        // `check --json` prints one JSON object on one line.
        let text = std::str::from_utf8(&out).expect("UTF-8 output");
        assert!(text.starts_with('{') && text.ends_with("}\n"), "{text}");
        assert_eq!(text.lines().count(), 1);
    }
});

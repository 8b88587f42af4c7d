//! `eval --batch`: stdin lines `FUNCTION OPERAND...` (arrays, weak arrays, 0-d arrays, Python
//! scalars) through the CLI's `run`, under jax (x64 on or off, strict or not) or numpy rules
//! picked by the first byte. Every line gets one JSON object; nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, input)) = data.split_first() else {
        return;
    };
    let mut args = vec!["dtype-lattice", "eval", "--batch"];
    if flags & 0x01 != 0 {
        args.extend(["--rules", "numpy"]);
    } else {
        if flags & 0x02 != 0 {
            args.push("--x64");
        }
        if flags & 0x04 != 0 {
            args.push("--strict");
        }
    }
    let mut stdin = input;
    let mut out = Vec::new();
    let code = dtype_lattice_cli::run(args, &mut stdin, &mut out);
    assert!((0..=2).contains(&code), "exit code {code}");
    let lines = if input.is_empty() {
        0
    } else {
        input
            .strip_suffix(b"\n")
            .unwrap_or(input)
            .split(|&b| b == b'\n')
            .count()
    };
    let text = String::from_utf8(out).expect("UTF-8 output");
    assert_eq!(text.lines().count(), lines, "one answer per line");
});

//! `promote --batch`: stdin lines through the CLI's `run`, under a rule set and options
//! picked by the first byte.
#![no_main]

use dtype_lattice::RuleSet;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, input)) = data.split_first() else {
        return;
    };
    let rules = RuleSet::ALL[usize::from(flags & 0x0f) % RuleSet::ALL.len()].to_string();
    let mut args = vec!["dtype-lattice", "promote", "--batch", "--rules", &rules];
    if flags & 0x10 != 0 {
        args.push("--strict");
    }
    if flags & 0x20 != 0 {
        args.push("--x64");
    }
    if flags & 0x40 != 0 {
        args.extend(["--op", "true_divide"]);
    }
    let mut stdin = input;
    let mut out = Vec::new();
    let code = dtype_lattice_cli::run(args, &mut stdin, &mut out);
    assert!((0..=2).contains(&code), "exit code {code}");
    // One JSON object per line of input.
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

//! `promote --batch`: stdin lines through the CLI's `run`, under a rule set and options
//! picked by the first byte.
#![no_main]

use dtype_lattice::{OptionName, RuleSet};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, input)) = data.split_first() else {
        return;
    };
    let all: Vec<RuleSet> = RuleSet::all().collect();
    let set = all[usize::from(flags & 0x0f) % all.len()];
    let rules = set.to_string();
    let mut args = vec!["dtype-lattice", "promote", "--batch", "--rules", &rules];
    // An option the rule set does not honour is refused before any line is read.
    let mut meaningless = false;
    if flags & 0x10 != 0 {
        args.push("--strict");
        meaningless |= !set.options().contains(&OptionName::Strict);
    }
    if flags & 0x20 != 0 {
        args.push("--x64");
        meaningless |= !set.options().contains(&OptionName::X64);
    }
    if flags & 0x40 != 0 {
        args.extend(["--op", "true_divide"]);
    }
    let mut stdin = input;
    let mut out = Vec::new();
    let code = dtype_lattice_cli::run(args, &mut stdin, &mut out);
    assert!((0..=2).contains(&code), "exit code {code}");
    if meaningless {
        // One JSON error object (batch output is JSON), and no line is read.
        let text = String::from_utf8(out).expect("UTF-8 output");
        assert_eq!(code, 2);
        assert_eq!(text.lines().count(), 1, "a meaningless option is refused up front");
        assert!(text.starts_with("{\"error\":"), "{text}");
        return;
    }
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

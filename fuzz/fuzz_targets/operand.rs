//! The operand grammar: `DType`, `Value` and `Operand` parsing (key dtypes included), display round
//! trips, then promotion of the parsed operands under every rule set and option.
#![no_main]

use dtype_lattice::operand::parse_list;
use dtype_lattice::{DType, Op, Operand, RuleSet, Rules, Value};
use libfuzzer_sys::fuzz_target;

/// Display and parsing alternate between at most two forms:
/// `show(parse(show(parse(show(x))))) == show(x)` (as in Python, where `repr(-1j)` is
/// `(-0-1j)`, the literal `(-0-1j)` is `0 - 1j`, and its repr `-1j` again).
fn round_trip<T: std::str::FromStr + std::fmt::Display>(s: &str) -> Option<T>
where
    T::Err: std::fmt::Display,
{
    let x: T = s.parse().ok()?;
    let shown = x.to_string();
    let parse = |t: &str| -> T {
        t.parse()
            .unwrap_or_else(|e| panic!("{s:?} displays as {t:?}, which does not parse: {e}"))
    };
    let again = parse(&shown).to_string();
    assert_eq!(parse(&again).to_string(), shown, "display of {s:?} is not stable");
    Some(x)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The first byte picks options; the rest is operands, whitespace- or comma-separated.
    let (flags, text) = match text.char_indices().nth(1) {
        Some((i, _)) => (text.as_bytes()[0], &text[i..]),
        None => (0, text),
    };
    let mut operands: Vec<Operand> = Vec::new();
    for (k, tok) in text.split_whitespace().take(4).enumerate() {
        // Each grammar on the first tokens (a failed parse ranks suggestions: slow).
        if k < 2 {
            let _ = round_trip::<DType>(tok);
            let _ = round_trip::<Value>(tok);
        }
        if let Some(o) = round_trip::<Operand>(tok) {
            operands.push(o);
        }
    }
    let _ = parse_list(text);
    let op = match flags % 11 {
        0 => None,
        k => Some(Op::ALL[usize::from(k - 1)]),
    };
    for set in RuleSet::all() {
        let rules = Rules::new(set)
            .strict(flags & 0x40 != 0)
            .x64(flags & 0x80 != 0);
        let _ = rules.evaluate(op, &operands);
        let _ = rules.promoted(&operands);
        if let [a, b] = operands[..] {
            let _ = rules.evaluate(op, &[b, a]);
            let _ = rules.promote_types(a.dtype().unwrap_or(DType::Int8), b.dtype().unwrap_or(DType::Bool));
        }
    }
});

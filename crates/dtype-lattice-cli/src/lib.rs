//! The `dtype-lattice` command line: parsing and rendering only; the rules live in the
//! library. Argument parsing (clap derive) and dispatch. Exit codes: 0 an answer, 1 a refusal (the
//! rules say no), 2 unusable input.
//!
//! **Internal.** This library exists so that the binary (`src/main.rs`) and the fuzz targets
//! (`fuzz/`) run the very same code through [`run`]; it is not a public API and may change
//! in any release. Use the `dtype-lattice` crate for the rules themselves.

#![forbid(unsafe_code)]
#![doc(hidden)]

mod eval;
mod jaxpr;
mod random;
mod render;
mod report;
mod toolkit;

use std::ffi::OsString;
use std::io::{self, BufRead, BufWriter, Write};
use std::path::PathBuf;

use clap::builder::TypedValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};
use dtype_lattice::error::Reason;
use dtype_lattice::operand::parse_list;
use dtype_lattice::table::{JAX_DOC_TYPES, Table};
use dtype_lattice::{DType, Error, Op, Operand, OptionName, Promotion, RuleSet, Rules};

/// What dtype does `a + b` produce? JAX's lattice-based type promotion, explained.
#[derive(Parser, Debug)]
#[command(name = "dtype-lattice", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the result dtype of promoting the operands.
    ///
    /// OPERAND: `int8` a strongly typed array; `~int8` a weakly typed array; `int8(3)` a
    /// zero-dimensional array holding 3; `int`, `float`, `complex` Python scalar types; Python
    /// literals as repr() prints them: `3`, `-200`, `2.5`, `1e+40`, `inf`, `nan`, `1j`,
    /// `(1e+40+1j)`, `True`.
    #[command(allow_negative_numbers = true)]
    Promote {
        #[command(flatten)]
        rules: RuleArgs,
        /// Print one JSON object: {"dtype", "weak_type"} or {"error": {"kind", "message"}}.
        #[arg(long)]
        json: bool,
        /// Read operand lists from stdin, one per line (whitespace-separated); write one JSON
        /// object per line, in order.
        #[arg(long, conflicts_with = "operands")]
        batch: bool,
        /// The operands.
        #[arg(value_name = "OPERAND")]
        operands: Vec<String>,
    },
    /// Print a promotion table: cell (i, j) promotes row operand i with column operand j.
    Table {
        #[command(flatten)]
        rules: RuleArgs,
        /// Comma-separated operands for the rows and columns [default: the 18 types of JAX's
        /// documentation table].
        #[arg(long, value_name = "OPERANDS", allow_hyphen_values = true)]
        types: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Short names (`i4`, `f*`) as in JAX's documentation, or long names (`int32`).
        #[arg(long, value_enum, default_value_t = Names::Short)]
        names: Names,
        /// Mark the cells where another rule set (same options and op) answers differently.
        #[arg(long, value_name = "B", value_parser = parse_rules)]
        diff: Option<RuleSet>,
    },
    /// Check a lattice or promotion-table file: is it a lattice? Exit 0 yes, 1 no, 2 unusable.
    ///
    /// FILE is JSON or TOML: {"edges": {"node": ["nodes directly above", ...]}} (TOML: an
    /// [edges] table) or {"table": {"a": {"b": "result", ...}}}. Names are free strings;
    /// dtype names and int/float/complex have their numeric meaning.
    Check {
        /// The definition file.
        file: PathBuf,
        /// Print the verdict as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Audit a rule set (or a lattice file) against the design note's criteria:
    /// commutativity, associativity, component loss, overflow, magnitude loss, precision loss,
    /// widening.
    Audit {
        #[command(flatten)]
        rules: RuleArgs,
        /// Audit this lattice or table file instead; with --compare, add it as a row (repeat
        /// for several).
        #[arg(long = "lattice", value_name = "FILE")]
        lattices: Vec<PathBuf>,
        /// Comma-separated dtypes to audit [default: all the rule set's dtypes; with
        /// --compare, the 15 dtypes of JAX's tables].
        #[arg(long, value_name = "DTYPES")]
        types: Option<String>,
        /// One table of the counts for every rule set side by side.
        #[arg(long)]
        compare: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Print --compare's table as Markdown.
        #[arg(long, conflicts_with = "json")]
        markdown: bool,
    },
    /// Draw the Hasse diagram of a rule set's lattice or of a lattice file.
    Graph {
        #[command(flatten)]
        rules: RuleArgs,
        /// Draw this lattice (or lattice-representable table) file instead.
        #[arg(long, value_name = "FILE")]
        lattice: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = GraphFormat::Svg)]
        format: GraphFormat,
        /// Mark the paths from A and B up to their join.
        #[arg(long, value_name = "A,B")]
        highlight: Option<String>,
        /// Long names (`int8`, `float`) or the short names of JAX's documentation (`i1`, `f*`).
        #[arg(long, value_enum, default_value_t = Names::Long)]
        names: Names,
        /// Write to FILE instead of stdout.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Write one self-contained HTML page: every rule set's table (cells that differ from the
    /// base highlighted), the lattice drawings, the audit comparison, the design note's
    /// lattices checked.
    Report {
        /// The page to write.
        #[arg(short, long, value_name = "FILE.html")]
        output: PathBuf,
        /// The rule set the tables are compared with.
        #[arg(long, value_name = "R", default_value = "numpy", value_parser = parse_rules)]
        base: RuleSet,
        /// 64-bit mode (jax_enable_x64=True), as the design note's tables.
        #[arg(long)]
        x64: bool,
    },
    /// JAX's PRNG with typed keys (threefry2x32, key<fry>), bit for bit: key, split, fold-in,
    /// bits, uniform, normal, randint, bernoulli.
    Random(Box<random::RandomArgs>),
    /// Evaluate a jax.numpy function on literal arrays, exactly as JAX computes it:
    /// `eval add 'bfloat16[1.5,2]' 2.0`. OPERAND: `DTYPE[v,...]` (nested brackets for more
    /// dimensions), `~DTYPE[...]` weakly typed, `DTYPE(v)` 0-d, or a Python scalar (weak).
    #[command(allow_negative_numbers = true)]
    Eval(Box<eval::EvalArgs>),
    /// Read a jaxpr as JAX prints it (`print(jax.make_jaxpr(f)(*args))`) and run it, under
    /// transformations: `jaxpr f.txt --args in.npz --apply grad --json`.
    Jaxpr(Box<jaxpr::JaxprArgs>),
}

/// Graph output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum GraphFormat {
    Svg,
    Dot,
    Mermaid,
}

#[derive(Args, Debug)]
pub(crate) struct RuleArgs {
    /// The rule set (the registry's names; aliases are accepted too).
    #[arg(long, value_name = "R", default_value = "jax", value_parser = RuleSetParser)]
    rules: RuleSet,
    /// Strict promotion (jax_numpy_dtype_promotion='strict').
    #[arg(long)]
    strict: bool,
    /// 64-bit mode (jax_enable_x64=True).
    #[arg(long)]
    x64: bool,
    /// The library's default float where it can be changed (torch.set_default_dtype).
    #[arg(long, value_name = "DTYPE", value_parser = parse_dtype)]
    default_float: Option<DType>,
    /// The operation: add, subtract, multiply, true_divide, floor_divide, power, equal, less,
    /// logical_and, bitwise_and [default: plain promotion].
    #[arg(long, value_name = "OP", value_parser = parse_op)]
    op: Option<Op>,
}

impl RuleArgs {
    /// Refuses options that mean nothing for the rule set (unusable input, exit 2), and a
    /// default float the library refuses (`torch.set_default_dtype(torch.int8)`: exit 1).
    pub(crate) fn check(&self) -> Result<(), Error> {
        let set = self.rules;
        let invalid = |argument: &str, reason: String| -> Error {
            Reason::InvalidArgument {
                argument: argument.to_string(),
                reason,
            }
            .into()
        };
        // What each option is, and what a rule set that does not honour it lacks.
        let options = [
            (
                self.strict,
                OptionName::Strict,
                "jax_numpy_dtype_promotion='strict'",
                " has no strict mode",
            ),
            (
                self.x64,
                OptionName::X64,
                "jax_enable_x64",
                " has no x64 mode",
            ),
            (
                self.default_float.is_some(),
                OptionName::DefaultFloat,
                "torch.set_default_dtype",
                "'s default float is fixed",
            ),
        ];
        for (given, option, what, lacks) in options {
            if given && !set.options().contains(&option) {
                let honour: Vec<&str> = RuleSet::all()
                    .filter(|r| r.options().contains(&option))
                    .map(RuleSet::name)
                    .collect();
                return Err(invalid(
                    &format!("--{}", option.name()),
                    format!(
                        "{what} applies to --rules {} only; {set}{lacks}",
                        honour.join(" and ")
                    ),
                ));
            }
        }
        if self.default_float.is_some() {
            // A lone Python float takes the default float: the library's own refusal of it.
            self.rules()
                .result_type(&[dtype_lattice::Operand::PyType(dtype_lattice::PyType::Float)])?;
        }
        Ok(())
    }

    pub(crate) fn rules(&self) -> Rules {
        self.rules_for(self.rules)
    }

    pub(crate) fn rules_for(&self, set: RuleSet) -> Rules {
        let r = Rules::new(set).strict(self.strict).x64(self.x64);
        match self.default_float {
            Some(d) => r.default_float(d),
            None => r,
        }
    }
}

fn parse_rules(s: &str) -> Result<RuleSet, String> {
    s.parse().map_err(|e: Error| e.to_string())
}

/// Parses `--rules` with the library's own message for unknown names, and lists the
/// registry's rule sets (with their aliases) in `--help`.
#[derive(Clone, Copy, Debug)]
struct RuleSetParser;

impl TypedValueParser for RuleSetParser {
    type Value = RuleSet;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<RuleSet, clap::Error> {
        parse_rules.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(RuleSet::all().map(|r| {
            clap::builder::PossibleValue::new(r.name())
                .aliases(r.names()[1..].iter().copied())
                .help(r.summary())
        })))
    }
}
fn parse_op(s: &str) -> Result<Op, String> {
    s.parse().map_err(|e: Error| e.to_string())
}

fn parse_dtype(s: &str) -> Result<DType, String> {
    s.parse().map_err(|e: Error| e.to_string())
}

/// Table output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Text,
    Markdown,
    Csv,
    Json,
    Html,
}

/// Name styles for tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Names {
    Long,
    Short,
}

/// Parses the command line `args` (the program name first) and runs it, reading `stdin`
/// (`promote --batch`) and writing `stdout`; errors go to the process's stderr. Returns the
/// exit code: 0 an answer, 1 a refusal, 2 unusable input.
pub fn run(
    args: impl IntoIterator<Item = impl Into<OsString>>,
    stdin: &mut dyn BufRead,
    stdout: &mut dyn Write,
) -> i32 {
    let args: Vec<OsString> = args
        .into_iter()
        .map(|a| protect_negative_literal(a.into()))
        .collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let mut out = BufWriter::new(stdout);
    let code = match cli.command {
        Command::Promote {
            rules, batch: true, ..
        } => {
            // Batch output is JSON lines with or without --json.
            match rules.check() {
                Ok(()) => batch(rules.rules(), rules.op, stdin, &mut out),
                Err(e) => render::fail(&mut out, &e, true),
            }
        }
        Command::Promote {
            rules,
            json,
            operands,
            ..
        } => match rules.check() {
            Ok(()) => promote(rules.rules(), rules.op, &operands, json, &mut out),
            Err(e) => render::fail(&mut out, &e, json),
        },
        Command::Table {
            rules,
            types,
            format,
            names,
            diff,
        } => table(&rules, types.as_deref(), format, names, diff, &mut out),
        Command::Check { file, json } => io_code(toolkit::check_cmd(&file, json, &mut out)),
        Command::Audit {
            rules,
            lattices,
            types,
            compare,
            json,
            markdown,
        } => {
            let types = match types.as_deref().map(parse_dtypes).transpose() {
                Ok(t) => t,
                Err(e) => return render::fail(&mut out, &e, json),
            };
            if markdown && !compare {
                let e = Reason::InvalidArgument {
                    argument: "--markdown".into(),
                    reason: "it formats --compare's table; give --compare too".into(),
                }
                .into();
                return render::fail(&mut out, &e, false);
            }
            // After the subcommand: `--rules` given (also as `--rules=R`), whatever its value.
            let rules_given = args.iter().skip(1).any(|a| {
                a.to_str()
                    .is_some_and(|a| a == "--rules" || a.starts_with("--rules="))
            });
            io_code(toolkit::audit_cmd(
                toolkit::AuditArgs {
                    rules: &rules,
                    rules_given,
                    lattices: &lattices,
                    types,
                    compare,
                    json,
                    markdown,
                },
                &mut out,
            ))
        }
        Command::Graph {
            rules,
            lattice,
            format,
            highlight,
            names,
            output,
        } => {
            if let Some(op) = rules.op {
                let e = Reason::InvalidArgument {
                    argument: "--op".into(),
                    reason: format!(
                        "graph draws the promotion lattice, which no op changes; `dtype-lattice table --op {op}` shows the op"
                    ),
                }
                .into();
                return render::fail(&mut out, &e, false);
            }
            if let Err(e) = rules.check() {
                return render::fail(&mut out, &e, false);
            }
            io_code(toolkit::graph_cmd(
                &rules,
                lattice.as_deref(),
                format,
                names,
                highlight.as_deref(),
                output.as_deref(),
                &mut out,
            ))
        }
        Command::Report { output, base, x64 } => report::write(&output, base, x64),
        Command::Random(args) => random::run(&args, &mut out),
        Command::Eval(args) => eval::run(&args, stdin, &mut out),
        Command::Jaxpr(args) => jaxpr::run(&args, stdin, &mut out),
    };
    match out.flush() {
        Ok(()) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => code,
        Err(e) => {
            eprintln!("error: cannot write output: {e}");
            2
        }
    }
}

/// An exit code from a command that writes output; a broken pipe is not an error.
fn io_code(r: io::Result<i32>) -> i32 {
    match r {
        Ok(code) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("error: cannot write output: {e}");
            2
        }
    }
}

/// Comma-separated dtype names.
fn parse_dtypes(s: &str) -> Result<Vec<DType>, Error> {
    let v = s
        .split(',')
        .map(|t| t.trim().parse())
        .collect::<Result<Vec<DType>, Error>>()?;
    Ok(v)
}

/// Stands in for a leading `-` of a negative literal while clap parses, so that `-200`,
/// `-2.5`, `-inf` or `-1j` are operands and not flags; [`unprotect`] restores it.
const MINUS: char = '\u{2212}';

fn protect_negative_literal(arg: std::ffi::OsString) -> std::ffi::OsString {
    let Some(s) = arg.to_str() else { return arg };
    let Some(rest) = s.strip_prefix('-') else {
        return arg;
    };
    if rest.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        || rest.starts_with("inf")
        || rest.starts_with("nan")
    {
        format!("{MINUS}{rest}").into()
    } else {
        arg
    }
}

fn unprotect(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains(MINUS) {
        s.replace(MINUS, "-").into()
    } else {
        s.into()
    }
}

fn answer(rules: Rules, op: Option<Op>, operands: &[Operand]) -> Result<Promotion, Error> {
    if operands.is_empty() {
        return Err(Reason::EmptyOperands.into());
    }
    rules.evaluate(op, operands)
}

fn promote(rules: Rules, op: Option<Op>, args: &[String], json: bool, out: &mut impl Write) -> i32 {
    let result = args
        .iter()
        .map(|a| unprotect(a).parse::<Operand>())
        .collect::<Result<Vec<_>, _>>()
        .and_then(|ops| answer(rules, op, &ops));
    let written = if json {
        render::write_json_line(out, &result)
    } else {
        match &result {
            Ok(p) => writeln!(out, "{p}"),
            Err(e) => {
                eprintln!("error: {}", render::error_line(e));
                Ok(())
            }
        }
    };
    if let Err(e) = written
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("error: cannot write output: {e}");
        return 2;
    }
    result.map_or_else(|e| render::exit_code(&e), |_| 0)
}

/// The longest line `promote --batch` reads; a longer line is answered with an error object
/// (`InvalidArgument`, exit code 2) and skipped without being buffered.
pub const MAX_BATCH_LINE: usize = 1 << 20;

/// Reads the next line (without its `\n`) into `line`, holding at most [`MAX_BATCH_LINE`]
/// bytes; `Ok(None)` at the end of input, `Ok(Some(false))` for a line too long (the rest of
/// it skipped), `Ok(Some(true))` otherwise.
fn next_line(input: &mut dyn BufRead, line: &mut Vec<u8>) -> io::Result<Option<bool>> {
    line.clear();
    let (mut any, mut fits) = (false, true);
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(any.then_some(fits));
        }
        any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1),
            None => (buf, buf.len()),
        };
        if fits && line.len() + chunk.len() <= MAX_BATCH_LINE {
            line.extend_from_slice(chunk);
        } else {
            fits = false;
            line.clear();
        }
        let end = done > chunk.len();
        input.consume(done);
        if end {
            return Ok(Some(fits));
        }
    }
}

/// `--batch`: one JSON object per stdin line; exit code is the worst line's.
fn batch(rules: Rules, op: Option<Op>, input: &mut dyn BufRead, out: &mut impl Write) -> i32 {
    let mut worst = 0;
    let mut ops: Vec<Operand> = Vec::with_capacity(8);
    let mut raw = Vec::new();
    loop {
        let fits = match next_line(input, &mut raw) {
            Ok(Some(fits)) => fits,
            Ok(None) => break,
            Err(e) => {
                eprintln!("error: cannot read stdin: {e}");
                return 2;
            }
        };
        let raw = raw.strip_suffix(b"\r").unwrap_or(&raw);
        ops.clear();
        let result = if !fits {
            Err(Reason::InvalidArgument {
                argument: "line".into(),
                reason: format!(
                    "longer than {} MiB; --batch reads lines of at most {MAX_BATCH_LINE} bytes",
                    MAX_BATCH_LINE >> 20
                ),
            }
            .into())
        } else {
            match std::str::from_utf8(raw) {
                Err(e) => Err(Reason::MalformedOperand {
                    operand: String::from_utf8_lossy(raw).into_owned(),
                    reason: format!("invalid UTF-8 ({e})"),
                }
                .into()),
                Ok(line) => line
                    .split_whitespace()
                    .try_for_each(|tok| tok.parse().map(|op| ops.push(op)))
                    .and_then(|()| answer(rules, op, &ops)),
            }
        };
        if let Err(e) = &result {
            worst = worst.max(render::exit_code(e));
        }
        if let Err(e) = render::write_json_line(out, &result) {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return worst;
            }
            eprintln!("error: cannot write output: {e}");
            return 2;
        }
    }
    worst
}

fn table(
    args: &RuleArgs,
    types: Option<&str>,
    format: Format,
    names: Names,
    diff: Option<RuleSet>,
    out: &mut impl Write,
) -> i32 {
    let json = format == Format::Json;
    if let Err(e) = args.check() {
        return render::fail(out, &e, json);
    }
    let types = match types {
        None => JAX_DOC_TYPES.to_vec(),
        Some(list) => match parse_list(&unprotect(list)) {
            Ok(t) if t.len() > dtype_lattice::table::MAX_TYPES => {
                let e = Reason::InvalidArgument {
                    argument: "--types".into(),
                    reason: format!(
                        "it lists {} operands; a table takes at most {}",
                        t.len(),
                        dtype_lattice::table::MAX_TYPES
                    ),
                }
                .into();
                return render::fail(out, &e, json);
            }
            Ok(t) if !t.is_empty() => t,
            Ok(_) => return render::fail(out, &Reason::EmptyOperands.into(), json),
            Err(e) => return render::fail(out, &e, json),
        },
    };
    let t = Table::compute(args.rules(), args.op, &types);
    let base = diff.map(|set| Table::compute(args.rules_for(set), args.op, &types));
    match render::table(out, &t, base.as_ref(), format, names) {
        Ok(()) => 0,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("error: cannot write output: {e}");
            2
        }
    }
}

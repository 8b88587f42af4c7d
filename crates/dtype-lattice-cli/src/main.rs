//! The `dtype-lattice` binary: everything lives in the (internal) library crate.

#![forbid(unsafe_code)]

fn main() {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    std::process::exit(dtype_lattice_cli::run(
        std::env::args_os(),
        &mut stdin.lock(),
        &mut stdout.lock(),
    ));
}

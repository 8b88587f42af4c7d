//! The `dtype-lattice` command line: parsing and rendering only; the rules live in the library.
#![forbid(unsafe_code)]

mod cli;

fn main() {
    std::process::exit(cli::run());
}

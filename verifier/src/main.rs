//! `safety-dongle-verifier`: the process that will show verification codes and
//! approval requests to a human, outside the agent's reach.
//!
//! For now it only answers `--version`; any other invocation is a usage error
//! (exit 2), so a dongle that spawns it by mistake fails closed.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag] if flag == "--version" || flag == "-V" => {
            println!("safety-dongle-verifier {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: safety-dongle-verifier --version");
            ExitCode::from(2)
        }
    }
}

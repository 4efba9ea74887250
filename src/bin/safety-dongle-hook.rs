//! `safety-dongle-hook`: the hook's front, `safety-dongle hook HARNESS`
//! for a warm judge without the full binary's start-up (`cli::front`).

fn main() -> std::process::ExitCode {
    safety_dongle::cli::run_front()
}

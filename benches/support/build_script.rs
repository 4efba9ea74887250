//! The 64 KiB shell script the benches judge as a planted write: an
//! ordinary build script, a command a line (the worst case of a file that
//! runs later: every line is analysed). One definition, so the hook
//! bench's `Write` and the evaluate bench's analysis measure the same text.

/// The script: a shebang, `set -eu`, then `cargo build` lines up to 64 KiB
/// (whole lines only).
pub fn sixty_four_kib() -> String {
    let mut script = String::from("#!/bin/sh\nset -eu\n");
    for index in 0.. {
        let line = format!("cargo build --release -p crate_{index} --target-dir target/{index}\n");
        if script.len() + line.len() > 64 * 1024 {
            break;
        }
        script.push_str(&line);
    }
    script
}

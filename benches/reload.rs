//! Live reload through the release binary over stdio: the default policy
//! (the shipped `policies/default.toml`) is rewritten in place, and the
//! time is taken from the moment the write returns to the first
//! introspection answer that names the new policy's hash, polled back to
//! back on the open session. It includes the watcher's quiet period, the
//! new text's check and compilation, and the swap.
//!
//! Run with `cargo bench --bench reload`; the figure goes to docs/BENCHMARKS.md.

// A bench is a harness: it stops on what it did not expect, like a test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::string_slice, clippy::unreachable)]

#[path = "support/envelope.rs"]
mod envelope;
#[path = "support/peer.rs"]
mod peer;

use std::{
    process::Command,
    time::{Duration, Instant},
};

use peer::Peer;

const RELOADS: usize = 60;
const DEADLINE: Duration = Duration::from_secs(5);

/// The hash of the policy in force, from `_protocol.safety_loop.policy`.
fn policy_in_force(dongle: &mut Peer, id: usize) -> String {
    let answer = dongle.request(id, r#""method":"tools/call","params":{"name":"mcp_aql_read","arguments":{"operation":"introspect","params":{"query":"operations","source":"builtin","first":1,"fields":["name"]}}}"#);
    let body = envelope::of(&answer);
    body["data"]["_protocol"]["safety_loop"]["policy"]
        .as_str()
        .unwrap_or_else(|| panic!("no policy hash: {body}"))
        .to_owned()
}

fn main() {
    let default = include_str!("../policies/default.toml");
    let data = tempfile::Builder::new()
        .prefix("reload-bench-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap_or_else(|e| panic!("temp dir: {e}"));
    let policy = data.path().join("default.toml");
    std::fs::write(&policy, default).unwrap_or_else(|e| panic!("{e}"));
    let mut dongle = Peer::spawn(
        Command::new(env!("CARGO_BIN_EXE_safety-dongle"))
            .args(["serve", "--data-dir"])
            .arg(data.path())
            .arg("--policy")
            .arg(&policy)
            .env("SAFETY_DONGLE_LOG", "warn"),
    );
    let mut id = 1;
    let mut hash = policy_in_force(&mut dongle, id);
    let mut times = Vec::with_capacity(RELOADS);
    for revision in 0..RELOADS {
        // Let the watcher settle, as between two edits by a person.
        std::thread::sleep(Duration::from_millis(100));
        std::fs::write(&policy, format!("{default}\n# revision {revision}\n"))
            .unwrap_or_else(|e| panic!("{e}"));
        let written = Instant::now();
        loop {
            id += 1;
            let now = policy_in_force(&mut dongle, id);
            if now != hash {
                times.push(written.elapsed());
                hash = now;
                break;
            }
            assert!(written.elapsed() < DEADLINE, "revision {revision} was never put in force");
        }
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let at = |p: f64| ms(times[((times.len() - 1) as f64 * p).round() as usize]);
    println!(
        "reload of the default policy, file written -> new hash in force ({RELOADS} edits): median {:.1} ms, p90 {:.1} ms, max {:.1} ms (target <= 50 ms)",
        at(0.5),
        at(0.9),
        at(1.0)
    );
}

//! Proxying through the release binary over stdio, against the reference
//! servers of `tests/downstream` (installed on first use):
//!
//! - proxy overhead: `echo` of `server-everything` called directly versus
//!   `everything__echo` through the dongle (validation, gate with its audit
//!   rows, forwarding), one call at a time, each answer awaited;
//! - token economy: the `tools/list` bytes an agent sees with
//!   `server-everything` and `server-filesystem` connected directly versus
//!   behind the dongle.
//!
//! Run with `cargo bench --bench proxy`; against the code before a change,
//! `bash benches/against-before.sh REV proxy` (see `support/builds.rs`): each
//! build fronts the same two servers, and the calls alternate in rounds.

// A bench is a harness: it stops on what it did not expect, like a test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::string_slice, clippy::unreachable)]

#[path = "support/builds.rs"]
mod builds;
#[path = "support/peer.rs"]
mod peer;

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use peer::Peer;

const CALLS: usize = 2_000;
const WARMUP: usize = 200;
/// Calls a peer answers before the next one's turn.
const ROUND: usize = 100;

fn tools_list_bytes(peer: &mut Peer) -> usize {
    let answer: serde_json::Value =
        serde_json::from_str(&peer.request(1, r#""method":"tools/list""#))
            .unwrap_or_else(|e| panic!("{e}"));
    answer["result"]["tools"].to_string().len()
}

fn downstream_bin() -> PathBuf {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/downstream");
    let status = Command::new("bash")
        .arg(folder.join("install.sh"))
        .status()
        .unwrap_or_else(|e| panic!("install: {e}"));
    assert!(status.success(), "installing the reference servers failed");
    folder.join("node_modules/.bin")
}

/// Each peer's calls of `body(peer, i)`, in rounds of [`ROUND`], one
/// peer's round after the other's; sorted times per peer.
fn timed(
    peers: &mut [&mut Peer],
    body: impl Fn(usize, usize) -> String,
    expect: &str,
) -> Vec<Vec<Duration>> {
    for (which, peer) in peers.iter_mut().enumerate() {
        for i in 0..WARMUP {
            assert!(
                peer.request(10 + i, &body(which, i)).contains(expect),
                "warm-up call answered"
            );
        }
    }
    let mut times = vec![Vec::with_capacity(CALLS); peers.len()];
    for round in 0..CALLS / ROUND {
        for ((which, peer), times) in peers.iter_mut().enumerate().zip(&mut times) {
            for i in round * ROUND..(round + 1) * ROUND {
                let start = Instant::now();
                let answer = peer.request(100_000 + i, &body(which, i));
                times.push(start.elapsed());
                assert!(answer.contains(expect), "call answered: {answer}");
            }
        }
    }
    times.iter_mut().for_each(|times| times.sort());
    times
}

fn main() {
    let bin = downstream_bin();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let state = tempfile::Builder::new()
        .prefix("proxy-bench-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap_or_else(|e| panic!("{e}"));
    let files = state.path().join("files");
    std::fs::create_dir_all(&files).unwrap_or_else(|e| panic!("{e}"));

    let mut everything =
        Peer::spawn(Command::new(bin.join("mcp-server-everything")).env("PATH", &path));
    let mut filesystem =
        Peer::spawn(Command::new(bin.join("mcp-server-filesystem")).arg(&files).env("PATH", &path));
    let direct_bytes = tools_list_bytes(&mut everything) + tools_list_bytes(&mut filesystem);
    drop(filesystem);

    // Every proxied call spends a step of the agent's budget: a limit the
    // benchmark cannot reach, so it measures calls, not pauses.
    let policy = state.path().join("default.toml");
    let text = include_str!("../policies/default.toml")
        .replace("maxAutonomousSteps = 50", "maxAutonomousSteps = 1000000");
    std::fs::write(&policy, text).unwrap_or_else(|e| panic!("{e}"));
    let builds = builds::builds();
    let mut dongles: Vec<Peer> = builds
        .iter()
        .enumerate()
        .map(|(which, build)| {
            let config = state.path().join(format!("config-{which}.toml"));
            let toml = format!(
                "data_dir = \"{data}\"\npolicies = [\"{policy}\"]\n[servers.everything]\ncommand = \"{everything}\"\nenv = {{ PATH = \"{path}\" }}\n[servers.fs]\ncommand = \"{fs}\"\nargs = [\"{files}\"]\nenv = {{ PATH = \"{path}\" }}\n",
                data = state.path().join(format!("data-{which}")).display(),
                policy = policy.display(),
                everything = bin.join("mcp-server-everything").display(),
                fs = bin.join("mcp-server-filesystem").display(),
                files = files.display(),
            );
            std::fs::write(&config, toml).unwrap_or_else(|e| panic!("{e}"));
            let mut dongle = Peer::spawn(
                Command::new(&build.binary)
                    .args(["serve", "--config"])
                    .arg(&config)
                    .env("SAFETY_DONGLE_LOG", "warn"),
            );
            let listed = dongle.request(2, r#""method":"tools/call","params":{"name":"mcp_aql_read","arguments":{"operation":"introspect","params":{"query":"operations","first":100}}}"#);
            assert!(
                listed.contains("everything__echo") && listed.contains("fs__write_file"),
                "both servers are behind the dongle"
            );
            dongle
        })
        .collect();
    // Listed once both servers are up: the descriptions name what sits behind.
    let fronted_bytes = tools_list_bytes(&mut dongles[0]);

    // The direct server takes its turn among the dongles, so each overhead
    // is against calls made under the same load.
    let mut peers: Vec<&mut Peer> = std::iter::once(&mut everything).chain(&mut dongles).collect();
    let times = timed(
        &mut peers,
        |which, i| match which {
            0 => format!(
                r#""method":"tools/call","params":{{"name":"echo","arguments":{{"message":"m{i}"}}}}"#
            ),
            _ => format!(
                r#""method":"tools/call","params":{{"name":"mcp_aql_read","arguments":{{"operation":"everything__echo","params":{{"message":"m{i}"}}}}}}"#
            ),
        },
        "Echo: m",
    );
    let (direct, proxied) = times.split_first().unwrap_or_else(|| panic!("no times"));
    let direct_median = builds::ms(builds::percentile(direct, 50));
    println!(
        "echo direct ({CALLS} sequential): median {direct_median:.3} ms, p99 {:.3} ms",
        builds::ms(builds::percentile(direct, 99))
    );
    builds::report("echo through the dongle, sequential", &builds, proxied);
    let overheads: Vec<f64> = proxied
        .iter()
        .map(|times| builds::ms(builds::percentile(times, 50)) - direct_median)
        .collect();
    for (build, overhead) in builds.iter().zip(&overheads) {
        println!("proxy overhead [{}]: median {overhead:.3} ms", build.label);
    }
    if let [this, baseline] = overheads[..] {
        println!("proxy overhead: this build's is {:.3}x the baseline's", this / baseline);
    }
    println!(
        "tools/list an agent sees: {direct_bytes} B direct (everything + filesystem, 27 tools), {fronted_bytes} B behind the dongle: {:.1}% less",
        100.0 * (1.0 - fronted_bytes as f64 / direct_bytes as f64)
    );
}

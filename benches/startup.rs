//! Start-up benchmark of the release binary: process spawn -> `initialize`
//! -> `tools/list` answered, the `tools/list` payload in each endpoint mode,
//! and the resident memory of an idle, initialised server, side by side
//! with a bare rmcp stdio server with five tools that this bench builds
//! itself (it is this same executable, started with `BARE_RMCP_SERVER=1`):
//! the cost of the stack every MCP server pays, against which the
//! dongle's own cost is read.
//!
//! Start-up includes compiling the embedded default policy and opening
//! (creating, on the first run) the state database.
//!
//! Run with `cargo bench --bench startup`; figures go to docs/BENCHMARKS.md.

// A bench is a harness: it stops on what it did not expect, like a test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::string_slice, clippy::unreachable)]

use std::{
    io::{BufRead, BufReader, Write},
    process::{Child, ChildStdout, Command, Stdio},
    time::{Duration, Instant},
};

const RUNS: usize = 200;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

/// The environment variable that makes this executable the bare server.
const BARE_SERVER: &str = "BARE_RMCP_SERVER";

/// The server to measure.
#[derive(Clone, Copy)]
enum Server {
    Dongle(&'static str),
    Bare,
}

fn spawn(server: Server) -> (Child, BufReader<ChildStdout>) {
    let mut command = match server {
        Server::Dongle(mode) => {
            // State goes to a scratch folder under target/, never the user's.
            let data = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("startup-bench");
            let mut command = Command::new(env!("CARGO_BIN_EXE_safety-dongle"));
            command
                .args(["serve", "--endpoints", mode, "--data-dir"])
                .arg(&data)
                .env_remove("MCP_AQL_ENDPOINT_MODE")
                .env("SAFETY_DONGLE_LOG", "warn");
            command
        }
        Server::Bare => {
            let mut command = Command::new(
                std::env::current_exe().unwrap_or_else(|e| panic!("this executable: {e}")),
            );
            command.env(BARE_SERVER, "1");
            command
        }
    };
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let stdout = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout")));
    (child, stdout)
}

/// Sends the handshake and `tools/list`; returns the `tools/list` answer.
fn handshake(child: &mut Child, stdout: &mut BufReader<ChildStdout>) -> String {
    let stdin = child.stdin.as_mut().unwrap_or_else(|| panic!("stdin"));
    writeln!(stdin, "{INITIALIZE}\n{INITIALIZED}\n{TOOLS_LIST}")
        .unwrap_or_else(|e| panic!("write: {e}"));
    stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    let mut line = String::new();
    loop {
        line.clear();
        let n = stdout.read_line(&mut line).unwrap_or_else(|e| panic!("read: {e}"));
        assert!(n > 0, "server closed stdout");
        if line.contains(r#""id":2"#) {
            return line.trim_end().to_owned();
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Spawn -> `initialize` -> `tools/list`, `RUNS` times, the two servers
/// alternating so both meet the same machine; sorted times of each.
fn time_startups() -> (Vec<Duration>, Vec<Duration>) {
    let mut dongle = Vec::with_capacity(RUNS);
    let mut bare = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        for (server, times) in
            [(Server::Dongle("semantic"), &mut dongle), (Server::Bare, &mut bare)]
        {
            let start = Instant::now();
            let (mut child, mut stdout) = spawn(server);
            handshake(&mut child, &mut stdout);
            times.push(start.elapsed());
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    dongle.sort();
    bare.sort();
    (dongle, bare)
}

/// Resident memory of `server` once initialised and idle.
fn idle_rss(server: Server) -> Option<u64> {
    let (mut child, mut stdout) = spawn(server);
    handshake(&mut child, &mut stdout);
    std::thread::sleep(Duration::from_millis(500));
    let rss = rss_kib(child.id());
    let _ = child.kill();
    let _ = child.wait();
    rss
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn main() {
    if std::env::var_os(BARE_SERVER).is_some() {
        bare::serve();
        return;
    }
    // `cargo bench` passes harness flags such as --bench; none apply here.
    let (dongle, bare) = time_startups();
    for (name, times) in [("safety-dongle", &dongle), ("bare rmcp server", &bare)] {
        println!(
            "{name}: spawn -> initialize -> tools/list ({RUNS} runs): median {:.2} ms, p90 {:.2} ms, min {:.2} ms",
            ms(percentile(times, 0.5)),
            ms(percentile(times, 0.9)),
            ms(times[0]),
        );
    }
    println!(
        "time ratio (medians): {:.2}x (target <= 1.3x)",
        ms(percentile(&dongle, 0.5)) / ms(percentile(&bare, 0.5))
    );

    for mode in ["semantic", "single", "all"] {
        let (mut child, mut stdout) = spawn(Server::Dongle(mode));
        let answer = handshake(&mut child, &mut stdout);
        println!("tools/list payload, {mode} mode: {} bytes", answer.len());
        let _ = child.kill();
        let _ = child.wait();
    }
    match (idle_rss(Server::Dongle("semantic")), idle_rss(Server::Bare)) {
        (Some(dongle), Some(bare)) => {
            println!(
                "idle RSS after initialize: safety-dongle {:.1} MB ({dongle} KiB), bare rmcp server {:.1} MB ({bare} KiB)",
                dongle as f64 / 1024.0,
                bare as f64 / 1024.0
            );
            println!("memory ratio: {:.2}x (target <= 2x)", dongle as f64 / bare as f64);
        }
        _ => println!("idle RSS: /proc not available"),
    }
}

/// The bare server: rmcp over stdio, five tools, nothing else.
mod bare {
    use std::sync::Arc;

    use rmcp::{
        ErrorData, ServerHandler, ServiceExt,
        model::{
            CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
            PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
        },
        service::{RequestContext, RoleServer},
    };

    struct Bare {
        tools: Vec<Tool>,
    }

    impl ServerHandler for Bare {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }

        async fn list_tools(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            Ok(ListToolsResult::with_all_items(self.tools.clone()))
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            Ok(CallToolResult::success(vec![ContentBlock::text(request.name.to_string())]).into())
        }
    }

    pub fn serve() {
        let schema = serde_json::json!({"type": "object", "properties": {"operation": {"type": "string"}, "params": {"type": "object"}}, "required": ["operation"]});
        let schema = Arc::new(schema.as_object().cloned().unwrap_or_default());
        let tools = ["create", "read", "update", "delete", "execute"]
            .map(|name| {
                Tool::new(format!("bare_{name}"), format!("The {name} tool"), schema.clone())
            })
            .to_vec();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"));
        runtime.block_on(async {
            let service = Bare { tools }
                .serve((tokio::io::stdin(), tokio::io::stdout()))
                .await
                .unwrap_or_else(|e| panic!("serve: {e}"));
            let _ = service.waiting().await;
        });
    }
}

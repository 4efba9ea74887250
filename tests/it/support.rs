//! Shared helpers: spawning the binary, MCP clients over stdio and HTTP, a
//! raw line-level stdio driver, and the spec's JSON Schemas read from
//! `../shared/spec/schemas` (never copied into this repository). Every
//! envelope `call` and `envelope_of` see has its error's and warnings'
//! details checked against what the spec documents (`spec_details`).

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    sync::OnceLock,
    time::Duration,
};

use rmcp::{
    RoleClient, ServiceExt,
    model::CallToolRequestParams,
    service::RunningService,
    transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess},
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    process::{Child, ChildStdin, ChildStdout, Command},
};

use super::spec_details::assert_documented_details;

pub type Client = RunningService<RoleClient, ()>;

pub const TIMEOUT: Duration = Duration::from_secs(20);

pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_safety-dongle"))
}

/// The hook's front, `safety-dongle-hook`, beside [`binary`].
pub fn front_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_safety-dongle-hook"))
}

/// A fresh folder under the test target dir, for state that must not touch
/// the user's data folder.
pub fn scratch_dir() -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("dongle-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// `tests/downstream/node_modules`: the pinned npm packages (the reference
/// MCP servers and the Node they run on, GitHub's OpenAPI description),
/// installed by `tests/downstream/install.sh` on first use in this test
/// process, so two tests never install at once.
pub fn downstream_packages() -> &'static Path {
    static PACKAGES: OnceLock<PathBuf> = OnceLock::new();
    PACKAGES.get_or_init(|| {
        let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/downstream");
        let status = std::process::Command::new("bash")
            .arg(folder.join("install.sh"))
            .status()
            .expect("run tests/downstream/install.sh");
        assert!(
            status.success(),
            "installing tests/downstream's npm packages failed (npm must reach the registry)"
        );
        folder.join("node_modules")
    })
}

/// A command for the binary with the environment cleared of settings that
/// would change its behaviour under test, and a fresh default data folder.
pub fn dongle_command(args: &[&str]) -> Command {
    command_of(&binary(), args)
}

/// Like [`dongle_command`] for `program` (the binary or its front).
pub fn command_of(program: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    command
        .args(args)
        .env("XDG_DATA_HOME", scratch_dir())
        .env_remove("MCP_AQL_ENDPOINT_MODE")
        .env_remove("MCPAQL_SAFETY_LOOP")
        .env("SAFETY_DONGLE_LOG", "warn")
        // Hooks decide in-process unless a test is about the judge
        // (`it::judge`): a judge started for each of the many scratch
        // states would outlive the test by its idle time.
        .env(safety_dongle::judge::NO_JUDGE_ENV, "1")
        .kill_on_drop(true);
    command
}

/// An rmcp client connected to the binary over stdio.
pub async fn stdio_client(args: &[&str]) -> Client {
    stdio_client_with_env(args, &[]).await
}

/// An rmcp client connected to the binary over stdio, with `env` set for
/// the binary.
pub async fn stdio_client_with_env(args: &[&str], env: &[(&str, &str)]) -> Client {
    let command = dongle_command(args).configure(|c| {
        c.stderr(Stdio::null());
        c.envs(env.iter().copied());
    });
    let transport = TokioChildProcess::new(command).expect("spawn safety-dongle");
    tokio::time::timeout(TIMEOUT, ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

/// Calls an endpoint tool; returns the parsed envelope and `isError`.
pub async fn call(client: &Client, tool: &str, arguments: Value) -> (Value, bool) {
    let Value::Object(arguments) = arguments else {
        panic!("tool arguments must be an object");
    };
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
    let result = tokio::time::timeout(TIMEOUT, client.call_tool(params))
        .await
        .expect("answer in time")
        .expect("tools/call answered");
    assert_eq!(result.content.len(), 1, "one content block: {result:?}");
    let text = result.content[0].as_text().expect("text content").text.clone();
    let envelope: Value = serde_json::from_str(&text).expect("content is a JSON envelope");
    assert_documented_details(&envelope);
    (envelope, result.is_error.unwrap_or(false))
}

/// `introspect` with the given params through `mcp_aql_read`.
pub async fn introspect(client: &Client, params: Value) -> Value {
    let (envelope, is_error) =
        call(client, "mcp_aql_read", json!({ "operation": "introspect", "params": params })).await;
    assert!(!is_error, "introspect failed: {envelope}");
    assert_eq!(envelope["success"], true, "{envelope}");
    envelope
}

/// The binary serving HTTP on an ephemeral loopback port.
pub struct HttpServer {
    /// Held so the server lives as long as this value (killed on drop).
    _child: Child,
    pub url: String,
}

impl HttpServer {
    pub async fn start(extra_args: &[&str]) -> Self {
        let mut args = vec!["serve", "--http", "127.0.0.1:0"];
        args.extend_from_slice(extra_args);
        let mut child = dongle_command(&args)
            .env("SAFETY_DONGLE_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn safety-dongle --http");
        let stderr = child.stderr.take().expect("stderr piped");
        let mut lines = BufReader::new(stderr).lines();
        let url = tokio::time::timeout(TIMEOUT, async {
            while let Some(line) = lines.next_line().await.expect("read stderr") {
                if let Some(at) = line.find("http://") {
                    return line[at..].trim().to_string();
                }
            }
            panic!("server exited before announcing its address");
        })
        .await
        .expect("address announced in time");
        // Keep draining stderr so the child never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self { _child: child, url }
    }

    pub async fn client(&self) -> Client {
        let transport = StreamableHttpClientTransport::from_uri(self.url.clone());
        tokio::time::timeout(TIMEOUT, ().serve(transport))
            .await
            .expect("initialize in time")
            .expect("initialize over HTTP")
    }
}

/// Line-level access to the binary's stdio, for frames no client would send.
pub struct RawStdio {
    pub child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl RawStdio {
    pub fn start(args: &[&str]) -> Self {
        Self::start_with(args, &[])
    }

    /// Starts the binary with extra environment variables.
    pub fn start_with(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = dongle_command(args);
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn safety-dongle");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout piped"));
        Self { child, stdin, stdout }
    }

    /// Starts the binary and completes the MCP handshake.
    pub async fn initialized(args: &[&str]) -> Self {
        let mut raw = Self::start(args);
        raw.handshake().await;
        raw
    }

    /// The MCP handshake: `initialize`, then `notifications/initialized`.
    pub async fn handshake(&mut self) {
        let raw = self;
        raw.send_json(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
        }))
        .await;
        let answer = raw.read_json().await;
        assert!(answer["result"]["protocolVersion"].is_string(), "{answer}");
        raw.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).await.expect("write to stdin");
        stdin.flush().await.expect("flush stdin");
    }

    pub async fn send_json(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("encode");
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next answer on stdout. Notifications the server sends on its
    /// own (`notifications/tools/list_changed` when a reload or a
    /// downstream server changes the operations) are passed over: they
    /// answer nothing.
    pub async fn read_json(&mut self) -> Value {
        loop {
            let mut line = String::new();
            let read = tokio::time::timeout(TIMEOUT, self.stdout.read_line(&mut line))
                .await
                .expect("an answer in time")
                .expect("read stdout");
            assert!(read > 0, "stdout closed before an answer");
            let message: Value = serde_json::from_str(&line).expect("each stdout line is JSON");
            if message.get("id").is_some() || message.get("method").is_none() {
                return message;
            }
        }
    }

    /// Sends a tools/call with the given raw `arguments` JSON text.
    pub async fn call_raw(&mut self, id: i64, tool: &str, arguments: &[u8]) {
        let mut frame = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":"#
        )
        .into_bytes();
        frame.extend_from_slice(arguments);
        frame.extend_from_slice(b"}}\n");
        self.send_raw(&frame).await;
    }

    /// Reads the child's stderr from now on into a buffer (so a verbose
    /// log never fills the pipe); the returned handle shows what it holds.
    pub fn collect_stderr(&mut self) -> CollectedStderr {
        let stderr = self.child.stderr.take().expect("stderr piped and not taken yet");
        let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = text.clone();
        let reader = tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut text = sink.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        CollectedStderr { text, reader }
    }

    /// Closes stdin and waits for the server to exit, as a client that
    /// is done would.
    pub async fn end(&mut self) {
        self.close_stdin();
        tokio::time::timeout(TIMEOUT, self.child.wait())
            .await
            .expect("the server exits once stdin closes")
            .expect("wait for the server");
    }

    /// Asserts the process is still running.
    pub fn assert_alive(&mut self) {
        assert!(self.child.try_wait().expect("poll child").is_none(), "the server exited");
    }
}

/// What a child wrote to stderr ([`RawStdio::collect_stderr`]).
pub struct CollectedStderr {
    text: std::sync::Arc<std::sync::Mutex<String>>,
    reader: tokio::task::JoinHandle<()>,
}

impl CollectedStderr {
    /// Everything the child wrote: ends it ([`RawStdio::end`]) and reads
    /// the pipe to its end, so no line is still in flight.
    pub async fn everything(self, raw: &mut RawStdio) -> String {
        raw.end().await;
        tokio::time::timeout(TIMEOUT, self.reader)
            .await
            .expect("stderr reaches its end once the server exits")
            .expect("the stderr reader");
        self.text.lock().unwrap().clone()
    }
}

/// The envelope inside a raw tools/call answer.
pub fn envelope_of(answer: &Value) -> Value {
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("not a tool result: {answer}"));
    let envelope = serde_json::from_str(text).expect("envelope JSON");
    assert_documented_details(&envelope);
    envelope
}

fn schema(name: &str) -> jsonschema::Validator {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/spec/schemas").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("read {}: {e} (../shared must sit beside the checkout)", path.display())
    });
    let schema: Value = serde_json::from_str(&text).expect("schema JSON");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

pub fn assert_valid(validator: &jsonschema::Validator, instance: &Value) {
    let errors: Vec<String> =
        validator.iter_errors(instance).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "schema violations {errors:#?} in {instance:#}");
}

pub fn operation_result_schema() -> jsonschema::Validator {
    schema("operation-result.schema.json")
}

pub fn introspection_schema() -> jsonschema::Validator {
    schema("introspection-response.schema.json")
}

pub fn batch_schema() -> jsonschema::Validator {
    schema("batch-operation.schema.json")
}

/// A `tools/call` JSON-RPC request carrying an MCP-AQL operation.
pub fn tool_call(id: i64, tool: &str, operation: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {"operation": operation, "params": params}}})
}

pub fn execute(id: i64, agent: &str) -> Value {
    tool_call(id, "mcp_aql_execute", "execute_agent", json!({"element_name": agent}))
}

pub fn step(id: i64, agent: &str, hint: &str) -> Value {
    tool_call(
        id,
        "mcp_aql_create",
        "record_execution_step",
        json!({"element_name": agent, "nextActionHint": hint}),
    )
}

/// Sends one request and returns the envelope of its answer.
pub async fn ask(raw: &mut RawStdio, message: Value) -> Value {
    raw.send_json(&message).await;
    envelope_of(&raw.read_json().await)
}

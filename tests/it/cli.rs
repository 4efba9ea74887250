//! The command line: `--version`, `check`, and start-up refusals.

use std::io::Write;

use super::support::dongle_command;

fn config_file(text: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::Builder::new().suffix(".toml").tempfile().expect("temp file");
    file.write_all(text.as_bytes()).expect("write");
    file
}

#[tokio::test]
async fn version_names_the_protocol_version() {
    let output = dongle_command(&["--version"]).output().await.expect("run");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success());
    assert!(stdout.starts_with("safety-dongle ") && stdout.contains("MCP-AQL 1.0.0-draft"), "{stdout}");
}

#[tokio::test]
async fn check_reports_every_error_as_file_line_col_and_exits_one() {
    let file = config_file("endpoints = \"both\"\nmode = \"relaxed\"\ncolour = 1\n[servers.fs]\nargs = []\n");
    let output = dongle_command(&["check", "--config", file.path().to_str().expect("utf-8 path")]).output().await.expect("run");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let path = file.path().display().to_string();
    for line in 1..=3 {
        assert!(stderr.contains(&format!("{path}:{line}:")), "no error for line {line} in:\n{stderr}");
    }
    assert!(stderr.contains("unknown field `colour`"), "{stderr}");
    assert!(stderr.contains("   ^"), "carets under the source line:\n{stderr}");
}

#[tokio::test]
async fn check_passes_a_valid_config() {
    let file = config_file("endpoints = \"all\"\nmode = \"enforcing\"\n[servers.fs]\ncommand = \"npx\"\n");
    let output = dongle_command(&["check", "--config", file.path().to_str().expect("utf-8 path")]).output().await.expect("run");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

#[tokio::test]
async fn serve_refuses_a_bad_config_and_a_bad_environment() {
    let file = config_file("endpoints = \"both\"\n");
    let output = dongle_command(&["serve", "--config", file.path().to_str().expect("utf-8 path")]).output().await.expect("run");
    assert_eq!(output.status.code(), Some(1));
    let output = dongle_command(&["serve"]).env("MCP_AQL_ENDPOINT_MODE", "many").output().await.expect("run");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("MCP_AQL_ENDPOINT_MODE"));
}

#[tokio::test]
async fn the_endpoint_mode_comes_from_the_environment_when_no_flag_is_given() {
    let client = {
        use rmcp::{ServiceExt, transport::{ConfigureCommandExt, TokioChildProcess}};
        let command = dongle_command(&[]).configure(|c| {
            c.env("MCP_AQL_ENDPOINT_MODE", "single").stderr(std::process::Stdio::null());
        });
        ().serve(TokioChildProcess::new(command).expect("spawn")).await.expect("initialize")
    };
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), ["mcp_aql"]);
}

/// Each example MCP-client config starts a working server with exactly the
/// arguments it gives.
#[tokio::test]
async fn the_example_client_configs_start_a_working_server() {
    use rmcp::{ServiceExt, transport::{ConfigureCommandExt, TokioChildProcess}};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for example in ["examples/claude-desktop/claude_desktop_config.json", "examples/claude-code/mcp.json"] {
        let text = std::fs::read_to_string(root.join(example)).expect("example exists");
        let config: serde_json::Value = serde_json::from_str(&text).expect("example is JSON");
        let server = &config["mcpServers"]["safety-dongle"];
        assert_eq!(server["command"], "safety-dongle", "{example}");
        let args: Vec<&str> = server["args"].as_array().expect("args").iter().filter_map(|a| a.as_str()).collect();
        let command = dongle_command(&args).configure(|c| {
            c.stderr(std::process::Stdio::null());
        });
        let client = ().serve(TokioChildProcess::new(command).expect("spawn")).await.expect("initialize");
        assert_eq!(client.list_all_tools().await.expect("tools/list").len(), 5, "{example}");
    }
}

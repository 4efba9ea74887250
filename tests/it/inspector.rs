//! MCP Inspector, run as the README's recipe writes it: the config file is
//! named through `SAFETY_DONGLE_CONFIG` (the Inspector takes `--config` for
//! itself), and what the Inspector lists is what that config asks for.

use std::process::Stdio;

use serde_json::Value;

use super::support::{TIMEOUT, binary, downstream_packages, scratch_dir};

/// The README's Inspector commands that run from a terminal (`--cli`).
fn readme_inspector_cli_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("read README.md");
    let section = readme
        .split("\n### MCP Inspector\n")
        .nth(1)
        .expect("README has a '### MCP Inspector' section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the section has a sh block");
    block.lines().filter(|line| line.contains("--cli")).map(str::to_owned).collect()
}

#[tokio::test]
async fn the_readme_inspector_recipe_lists_what_the_named_config_asks_for() {
    let commands = readme_inspector_cli_commands();
    assert_eq!(commands.len(), 1, "one terminal recipe: {commands:?}");
    let packages = downstream_packages();
    let home = scratch_dir();
    let config = home.join(".config/safety-dongle/config.toml");
    std::fs::create_dir_all(config.parent().expect("a folder")).expect("create config folder");
    // A config a default server would not follow: one tool instead of five.
    std::fs::write(
        &config,
        format!("endpoints = \"single\"\ndata_dir = \"{}\"\n", home.join("data").display()),
    )
    .expect("write config");
    let bin_dir = binary().parent().expect("binary folder").to_path_buf();
    let path = format!(
        "{}:{}:{}",
        bin_dir.display(),
        packages.join(".bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = tokio::time::timeout(
        TIMEOUT * 3,
        tokio::process::Command::new("bash")
            .arg("-c")
            .arg(&commands[0])
            .current_dir(packages.parent().expect("tests/downstream"))
            .env("HOME", &home)
            .env("PATH", path)
            .env_remove("SAFETY_DONGLE_CONFIG")
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the Inspector answered in time")
    .expect("run the Inspector");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let listed: Value =
        serde_json::from_str(&stdout).expect("the Inspector prints the tools as JSON");
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(names, ["mcp_aql"], "the config named in the environment was followed");
}

//! Downstream MCP servers behind the dongle, end to end: the real reference
//! servers from npm (`server-everything`, `server-filesystem` on a scratch
//! folder, installed by `tests/downstream/install.sh`) started by the real
//! binary, driven by an rmcp client, with the real verifier and a scripted
//! human deciding approvals.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use super::{
    humans::{Answer, Setup},
    support::{
        Client, assert_valid, call, downstream_packages, introspect, introspection_schema,
        stdio_client, stdio_client_with_env,
    },
};

/// The reference servers' `.bin` folder (with the Node they run on).
fn downstream_bin() -> PathBuf {
    downstream_packages().join(".bin")
}

/// A scratch folder for the filesystem server, with one file in it.
pub(super) fn files_root(setup: &Setup) -> PathBuf {
    let root = setup.dir.join("files");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("notes.txt"), "first line\n").unwrap();
    root.canonicalize().unwrap()
}

/// The `[servers]` tables for both reference servers; `marker` lands in
/// their environment so the test can find every process they start.
pub(super) fn servers_toml(root: &Path, marker: &str, fs_start: &str) -> String {
    let bin = downstream_bin();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    format!(
        "[servers.fs]\ncommand = \"{fs}\"\nargs = [\"{root}\"]\nstart = \"{fs_start}\"\nenv = {{ PATH = \"{path}\", DONGLE_TEST_MARKER = \"{marker}\" }}\n\
         [servers.everything]\ncommand = \"{everything}\"\nenv = {{ PATH = \"{path}\", DONGLE_TEST_MARKER = \"{marker}\" }}\ntimeout_secs = 20\n",
        fs = bin.join("mcp-server-filesystem").display(),
        everything = bin.join("mcp-server-everything").display(),
        root = root.display(),
    )
}

/// Rewrites the setup's config: top-level `lines` first, then the rest,
/// then `tables`.
pub(super) fn extend_config(setup: &Setup, lines: &str, tables: &str) {
    let base = std::fs::read_to_string(&setup.config).unwrap();
    std::fs::write(&setup.config, format!("{lines}{base}{tables}")).unwrap();
}

/// A dongle in front of both reference servers, under `policy_lines`.
async fn proxied(answer: Answer, policy_lines: &str) -> (Setup, PathBuf, String, Client) {
    let setup = Setup::new(answer, 300);
    let root = files_root(&setup);
    let marker = uuid::Uuid::new_v4().to_string();
    extend_config(&setup, policy_lines, &servers_toml(&root, &marker, "startup"));
    let client = stdio_client(&["serve", "--config", setup.config.to_str().unwrap()]).await;
    (setup, root, marker, client)
}

async fn operation(client: &Client, tool: &str, name: &str, params: Value) -> (Value, bool) {
    call(client, tool, json!({ "operation": name, "params": params })).await
}

fn code(envelope: &Value) -> &str {
    envelope["error"]["code"].as_str().unwrap_or("<success>")
}

/// Pids of live processes whose environment carries `marker`.
fn marked_processes(marker: &str) -> Vec<u32> {
    let needle = format!("DONGLE_TEST_MARKER={marker}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie =
                stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z'));
            !zombie && environ.split(|b| *b == 0).any(|var| var == needle.as_bytes())
        })
        .collect()
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn every_downstream_tool_is_an_introspectable_operation_that_works() {
    let (_setup, root, _marker, client) = proxied(Answer::Approve, "").await;
    let listed = introspect(&client, json!({"query": "operations", "first": 100})).await;
    let operations = listed["data"]["operations"].as_array().unwrap();
    let named = |name: &str| {
        operations
            .iter()
            .find(|op| op["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} not listed"))
    };
    let from = |server: &str| {
        operations
            .iter()
            .filter(|op| op["name"].as_str().unwrap().starts_with(&format!("{server}__")))
            .count()
    };
    let (fs_ops, everything_ops) = (from("fs"), from("everything"));
    assert_eq!((fs_ops, everything_ops), (14, 13), "every tool of both servers");
    assert_eq!(named("fs__read_text_file")["semantic_category"], "READ", "readOnlyHint");
    assert_eq!(named("fs__write_file")["semantic_category"], "DELETE", "destructiveHint");
    assert_eq!(named("fs__create_directory")["semantic_category"], "CREATE", "create_ verb");
    assert_eq!(
        named("everything__get_annotated_message")["semantic_category"],
        "READ",
        "names are sanitised"
    );
    assert_eq!(
        named("everything__toggle_simulated_logging")["semantic_category"],
        "EXECUTE",
        "no telling hint or verb"
    );

    let details = introspect(&client, json!({"query": "operations", "name": "fs__write_file"}))
        .await["data"]["operation"]
        .clone();
    assert!(
        details["description"]
            .as_str()
            .unwrap()
            .ends_with("[downstream server 'fs', tool 'write_file'; danger_level: destructive]"),
        "{details}"
    );
    assert_valid(
        &introspection_schema(),
        &json!({"success": true, "data": {"operation": details}}),
    );
    assert_eq!(details["mcpTool"], "mcp_aql_delete");
    let params: Vec<(&str, bool)> = details["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["required"].as_bool().unwrap()))
        .collect();
    assert!(
        params.contains(&("path", true))
            && params.contains(&("content", true))
            && params.contains(&("confirmation_token", false)),
        "{params:?}"
    );

    let (echo, is_error) = operation(
        &client,
        "mcp_aql_read",
        "everything__echo",
        json!({"message": "hello through the gate"}),
    )
    .await;
    assert!(!is_error);
    assert_eq!(echo["data"][0]["text"], "Echo: hello through the gate", "{echo}");

    let path = root.join("notes.txt");
    let (read, _) =
        operation(&client, "mcp_aql_read", "fs__read_text_file", json!({"path": path})).await;
    assert_eq!(read["data"]["content"], "first line\n", "structuredContent is preferred: {read}");

    let (structured, _) = operation(
        &client,
        "mcp_aql_read",
        "everything__get_structured_content",
        json!({"location": "Chicago"}),
    )
    .await;
    assert!(structured["data"]["temperature"].is_number(), "{structured}");

    let (wrong_type, is_error) =
        operation(&client, "mcp_aql_read", "everything__get_sum", json!({"a": 1, "b": "two"}))
            .await;
    assert_eq!((code(&wrong_type), is_error), ("VALIDATION_INVALID_TYPE", false), "{wrong_type}");
    let (bad_enum, _) = operation(
        &client,
        "mcp_aql_read",
        "everything__get_annotated_message",
        json!({"messageType": "shouting"}),
    )
    .await;
    assert_eq!(code(&bad_enum), "VALIDATION_INVALID_VALUE", "{bad_enum}");
    let (wrong_endpoint, _) =
        operation(&client, "mcp_aql_create", "fs__read_text_file", json!({"path": path})).await;
    assert_eq!(code(&wrong_endpoint), "VALIDATION_ENDPOINT_MISMATCH");

    // The downstream's isError comes back as a failure, not a crash.
    let (outside, is_error) =
        operation(&client, "mcp_aql_read", "fs__read_text_file", json!({"path": "/etc/hostname"}))
            .await;
    assert_eq!((code(&outside), is_error), ("TOOL_EXECUTION_FAILED", true), "{outside}");
    assert!(
        outside["error"]["message"].as_str().unwrap().contains("outside allowed directories"),
        "{outside}"
    );
    let (still_fine, _) = operation(
        &client,
        "mcp_aql_read",
        "everything__echo",
        json!({"message": "after an error"}),
    )
    .await;
    assert_eq!(still_fine["success"], true);
}

/// A batch of proxied calls halts at the one a human must confirm, and
/// the agent's next directive says what the gate held back.
#[tokio::test]
async fn a_batch_halts_at_a_confirmation_and_the_next_directive_tells_the_agent() {
    let (setup, root, _marker, client) = proxied(Answer::Approve, "").await;
    let (started, _) =
        operation(&client, "mcp_aql_execute", "execute_agent", json!({"element_name": "coder"}))
            .await;
    assert_eq!(started["success"], true, "{started}");
    let (first, second) = (root.join("first.txt"), root.join("second.txt"));
    let item = |path: &Path| json!({"operation": "fs__write_file", "params": {"path": path, "content": "x"}});
    let (answer, is_error) =
        call(&client, "mcp_aql_delete", json!({"operations": [item(&first), item(&second)]})).await;
    assert!(!is_error);
    assert_valid(&super::support::batch_schema(), &answer);
    let halted = &answer["halted_at"];
    assert_eq!(
        (halted["index"].clone(), code(&halted["result"])),
        (json!(0), "CONFIRMATION_REQUIRED"),
        "{answer}"
    );
    let approval = halted["result"]["error"]["details"]["approval_id"].as_str().unwrap().to_owned();
    assert_eq!(answer["pending_operations"][0]["index"], 1);
    assert_eq!(
        answer["summary"],
        json!({"total": 2, "succeeded": 0, "failed": 0, "halted": 1, "pending": 1})
    );
    assert!(!first.exists() && !second.exists(), "nothing was written");
    setup.shown(&approval);

    let (directive, _) = operation(
        &client,
        "mcp_aql_create",
        "record_execution_step",
        json!({"element_name": "coder", "nextActionHint": "executing shell command: ls"}),
    )
    .await;
    let pending: Vec<&Value> = directive["data"]["notifications"]
        .as_array()
        .map(|all| all.iter().filter(|n| n["type"] == "permission_pending").collect())
        .unwrap_or_default();
    assert_eq!(pending.len(), 1, "{directive}");
    assert_eq!(pending[0]["metadata"]["approvalId"], approval.as_str());
    assert!(
        pending[0]["metadata"]["operation"].as_str().unwrap().starts_with("fs__write_file "),
        "{}",
        pending[0]
    );
    let (later, _) = operation(
        &client,
        "mcp_aql_create",
        "record_execution_step",
        json!({"element_name": "coder", "nextActionHint": "executing shell command: ls"}),
    )
    .await;
    assert!(
        !later.to_string().contains("permission_pending"),
        "a notification is delivered once: {later}"
    );
}

#[tokio::test]
async fn a_destructive_call_waits_for_a_human_and_its_token_is_bound_and_single_use() {
    let (setup, root, _marker, client) = proxied(Answer::Approve, "").await;
    let target = root.join("written.txt");
    let params = json!({"path": target, "content": "approved content"});
    let (asked, is_error) =
        operation(&client, "mcp_aql_delete", "fs__write_file", params.clone()).await;
    assert_eq!((code(&asked), is_error), ("CONFIRMATION_REQUIRED", false), "{asked}");
    let details = &asked["error"]["details"];
    assert_eq!(details["danger_level"], "destructive");
    let token = details["confirmation_token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("conf_") && token.len() >= 5 + 32, "{token}");
    let approval = details["approval_id"].as_str().unwrap();
    let shown = setup.shown(approval);
    assert_eq!(shown["type"], "approval_request");
    assert!(
        shown["action"]
            .as_str()
            .unwrap()
            .starts_with("fs__write_file {\"content\":\"approved content\""),
        "{shown}"
    );
    assert!(!target.exists(), "nothing was written before the human answered");

    let mut changed = params.clone();
    changed["content"] = json!("something else");
    changed["_confirmation"] = json!(token);
    let (mismatch, _) = operation(&client, "mcp_aql_delete", "fs__write_file", changed).await;
    assert_eq!(code(&mismatch), "TOKEN_SCOPE_MISMATCH", "{mismatch}");
    let scope = &mismatch["error"]["details"];
    assert_eq!(
        (
            scope["token"].as_str(),
            scope["token_operation"].as_str(),
            scope["requested_operation"].as_str()
        ),
        (Some(token.as_str()), Some("fs__write_file"), Some("fs__write_file")),
        "{mismatch}"
    );
    assert!(!target.exists());

    let mut confirmed = params.clone();
    confirmed["confirmation_token"] = json!(token);
    let (written, _) =
        operation(&client, "mcp_aql_delete", "fs__write_file", confirmed.clone()).await;
    assert_eq!(written["success"], true, "{written}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "approved content");

    std::fs::remove_file(&target).unwrap();
    let (again, _) = operation(&client, "mcp_aql_delete", "fs__write_file", confirmed).await;
    assert_eq!(code(&again), "TOKEN_ALREADY_USED", "{again}");
    assert!(!target.exists(), "a used token writes nothing");
}

#[tokio::test]
async fn a_human_who_denies_keeps_the_call_from_the_downstream() {
    let (_setup, root, _marker, client) = proxied(Answer::Deny, "").await;
    let target = root.join("denied.txt");
    let params = json!({"path": target, "content": "x"});
    let (asked, _) = operation(&client, "mcp_aql_delete", "fs__write_file", params.clone()).await;
    let mut retry = params;
    retry["_confirmation"] = asked["error"]["details"]["confirmation_token"].clone();
    let (denied, _) = operation(&client, "mcp_aql_delete", "fs__write_file", retry).await;
    assert_eq!(code(&denied), "PERMISSION_DENIED", "{denied}");
    assert!(!target.exists());
}

#[tokio::test]
async fn a_deny_rule_stops_a_write_before_the_downstream_sees_it_and_blocks_the_agent() {
    let setup = Setup::new(Answer::Approve, 300);
    let policy = setup.dir.join("no-env-files.toml");
    std::fs::write(&policy, "[defaults]\ndeny = [\"write:**/.env\"]\n").unwrap();
    let default_policy = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("policies/default.toml");
    let root = files_root(&setup);
    let marker = uuid::Uuid::new_v4().to_string();
    extend_config(
        &setup,
        &format!("policies = [\"{}\", \"{}\"]\n", default_policy.display(), policy.display()),
        &servers_toml(&root, &marker, "startup"),
    );
    let client = stdio_client(&["serve", "--config", setup.config.to_str().unwrap()]).await;

    let target = root.join(".env");
    let (refused, is_error) = operation(
        &client,
        "mcp_aql_delete",
        "fs__write_file",
        json!({"path": target, "content": "SECRET=1"}),
    )
    .await;
    assert_eq!((code(&refused), is_error), ("PERMISSION_DENIED", false), "{refused}");
    assert!(
        refused["error"]["details"]["factors"].to_string().contains("write:**/.env"),
        "{refused}"
    );
    assert!(!target.exists(), "the downstream never saw the call");

    // The deny hard-blocked the client's agent: even reads are refused now.
    let (blocked, _) = operation(
        &client,
        "mcp_aql_read",
        "fs__read_text_file",
        json!({"path": root.join("notes.txt")}),
    )
    .await;
    assert_eq!(code(&blocked), "PERMISSION_DENIED", "{blocked}");
    assert!(blocked["error"]["message"].as_str().unwrap().contains("hard-blocked"), "{blocked}");

    let audit = Command::new(super::support::binary())
        .args(["audit", "--config", setup.config.to_str().unwrap()])
        .output()
        .unwrap();
    let audit = String::from_utf8_lossy(&audit.stdout);
    assert!(audit.contains("gate") && audit.contains("stop"), "{audit}");
    assert!(
        !audit.lines().any(|line| line.contains(" call ") && line.contains(".env")),
        "no call row for the refused write:\n{audit}"
    );
}

/// A killed server is restarted; a read the kill interrupted or that
/// arrives meanwhile is retried (it only reads) and answered by the new
/// process, while calls that may not be repeated fail clearly (see
/// `retries.rs`).
#[tokio::test]
async fn a_killed_downstream_is_restarted_and_a_read_waits_for_it() {
    let (_setup, root, marker, client) = proxied(Answer::Approve, "").await;
    let (started, _) =
        operation(&client, "mcp_aql_execute", "execute_agent", json!({"element_name": "coder"}))
            .await;
    assert_eq!(started["success"], true, "{started}");
    let path = root.join("notes.txt");
    let (first, _) =
        operation(&client, "mcp_aql_read", "fs__read_text_file", json!({"path": path})).await;
    assert_eq!(first["success"], true);
    let root_arg = root.to_str().unwrap().to_owned();
    let fs_pids = |marker: &str| -> Vec<u32> {
        marked_processes(marker)
            .into_iter()
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .unwrap_or_default()
                    .split(|b| *b == 0)
                    .any(|arg| arg == root_arg.as_bytes())
            })
            .collect()
    };
    let before = fs_pids(&marker);
    assert!(!before.is_empty(), "the filesystem server runs");
    for pid in &before {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }

    let (during, is_error) =
        operation(&client, "mcp_aql_read", "fs__read_text_file", json!({"path": path})).await;
    assert_eq!(
        (during["success"].as_bool(), is_error),
        (Some(true), false),
        "the read reached the restarted server: {during}"
    );
    assert_eq!(during["data"]["content"], "first line\n");
    let (other_server, _) =
        operation(&client, "mcp_aql_read", "everything__echo", json!({"message": "unaffected"}))
            .await;
    assert_eq!(other_server["success"], true, "the other server keeps working");
    let after = fs_pids(&marker);
    assert!(
        !after.is_empty() && after.iter().all(|pid| !before.contains(pid)),
        "a new process: {before:?} -> {after:?}"
    );

    // The executing agent hears that the server went down, then that it is back.
    let (directive, _) = operation(
        &client,
        "mcp_aql_create",
        "record_execution_step",
        json!({"element_name": "coder", "nextActionHint": "executing shell command: ls"}),
    )
    .await;
    let told: Vec<(String, String)> = directive["data"]["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (n["type"].as_str().unwrap().to_owned(), n["message"].as_str().unwrap().to_owned())
        })
        .collect();
    let down = told
        .iter()
        .position(|(kind, message)| kind == "error" && message.contains("'fs' went down"));
    let back = told
        .iter()
        .position(|(kind, message)| kind == "status" && message.contains("'fs' is serving again"));
    assert!(matches!((down, back), (Some(d), Some(b)) if d < b), "{told:?}");
}

#[tokio::test]
async fn sigterm_leaves_no_downstream_process_behind() {
    let setup = Setup::new(Answer::Approve, 300);
    let root = files_root(&setup);
    let marker = uuid::Uuid::new_v4().to_string();
    extend_config(&setup, "", &servers_toml(&root, &marker, "startup"));
    let mut raw = setup.start().await;
    let listed = super::support::ask(
        &mut raw,
        super::support::tool_call(
            1,
            "mcp_aql_read",
            "introspect",
            json!({"query": "operations", "first": 100}),
        ),
    )
    .await;
    assert!(listed["data"]["operations"].as_array().unwrap().len() > 27, "both servers are up");
    wait_until("both servers run", Duration::from_secs(10), || {
        marked_processes(&marker).len() >= 2
    });

    let dongle = raw.child.id().unwrap();
    let _ = Command::new("kill").args(["-TERM", &dongle.to_string()]).status();
    let exited = tokio::time::timeout(Duration::from_secs(15), raw.child.wait())
        .await
        .expect("the dongle exits on SIGTERM")
        .unwrap();
    assert!(exited.success(), "{exited:?}");
    wait_until("every downstream process is gone", Duration::from_secs(5), || {
        marked_processes(&marker).is_empty()
    });
}

#[tokio::test]
async fn servers_from_a_client_config_and_lazy_start_show_in_status() {
    let setup = Setup::new(Answer::Approve, 300);
    let root = files_root(&setup);
    let bin = downstream_bin();
    let path_var = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let client_config = setup.dir.join("claude_desktop_config.json");
    std::fs::write(
        &client_config,
        json!({"mcpServers": {
            "filesystem": {"command": bin.join("mcp-server-filesystem"), "args": [root], "env": {"PATH": path_var}},
            "myself": {"command": "safety-dongle", "args": ["serve"]},
        }})
        .to_string(),
    )
    .unwrap();
    extend_config(
        &setup,
        "",
        &format!(
            "[servers.lazy_echo]\ncommand = \"{}\"\nstart = \"lazy\"\nenv = {{ PATH = \"{path_var}\" }}\n",
            bin.join("mcp-server-everything").display()
        ),
    );
    let config = setup.config.to_str().unwrap().to_owned();
    let client = stdio_client(&[
        "serve",
        "--config",
        &config,
        "--import-client-config",
        client_config.to_str().unwrap(),
    ])
    .await;

    let status = || {
        String::from_utf8_lossy(
            &Command::new(super::support::binary())
                .args(["status", "--config", &config])
                .output()
                .unwrap()
                .stdout,
        )
        .into_owned()
    };
    wait_until("the imported server is ready", Duration::from_secs(20), || {
        status().contains("filesystem  ready  14 tools")
    });
    let before = status();
    assert!(before.contains("lazy_echo  idle  0 tools"), "a lazy server waits for need:\n{before}");
    assert!(!before.contains("myself"), "the dongle does not proxy itself:\n{before}");

    let (read, _) = operation(
        &client,
        "mcp_aql_read",
        "filesystem__read_text_file",
        json!({"path": root.join("notes.txt")}),
    )
    .await;
    assert_eq!(read["data"]["content"], "first line\n", "{read}");
    let (echo, _) =
        operation(&client, "mcp_aql_read", "lazy_echo__echo", json!({"message": "woken"})).await;
    assert_eq!(
        echo["data"][0]["text"], "Echo: woken",
        "an unknown operation starts the lazy server: {echo}"
    );
    assert!(status().contains("lazy_echo  ready  13 tools"));
}

/// The Claude Desktop example that fronts the filesystem server: its
/// `servers.json`, with the pinned copy of the same package and a scratch
/// folder in place of `npx` and the user's folder, behind the dongle as its
/// `claude_desktop_config.json` starts it.
#[tokio::test]
async fn the_claude_desktop_filesystem_example_works() {
    let example =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/claude-desktop-filesystem");
    let desktop: Value = serde_json::from_str(
        &std::fs::read_to_string(example.join("claude_desktop_config.json")).unwrap(),
    )
    .unwrap();
    let dongle = &desktop["mcpServers"]["safety-dongle"];
    assert_eq!(dongle["command"], "safety-dongle");
    let args: Vec<String> =
        dongle["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_owned()).collect();
    assert_eq!(args[..2], ["serve", "--import-client-config"]);

    let mut servers: Value =
        serde_json::from_str(&std::fs::read_to_string(example.join("servers.json")).unwrap())
            .unwrap();
    let entry = &mut servers["mcpServers"]["filesystem"];
    assert_eq!(
        (entry["command"].as_str(), entry["args"][1].as_str()),
        (Some("npx"), Some("@modelcontextprotocol/server-filesystem"))
    );
    let setup = Setup::new(Answer::Approve, 300);
    let root = files_root(&setup);
    let bin = downstream_bin();
    entry["command"] = json!(bin.join("mcp-server-filesystem"));
    entry["args"] = json!([root]);
    entry["env"] =
        json!({"PATH": format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())});
    let servers_file = setup.dir.join("servers.json");
    std::fs::write(&servers_file, servers.to_string()).unwrap();

    let client = stdio_client(&[
        "serve",
        "--config",
        setup.config.to_str().unwrap(),
        &args[1],
        servers_file.to_str().unwrap(),
    ])
    .await;
    assert_eq!(
        client.list_all_tools().await.unwrap().len(),
        5,
        "the agent sees the five endpoint tools"
    );
    let (read, _) = operation(
        &client,
        "mcp_aql_read",
        "filesystem__read_text_file",
        json!({"path": root.join("notes.txt")}),
    )
    .await;
    assert_eq!(read["data"]["content"], "first line\n", "{read}");
    let (write, _) = operation(
        &client,
        "mcp_aql_delete",
        "filesystem__write_file",
        json!({"path": root.join("new.txt"), "content": "x"}),
    )
    .await;
    assert_eq!(code(&write), "CONFIRMATION_REQUIRED", "{write}");
}

/// Downstream servers get a minimal environment plus what their entry
/// names: an adapter credential in the dongle's environment stays there.
#[tokio::test]
async fn downstream_servers_inherit_no_credentials() {
    let setup = Setup::new(Answer::Deny, 300);
    let root = files_root(&setup);
    let marker = uuid::Uuid::new_v4().to_string();
    extend_config(&setup, "", &servers_toml(&root, &marker, "startup"));
    let secret = ("TRACKER_TOKEN", "secret-credential-of-an-adapter");
    let _client = stdio_client_with_env(
        &["serve", "--config", setup.config.to_str().unwrap()],
        &[secret, ("LC_TIME", "C")],
    )
    .await;
    wait_until("both servers run", Duration::from_secs(20), || {
        marked_processes(&marker).len() >= 2
    });
    for pid in marked_processes(&marker) {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let vars: Vec<String> =
            environ.split(|b| *b == 0).map(|v| String::from_utf8_lossy(v).into_owned()).collect();
        assert!(
            !vars.iter().any(|v| v.starts_with("TRACKER_TOKEN=")),
            "process {pid} inherited the credential: {vars:?}"
        );
        assert!(
            vars.iter().any(|v| v.starts_with("HOME=")) && vars.iter().any(|v| v == "LC_TIME=C"),
            "the base passes: {vars:?}"
        );
        assert!(
            vars.iter().any(|v| *v == format!("DONGLE_TEST_MARKER={marker}")),
            "the entry's env passes"
        );
    }
}

#[tokio::test]
async fn a_downstream_answer_over_the_response_limit_never_reaches_the_agent() {
    let (_setup, root, _marker, client) = proxied(Answer::Approve, "").await;
    let limit = 10 * 1024 * 1024;
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
    std::fs::write(root.join("big.txt"), line.repeat(limit / line.len() + 1_000)).unwrap();

    let (answer, _) = operation(
        &client,
        "mcp_aql_read",
        "fs__read_text_file",
        json!({"path": root.join("big.txt")}),
    )
    .await;
    assert_eq!(
        code(&answer),
        "VALIDATION_PAYLOAD_TOO_LARGE",
        "{}",
        &answer.to_string()[..answer.to_string().len().min(300)]
    );
    let details = &answer["error"]["details"];
    assert_eq!(
        (details["limit_type"].as_str(), details["limit_value"].as_u64(), details["unit"].as_str()),
        (Some("response_size"), Some(limit as u64), Some("bytes"))
    );
    assert!(details["actual_value"].as_u64().unwrap() > limit as u64, "{details}");

    // The connection that carried it was cut; the server is restarted and
    // the same operation under the limit answers again.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (small, _) = operation(
            &client,
            "mcp_aql_read",
            "fs__read_text_file",
            json!({"path": root.join("notes.txt")}),
        )
        .await;
        if small["success"] == true {
            assert_eq!(small["data"]["content"], "first line\n", "{small}");
            break;
        }
        assert_eq!(
            code(&small),
            "TRANSPORT_NETWORK_ERROR",
            "only while the server restarts: {small}"
        );
        assert!(Instant::now() < deadline, "the server never came back: {small}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A tool's declared output schema holds: a real reference server's
/// structured answer passes, and a server that answers outside its own
/// schema (or without the structured content it declared) has its answer
/// withheld.
#[tokio::test]
async fn answers_outside_a_tools_output_schema_are_withheld() {
    let setup = Setup::new(Answer::Approve, 300);
    let root = files_root(&setup);
    let bin = downstream_bin();
    let liar = format!(
        "[servers.liar]\ncommand = \"{node}\"\nargs = [\"{script}\"]\n",
        node = bin.join("node").display(),
        script = downstream_packages().parent().unwrap().join("lying-server.mjs").display(),
    );
    extend_config(
        &setup,
        "",
        &format!("{}{liar}", servers_toml(&root, "output-schema", "startup")),
    );
    let config = setup.config.to_str().unwrap().to_owned();
    let client = stdio_client(&["serve", "--config", &config]).await;
    let (weather, _) = operation(
        &client,
        "mcp_aql_read",
        "everything__get_structured_content",
        json!({"location": "Chicago"}),
    )
    .await;
    assert_eq!(weather["data"]["temperature"], 36, "{weather}");
    let (honest, _) = operation(&client, "mcp_aql_read", "liar__honest", json!({})).await;
    assert_eq!(honest["data"], json!({"temperature": 21}), "{honest}");
    let (lie, is_error) = operation(&client, "mcp_aql_read", "liar__weather", json!({})).await;
    assert_eq!((code(&lie), is_error), ("SERIALIZATION_PARSE_ERROR", true), "{lie}");
    assert!(
        lie["error"]["details"]["problems"][0].as_str().unwrap().starts_with("/temperature: "),
        "{lie}"
    );
    assert!(lie.get("data").is_none());
    let (bare, _) = operation(&client, "mcp_aql_read", "liar__unstructured", json!({})).await;
    assert_eq!(code(&bare), "SERIALIZATION_PARSE_ERROR", "{bare}");
    assert!(
        bare["error"]["message"].as_str().unwrap().contains("without structuredContent"),
        "{bare}"
    );
}

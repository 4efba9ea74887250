//! `safety-dongle demo`: a scripted agent session against a fresh,
//! temporary state, for a newcomer to watch every outcome of the safety
//! loop in one command: advisory, confirm (an Approve/Deny request),
//! verify (a code), and danger zone (a hard block lifted by a code).
//!
//! Requests go through the real router as MCP-AQL, exactly as an agent's
//! would. Humans are reached by the real verifier: a desktop dialog when a
//! display exists, otherwise this terminal. Where no human can be reached
//! (no display, no terminal), the demo says so and goes on: the dongle
//! stays closed, which is the point.

use std::{
    io::{BufRead, IsTerminal, Write},
    process::ExitCode,
    sync::Arc,
};

use serde_json::{Value, json};

use crate::{
    config::{Channel, Config},
    protocol::envelope::envelope,
    protocol::registry::Category,
    protocol::{registry::CallContext, router::Router, surface::Endpoint},
};

pub(super) fn run() -> ExitCode {
    let state = match tempfile_dir() {
        Ok(dir) => dir,
        Err(message) => {
            eprintln!("safety-dongle: {message}");
            return ExitCode::from(1);
        }
    };
    let mut config = Config::default();
    config.data_dir = Some(state.clone());
    config.verifier.channels = vec![Channel::Dialog, Channel::Terminal];
    config.verifier.approval_timeout_secs = 120;
    let Some((super::assemble::Assembled { router, .. }, runtime)) =
        super::assemble::assemble_with_runtime(&config, super::assemble::Start::Now)
    else {
        return ExitCode::from(1);
    };
    println!("safety-dongle demo: scripted agents against the default policy.");
    println!("State: {} (temporary)\n", state.display());
    runtime.block_on(script(&Demo { router, call: CallContext::new("demo") }));
    let _ = std::fs::remove_dir_all(&state);
    ExitCode::SUCCESS
}

fn tempfile_dir() -> Result<std::path::PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("safety-dongle-demo-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    Ok(dir)
}

struct Demo {
    router: Arc<Router>,
    call: CallContext,
}

impl Demo {
    /// Sends one MCP-AQL request and prints it with its answer.
    async fn send(&self, category: Category, operation: &str, params: Value) -> Value {
        let request = json!({ "operation": operation, "params": params });
        println!("  -> {} {}", Endpoint::Semantic(category).tool_name(), request);
        let arguments = match request {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        let answer = envelope(
            &self.router.handle(&self.call, Endpoint::Semantic(category), &arguments).await,
            &[],
        );
        println!("  <- {}", summarize(&answer));
        answer
    }

    async fn start(&self, agent: &str, goal: &str) {
        self.send(
            Category::Execute,
            "execute_agent",
            json!({ "element_name": agent, "parameters": { "goal": goal } }),
        )
        .await;
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "serde_json's Index by key reads Null where a key is missing: it never panics"
    )]
    async fn step(&self, agent: &str, hint: &str) -> Value {
        self.send(
            Category::Create,
            "record_execution_step",
            json!({ "element_name": agent, "nextActionHint": hint }),
        )
        .await["data"]
            .clone()
    }
}

/// The directive's essentials, one line.
#[expect(
    clippy::indexing_slicing,
    reason = "serde_json's Index by key reads Null where a key is missing: it never panics"
)]
fn summarize(answer: &Value) -> String {
    let data = &answer["data"];
    if answer["success"] != true {
        return format!(
            "error {}: {}",
            answer["error"]["code"],
            answer["error"]["message"].as_str().unwrap_or("")
        );
    }
    if data.get("continue").is_none() {
        return data.to_string();
    }
    let mut line = format!("continue: {}", data["continue"]);
    if data["stopped"] == true {
        line.push_str(", stopped: true");
    }
    if let Some(risk) = data["nextStepRisk"].as_str() {
        line.push_str(&format!(", risk tier: {risk}"));
    }
    if let Some(reason) = data["reason"].as_str() {
        line.push_str(&format!("\n     reason: {reason}"));
    }
    for factor in data["factors"].as_array().into_iter().flatten() {
        line.push_str(&format!("\n     factor: {}", factor.as_str().unwrap_or("")));
    }
    line
}

#[expect(
    clippy::indexing_slicing,
    reason = "serde_json's Index by key reads Null where a key is missing: it never panics"
)]
fn id_in(directive: &Value, key: &str) -> Option<String> {
    directive["notifications"]
        .as_array()?
        .iter()
        .rev()
        .find_map(|n| n["metadata"][key].as_str().map(str::to_owned))
}

/// Asks the person at the terminal for the code they were shown.
fn read_code() -> Option<String> {
    if !std::io::stdin().is_terminal() {
        return None;
    }
    print!("  Type the code you were shown (Enter to skip): ");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok()?;
    Some(line.trim().to_owned()).filter(|code| !code.is_empty())
}

/// One agent per scenario, so one agent's pause does not hold up the
/// next; the hard block comes last, since it also stops every agent of
/// its session.
async fn script(demo: &Demo) {
    println!("1. Advisory: an agent starts a monitored execution; an ordinary build goes through.");
    demo.start("builder", "build the project").await;
    demo.step("builder", "executing shell command: cargo build --release").await;

    println!("\n2. Confirm: a push needs a human's Approve (a dialog, or this terminal).");
    demo.start("pusher", "publish the branch").await;
    let pause = demo.step("pusher", "git push origin main").await;
    if let Some(approval) = id_in(&pause, "approvalId") {
        println!("   The agent waits for the human's answer with confirm_operation:");
        demo.send(Category::Execute, "confirm_operation", json!({ "approval_id": approval })).await;
    }

    println!("\n3. Verify: publishing a package needs a code that only the human can see.");
    demo.start("publisher", "release the package").await;
    let pause = demo.step("publisher", "npm publish --access public").await;
    verify(demo, &pause, "verificationId").await;

    println!("\n4. Danger zone: wiping the disk stops the agent until a human verifies.");
    demo.start("wiper", "free some disk space").await;
    let stop =
        demo.step("wiper", "executing shell command: sudo rm -rf / --no-preserve-root").await;
    println!("   Starting over does not help: the block is per agent and survives restarts.");
    demo.send(Category::Execute, "execute_agent", json!({ "element_name": "wiper" })).await;
    verify(demo, &stop, "verificationId").await;
    demo.send(Category::Read, "get_execution_state", json!({ "element_name": "wiper" })).await;

    println!(
        "\nDone. Every decision above is an audit row; `safety-dongle eval \"HINT\"` explains one stage by stage."
    );
}

async fn verify(demo: &Demo, directive: &Value, key: &str) {
    let Some(challenge) = id_in(directive, key) else { return };
    match read_code() {
        Some(code) => {
            demo.send(
                Category::Create,
                "verify_challenge",
                json!({ "challenge_id": challenge, "code": code }),
            )
            .await;
        }
        None => println!(
            "   (No code typed: the agent stays where it is. Run the demo in a terminal to type it.)"
        ),
    }
}

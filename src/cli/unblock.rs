//! `safety-dongle unblock AGENT`: the operator's way out of a hard block
//! from a terminal. It works only at an interactive terminal, commits
//! durably, and audits every attempt.
//!
//! A terminal alone proves little: any agent with a shell can open a
//! pseudo-terminal (`script`, `expect`) and type a name into it. So when a
//! verifier channel other than the terminal is configured, `unblock` has
//! the verifier show a fresh code there (the dongle keeps only its salted
//! hash, in memory) and lifts the block only when that code is typed back
//! within five minutes. Typing the agent's name back remains only for when
//! no such channel can show a code, and is audited as the weaker proof it
//! is (`operator_override`, stage `operator_no_channel`).

use crate::store::records::CodeHash;
use std::{
    io::{BufRead, IsTerminal, Write},
    process::ExitCode,
    time::{Duration, Instant},
};

use verifier_protocol::{Channel, Tier};

use crate::{
    store::{
        Store,
        audit::{self, AuditDecision, AuditEntry, AuditEvent, AuditStage},
        records::{self, BlockRow},
    },
    verify::{
        OverrideRefused, Unblock,
        link::{HumanRequest, Shown, VerifierLink},
        operator_code, operator_override,
    },
};

use super::{UnblockArgs, assemble, runtime, terminal_text::terminal_text};

/// How long the code shown for an unblock may take to be typed back.
const CODE_LIFETIME: Duration = Duration::from_secs(300);

/// A fresh code, shown on `channel`, to be checked against its hash.
struct ShownCode {
    channel: Channel,
    hash: CodeHash,
    shown_at: Instant,
}

pub(super) fn run(args: UnblockArgs) -> ExitCode {
    if !std::io::stdin().is_terminal() {
        eprintln!("safety-dongle: {}", OverrideRefused::NotATerminal);
        return ExitCode::from(1);
    }
    let Some(config) = args.config.load() else {
        return ExitCode::from(1);
    };
    let store = match assemble::open_store(&config) {
        Ok(store) => store,
        Err(message) => {
            eprintln!("safety-dongle: {message}");
            return ExitCode::from(1);
        }
    };
    let agent = args.agent.as_str();
    let block = match store.read(|tx| records::block_of(tx, agent)) {
        Ok(Some(block)) => block,
        Ok(None) => {
            println!("agent '{agent}' is not blocked");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("safety-dongle: {error}");
            return ExitCode::from(1);
        }
    };
    println!("agent '{}' is hard-blocked: {}", terminal_text(agent), terminal_text(&block.reason));
    if let Some(rule) = &block.rule {
        println!("rule: {rule}");
    }
    let (proof, stage) = match show_fresh_code(&config.verifier, &block) {
        Ok(shown) => (typed_code(agent, &shown), AuditStage::OperatorCode),
        Err(why) => {
            println!("No channel other than this terminal can show a code ({why}).");
            println!("Falling back to typing the agent's name: weaker proof, audited as such.");
            (typed_name(agent), AuditStage::OperatorNoChannel)
        }
    };
    match proof {
        Ok(unblock) => lift(&store, &unblock, stage),
        Err(refused) => {
            eprintln!("safety-dongle: {refused}");
            let _ = store.write_durable(|tx| {
                audit::append(
                    tx,
                    &AuditEntry {
                        stage: Some(stage),
                        hint: Some(&refused.to_string()),
                        policy_hash: "-",
                        ..AuditEntry::of(agent, AuditEvent::Unblock, AuditDecision::Refused)
                    },
                )
            });
            ExitCode::from(1)
        }
    }
}

/// Has the verifier show a fresh code for lifting `block` on a channel
/// other than the terminal; why not, if no channel could.
fn show_fresh_code(
    settings: &crate::config::VerifierSettings,
    block: &BlockRow,
) -> Result<ShownCode, String> {
    let link =
        VerifierLink::from_settings(settings).map_err(|unavailable| unavailable.to_string())?;
    let link = link.out_of_band().ok_or("the only channel configured is the terminal")?;
    let runtime = runtime().ok_or("no async runtime")?;
    let id = uuid::Uuid::new_v4().to_string();
    let lifetime_ms = i64::try_from(CODE_LIFETIME.as_millis()).unwrap_or(i64::MAX);
    let expires_at = crate::store::rfc3339(crate::store::now_ms() + lifetime_ms);
    let reason = format!(
        "An operator asked at a terminal to lift the hard block on this agent ({})",
        block.reason
    );
    let action = format!("safety-dongle unblock {}", block.agent);
    let request = HumanRequest {
        id: &id,
        agent: &block.agent,
        tier: Some(Tier::DangerZone),
        reason: &reason,
        action: &action,
        expires_at: &expires_at,
        timeout_secs: CODE_LIFETIME.as_secs(),
    };
    let outcome = runtime.block_on(link.show_code(&request));
    match (outcome.hash, outcome.shown) {
        (Some(hash), Shown::On(channel)) => {
            Ok(ShownCode { channel, hash, shown_at: Instant::now() })
        }
        (None, Shown::On(_)) => Err("the verifier showed a code without sending its hash".into()),
        (_, Shown::Nowhere(errors)) => Err(errors.join("; ")),
    }
}

fn typed_code(agent: &str, shown: &ShownCode) -> Result<Unblock, OverrideRefused> {
    let typed = prompt(&format!(
        "A code was shown on the {} channel. Type it here within {} minutes: ",
        shown.channel.name(),
        CODE_LIFETIME.as_secs() / 60
    ))?;
    if shown.shown_at.elapsed() > CODE_LIFETIME {
        return Err(OverrideRefused::WrongCode);
    }
    operator_code(agent, &shown.hash, &typed, std::io::stdin().is_terminal())
}

fn typed_name(agent: &str) -> Result<Unblock, OverrideRefused> {
    let typed = prompt("Type the agent's name to unblock it: ")?;
    operator_override(agent, &typed, std::io::stdin().is_terminal())
}

/// One line read at the terminal after `question`.
fn prompt(question: &str) -> Result<String, OverrideRefused> {
    print!("{question}");
    let _ = std::io::stdout().flush();
    let mut typed = String::new();
    match std::io::stdin().lock().read_line(&mut typed) {
        Ok(0) | Err(_) => Err(OverrideRefused::NotATerminal),
        Ok(_) => Ok(typed),
    }
}

fn lift(store: &Store, unblock: &Unblock, stage: AuditStage) -> ExitCode {
    let agent = unblock.agent();
    let result = store.write_durable(|tx| {
        let removed = records::remove_block(tx, unblock)?;
        audit::append(
            tx,
            &AuditEntry {
                stage: Some(stage),
                policy_hash: "-",
                ..AuditEntry::of(agent, AuditEvent::Unblock, unblock.resolution().into())
            },
        )?;
        Ok(removed)
    });
    match result {
        Ok(_) => {
            println!("agent '{agent}' unblocked (audited)");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("safety-dongle: {error}");
            ExitCode::from(1)
        }
    }
}

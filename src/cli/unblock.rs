//! `safety-dongle unblock AGENT`: the operator's way out of a hard block
//! when no verification channel can reach a human. It works only at an
//! interactive terminal (a script or an agent cannot drive it), asks for
//! the agent's name to be typed back, commits durably, and is audited.

use std::{
    io::{BufRead, IsTerminal, Write},
    process::ExitCode,
};

use crate::{
    store::{audit::{self, AuditEntry}, records},
    verify::operator_override,
};

use super::UnblockArgs;

pub(super) fn run(args: UnblockArgs) -> ExitCode {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        eprintln!("safety-dongle: unblock works only from an interactive terminal");
        return ExitCode::from(1);
    }
    let Some(store) = args.config.open_store() else {
        return ExitCode::from(1);
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
    println!("agent '{agent}' is hard-blocked: {}", block.reason);
    if let Some(rule) = &block.rule {
        println!("rule: {rule}");
    }
    print!("Type the agent's name to unblock it: ");
    let _ = std::io::stdout().flush();
    let mut typed = String::new();
    if stdin.lock().read_line(&mut typed).is_err() {
        eprintln!("safety-dongle: could not read the confirmation");
        return ExitCode::from(1);
    }
    let unblock = match operator_override(agent, &typed, stdin.is_terminal()) {
        Ok(unblock) => unblock,
        Err(refused) => {
            eprintln!("safety-dongle: {refused}");
            return ExitCode::from(1);
        }
    };
    let result = store.write_durable(|tx| {
        let removed = records::remove_block(tx, &unblock)?;
        audit::append(tx, &AuditEntry { agent, event: "unblock", decision: unblock.resolution(), stage: Some("operator"), policy_hash: "-", ..Default::default() })?;
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

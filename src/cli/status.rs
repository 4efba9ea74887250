//! `safety-dongle status`: what the state database says now — blocked
//! agents, executions not yet finished, challenges waiting for a human, and
//! the downstream servers of every running dongle with their state and
//! tool count, and what each serving dongle has loaded (its policy by
//! hash and files, its adapters, the last change it refused) and since
//! when, with when each last said it is alive, and the central policy
//! version every dongle on this state decides by. The state's health: what
//! keeps it (engine and version), how long a read took, and the audit rows
//! this machine keeps for a shared database; one that cannot be reached is
//! reported with why.

use std::process::ExitCode;

use crate::{
    policy::central::Central,
    store::{
        Spool, central, now_ms,
        owner::{Owner, SILENT_AFTER_MS},
        records, rfc3339,
    },
};

use super::{ConfigArg, terminal_text::terminal_text};

/// How many audit rows this machine keeps for a shared database it could
/// not reach (`store::spool`); `None` for a state that needs none.
fn kept_for_the_database(config: &crate::config::Config) -> Option<usize> {
    match (&config.state, &config.data_dir) {
        (crate::config::StateLocation::Postgres { .. }, Some(dir)) => {
            Some(Spool::in_folder(dir).waiting())
        }
        _ => None,
    }
}

pub(super) fn run(args: ConfigArg) -> ExitCode {
    let Some(config) = args.load() else {
        return ExitCode::from(1);
    };
    let store = match super::assemble::open_store(&config) {
        Ok(store) => store,
        Err(error) => {
            eprintln!("safety-dongle: {error}");
            if let Some(waiting) = kept_for_the_database(&config) {
                eprintln!("audit rows kept on this machine until the database answers: {waiting}");
            }
            return ExitCode::from(1);
        }
    };
    let now = now_ms();
    let state = store.read(|tx| {
        let shared_now = tx.shared_clock_ms()?;
        Ok((
            records::blocks(tx)?,
            records::active_executions(tx)?,
            records::pending_challenges(tx, now)?,
            records::downstreams(tx)?,
            records::loaded(tx)?,
            central::latest(tx)?,
            shared_now,
        ))
    });
    let (blocks, executions, challenges, downstreams, loaded, central, shared_now) = match state {
        Ok(state) => state,
        Err(error) => {
            eprintln!("safety-dongle: {error}");
            return ExitCode::from(1);
        }
    };
    match store.health() {
        Ok(health) => println!(
            "state: {} ({}, a read answered in {:.2} ms)",
            store.location(),
            health.server,
            health.round_trip.as_secs_f64() * 1000.0
        ),
        Err(error) => println!("state: {} (health unknown: {error})", store.location()),
    }
    if let Some(waiting) = kept_for_the_database(&config).filter(|&waiting| waiting > 0) {
        println!(
            "audit rows kept on this machine, to be appended with its next decision: {waiting}"
        );
    }
    match central {
        None => println!("central policy: none (each dongle decides by its own policy files)"),
        Some(row) => {
            let files = Central::from_stored(&row).map_or_else(
                |error| format!("unreadable: {error}"),
                |c| {
                    c.sources
                        .iter()
                        .map(|s| s.path.display().to_string())
                        .collect::<Vec<_>>()
                        .join(" + ")
                },
            );
            println!(
                "central policy: version {} (sha256 {}) from {}, pushed {} from {}",
                row.version,
                row.hash.get(..16.min(row.hash.len())).unwrap_or_default(),
                terminal_text(&files),
                rfc3339(row.pushed_at),
                terminal_text(&row.machine)
            );
        }
    }
    println!("blocked agents: {}", blocks.len());
    for block in &blocks {
        println!(
            "  {}  since {}  challenge {}  {}",
            terminal_text(&block.agent),
            rfc3339(block.blocked_at),
            block.challenge_id,
            terminal_text(&block.reason)
        );
    }
    println!("active executions: {}", executions.len());
    for execution in &executions {
        println!(
            "  {}  {}  {}  step {}/{}  since {}  ({})",
            terminal_text(&execution.agent),
            execution.id,
            execution.status,
            execution.steps,
            execution.max_steps,
            rfc3339(execution.started_at),
            terminal_text(&execution.owner.to_string())
        );
    }
    println!("challenges waiting for a human: {}", challenges.len());
    for challenge in &challenges {
        let expiry = if challenge.durable || challenge.expires_at == i64::MAX {
            "until resolved".to_owned()
        } else {
            format!("until {}", rfc3339(challenge.expires_at))
        };
        println!(
            "  {}  {}  {}  {expiry}  {}",
            terminal_text(&challenge.agent),
            challenge.kind.name(),
            challenge.id,
            terminal_text(&challenge.reason)
        );
    }
    let running: Vec<_> =
        downstreams.iter().filter(|server| server.owner.may_be_running()).collect();
    println!("downstream servers: {}", running.len());
    for server in running {
        let detail =
            server.detail.as_deref().map(|d| format!("  {}", terminal_text(d))).unwrap_or_default();
        println!(
            "  {}  {}  {} tools  since {}  ({}){detail}",
            terminal_text(&server.name),
            server.state,
            server.tools,
            rfc3339(server.updated_at),
            terminal_text(&server.owner.to_string())
        );
    }
    let serving: Vec<_> = loaded.iter().filter(|row| row.owner.may_be_running()).collect();
    let mut owners: Vec<&Owner> = serving.iter().map(|row| &row.owner).collect();
    owners.dedup();
    println!("serving dongles: {}", owners.len());
    for owner in owners {
        let seen = serving
            .iter()
            .filter(|row| &row.owner == owner)
            .map(|row| row.seen_at)
            .max()
            .unwrap_or_default();
        let silent_s = (shared_now - seen).max(0) / 1000;
        let heard = if shared_now - seen > SILENT_AFTER_MS {
            format!("SILENT for {silent_s} s: stopped without saying so, or cut off from the state")
        } else {
            format!("alive {silent_s} s ago")
        };
        println!("  {}  {heard}", terminal_text(&owner.to_string()));
        for row in serving.iter().filter(|row| &row.owner == owner) {
            let (what, name) = match row.kind.as_str() {
                "policy" => ("policy", row.name.get(..16).unwrap_or(&row.name)),
                "refused" => ("refused change", row.name.as_str()),
                _ => (row.kind.as_str(), row.name.as_str()),
            };
            println!(
                "    {what} {}  {}  since {}",
                terminal_text(name),
                terminal_text(&row.detail),
                rfc3339(row.since)
            );
        }
    }
    ExitCode::SUCCESS
}

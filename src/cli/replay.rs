//! `safety-dongle replay --policy NEW.toml`: what a candidate policy would
//! have decided differently over the actions in the audit trail
//! (`lab::replay`): counts per transition and the first rows of each with
//! the old and new deciding rule, or all of it as JSON (`--json`, rows in
//! the shape of `src/lab/explanation.schema.json`). Exit status 1 when any
//! action would be decided more permissively, or on an error; 0 otherwise.
//! Reads the state; never writes it (nor creates it).

use std::process::ExitCode;

use crate::{
    config::CentralPolicy,
    lab::replay::{ReplayOptions, ReplayReport, ReplayRow, replay},
    policy::CompiledPolicy,
    store::{DATABASE_FILE, now_ms},
};

use super::{ReplayArgs, assemble, print_diagnostics, print_json, terminal_text::terminal_text};

pub(super) fn run(args: ReplayArgs) -> ExitCode {
    let candidate = match CompiledPolicy::load(&args.policies, CentralPolicy::default()) {
        Ok(policy) => policy,
        Err(errors) => {
            print_diagnostics(&errors);
            return ExitCode::from(1);
        }
    };
    let Some(config) = args.config.load() else {
        return ExitCode::from(1);
    };
    // Replay reads a trail; it never creates a state where there is none.
    if let Some(data_dir) = &config.data_dir
        && !data_dir.join(DATABASE_FILE).is_file()
    {
        eprintln!("safety-dongle: no audit trail in {}: nothing to replay", data_dir.display());
        return ExitCode::from(1);
    }
    let store = match assemble::open_store(&config) {
        Ok(store) => store,
        Err(error) => {
            eprintln!("safety-dongle: {error}");
            return ExitCode::from(1);
        }
    };
    let since_ms = match &args.since {
        None => 0,
        Some(since) => match humantime::parse_duration(since) {
            Ok(window) => {
                now_ms().saturating_sub(i64::try_from(window.as_millis()).unwrap_or(i64::MAX))
            }
            Err(error) => {
                eprintln!(
                    "safety-dongle: --since {since}: {error} (a duration such as 7d, 12h or 30m)"
                );
                return ExitCode::from(2);
            }
        },
    };
    let options =
        ReplayOptions { since_ms, agent: args.agent.clone(), rows_per_transition: args.rows };
    let report = match replay(&store, &candidate, &options) {
        Ok(report) => report,
        Err(error) => {
            eprintln!("safety-dongle: {error}");
            return ExitCode::from(1);
        }
    };
    if args.json {
        if !print_json(&report, "report") {
            return ExitCode::from(1);
        }
    } else {
        print_report(&report);
    }
    if report.loosens { ExitCode::from(1) } else { ExitCode::SUCCESS }
}

fn print_report(report: &ReplayReport) {
    println!(
        "candidate: {} (sha256 {})",
        report.policy.sources.join(", "),
        report.policy.sha256.get(..16).unwrap_or_default()
    );
    println!(
        "replayed {} of {} recorded actions ({} judged again with the policy that decided them, {} compared with the recorded decision)",
        report.replayed,
        report.rows_read,
        report.compared_with.recorded_policy,
        report.compared_with.recorded_decision
    );
    for (why, count) in &report.not_replayed {
        println!("not replayed: {count} ({why})");
    }
    println!("unchanged: {}", report.unchanged);
    for transition in &report.transitions {
        let direction = if transition.loosens { "LOOSER" } else { "stricter" };
        println!(
            "{} -> {}: {} ({direction})",
            transition.from.name(),
            transition.to.name(),
            transition.count
        );
        for row in &transition.rows {
            print_row(row);
        }
    }
    if report.loosens {
        println!(
            "the candidate decides some actions more permissively: a human should look before it is used"
        );
    }
}

fn print_row(row: &ReplayRow) {
    let rule = |explanation: Option<&crate::lab::explain::Explanation>| match explanation
        .map(|e| &e.decision)
    {
        Some(decision) => match &decision.rule {
            Some(rule) => format!(
                "{} {} '{}' ({}:{})",
                decision.verdict.strictness.name(),
                rule.action,
                rule.pattern,
                rule.file,
                rule.line
            ),
            None => format!("{} at stage {}", decision.verdict.strictness.name(), decision.stage),
        },
        None => format!(
            "{} as recorded{}",
            row.recorded.decision,
            row.recorded.rule.as_deref().map(|r| format!(" by {r}")).unwrap_or_default()
        ),
    };
    println!(
        "  #{} {} {} {}: {}",
        row.seq,
        row.at,
        terminal_text(&row.agent),
        row.event,
        terminal_text(&row.action)
    );
    println!("      before: {}", rule(row.before.as_ref()));
    println!("      after:  {}", rule(Some(&row.after)));
}

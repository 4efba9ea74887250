//! `safety-dongle eval`: run the evaluator on one action and explain the
//! decision: what the action runs (commands, chains, files written,
//! facts, and for a file write given with `--write PATH --content-file F`
//! what the file will run, line by line), then stage by stage; with
//! `--json`, the same as data (`lab::explain`, described by
//! `src/lab/explanation.schema.json`). Reads the policy and the files
//! named, layered on the state's central policy when it has one (as a
//! dongle on that state would decide); changes no state.

use std::{path::PathBuf, process::ExitCode};

use crate::{
    analysis::{Analysis, Change, FileWrite, OnDisk, WorkingFolder},
    lab::explain::Explanation,
    policy::{CompiledPolicy, PolicySource},
    safety::evaluator::{Outcome, StepFacts, Verdict, evaluate_step},
};

use super::{EvalArgs, print_diagnostics, print_json};

pub(super) fn run(args: EvalArgs) -> ExitCode {
    let Some(mut config) = args.config.load() else {
        return ExitCode::from(1);
    };
    if !args.policies.is_empty() {
        config.policies = args.policies;
    }
    let central = match super::assemble::central_policy(&config) {
        Ok(central) => central,
        Err(error) => {
            eprintln!("safety-dongle: the central policy cannot be read: {error}");
            return ExitCode::from(1);
        }
    };
    let policy = match PolicySource::read_all(&config.policies)
        .and_then(|local| CompiledPolicy::layered(central.as_ref(), &local, config.central_policy))
    {
        Ok(policy) => policy,
        Err(errors) => {
            print_diagnostics(&errors);
            return ExitCode::from(1);
        }
    };
    let outcome = match args.outcome.as_deref().map(|o| (o, Outcome::parse(o))) {
        None => None,
        Some((_, Some(outcome))) => Some(outcome),
        Some((other, None)) => {
            eprintln!(
                "safety-dongle: unknown outcome '{other}' (expected success, failure or skipped)"
            );
            return ExitCode::from(2);
        }
    };
    let settings = policy.settings_for(&args.agent);
    let folder = match &args.cwd {
        Some(cwd) => WorkingFolder::for_this_user(cwd),
        None => WorkingFolder::Project,
    };
    let write = match (&args.write, &args.content_file) {
        (Some(path), Some(content_file)) => {
            match std::fs::read(content_file).map(String::from_utf8) {
                Ok(Ok(content)) => {
                    Some(FileWrite { path: path.clone(), change: Change::Whole(content) })
                }
                Ok(Err(_)) => {
                    eprintln!("safety-dongle: {} is not UTF-8 text", content_file.display());
                    return ExitCode::from(2);
                }
                Err(error) => {
                    eprintln!("safety-dongle: cannot read {}: {error}", content_file.display());
                    return ExitCode::from(2);
                }
            }
        }
        _ => None,
    };
    let hint = match (&args.hint, &write) {
        (Some(hint), _) => hint.clone(),
        (None, Some(write)) => format!("write_file {}", write.path),
        (None, None) => String::new(),
    };
    // The file a write changes is read as it is now: relative paths from
    // --cwd, or from where eval runs.
    let base = args.cwd.as_ref().map(PathBuf::from).or_else(|| std::env::current_dir().ok());
    let files = OnDisk::new(base);
    let facts = StepFacts {
        agent: &args.agent,
        hint: &hint,
        outcome,
        step: args.step,
        max_steps: settings.max_steps,
        agent_risk: None,
        folder: &folder,
        writes: write.as_slice(),
        files: &files,
    };
    let evaluation = evaluate_step(&policy, &facts);
    if args.json {
        let printed =
            print_json(&Explanation::new(&policy, &args.agent, &hint, &evaluation), "explanation");
        return if printed { ExitCode::SUCCESS } else { ExitCode::from(1) };
    }

    println!(
        "policy: {} (sha256 {})",
        policy.provenance(),
        policy.hash().get(..16).unwrap_or_default()
    );
    let sections = policy.sections_for(&settings);
    println!(
        "agent:  {} (maxAutonomousSteps {}, riskTolerance {}{})",
        args.agent,
        settings.max_steps,
        settings.tolerance.name(),
        if sections.is_empty() {
            String::new()
        } else {
            format!(", sections {}", sections.join(", "))
        }
    );
    match &evaluation.analysis {
        Some(analysis) => explain(analysis),
        None => println!("runs:   nothing analysed: {} bytes is too long", hint.len()),
    }
    for report in &evaluation.trace {
        let verdict = match report.decided.as_ref().map(|d| d.verdict) {
            None => "pass".to_owned(),
            Some(verdict) => verdict_name(verdict).to_uppercase(),
        };
        println!(
            "stage {} {:<16} {} -> {verdict}",
            report.stage.number(),
            report.stage.name(),
            report.summary
        );
    }
    println!(
        "decision: {} (risk score {}, tier {})",
        verdict_name(evaluation.verdict),
        evaluation.score,
        evaluation.tier.name()
    );
    if let Some(reason) = &evaluation.reason {
        println!("reason: {reason}");
    }
    for factor in &evaluation.factors {
        println!("  - {factor}");
    }
    ExitCode::SUCCESS
}

/// What the analysis found: each command with where it came from, the
/// chains, files and facts.
fn explain(analysis: &Analysis) {
    for path in &analysis.planted {
        println!("judged: {path} by what it will run");
    }
    for command in &analysis.commands {
        let origins: String = command.origins().map(|origin| format!("   ({origin})")).collect();
        println!("runs:   {}{origins}", command.argv.join(" "));
    }
    for stages in &analysis.feeds {
        let names: Vec<String> = stages
            .iter()
            .map(|s| {
                s.iter()
                    .filter_map(|&i| analysis.commands.get(i))
                    .map(|command| command.program.clone())
                    .collect::<Vec<_>>()
                    .join("+")
            })
            .collect();
        println!("chain:  {}", names.join(" | "));
    }
    if !analysis.writes.is_empty() {
        println!("writes: {}", analysis.writes.join(", "));
    }
    for (fact, detail) in &analysis.facts {
        println!("fact:   {} ({detail})", fact.name());
    }
}

fn verdict_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Continue => "continue",
        Verdict::Pause(_) => "pause",
        Verdict::Stop => "stop",
    }
}

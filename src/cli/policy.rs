//! `safety-dongle policy diff OLD NEW`: the settings and rules one policy
//! file adds, removes and changes against another, and the examples of
//! both whose decision changes (`lab::diff`); `--json` for scripts.
//!
//! `safety-dongle policy push FILE...`: the files, checked as `check`
//! checks them (every error located, every example decided as written),
//! become the next version of the central policy in the state
//! (`store::central`, `policy::central`). The push is audited and
//! broadcast to agents; a push of the version already in force changes
//! nothing. Files are kept by name, not by path, so the version's hash
//! does not depend on where the pusher keeps them.

use std::{path::Path, process::ExitCode};

use serde_json::json;

use crate::{
    config::CentralPolicy,
    lab::{
        self,
        diff::{PolicyDiff, diff},
    },
    policy::{CompiledPolicy, PolicySource},
    store::{
        audit::{self, AuditDecision, AuditEntry, AuditEvent, AuditStage},
        central, now_ms,
        owner::this_machine,
        records::{self, EventRow, NotificationKind},
    },
};

use super::{PolicyDiffArgs, PolicyPushArgs, print_diagnostics, print_json};

pub(super) fn push(args: PolicyPushArgs) -> ExitCode {
    let Some(config) = args.config.load() else {
        return ExitCode::from(1);
    };
    let sources = match PolicySource::read_all(&args.files) {
        Ok(sources) => sources
            .into_iter()
            .map(|source| PolicySource {
                path: Path::new(source.path.file_name().unwrap_or(source.path.as_os_str()))
                    .to_path_buf(),
                ..source
            })
            .collect::<Vec<_>>(),
        Err(errors) => {
            print_diagnostics(&errors);
            return ExitCode::from(1);
        }
    };
    let policy = match CompiledPolicy::compile(&sources) {
        Ok(policy) => policy,
        Err(errors) => {
            print_diagnostics(&errors);
            return ExitCode::from(1);
        }
    };
    let failures = lab::examples::check(&policy);
    if !failures.is_empty() {
        print_diagnostics(&failures);
        eprintln!(
            "safety-dongle: not pushed: {} example(s) are not decided as written",
            failures.len()
        );
        return ExitCode::from(1);
    }
    let Some(store) = super::assemble::open_store(&config)
        .map_err(|error| eprintln!("safety-dongle: {error}"))
        .ok()
    else {
        return ExitCode::from(1);
    };
    let (hash, files) = (policy.hash(), policy.sources().join(" + "));
    let pushed = store.write(|tx| {
        if let Some(latest) = central::latest(tx)?.filter(|latest| latest.hash == hash) {
            return Ok((latest.version, false));
        }
        let now = now_ms();
        let version = central::push(tx, hash, &policy.stored_sources(), this_machine(), now)?;
        let message = format!(
            "The central policy is now version {version} (sha256 {}, from {files}), pushed from {}",
            hash.get(..16).unwrap_or_default(),
            this_machine()
        );
        audit::append(
            tx,
            &AuditEntry {
                hint: Some(&message),
                stage: Some(AuditStage::Central),
                policy_hash: hash,
                ..AuditEntry::of("", AuditEvent::Policy, AuditDecision::Pushed)
            },
        )?;
        let metadata =
            json!({ "part": "central policy", "version": version, "sha256": hash }).to_string();
        records::insert_event(
            tx,
            &EventRow {
                id: 0,
                agent: None,
                kind: NotificationKind::Status,
                message,
                metadata,
                created_at: now,
            },
        )?;
        Ok((version, true))
    });
    match pushed {
        Ok((version, true)) => println!(
            "pushed central policy version {version} (sha256 {hash}) from {files} to {}",
            store.location()
        ),
        Ok((version, false)) => println!(
            "central policy version {version} already is {files} (sha256 {hash}); nothing pushed"
        ),
        Err(error) => {
            eprintln!("safety-dongle: not pushed: {error}");
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}

pub(super) fn diff_files(args: PolicyDiffArgs) -> ExitCode {
    let load = |path: &std::path::PathBuf| {
        CompiledPolicy::load(std::slice::from_ref(path), CentralPolicy::default())
            .map_err(|errors| print_diagnostics(&errors))
            .ok()
    };
    let (Some(old), Some(new)) = (load(&args.old), load(&args.new)) else {
        return ExitCode::from(1);
    };
    let found = diff(&old, &new);
    if args.json {
        if !print_json(&found, "diff") {
            return ExitCode::from(1);
        }
    } else {
        print_diff(&found);
    }
    ExitCode::SUCCESS
}

fn print_diff(found: &PolicyDiff) {
    println!(
        "old: {} (sha256 {})",
        found.old.sources.join(", "),
        found.old.sha256.get(..16).unwrap_or_default()
    );
    println!(
        "new: {} (sha256 {})",
        found.new.sources.join(", "),
        found.new.sha256.get(..16).unwrap_or_default()
    );
    let none = || "none".to_owned();
    for change in &found.settings {
        println!(
            "setting  {}: {} -> {}",
            change.setting,
            change.old.clone().unwrap_or_else(none),
            change.new.clone().unwrap_or_else(none)
        );
    }
    let rule = |r: &crate::lab::explain::RuleRef| {
        let section =
            r.agents.as_deref().map(|glob| format!(" [agents.\"{glob}\"]")).unwrap_or_default();
        format!("{} '{}'{section} ({}:{})", r.action, r.pattern, r.file, r.line)
    };
    for added in &found.added {
        println!("added    {}", rule(added));
    }
    for removed in &found.removed {
        println!("removed  {}", rule(removed));
    }
    for changed in &found.changed {
        println!(
            "changed  {} -> {}: {}",
            rule(&changed.old),
            rule(&changed.new),
            changed.what.join(", ")
        );
    }
    println!(
        "examples: {} judged by both, {} decided differently",
        found.examples_judged,
        found.examples.len()
    );
    for example in &found.examples {
        let decided = |d: &crate::lab::explain::Decision| match &d.rule {
            Some(r) => format!("{} by {}", d.verdict.strictness.name(), rule(r)),
            None => format!("{} at stage {}", d.verdict.strictness.name(), d.stage),
        };
        let direction = if example.loosens { "LOOSER" } else { "stricter" };
        println!(
            "  '{}' (with {}): {} -> {} ({direction})",
            example.action,
            rule(&example.written_with),
            decided(&example.old),
            decided(&example.new)
        );
    }
}

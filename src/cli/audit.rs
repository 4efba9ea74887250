//! `safety-dongle audit`: print the audit log (each row with the first 16
//! hex digits of the policy that decided), or with `verify` recompute its
//! hash chain (exit 1 if broken).

use std::process::ExitCode;

use crate::store::{audit, owner::this_machine, rfc3339};

use super::{AuditArgs, terminal_text::terminal_text};

pub(super) fn run(args: AuditArgs) -> ExitCode {
    let Some(store) = args.config.open_store() else {
        return ExitCode::from(1);
    };
    if args.action.is_some() {
        return match store.read(audit::verify) {
            Ok(report) if report.broken_at.is_none() => {
                println!("audit chain ok: {} rows", report.rows);
                ExitCode::SUCCESS
            }
            Ok(report) => {
                println!(
                    "audit chain BROKEN at row {} ({} rows before it check out)",
                    report.broken_at.unwrap_or_default(),
                    report.rows
                );
                ExitCode::from(1)
            }
            Err(error) => {
                eprintln!("safety-dongle: {error}");
                ExitCode::from(1)
            }
        };
    }
    match store.read(|tx| audit::rows(tx, args.agent.as_deref(), args.limit)) {
        Ok(rows) => {
            for row in rows {
                println!(
                    "{:>6}  {}  {}  {}  {}{}{}{}{}{}",
                    row.seq,
                    rfc3339(row.at),
                    terminal_text(&row.agent),
                    row.event,
                    row.decision,
                    row.stage.map(|s| format!("  [{s}]")).unwrap_or_default(),
                    row.rule.map(|r| format!("  {}", terminal_text(&r))).unwrap_or_default(),
                    row.hint.map(|h| format!("  {h:?}")).unwrap_or_default(),
                    row.machine
                        .filter(|machine| machine != this_machine())
                        .map(|machine| format!("  on {}", terminal_text(&machine)))
                        .unwrap_or_default(),
                    row.policy_hash
                        .get(..16)
                        .map(|hash| format!("  policy {hash}"))
                        .unwrap_or_default(),
                );
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("safety-dongle: {error}");
            ExitCode::from(1)
        }
    }
}

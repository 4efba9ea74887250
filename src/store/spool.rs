//! Audit rows kept on this machine while the shared database cannot be
//! reached, so none is lost: each decision refused for want of the
//! database is written here (one JSON line, flushed to disk before the
//! refusal is answered), and when the database answers again the lines are
//! appended to the chain in order, each exactly once (its id is recorded
//! with it in the same transaction), then the file is emptied.
//!
//! The file sits in the data folder, readable by its user alone. Processes
//! sharing the folder take the file's lock to write or drain it. Hints are
//! redacted before they are written, as they are before any audit row is.

use std::{
    fs::{File, OpenOptions},
    io::{BufReader, Read, Seek, Write},
    path::PathBuf,
};

use serde::{Deserialize, Serialize};

use crate::verify::redact::redact_text;

use super::{
    StoreError,
    audit::{self, AuditEntry},
    now_ms,
    sql::{Tx, values},
};

pub const SPOOL_FILE: &str = "audit-spool.jsonl";

/// One audit row waiting for the database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Spooled {
    id: String,
    at: i64,
    agent: String,
    execution_id: Option<String>,
    session_id: Option<String>,
    event: String,
    hint: Option<String>,
    decision: String,
    stage: Option<String>,
    rule: Option<String>,
    policy_hash: String,
}

/// The spool file of one data folder.
#[derive(Debug, Clone)]
pub struct Spool {
    path: PathBuf,
}

impl Spool {
    pub fn in_folder(data_dir: &std::path::Path) -> Self {
        Self { path: data_dir.join(SPOOL_FILE) }
    }

    /// Keeps `entry` until the database answers; on disk when this returns.
    pub fn keep(&self, entry: &AuditEntry<'_>) -> Result<(), StoreError> {
        let spooled = Spooled {
            id: uuid::Uuid::new_v4().to_string(),
            at: now_ms(),
            agent: entry.agent.to_owned(),
            execution_id: entry.execution_id.map(str::to_owned),
            session_id: entry.session_id.map(str::to_owned),
            event: entry.event.to_owned(),
            hint: entry.hint.map(|hint| redact_text(hint).into_owned()),
            decision: entry.decision.to_owned(),
            stage: entry.stage.map(str::to_owned),
            rule: entry.rule.map(str::to_owned),
            policy_hash: entry.policy_hash.to_owned(),
        };
        let mut line = serde_json::to_string(&spooled).map_err(|_| StoreError::Inconsistent("an audit row could not be written as JSON"))?;
        line.push('\n');
        let mut file = self.open()?;
        file.lock().map_err(|error| self.failed(&error))?;
        file.write_all(line.as_bytes()).and_then(|()| file.sync_data()).map_err(|error| self.failed(&error))
    }

    /// Whether rows are waiting.
    pub fn is_waiting(&self) -> bool {
        std::fs::metadata(&self.path).is_ok_and(|metadata| metadata.len() > 0)
    }

    /// How many rows are waiting (complete lines; read without the lock,
    /// for a report).
    pub fn waiting(&self) -> usize {
        std::fs::read_to_string(&self.path).map_or(0, |text| rows_of(&text).count())
    }

    /// Appends the waiting rows to the chain in `tx`, each once; `emptied`
    /// then empties the file, once `tx` has committed.
    pub fn drain(&self, tx: &Tx<'_>) -> Result<Drained, StoreError> {
        let file = self.open()?;
        file.lock().map_err(|error| self.failed(&error))?;
        let mut text = String::new();
        BufReader::new(&file).read_to_string(&mut text).map_err(|error| self.failed(&error))?;
        let mut appended = 0;
        for line in rows_of(&text) {
            let row: Spooled = serde_json::from_str(line).map_err(|_| StoreError::Inconsistent("a line of the audit spool is not a spooled row"))?;
            if tx.execute("INSERT INTO spooled (id) VALUES (?1) ON CONFLICT (id) DO NOTHING", values![&row.id])? == 0 {
                continue;
            }
            let entry = AuditEntry {
                agent: &row.agent,
                execution_id: row.execution_id.as_deref(),
                session_id: row.session_id.as_deref(),
                event: &row.event,
                hint: row.hint.as_deref(),
                decision: &row.decision,
                stage: row.stage.as_deref(),
                rule: row.rule.as_deref(),
                policy_hash: &row.policy_hash,
            };
            audit::append_at(tx, &entry, row.at)?;
            appended += 1;
        }
        Ok(Drained { file, appended })
    }

    fn open(&self) -> Result<File, StoreError> {
        let mut options = OpenOptions::new();
        options.read(true).append(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(&self.path).map_err(|error| self.failed(&error))
    }

    fn failed(&self, error: &std::io::Error) -> StoreError {
        StoreError::Unavailable(format!("the audit spool {}: {}", self.path.display(), crate::diagnostics::io_reason(error)))
    }
}

/// The lines of the spool's `text` that hold rows. A last line without its
/// newline is a write cut short by a crash: its refusal was never answered
/// (each line is on disk before its answer), so it is left out.
fn rows_of(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive('\n').filter(|line| line.ends_with('\n') && !line.trim().is_empty())
}

/// The spool, still locked, after its rows went into a transaction.
#[must_use = "the spool is emptied only once the transaction has committed"]
pub struct Drained {
    file: File,
    pub appended: usize,
}

impl Drained {
    /// Empties the spool: its rows are in the chain.
    pub fn emptied(mut self) -> Result<(), StoreError> {
        self.file.set_len(0).and_then(|()| self.file.rewind()).and_then(|()| self.file.sync_data()).map_err(|error| StoreError::Unavailable(format!("the audit spool could not be emptied: {error}")))
    }
}

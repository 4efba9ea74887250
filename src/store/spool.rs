//! Audit rows kept on this machine while the shared database cannot be
//! reached, so none is lost: each decision refused for want of the
//! database is written here (one JSON line, flushed to disk before the
//! refusal is answered), and when the database answers again the lines are
//! appended to the chain in order, each exactly once (its id is recorded
//! with it in the same transaction), then the file is emptied.
//!
//! One bad line never holds the others back: a line that is not a row (a
//! write cut short by a crash, a corrupted file) or that the database
//! refuses is moved, as it was, to `audit-spool.set-aside` beside the
//! spool, and an audit row in the same transaction says so; every other
//! line goes in. Each append starts on a line of its own, so a line cut
//! short cannot swallow the next one.
//!
//! The file sits in the data folder, readable by its user alone. Processes
//! sharing the folder take the file's lock to write or drain it. Hints are
//! redacted before they are written, as they are before any audit row is.

use std::{
    fs::{File, OpenOptions},
    io::{Read, Seek, SeekFrom, Write},
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use crate::redact::redact_text;

use super::{
    StoreError,
    audit::{self, AuditDecision, AuditEntry, AuditEvent, AuditStage},
    now_ms,
    sql::{Tx, values},
};

pub const SPOOL_FILE: &str = "audit-spool.jsonl";
/// Where lines that could not be appended are kept, as they were.
pub const SET_ASIDE_FILE: &str = "audit-spool.set-aside";

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
    set_aside: PathBuf,
}

impl Spool {
    pub fn in_folder(data_dir: &Path) -> Self {
        Self { path: data_dir.join(SPOOL_FILE), set_aside: data_dir.join(SET_ASIDE_FILE) }
    }

    /// Keeps `entry` until the database answers; on disk when this returns.
    pub fn keep(&self, entry: &AuditEntry<'_>) -> Result<(), StoreError> {
        let spooled = Spooled {
            id: uuid::Uuid::new_v4().to_string(),
            at: now_ms(),
            agent: entry.agent.to_owned(),
            execution_id: entry.execution_id.map(str::to_owned),
            session_id: entry.session_id.map(str::to_owned),
            event: entry.event.name().to_owned(),
            hint: entry.hint.map(|hint| redact_text(hint).into_owned()),
            decision: entry.decision.name().to_owned(),
            stage: entry.stage.map(|stage| stage.name().to_owned()),
            rule: entry.rule.map(str::to_owned),
            policy_hash: entry.policy_hash.to_owned(),
        };
        let mut line = serde_json::to_string(&spooled)
            .map_err(|_| StoreError::Inconsistent("an audit row could not be written as JSON"))?;
        line.push('\n');
        append_lines(&self.path, line.as_bytes())
    }

    /// Whether rows are waiting.
    pub fn is_waiting(&self) -> bool {
        std::fs::metadata(&self.path).is_ok_and(|metadata| metadata.len() > 0)
    }

    /// How many rows are waiting (complete lines; read without the lock,
    /// for a report).
    pub fn waiting(&self) -> usize {
        std::fs::read(&self.path)
            .map_or(0, |bytes| lines_of(&bytes).filter(|line| line.ends_with(b"\n")).count())
    }

    /// Appends the waiting rows to the chain in `tx`, each once, and sets
    /// aside (audited) every line that is no row or that the database
    /// refuses; `emptied` then keeps those lines beside and empties the
    /// file, once `tx` has committed.
    pub fn drain(&self, tx: &Tx<'_>) -> Result<Drained, StoreError> {
        let mut file = open_private(&self.path)?;
        file.lock().map_err(|error| failed(&self.path, &error))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|error| failed(&self.path, &error))?;
        let mut drained =
            Drained { file, set_aside: (self.set_aside.clone(), Vec::new()), appended: 0 };
        for (number, line) in lines_of(&bytes).enumerate() {
            let row = row_of(line);
            let why = match row.as_ref().map_err(Clone::clone).and_then(entry_of) {
                Err(why) => why,
                Ok((id, at, entry)) => match tx.apart(|tx| append_once(tx, id, &entry, at))? {
                    Ok(appended) => {
                        drained.appended += usize::from(appended);
                        continue;
                    }
                    Err(refused) => refused.to_string(),
                },
            };
            let hint = format!(
                "line {} of {} could not be appended ({why}); it is kept as it was in {}",
                number + 1,
                self.path.display(),
                self.set_aside.display()
            );
            tracing::error!("{hint}");
            audit::append(
                tx,
                &AuditEntry {
                    hint: Some(&hint),
                    stage: Some(AuditStage::State),
                    policy_hash: "-",
                    ..AuditEntry::of("", AuditEvent::Spool, AuditDecision::SetAside)
                },
            )?;
            drained.set_aside.1.push(line.to_vec());
        }
        Ok(drained)
    }
}

/// The row a spool line holds, or why it holds none.
fn row_of(line: &[u8]) -> Result<Spooled, String> {
    if !line.ends_with(b"\n") {
        return Err("the line was cut short, as by a crash while it was written".into());
    }
    serde_json::from_slice(line).map_err(|error| format!("it is not a spooled audit row: {error}"))
}

/// A spooled row's id, time and entry, or which of its words this
/// version does not write.
fn entry_of(row: &Spooled) -> Result<(&str, i64, AuditEntry<'_>), String> {
    fn word<T>(parse: fn(&str) -> Option<T>, text: &str) -> Result<T, String> {
        parse(text).ok_or_else(|| format!("its word '{text}' is not one this version writes"))
    }
    let entry = AuditEntry {
        agent: &row.agent,
        execution_id: row.execution_id.as_deref(),
        session_id: row.session_id.as_deref(),
        event: word(AuditEvent::parse, &row.event)?,
        hint: row.hint.as_deref(),
        decision: word(AuditDecision::parse, &row.decision)?,
        stage: row.stage.as_deref().map(|stage| word(AuditStage::parse, stage)).transpose()?,
        rule: row.rule.as_deref(),
        policy_hash: &row.policy_hash,
    };
    Ok((&row.id, row.at, entry))
}

/// Appends the row spooled as `id` unless it was appended before; says
/// whether it was.
fn append_once(tx: &Tx<'_>, id: &str, entry: &AuditEntry<'_>, at: i64) -> Result<bool, StoreError> {
    if tx
        .execute("INSERT INTO spooled (id) VALUES (?1) ON CONFLICT (id) DO NOTHING", values![id])?
        == 0
    {
        return Ok(false);
    }
    audit::append_at(tx, entry, at)?;
    Ok(true)
}

/// Opens `path` for appending (created readable by its user alone).
fn open_private(path: &Path) -> Result<File, StoreError> {
    let mut options = OpenOptions::new();
    options.read(true).append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path).map_err(|error| failed(path, &error))
}

fn failed(path: &Path, error: &std::io::Error) -> StoreError {
    StoreError::Unavailable(format!(
        "the audit spool {}: {}",
        path.display(),
        crate::diagnostics::io_reason(error)
    ))
}

/// Appends `lines` (each ending with a newline) to the file at `path`
/// under its lock, starting on a line of its own; on disk when this
/// returns.
fn append_lines(path: &Path, lines: &[u8]) -> Result<(), StoreError> {
    let mut file = open_private(path)?;
    let appended = file.lock().and_then(|()| {
        if !ends_a_line(&mut file)? {
            file.write_all(b"\n")?;
        }
        file.write_all(lines)?;
        file.sync_data()
    });
    appended.map_err(|error| failed(path, &error))
}

/// Whether `file` is empty or ends with a newline, so an append starts a
/// line of its own.
fn ends_a_line(file: &mut File) -> std::io::Result<bool> {
    if file.metadata()?.len() == 0 {
        return Ok(true);
    }
    let mut last = [0];
    file.seek(SeekFrom::End(-1))?;
    file.read_exact(&mut last)?;
    Ok(last == *b"\n")
}

/// The non-blank lines of the spool's bytes, each with its newline; the
/// last one lacks it when its write was cut short.
fn lines_of(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split_inclusive(|byte| *byte == b'\n').filter(|line| !line.trim_ascii().is_empty())
}

/// The spool, still locked, after its rows went into a transaction.
#[must_use = "the spool is emptied only once the transaction has committed"]
pub struct Drained {
    file: File,
    /// The set-aside file, and the lines to keep there.
    set_aside: (PathBuf, Vec<Vec<u8>>),
    pub appended: usize,
}

impl Drained {
    /// Keeps the lines set aside in their file (on disk before the spool
    /// loses them), then empties the spool: its rows are in the chain.
    pub fn emptied(mut self) -> Result<(), StoreError> {
        let (path, lines) = &self.set_aside;
        if !lines.is_empty() {
            let mut text = Vec::new();
            for line in lines {
                text.extend_from_slice(line);
                if !line.ends_with(b"\n") {
                    text.push(b'\n');
                }
            }
            append_lines(path, &text)?;
        }
        self.file
            .set_len(0)
            .and_then(|()| self.file.rewind())
            .and_then(|()| self.file.sync_data())
            .map_err(|error| {
                StoreError::Unavailable(format!("the audit spool could not be emptied: {error}"))
            })
    }
}

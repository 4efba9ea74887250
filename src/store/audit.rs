//! The audit log: one append-only, hash-chained row per evaluation and per
//! state change, with the decision's provenance.
//!
//! Each row's hash covers the previous row's hash and every field of the
//! row, length-prefixed, so changing, inserting or removing a row breaks
//! every later hash; triggers refuse UPDATE and DELETE outright. Hints
//! are stored with code-shaped text redacted. What a
//! chain cannot show is the loss of its newest rows: `verify` reports the
//! count so it can be compared with what was expected.
//!
//! Beside the chain, the text of every policy the rows name by hash is
//! kept once (`policy_versions`), so a recorded action can be judged again
//! with the policy that decided it.

use rusqlite::{OptionalExtension, Transaction, params};
use sha2::{Digest, Sha256};

use crate::{policy::hex, verify::redact::redact_text};

use super::{StoreError, now_ms};

/// The `prev_hash` of the first row.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One row to append.
#[derive(Debug, Clone, Copy, Default)]
pub struct AuditEntry<'a> {
    pub agent: &'a str,
    pub execution_id: Option<&'a str>,
    pub session_id: Option<&'a str>,
    /// What happened: `step`, `execute`, `complete`, `abort`, `unblock`, …
    pub event: &'a str,
    pub hint: Option<&'a str>,
    /// `continue`, `pause`, `stop`, `refused`, …
    pub decision: &'a str,
    pub stage: Option<&'a str>,
    pub rule: Option<&'a str>,
    pub policy_hash: &'a str,
}

/// A stored row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    pub seq: i64,
    pub at: i64,
    pub agent: String,
    pub execution_id: Option<String>,
    pub session_id: Option<String>,
    pub event: String,
    pub hint: Option<String>,
    pub decision: String,
    pub stage: Option<String>,
    pub rule: Option<String>,
    pub policy_hash: String,
    pub prev_hash: String,
    pub hash: String,
}

fn row_hash(prev: &str, seq: i64, at: i64, entry: &AuditEntry<'_>) -> String {
    let mut hasher = Sha256::new();
    let mut field = |value: Option<&str>| match value {
        Some(text) => {
            hasher.update((text.len() as u64).to_le_bytes());
            hasher.update(text.as_bytes());
        }
        None => hasher.update(u64::MAX.to_le_bytes()),
    };
    field(Some(prev));
    field(Some(&seq.to_string()));
    field(Some(&at.to_string()));
    field(Some(entry.agent));
    field(entry.execution_id);
    field(entry.session_id);
    field(Some(entry.event));
    field(entry.hint);
    field(Some(entry.decision));
    field(entry.stage);
    field(entry.rule);
    field(Some(entry.policy_hash));
    hex(&hasher.finalize())
}

/// Appends a row in the caller's (write) transaction; returns its `seq`.
pub fn append(tx: &Transaction<'_>, entry: &AuditEntry<'_>) -> Result<i64, StoreError> {
    let (last_seq, prev): (i64, String) = tx
        .prepare_cached("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1")?
        .query_row([], |row| Ok((row.get(0)?, row.get(1)?)))
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok((0, GENESIS.to_owned())),
            other => Err(other),
        })?;
    let seq = last_seq + 1;
    let at = now_ms();
    // The last line of defence: whatever path an action took, no
    // code-shaped text is stored (see `verify::redact`).
    let hint = entry.hint.map(redact_text);
    let entry = &AuditEntry { hint: hint.as_deref(), ..*entry };
    let hash = row_hash(&prev, seq, at, entry);
    tx.prepare_cached(
        "INSERT INTO audit (seq, at, agent, execution_id, session_id, event, hint, decision, stage, rule, policy_hash, prev_hash, hash) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        seq, at, entry.agent, entry.execution_id, entry.session_id, entry.event, entry.hint, entry.decision,
        entry.stage, entry.rule, entry.policy_hash, prev, hash
    ])?;
    Ok(seq)
}

/// Rows in order, optionally for one agent, at most `limit` of the newest.
pub fn rows(tx: &Transaction<'_>, agent: Option<&str>, limit: usize) -> Result<Vec<AuditRow>, StoreError> {
    let mut statement = tx.prepare_cached(
        "SELECT seq, at, agent, execution_id, session_id, event, hint, decision, stage, rule, policy_hash, prev_hash, hash \
         FROM audit WHERE ?1 IS NULL OR agent = ?1 ORDER BY seq DESC LIMIT ?2",
    )?;
    let mut rows = statement.query_map(params![agent, i64::try_from(limit).unwrap_or(i64::MAX)], row_of)?.collect::<Result<Vec<_>, _>>()?;
    rows.reverse();
    Ok(rows)
}

/// Keeps the sources (as JSON) of the policy whose hash audit rows name,
/// once.
pub fn remember_policy(tx: &Transaction<'_>, hash: &str, sources: &str) -> Result<(), StoreError> {
    tx.prepare_cached("INSERT OR IGNORE INTO policy_versions (hash, sources, first_used) VALUES (?1, ?2, ?3)")?.execute(params![hash, sources, now_ms()])?;
    Ok(())
}

/// Whether the policy with this hash is kept.
pub fn knows_policy(tx: &Transaction<'_>, hash: &str) -> Result<bool, StoreError> {
    Ok(tx.prepare_cached("SELECT 1 FROM policy_versions WHERE hash = ?1")?.exists([hash])?)
}

/// The sources (as JSON) of the policy with this hash, if kept.
pub fn policy_sources(tx: &Transaction<'_>, hash: &str) -> Result<Option<String>, StoreError> {
    Ok(tx.prepare_cached("SELECT sources FROM policy_versions WHERE hash = ?1")?.query_row([hash], |row| row.get(0)).optional()?)
}

/// The rows of actions the policy judged or could have judged (steps,
/// hooked and proxied calls) from `since` (ms) on, optionally for one
/// agent, in order.
pub fn actions_since(tx: &Transaction<'_>, since: i64, agent: Option<&str>) -> Result<Vec<AuditRow>, StoreError> {
    let mut statement = tx.prepare_cached(
        "SELECT seq, at, agent, execution_id, session_id, event, hint, decision, stage, rule, policy_hash, prev_hash, hash \
         FROM audit WHERE event IN ('step', 'gate') AND at >= ?1 AND (?2 IS NULL OR agent = ?2) ORDER BY seq",
    )?;
    let rows = statement.query_map(params![since, agent], row_of)?.collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

fn row_of(row: &rusqlite::Row<'_>) -> rusqlite::Result<AuditRow> {
    Ok(AuditRow {
        seq: row.get(0)?,
        at: row.get(1)?,
        agent: row.get(2)?,
        execution_id: row.get(3)?,
        session_id: row.get(4)?,
        event: row.get(5)?,
        hint: row.get(6)?,
        decision: row.get(7)?,
        stage: row.get(8)?,
        rule: row.get(9)?,
        policy_hash: row.get(10)?,
        prev_hash: row.get(11)?,
        hash: row.get(12)?,
    })
}

/// The result of checking the whole chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainReport {
    pub rows: u64,
    /// The first row whose hash or link does not check out.
    pub broken_at: Option<i64>,
}

/// Recomputes every hash and link, in order.
pub fn verify(tx: &Transaction<'_>) -> Result<ChainReport, StoreError> {
    let mut statement = tx.prepare(
        "SELECT seq, at, agent, execution_id, session_id, event, hint, decision, stage, rule, policy_hash, prev_hash, hash \
         FROM audit ORDER BY seq",
    )?;
    let mut rows = statement.query([])?;
    let mut expected_prev = GENESIS.to_owned();
    let mut expected_seq = 1;
    let mut count = 0;
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let at: i64 = row.get(1)?;
        let (agent, execution_id, session_id): (String, Option<String>, Option<String>) = (row.get(2)?, row.get(3)?, row.get(4)?);
        let (event, hint, decision): (String, Option<String>, String) = (row.get(5)?, row.get(6)?, row.get(7)?);
        let (stage, rule, policy_hash): (Option<String>, Option<String>, String) = (row.get(8)?, row.get(9)?, row.get(10)?);
        let (prev_hash, hash): (String, String) = (row.get(11)?, row.get(12)?);
        let entry = AuditEntry {
            agent: &agent,
            execution_id: execution_id.as_deref(),
            session_id: session_id.as_deref(),
            event: &event,
            hint: hint.as_deref(),
            decision: &decision,
            stage: stage.as_deref(),
            rule: rule.as_deref(),
            policy_hash: &policy_hash,
        };
        if seq != expected_seq || prev_hash != expected_prev || row_hash(&prev_hash, seq, at, &entry) != hash {
            return Ok(ChainReport { rows: count, broken_at: Some(seq) });
        }
        expected_prev = hash;
        expected_seq = seq + 1;
        count += 1;
    }
    Ok(ChainReport { rows: count, broken_at: None })
}

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
//! Each row names the machine it was written on (see `store::owner`); the
//! machine is covered by the row's hash. Rows written before machines were
//! recorded have none, and their hashes cover what they had.
//!
//! Beside the chain, the text of every policy the rows name by hash is
//! kept once (`policy_versions`), so a recorded action can be judged again
//! with the policy that decided it.

use sha2::{Digest, Sha256};

use crate::{hex, redact::redact_text};

pub use super::audit_words::{AuditDecision, AuditEvent, AuditStage};
use super::{
    StoreError, now_ms,
    owner::this_machine,
    sql::{Fields, Tx, values},
};

/// The `prev_hash` of the first row.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One row to append.
#[derive(Debug, Clone, Copy)]
pub struct AuditEntry<'a> {
    pub agent: &'a str,
    pub execution_id: Option<&'a str>,
    pub session_id: Option<&'a str>,
    pub event: AuditEvent,
    pub hint: Option<&'a str>,
    pub decision: AuditDecision,
    pub stage: Option<AuditStage>,
    pub rule: Option<&'a str>,
    pub policy_hash: &'a str,
}

impl<'a> AuditEntry<'a> {
    /// `agent`'s `event` that ended as `decision`, nothing else named yet
    /// (the policy in force is named when the row is written through the
    /// loop).
    pub fn of(agent: &'a str, event: AuditEvent, decision: AuditDecision) -> Self {
        Self {
            agent,
            execution_id: None,
            session_id: None,
            event,
            hint: None,
            decision,
            stage: None,
            rule: None,
            policy_hash: "",
        }
    }
}

/// A stored row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    pub seq: i64,
    pub at: i64,
    pub agent: String,
    pub execution_id: Option<String>,
    pub session_id: Option<String>,
    pub event: AuditEvent,
    pub hint: Option<String>,
    pub decision: AuditDecision,
    pub stage: Option<AuditStage>,
    pub rule: Option<String>,
    pub policy_hash: String,
    pub prev_hash: String,
    pub hash: String,
    /// The machine that wrote it; `None` for rows from before machines
    /// were recorded.
    pub machine: Option<String>,
}

impl AuditRow {
    /// The entry this row was appended from.
    pub fn entry(&self) -> AuditEntry<'_> {
        AuditEntry {
            agent: &self.agent,
            execution_id: self.execution_id.as_deref(),
            session_id: self.session_id.as_deref(),
            event: self.event,
            hint: self.hint.as_deref(),
            decision: self.decision,
            stage: self.stage,
            rule: self.rule.as_deref(),
            policy_hash: &self.policy_hash,
        }
    }
}

fn row_hash(
    prev: &str,
    seq: i64,
    at: i64,
    entry: &AuditEntry<'_>,
    machine: Option<&str>,
) -> String {
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
    field(Some(entry.event.name()));
    field(entry.hint);
    field(Some(entry.decision.name()));
    field(entry.stage.map(AuditStage::name));
    field(entry.rule);
    field(Some(entry.policy_hash));
    // Covered when recorded: a row from before has no such field, so its
    // hash stays what it was.
    if let Some(machine) = machine {
        field(Some(machine));
    }
    hex::encode(&hasher.finalize())
}

/// Appends a row in the caller's (write) transaction; returns its `seq`.
pub fn append(tx: &Tx<'_>, entry: &AuditEntry<'_>) -> Result<i64, StoreError> {
    append_at(tx, entry, now_ms())
}

/// [`append`], for what happened at `at` (a row kept while the database
/// was away).
pub fn append_at(tx: &Tx<'_>, entry: &AuditEntry<'_>, at: i64) -> Result<i64, StoreError> {
    let (last_seq, prev): (i64, String) = tx
        .row("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1", values![], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?
        .unwrap_or((0, GENESIS.to_owned()));
    let seq = last_seq + 1;
    // The last line of defence: whatever path an action took, no
    // code-shaped text is stored (see `crate::redact`).
    let hint = entry.hint.map(redact_text);
    let entry = &AuditEntry { hint: hint.as_deref(), ..*entry };
    let machine = this_machine();
    let hash = row_hash(&prev, seq, at, entry, Some(machine));
    let sql = format!(
        "INSERT INTO audit ({AUDIT_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
    );
    tx.execute(
        &sql,
        values![
            seq,
            at,
            entry.agent,
            entry.execution_id,
            entry.session_id,
            entry.event.name(),
            entry.hint,
            entry.decision.name(),
            entry.stage.map(AuditStage::name),
            entry.rule,
            entry.policy_hash,
            &prev,
            &hash,
            machine
        ],
    )?;
    Ok(seq)
}

const AUDIT_COLUMNS: &str = "seq, at, agent, execution_id, session_id, event, hint, decision, stage, rule, policy_hash, prev_hash, hash, machine";

/// Rows in order, optionally for one agent, at most `limit` of the newest.
pub fn rows(tx: &Tx<'_>, agent: Option<&str>, limit: usize) -> Result<Vec<AuditRow>, StoreError> {
    let sql = format!(
        "SELECT {AUDIT_COLUMNS} FROM audit WHERE CAST(?1 AS TEXT) IS NULL OR agent = ?1 ORDER BY seq DESC LIMIT ?2"
    );
    let mut rows =
        tx.rows(&sql, values![agent, i64::try_from(limit).unwrap_or(i64::MAX)], row_of)?;
    rows.reverse();
    Ok(rows)
}

/// Keeps the sources (as JSON) of the policy whose hash audit rows name,
/// once.
pub fn remember_policy(tx: &Tx<'_>, hash: &str, sources: &str) -> Result<(), StoreError> {
    tx.execute("INSERT INTO policy_versions (hash, sources, first_used) VALUES (?1, ?2, ?3) ON CONFLICT (hash) DO NOTHING", values![hash, sources, now_ms()])?;
    Ok(())
}

/// Whether the policy with this hash is kept.
pub fn knows_policy(tx: &Tx<'_>, hash: &str) -> Result<bool, StoreError> {
    Ok(tx
        .row("SELECT 1 FROM policy_versions WHERE hash = ?1", values![hash], |_| Ok(()))?
        .is_some())
}

/// The sources (as JSON) of the policy with this hash, if kept.
pub fn policy_sources(tx: &Tx<'_>, hash: &str) -> Result<Option<String>, StoreError> {
    tx.row("SELECT sources FROM policy_versions WHERE hash = ?1", values![hash], |row| row.get(0))
}

/// The rows of actions the policy judged or could have judged (steps,
/// hooked and proxied calls) from `since` (ms) on, optionally for one
/// agent, in order.
pub fn actions_since(
    tx: &Tx<'_>,
    since: i64,
    agent: Option<&str>,
) -> Result<Vec<AuditRow>, StoreError> {
    let sql = format!(
        "SELECT {AUDIT_COLUMNS} FROM audit WHERE event IN ('step', 'gate') AND at >= ?1 AND (CAST(?2 AS TEXT) IS NULL OR agent = ?2) ORDER BY seq"
    );
    tx.rows(&sql, values![since, agent], row_of)
}

fn row_of(row: &Fields<'_>) -> Result<AuditRow, StoreError> {
    Ok(AuditRow {
        seq: row.get(0)?,
        at: row.get(1)?,
        agent: row.get(2)?,
        execution_id: row.get(3)?,
        session_id: row.get(4)?,
        event: row.named(5, AuditEvent::parse)?,
        hint: row.get(6)?,
        decision: row.named(7, AuditDecision::parse)?,
        stage: row.optional_named(8, AuditStage::parse)?,
        rule: row.get(9)?,
        policy_hash: row.get(10)?,
        prev_hash: row.get(11)?,
        hash: row.get(12)?,
        machine: row.get(13)?,
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
pub fn verify(tx: &Tx<'_>) -> Result<ChainReport, StoreError> {
    let mut expected_prev = GENESIS.to_owned();
    let mut expected_seq = 1;
    let mut count = 0;
    let mut broken_at = None;
    tx.each(&format!("SELECT {AUDIT_COLUMNS} FROM audit ORDER BY seq"), values![], |row| {
        let row = row_of(row)?;
        let entry = row.entry();
        if row.seq != expected_seq
            || row.prev_hash != expected_prev
            || row_hash(&row.prev_hash, row.seq, row.at, &entry, row.machine.as_deref()) != row.hash
        {
            broken_at = Some(row.seq);
            return Ok(false);
        }
        expected_prev = row.hash;
        expected_seq = row.seq + 1;
        count += 1;
        Ok(true)
    })?;
    Ok(ChainReport { rows: count, broken_at })
}

#[cfg(test)]
mod tests {
    use super::{AuditDecision, AuditEntry, AuditEvent, GENESIS, append, row_hash, verify};
    use crate::store::{Store, sql::values};

    /// A chain begun before machines were recorded goes on with rows that
    /// name theirs, and verifies whole; the machine is covered by the hash.
    #[test]
    fn rows_from_before_machines_were_recorded_still_verify_and_new_rows_cover_their_machine() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let old = AuditEntry {
            policy_hash: "p",
            ..AuditEntry::of("a", AuditEvent::Step, AuditDecision::Continue)
        };
        let hash = row_hash(GENESIS, 1, 10, &old, None);
        store
            .write(|tx| {
                tx.execute(
                    "INSERT INTO audit (seq, at, agent, event, decision, policy_hash, prev_hash, hash) VALUES (1, 10, 'a', 'step', 'continue', 'p', ?1, ?2)",
                    values![GENESIS, &hash],
                )?;
                append(tx, &old)
            })
            .unwrap();
        let report = store.read(verify).unwrap();
        assert_eq!((report.rows, report.broken_at), (2, None));
        let machines: Vec<Option<String>> = store
            .read(|tx| {
                tx.rows("SELECT machine FROM audit ORDER BY seq", values![], |row| row.get(0))
            })
            .unwrap();
        assert_eq!(machines, [None, Some(crate::store::owner::Owner::current().machine)]);

        let raw = rusqlite::Connection::open(dir.path().join(crate::store::DATABASE_FILE)).unwrap();
        raw.execute_batch(
            "DROP TRIGGER audit_no_update; UPDATE audit SET machine = 'elsewhere' WHERE seq = 2;",
        )
        .unwrap();
        assert_eq!(
            store.read(verify).unwrap().broken_at,
            Some(2),
            "a row's machine cannot be changed unseen"
        );
    }
}

//! The central policy's versions (`safety-dongle policy push`): each push
//! appends the next version, naming its sources in `policy_versions` by
//! hash, and the newest version is the one every dongle on this state
//! decides by. Versions are never changed or removed: going back is a
//! push of the older files.

use super::{
    StoreError, audit,
    sql::{Fields, Tx, values},
};

/// One pushed version, with its sources (as `audit::remember_policy`
/// keeps them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CentralVersion {
    pub version: i64,
    pub hash: String,
    pub sources: String,
    pub pushed_at: i64,
    /// The machine it was pushed from.
    pub machine: String,
}

/// Appends a version: the sources under `hash`, pushed from `machine`.
/// Returns its number. Write transactions are serialised, so numbers
/// follow each other without gaps.
pub fn push(
    tx: &Tx<'_>,
    hash: &str,
    sources: &str,
    machine: &str,
    now: i64,
) -> Result<i64, StoreError> {
    audit::remember_policy(tx, hash, sources)?;
    let version = latest_version(tx)?.unwrap_or(0) + 1;
    tx.execute(
        "INSERT INTO central_policy (version, hash, pushed_at, machine) VALUES (?1, ?2, ?3, ?4)",
        values![version, hash, now, machine],
    )?;
    Ok(version)
}

/// The newest version's number, if any was pushed: what every decision
/// asks, so it is one lookup of the primary key.
pub fn latest_version(tx: &Tx<'_>) -> Result<Option<i64>, StoreError> {
    tx.one("SELECT MAX(version) FROM central_policy", values![], |row| row.get(0))
}

/// The newest version with its sources, if any was pushed.
pub fn latest(tx: &Tx<'_>) -> Result<Option<CentralVersion>, StoreError> {
    let sql = "SELECT c.version, c.hash, p.sources, c.pushed_at, c.machine FROM central_policy c JOIN policy_versions p ON p.hash = c.hash ORDER BY c.version DESC LIMIT 1";
    tx.row(sql, values![], version)
}

fn version(row: &Fields<'_>) -> Result<CentralVersion, StoreError> {
    Ok(CentralVersion {
        version: row.get(0)?,
        hash: row.get(1)?,
        sources: row.get(2)?,
        pushed_at: row.get(3)?,
        machine: row.get(4)?,
    })
}

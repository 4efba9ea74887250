//! Typed access to the state tables, inside a caller's transaction:
//! executions, hard blocks, challenges (and the pauses they hold), the
//! per-agent count of actions since a human granted a budget, the events
//! and the downstream servers' last known state.

use crate::{names::named_enum, verify::Unblock};

use super::{
    StoreError,
    owner::{Owner, SILENT_AFTER_MS},
    sql::{Fields, Tx, values},
};

named_enum! {
    /// Where an execution stands: the five core states of spec 8.4.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ExecutionStatus {
        Pending => "pending",
        Running => "running",
        Completed => "completed",
        Failed => "failed",
        Cancelled => "cancelled",
    }
}

named_enum! {
    /// What an event row tells agents: the notification types of spec
    /// 8.7.3.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum NotificationKind {
        PermissionPending => "permission_pending",
        AutonomyPause => "autonomy_pause",
        DangerZone => "danger_zone",
        Status => "status",
        Error => "error",
    }
}

named_enum! {
    /// Why an agent must not go on without a human (the pause a
    /// challenge holds).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum PauseKind {
        StepLimit => "step_limit",
        PreviousFailure => "previous_failure",
        /// A human must approve (requiresApproval, confirm tier, tolerance).
        Approval => "approval",
        /// A human must supply an out-of-band code (verify tier).
        Verification => "verification",
        /// The hint could not be analysed.
        FailClosed => "fail_closed",
    }
}

/// One execution of an agent (spec 8.4), as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionRow {
    pub id: String,
    pub agent: String,
    pub status: ExecutionStatus,
    pub steps: u32,
    pub max_steps: u32,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub owner: Owner,
    pub session_id: String,
    pub event_cursor: i64,
    pub goal: Option<String>,
    pub summary: Option<String>,
}

const EXECUTION_COLUMNS: &str = "id, agent, status, steps, max_steps, started_at, finished_at, owner_machine, owner_pid, session_id, event_cursor, goal, summary";

fn execution(row: &Fields<'_>) -> Result<ExecutionRow, StoreError> {
    Ok(ExecutionRow {
        id: row.get(0)?,
        agent: row.get(1)?,
        status: row.named(2, ExecutionStatus::parse)?,
        steps: row.get(3)?,
        max_steps: row.get(4)?,
        started_at: row.get(5)?,
        finished_at: row.get(6)?,
        owner: Owner { machine: row.get(7)?, pid: row.get(8)? },
        session_id: row.get(9)?,
        event_cursor: row.get(10)?,
        goal: row.get(11)?,
        summary: row.get(12)?,
    })
}

/// The agent's execution that is not yet in a terminal state, if any
/// (the newest, should there be several).
///
/// This and [`pausing_challenge`] run for every step and gated call, so
/// they are plain lookups on the `(agent, status)` index and the newest
/// row is picked here: an `ORDER BY` would build a temporary sort per
/// call, and a partial index would make SQLite prepare the statement
/// again at every binding.
pub fn active_execution(tx: &Tx<'_>, agent: &str) -> Result<Option<ExecutionRow>, StoreError> {
    let sql = format!(
        "SELECT {EXECUTION_COLUMNS}, rowid FROM executions WHERE agent = ?1 AND status IN ('pending', 'running')"
    );
    let rows = tx.rows(&sql, values![agent], |row| Ok((execution(row)?, row.get::<i64>(13)?)))?;
    Ok(newest(rows, |(row, rowid)| (row.started_at, *rowid)))
}

/// The row of `rows` with the greatest `key`.
fn newest<T, K: Ord>(rows: Vec<(T, i64)>, key: impl Fn(&(T, i64)) -> K) -> Option<T> {
    let mut best: Option<(T, i64)> = None;
    for row in rows {
        if best.as_ref().is_none_or(|current| key(&row) > key(current)) {
            best = Some(row);
        }
    }
    best.map(|(row, _)| row)
}

/// The agent's most recent execution, in any state.
pub fn latest_execution(tx: &Tx<'_>, agent: &str) -> Result<Option<ExecutionRow>, StoreError> {
    let sql = format!(
        "SELECT {EXECUTION_COLUMNS} FROM executions WHERE agent = ?1 ORDER BY started_at DESC, rowid DESC LIMIT 1"
    );
    tx.row(&sql, values![agent], execution)
}

/// Every execution not in a terminal state.
pub fn active_executions(tx: &Tx<'_>) -> Result<Vec<ExecutionRow>, StoreError> {
    let sql = format!(
        "SELECT {EXECUTION_COLUMNS} FROM executions WHERE status IN ('pending', 'running') ORDER BY started_at"
    );
    tx.rows(&sql, values![], execution)
}

pub fn insert_execution(tx: &Tx<'_>, row: &ExecutionRow) -> Result<(), StoreError> {
    let sql = format!(
        "INSERT INTO executions ({EXECUTION_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
    );
    tx.execute(
        &sql,
        values![
            &row.id,
            &row.agent,
            row.status.name(),
            row.steps,
            row.max_steps,
            row.started_at,
            row.finished_at,
            &row.owner.machine,
            row.owner.pid,
            &row.session_id,
            row.event_cursor,
            &row.goal,
            &row.summary
        ],
    )?;
    Ok(())
}

/// Writes back the mutable fields of an execution.
pub fn update_execution(tx: &Tx<'_>, row: &ExecutionRow) -> Result<(), StoreError> {
    let changed = tx.execute(
        "UPDATE executions SET status = ?2, steps = ?3, finished_at = ?4, event_cursor = ?5, summary = ?6 WHERE id = ?1",
        values![&row.id, row.status.name(), row.steps, row.finished_at, row.event_cursor, &row.summary],
    )?;
    if changed == 1 { Ok(()) } else { Err(StoreError::Inconsistent("an execution disappeared")) }
}

/// A hard block on an agent (spec 8.8.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockRow {
    pub agent: String,
    pub challenge_id: String,
    pub reason: String,
    pub rule: Option<String>,
    pub blocked_at: i64,
}

fn block(row: &Fields<'_>) -> Result<BlockRow, StoreError> {
    Ok(BlockRow {
        agent: row.get(0)?,
        challenge_id: row.get(1)?,
        reason: row.get(2)?,
        rule: row.get(3)?,
        blocked_at: row.get(4)?,
    })
}

pub fn block_of(tx: &Tx<'_>, agent: &str) -> Result<Option<BlockRow>, StoreError> {
    tx.row(
        "SELECT agent, challenge_id, reason, rule, blocked_at FROM blocks WHERE agent = ?1",
        values![agent],
        block,
    )
}

pub fn blocks(tx: &Tx<'_>) -> Result<Vec<BlockRow>, StoreError> {
    tx.rows(
        "SELECT agent, challenge_id, reason, rule, blocked_at FROM blocks ORDER BY blocked_at",
        values![],
        block,
    )
}

/// Records a block. An agent already blocked keeps its first block.
pub fn insert_block(tx: &Tx<'_>, row: &BlockRow) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO blocks (agent, challenge_id, reason, rule, blocked_at) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (agent) DO NOTHING",
        values![&row.agent, &row.challenge_id, &row.reason, &row.rule, row.blocked_at],
    )?;
    Ok(())
}

/// Lifts an agent's block. Only an [`Unblock`] — proof that a human
/// verified the code or an operator overrode at a terminal — can do it.
pub fn remove_block(tx: &Tx<'_>, unblock: &Unblock) -> Result<bool, StoreError> {
    let removed = tx.execute("DELETE FROM blocks WHERE agent = ?1", values![unblock.agent()])?;
    tx.execute(
        "UPDATE challenges SET status = ?2 WHERE agent = ?1 AND durable = 1 AND status = 'pending'",
        values![unblock.agent(), unblock.resolution().name()],
    )?;
    Ok(removed == 1)
}

named_enum! {
    /// What a challenge asks a human for.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ChallengeKind {
        /// A code, for a verify-tier pause.
        Verify => "verify",
        /// A code, to lift a hard block.
        DangerZone => "danger_zone",
        /// An Approve/Deny decision.
        Approval => "approval",
    }
}

impl ChallengeKind {
    /// Whether the human answers with a code (else Approve/Deny).
    pub fn wants_code(self) -> bool {
        self != Self::Approval
    }
}

named_enum! {
    /// Where a challenge stands. Only `Pending` waits for a human; an
    /// `Approved` approval still holds its pause until the agent collects it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ChallengeStatus {
        Pending => "pending",
        /// The human approved; not yet collected.
        Approved => "approved",
        Denied => "denied",
        Expired => "expired",
        /// An approval collected, or a challenge spent by a wrong code.
        Used => "used",
        Failed => "failed",
        /// Lifted by the right code.
        Verified => "verified",
        /// Lifted by an operator at a terminal who typed the shown code back.
        OperatorCode => "operator_code",
        /// Lifted by an operator at a terminal who typed the agent's name back.
        OperatorOverride => "operator_override",
        /// Its session ended before a human answered.
        Cancelled => "cancelled",
    }
}

/// A request for a human decision, as stored. Codes are never stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChallengeRow {
    pub id: String,
    pub agent: String,
    pub kind: ChallengeKind,
    pub action: String,
    pub reason: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub status: ChallengeStatus,
    pub durable: bool,
    pub owner: Owner,
    /// The MCP session whose call raised it (`None` for challenges stored
    /// before sessions were recorded).
    pub session_id: Option<String>,
    /// The pause it holds on its agent while it waits, if any.
    pub pause: Option<PauseKind>,
}

pub fn insert_challenge(tx: &Tx<'_>, row: &ChallengeRow) -> Result<(), StoreError> {
    let sql = format!(
        "INSERT INTO challenges ({CHALLENGE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
    );
    tx.execute(
        &sql,
        values![
            &row.id,
            &row.agent,
            row.kind.name(),
            &row.action,
            &row.reason,
            row.created_at,
            row.expires_at,
            row.status.name(),
            row.durable,
            &row.owner.machine,
            row.owner.pid,
            &row.session_id,
            row.pause.map(PauseKind::name)
        ],
    )?;
    Ok(())
}

/// What a code is checked against: its salt and salted SHA-256, hex, as
/// the verifier sent them. Named fields, so the two cannot be swapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeHash {
    pub salt: String,
    pub hash: String,
}

/// A challenge by id, with its code hash once the verifier sent one.
pub fn challenge(
    tx: &Tx<'_>,
    id: &str,
) -> Result<Option<(ChallengeRow, Option<CodeHash>)>, StoreError> {
    let sql =
        format!("SELECT {CHALLENGE_COLUMNS}, code_salt, code_hash FROM challenges WHERE id = ?1");
    tx.row(&sql, values![id], |row| {
        let salt: Option<String> = row.get(13)?;
        let hash: Option<String> = row.get(14)?;
        Ok((challenge_row(row)?, salt.zip(hash).map(|(salt, hash)| CodeHash { salt, hash })))
    })
}

/// Stores the salted hash of a challenge's code, as the verifier sent it.
pub fn set_challenge_hash(tx: &Tx<'_>, id: &str, code: &CodeHash) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE challenges SET code_salt = ?2, code_hash = ?3 WHERE id = ?1",
        values![id, &code.salt, &code.hash],
    )?;
    Ok(())
}

/// How many challenges of `kind` the agent was given since `since`.
pub fn challenges_since(
    tx: &Tx<'_>,
    agent: &str,
    kind: ChallengeKind,
    since: i64,
) -> Result<u32, StoreError> {
    tx.one(
        "SELECT COUNT(*) FROM challenges WHERE agent = ?1 AND kind = ?2 AND created_at >= ?3",
        values![agent, kind.name(), since],
        |row| row.get(0),
    )
}

/// Points an agent's block at a new challenge (after the old one expired).
pub fn set_block_challenge(tx: &Tx<'_>, agent: &str, challenge_id: &str) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE blocks SET challenge_id = ?2 WHERE agent = ?1",
        values![agent, challenge_id],
    )?;
    Ok(())
}

/// How many requests for a human calls of `session` raised since `since`.
pub fn challenges_in_session_since(
    tx: &Tx<'_>,
    session_id: &str,
    since: i64,
) -> Result<u32, StoreError> {
    tx.one(
        "SELECT COUNT(*) FROM challenges WHERE session_id = ?1 AND created_at >= ?2",
        values![session_id, since],
        |row| row.get(0),
    )
}

/// Records a failed verification attempt against `subject` (see
/// `safety::attempts::Subject`).
pub fn insert_failure(tx: &Tx<'_>, subject: &str, at: i64) -> Result<(), StoreError> {
    tx.execute("INSERT INTO verify_failures (subject, at) VALUES (?1, ?2)", values![subject, at])?;
    Ok(())
}

pub fn failures_since(tx: &Tx<'_>, subject: &str, since: i64) -> Result<u32, StoreError> {
    tx.one(
        "SELECT COUNT(*) FROM verify_failures WHERE subject = ?1 AND at >= ?2",
        values![subject, since],
        |row| row.get(0),
    )
}

/// The subject's lockout: `(until, level)`.
pub fn lockout(tx: &Tx<'_>, subject: &str) -> Result<Option<(i64, u32)>, StoreError> {
    tx.row("SELECT until, level FROM lockouts WHERE subject = ?1", values![subject], |row| {
        Ok((row.get(0)?, row.get(1)?))
    })
}

pub fn set_lockout(tx: &Tx<'_>, subject: &str, until: i64, level: u32) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO lockouts (subject, until, level) VALUES (?1, ?2, ?3) ON CONFLICT (subject) DO UPDATE SET until = ?2, level = ?3",
        values![subject, until, level],
    )?;
    Ok(())
}

pub fn set_challenge_status(
    tx: &Tx<'_>,
    id: &str,
    status: ChallengeStatus,
) -> Result<(), StoreError> {
    tx.execute("UPDATE challenges SET status = ?2 WHERE id = ?1", values![id, status.name()])?;
    Ok(())
}

/// Records a human's answer on a challenge still waiting for it; `false`
/// when it no longer waits (its session ended, or it expired).
pub fn settle_challenge(
    tx: &Tx<'_>,
    id: &str,
    status: ChallengeStatus,
) -> Result<bool, StoreError> {
    let changed = tx.execute(
        "UPDATE challenges SET status = ?2 WHERE id = ?1 AND status = 'pending'",
        values![id, status.name()],
    )?;
    Ok(changed == 1)
}

/// The newest challenge holding a pause on `agent` that may still hold
/// it (pending, or approved and not yet collected). Whether it does
/// (expiry, a live owner) is the caller's judgement.
pub fn pausing_challenge(tx: &Tx<'_>, agent: &str) -> Result<Option<ChallengeRow>, StoreError> {
    let sql = format!(
        "SELECT {CHALLENGE_COLUMNS}, rowid FROM challenges WHERE agent = ?1 AND status IN ('pending', 'approved') AND pause IS NOT NULL"
    );
    let rows =
        tx.rows(&sql, values![agent], |row| Ok((challenge_row(row)?, row.get::<i64>(13)?)))?;
    Ok(newest(rows, |(row, rowid)| (row.created_at, *rowid)))
}

/// Ends every challenge still waiting (or approved, uncollected) that
/// calls of `session` (every session, when `None`) raised in process
/// `owner`: nobody is left to collect an answer. A block's challenge is
/// durable and stays. Returns how many ended.
pub fn cancel_challenges_of(
    tx: &Tx<'_>,
    owner: &Owner,
    session_id: Option<&str>,
) -> Result<usize, StoreError> {
    tx.execute(
        "UPDATE challenges SET status = 'cancelled' WHERE owner_machine = ?1 AND owner_pid = ?2 AND (CAST(?3 AS TEXT) IS NULL OR session_id = ?3) \
         AND durable = 0 AND status IN ('pending', 'approved')",
        values![&owner.machine, owner.pid, session_id],
    )
}

const CHALLENGE_COLUMNS: &str = "id, agent, kind, action, reason, created_at, expires_at, status, durable, owner_machine, owner_pid, session_id, pause";

fn challenge_row(row: &Fields<'_>) -> Result<ChallengeRow, StoreError> {
    let pause: Option<String> = row.get(12)?;
    Ok(ChallengeRow {
        id: row.get(0)?,
        agent: row.get(1)?,
        kind: row.named(2, ChallengeKind::parse)?,
        action: row.get(3)?,
        reason: row.get(4)?,
        created_at: row.get(5)?,
        expires_at: row.get(6)?,
        status: row.named(7, ChallengeStatus::parse)?,
        durable: row.get(8)?,
        owner: Owner { machine: row.get(9)?, pid: row.get(10)? },
        session_id: row.get(11)?,
        pause: pause
            .map(|name| PauseKind::parse(&name).ok_or(StoreError::UnknownName(name)))
            .transpose()?,
    })
}

/// Actions `agent` took since a human last granted it a step budget.
pub fn agent_steps(tx: &Tx<'_>, agent: &str) -> Result<u32, StoreError> {
    Ok(tx
        .row("SELECT steps FROM agent_steps WHERE agent = ?1", values![agent], |row| row.get(0))?
        .unwrap_or(0))
}

pub fn set_agent_steps(tx: &Tx<'_>, agent: &str, steps: u32) -> Result<(), StoreError> {
    tx.execute("INSERT INTO agent_steps (agent, steps) VALUES (?1, ?2) ON CONFLICT (agent) DO UPDATE SET steps = ?2", values![agent, steps])?;
    Ok(())
}

/// The executions not yet finished that calls of `session` (every
/// session, when `None`) started in process `owner`.
pub fn active_executions_of(
    tx: &Tx<'_>,
    owner: &Owner,
    session_id: Option<&str>,
) -> Result<Vec<ExecutionRow>, StoreError> {
    let sql = format!(
        "SELECT {EXECUTION_COLUMNS} FROM executions WHERE owner_machine = ?1 AND owner_pid = ?2 AND (CAST(?3 AS TEXT) IS NULL OR session_id = ?3) \
         AND status IN ('pending', 'running')"
    );
    tx.rows(&sql, values![&owner.machine, owner.pid, session_id], execution)
}

/// Challenges still waiting for a human at `now` (Unix ms).
pub fn pending_challenges(tx: &Tx<'_>, now: i64) -> Result<Vec<ChallengeRow>, StoreError> {
    let sql = format!(
        "SELECT {CHALLENGE_COLUMNS} FROM challenges WHERE status = 'pending' AND (durable = 1 OR expires_at > ?1) ORDER BY created_at"
    );
    tx.rows(&sql, values![now], challenge_row)
}

/// A notification waiting for agents (spec 8.7.3); `agent: None` is a
/// broadcast to every executing agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    pub id: i64,
    pub agent: Option<String>,
    pub kind: NotificationKind,
    pub message: String,
    /// JSON object.
    pub metadata: String,
    pub created_at: i64,
}

pub fn insert_event(tx: &Tx<'_>, event: &EventRow) -> Result<i64, StoreError> {
    tx.one(
        "INSERT INTO events (agent, kind, message, metadata, created_at) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
        values![&event.agent, event.kind.name(), &event.message, &event.metadata, event.created_at],
        |row| row.get(0),
    )
}

/// Events after `cursor` addressed to `agent` or to everyone.
pub fn events_after(tx: &Tx<'_>, cursor: i64, agent: &str) -> Result<Vec<EventRow>, StoreError> {
    tx.rows(
        "SELECT id, agent, kind, message, metadata, created_at FROM events WHERE id > ?1 AND (agent IS NULL OR agent = ?2) ORDER BY id LIMIT 100",
        values![cursor, agent],
        |row| {
            Ok(EventRow {
                id: row.get(0)?,
                agent: row.get(1)?,
                kind: row.named(2, NotificationKind::parse)?,
                message: row.get(3)?,
                metadata: row.get(4)?,
                created_at: row.get(5)?,
            })
        },
    )
}

/// The id of the newest event, 0 if none.
pub fn last_event_id(tx: &Tx<'_>) -> Result<i64, StoreError> {
    tx.one("SELECT COALESCE(MAX(id), 0) FROM events", values![], |row| row.get(0))
}

/// A downstream MCP server as its serving process last reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownstreamRow {
    pub owner: Owner,
    pub name: String,
    pub state: String,
    pub tools: u32,
    pub detail: Option<String>,
    pub updated_at: i64,
}

pub fn upsert_downstream(tx: &Tx<'_>, row: &DownstreamRow) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO downstream_servers (owner_machine, owner_pid, name, state, tools, detail, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
         ON CONFLICT (owner_machine, owner_pid, name) DO UPDATE SET state = ?4, tools = ?5, detail = ?6, updated_at = ?7",
        values![&row.owner.machine, row.owner.pid, &row.name, &row.state, row.tools, &row.detail, row.updated_at],
    )?;
    Ok(())
}

/// Records a server of a running process unless it is recorded already.
pub fn insert_downstream_if_absent(tx: &Tx<'_>, row: &DownstreamRow) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO downstream_servers (owner_machine, owner_pid, name, state, tools, detail, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
         ON CONFLICT (owner_machine, owner_pid, name) DO NOTHING",
        values![&row.owner.machine, row.owner.pid, &row.name, &row.state, row.tools, &row.detail, row.updated_at],
    )?;
    Ok(())
}

/// Forgets the servers of a process that has ended.
pub fn remove_downstreams_of(tx: &Tx<'_>, owner: &Owner) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM downstream_servers WHERE owner_machine = ?1 AND owner_pid = ?2",
        values![&owner.machine, owner.pid],
    )?;
    Ok(())
}

/// Forgets one server of a running process (a reload removed it).
pub fn remove_downstream(tx: &Tx<'_>, owner: &Owner, name: &str) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM downstream_servers WHERE owner_machine = ?1 AND owner_pid = ?2 AND name = ?3",
        values![&owner.machine, owner.pid, name],
    )?;
    Ok(())
}

pub fn downstreams(tx: &Tx<'_>) -> Result<Vec<DownstreamRow>, StoreError> {
    tx.rows("SELECT owner_machine, owner_pid, name, state, tools, detail, updated_at FROM downstream_servers ORDER BY name, owner_machine, owner_pid", values![], |row| {
        Ok(DownstreamRow {
            owner: Owner { machine: row.get(0)?, pid: row.get(1)? },
            name: row.get(2)?,
            state: row.get(3)?,
            tools: row.get(4)?,
            detail: row.get(5)?,
            updated_at: row.get(6)?,
        })
    })
}

/// Something a running dongle has loaded (`policy`, `adapter`), or the
/// last change to one part it refused (`refused`), and since when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedRow {
    pub owner: Owner,
    pub kind: String,
    pub name: String,
    pub detail: String,
    pub since: i64,
    /// When its dongle last said it is alive, by the state's shared
    /// clock ([`Tx::shared_clock_ms`]): as it wrote the row, then at each
    /// [`heartbeat`]. Machines' clocks may disagree; the shared one is
    /// the same for every reader.
    pub seen_at: i64,
}

/// Replaces what `owner` says it has loaded with `rows` (seen now: their
/// `seen_at` is not written).
pub fn set_loaded(tx: &Tx<'_>, owner: &Owner, rows: &[LoadedRow]) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM loaded WHERE owner_machine = ?1 AND owner_pid = ?2",
        values![&owner.machine, owner.pid],
    )?;
    if rows.is_empty() {
        return Ok(());
    }
    let seen_at = tx.shared_clock_ms()?;
    for row in rows {
        tx.execute(
            "INSERT INTO loaded (owner_machine, owner_pid, kind, name, detail, since, seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            values![&owner.machine, owner.pid, &row.kind, &row.name, &row.detail, row.since, seen_at],
        )?;
    }
    Ok(())
}

/// `owner` is alive now, by the state's shared clock.
pub fn heartbeat(tx: &Tx<'_>, owner: &Owner) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE loaded SET seen_at = ?3 WHERE owner_machine = ?1 AND owner_pid = ?2",
        values![&owner.machine, owner.pid, tx.shared_clock_ms()?],
    )?;
    Ok(())
}

/// Whether `owner` may still be serving: as far as this machine can tell
/// ([`Owner::may_be_running`]), and, for a dongle on another machine that
/// has said it is alive, having said so within [`SILENT_AFTER_MS`] by the
/// shared clock. One that never said so (it records what it loaded as it
/// starts) counts as serving.
pub fn may_be_serving(tx: &Tx<'_>, owner: &Owner) -> Result<bool, StoreError> {
    if !owner.may_be_running() {
        return Ok(false);
    }
    if owner.is_on_this_machine() {
        return Ok(true);
    }
    let heard: Option<i64> = tx.one(
        "SELECT MAX(seen_at) FROM loaded WHERE owner_machine = ?1 AND owner_pid = ?2",
        values![&owner.machine, owner.pid],
        |row| row.get(0),
    )?;
    let Some(seen) = heard else { return Ok(true) };
    Ok(tx.shared_clock_ms()? - seen <= SILENT_AFTER_MS)
}

pub fn loaded(tx: &Tx<'_>) -> Result<Vec<LoadedRow>, StoreError> {
    tx.rows("SELECT owner_machine, owner_pid, kind, name, detail, since, seen_at FROM loaded ORDER BY owner_machine, owner_pid, kind, name", values![], |row| {
        Ok(LoadedRow { owner: Owner { machine: row.get(0)?, pid: row.get(1)? }, kind: row.get(2)?, name: row.get(3)?, detail: row.get(4)?, since: row.get(5)?, seen_at: row.get(6)? })
    })
}

//! Schema migrations, applied in order: SQLite's here, versioned by
//! `PRAGMA user_version` (PostgreSQL's are beside its backend).

use rusqlite::{Connection, TransactionBehavior};

use super::StoreError;

/// Schema steps: each entry takes the schema from version `index` to
/// `index + 1`.
pub type Migrations = &'static [&'static str];

/// SQLite's steps.
const MIGRATIONS: Migrations = &[
    r#"
CREATE TABLE executions (
    id            TEXT PRIMARY KEY,
    agent         TEXT NOT NULL,
    status        TEXT NOT NULL,
    steps         INTEGER NOT NULL,
    max_steps     INTEGER NOT NULL,
    started_at    INTEGER NOT NULL,
    finished_at   INTEGER,
    owner_pid     INTEGER NOT NULL,
    session_id    TEXT NOT NULL,
    event_cursor  INTEGER NOT NULL,
    goal          TEXT,
    summary       TEXT
);
CREATE INDEX executions_by_agent ON executions (agent, status);

CREATE TABLE blocks (
    agent         TEXT PRIMARY KEY,
    challenge_id  TEXT NOT NULL,
    reason        TEXT NOT NULL,
    rule          TEXT,
    blocked_at    INTEGER NOT NULL
);

CREATE TABLE challenges (
    id            TEXT PRIMARY KEY,
    agent         TEXT NOT NULL,
    kind          TEXT NOT NULL,
    action        TEXT NOT NULL,
    reason        TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    status        TEXT NOT NULL,
    durable       INTEGER NOT NULL,
    owner_pid     INTEGER NOT NULL
);
CREATE INDEX challenges_by_agent ON challenges (agent, status);

CREATE TABLE events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    agent         TEXT,
    kind          TEXT NOT NULL,
    message       TEXT NOT NULL,
    metadata      TEXT NOT NULL,
    created_at    INTEGER NOT NULL
);

-- One row, rewritten by Store::sync_barrier: a write whose FULL commit
-- flushes every earlier WAL frame to stable storage.
CREATE TABLE durability (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    synced_at     INTEGER NOT NULL
);

CREATE TABLE audit (
    seq           INTEGER PRIMARY KEY,
    at            INTEGER NOT NULL,
    agent         TEXT NOT NULL,
    execution_id  TEXT,
    session_id    TEXT,
    event         TEXT NOT NULL,
    hint          TEXT,
    decision      TEXT NOT NULL,
    stage         TEXT,
    rule          TEXT,
    policy_hash   TEXT NOT NULL,
    prev_hash     TEXT NOT NULL,
    hash          TEXT NOT NULL
);
CREATE INDEX audit_by_agent ON audit (agent, seq);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
"#,
    r#"
ALTER TABLE challenges ADD COLUMN code_salt TEXT;
ALTER TABLE challenges ADD COLUMN code_hash TEXT;

-- Failed verification attempts, per agent, for rate limiting (spec 8.8.5).
CREATE TABLE verify_failures (
    agent         TEXT NOT NULL,
    at            INTEGER NOT NULL
);
CREATE INDEX verify_failures_by_agent ON verify_failures (agent, at);

-- Progressive lockouts: each one doubles the next one's length.
CREATE TABLE lockouts (
    agent         TEXT PRIMARY KEY,
    until         INTEGER NOT NULL,
    level         INTEGER NOT NULL
);
"#,
    r#"
-- Downstream MCP servers as each serving process last saw them, for
-- `safety-dongle status`.
CREATE TABLE downstream_servers (
    owner_pid     INTEGER NOT NULL,
    name          TEXT NOT NULL,
    state         TEXT NOT NULL,
    tools         INTEGER NOT NULL,
    detail        TEXT,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (owner_pid, name)
);
"#,
    r#"
-- The MCP session whose call raised a challenge: only the blocked agent's
-- own sessions may spend it with a wrong code or count against it.
ALTER TABLE challenges ADD COLUMN session_id TEXT;
CREATE INDEX challenges_by_session ON challenges (session_id, created_at);
-- Failures and lockouts count against a subject: an agent
-- ('agent:NAME') or a session that is not the challenge's ('session:ID').
ALTER TABLE verify_failures RENAME COLUMN agent TO subject;
UPDATE verify_failures SET subject = 'agent:' || subject;
ALTER TABLE lockouts RENAME COLUMN agent TO subject;
UPDATE lockouts SET subject = 'agent:' || subject;
"#,
    r#"
-- A challenge that pauses its agent names the pause (step_limit,
-- previous_failure, approval, verification): the pause holds while its
-- challenge waits for a human, in every process sharing this file (the
-- hook runs as one process per tool call).
ALTER TABLE challenges ADD COLUMN pause TEXT;
-- Actions an agent took (steps, hooked and proxied calls, across its
-- executions), counted since a human last granted it a step budget.
-- (Without a rowid: one b-tree, so counting a step dirties one page.)
CREATE TABLE agent_steps (
    agent         TEXT PRIMARY KEY,
    steps         INTEGER NOT NULL
) WITHOUT ROWID;
"#,
    r#"
-- The policies audit rows name by hash, with the text of their files, so
-- `safety-dongle replay` can judge a recorded action again with the
-- policy that decided it. Content-addressed: a row can only ever hold the
-- sources whose SHA-256 is its key.
CREATE TABLE policy_versions (
    hash          TEXT PRIMARY KEY,
    sources       TEXT NOT NULL,
    first_used    INTEGER NOT NULL
) WITHOUT ROWID;
"#,
    r#"
-- What each running dongle has loaded (its policy, adapters, and the last
-- change it refused, per part) and since when, for `safety-dongle status`.
CREATE TABLE loaded (
    owner_pid     INTEGER NOT NULL,
    kind          TEXT NOT NULL,
    name          TEXT NOT NULL,
    detail        TEXT NOT NULL,
    since         INTEGER NOT NULL,
    PRIMARY KEY (owner_pid, kind, name)
) WITHOUT ROWID;
"#,
    r#"
-- Rows name the machine of the process that owns them (see store::owner),
-- so dongles on several machines sharing one database never judge each
-- other's processes by their own process table. Rows written before name
-- none: they are this machine's.
ALTER TABLE executions ADD COLUMN owner_machine TEXT NOT NULL DEFAULT '';
ALTER TABLE challenges ADD COLUMN owner_machine TEXT NOT NULL DEFAULT '';
-- Keyed by process, so rebuilt with the machine in the key. They hold
-- what running processes report, which they report again.
DROP TABLE downstream_servers;
CREATE TABLE downstream_servers (
    owner_machine TEXT NOT NULL,
    owner_pid     INTEGER NOT NULL,
    name          TEXT NOT NULL,
    state         TEXT NOT NULL,
    tools         INTEGER NOT NULL,
    detail        TEXT,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (owner_machine, owner_pid, name)
);
DROP TABLE loaded;
CREATE TABLE loaded (
    owner_machine TEXT NOT NULL,
    owner_pid     INTEGER NOT NULL,
    kind          TEXT NOT NULL,
    name          TEXT NOT NULL,
    detail        TEXT NOT NULL,
    since         INTEGER NOT NULL,
    PRIMARY KEY (owner_machine, owner_pid, kind, name)
) WITHOUT ROWID;
"#,
    r#"
-- Each audit row names the machine that wrote it (covered by its hash);
-- rows from before have none.
ALTER TABLE audit ADD COLUMN machine TEXT;
"#,
    r#"
-- The central policy's versions (`safety-dongle policy push`), newest
-- last: each names its sources in policy_versions by hash.
CREATE TABLE central_policy (
    version       INTEGER PRIMARY KEY,
    hash          TEXT NOT NULL,
    pushed_at     INTEGER NOT NULL,
    machine       TEXT NOT NULL
);
"#,
    r#"
-- When each serving dongle last said it is alive (every few seconds), so
-- `status` can tell a dongle on another machine that stopped answering.
ALTER TABLE loaded ADD COLUMN seen_at INTEGER NOT NULL DEFAULT 0;
"#,
];

pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

pub fn migrate(connection: &mut Connection) -> Result<(), StoreError> {
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema { found, supported: SCHEMA_VERSION });
    }
    for (version, sql) in MIGRATIONS.iter().enumerate().skip(usize::try_from(found).unwrap_or(0)) {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", version as i64 + 1)?;
    }
    tx.commit()?;
    Ok(())
}

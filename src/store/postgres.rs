//! The PostgreSQL backend: one connection per dongle process, its schema
//! migrated the way SQLite's is (a list of steps, the version in a table, a
//! newer version refused, never reset), its statements prepared once.
//!
//! The client is tokio-postgres through its blocking face, the `postgres`
//! crate: the store's interface is synchronous (a transaction is a closure,
//! run where it may block), as it is for SQLite. That client drives its own
//! runtime, which cannot run inside another one, so from inside the
//! dongle's runtime each transaction runs on a scoped thread of its own.
//!
//! Writers are serialised by a transaction-scoped advisory lock, as SQLite
//! serialises them with `BEGIN IMMEDIATE`: reads-then-writes (a step
//! budget, the audit chain's next link) see no concurrent writer, on any
//! machine. Commits wait for the write-ahead log to reach disk
//! (`synchronous_commit = on`, whatever the server's default), so a block
//! is durable before it is announced. Waiting for the writers' lock is
//! bounded: by the role's, database's or URL's own `lock_timeout` when one
//! is set (`?options=-c%20lock_timeout%3D2s`), else by [`LOCK_WAIT`]; a
//! transaction that is not granted it by then fails (and the decision it
//! served is refused, its audit row spooled), so one slow transaction on
//! one machine cannot hold every machine's decisions indefinitely.
//!
//! Connections use TLS through rustls, which always checks the server's
//! certificate against the platform's trusted roots (`SSL_CERT_FILE` and
//! `SSL_CERT_DIR` where set) and its name against the URL's host. The
//! mode is read from the URL as the client parses it, never by looking
//! for text in it: unless every host (and every `hostaddr`) is loopback
//! or a Unix socket, TLS is required, whatever the URL says (`prefer`,
//! or none, becomes `require`; `disable` is refused), so no server and
//! nothing in between can talk a dongle into plain text. On this machine
//! TLS is used when the server offers it, or as the URL says.
//!
//! The connection string is never logged or shown with its password.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use postgres::{Client, IsolationLevel, Statement, config::SslMode};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{StoreError, migrations::Migrations};

/// The key of the advisory lock every write transaction takes.
const WRITE_LOCK: i64 = 0x5afe_d06e;

/// How long a transaction waits for a lock (the writers' above, or a
/// row's) when nothing else bounds it: inside the hook's own deadline, and
/// far above a transaction's ordinary few milliseconds.
const LOCK_WAIT: &str = "5s";

/// Each entry takes the schema from version `index` to `index + 1`.
const MIGRATIONS: Migrations = &[
    r#"
CREATE TABLE executions (
    rowid         BIGSERIAL,
    id            TEXT PRIMARY KEY,
    agent         TEXT NOT NULL,
    status        TEXT NOT NULL,
    steps         BIGINT NOT NULL,
    max_steps     BIGINT NOT NULL,
    started_at    BIGINT NOT NULL,
    finished_at   BIGINT,
    owner_machine TEXT NOT NULL,
    owner_pid     BIGINT NOT NULL,
    session_id    TEXT NOT NULL,
    event_cursor  BIGINT NOT NULL,
    goal          TEXT,
    summary       TEXT
);
CREATE INDEX executions_by_agent ON executions (agent, status);

CREATE TABLE blocks (
    agent         TEXT PRIMARY KEY,
    challenge_id  TEXT NOT NULL,
    reason        TEXT NOT NULL,
    rule          TEXT,
    blocked_at    BIGINT NOT NULL
);

CREATE TABLE challenges (
    rowid         BIGSERIAL,
    id            TEXT PRIMARY KEY,
    agent         TEXT NOT NULL,
    kind          TEXT NOT NULL,
    action        TEXT NOT NULL,
    reason        TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    status        TEXT NOT NULL,
    durable       BIGINT NOT NULL,
    owner_machine TEXT NOT NULL,
    owner_pid     BIGINT NOT NULL,
    code_salt     TEXT,
    code_hash     TEXT,
    session_id    TEXT,
    pause         TEXT
);
CREATE INDEX challenges_by_agent ON challenges (agent, status);
CREATE INDEX challenges_by_session ON challenges (session_id, created_at);

CREATE TABLE events (
    id            BIGSERIAL PRIMARY KEY,
    agent         TEXT,
    kind          TEXT NOT NULL,
    message       TEXT NOT NULL,
    metadata      TEXT NOT NULL,
    created_at    BIGINT NOT NULL
);

CREATE TABLE durability (
    id            BIGINT PRIMARY KEY CHECK (id = 1),
    synced_at     BIGINT NOT NULL
);

CREATE TABLE audit (
    seq           BIGINT PRIMARY KEY,
    at            BIGINT NOT NULL,
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
    hash          TEXT NOT NULL,
    machine       TEXT
);
CREATE INDEX audit_by_agent ON audit (agent, seq);
CREATE FUNCTION audit_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'the audit log is append-only'; END
$$;
CREATE TRIGGER audit_no_change BEFORE UPDATE OR DELETE ON audit
    FOR EACH ROW EXECUTE FUNCTION audit_is_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
    FOR EACH STATEMENT EXECUTE FUNCTION audit_is_append_only();

CREATE TABLE verify_failures (
    subject       TEXT NOT NULL,
    at            BIGINT NOT NULL
);
CREATE INDEX verify_failures_by_subject ON verify_failures (subject, at);

CREATE TABLE lockouts (
    subject       TEXT PRIMARY KEY,
    until         BIGINT NOT NULL,
    level         BIGINT NOT NULL
);

CREATE TABLE downstream_servers (
    owner_machine TEXT NOT NULL,
    owner_pid     BIGINT NOT NULL,
    name          TEXT NOT NULL,
    state         TEXT NOT NULL,
    tools         BIGINT NOT NULL,
    detail        TEXT,
    updated_at    BIGINT NOT NULL,
    PRIMARY KEY (owner_machine, owner_pid, name)
);

CREATE TABLE agent_steps (
    agent         TEXT PRIMARY KEY,
    steps         BIGINT NOT NULL
);

CREATE TABLE policy_versions (
    hash          TEXT PRIMARY KEY,
    sources       TEXT NOT NULL,
    first_used    BIGINT NOT NULL
);

-- The ids of audit rows a dongle kept while the database was away and
-- has appended since (see store::spool): each is appended once.
CREATE TABLE spooled (
    id            TEXT PRIMARY KEY
);

CREATE TABLE loaded (
    owner_machine TEXT NOT NULL,
    owner_pid     BIGINT NOT NULL,
    kind          TEXT NOT NULL,
    name          TEXT NOT NULL,
    detail        TEXT NOT NULL,
    since         BIGINT NOT NULL,
    PRIMARY KEY (owner_machine, owner_pid, kind, name)
);
"#,
    r#"
CREATE TABLE central_policy (
    version       BIGINT PRIMARY KEY,
    hash          TEXT NOT NULL,
    pushed_at     BIGINT NOT NULL,
    machine       TEXT NOT NULL
);
"#,
    r#"
ALTER TABLE loaded ADD COLUMN seen_at BIGINT NOT NULL DEFAULT 0;
"#,
];

pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// An open connection and the statements prepared on it.
pub struct Connection {
    client: Client,
    statements: HashMap<String, Statement>,
    /// The connection's `lock_timeout`, for saying why a lock was not had.
    lock_wait: String,
}

/// The parts of a connection a transaction borrows at once.
pub struct Session<'c> {
    pub transaction: postgres::Transaction<'c>,
    pub statements: &'c mut HashMap<String, Statement>,
}

impl Session<'_> {
    /// The statement for `sql`, prepared on this connection once.
    pub fn prepared(&mut self, sql: &str) -> Result<Statement, StoreError> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.transaction.prepare(&dialect(sql))?;
        self.statements.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }
}

/// How long connecting may take before the attempt counts as failed.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The wait before the first new attempt after a failed one; it doubles
/// with each failure up to [`MAX_RETRY_DELAY`].
const FIRST_RETRY_DELAY: Duration = Duration::from_millis(100);
const MAX_RETRY_DELAY: Duration = Duration::from_secs(5);

/// Where the database is, and the connection to it while there is one.
/// A lost or refused connection is tried again on use, no sooner than
/// its backoff allows; until then every transaction fails at once.
pub struct Link {
    target: postgres::Config,
    tls: MakeRustlsConnect,
    connection: Option<Connection>,
    retry_at: Option<Instant>,
    delay: Duration,
    last_error: String,
}

impl Link {
    /// Reads `url` (with `password`, which is never in it) without
    /// connecting.
    pub fn new(url: &str, password: Option<&str>) -> Result<Self, StoreError> {
        let mut target: postgres::Config = url.parse().map_err(|_| {
            StoreError::Unavailable(
                "the state URL is not one the PostgreSQL client can read".into(),
            )
        })?;
        if let Some(password) = password {
            target.password(password);
        }
        if target.get_connect_timeout().is_none() {
            target.connect_timeout(CONNECT_TIMEOUT);
        }
        if !only_loopback(&target) {
            match target.get_ssl_mode() {
                SslMode::Require => {}
                SslMode::Prefer => {
                    target.ssl_mode(SslMode::Require);
                }
                _ => {
                    return Err(StoreError::Unavailable(
                        "the state URL turns TLS off (sslmode=disable) for a host that is not this machine; a shared state is reached over TLS only (sslmode=require, or no sslmode)".into(),
                    ));
                }
            }
        }
        Ok(Self {
            target,
            tls: tls()?,
            connection: None,
            retry_at: None,
            delay: FIRST_RETRY_DELAY,
            last_error: String::new(),
        })
    }

    /// The open connection, connecting first if there is none and the
    /// backoff allows.
    pub fn connected(&mut self) -> Result<&mut Connection, StoreError> {
        if self.connection.as_ref().is_some_and(|connection| connection.client.is_closed()) {
            self.lost("the connection closed".into());
        }
        if self.connection.is_none() {
            if let Some(at) = self.retry_at.filter(|at| *at > Instant::now()) {
                let wait = at.saturating_duration_since(Instant::now()).as_millis();
                return Err(StoreError::Unavailable(format!(
                    "the state database is unreachable ({}); next attempt in {wait} ms",
                    self.last_error
                )));
            }
            match Connection::open(&self.target, self.tls.clone()) {
                Ok(connection) => {
                    (self.retry_at, self.delay) = (None, FIRST_RETRY_DELAY);
                    self.connection = Some(connection);
                }
                Err(error) => {
                    self.lost(error.to_string());
                    return Err(error);
                }
            }
        }
        self.connection.as_mut().ok_or(StoreError::Inconsistent("a connection just opened is gone"))
    }

    /// Forgets the connection after `why`; the next attempt waits.
    pub fn lost(&mut self, why: String) {
        self.connection = None;
        self.last_error = why;
        self.retry_at = Some(Instant::now() + self.delay);
        self.delay = (self.delay * 2).min(MAX_RETRY_DELAY);
    }

    /// Whether the connection broke (after a failed transaction).
    pub fn broke(&self) -> bool {
        self.connection.as_ref().is_some_and(|connection| connection.client.is_closed())
    }
}

impl Connection {
    /// Connects to `target` and migrates the schema.
    pub fn open(target: &postgres::Config, tls: MakeRustlsConnect) -> Result<Self, StoreError> {
        let mut client = target.connect(tls)?;
        client.batch_execute("SET synchronous_commit TO on")?;
        let mut lock_wait: String =
            client.query_one("SELECT current_setting('lock_timeout')", &[])?.get(0);
        // `0` waits forever: no one bounded it, so this does.
        if lock_wait == "0" {
            client.batch_execute(&format!("SET lock_timeout TO '{LOCK_WAIT}'"))?;
            LOCK_WAIT.clone_into(&mut lock_wait);
        }
        migrate(&mut client)?;
        Ok(Self { client, statements: HashMap::new(), lock_wait })
    }

    /// Begins a transaction: a write holds the writers' lock, a read sees
    /// one snapshot throughout.
    pub fn begin(&mut self, write: bool) -> Result<Session<'_>, StoreError> {
        let transaction = if write {
            let mut transaction = self.client.transaction()?;
            // A simple query is one round trip; `execute` would prepare
            // the statement first, another one, while every writer waits.
            transaction.batch_execute(&format!("SELECT pg_advisory_xact_lock({WRITE_LOCK})")).map_err(|error| match error.code() {
                Some(&postgres::error::SqlState::LOCK_NOT_AVAILABLE) => {
                    StoreError::Unavailable(format!("the state's writers' lock was not free within lock_timeout {}: another dongle's transaction holds it", self.lock_wait))
                }
                _ => error.into(),
            })?;
            transaction
        } else {
            self.client
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()?
        };
        Ok(Session { transaction, statements: &mut self.statements })
    }
}

/// The TLS client: rustls over the platform's trusted roots.
fn tls() -> Result<MakeRustlsConnect, StoreError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|error| StoreError::Unavailable(format!("TLS cannot be set up: {error}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// Whether every host of `target` is this machine: loopback or a Unix
/// socket, and every address given for them (`hostaddr`, which is what
/// is connected to when set) loopback.
fn only_loopback(target: &postgres::Config) -> bool {
    target.get_hostaddrs().iter().all(std::net::IpAddr::is_loopback)
        && target.get_hosts().iter().all(|host| match host {
            postgres::config::Host::Tcp(name) => {
                name == "localhost"
                    || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
            }
            #[cfg(unix)]
            postgres::config::Host::Unix(_) => true,
        })
}

/// `sql` with SQLite's `?N` placeholders as PostgreSQL's `$N`.
pub fn dialect(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(ch) = chars.next() {
        let numbered = ch == '?' && chars.peek().is_some_and(char::is_ascii_digit);
        out.push(if numbered { '$' } else { ch });
    }
    out
}

fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let mut tx = client.transaction()?;
    // Dongles starting together migrate one after the other.
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK])?;
    // Looked up before anything is created: a dongle's role that may not
    // create tables (the least-privilege layout in docs/GUIDE.md) still connects
    // to a schema its administrator migrated.
    let exists: Option<String> =
        tx.query_one("SELECT CAST(to_regclass('schema_version') AS TEXT)", &[])?.get(0);
    if exists.is_none() {
        tx.batch_execute("CREATE TABLE schema_version (version BIGINT NOT NULL)")?;
    }
    let found: i64 =
        tx.query_opt("SELECT version FROM schema_version", &[])?.map(|row| row.get(0)).unwrap_or(0);
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema { found, supported: SCHEMA_VERSION });
    }
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    for (version, sql) in MIGRATIONS.iter().enumerate().skip(usize::try_from(found).unwrap_or(0)) {
        tx.batch_execute(sql)?;
        let next = version as i64 + 1;
        tx.execute("DELETE FROM schema_version", &[])?;
        tx.execute("INSERT INTO schema_version (version) VALUES ($1)", &[&next])?;
    }
    tx.commit()?;
    Ok(())
}

/// Runs `work` where the blocking client may drive its own runtime: here
/// outside any runtime, else on a scoped thread. A panic in `work`
/// resumes in the caller.
pub fn off_runtime<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return work();
    }
    std::thread::scope(|scope| match scope.spawn(work).join() {
        Ok(value) => value,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

/// `url` as it may be shown: without its password.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return "postgres://…".to_owned() };
    let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    let (path, _query) = path.split_once('?').unwrap_or((path, ""));
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let user =
        authority.rsplit_once('@').map(|(user, _)| user.split(':').next().unwrap_or_default());
    match user {
        Some(user) if !user.is_empty() => format!("{scheme}://{user}@{host}/{path}"),
        _ => format!("{scheme}://{host}/{path}"),
    }
}

#[cfg(test)]
mod tests {
    use super::{dialect, redacted};

    #[test]
    fn placeholders_are_renumbered_and_nothing_else_changes() {
        assert_eq!(
            dialect("UPDATE t SET a = ?2 WHERE id = ?1 AND b = '?' AND c IS NULL"),
            "UPDATE t SET a = $2 WHERE id = $1 AND b = '?' AND c IS NULL"
        );
        assert_eq!(dialect("SELECT ?10, ?1"), "SELECT $10, $1");
    }

    #[test]
    fn tls_is_required_off_this_machine_whatever_the_url_says() {
        use postgres::config::SslMode::{Disable, Prefer, Require};
        let mode = |url: &str| {
            super::Link::new(url, None)
                .map(|link| link.target.get_ssl_mode())
                .map_err(|error| error.to_string())
        };
        let cases = [
            ("postgres://dongle@db.example/state", Ok(Require)),
            ("postgres://dongle@127.0.0.1:5432,db.example/state", Ok(Require)),
            ("postgres://dongle@db.example/state?sslmode=require", Ok(Require)),
            // `sslmode=` inside another setting's value is no mode.
            ("postgres://dongle@db.example/state?application_name=nosslmode=x", Ok(Require)),
            // A server that declines TLS would be spoken to in plain text.
            ("postgres://dongle@db.example/state?sslmode=prefer", Ok(Require)),
            ("host=db.example user=dongle sslmode=prefer", Ok(Require)),
            // The address connected to is what counts, not the name.
            ("host=localhost hostaddr=10.1.2.3 user=dongle", Ok(Require)),
            ("postgres://dongle@127.0.0.1:5432/state", Ok(Prefer)),
            ("postgres://dongle@localhost/state", Ok(Prefer)),
            ("postgres://dongle@[::1]/state?sslmode=disable", Ok(Disable)),
            ("host=localhost hostaddr=127.0.0.1 user=dongle sslmode=disable", Ok(Disable)),
        ];
        for (url, expected) in cases {
            assert_eq!(mode(url), expected, "{url}");
        }
        for url in [
            "postgres://dongle@db.example/state?sslmode=disable",
            "postgres://dongle@db.example/state?sslmode=prefer&sslmode=disable",
            "host=localhost hostaddr=10.1.2.3 sslmode=disable",
        ] {
            let refused = mode(url).unwrap_err();
            assert!(
                refused.contains("turns TLS off") && refused.contains("sslmode=require"),
                "{url}: {refused}"
            );
        }
    }

    #[test]
    fn a_password_is_never_shown() {
        assert_eq!(
            redacted("postgres://dongle:s3cret@db.example:5432/state?sslmode=require"),
            "postgres://dongle@db.example:5432/state"
        );
        assert_eq!(redacted("postgresql://db.example/state"), "postgresql://db.example/state");
        assert_eq!(redacted("host=db password=s3cret"), "postgres://…");
    }
}

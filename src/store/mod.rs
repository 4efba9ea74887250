//! The dongle's durable state: one SQLite file in the data folder.
//!
//! WAL mode with `synchronous=NORMAL` for ordinary writes (a committed
//! transaction survives the process being killed) and `synchronous=FULL`
//! for [`Store::write_durable`], used for blocks, approvals and challenges
//! (it also survives power loss). Writers take the lock up front
//! (`BEGIN IMMEDIATE`), so several dongle processes can share one file and
//! the audit chain stays linear. The schema version lives in
//! `PRAGMA user_version`: older files are migrated, a newer one is refused,
//! never reset.
//!
//! A server may open the database on first use ([`Store::open_on_first_use`]):
//! the data folder is made (and checked) at once, the database when the
//! first read or write needs it, so answering a client's first requests
//! never waits for it. If it cannot be opened then, that read or write
//! fails (and every decision that needed it fails closed), saying why.

pub mod audit;
mod audit_words;
pub mod central;
mod migrations;
pub mod owner;
mod postgres;
pub mod records;
pub mod spool;
pub mod sql;
mod stored_text;

use std::{
    path::{Path, PathBuf},
    sync::{Mutex, MutexGuard, OnceLock},
    time::Duration,
};

use rusqlite::{Connection, TransactionBehavior};

pub use migrations::SCHEMA_VERSION;
pub use spool::Spool;
pub use sql::Tx;

use audit::AuditEntry;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("state database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("state database: {}", with_causes(.0))]
    Postgres(#[from] ::postgres::Error),
    #[error("cannot create the data folder {path}: {source}")]
    DataDir { path: PathBuf, source: std::io::Error },
    #[error("the data folder {path} is not private to its user: {problem}")]
    DataDirNotPrivate { path: PathBuf, problem: String },
    #[error(
        "the state database has schema version {found}, newer than this safety-dongle supports ({supported}); upgrade safety-dongle"
    )]
    NewerSchema { found: i64, supported: i64 },
    #[error("the state database is inconsistent: {0}")]
    Inconsistent(&'static str),
    #[error("the state database holds the name '{0}', which this version does not know")]
    UnknownName(String),
    #[error("the state write was interrupted: the runtime is shutting down")]
    Interrupted,
    #[error("the state database could not be opened: {0}")]
    Unavailable(String),
    #[error("central policy version {version} cannot be used by this safety-dongle: {why}")]
    CentralPolicy { version: i64, why: String },
}

/// `error` and what caused it, outermost first (the PostgreSQL client's
/// own message for a failed handshake is only "error performing TLS
/// handshake"; the reason is its cause).
fn with_causes(error: &::postgres::Error) -> String {
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}

pub const DATABASE_FILE: &str = "state.db";

/// The state database. Cheap to share behind an `Arc`; one connection,
/// used by one thread at a time.
pub struct Store {
    backend: Backend,
}

enum Backend {
    /// A file in the data folder, opened at once or on first use.
    Sqlite { connection: OnceLock<Result<Mutex<Connection>, String>>, path: PathBuf },
    /// A PostgreSQL database several machines may share, connected on use;
    /// audit rows of decisions refused while it is away wait in `spool`.
    /// `location` is its address without a password, for showing.
    Postgres { link: Box<Mutex<postgres::Link>>, location: String, spool: Option<Spool> },
}

/// What [`Store::health`] found.
#[derive(Debug, Clone)]
pub struct Health {
    /// The engine and its version: `PostgreSQL 15.14`, `SQLite 3.46.0`.
    pub server: String,
    pub round_trip: std::time::Duration,
}

/// Prepared statements kept per connection: more than the store has.
const STATEMENT_CACHE: usize = 64;

impl Store {
    /// Opens (creating if needed) the database in `data_dir`.
    pub fn open(data_dir: &Path) -> Result<Self, StoreError> {
        let store = Self::open_on_first_use(data_dir)?;
        if let Backend::Sqlite { connection, path } = &store.backend {
            let _ = connection.set(Ok(Mutex::new(connect(path)?)));
        }
        Ok(store)
    }

    /// Makes the data folder now and opens the database when the first
    /// read or write needs it.
    pub fn open_on_first_use(data_dir: &Path) -> Result<Self, StoreError> {
        private_data_dir(data_dir)?;
        Ok(Self {
            backend: Backend::Sqlite {
                connection: OnceLock::new(),
                path: data_dir.join(DATABASE_FILE),
            },
        })
    }

    /// Connects to the PostgreSQL database at `url` now (with `password`,
    /// when given) and migrates its schema; rows kept in `spool` are
    /// appended.
    pub fn open_postgres(
        url: &str,
        password: Option<&str>,
        spool: Option<Spool>,
    ) -> Result<Self, StoreError> {
        let store = Self::postgres_on_first_use(url, password, spool)?;
        store.read(|_| Ok(()))?;
        Ok(store)
    }

    /// The PostgreSQL database at `url`, connected when the first read or
    /// write needs it, and again after the connection is lost (no sooner
    /// than its backoff allows: until then reads and writes fail at once,
    /// and every decision that needs them fails closed).
    pub fn postgres_on_first_use(
        url: &str,
        password: Option<&str>,
        spool: Option<Spool>,
    ) -> Result<Self, StoreError> {
        let link = postgres::Link::new(url, password)?;
        Ok(Self {
            backend: Backend::Postgres {
                link: Box::new(Mutex::new(link)),
                location: postgres::redacted(url),
                spool,
            },
        })
    }

    /// Keeps the audit row of a decision refused because the state could
    /// not be read or written, to be appended once it can. The SQLite
    /// backend keeps none: its file is on the spool's own disk.
    pub fn keep_for_later(&self, entry: &AuditEntry<'_>) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Postgres { spool: Some(spool), .. } => spool.keep(entry),
            _ => Ok(()),
        }
    }

    /// What keeps the state (its engine and version) and how long one read
    /// of it took, for `status`.
    pub fn health(&self) -> Result<Health, StoreError> {
        let sql = match &self.backend {
            Backend::Sqlite { .. } => "SELECT 'SQLite ' || sqlite_version()",
            Backend::Postgres { .. } => "SELECT 'PostgreSQL ' || current_setting('server_version')",
        };
        let started = std::time::Instant::now();
        let server = self.read(|tx| tx.one(sql, sql::values![], |row| row.get(0)))?;
        Ok(Health { server, round_trip: started.elapsed() })
    }

    /// Where the state is, as it may be shown: the file, or the database's
    /// address without its password.
    pub fn location(&self) -> String {
        match &self.backend {
            Backend::Sqlite { path, .. } => path.display().to_string(),
            Backend::Postgres { location, .. } => location.clone(),
        }
    }

    fn lock_sqlite<'s>(
        connection: &'s OnceLock<Result<Mutex<Connection>, String>>,
        path: &Path,
    ) -> Result<MutexGuard<'s, Connection>, StoreError> {
        let connection = connection.get_or_init(|| {
            connect(path).map(Mutex::new).map_err(|error| {
                tracing::error!(%error, path = %path.display(), "the state database could not be opened");
                error.to_string()
            })
        });
        let connection = connection.as_ref().map_err(|why| StoreError::Unavailable(why.clone()))?;
        // A panic while holding the lock cannot leave SQLite half-written
        // (the transaction rolls back when dropped), so the connection is
        // still sound after poisoning.
        Ok(connection.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// Runs `work` in a transaction of the given kind; a write commits.
    fn transaction<T: Send>(
        &self,
        kind: TxKind,
        work: impl FnOnce(&Tx<'_>) -> Result<T, StoreError> + Send,
    ) -> Result<T, StoreError> {
        match &self.backend {
            Backend::Sqlite { connection, path } => {
                let mut connection = Self::lock_sqlite(connection, path)?;
                if kind == TxKind::Read {
                    return work(&Tx::sqlite(
                        connection.transaction_with_behavior(TransactionBehavior::Deferred)?,
                    ));
                }
                let durable = kind == TxKind::Durable;
                if durable {
                    connection.pragma_update(None, "synchronous", "FULL")?;
                }
                let result = (|| {
                    let tx = Tx::sqlite(
                        connection.transaction_with_behavior(TransactionBehavior::Immediate)?,
                    );
                    let value = work(&tx)?;
                    tx.commit()?;
                    Ok(value)
                })();
                if durable {
                    connection.pragma_update(None, "synchronous", "NORMAL")?;
                }
                result
            }
            // Every PostgreSQL commit waits for its log to reach disk, so
            // every write is durable.
            Backend::Postgres { link, spool, .. } => postgres::off_runtime(|| {
                // A panic mid-transaction rolls it back when dropped.
                let mut link = link.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                let result: Result<T, StoreError> = (|| {
                    if let Some(spool) = spool.as_ref().filter(|spool| spool.is_waiting()) {
                        let tx = Tx::postgres(link.connected()?.begin(true)?);
                        let drained = spool.drain(&tx)?;
                        tx.commit()?;
                        let appended = drained.appended;
                        drained.emptied()?;
                        tracing::info!(
                            rows = appended,
                            "audit rows kept while the state database was away are in the chain"
                        );
                    }
                    let tx = Tx::postgres(link.connected()?.begin(kind != TxKind::Read)?);
                    let value = work(&tx)?;
                    tx.commit()?;
                    Ok(value)
                })();
                if let Err(error) = &result
                    && link.broke()
                {
                    link.lost(error.to_string());
                }
                result
            }),
        }
    }

    /// Runs `work` in a write transaction and commits it.
    pub fn write<T: Send>(
        &self,
        work: impl FnOnce(&Tx<'_>) -> Result<T, StoreError> + Send,
    ) -> Result<T, StoreError> {
        self.transaction(TxKind::Write, work)
    }

    /// Like [`Store::write`], but the commit is flushed to stable storage
    /// before this returns (SQLite's `synchronous=FULL`).
    pub fn write_durable<T: Send>(
        &self,
        work: impl FnOnce(&Tx<'_>) -> Result<T, StoreError> + Send,
    ) -> Result<T, StoreError> {
        self.transaction(TxKind::Durable, work)
    }

    /// Flushes every transaction committed so far to stable storage: for
    /// SQLite a FULL commit syncs the WAL file, which holds all earlier
    /// commits' frames; PostgreSQL's commits are flushed already. Used after
    /// a normal commit that turned out to hold a block or a challenge,
    /// before anyone is told about it.
    pub fn sync_barrier(&self) -> Result<(), StoreError> {
        if let Backend::Postgres { .. } = self.backend {
            return Ok(());
        }
        self.write_durable(|tx| {
            tx.execute("INSERT INTO durability (id, synced_at) VALUES (1, ?1) ON CONFLICT (id) DO UPDATE SET synced_at = ?1", sql::values![now_ms()])?;
            Ok(())
        })
    }

    /// [`Store::sync_barrier`], off the async worker threads.
    pub async fn sync_barrier_async(self: &std::sync::Arc<Self>) -> Result<(), StoreError> {
        let store = self.clone();
        blocking(move || store.sync_barrier()).await
    }

    /// [`Store::write_durable`], off the async worker threads.
    pub async fn write_durable_async<T: Send + 'static>(
        self: &std::sync::Arc<Self>,
        work: impl FnOnce(&Tx<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let store = self.clone();
        blocking(move || store.write_durable(work)).await
    }

    /// Runs `work` on a read snapshot.
    pub fn read<T: Send>(
        &self,
        work: impl FnOnce(&Tx<'_>) -> Result<T, StoreError> + Send,
    ) -> Result<T, StoreError> {
        self.transaction(TxKind::Read, work)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TxKind {
    Read,
    Write,
    /// A write flushed to stable storage before it returns.
    Durable,
}

/// Runs `work`, which may sync the disk, off the async worker threads: on
/// tokio's blocking pool when a runtime is running, else right here. A
/// panic inside `work` resumes in the caller.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else { return work() };
    match runtime.spawn_blocking(work).await {
        Ok(result) => result,
        Err(error) => match error.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(_) => Err(StoreError::Interrupted),
        },
    }
}

/// Opens the database at `path`, migrated to this version's schema.
fn connect(path: &Path) -> Result<Connection, StoreError> {
    let mut connection = Connection::open(path)?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    enable_wal(&connection)?;
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    connection.pragma_update(None, "foreign_keys", "ON")?;
    // Every statement of the store stays prepared (about 40 of them;
    // rusqlite keeps 16 by default, and a step or a gated call uses
    // more than that, so each was parsed again on every call).
    connection.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // Closing does not fold the log into the database: a short-lived
    // process (the hook runs once per tool call) would pay two extra
    // syncs each time. Commits fold it in once it grows past SQLite's
    // automatic checkpoint size, so it stays bounded.
    connection.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
    migrations::migrate(&mut connection)?;
    Ok(connection)
}

/// How long a connection waits for another one's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Puts the file in WAL mode. While another connection holds the file,
/// SQLite refuses the switch at once (BUSY, without waiting as the busy
/// timeout would): processes opening a new data folder together. So the
/// switch is tried again, for as long as the busy timeout.
fn enable_wal(connection: &Connection) -> Result<(), StoreError> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match connection.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(error, _))
                if error.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            switched => return Ok(switched?),
        }
    }
}

/// Makes the data folder `dir` for this user alone, or checks that the
/// one there is: a folder others can write is refused, as a config file
/// is, since whoever writes there could plant the state (or the spool's
/// audit rows, which would enter the chain as this machine's).
pub fn private_data_dir(dir: &Path) -> Result<(), StoreError> {
    crate::platform::create_private_dir(dir)
        .map_err(|source| StoreError::DataDir { path: dir.to_path_buf(), source })?;
    match crate::platform::writable_by_others(dir) {
        Some(problem) => Err(StoreError::DataDirNotPrivate { path: dir.to_path_buf(), problem }),
        None => Ok(()),
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// RFC 3339 UTC with milliseconds, for a time in Unix milliseconds.
pub fn rfc3339(ms: i64) -> String {
    let at = std::time::UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_millis(at).to_string()
}

#[cfg(test)]
mod tests;

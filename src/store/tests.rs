//! The store's own guarantees: schema versions, an append-only audit log,
//! and a chain that shows tampering.

use rusqlite::Connection;

use super::{
    DATABASE_FILE, SCHEMA_VERSION, Store, StoreError,
    audit::{self, AuditDecision, AuditEntry, AuditEvent},
    owner::Owner,
    records::{self, EventRow, ExecutionRow, ExecutionStatus, NotificationKind},
};

fn entry(agent: &str) -> AuditEntry<'_> {
    AuditEntry {
        policy_hash: "p",
        hint: Some("ls"),
        ..AuditEntry::of(agent, AuditEvent::Step, AuditDecision::Continue)
    }
}

#[test]
fn a_newer_schema_is_refused_and_never_reset() {
    let dir = tempfile::tempdir().unwrap();
    drop(Store::open(dir.path()).unwrap());
    let raw = Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
    raw.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
    drop(raw);
    match Store::open(dir.path()) {
        Err(StoreError::NewerSchema { found, supported }) => {
            assert_eq!((found, supported), (SCHEMA_VERSION + 1, SCHEMA_VERSION))
        }
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
    let raw = Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
    let version: i64 = raw.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, SCHEMA_VERSION + 1, "the file was left as it was");
}

#[test]
fn the_audit_log_refuses_updates_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    store.write(|tx| audit::append(tx, &entry("a"))).unwrap();
    let raw = Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
    assert!(raw.execute("UPDATE audit SET decision = 'stop'", []).is_err());
    assert!(raw.execute("DELETE FROM audit", []).is_err());
}

#[test]
fn the_chain_verifies_and_shows_where_it_was_tampered_with() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for agent in ["a", "b", "c", "d"] {
        store.write(|tx| audit::append(tx, &entry(agent))).unwrap();
    }
    let report = store.read(audit::verify).unwrap();
    assert_eq!((report.rows, report.broken_at), (4, None));

    // Someone with the file drops the trigger and rewrites history.
    let raw = Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
    raw.execute_batch(
        "DROP TRIGGER audit_no_update; UPDATE audit SET decision = 'stop' WHERE seq = 3;",
    )
    .unwrap();
    let report = store.read(audit::verify).unwrap();
    assert_eq!((report.rows, report.broken_at), (2, Some(3)));

    raw.execute_batch("UPDATE audit SET decision = 'continue' WHERE seq = 3; DROP TRIGGER audit_no_delete; DELETE FROM audit WHERE seq = 2;").unwrap();
    assert_eq!(
        store.read(audit::verify).unwrap().broken_at,
        Some(3),
        "a removed row breaks the link after it"
    );
}

/// A data folder others can write is refused, whether it holds a state
/// already or not; made here, it is private; `chmod go-w` makes it usable.
#[cfg(unix)]
#[test]
fn a_data_folder_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;

    let dir = tempfile::tempdir().unwrap();
    let made = dir.path().join("made-here");
    drop(Store::open(&made).unwrap());
    assert_eq!(std::fs::metadata(&made).unwrap().permissions().mode() & 0o777, 0o700);
    for mode in [0o770, 0o707, 0o1777] {
        std::fs::set_permissions(&made, std::fs::Permissions::from_mode(mode)).unwrap();
        match Store::open_on_first_use(&made) {
            Err(error @ StoreError::DataDirNotPrivate { .. }) => {
                assert!(error.to_string().contains("writable by group or others"), "{error}")
            }
            other => panic!("mode {mode:o}: expected a refusal, got {:?}", other.map(|_| ())),
        }
    }
    std::fs::set_permissions(&made, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(Store::open(&made).is_ok(), "readable by others is not writable by them");
}

#[test]
fn a_stored_name_this_version_does_not_know_is_an_error_never_a_guess() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let execution = ExecutionRow {
        id: "e1".into(),
        agent: "a".into(),
        status: ExecutionStatus::Running,
        steps: 0,
        max_steps: 10,
        started_at: 1,
        finished_at: None,
        owner: Owner::current(),
        session_id: "s".into(),
        event_cursor: 0,
        goal: None,
        summary: None,
    };
    let event = EventRow {
        id: 0,
        agent: None,
        kind: NotificationKind::AutonomyPause,
        message: "m".into(),
        metadata: "{}".into(),
        created_at: 1,
    };
    store
        .write(|tx| {
            records::insert_execution(tx, &execution)?;
            records::insert_event(tx, &event).map(drop)
        })
        .unwrap();
    // Each reads back as written.
    let (read, events) = store
        .write(|tx| Ok((records::latest_execution(tx, "a")?, records::events_after(tx, 0, "a")?)))
        .unwrap();
    assert_eq!(read.map(|row| row.status), Some(ExecutionStatus::Running));
    assert_eq!(
        events.iter().map(|row| row.kind).collect::<Vec<_>>(),
        [NotificationKind::AutonomyPause]
    );

    // Names written by some other version: an error each, not a default.
    let raw = Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
    raw.execute("UPDATE executions SET status = 'paused'", []).unwrap();
    raw.execute("UPDATE events SET kind = 'shout'", []).unwrap();
    let execution = store.write(|tx| records::latest_execution(tx, "a"));
    assert!(matches!(execution, Err(StoreError::UnknownName(name)) if name == "paused"));
    let events = store.write(|tx| records::events_after(tx, 0, "a"));
    assert!(matches!(events, Err(StoreError::UnknownName(name)) if name == "shout"));
}

/// An audit row in a word this version does not write reads back as an
/// error naming the word, whether the log is listed or its chain checked.
#[test]
fn an_audit_row_in_an_unknown_word_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    store
        .write(|tx| {
            audit::append(
                tx,
                &AuditEntry {
                    policy_hash: "p",
                    ..AuditEntry::of("a", AuditEvent::Step, AuditDecision::Continue)
                },
            )
            .map(drop)
        })
        .unwrap();
    assert_eq!(store.read(|tx| audit::rows(tx, None, 10)).unwrap().len(), 1);
    let raw = Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
    raw.execute(
        "INSERT INTO audit (seq, at, agent, event, decision, stage, policy_hash, prev_hash, hash) VALUES (2, 1, 'a', 'step', 'continue', 'stage 9', 'p', '-', '-')",
        [],
    )
    .unwrap();
    let listed = store.read(|tx| audit::rows(tx, None, 10));
    assert!(matches!(listed, Err(StoreError::UnknownName(name)) if name == "stage 9"));
    let checked = store.read(audit::verify);
    assert!(matches!(checked, Err(StoreError::UnknownName(name)) if name == "stage 9"));
}

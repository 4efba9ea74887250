//! The store's suite, run against both backends: the SQLite file in a data
//! folder and a real PostgreSQL server (a throw-away cluster on 127.0.0.1).
//! Every table's records round-trip with the same answers, the audit log
//! refuses changes, a newer schema is refused, and writers in several
//! processes' worth of connections keep the audit chain verifiable.

use safety_dongle::store::{
    Spool, Store, StoreError,
    audit::{self, AuditDecision, AuditEntry, AuditEvent, AuditStage},
    central::{self, CentralVersion},
    owner::{Owner, SILENT_AFTER_MS},
    records::{
        self, BlockRow, ChallengeKind, ChallengeRow, ChallengeStatus, CodeHash, DownstreamRow,
        EventRow, ExecutionRow, ExecutionStatus, LoadedRow, NotificationKind, PauseKind,
    },
};

use super::postgres_cluster::Cluster;

/// Where a suite's stores live: a folder, or a database on a cluster.
enum Backend {
    Sqlite(tempfile::TempDir),
    Postgres { _cluster: Cluster, url: String },
}

impl Backend {
    fn sqlite() -> Self {
        Self::Sqlite(tempfile::tempdir().unwrap())
    }

    fn postgres() -> Self {
        let cluster = Cluster::start();
        let url = cluster.database();
        Self::Postgres { _cluster: cluster, url }
    }

    /// A new connection to the same state, as another dongle process opens.
    fn open(&self) -> Result<Store, StoreError> {
        match self {
            Self::Sqlite(dir) => Store::open(dir.path()),
            Self::Postgres { url, .. } => Store::open_postgres(url, None, None),
        }
    }
}

/// A process on another machine, whose id does not fit an `i32`.
fn runner() -> Owner {
    Owner { machine: "ci-runner-7/4f1c".into(), pid: 4_000_000_000 }
}

/// A process with the same id as another on a second machine.
fn laptop(pid: u32) -> Owner {
    Owner { machine: "laptop/9a0e".into(), pid }
}

fn execution(id: &str, agent: &str, started_at: i64) -> ExecutionRow {
    ExecutionRow {
        id: id.into(),
        agent: agent.into(),
        status: ExecutionStatus::Running,
        steps: 0,
        max_steps: 50,
        started_at,
        finished_at: None,
        owner: runner(),
        session_id: "s1".into(),
        event_cursor: 0,
        goal: Some("ship it".into()),
        summary: None,
    }
}

fn challenge(id: &str, agent: &str, created_at: i64, pause: Option<PauseKind>) -> ChallengeRow {
    ChallengeRow {
        id: id.into(),
        agent: agent.into(),
        kind: ChallengeKind::Approval,
        action: "git push --force".into(),
        reason: "needs a human".into(),
        created_at,
        expires_at: created_at + 60_000,
        status: ChallengeStatus::Pending,
        durable: false,
        owner: laptop(7),
        session_id: Some("s1".into()),
        pause,
    }
}

fn records_round_trip(backend: &Backend) {
    let store = backend.open().unwrap();
    store
        .write(|tx| {
            records::insert_execution(tx, &execution("e1", "coder", 100))?;
            records::insert_execution(tx, &execution("e2", "coder", 100))?;
            records::insert_execution(tx, &execution("e3", "other", 50))?;
            Ok(())
        })
        .unwrap();
    let (active, latest, all) = store
        .read(|tx| {
            Ok((
                records::active_execution(tx, "coder")?,
                records::latest_execution(tx, "coder")?,
                records::active_executions(tx)?,
            ))
        })
        .unwrap();
    assert_eq!(
        active.map(|row| row.id),
        Some("e2".into()),
        "equal start times: the one inserted last"
    );
    assert_eq!(
        latest.unwrap(),
        execution("e2", "coder", 100),
        "every field round-trips, u32 beyond i32 included"
    );
    assert_eq!(all.iter().map(|row| row.id.as_str()).collect::<Vec<_>>(), ["e3", "e1", "e2"]);
    let mut finished = execution("e2", "coder", 100);
    (finished.status, finished.steps, finished.finished_at, finished.summary) =
        (ExecutionStatus::Completed, 3, Some(200), Some("done".into()));
    store.write(|tx| records::update_execution(tx, &finished)).unwrap();
    assert_eq!(store.read(|tx| records::latest_execution(tx, "coder")).unwrap(), Some(finished));
    assert!(matches!(
        store.write(|tx| records::update_execution(tx, &execution("gone", "x", 1))),
        Err(StoreError::Inconsistent(_))
    ));
    let of_session = store
        .read(|tx| {
            Ok((
                records::active_executions_of(tx, &runner(), Some("s1"))?,
                records::active_executions_of(tx, &runner(), None)?,
            ))
        })
        .unwrap();
    assert_eq!((of_session.0.len(), of_session.1.len()), (2, 2));
    assert!(
        store
            .read(|tx| records::active_executions_of(
                tx,
                &Owner { machine: "elsewhere".into(), ..runner() },
                None
            ))
            .unwrap()
            .is_empty(),
        "same id, other machine"
    );

    // Blocks: the first one stays.
    let block = BlockRow {
        agent: "coder".into(),
        challenge_id: "c0".into(),
        reason: "rm -rf /".into(),
        rule: Some("deny".into()),
        blocked_at: 5,
    };
    store.write(|tx| records::insert_block(tx, &block)).unwrap();
    store
        .write(|tx| {
            records::insert_block(tx, &BlockRow { challenge_id: "c9".into(), ..block.clone() })
        })
        .unwrap();
    store.write(|tx| records::set_block_challenge(tx, "coder", "c1")).unwrap();
    assert_eq!(
        store.read(|tx| records::block_of(tx, "coder")).unwrap(),
        Some(BlockRow { challenge_id: "c1".into(), ..block.clone() })
    );
    assert_eq!(store.read(records::blocks).unwrap().len(), 1);

    // Challenges, their hashes, pauses and counts.
    store
        .write(|tx| {
            records::insert_challenge(
                tx,
                &challenge("c1", "coder", 10, Some(PauseKind::Approval)),
            )?;
            records::insert_challenge(
                tx,
                &challenge("c2", "coder", 10, Some(PauseKind::Verification)),
            )?;
            records::insert_challenge(tx, &challenge("c3", "coder", 20, None))?;
            records::insert_challenge(
                tx,
                &ChallengeRow {
                    owner: Owner { machine: "desk/77".into(), pid: 7 },
                    ..challenge("c4", "other", 30, None)
                },
            )?;
            records::set_challenge_hash(
                tx,
                "c1",
                &CodeHash { salt: "salt".into(), hash: "hash".into() },
            )
        })
        .unwrap();
    let (stored, hash) = store.read(|tx| records::challenge(tx, "c1")).unwrap().unwrap();
    assert_eq!(
        (stored, hash),
        (
            challenge("c1", "coder", 10, Some(PauseKind::Approval)),
            Some(CodeHash { salt: "salt".into(), hash: "hash".into() })
        )
    );
    assert_eq!(
        store.read(|tx| records::pausing_challenge(tx, "coder")).unwrap().map(|row| row.id),
        Some("c2".into())
    );
    assert_eq!(
        store
            .read(|tx| records::challenges_since(tx, "coder", ChallengeKind::Approval, 15))
            .unwrap(),
        1
    );
    assert_eq!(store.read(|tx| records::challenges_in_session_since(tx, "s1", 0)).unwrap(), 4);
    assert!(
        store.write(|tx| records::settle_challenge(tx, "c2", ChallengeStatus::Approved)).unwrap()
    );
    assert!(
        !store.write(|tx| records::settle_challenge(tx, "c2", ChallengeStatus::Denied)).unwrap(),
        "settled once"
    );
    store.write(|tx| records::set_challenge_status(tx, "c3", ChallengeStatus::Expired)).unwrap();
    assert_eq!(
        store
            .read(|tx| records::pending_challenges(tx, 0))
            .unwrap()
            .iter()
            .map(|row| row.id.as_str())
            .collect::<Vec<_>>(),
        ["c1", "c4"]
    );
    assert_eq!(
        store.write(|tx| records::cancel_challenges_of(tx, &laptop(7), Some("s1"))).unwrap(),
        2,
        "c1 pending and c2 approved, not c4 of pid 7 on another machine"
    );
    assert_eq!(
        store.read(|tx| records::challenge(tx, "c4")).unwrap().unwrap().0.status,
        ChallengeStatus::Pending
    );

    // Failures, lockouts, step counts.
    store
        .write(|tx| {
            records::insert_failure(tx, "agent:coder", 10).and(records::insert_failure(
                tx,
                "agent:coder",
                20,
            ))
        })
        .unwrap();
    assert_eq!(store.read(|tx| records::failures_since(tx, "agent:coder", 15)).unwrap(), 1);
    store
        .write(|tx| {
            records::set_lockout(tx, "agent:coder", 99, 1).and(records::set_lockout(
                tx,
                "agent:coder",
                199,
                2,
            ))
        })
        .unwrap();
    assert_eq!(store.read(|tx| records::lockout(tx, "agent:coder")).unwrap(), Some((199, 2)));
    store
        .write(|tx| {
            records::set_agent_steps(tx, "coder", 3).and(records::set_agent_steps(tx, "coder", 4))
        })
        .unwrap();
    assert_eq!(
        store
            .read(|tx| Ok((
                records::agent_steps(tx, "coder")?,
                records::agent_steps(tx, "nobody")?
            )))
            .unwrap(),
        (4, 0)
    );

    // Events, in order, to one agent or to all.
    let event = |agent: Option<&str>| EventRow {
        id: 0,
        agent: agent.map(Into::into),
        kind: NotificationKind::DangerZone,
        message: "m".into(),
        metadata: "{}".into(),
        created_at: 1,
    };
    let first = store.write(|tx| records::insert_event(tx, &event(Some("coder")))).unwrap();
    let second = store.write(|tx| records::insert_event(tx, &event(None))).unwrap();
    store.write(|tx| records::insert_event(tx, &event(Some("other")))).unwrap();
    assert!(second > first);
    let seen = store.read(|tx| records::events_after(tx, 0, "coder")).unwrap();
    assert_eq!(
        seen.iter().map(|e| (e.id, e.agent.clone())).collect::<Vec<_>>(),
        [(first, Some("coder".into())), (second, None)]
    );
    assert_eq!(store.read(records::last_event_id).unwrap(), second + 1);

    // Downstream servers and what each process loaded.
    let server = DownstreamRow {
        owner: laptop(7),
        name: "fs".into(),
        state: "up".into(),
        tools: 14,
        detail: None,
        updated_at: 1,
    };
    store
        .write(|tx| {
            records::upsert_downstream(tx, &server).and(records::upsert_downstream(
                tx,
                &DownstreamRow { state: "down".into(), ..server.clone() },
            ))
        })
        .unwrap();
    store.write(|tx| records::insert_downstream_if_absent(tx, &server)).unwrap();
    let elsewhere = DownstreamRow { owner: runner(), ..server.clone() };
    store.write(|tx| records::insert_downstream_if_absent(tx, &elsewhere)).unwrap();
    assert_eq!(
        store.read(records::downstreams).unwrap(),
        [elsewhere.clone(), DownstreamRow { state: "down".into(), ..server.clone() }]
    );
    store.write(|tx| records::remove_downstream(tx, &laptop(7), "fs")).unwrap();
    store.write(|tx| records::remove_downstreams_of(tx, &laptop(8))).unwrap();
    assert_eq!(store.read(records::downstreams).unwrap(), [elsewhere]);
    let loaded = LoadedRow {
        owner: laptop(7),
        kind: "policy".into(),
        name: "default".into(),
        detail: "sha256:ab".into(),
        since: 3,
        seen_at: 0,
    };
    store.write(|tx| records::set_loaded(tx, &laptop(7), std::slice::from_ref(&loaded))).unwrap();
    store.write(|tx| records::set_loaded(tx, &laptop(8), &[])).unwrap();
    let (read, clock) = store.read(|tx| Ok((records::loaded(tx)?, tx.shared_clock_ms()?))).unwrap();
    assert_eq!(read, [LoadedRow { seen_at: read[0].seen_at, ..loaded.clone() }]);
    assert!(
        (0..5_000).contains(&(clock - read[0].seen_at)),
        "seen as written, by the shared clock: {} then {clock}",
        read[0].seen_at
    );

    // A dongle on another machine serves while it says so; one silent for
    // a minute is gone, one that never said so is given the benefit.
    let serving = |owner: &Owner| store.read(|tx| records::may_be_serving(tx, owner)).unwrap();
    let silence = |ms: i64| {
        store
            .write(|tx| tx.execute("UPDATE loaded SET seen_at = seen_at - ?1", &[ms.into()]))
            .unwrap()
    };
    assert!(serving(&laptop(7)));
    silence(SILENT_AFTER_MS + 1_000);
    assert!(!serving(&laptop(7)), "silent for over a minute");
    store.write(|tx| records::heartbeat(tx, &laptop(7))).unwrap();
    assert!(serving(&laptop(7)), "heard again");
    assert!(serving(&laptop(8)), "never said anything");
    assert!(
        !serving(&Owner { machine: Owner::current().machine, pid: u32::MAX - 1 }),
        "a process id free on this machine is gone"
    );
    store.sync_barrier().unwrap();
}

fn entry(agent: &str) -> AuditEntry<'_> {
    AuditEntry {
        policy_hash: "p",
        hint: Some("ls"),
        ..AuditEntry::of(agent, AuditEvent::Step, AuditDecision::Continue)
    }
}

fn audit_chain_and_policies(backend: &Backend) {
    let store = backend.open().unwrap();
    for agent in ["a", "b", "a"] {
        store.write(|tx| audit::append(tx, &entry(agent))).unwrap();
    }
    assert_eq!(store.read(audit::verify).unwrap(), audit::ChainReport { rows: 3, broken_at: None });
    let rows = store.read(|tx| audit::rows(tx, Some("a"), 10)).unwrap();
    assert_eq!(rows.iter().map(|row| row.seq).collect::<Vec<_>>(), [1, 3]);
    assert!(
        rows.iter().all(|row| row.machine == Some(Owner::current().machine)),
        "each row names the machine that wrote it: {rows:?}"
    );
    assert_eq!(
        store
            .read(|tx| audit::rows(tx, None, 2))
            .unwrap()
            .iter()
            .map(|row| row.seq)
            .collect::<Vec<_>>(),
        [2, 3]
    );
    assert_eq!(store.read(|tx| audit::actions_since(tx, 0, None)).unwrap().len(), 3);
    store
        .write(|tx| {
            audit::remember_policy(tx, "h1", "{\"a\":1}").and(audit::remember_policy(
                tx,
                "h1",
                "{\"b\":2}",
            ))
        })
        .unwrap();
    assert_eq!(
        store
            .read(|tx| Ok((
                audit::knows_policy(tx, "h1")?,
                audit::knows_policy(tx, "h2")?,
                audit::policy_sources(tx, "h1")?
            )))
            .unwrap(),
        (true, false, Some("{\"a\":1}".into()))
    );

    // Central policy versions number themselves and keep their sources.
    assert_eq!(store.read(central::latest).unwrap(), None);
    assert_eq!(store.write(|tx| central::push(tx, "c1", "[1]", "laptop", 10)).unwrap(), 1);
    assert_eq!(
        backend.open().unwrap().write(|tx| central::push(tx, "c2", "[2]", "runner", 20)).unwrap(),
        2,
        "another connection pushes the next version"
    );
    let latest = CentralVersion {
        version: 2,
        hash: "c2".into(),
        sources: "[2]".into(),
        pushed_at: 20,
        machine: "runner".into(),
    };
    assert_eq!(
        store.read(|tx| Ok((central::latest_version(tx)?, central::latest(tx)?))).unwrap(),
        (Some(2), Some(latest))
    );
    assert_eq!(store.read(|tx| audit::policy_sources(tx, "c1")).unwrap().as_deref(), Some("[1]"));
}

/// Four writers, each its own connection (as four dongle processes
/// would have), append at once; the chain stays one line.
fn concurrent_writers_keep_one_chain(backend: &Backend) {
    std::thread::scope(|scope| {
        for writer in 0..4 {
            scope.spawn(move || {
                let store = backend.open().unwrap();
                let agent = format!("w{writer}");
                for _ in 0..50 {
                    store.write(|tx| audit::append(tx, &entry(&agent))).unwrap();
                }
            });
        }
    });
    let store = backend.open().unwrap();
    assert_eq!(
        store.read(audit::verify).unwrap(),
        audit::ChainReport { rows: 200, broken_at: None }
    );
}

/// Text holding U+0000 (which PostgreSQL's `TEXT` refuses) or the
/// store's escape character goes in and reads back exactly as sent, in
/// the audit chain (which still verifies) and in the records.
fn every_text_is_stored_as_sent(backend: &Backend) {
    let store = backend.open().unwrap();
    let texts = [
        "printf 'a\0b' > out",
        "\0",
        "\u{FFFF}0 and \u{FFFF}\u{FFFF} and \u{FFFF}",
        "\0\u{FFFF}\0",
        "é\0ü",
    ];
    for text in texts {
        let agent = format!("agent\0{text}");
        store
            .write(|tx| audit::append(tx, &AuditEntry { hint: Some(text), ..entry(&agent) }))
            .unwrap();
        store
            .write(|tx| {
                records::insert_challenge(
                    tx,
                    &ChallengeRow { action: text.into(), ..challenge(text, &agent, 1, None) },
                )
            })
            .unwrap();
        let (stored, _) = store.read(|tx| records::challenge(tx, text)).unwrap().unwrap();
        assert_eq!(
            (stored.action.as_str(), stored.agent.as_str()),
            (text, agent.as_str()),
            "a record's text, looked up by text"
        );
        let row = store.read(|tx| audit::rows(tx, Some(&agent), 1)).unwrap().pop().unwrap();
        assert_eq!((row.agent.as_str(), row.hint.as_deref()), (agent.as_str(), Some(text)));
    }
    assert_eq!(
        store.read(audit::verify).unwrap(),
        audit::ChainReport { rows: texts.len() as u64, broken_at: None }
    );
}

/// Each suite as a module with one test per backend.
macro_rules! on_both_backends {
    ($($suite:ident),*) => {$(
        mod $suite {
            #[test]
            fn sqlite() {
                super::$suite(&super::Backend::sqlite());
            }

            #[test]
            fn postgres() {
                super::$suite(&super::Backend::postgres());
            }
        }
    )*};
}

on_both_backends!(
    records_round_trip,
    audit_chain_and_policies,
    concurrent_writers_keep_one_chain,
    every_text_is_stored_as_sent
);

/// PostgreSQL's own guarantees, as the SQLite file has them (see the
/// store's unit tests): rows of the audit log cannot be changed or
/// removed, and a schema newer than this version is refused and kept.
#[test]
fn postgres_refuses_audit_changes_and_a_newer_schema() {
    let backend = Backend::postgres();
    let Backend::Postgres { url, .. } = &backend else { unreachable!() };
    let store = backend.open().unwrap();
    store.write(|tx| audit::append(tx, &entry("a"))).unwrap();
    let mut raw = postgres::Client::connect(url, postgres::NoTls).unwrap();
    for change in ["UPDATE audit SET decision = 'stop'", "DELETE FROM audit", "TRUNCATE audit"] {
        let refused = raw.batch_execute(change).unwrap_err();
        assert!(
            refused.to_string().contains("append-only")
                || format!("{refused:?}").contains("append-only"),
            "{change}: {refused:?}"
        );
    }
    raw.batch_execute("UPDATE schema_version SET version = version + 1").unwrap();
    match Store::open_postgres(url, None, None) {
        Err(StoreError::NewerSchema { found, supported }) => assert_eq!(found, supported + 1),
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
    let version: i64 = raw.query_one("SELECT version FROM schema_version", &[]).unwrap().get(0);
    assert!(version > 1, "the database was left as it was");
}

/// Nothing shown of the state's address carries the password.
#[test]
fn the_postgres_location_never_shows_the_password() {
    let cluster = Cluster::start();
    let url = cluster.database().replace("postgres@", "postgres:not-needed-with-trust@");
    let store = Store::open_postgres(&url, None, None).unwrap();
    assert!(!store.location().contains("not-needed"), "{}", store.location());
    assert!(store.location().starts_with("postgres://postgres@127.0.0.1:"), "{}", store.location());
}

/// A URL that requires TLS is refused by a server that cannot speak it,
/// rather than served in plain text.
#[test]
fn a_postgres_url_requiring_tls_is_refused_not_downgraded() {
    let cluster = Cluster::start();
    let url = format!("{}?sslmode=require", cluster.database());
    let refused = Store::open_postgres(&url, None, None).err().expect("no connection without TLS");
    assert!(matches!(refused, StoreError::Postgres(_)), "{refused:?}");
}

/// Rows kept while the database was away are appended in order when it
/// answers, each once: a spool read again (as after a crash between the
/// commit and emptying the file) adds nothing.
#[test]
fn postgres_appends_kept_rows_once_and_in_order() {
    let backend = Backend::postgres();
    let Backend::Postgres { url, .. } = &backend else { unreachable!() };
    let folder = tempfile::tempdir().unwrap();
    let spool = Spool::in_folder(folder.path());
    for agent in ["first", "second"] {
        spool
            .keep(&AuditEntry {
                stage: Some(AuditStage::State),
                policy_hash: "p",
                ..AuditEntry::of(agent, AuditEvent::Step, AuditDecision::Stop)
            })
            .unwrap();
    }
    let file = folder.path().join(safety_dongle::store::spool::SPOOL_FILE);
    let kept = std::fs::read(&file).unwrap();
    let store = Store::open_postgres(url, None, Some(spool)).unwrap();
    let agents = |store: &Store| {
        store
            .read(|tx| audit::rows(tx, None, 10))
            .unwrap()
            .into_iter()
            .map(|row| row.agent)
            .collect::<Vec<_>>()
    };
    assert_eq!(agents(&store), ["first", "second"]);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 0, "the spool is emptied");

    // The same lines again, as after a crash between the commit and
    // emptying the file.
    std::fs::write(&file, kept).unwrap();
    assert_eq!(agents(&store), ["first", "second"], "appended once");
    assert_eq!(store.read(audit::verify).unwrap(), audit::ChainReport { rows: 2, broken_at: None });
}

/// One bad line holds no other back: a row holding U+0000 goes in as it
/// was sent; a line that is no row, one the database refuses, and one cut
/// short by a crash (another refusal was kept after it) are each kept as
/// they were beside the spool with an audit row saying so; every row goes
/// in, in order, once, and the chain verifies.
#[test]
fn postgres_appends_every_kept_row_and_sets_bad_lines_aside() {
    use std::io::Write;

    let backend = Backend::postgres();
    let Backend::Postgres { url, .. } = &backend else { unreachable!() };
    let folder = tempfile::tempdir().unwrap();
    let spool = Spool::in_folder(folder.path());
    let file = folder.path().join(safety_dongle::store::spool::SPOOL_FILE);
    let raw = |bytes: &[u8]| {
        std::fs::OpenOptions::new().append(true).open(&file).unwrap().write_all(bytes).unwrap()
    };
    let keep = |agent: &str, hint: &str| {
        spool
            .keep(&AuditEntry {
                hint: Some(hint),
                stage: Some(AuditStage::State),
                policy_hash: "p",
                ..AuditEntry::of(agent, AuditEvent::Step, AuditDecision::Stop)
            })
            .unwrap()
    };

    keep("first", "printf 'a\0b' > out");
    raw(b"not a row\n");
    // An id the primary key's index cannot hold: PostgreSQL refuses it.
    let huge: String = (0..700).map(|_| uuid::Uuid::new_v4().simple().to_string()).collect();
    let refused = serde_json::json!({"id": huge, "at": 1, "agent": "refused", "execution_id": null, "session_id": null, "event": "step", "hint": null, "decision": "stop", "stage": null, "rule": null, "policy_hash": "p"});
    raw(format!("{refused}\n").as_bytes());
    keep("second", "ls");
    let cut = br#"{"id":"cut-short","at":1,"agent":"thi"#;
    raw(cut);
    keep("third", "ls");
    raw(cut);

    let store = Store::open_postgres(url, None, Some(spool)).unwrap();
    let rows = store.read(|tx| audit::rows(tx, None, 10)).unwrap();
    let seen: Vec<(&str, &str)> =
        rows.iter().map(|row| (row.agent.as_str(), row.decision.name())).collect();
    assert_eq!(
        seen,
        [
            ("first", "stop"),
            ("", "set_aside"),
            ("", "set_aside"),
            ("second", "stop"),
            ("", "set_aside"),
            ("third", "stop"),
            ("", "set_aside")
        ]
    );
    assert_eq!(rows[0].hint.as_deref(), Some("printf 'a\0b' > out"), "stored as sent");
    assert!(
        rows[1].hint.as_deref().unwrap().contains("line 2 of")
            && rows[1].hint.as_deref().unwrap().contains("audit-spool.set-aside"),
        "{:?}",
        rows[1].hint
    );
    assert!(
        rows[2].hint.as_deref().unwrap().contains("index row"),
        "the database's reason: {:?}",
        rows[2].hint
    );
    assert!(
        rows[4].hint.as_deref().unwrap().contains("line 5 of"),
        "the next refusal began a line of its own: {:?}",
        rows[4].hint
    );
    assert!(rows[6].hint.as_deref().unwrap().contains("cut short"), "{:?}", rows[6].hint);
    assert_eq!(store.read(audit::verify).unwrap(), audit::ChainReport { rows: 7, broken_at: None });
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 0, "the spool is emptied");
    let aside =
        std::fs::read(folder.path().join(safety_dongle::store::spool::SET_ASIDE_FILE)).unwrap();
    let expected =
        [&b"not a row\n"[..], format!("{refused}\n").as_bytes(), cut, b"\n", cut, b"\n"].concat();
    assert_eq!(
        String::from_utf8_lossy(&aside),
        String::from_utf8_lossy(&expected),
        "each bad line kept as it was"
    );
    store.write(|_| Ok(())).unwrap();
    assert_eq!(store.read(audit::verify).unwrap().rows, 7, "nothing appended twice");
}

/// A spooled row in a word this version does not write (a newer
/// version's, or a hand-edited file) is set aside with its reason, not
/// appended under a guessed word; the rows around it go in.
#[test]
fn postgres_sets_aside_a_spooled_row_in_an_unknown_word() {
    use std::io::Write;

    let backend = Backend::postgres();
    let Backend::Postgres { url, .. } = &backend else { unreachable!() };
    let folder = tempfile::tempdir().unwrap();
    let spool = Spool::in_folder(folder.path());
    let keep = |agent: &str| {
        spool
            .keep(&AuditEntry {
                policy_hash: "p",
                ..AuditEntry::of(agent, AuditEvent::Gate, AuditDecision::Refused)
            })
            .unwrap()
    };
    keep("first");
    let unknown = serde_json::json!({"id": "unknown-word", "at": 1, "agent": "odd", "execution_id": null, "session_id": null, "event": "gate", "hint": null, "decision": "shrugged", "stage": null, "rule": null, "policy_hash": "p"});
    std::fs::OpenOptions::new()
        .append(true)
        .open(folder.path().join(safety_dongle::store::spool::SPOOL_FILE))
        .unwrap()
        .write_all(format!("{unknown}\n").as_bytes())
        .unwrap();
    keep("second");

    let store = Store::open_postgres(url, None, Some(spool)).unwrap();
    let rows = store.read(|tx| audit::rows(tx, None, 10)).unwrap();
    let seen: Vec<(&str, &str)> =
        rows.iter().map(|row| (row.agent.as_str(), row.decision.name())).collect();
    assert_eq!(seen, [("first", "refused"), ("", "set_aside"), ("second", "refused")]);
    let why = rows[1].hint.as_deref().unwrap();
    assert!(why.contains("'shrugged'") && why.contains("line 2 of"), "{why}");
}

/// A writer waiting for the writers' lock that another transaction holds
/// gives up with a reason (5 s by default, or the URL's `lock_timeout`)
/// instead of waiting for as long as that transaction lasts; once the
/// lock is free, writes go on.
#[test]
fn postgres_waits_for_the_writers_lock_a_bounded_time() {
    let backend = Backend::postgres();
    let Backend::Postgres { url, .. } = &backend else { unreachable!() };
    let configured = format!("{url}?options=-c%20lock_timeout%3D1500ms");
    let stores = [
        std::sync::Arc::new(backend.open().unwrap()),
        std::sync::Arc::new(Store::open_postgres(&configured, None, None).unwrap()),
    ];
    let mut holder = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let mut holding = holder.transaction().unwrap();
    // The store's writers' lock (0x5afe_d06e), held by a slow transaction.
    holding.batch_execute("SELECT pg_advisory_xact_lock(1526648942)").unwrap();

    for (store, bound) in stores.iter().zip(["5s", "1500ms"]) {
        let (done, waited) = std::sync::mpsc::channel();
        let writer = store.clone();
        // Not joined: a writer that waited for ever would hold the test.
        std::thread::spawn(move || {
            done.send(writer.write(|tx| audit::append(tx, &entry("waiting"))))
        });
        // Far beyond the bound: without one, the write waits as long as
        // the holder, here for ever.
        let refused = waited
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("the wait for the lock is bounded");
        let why = refused.expect_err("not granted while held").to_string();
        assert!(
            why.contains("writers' lock was not free")
                && why.contains(&format!("lock_timeout {bound}")),
            "{why}"
        );
    }
    holding.rollback().unwrap();
    for store in &stores {
        store.write(|tx| audit::append(tx, &entry("after"))).unwrap();
    }
    assert_eq!(
        stores[0].read(audit::verify).unwrap(),
        audit::ChainReport { rows: 2, broken_at: None }
    );
}

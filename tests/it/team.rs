//! Several dongles, one PostgreSQL database (`state = "postgres://…"`),
//! through the real binary: a block raised through one dongle refuses the
//! agent on another with its own data folder, the code shown for it lifts
//! it from either, and a database that goes away closes the loop.

use safety_dongle::store::{Store, audit};

use super::{
    hook::{bash, decision, run_hook},
    humans::{Answer, Setup, notified_id, verify},
    postgres_cluster::Cluster,
    support::{ask, execute, step},
};

/// `safety-dongle COMMAND --config CONFIG ARGS…`, run to its end.
fn dongle(command: &str, config: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(super::support::binary())
        .arg(command)
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .unwrap()
}

/// A throw-away cluster, a database on it, and a dongle whose state is
/// there.
fn one_dongle_on_a_cluster() -> (Cluster, String, Setup) {
    let cluster = Cluster::start();
    let url = cluster.database();
    let dongle = Setup::new(Answer::Approve, 300).sharing(&url);
    (cluster, url, dongle)
}

/// The chain's rows, read straight from the database (on a thread of
/// its own: the blocking client cannot be dropped inside a runtime).
fn chain(url: &str) -> Vec<audit::AuditRow> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let store = Store::open_postgres(url, None, None).unwrap();
                assert_eq!(
                    store.read(audit::verify).unwrap().broken_at,
                    None,
                    "the chain verifies"
                );
                store.read(|tx| audit::rows(tx, None, 10_000)).unwrap()
            })
            .join()
            .unwrap()
    })
}

/// A hooked command holding U+0000 (which PostgreSQL's `TEXT` refuses)
/// is judged and its row stored as sent; it wedges nothing on the
/// machine: the next hooked call is decided, `status` answers, and no row
/// waits in the spool.
#[tokio::test]
async fn a_hooked_command_holding_nul_is_stored_as_sent_and_wedges_nothing() {
    let (_cluster, url, dongle_setup) = one_dongle_on_a_cluster();
    let config = dongle_setup.config.to_str().unwrap();
    let args = ["hook", "claude-code", "--config", config, "--agent", "coder"];
    let command = "ls 'a\0b'";

    let first = run_hook(&args, &bash("s1", command)).await;
    assert!(
        !first.to_string().contains("unavailable"),
        "decided, not refused for want of the state: {first}"
    );
    let next = run_hook(&args, &bash("s1", "ls")).await;
    assert_eq!(
        decision(&next),
        "defer",
        "the next call on this machine is decided (let through): {next}"
    );
    let status = dongle("status", &dongle_setup.config, &[]);
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    assert!(String::from_utf8_lossy(&status.stdout).contains("blocked agents: 0"));

    let hints: Vec<String> = chain(&url)
        .into_iter()
        .filter(|row| row.event.name() == "gate")
        .filter_map(|row| row.hint)
        .collect();
    assert!(hints.first().is_some_and(|hint| hint == command), "stored as sent: {hints:?}");
    assert_eq!(hints.last().map(String::as_str), Some("ls"), "{hints:?}");
}

/// A hooked call refused while the database is away is audited: its row
/// is kept on this machine and is in the chain once the database answers.
#[tokio::test]
async fn a_hook_refusal_while_the_database_is_away_reaches_the_chain() {
    let (cluster, url, dongle_setup) = one_dongle_on_a_cluster();
    let config = dongle_setup.config.to_str().unwrap();
    let args = ["hook", "claude-code", "--config", config, "--agent", "coder"];
    assert_eq!(decision(&run_hook(&args, &bash("s1", "ls")).await), "defer");

    cluster.stop();
    let refused = run_hook(&args, &bash("s1", "make release-while-away")).await;
    assert_eq!(decision(&refused), "deny", "fail closed without the state: {refused}");
    let status = dongle("status", &dongle_setup.config, &[]);
    let said = String::from_utf8_lossy(&status.stderr);
    assert!(
        said.contains("audit rows kept on this machine until the database answers: 1"),
        "{said}"
    );

    cluster.serve();
    assert_eq!(decision(&run_hook(&args, &bash("s1", "ls")).await), "defer");
    let kept: Vec<_> = chain(&url)
        .into_iter()
        .filter(|row| row.hint.as_deref() == Some("make release-while-away"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        (kept[0].agent.as_str(), kept[0].decision.name(), kept[0].stage.map(|stage| stage.name())),
        ("coder", "refused", Some("state"))
    );
}

/// A data folder others can write is refused on a shared database too:
/// nothing starts, and rows planted in its spool never enter the chain as
/// this machine's.
#[test]
fn a_data_folder_others_can_write_is_refused_and_its_spool_never_read() {
    use std::os::unix::fs::PermissionsExt;

    let (_cluster, url, dongle_setup) = one_dongle_on_a_cluster();
    let folder = dongle_setup.dir.join("state");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    let planted = serde_json::json!({"id": "planted", "at": 1, "agent": "coder", "execution_id": null, "session_id": null, "event": "unblock", "hint": null, "decision": "unblocked", "stage": null, "rule": null, "policy_hash": "-"});
    std::fs::write(folder.join("audit-spool.jsonl"), format!("{planted}\n")).unwrap();

    let status = dongle("status", &dongle_setup.config, &[]);
    let said = String::from_utf8_lossy(&status.stderr);
    assert_eq!(status.status.code(), Some(1), "{said}");
    assert!(
        said.contains("is not private to its user") && said.contains("writable by group or others"),
        "{said}"
    );
    assert!(
        chain(&url).iter().all(|row| row.event.name() != "unblock"),
        "the planted row is not in the chain"
    );

    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
    let status = dongle("status", &dongle_setup.config, &[]);
    assert!(
        status.status.success(),
        "private again, it starts: {}",
        String::from_utf8_lossy(&status.stderr)
    );
}

/// A step waiting for the writers' lock that a slow transaction holds
/// is refused after a bounded wait, with its audit row kept and in the
/// chain once the lock is free; the agent goes on then.
#[tokio::test]
async fn a_step_behind_a_held_writers_lock_is_refused_in_bounded_time_and_audited() {
    let (_cluster, url, dongle_setup) = one_dongle_on_a_cluster();
    let mut raw = dongle_setup.start().await;
    assert_eq!(ask(&mut raw, execute(1, "coder")).await["success"], true);

    // Another machine's slow transaction holds the lock until told.
    let (held, holding) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let lock_url = url.clone();
    let holder = std::thread::spawn(move || {
        let mut client = postgres::Client::connect(&lock_url, postgres::NoTls).unwrap();
        let mut transaction = client.transaction().unwrap();
        transaction.batch_execute("SELECT pg_advisory_xact_lock(1526648942)").unwrap();
        held.send(()).unwrap();
        let _ = released.recv();
        transaction.rollback().unwrap();
    });
    holding.recv().unwrap();
    // `ask` gives up after 20 s: the refusal comes before that.
    let refused = ask(&mut raw, step(2, "coder", "make while-locked")).await["data"].clone();
    assert_eq!(refused["continue"], false, "{refused}");
    assert!(
        refused["reason"].as_str().unwrap_or_default().contains("Safety state unavailable"),
        "{refused}"
    );
    release.send(()).unwrap();
    holder.join().unwrap();

    assert_eq!(
        ask(&mut raw, step(3, "coder", "cargo build")).await["data"]["continue"],
        true,
        "the lock is free again"
    );
    raw.assert_alive();
    let kept: Vec<_> = chain(&url)
        .into_iter()
        .filter(|row| row.hint.as_deref() == Some("make while-locked"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].stage.map(|stage| stage.name()), Some("state"));
}

#[tokio::test]
async fn a_block_raised_through_one_dongle_holds_on_another_and_the_code_lifts_it_there() {
    let cluster = Cluster::start();
    let url = cluster.database();
    let laptop = Setup::new(Answer::Approve, 300).sharing(&url);
    let runner = Setup::new(Answer::Approve, 300).sharing(&url);
    let mut on_laptop = laptop.start().await;
    let mut on_runner = runner.start().await;

    assert_eq!(ask(&mut on_laptop, execute(1, "coder")).await["success"], true);
    assert_eq!(ask(&mut on_runner, execute(5, "reviewer")).await["success"], true);
    let stop = ask(&mut on_laptop, step(2, "coder", "sudo rm -rf /")).await["data"].clone();
    assert_eq!(stop["stopped"], true, "{stop}");
    let challenge = notified_id(&stop, "danger_zone", "verificationId");
    // The danger-zone broadcast reaches an agent stepping on the other
    // dongle, with its next step.
    let told = ask(&mut on_runner, step(6, "reviewer", "cargo build")).await["data"].clone();
    assert_eq!(told["continue"], true, "{told}");
    assert!(
        told["notifications"]
            .as_array()
            .is_some_and(|all| all.iter().any(|n| n["type"] == "danger_zone")),
        "{told}"
    );

    let refused = ask(&mut on_runner, execute(1, "coder")).await;
    assert_eq!(
        refused["error"]["code"], "PERMISSION_DENIED",
        "blocked on the other dongle too: {refused}"
    );
    let held = ask(&mut on_runner, step(2, "coder", "cargo build")).await["data"].clone();
    assert_eq!(held["continue"], false, "{held}");
    assert_eq!(
        ask(&mut on_runner, step(3, "reviewer", "cargo test")).await["data"]["continue"],
        true,
        "other agents go on"
    );

    // The human at the laptop reads the code and types it where the agent
    // runs now.
    let code = laptop.code_for(&challenge);
    let verified = ask(&mut on_runner, verify(4, &challenge, &code)).await;
    assert_eq!(verified["data"]["verified"], true, "{verified}");
    let next = ask(&mut on_laptop, step(3, "coder", "cargo build")).await["data"].clone();
    assert_eq!(next["continue"], true, "lifted everywhere: {next}");
    on_laptop.assert_alive();
    on_runner.assert_alive();
}

/// The database stops in the middle of a run of steps: each answer is a
/// refusal with its reason, each refusal's audit row is kept on this
/// machine, and once the database is back those rows are in the chain, in
/// order, and the chain verifies.
#[tokio::test]
async fn without_its_database_the_dongle_stops_the_agent_and_loses_no_audit_row() {
    let cluster = Cluster::start();
    let url = cluster.database();
    let dongle = Setup::new(Answer::Approve, 300).sharing(&url);
    let mut raw = dongle.start().await;
    assert_eq!(ask(&mut raw, execute(1, "coder")).await["success"], true);
    assert_eq!(ask(&mut raw, step(2, "coder", "cargo build")).await["data"]["continue"], true);

    cluster.stop();
    for id in 3..6 {
        let answer =
            ask(&mut raw, step(id, "coder", &format!("make target-{id}"))).await["data"].clone();
        assert_eq!(
            answer["continue"], false,
            "a decision without the shared state fails closed: {answer}"
        );
        assert!(
            answer["reason"].as_str().unwrap_or_default().contains("Safety state unavailable"),
            "{answer}"
        );
    }
    let status = std::process::Command::new(super::support::binary())
        .args(["status", "--config", dongle.config.to_str().unwrap()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&status.stderr);
    assert_eq!(status.status.code(), Some(1), "{said}");
    assert!(
        said.contains("state database")
            && said.contains("audit rows kept on this machine until the database answers: 3"),
        "{said}"
    );
    cluster.serve();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let answer = ask(&mut raw, step(100, "coder", "cargo build")).await["data"].clone();
        if answer["continue"] == true {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the dongle never reconnected: {answer}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    raw.assert_alive();

    let audit = |args: &[&str]| {
        std::process::Command::new(super::support::binary())
            .arg("audit")
            .args(["--config", dongle.config.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap()
    };
    let verified = audit(&["verify"]);
    assert!(
        verified.status.success(),
        "{}{}",
        String::from_utf8_lossy(&verified.stdout),
        String::from_utf8_lossy(&verified.stderr)
    );
    let listed = String::from_utf8_lossy(&audit(&["--agent", "coder", "--limit", "100"]).stdout)
        .into_owned();
    // The polls for the database's return are refused steps too, as many
    // as a slow machine makes: only the run's own steps are counted.
    let kept: Vec<&str> = listed
        .lines()
        .filter(|line| line.contains("[state]") && line.contains("make target-"))
        .collect();
    assert_eq!(kept.len(), 3, "every refused step is in the chain, once: {listed}");
    for (line, id) in kept.iter().zip(3..6) {
        assert!(
            line.contains("step  refused") && line.contains(&format!("make target-{id}")),
            "in order: {line}"
        );
    }
}

/// The password comes from a file only its owner can open; `status` names
/// the database without it.
#[test]
fn the_password_file_must_be_private_and_status_never_shows_the_password() {
    use std::os::unix::fs::PermissionsExt;

    let cluster = Cluster::start();
    let url = cluster.database();
    let dir = super::support::scratch_dir();
    let password = dir.join("state-password");
    std::fs::write(&password, "hunter2-not-needed-with-trust\n").unwrap();
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "state = \"{url}\"\nstate_password_file = \"{}\"\ndata_dir = \"{}\"\n",
            password.display(),
            dir.join("state").display()
        ),
    )
    .unwrap();
    let status = || {
        std::process::Command::new(super::support::binary())
            .args(["status", "--config"])
            .arg(&config)
            .env_remove("SAFETY_DONGLE_STATE_PASSWORD")
            .output()
            .unwrap()
    };

    std::fs::set_permissions(&password, std::fs::Permissions::from_mode(0o644)).unwrap();
    let refused = status();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert!(
        said.contains("state-password: the state password file is open to group or others"),
        "{said}"
    );

    std::fs::set_permissions(&password, std::fs::Permissions::from_mode(0o600)).unwrap();
    let shown = status();
    let out = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.status.success(), "{out}{}", String::from_utf8_lossy(&shown.stderr));
    assert!(out.contains(&format!("state: {url}")), "{out}");
    assert!(
        !out.contains("hunter2") && !String::from_utf8_lossy(&shown.stderr).contains("hunter2"),
        "{out}"
    );
}

/// With TLS the server's certificate is checked against the trusted
/// roots: trusted (`SSL_CERT_FILE` naming the authority that signed it),
/// the dongle connects; untrusted, it refuses rather than go on without.
#[test]
fn tls_connects_to_a_trusted_server_and_refuses_an_untrusted_one() {
    let cluster = Cluster::start_with_tls();
    let url = format!("{}?sslmode=require", cluster.database());
    let dir = super::support::scratch_dir();
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!("state = \"{url}\"\ndata_dir = \"{}\"\n", dir.join("state").display()),
    )
    .unwrap();
    let status = |roots: &std::path::Path| {
        std::process::Command::new(super::support::binary())
            .args(["status", "--config"])
            .arg(&config)
            .env("SSL_CERT_FILE", roots)
            .env_remove("SSL_CERT_DIR")
            .output()
            .unwrap()
    };

    let trusted = status(&cluster.authority());
    assert!(trusted.status.success(), "{}", String::from_utf8_lossy(&trusted.stderr));
    assert!(String::from_utf8_lossy(&trusted.stdout).contains("blocked agents: 0"));

    let stranger = dir.join("stranger.crt");
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=someone else",
            "-keyout",
        ])
        .arg(dir.join("stranger.key"))
        .arg("-out")
        .arg(&stranger)
        .output()
        .unwrap();
    assert!(made.status.success());
    let untrusted = status(&stranger);
    let said = String::from_utf8_lossy(&untrusted.stderr);
    assert_eq!(untrusted.status.code(), Some(1), "{said}");
    assert!(
        said.contains("error performing TLS handshake: invalid peer certificate: UnknownIssuer"),
        "the refusal says why: {said}"
    );
}

/// Runs `statements` on the database at `url` (off the test's runtime:
/// the blocking client drives its own); the server's error if one fails.
fn sql(url: &str, statements: &str) -> Result<(), String> {
    let (url, statements) = (url.to_owned(), statements.to_owned());
    std::thread::spawn(move || {
        let mut client =
            postgres::Client::connect(&url, postgres::NoTls).map_err(|e| e.to_string())?;
        client.batch_execute(&statements).map_err(|e| {
            e.as_db_error().map_or_else(|| e.to_string(), |db| db.message().to_owned())
        })
    })
    .join()
    .unwrap()
}

/// The dongle's command through the real binary, with `config`.
fn dongle_cli(setup: &Setup, args: &[&str]) -> (bool, String) {
    let output = std::process::Command::new(super::support::binary())
        .args(args)
        .arg("--config")
        .arg(&setup.config)
        .output()
        .unwrap();
    (
        output.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

/// Issue 31: the role that owns the tables can drop the audit log's
/// append-only triggers, so the dongles must not connect as it. With the
/// layout in docs/GUIDE.md (tables owned by an administrator role that migrates,
/// `examples/team/grants.sql` for the dongles' role), a dongle does all
/// its work, and its role can neither rewrite the audit trail, nor alter
/// or drop the tables, nor push a central policy.
#[tokio::test]
async fn with_the_least_privilege_roles_a_dongle_works_and_its_role_cannot_rewrite_the_audit_trail()
{
    let cluster = Cluster::start();
    let at = |user: &str, database: &str| {
        format!("postgres://{user}@127.0.0.1:{}/{database}", cluster.port)
    };
    for statement in [
        "CREATE ROLE dongle_admin LOGIN",
        "CREATE ROLE dongle LOGIN",
        "CREATE DATABASE safety OWNER dongle_admin",
    ] {
        sql(&at("postgres", "postgres"), statement).unwrap();
    }
    let admin = Setup::new(Answer::Approve, 300).sharing(&at("dongle_admin", "safety"));
    let (migrated, said) = dongle_cli(&admin, &["status"]);
    assert!(migrated, "the administrator's first connection creates the tables: {said}");
    sql(&at("dongle_admin", "safety"), include_str!("../../examples/team/grants.sql")).unwrap();

    let machine = Setup::new(Answer::Approve, 300).sharing(&at("dongle", "safety"));
    let mut raw = machine.start().await;
    let started = ask(&mut raw, execute(1, "coder")).await;
    assert_eq!(started["success"], true, "{started}");
    assert_eq!(ask(&mut raw, step(2, "coder", "cargo build")).await["data"]["continue"], true);
    let stop = ask(&mut raw, step(3, "coder", "sudo rm -rf /")).await["data"].clone();
    assert_eq!(stop["stopped"], true, "{stop}");
    let challenge = notified_id(&stop, "danger_zone", "verificationId");
    let verified = ask(&mut raw, verify(4, &challenge, &machine.code_for(&challenge))).await;
    assert_eq!(
        verified["data"]["verified"], true,
        "the dongle's role lifts a block with the code: {verified}"
    );
    assert_eq!(ask(&mut raw, step(5, "coder", "cargo test")).await["data"]["continue"], true);
    for args in [&["status"][..], &["audit", "verify"]] {
        let (ok, said) = dongle_cli(&machine, args);
        assert!(ok, "{args:?} as the dongle's role: {said}");
    }

    let team = machine.dir.join("team.toml");
    std::fs::write(&team, "[defaults]\nrequiresApproval = [\"git push*\"]\n").unwrap();
    let (pushed, said) = dongle_cli(&machine, &["policy", "push", team.to_str().unwrap()]);
    assert!(!pushed && said.contains("permission denied"), "the dongle's role cannot push: {said}");
    let (pushed, said) = dongle_cli(&admin, &["policy", "push", team.to_str().unwrap()]);
    assert!(pushed, "the administrator pushes: {said}");
    assert_eq!(
        ask(&mut raw, step(6, "coder", "cargo check")).await["data"]["continue"],
        true,
        "and the dongle's role takes the version up"
    );

    let tampering = [
        "ALTER TABLE audit DISABLE TRIGGER ALL",
        "DROP TRIGGER audit_no_change ON audit",
        "DROP FUNCTION audit_is_append_only() CASCADE",
        "DELETE FROM audit",
        "UPDATE audit SET decision = 'continue'",
        "TRUNCATE audit",
        "DROP TABLE audit",
        "ALTER TABLE blocks DISABLE TRIGGER ALL",
        "DROP TABLE blocks",
        "TRUNCATE blocks",
        "INSERT INTO central_policy (version, hash, pushed_at, machine) VALUES (99, 'x', 0, 'm')",
        "DELETE FROM policy_versions",
        "UPDATE schema_version SET version = 1",
        "CREATE TABLE planted (a int)",
    ];
    for statement in tampering {
        let refused = sql(&at("dongle", "safety"), statement).expect_err(statement);
        assert!(
            refused.contains("permission denied") || refused.contains("must be owner"),
            "{statement}: {refused}"
        );
    }
    // Control: the owner could, which is why the dongles must not be it.
    sql(&at("dongle_admin", "safety"), "BEGIN; ALTER TABLE audit DISABLE TRIGGER ALL; ROLLBACK;")
        .unwrap();
    let (ok, said) = dongle_cli(&machine, &["audit", "verify"]);
    assert!(ok, "{said}");
    raw.assert_alive();
}

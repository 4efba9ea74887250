//! An MCP tool call, as the hook and the gates write it: `name {json}`.
//! The call is a command whose program is the tool's name and whose
//! arguments are its string values, decoded (a JSON `\n` is a newline, so
//! `select 1;\ndrop table users` is two statements). Values under keys that
//! carry commands (`command`, `cmd`, `script`, `shell`) are analysed as
//! shell, those under `sql`, `query` or `statement` as SQL when they read
//! as SQL, and `code` as inline code. A patch is applied whatever the
//! tool's name: a value that is a patch envelope (`*** Begin Patch`,
//! [`envelope`]), or a unified diff under `patch` or `diff`
//! ([`patches`]), writes, moves and deletes the files it names, as the
//! same patch does through a harness's own tool. Path-like values are
//! files read, or written when the tool's name says it writes.

use serde_json::Value;

use super::{Builder, Command, Fact, MAX_HINT_BYTES, code, envelope, patches, planted, sql};

pub(crate) const SHELL_KEYS: [&str; 7] =
    ["command", "cmd", "script", "shell", "bash", "sh", "commands"];
const SQL_KEYS: [&str; 5] = ["sql", "query", "statement", "statements", "queries"];
const CODE_KEYS: [&str; 3] = ["code", "source", "program"];
const DIFF_KEYS: [&str; 3] = ["patch", "diff", "unified_diff"];

/// Analyses `text` as a tool call if it is one; says whether it was.
pub(super) fn analyze(builder: &mut Builder, text: &str) -> bool {
    let Some((name, json)) = text.split_once(' ') else { return false };
    let is_name = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'));
    let Some(Value::Object(arguments)) =
        is_name.then(|| serde_json::from_str::<Value>(json.trim()).ok()).flatten()
    else {
        return false;
    };
    let mut values: Vec<(String, String)> = Vec::new();
    for (key, value) in &arguments {
        collect(value, key, &mut values);
    }
    let mut argv = vec![name.to_owned()];
    argv.extend(
        values.iter().map(|(_, v)| v.clone()).filter(|v| !v.contains('\n') && v.len() <= 4096),
    );
    builder.recording_tool_call = true;
    let recorded = builder.command(Command::new(argv, false, false, None));
    builder.recording_tool_call = false;
    let Some(index) = recorded else { return true };
    let writes = code::is_file_writing_tool(&builder.get(index).program);
    let judged = writes.then(|| planted::from_tool_call(&arguments)).flatten();
    let judged_path = judged.as_ref().map(|write| write.path.clone());
    builder.pending_writes.extend(judged);
    for (key, value) in &values {
        let key = key.to_lowercase();
        let analysed = SHELL_KEYS.contains(&key.as_str())
            || SQL_KEYS.contains(&key.as_str())
            || CODE_KEYS.contains(&key.as_str());
        if analysed && value.len() > MAX_HINT_BYTES {
            builder.fact(
                Fact::TooComplex,
                format!("the {key} of {name} is longer than the {MAX_HINT_BYTES} bytes analysed"),
            );
        } else if value.trim_start().starts_with(envelope::BEGIN) {
            apply_envelope(builder, name, value);
        } else if DIFF_KEYS.contains(&key.as_str()) {
            patches::apply(builder, value);
        } else if SHELL_KEYS.contains(&key.as_str()) {
            builder.shell(value, Some(name));
        } else if SQL_KEYS.contains(&key.as_str()) && sql::looks_like_sql(value) {
            sql::statements(builder, value, name);
        } else if CODE_KEYS.contains(&key.as_str()) {
            code::analyze(builder, name, value);
        } else if writes
            && !value.contains(char::is_whitespace)
            && (planted::WRITE_PATH_KEYS.contains(&key.as_str())
                || value.contains('/')
                || value.starts_with('~')
                || value.starts_with('.'))
        {
            if judged_path.as_deref() == Some(value.as_str()) {
                builder.write_judged(value);
            } else {
                builder.write(value);
            }
        }
    }
    true
}

/// The files a patch envelope given to the tool `name` adds, changes, moves
/// and deletes, judged as the commands that do the same, and what it
/// writes judged for what it plants. An envelope that does not read may
/// still be applied some way: what it changes is not known.
fn apply_envelope(builder: &mut Builder, name: &str, text: &str) {
    match envelope::parse(text) {
        Ok(patch) => {
            builder.shell(&patch.action_text(), Some(name));
            builder.pending_writes.extend(patch.writes());
        }
        Err(reason) => builder
            .fact(Fact::Unparseable, format!("the patch given to {name} does not read: {reason}")),
    }
}

/// Every string value with the key it sits under (array items under their
/// array's key).
fn collect(value: &Value, key: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) => out.push((key.to_owned(), s.clone())),
        Value::Array(items) => items.iter().for_each(|item| collect(item, key, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| collect(v, k, out)),
        _ => {}
    }
}

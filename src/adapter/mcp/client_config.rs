//! The `mcpServers` JSON that MCP clients keep (Claude Desktop, Cursor,
//! Claude Code's `.mcp.json`; VS Code's `servers`), read as downstream
//! servers, so users move their servers behind the dongle without
//! rewriting them.
//!
//! Each entry keeps its `command`/`args`/`env`/`cwd` or `url`/`headers`.
//! Client-specific keys (`alwaysAllow`, `timeout`, ...) are ignored, since
//! the dongle's policy decides instead; `"disabled": true` entries are skipped,
//! and so is an entry that runs safety-dongle itself (the dongle does not
//! proxy itself). Names become lower_snake_case; SSE-only servers are an
//! error, as the dongle speaks streamable HTTP.

use std::{collections::BTreeMap, path::Path};

use serde_json::{Map, Value};

use crate::{
    adapter::naming::snake_case,
    config::{
        ServerSettings, StartPolicy, default_call_timeout, default_max_retries,
        default_retry_base_ms, server_settings_problem,
    },
};

/// The servers of a client configuration file; every problem found, each
/// with the JSON path it concerns.
/// The file is refused when group or others can write it: it names
/// programs the dongle starts.
pub fn load(path: &Path) -> Result<BTreeMap<String, ServerSettings>, Vec<String>> {
    crate::config::refuse_unsafe_permissions(path).map_err(|d| vec![d.to_string()])?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| vec![format!("{}: cannot read: {e}", path.display())])?;
    parse(&text)
        .map_err(|errors| errors.into_iter().map(|e| format!("{}: {e}", path.display())).collect())
}

pub fn parse(text: &str) -> Result<BTreeMap<String, ServerSettings>, Vec<String>> {
    let document: Value = serde_json::from_str(text).map_err(|e| vec![format!("not JSON: {e}")])?;
    let (key, entries) = match (document.get("mcpServers"), document.get("servers")) {
        (Some(Value::Object(entries)), _) => ("mcpServers", entries),
        (None, Some(Value::Object(entries))) => ("servers", entries),
        _ => return Err(vec!["no \"mcpServers\" (or \"servers\") object".into()]),
    };
    let mut servers = BTreeMap::new();
    let mut errors = Vec::new();
    for (raw_name, entry) in entries {
        let at = format!("{key}.{raw_name}");
        let Value::Object(entry) = entry else {
            errors.push(format!("{at}: must be an object"));
            continue;
        };
        if entry.get("disabled") == Some(&Value::Bool(true)) {
            continue;
        }
        match server(entry) {
            Ok(Some(settings)) => {
                let name = snake_case(raw_name);
                if servers.insert(name.clone(), settings).is_some() {
                    errors.push(format!(
                        "{at}: its name becomes '{name}', which another entry already has"
                    ));
                }
            }
            Ok(None) => {
                tracing::info!(entry = %at, "skipping the entry that runs safety-dongle itself")
            }
            Err(message) => errors.push(format!("{at}: {message}")),
        }
    }
    if errors.is_empty() { Ok(servers) } else { Err(errors) }
}

fn strings(entry: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{key} must hold strings only"))
            })
            .collect(),
        Some(_) => Err(format!("{key} must be an array of strings")),
    }
}

fn string_map(entry: &Map<String, Value>, key: &str) -> Result<BTreeMap<String, String>, String> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|v| (k.clone(), v.to_owned()))
                    .ok_or_else(|| format!("{key}.{k} must be a string"))
            })
            .collect(),
        Some(_) => Err(format!("{key} must be an object of strings")),
    }
}

fn text(entry: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

/// One entry as settings; `None` for the dongle itself.
fn server(entry: &Map<String, Value>) -> Result<Option<ServerSettings>, String> {
    let kind = text(entry, "type")?;
    if matches!(kind.as_deref(), Some("sse")) {
        return Err(
            "is an SSE server; safety-dongle connects over stdio or streamable HTTP only".into()
        );
    }
    let command = text(entry, "command")?;
    let args = strings(entry, "args")?;
    if let Some(command) = &command {
        let program = Path::new(command).file_name().and_then(|n| n.to_str()).unwrap_or("");
        if program == "safety-dongle"
            || args.iter().any(|a| a == "safety-dongle" || a.ends_with("/safety-dongle"))
        {
            return Ok(None);
        }
    }
    let settings = ServerSettings {
        command,
        args,
        env: string_map(entry, "env")?,
        cwd: text(entry, "cwd")?.map(Into::into),
        url: text(entry, "url")?,
        headers: string_map(entry, "headers")?,
        start: StartPolicy::default(),
        timeout_secs: default_call_timeout(),
        categories: BTreeMap::new(),
        max_retries: default_max_retries(),
        retry_base_ms: default_retry_base_ms(),
        retryable: BTreeMap::new(),
    };
    match server_settings_problem(&settings) {
        Some(problem) => Err(problem),
        None => Ok(Some(settings)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_desktop_and_vscode_shapes_are_read() {
        let servers = parse(
            r#"{"mcpServers": {
                "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"A": "b"}},
                "Remote-API": {"type": "http", "url": "http://127.0.0.1:3000/mcp", "headers": {"Authorization": "Bearer x"}, "alwaysAllow": ["x"]},
                "off": {"command": "x", "disabled": true},
                "guard": {"command": "/usr/local/bin/safety-dongle", "args": ["serve"]}
            }}"#,
        )
        .unwrap();
        assert_eq!(servers.keys().collect::<Vec<_>>(), ["filesystem", "remote_api"]);
        assert_eq!(servers["filesystem"].args[2], "/tmp");
        assert_eq!(servers["filesystem"].env["A"], "b");
        assert_eq!(servers["remote_api"].url.as_deref(), Some("http://127.0.0.1:3000/mcp"));
        let vscode =
            parse(r#"{"servers": {"fs": {"type": "stdio", "command": "node", "args": ["s.js"]}}}"#)
                .unwrap();
        assert_eq!(vscode["fs"].command.as_deref(), Some("node"));
    }

    #[test]
    fn every_problem_is_reported_with_its_path() {
        let errors = parse(r#"{"mcpServers": {"a": {"args": ["x"]}, "b": {"command": 5}, "c": {"type": "sse", "url": "http://x"}, "d": []}}"#).unwrap_err();
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(errors[0].starts_with("mcpServers.a: needs either command"), "{errors:?}");
        assert!(errors[1].contains("mcpServers.b: command must be a string"));
        assert!(errors[2].contains("SSE"));
        assert!(errors[3].contains("mcpServers.d: must be an object"));
        assert!(parse("{}").unwrap_err()[0].contains("mcpServers"));
        assert!(parse("not json").unwrap_err()[0].starts_with("not JSON"));
    }
}

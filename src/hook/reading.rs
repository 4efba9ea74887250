//! A tool call, as any harness's hook sends it, read into the action the
//! policy judges: one mechanism, fed by one table per harness.
//!
//! A harness's [`Vocabulary`] lists the tools it reads by name, each with
//! the [`Kind`] of thing it does and which argument holds what: a shell
//! command, a write with its content, an edit, a patch envelope (Codex's
//! `apply_patch`), a read, a fetch, a search. The action text is what a
//! careful agent would have reported: the command, `write_file <path>`,
//! `read_file <path>`, the URL, `<server>__<tool> <canonical arguments>`
//! for MCP tools (any verification code redacted: the agent's own
//! `verify_challenge` call to the dongle passes through here too, and
//! action texts are stored). A write also gives the [`FileWrite`]s it makes,
//! so a file that runs later is judged by its content (`analysis::planted`);
//! the text stays the path, which is what is audited and shown to a human.
//!
//! What cannot be read is refused, never judged as less than it is: a
//! known tool whose argument has another type than the one read
//! ([`PayloadError::UnexpectedInput`]), a write naming no path, a patch
//! envelope that does not parse, and a tool nobody listed whose arguments
//! carry a command ([`PayloadError::UnknownCommandTool`]): a harness's new
//! shell tool would otherwise pass as an inert call.

use serde_json::Value;

use crate::{
    analysis::{Change, FileWrite, Replace, envelope, tool_call::SHELL_KEYS},
    protocol::canonical::canonical,
    redact::redact_arguments,
};

/// The longest payload read.
pub const MAX_PAYLOAD_BYTES: usize = 1024 * 1024;
// A hooked call must reach a human whole when one is asked about it.
const _: () = assert!(MAX_PAYLOAD_BYTES <= verifier_protocol::MAX_ACTION_BYTES);

/// A tool call as a harness's hook payload names it, whatever the
/// payload's own field names.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool's name in the harness's own vocabulary.
    pub tool: String,
    /// Its arguments.
    pub input: Value,
    /// The harness's session id (empty when it sends none).
    pub session: String,
    /// The folder the call runs in, when the harness says.
    pub cwd: Option<String>,
}

/// What a tool call does, as the gate judges it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// The action text the policy evaluates and the audit records.
    pub action: String,
    /// The files it writes whose content is known.
    pub writes: Vec<FileWrite>,
}

/// Why a hook payload was not read (the hook then denies, saying this).
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    #[error("the hook payload is larger than {MAX_PAYLOAD_BYTES} bytes")]
    TooLarge,
    #[error("the hook payload is not a PreToolUse event: {0}")]
    NotPreToolUse(#[from] serde_json::Error),
    /// A payload of a shape the harness's adapter does not read.
    #[error("the hook payload is not a tool call this harness sends: {0}")]
    NotAToolCall(String),
    /// A tool the hook reads by its fields sent a field of another type:
    /// judged as empty it would pass unseen, so it is refused.
    #[error(
        "the {tool} call's input has {field} {found}, not {expected}, so what it does cannot be judged"
    )]
    UnexpectedInput { tool: String, field: String, found: &'static str, expected: &'static str },
    /// A write that names no file cannot be judged by where it writes.
    #[error("the {tool} call writes a file but names none, so what it does cannot be judged")]
    WriteWithoutPath { tool: String },
    /// A patch envelope that does not parse could write anything.
    #[error("the {tool} call's patch cannot be read, so what it writes cannot be judged: {reason}")]
    Patch { tool: String, reason: envelope::PatchError },
    /// A tool nobody listed that carries a command.
    #[error(
        "{tool} is not a tool this hook knows, and its '{key}' argument reads as a command it cannot judge"
    )]
    UnknownCommandTool { tool: String, key: String },
}

/// What a field of a known tool's input must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Text,
    OptionalText,
    OptionalFlag,
    /// A list of edits, each with the [`Kind::Edits`] fields.
    Edits,
}

/// What one tool does, and the argument that holds each part of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Runs `command` in a shell; a patch envelope given as the command
    /// (Codex sends `apply_patch` this way) is read as [`Kind::Patch`].
    Shell { command: &'static str },
    /// Makes `path` hold `content`.
    Write { path: &'static str, content: &'static str },
    /// Replaces `old` by `new` in `path`, every occurrence when the flag
    /// `all` (if the tool has one) is set.
    Edit { path: &'static str, old: &'static str, new: &'static str, all: Option<&'static str> },
    /// Applies the list `edits` of `{old, new, all?}` to `path`.
    Edits {
        path: &'static str,
        edits: &'static str,
        old: &'static str,
        new: &'static str,
        all: &'static str,
    },
    /// Changes `path` in a way whose result is not known from the call
    /// (a notebook cell): judged by its path.
    WritesPath { path: &'static str, content: Option<&'static str> },
    /// Adds, changes, moves and deletes files by the patch envelope in
    /// `envelope` (`*** Begin Patch` ... `*** End Patch`).
    Patch { envelope: &'static str },
    /// Reads `path`.
    Read { path: &'static str },
    /// Fetches `url`.
    Fetch { url: &'static str },
    /// Searches the web for `query`.
    WebSearch { query: &'static str },
    /// Searches files for `pattern` under `path`, written `verb pattern path`
    /// (`search_files`, `list_files`).
    Search { verb: &'static str, pattern: &'static str, path: &'static str },
    /// Lists the folder `path`.
    List { path: &'static str },
}

/// One tool a harness's hook reads by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tool {
    pub name: &'static str,
    pub kind: Kind,
}

/// How a harness names its tools: those it reads by name, and how an MCP
/// tool's name gives its server and tool.
#[derive(Debug, Clone, Copy)]
pub struct Vocabulary {
    pub tools: &'static [Tool],
    /// `(server, tool)` of an MCP tool's name, `None` for any other name.
    pub mcp: fn(&str) -> Option<(&str, &str)>,
}

/// MCP tools named `mcp__<server>__<tool>` (Claude Code, Codex).
pub fn mcp_double_underscore(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix("mcp__").and_then(|rest| rest.split_once("__"))
}

impl Kind {
    /// The fields this kind reads, with the types they must have.
    pub fn fields(self) -> Vec<(&'static str, Field)> {
        match self {
            Self::Shell { command } => vec![(command, Field::Text)],
            Self::Write { path, content } => vec![(path, Field::Text), (content, Field::Text)],
            Self::Edit { path, old, new, all } => {
                let mut fields = vec![(path, Field::Text), (old, Field::Text), (new, Field::Text)];
                fields.extend(all.map(|all| (all, Field::OptionalFlag)));
                fields
            }
            Self::Edits { path, edits, .. } => vec![(path, Field::Text), (edits, Field::Edits)],
            Self::WritesPath { path, content } => {
                let mut fields = vec![(path, Field::Text)];
                fields.extend(content.map(|content| (content, Field::OptionalText)));
                fields
            }
            Self::Patch { envelope } => vec![(envelope, Field::Text)],
            Self::Read { path } | Self::List { path } => vec![(path, Field::Text)],
            Self::Fetch { url } => vec![(url, Field::Text)],
            Self::WebSearch { query } => vec![(query, Field::Text)],
            Self::Search { pattern, path, .. } => {
                vec![(pattern, Field::Text), (path, Field::OptionalText)]
            }
        }
    }

    /// The fields of one edit of [`Kind::Edits`].
    fn edit_fields(self) -> Vec<(&'static str, Field)> {
        match self {
            Self::Edits { old, new, all, .. } => {
                vec![(old, Field::Text), (new, Field::Text), (all, Field::OptionalFlag)]
            }
            _ => Vec::new(),
        }
    }
}

/// Reads `call` by `vocabulary`: its action text and the writes it makes.
pub fn read(vocabulary: &Vocabulary, call: &ToolCall) -> Result<Reading, PayloadError> {
    let Some(tool) = vocabulary.tools.iter().find(|tool| tool.name == call.tool) else {
        return read_unlisted(vocabulary, call);
    };
    check_fields(&call.tool, "", &call.input, &tool.kind.fields(), tool.kind)?;
    read_known(&call.tool, tool.kind, &call.input)
}

fn read_known(tool: &str, kind: Kind, input: &Value) -> Result<Reading, PayloadError> {
    let only = |action: String| Ok(Reading { action, writes: Vec::new() });
    let path_of = |field: &str| {
        let path = text(input, field);
        if path.trim().is_empty() {
            Err(PayloadError::WriteWithoutPath { tool: tool.to_owned() })
        } else {
            Ok(path.to_owned())
        }
    };
    let write = |path: String, change: Change| Reading {
        action: format!("write_file {path}"),
        writes: vec![FileWrite { path, change }],
    };
    match kind {
        Kind::Shell { command } => {
            let command = text(input, command);
            match envelope::envelope_in(command) {
                Some(envelope) => read_patch(tool, envelope),
                None => only(command.to_owned()),
            }
        }
        Kind::Write { path, content } => {
            Ok(write(path_of(path)?, Change::Whole(text(input, content).to_owned())))
        }
        Kind::Edit { path, old, new, all } => {
            let edit = Replace {
                old: text(input, old).to_owned(),
                new: text(input, new).to_owned(),
                all: all.is_some_and(|all| flag(input, all)),
            };
            Ok(write(path_of(path)?, Change::Edits(vec![edit])))
        }
        Kind::Edits { path, edits, old, new, all } => {
            let edit = |edit: &Value| Replace {
                old: text(edit, old).to_owned(),
                new: text(edit, new).to_owned(),
                all: flag(edit, all),
            };
            let edits = input
                .get(edits)
                .and_then(Value::as_array)
                .map(|edits| edits.iter().map(edit).collect())
                .unwrap_or_default();
            Ok(write(path_of(path)?, Change::Edits(edits)))
        }
        Kind::WritesPath { path, .. } => only(format!("write_file {}", path_of(path)?)),
        Kind::Patch { envelope } => read_patch(tool, text(input, envelope)),
        Kind::Read { path } => only(format!("read_file {}", text(input, path))),
        Kind::Fetch { url } => only(text(input, url).to_owned()),
        Kind::WebSearch { query } => only(format!("web_search {}", text(input, query))),
        // Each value one shell word: a pattern is a regex or a glob
        // (`a|b`, `fix .env`), never more commands or more paths.
        Kind::Search { verb, pattern, path } => {
            let path = Some(text(input, path)).filter(|path| !path.is_empty());
            let words = [verb, text(input, pattern)].into_iter().chain(path);
            only(crate::analysis::words::quote_words(words))
        }
        Kind::List { path } => only(format!("list_files {}", text(input, path))),
    }
}

fn read_patch(tool: &str, envelope: &str) -> Result<Reading, PayloadError> {
    let parsed = envelope::parse(envelope)
        .map_err(|reason| PayloadError::Patch { tool: tool.to_owned(), reason })?;
    Ok(Reading { action: parsed.action_text(), writes: parsed.writes() })
}

/// A tool no table lists: an MCP tool, or a harness's own tool judged on
/// its whole input, unless that input carries a command.
fn read_unlisted(vocabulary: &Vocabulary, call: &ToolCall) -> Result<Reading, PayloadError> {
    let arguments = canonical(&redact_arguments(&call.input));
    let action = match (vocabulary.mcp)(&call.tool) {
        Some((server, tool)) => format!("{server}__{tool} {arguments}"),
        None => {
            if let Some(key) = call
                .input
                .as_object()
                .and_then(|input| input.keys().find(|key| SHELL_KEYS.contains(&key.as_str())))
            {
                return Err(PayloadError::UnknownCommandTool {
                    tool: call.tool.clone(),
                    key: key.clone(),
                });
            }
            format!("{} {arguments}", call.tool)
        }
    };
    Ok(Reading { action, writes: Vec::new() })
}

fn check_fields(
    tool: &str,
    prefix: &str,
    input: &Value,
    fields: &[(&str, Field)],
    kind: Kind,
) -> Result<(), PayloadError> {
    let unexpected = |field: String, value: Option<&Value>, expected: &'static str| {
        PayloadError::UnexpectedInput {
            tool: tool.to_owned(),
            field,
            found: type_name(value),
            expected,
        }
    };
    let Some(object) = input.as_object() else {
        let field = if prefix.is_empty() { "tool_input".to_owned() } else { prefix.to_owned() };
        return Err(unexpected(field, Some(input), "an object"));
    };
    for (name, field) in fields {
        let value = object.get(*name);
        let at = || if prefix.is_empty() { (*name).to_owned() } else { format!("{prefix}.{name}") };
        match (field, value) {
            (Field::Text, Some(Value::String(_)))
            | (Field::OptionalText, None | Some(Value::String(_)))
            | (Field::OptionalFlag, None | Some(Value::Bool(_))) => {}
            (Field::Text | Field::OptionalText, _) => {
                return Err(unexpected(at(), value, "a string"));
            }
            (Field::OptionalFlag, _) => return Err(unexpected(at(), value, "true or false")),
            (Field::Edits, Some(Value::Array(edits))) => {
                for (i, edit) in edits.iter().enumerate() {
                    check_fields(tool, &format!("{}[{i}]", at()), edit, &kind.edit_fields(), kind)?;
                }
            }
            (Field::Edits, _) => return Err(unexpected(at(), value, "a list of edits")),
        }
    }
    Ok(())
}

fn type_name(value: Option<&Value>) -> &'static str {
    match value {
        None => "missing",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Number(_)) => "a number",
        Some(Value::String(_)) => "a string",
        Some(Value::Array(_)) => "a list",
        Some(Value::Object(_)) => "an object",
    }
}

fn text<'a>(input: &'a Value, key: &str) -> &'a str {
    input.get(key).and_then(Value::as_str).unwrap_or("")
}

fn flag(input: &Value, key: &str) -> bool {
    input.get(key).and_then(Value::as_bool).unwrap_or(false)
}

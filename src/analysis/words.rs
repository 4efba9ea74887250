//! Shell words as the shell would expand them without running anything:
//! quote removal, backslash escapes, `$'…'`, variables whose value is known
//! from earlier in the same line (`$HOME` and `${HOME}` are `~`, `$IFS` is
//! a space that splits the word), `${X:-default}`, brace expansion
//! (`{rm,-rf,~}` is three words), a command substitution whose output
//! is fixed by its text (`$(echo ~)`: [`super::pure`]), and field
//! splitting of unquoted expansions. What cannot be known statically (an
//! unknown variable, any other command substitution) is kept as text
//! (`$token`, `$(…)`) and marks the result dynamic. Unquoted glob characters are reported, since the shell
//! would expand them against the file system.

use std::{collections::HashMap, rc::Rc};

use tree_sitter::Node;

use super::budget;

/// Longest list of words one word may expand to (brace expansion grows
/// multiplicatively; beyond this the word counts as dynamic).
const MAX_EXPANSIONS: usize = 256;

/// What bash splits unquoted expansions at when `IFS` is not set.
const DEFAULT_IFS: &str = " \t\n";

/// How the analysis writes a value known only when the action runs (a
/// command substitution, arguments appended at run time, a value code
/// computes): a target holding it is unknown ([`super::Zone::Unknown`]).
pub const RUN_TIME_VALUE: &str = "$(…)";

/// Variables known from assignments earlier in the same line: `None` when
/// assigned something not known statically. Cloning is cheap (the walk
/// keeps a copy per command and per nested shell): the table is shared
/// until one copy changes it, and values are shared always.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    values: Rc<HashMap<String, Option<Rc<str>>>>,
    /// Variables that hold what commands printed (`X=$(env)`): the
    /// indices of those commands in the analysis, so that a command given
    /// the variable is given their output.
    outputs: Rc<HashMap<String, Rc<[usize]>>>,
    /// Name references (`declare -n REF`): a reference stands for
    /// whatever the variable it names holds when it is used, and what is
    /// assigned to it names that variable, so its value is never known.
    references: Rc<std::collections::HashSet<String>>,
}

impl Vars {
    pub fn set(&mut self, name: &str, value: Option<String>) {
        let value = value.filter(|_| self.references.is_empty() || !self.references.contains(name));
        Rc::make_mut(&mut self.values).insert(name.to_owned(), value.map(Rc::from));
    }

    /// `name` is a name reference from now on: unknown, whatever is
    /// assigned to it.
    pub fn refer(&mut self, name: &str) {
        Rc::make_mut(&mut self.references).insert(name.to_owned());
        self.set(name, None);
    }

    /// `name` holds the output of `commands`: instead of what it held of
    /// other commands' output when `replace` (an assignment that surely
    /// runs), else besides it (one in a branch that may not run).
    pub fn hold_output_of(&mut self, name: &str, commands: &[usize], replace: bool) {
        let held = self.outputs.get(name).filter(|_| !replace);
        if commands.is_empty() && (held.is_some() || !self.outputs.contains_key(name)) {
            return;
        }
        let mut holds = held.map(|held| held.to_vec()).unwrap_or_default();
        holds.extend_from_slice(commands);
        let outputs = Rc::make_mut(&mut self.outputs);
        if holds.is_empty() {
            outputs.remove(name);
        } else {
            outputs.insert(name.to_owned(), holds.into());
        }
    }

    /// The commands whose output the variables expanded in `node` hold
    /// (`"$X"`, `${X:-y}`, `$X` inside a longer word). Empty, at no cost,
    /// when no variable holds any.
    pub fn outputs_expanded_in(&self, node: Node<'_>, source: &str) -> Vec<usize> {
        let mut found = Vec::new();
        if self.outputs.is_empty() {
            return found;
        }
        let mut cursor = node.walk();
        'walk: loop {
            let at = cursor.node();
            let name = (at.kind() == "variable_name").then(|| source.get(at.byte_range()));
            if let Some(held) = name.flatten().and_then(|name| self.outputs.get(name)) {
                found.extend_from_slice(held);
            }
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        found
    }

    /// Every variable assigned so far becomes unknown.
    pub fn forget_all(&mut self) {
        Rc::make_mut(&mut self.values).values_mut().for_each(|value| *value = None);
    }

    /// The characters field splitting separates at: `$IFS` as the line
    /// set it (`IFS=,; cmd=rm,-rf,/etc; $cmd` runs `rm -rf /etc`), bash's
    /// default when it never did; `None` when it was set to a value not
    /// known statically.
    pub fn field_separators(&self) -> Option<&str> {
        match self.values.get("IFS") {
            None => Some(DEFAULT_IFS),
            Some(value) => value.as_deref(),
        }
    }

    /// The value assigned to `name`: `None` if never assigned,
    /// `Some(None)` if not known statically.
    pub fn value(&self, name: &str) -> Option<Option<&str>> {
        self.get(name)
    }

    /// Whether the text assigned `name` (or a walk made it unknown).
    fn assigned(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    fn get(&self, name: &str) -> Option<Option<&str>> {
        match name {
            "HOME" if !self.values.contains_key(name) => Some(Some("~")),
            // The hook runs with the environment of the agent's shell (in
            // every harness it supports): a temp folder variable not set
            // there expands to nothing (`rm -rf $TMPDIR/build` is `rm -rf
            // /build`). One that is set stays written as the variable,
            // which is in the temp zone (`effects`).
            "TMPDIR" | "TEMP" | "TMP"
                if !self.values.contains_key(name) && std::env::var_os(name).is_none() =>
            {
                Some(Some(""))
            }
            "IFS" if !self.values.contains_key(name) => Some(Some(" ")),
            _ => match self.values.get(name) {
                Some(value) => Some(value.as_deref()),
                None => tool_home(name).map(Some),
            },
        }
    }
}

/// Variables through which developer tools find their own folder or
/// credentials file, read as the place they default to when the action
/// does not assign them: `cat $CODEX_HOME/auth.json` reads Codex's
/// credentials wherever the variable points, and the default place is
/// where the policy's credential rules name them.
const TOOL_HOMES: [(&str, &str); 10] = [
    ("CODEX_HOME", "~/.codex"),
    ("CLAUDE_CONFIG_DIR", "~/.claude"),
    ("GH_CONFIG_DIR", "~/.config/gh"),
    ("GNUPGHOME", "~/.gnupg"),
    ("DOCKER_CONFIG", "~/.docker"),
    ("CARGO_HOME", "~/.cargo"),
    ("KUBECONFIG", "~/.kube/config"),
    ("AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials"),
    ("AWS_CONFIG_FILE", "~/.aws/config"),
    ("NETRC", "~/.netrc"),
];

fn tool_home(name: &str) -> Option<&'static str> {
    TOOL_HOMES.iter().find(|(variable, _)| *variable == name).map(|(_, place)| *place)
}

/// A word after expansion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expanded {
    pub words: Vec<String>,
    /// Some part could not be known without running something.
    pub dynamic: bool,
    /// Unquoted `*`, `?` or `[` that the shell would match against files.
    pub globbed: bool,
    /// A command or process substitution is part of the word.
    pub substituted: bool,
    /// Part of the word is an unquoted value not known before it runs
    /// (`$name`, `$(cmd)`): the shell splits it into any number of words,
    /// options among them (`git branch $name` may be `git branch -D x`).
    pub open: bool,
}

impl Expanded {
    /// The words joined by spaces (for text fed to another parser).
    pub fn joined(&self) -> String {
        self.words.join(" ")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quoting {
    Unquoted,
    Quoted,
    /// Produced by an unquoted expansion: subject to field splitting.
    Split,
}

type Pieces = Vec<(char, Quoting)>;

/// Expands one word-like node of `source`.
pub fn expand(node: Node<'_>, source: &str, vars: &Vars) -> Expanded {
    let mut state = Expanded::default();
    let mut pieces = Pieces::new();
    collect(node, source, vars, false, &mut pieces, &mut state);
    state.globbed =
        pieces.iter().any(|(c, q)| *q == Quoting::Unquoted && matches!(c, '*' | '?' | '['));
    let braced = expand_braces(&pieces);
    if braced.len() > MAX_EXPANSIONS {
        state.dynamic = true;
    }
    let separators = vars.field_separators().unwrap_or_else(|| {
        // `IFS=$X`: where the words split is not known before it runs.
        if pieces.iter().any(|(_, quoting)| *quoting == Quoting::Split) {
            state.dynamic = true;
        }
        DEFAULT_IFS
    });
    for word in braced.into_iter().take(MAX_EXPANSIONS) {
        // Brace expansion multiplies what a word holds: each word it
        // makes is paid for.
        if !budget::produce(word.len()) {
            state.dynamic = true;
            break;
        }
        split_fields(&word, separators, &mut state.words);
    }
    state
}

fn text<'a>(node: Node<'_>, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or("")
}

fn push_str(pieces: &mut Pieces, text: &str, quoting: Quoting) {
    pieces.extend(text.chars().map(|c| (c, quoting)));
}

fn collect(
    node: Node<'_>,
    source: &str,
    vars: &Vars,
    in_quotes: bool,
    pieces: &mut Pieces,
    state: &mut Expanded,
) {
    // `${a:-${a:-…}}` nests as deep as the agent likes.
    let Some(_level) = budget::nest().filter(|_| budget::work(1)) else {
        state.dynamic = true;
        return;
    };
    let quoting = if in_quotes { Quoting::Quoted } else { Quoting::Unquoted };
    match node.kind() {
        "word" | "number" | "special_variable_name" | "variable_name" | "brace_expression" => {
            if in_quotes {
                push_str(pieces, text(node, source), Quoting::Quoted);
            } else {
                unescape_unquoted(text(node, source), pieces);
            }
        }
        "string_content" => unescape_double_quoted(text(node, source), pieces),
        "raw_string" => {
            let raw = text(node, source);
            push_str(
                pieces,
                raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')).unwrap_or(raw),
                Quoting::Quoted,
            );
        }
        "ansi_c_string" => {
            let raw = text(node, source);
            let body = raw.strip_prefix("$'").and_then(|r| r.strip_suffix('\'')).unwrap_or(raw);
            push_str(pieces, &decode_ansi_c(body), Quoting::Quoted);
        }
        "string" | "translated_string" => {
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            if children.is_empty() {
                return;
            }
            // Text between named children (spaces are not string_content
            // nodes when they sit next to an expansion) is literal.
            let mut at = node.start_byte() + if node.kind() == "string" { 1 } else { 2 };
            for child in children {
                if child.start_byte() > at {
                    unescape_double_quoted(
                        source.get(at..child.start_byte()).unwrap_or(""),
                        pieces,
                    );
                }
                collect(child, source, vars, true, pieces, state);
                at = child.end_byte();
            }
            let end = node.end_byte().saturating_sub(1);
            if end > at {
                unescape_double_quoted(source.get(at..end).unwrap_or(""), pieces);
            }
        }
        "simple_expansion" | "expansion" => {
            expand_variable(node, source, vars, in_quotes, pieces, state)
        }
        "command_substitution" => {
            state.substituted = true;
            match super::pure::substitution_output(node, source, vars) {
                Some(output) => push_str(
                    pieces,
                    &output,
                    if in_quotes { Quoting::Quoted } else { Quoting::Split },
                ),
                None => {
                    state.dynamic = true;
                    state.open |= !in_quotes && !super::pure::prints_no_options(node, source, vars);
                    push_str(pieces, RUN_TIME_VALUE, quoting);
                }
            }
        }
        "process_substitution" => {
            state.dynamic = true;
            state.substituted = true;
            push_str(pieces, RUN_TIME_VALUE, quoting);
        }
        "arithmetic_expansion" => {
            state.dynamic = true;
            push_str(pieces, text(node, source), Quoting::Quoted);
        }
        "concatenation" => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                collect(child, source, vars, in_quotes, pieces, state);
            }
        }
        _ => {
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            if children.is_empty() {
                push_str(pieces, text(node, source), quoting);
            } else {
                for child in children {
                    collect(child, source, vars, in_quotes, pieces, state);
                }
            }
        }
    }
}

fn expand_variable(
    node: Node<'_>,
    source: &str,
    vars: &Vars,
    in_quotes: bool,
    pieces: &mut Pieces,
    state: &mut Expanded,
) {
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    let name = children
        .iter()
        .find(|c| matches!(c.kind(), "variable_name" | "special_variable_name"))
        .map(|c| text(*c, source));
    let raw = text(node, source);
    // `${#x}`, `${x/a/b}` and the like: only `${x}` and `${x:-default}`
    // (and `-`, `=`, `:=`) are resolved.
    let default =
        children.iter().find(|c| !matches!(c.kind(), "variable_name" | "special_variable_name"));
    let simple = node.kind() == "simple_expansion"
        || children.len() == 1 && !raw.starts_with("${#") && !raw.starts_with("${!");
    let quoting = if in_quotes { Quoting::Quoted } else { Quoting::Split };
    match (name, name.and_then(|n| vars.get(n))) {
        // A variable's value is copied wherever it is used: `a=$a$a`
        // doubles what the next use produces, so each copy is paid for.
        (Some(_), Some(Some(value)))
            if (simple || default.is_some()) && !budget::produce(value.len()) =>
        {
            state.dynamic = true;
            push_str(pieces, "$too_complex", Quoting::Quoted);
        }
        // `${TMPDIR:-/tmp}` with TMPDIR empty, or not set (`-`).
        (Some(name), Some(Some("")))
            if default.is_some()
                && (raw.contains(":-") || raw.contains(":=") || !vars.assigned(name))
                && is_default_operator(raw) =>
        {
            if let Some(default) = default {
                collect(*default, source, vars, in_quotes, pieces, state);
            }
        }
        (Some(_), Some(Some(value))) if simple || default.is_some() => {
            push_str(pieces, value, quoting)
        }
        (Some(_), Some(None) | None) if default.is_some() && is_default_operator(raw) => {
            state.dynamic = true;
            state.open |= !in_quotes;
            if let Some(default) = default {
                collect(*default, source, vars, in_quotes, pieces, state);
            }
        }
        (name, _) => {
            state.dynamic = true;
            // `${#x}` is a count, never an option.
            state.open |= !in_quotes && !raw.starts_with("${#");
            let shown = name.map_or_else(|| raw.to_owned(), |n| format!("${n}"));
            push_str(pieces, &shown.to_lowercase(), Quoting::Quoted);
        }
    }
}

fn is_default_operator(raw: &str) -> bool {
    [":-", ":=", "-", "="].iter().any(|op| raw.contains(op))
}

/// Backslash escapes outside quotes: `\x` is a quoted `x`; a backslash-
/// newline disappears.
fn unescape_unquoted(text: &str, pieces: &mut Pieces) {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => pieces.push((next, Quoting::Quoted)),
            },
            other => pieces.push((other, Quoting::Unquoted)),
        }
    }
}

/// Inside double quotes only `\"`, `\\`, `\$`, `` \` `` and a backslash-
/// newline are escapes.
fn unescape_double_quoted(text: &str, pieces: &mut Pieces) {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('"' | '\\' | '$' | '`' | '\n')) {
            let next = chars.next().unwrap_or('\\');
            if next != '\n' {
                pieces.push((next, Quoting::Quoted));
            }
        } else {
            pieces.push((c, Quoting::Quoted));
        }
    }
}

/// The text of `$'…'`: C escapes, hex, octal and Unicode.
pub fn decode_ansi_c(body: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    let number = |from: usize, max: usize, radix: u32| -> (Option<u32>, usize) {
        let digits: String = chars
            .get(from..)
            .unwrap_or_default()
            .iter()
            .take(max)
            .take_while(|c| c.is_digit(radix))
            .collect();
        (u32::from_str_radix(&digits, radix).ok(), digits.len())
    };
    while let Some(&c) = chars.get(i) {
        i += 1;
        let escape = match chars.get(i) {
            Some(&escape) if c == '\\' => escape,
            _ => {
                out.push(c);
                continue;
            }
        };
        i += 1;
        let simple = match escape {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(escape),
            _ => None,
        };
        if let Some(simple) = simple {
            out.push(simple);
            continue;
        }
        let (value, used) = match escape {
            'x' => number(i, 2, 16),
            'u' => number(i, 4, 16),
            'U' => number(i, 8, 16),
            '0'..='7' => {
                let (value, used) = number(i - 1, 3, 8);
                (value, used.saturating_sub(1))
            }
            _ => (None, 0),
        };
        match value.and_then(char::from_u32) {
            Some(decoded) if used > 0 || escape.is_digit(8) => {
                out.push(decoded);
                i += used;
            }
            _ => {
                out.push('\\');
                out.push(escape);
            }
        }
    }
    out
}

/// Brace expansion over unquoted `{a,b}` (nested allowed); a brace group
/// without an unquoted comma is literal.
fn expand_braces(pieces: &[(char, Quoting)]) -> Vec<Pieces> {
    let Some((open, close, commas)) = first_brace_group(pieces) else {
        return vec![pieces.to_vec()];
    };
    let mut out = Vec::new();
    let mut start = open + 1;
    for end in commas.into_iter().chain(std::iter::once(close)) {
        let mut word: Pieces = pieces.get(..open).unwrap_or_default().to_vec();
        word.extend_from_slice(pieces.get(start..end).unwrap_or_default());
        word.extend_from_slice(pieces.get(close + 1..).unwrap_or_default());
        out.extend(expand_braces(&word));
        if out.len() > MAX_EXPANSIONS {
            break;
        }
        start = end + 1;
    }
    out
}

/// The first unquoted `{…}` holding an unquoted comma at its own level:
/// where it opens, closes, and its commas.
fn first_brace_group(pieces: &[(char, Quoting)]) -> Option<(usize, usize, Vec<usize>)> {
    let unquoted = |i: usize, c: char| pieces.get(i) == Some(&(c, Quoting::Unquoted));
    for open in (0..pieces.len()).filter(|&i| unquoted(i, '{')) {
        // Unbalanced braces rescan the rest of the word from each one.
        if !budget::work(pieces.len() - open) {
            return None;
        }
        let mut depth = 0;
        let mut commas = Vec::new();
        for i in open + 1..pieces.len() {
            if unquoted(i, '{') {
                depth += 1;
            } else if unquoted(i, '}') {
                if depth == 0 {
                    if !commas.is_empty() {
                        return Some((open, i, commas));
                    }
                    break;
                }
                depth -= 1;
            } else if depth == 0 && unquoted(i, ',') {
                commas.push(i);
            }
        }
    }
    None
}

/// Field splitting: an `$IFS` character produced by an unquoted expansion
/// separates words (whitespace when `IFS` was never set); a word that is
/// empty after splitting disappears.
fn split_fields(pieces: &[(char, Quoting)], ifs: &str, words: &mut Vec<String>) {
    let mut current = String::new();
    let mut has_quoted = false;
    for &(c, quoting) in pieces {
        if quoting == Quoting::Split && ifs.contains(c) {
            if !current.is_empty() || has_quoted {
                words.push(std::mem::take(&mut current));
            }
            has_quoted = false;
            continue;
        }
        has_quoted |= quoting == Quoting::Quoted;
        current.push(c);
    }
    if !current.is_empty() || has_quoted {
        words.push(current);
    }
}

/// A path as the policy compares it: `$HOME`/`${HOME}` already `~`, a
/// Windows form in POSIX form (`windows_form`: `C:\Users\x` is
/// `/Users/x`, `%USERPROFILE%\.ssh` is `~/.ssh`), repeated and trailing
/// slashes dropped, `.` segments removed (but the one before a `~` that
/// is no home, `./~/x`) and `..` resolved where it does not climb above
/// the start.
pub fn normalize_path(path: &str) -> String {
    let windows = windows_form(path);
    let path = windows.as_deref().unwrap_or(path);
    if !(path.contains('/') || path.starts_with('~') || path.starts_with('.'))
        || path.contains("://")
    {
        return path.to_owned();
    }
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                // A segment known only at run time (`$TMPDIR/..`) may be
                // any depth: `..` after it stays.
                if parts
                    .last()
                    .is_some_and(|last| *last != ".." && *last != "~" && !last.contains(['$', '`']))
                {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        // Only a leading `~` is home: `./~/x` is a folder named `~`.
        (false, false) if joined.starts_with('~') && !path.starts_with('~') => {
            format!("./{joined}")
        }
        (false, false) => joined,
    }
}

/// Words as one shell line that gives each back as one word.
pub(crate) fn quote_words<'a>(words: impl IntoIterator<Item = &'a str>) -> String {
    words
        .into_iter()
        .map(|word| {
            if !word.is_empty()
                && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
            {
                word.to_owned()
            } else {
                format!("'{}'", word.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Folders Windows' shells name by variable (`%USERPROFILE%`,
/// `$env:USERPROFILE`, `${env:USERPROFILE}`), as the POSIX path the policy
/// speaks of: the profile is `~`, system folders hang off `/`.
const WINDOWS_FOLDERS: [(&str, &str); 12] = [
    ("homedrive%%homepath", "~"),
    ("userprofile", "~"),
    ("home", "~"),
    ("appdata", "~/AppData/Roaming"),
    ("localappdata", "~/AppData/Local"),
    ("temp", "~/AppData/Local/Temp"),
    ("tmp", "~/AppData/Local/Temp"),
    ("systemroot", "/Windows"),
    ("windir", "/Windows"),
    ("programdata", "/ProgramData"),
    ("programfiles", "/Program Files"),
    ("systemdrive", ""),
];

/// `%USERPROFILE%\x`, `$env:APPDATA\x`… with the variable replaced by
/// its folder; `None` if the path starts with no such variable.
fn windows_folder(path: &str) -> Option<String> {
    WINDOWS_FOLDERS.iter().find_map(|(name, folder)| {
        // PowerShell's own `$HOME` too.
        let powershell_home = (*name == "home").then_some(("$", ""));
        [("%", "%"), ("$env:", ""), ("${env:", "}")].into_iter().chain(powershell_home).find_map(
            |(open, close)| {
                let length = open.len() + name.len() + close.len();
                let written = path.get(..length)?;
                let matches = written.starts_with(open)
                    && written
                        .get(open.len()..open.len() + name.len())
                        .is_some_and(|n| n.eq_ignore_ascii_case(name))
                    && written.ends_with(close);
                let rest = path.get(length..).unwrap_or_default();
                // `$env:HOMEx` is another variable.
                (matches && (!close.is_empty() || rest.is_empty() || rest.starts_with(['\\', '/'])))
                    .then(|| format!("{folder}{rest}"))
            },
        )
    })
}

/// A path written the Windows way, in POSIX form: a drive (`C:\x`, `C:/x`)
/// is dropped (`/x`, so `C:\Users\bob` is `/Users/bob`, as on a Mac), a
/// share (`\\host\share`) is `/host/share`, a folder variable is its
/// path, and back slashes are slashes. `None` when the word has none of
/// these (a POSIX path, or no path).
fn windows_form(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    let drive = matches!(bytes, [letter, b':', rest @ ..]
        if letter.is_ascii_alphabetic() && matches!(rest.first(), None | Some(b'\\' | b'/')));
    if !drive && !path.contains(['%', '$', '\\']) {
        return None;
    }
    let variable = path.starts_with(['%', '$']).then(|| windows_folder(path)).flatten();
    let converted = match variable {
        Some(resolved) => resolved,
        None if drive => match path.get(2..).unwrap_or_default() {
            "" => "/".to_owned(),
            rest => rest.to_owned(),
        },
        None if path.starts_with(r"\\")
            || path.starts_with(r".\")
            || path.starts_with(r"..\")
            || path.starts_with(r"~\") =>
        {
            path.to_owned()
        }
        // A word with back slashes and no slash is a Windows path (a POSIX
        // shell has already taken its escapes out).
        None if path.contains('\\')
            && !path.contains('/')
            && !path.contains(char::is_whitespace) =>
        {
            path.to_owned()
        }
        None => return None,
    };
    Some(converted.replace('\\', "/"))
}

/// The bytes of base64 text (standard or URL-safe alphabet, padding and
/// white space ignored); `None` if it holds anything else.
pub(crate) fn base64_bytes(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    };
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for byte in text.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'=') {
        bits = (bits << 6) | u32::from(value(byte)?);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words_of(line: &str) -> Vec<Expanded> {
        words_with(line, &Vars::default())
    }

    fn words_with(line: &str, vars: &Vars) -> Vec<Expanded> {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
        let tree = parser.parse(line, None).unwrap();
        let command = tree.root_node().named_child(0).unwrap();
        let mut cursor = command.walk();
        command
            .named_children(&mut cursor)
            .filter(|c| {
                matches!(
                    c.kind(),
                    "command_name"
                        | "word"
                        | "string"
                        | "raw_string"
                        | "concatenation"
                        | "ansi_c_string"
                        | "simple_expansion"
                        | "expansion"
                        | "command_substitution"
                )
            })
            .map(|c| expand(c, line, vars))
            .collect()
    }

    fn flat(line: &str) -> Vec<String> {
        words_of(line).into_iter().flat_map(|e| e.words).collect()
    }

    #[test]
    fn quotes_escapes_and_ansi_c_strings_are_removed() {
        assert_eq!(flat(r#"r"m" -'r'f \~ $'\x72\155' "a\"b""#), ["rm", "-rf", "~", "rm", "a\"b"]);
    }

    #[test]
    fn home_and_ifs_expand_and_ifs_splits() {
        assert_eq!(flat("rm${IFS}-rf${IFS}$HOME"), ["rm", "-rf", "~"]);
        assert_eq!(flat(r#"echo "$HOME/x" ${HOME}/y"#), ["echo", "~/x", "~/y"]);
    }

    #[test]
    fn an_ifs_set_on_the_line_is_where_expansions_split() {
        let mut vars = Vars::default();
        vars.set("IFS", Some(",".into()));
        vars.set("CMD", Some("rm,-rf,/etc".into()));
        let words = |line: &str, vars: &Vars| -> Vec<String> {
            words_with(line, vars).into_iter().flat_map(|e| e.words).collect()
        };
        assert_eq!(words("$CMD", &vars), ["rm", "-rf", "/etc"]);
        // Quoted, or written out, nothing splits.
        assert_eq!(words("\"$CMD\" a,b", &vars), ["rm,-rf,/etc", "a,b"]);
        vars.set("IFS", Some(String::new()));
        assert_eq!(words("$CMD", &vars), ["rm,-rf,/etc"]);
        vars.set("IFS", None);
        assert!(words_with("$CMD", &vars)[0].dynamic, "an IFS not known makes the split not known");
    }

    #[test]
    fn braces_expand_into_words() {
        assert_eq!(flat("echo {a,b}c '{x,y}'"), ["echo", "ac", "bc", "{x,y}"]);
    }

    #[test]
    fn unknown_values_are_kept_as_text_and_mark_the_word_dynamic() {
        let words = words_of("cat $SECRET_TOKEN $(id) ${X:-fallback}");
        assert_eq!(words[1].words, ["$secret_token"]);
        assert!(words[1].dynamic && words[2].dynamic && words[2].substituted);
        assert_eq!(words[3].words, ["fallback"]);
        assert!(!words[0].dynamic);
    }

    #[test]
    fn unquoted_glob_characters_are_reported() {
        let words = words_of("ls /bin/r[m] '*'");
        assert!(words[1].globbed && !words[2].globbed);
    }

    #[test]
    fn paths_are_normalised() {
        assert_eq!(normalize_path("~/.ssh/./id_rsa"), "~/.ssh/id_rsa");
        assert_eq!(normalize_path("~/.ssh//id_rsa"), "~/.ssh/id_rsa");
        assert_eq!(normalize_path("~/x/../.ssh/id_rsa/"), "~/.ssh/id_rsa");
        assert_eq!(normalize_path("/etc/../"), "/");
        assert_eq!(normalize_path("~/.."), "~/..");
        assert_eq!(normalize_path("../x"), "../x");
        assert_eq!(normalize_path("plain"), "plain");
    }

    #[test]
    fn windows_paths_are_read_in_posix_form() {
        for (windows, posix) in [
            (r"C:\Users\bob\.ssh\id_rsa", "/Users/bob/.ssh/id_rsa"),
            ("c:/Users/bob/.ssh", "/Users/bob/.ssh"),
            ("C:", "/"),
            (r"C:\", "/"),
            (r"%USERPROFILE%\.ssh\id_rsa", "~/.ssh/id_rsa"),
            (r"%HOMEDRIVE%%HOMEPATH%\.aws", "~/.aws"),
            (r"$env:USERPROFILE\.ssh", "~/.ssh"),
            (r"${env:USERPROFILE}\.ssh", "~/.ssh"),
            (r"$HOME\.gnupg", "~/.gnupg"),
            (r"$env:APPDATA\Mozilla", "~/AppData/Roaming/Mozilla"),
            (r"%LOCALAPPDATA%\Google\Chrome", "~/AppData/Local/Google/Chrome"),
            (r"%SystemRoot%\System32\config\SAM", "/Windows/System32/config/SAM"),
            (r"\\server\share\x", "/server/share/x"),
            (r".\build\..\src", "src"),
            (r"src\main.rs", "src/main.rs"),
        ] {
            assert_eq!(normalize_path(windows), posix, "{windows}");
        }
        for kept in [r"$env:HOMEPATH2", "s/a\\.b/c/", "https://x.example/a\\b", "a b\\c"] {
            assert_eq!(windows_form(kept), None, "{kept}");
        }
    }
}

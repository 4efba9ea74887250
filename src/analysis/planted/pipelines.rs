//! Commands of pipeline and build definitions: YAML steps (GitHub
//! Actions, GitLab CI, CircleCI, Travis, pre-commit, Taskfile…),
//! Jenkinsfile steps and Containerfile instructions.
//!
//! YAML is read line by line rather than parsed, so anchors, aliases and
//! merge keys, which CI files use and a strict loader refuses, are read
//! too: every key that holds commands is found wherever it sits, its value
//! taken in any YAML form (plain, quoted with escapes decoded, block
//! scalar, flow or block list, or an alias of an anchored value), and
//! `${{ … }}` expressions become shell variables named after them.

use std::collections::HashMap;

use super::{Part, quote_words};
use crate::analysis::budget;

/// Keys whose values are commands.
const STEP_KEYS: [&str; 16] = [
    "run",
    "script",
    "before_script",
    "after_script",
    "command",
    "commands",
    "cmd",
    "cmds",
    "entry",
    "install",
    "before_install",
    "after_success",
    "after_failure",
    "before_deploy",
    "after_deploy",
    "pre_script",
];
/// Aliases followed inside one another at most this deep.
const MAX_ALIAS_DEPTH: usize = 4;

struct Yaml<'a> {
    lines: Vec<&'a str>,
    anchors: HashMap<String, usize>,
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A line's key and value after any `- ` list markers, with the column of
/// the key.
fn key_value(line: &str) -> Option<(usize, &str, &str)> {
    let mut column = indent_of(line);
    let mut rest = line.get(column..).unwrap_or_default();
    while let Some(after) = rest.strip_prefix("- ") {
        let trimmed = after.trim_start_matches(' ');
        column += rest.len() - trimmed.len();
        rest = trimmed;
    }
    let (key, value) = split_key(rest)?;
    Some((column, key, value))
}

/// `key: value` (the key plain or quoted), or `None`.
fn split_key(text: &str) -> Option<(&str, &str)> {
    let (key, after) = if let Some(quoted) = text.strip_prefix(['"', '\'']) {
        let close = quoted.find(['"', '\''])?;
        (
            quoted.get(..close).unwrap_or_default(),
            quoted.get(close + 1..).unwrap_or_default().strip_prefix(':')?,
        )
    } else {
        let colon = text.find(": ").or_else(|| text.strip_suffix(':').map(|t| t.len()))?;
        (text.get(..colon).unwrap_or_default(), text.get(colon + 1..).unwrap_or_default())
    };
    let plain = !key.is_empty() && !key.contains(' ') && !key.starts_with('#');
    plain.then(|| (key, after.trim()))
}

impl<'a> Yaml<'a> {
    fn new(content: &'a str) -> Self {
        let lines: Vec<&str> = content.lines().collect();
        let mut anchors = HashMap::new();
        for (index, line) in lines.iter().enumerate() {
            let value =
                key_value(line).map(|(_, _, v)| v).or_else(|| line.trim_start().strip_prefix("- "));
            if let Some(name) = value.and_then(|v| v.strip_prefix('&')) {
                let name = name.split_whitespace().next().unwrap_or("");
                anchors.entry(name.to_owned()).or_insert(index);
            }
        }
        Self { lines, anchors }
    }

    /// The commands of the value of the key on line `at` (at column
    /// `column`), written `value` on that line.
    fn value(&self, at: usize, column: usize, value: &str, depth: usize) -> Vec<(usize, String)> {
        let mut value = value.trim();
        if let Some(anchored) = value.strip_prefix('&') {
            value = anchored.split_once(' ').map_or("", |(_, rest)| rest).trim();
        }
        if let Some(tagged) = value.strip_prefix("!!str") {
            value = tagged.trim();
        }
        if let Some(alias) = value.strip_prefix('*') {
            let name = alias.split_whitespace().next().unwrap_or("");
            let Some((target, line)) = self
                .anchors
                .get(name)
                .filter(|_| depth < MAX_ALIAS_DEPTH)
                .and_then(|&target| Some((target, *self.lines.get(target)?)))
            else {
                return Vec::new();
            };
            let (column, anchored) = match key_value(line) {
                Some((column, _, v)) => (column, v),
                None => (indent_of(line), line.trim_start().trim_start_matches("- ")),
            };
            // Every use of an alias copies the anchored value: forty
            // thousand uses of one anchor are paid for, use by use.
            let resolved = self.value(target, column, anchored, depth + 1);
            let bytes = resolved.iter().map(|(_, text)| text.len()).sum();
            return if budget::produce(bytes) { resolved } else { Vec::new() };
        }
        let line = at + 1;
        match value.chars().next() {
            Some('|' | '>') => {
                vec![(line + 1, self.block_scalar(at, column, value.starts_with('>')))]
            }
            Some('"' | '\'') => vec![(line, self.quoted(at, value))],
            Some('[') => self.flow_list(at, value).into_iter().map(|item| (line, item)).collect(),
            None | Some('#') => self.block_list(at, column, depth),
            _ => vec![(line, self.plain(at, column, value))],
        }
    }

    /// The lines after `at` more indented than `column` (and blank ones).
    fn nested(&self, at: usize, column: usize) -> impl Iterator<Item = (usize, &'a str)> + '_ {
        self.lines
            .iter()
            .enumerate()
            .skip(at + 1)
            // Each value rescans the lines under it: paid for line by line.
            .take_while(move |(_, l)| {
                (l.trim().is_empty() || indent_of(l) > column) && budget::work(1)
            })
            .map(|(i, l)| (i, *l))
    }

    fn block_scalar(&self, at: usize, column: usize, folded: bool) -> String {
        let body: Vec<&str> = self.nested(at, column).map(|(_, l)| l).collect();
        let margin =
            body.iter().filter(|l| !l.trim().is_empty()).map(|l| indent_of(l)).min().unwrap_or(0);
        let lines: Vec<&str> = body.iter().map(|l| l.get(margin..).unwrap_or("")).collect();
        if folded { lines.join(" ") } else { lines.join("\n") }
    }

    fn plain(&self, at: usize, column: usize, first: &str) -> String {
        let mut text = strip_comment(first).to_owned();
        for (_, line) in self.nested(at, column) {
            if key_value(line).is_some() || line.trim_start().starts_with("- ") {
                break;
            }
            text.push(' ');
            text.push_str(strip_comment(line.trim()));
        }
        text
    }

    /// A quoted scalar, which may go on over the next lines.
    fn quoted(&self, at: usize, first: &str) -> String {
        let mut raw = first.to_owned();
        let quote = first.get(..1).unwrap_or_default();
        let mut next = at + 1;
        while closing_quote(&raw).is_none()
            && let Some(line) = self.lines.get(next)
        {
            raw.push(' ');
            raw.push_str(line.trim());
            next += 1;
        }
        let end = closing_quote(&raw).unwrap_or(raw.len());
        let body = raw.get(1..end).unwrap_or("");
        if quote == "'" { body.replace("''", "'") } else { decode_double_quoted(body) }
    }

    fn flow_list(&self, at: usize, first: &str) -> Vec<String> {
        let mut raw = first.to_owned();
        let mut next = at + 1;
        while !raw.contains(']')
            && let Some(line) = self.lines.get(next)
        {
            raw.push(' ');
            raw.push_str(line.trim());
            next += 1;
        }
        let inside = raw
            .trim_start_matches('[')
            .rsplit_once(']')
            .map_or(raw.as_str(), |(inside, _)| inside)
            .to_owned();
        split_outside_quotes(&inside, ',')
            .into_iter()
            .map(|item| unquote(item.trim()))
            .filter(|i| !i.is_empty())
            .collect()
    }

    /// A block list under the key: each item a command (items that are
    /// mappings are found by their own keys).
    fn block_list(&self, at: usize, column: usize, depth: usize) -> Vec<(usize, String)> {
        let Some((first, line)) = self
            .lines
            .iter()
            .enumerate()
            .skip(at + 1)
            .find(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        else {
            return Vec::new();
        };
        let item_column = indent_of(line);
        if !line.trim_start().starts_with("- ") || item_column < column {
            return Vec::new();
        }
        let mut found = Vec::new();
        for (index, line) in self.lines.iter().enumerate().skip(first) {
            let trimmed = line.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if indent_of(line) < item_column
                || (indent_of(line) == item_column && !trimmed.starts_with("- "))
            {
                break;
            }
            if indent_of(line) == item_column
                && let Some(item) = trimmed.strip_prefix("- ")
                && split_key(item.trim()).is_none()
            {
                found.extend(self.value(index, item_column, item, depth));
            }
        }
        found
    }
}

fn strip_comment(text: &str) -> &str {
    text.find(" #").map_or(text, |at| text.get(..at).unwrap_or_default()).trim_end()
}

/// Where the quote that opens `raw` closes.
fn closing_quote(raw: &str) -> Option<usize> {
    let quote = raw.chars().next()?;
    let mut chars = raw.char_indices().skip(1);
    while let Some((at, c)) = chars.next() {
        if quote == '"' && c == '\\' {
            chars.next();
        } else if c == quote {
            if quote == '\'' && raw.get(at + 1..).unwrap_or_default().starts_with('\'') {
                chars.next();
                continue;
            }
            return Some(at);
        }
    }
    None
}

/// YAML's double-quoted escapes: `\n`, `\t`, `\"`, `\\`, `\xNN`,
/// `\uNNNN`, `\UNNNNNNNN` and an escaped line break.
fn decode_double_quoted(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let hex = |chars: &mut std::str::Chars<'_>, n: usize| -> Option<char> {
            let digits: String = chars.take(n).collect();
            u32::from_str_radix(&digits, 16).ok().and_then(char::from_u32)
        };
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('0') => out.push('\0'),
            Some('x') => out.extend(hex(&mut chars, 2)),
            Some('u') => out.extend(hex(&mut chars, 4)),
            Some('U') => out.extend(hex(&mut chars, 8)),
            Some(' ') => {}
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn unquote(item: &str) -> String {
    match item.chars().next() {
        Some('"') => decode_double_quoted(
            item.get(1..closing_quote(item).unwrap_or(item.len())).unwrap_or(""),
        ),
        Some('\'') => {
            item.get(1..closing_quote(item).unwrap_or(item.len())).unwrap_or("").replace("''", "'")
        }
        _ => item.to_owned(),
    }
}

fn split_outside_quotes(text: &str, separator: char) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut start, mut quote) = (0, None);
    for (at, c) in text.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, c) if c == separator => {
                pieces.push(text.get(start..at).unwrap_or_default());
                start = at + c.len_utf8();
            }
            _ => {}
        }
    }
    pieces.push(text.get(start..).unwrap_or_default());
    pieces
}

/// `${{ secrets.TOKEN }}` becomes `${secrets_TOKEN}`: a variable the
/// shell analysis cannot know, named after what it holds.
fn expressions_as_variables(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(rest.get(..start).unwrap_or_default());
        let Some(end) = rest.get(start..).unwrap_or_default().find("}}") else {
            out.push_str(rest.get(start..).unwrap_or_default());
            return out;
        };
        let inner = rest.get(start + 3..start + end).unwrap_or_default().trim();
        let name: String =
            inner.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        out.push_str(&format!("${{gh_{name}}}"));
        rest = rest.get(start + end + 2..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

pub(super) fn yaml_steps(content: &str) -> Vec<Part> {
    let yaml = Yaml::new(content);
    let mut parts = Vec::new();
    for (index, line) in yaml.lines.iter().enumerate() {
        let Some((column, key, value)) = key_value(line) else {
            continue;
        };
        if !STEP_KEYS.contains(&key.to_ascii_lowercase().as_str()) {
            continue;
        }
        for (line, text) in yaml.value(index, column, value, 0) {
            parts.push(Part::shell(line, expressions_as_variables(&text)));
        }
    }
    parts
}

/// `sh '…'`, `sh """…"""`, `sh(script: "…")`, and `bat`, `powershell`,
/// `pwsh` likewise.
pub(super) fn jenkinsfile(content: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    for step in ["sh", "bat", "powershell", "pwsh"] {
        // Lines are counted on from the previous step, not from the start.
        let (mut counted_to, mut line) = (0, 1);
        for (at, _) in content.match_indices(step) {
            let word_start = content
                .get(..at)
                .unwrap_or_default()
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_' && c != '.');
            if !word_start {
                continue;
            }
            let mut rest =
                content.get(at + step.len()..).unwrap_or_default().trim_start_matches([' ', '\t']);
            if let Some(call) = rest.strip_prefix('(') {
                rest = call.trim_start();
                if let Some(named) = rest.strip_prefix("script:") {
                    rest = named.trim_start();
                }
            }
            if let Some(text) = groovy_string(rest) {
                line += content.get(counted_to..at).unwrap_or_default().matches('\n').count();
                counted_to = at;
                parts.push(Part::shell(line, text));
            }
        }
    }
    parts.sort_by_key(|part| part.line);
    parts
}

/// The Groovy string literal `text` starts with, decoded.
fn groovy_string(text: &str) -> Option<String> {
    let delimiter = ["'''", "\"\"\"", "'", "\""].into_iter().find(|d| text.starts_with(d))?;
    let body = text.get(delimiter.len()..).unwrap_or_default();
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((at, c)) = chars.next() {
        // A string that never closes is read to the end of the file, once
        // per step that opens one: paid for.
        if !budget::work(1) {
            return None;
        }
        if body.get(at..).unwrap_or_default().starts_with(delimiter) {
            return Some(out);
        }
        if c == '\\' {
            match chars.next().map(|(_, e)| e) {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    None
}

/// `RUN` (shell and exec forms, heredocs, options), `CMD`, `ENTRYPOINT`,
/// `HEALTHCHECK CMD` and `ONBUILD` of a Containerfile.
pub(super) fn containerfile(content: &str) -> Vec<Part> {
    let escape = content
        .lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| {
            l.trim_start_matches('#')
                .trim()
                .strip_prefix("escape=")
                .map(|e| e.trim().chars().next().unwrap_or('\\'))
        })
        .unwrap_or('\\');
    let lines: Vec<&str> = content.lines().collect();
    let mut parts = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let start = index;
        let mut text = String::new();
        while let Some(&line) = lines.get(index) {
            index += 1;
            if !text.is_empty() && line.trim_start().starts_with('#') {
                if index >= lines.len() {
                    break;
                }
                continue;
            }
            match line.trim_end().strip_suffix(escape) {
                Some(continued) if index < lines.len() => text.push_str(continued),
                _ => {
                    text.push_str(line);
                    break;
                }
            }
        }
        let heredoc = heredoc_delimiter(&text).map(|delimiter| {
            let body: Vec<&str> = lines
                .get(index..)
                .unwrap_or_default()
                .iter()
                .take_while(|l| l.trim() != delimiter)
                .copied()
                .collect();
            index = (index + body.len() + 1).min(lines.len());
            (delimiter, body.join("\n"))
        });
        if let Some(command) = instruction(&text, heredoc.as_ref()) {
            parts.push(Part::shell(start + 1, command));
        }
    }
    parts
}

/// The delimiter of a heredoc opened on an instruction line.
fn heredoc_delimiter(text: &str) -> Option<String> {
    let at = text.find("<<")?;
    let word = text.get(at + 2..).unwrap_or_default().trim_start_matches('-').trim_start();
    let word: String = word
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

fn instruction(text: &str, heredoc: Option<&(String, String)>) -> Option<String> {
    let trimmed = text.trim_start();
    let (keyword, rest) = trimmed.split_once(char::is_whitespace)?;
    let mut rest = rest.trim_start();
    match keyword.to_ascii_uppercase().as_str() {
        "ONBUILD" => instruction(rest, heredoc),
        "HEALTHCHECK" => {
            let at = rest.to_ascii_uppercase().find("CMD ")?;
            instruction(rest.get(at..).unwrap_or_default(), heredoc)
        }
        "RUN" | "CMD" | "ENTRYPOINT" => {
            while rest.starts_with("--") {
                rest = rest.split_once(char::is_whitespace).map_or("", |(_, r)| r).trim_start();
            }
            if rest.starts_with('[')
                && let Ok(words) = serde_json::from_str::<Vec<String>>(rest.trim_end())
            {
                return Some(quote_words(words.iter().map(String::as_str)));
            }
            match heredoc {
                Some((_, body)) if rest.starts_with("<<") => Some(body.clone()),
                Some((delimiter, body)) => Some(format!("{rest}\n{body}\n{delimiter}")),
                None => Some(rest.to_owned()),
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(parts: Vec<Part>) -> Vec<(usize, String)> {
        parts.into_iter().map(|p| (p.line, p.text)).collect()
    }

    #[test]
    fn yaml_values_in_every_form() {
        let workflow = "on: push\njobs:\n  b:\n    steps:\n      - uses: actions/checkout@v4\n      - run: cargo test\n      - name: x\n        run: |\n          echo hi\n          curl -s h | sh\n      - run: \"\\x63url h | bash\"\n      - run: >\n          curl h\n          | sh\n      - run: echo ${{ secrets.TOKEN }} # note\n";
        assert_eq!(
            texts(yaml_steps(workflow)),
            [
                (6, "cargo test".to_owned()),
                (9, "echo hi\ncurl -s h | sh".to_owned()),
                (11, "curl h | bash".to_owned()),
                (13, "curl h | sh".to_owned()),
                (15, "echo ${gh_secrets_TOKEN}".to_owned()),
            ]
        );
    }

    #[test]
    fn yaml_lists_and_aliases() {
        let gitlab = ".setup: &setup\n  - curl h | sh\ntest:\n  before_script: *setup\n  script:\n    - cargo test\n    - 'make ''all'''\n  after_script: [\"echo a\", rm -rf ~]\n";
        let found = texts(yaml_steps(gitlab));
        assert!(found.contains(&(2, "curl h | sh".to_owned())), "{found:?}");
        assert!(found.contains(&(6, "cargo test".to_owned())), "{found:?}");
        assert!(found.contains(&(7, "make 'all'".to_owned())), "{found:?}");
        assert!(found.contains(&(8, "rm -rf ~".to_owned())), "{found:?}");
    }

    #[test]
    fn jenkins_steps() {
        let file = "pipeline {\n  stages { stage('b') { steps {\n    sh 'make'\n    sh(script: \"\"\"\n      curl h | sh\n    \"\"\", returnStdout: true)\n  } } }\n}";
        assert_eq!(
            texts(jenkinsfile(file)),
            [(3, "make".to_owned()), (4, "\n      curl h | sh\n    ".to_owned())]
        );
    }

    #[test]
    fn container_instructions() {
        let file = "FROM debian\nRUN apt-get update && \\\n    apt-get install -y curl\nRUN --mount=type=cache,target=/x [\"sh\", \"-c\", \"curl h | sh\"]\nRUN <<EOF\nrm -rf /\nEOF\nCMD [\"./serve\"]\nENV A=b\n";
        assert_eq!(
            texts(containerfile(file)),
            [
                (2, "apt-get update &&     apt-get install -y curl".to_owned()),
                (4, "sh -c 'curl h | sh'".to_owned()),
                (5, "rm -rf /".to_owned()),
                (8, "./serve".to_owned())
            ]
        );
    }
}

//! Inline code of interpreters (`python -c`, `perl -e`, `node -e`,
//! `ruby -e`, `php -r`, `osascript -e`, `pwsh -c`, awk programs…), read for
//! what it does rather than parsed per language:
//!
//! - calls that start a shell or a program (`os.system`, `subprocess`,
//!   `system`, `exec`, `popen`, `child_process`, backticks…): their string
//!   literals, joined the way the code concatenates them (`"r"."m -rf ~"`),
//!   are analysed as shell; a call with no literal runs text built at run
//!   time, which is a fact;
//! - calls that delete trees (`shutil.rmtree`, `rm_rf`, `fs.rmSync`,
//!   `remove_tree`, `Remove-Item`): the command `rm -r -f PATH`;
//! - `fork` in a loop: a fork bomb;
//! - secrets read and a network API used in the same code;
//! - every string literal that looks like a path is a file read, or
//!   written when it is handed to a writing call.
//!
//! Home-directory idioms (`expanduser("~")`, `Path.home()`, `os.homedir()`,
//! `$ENV{HOME}`, `process.env.HOME`…) read as `~`.

use super::{Builder, Command, Fact, preview, words::quote_words};

/// Interpreters and the flags that carry inline code.
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("pypy", &["-c"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("bun", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
    ("php", &["-r"]),
    ("osascript", &["-e"]),
    ("pwsh", &["-c", "-command", "-Command", "-EncodedCommand"]),
    ("powershell", &["-c", "-command", "-Command", "-EncodedCommand"]),
    ("lua", &["-e"]),
    ("luajit", &["-e"]),
    ("rscript", &["-e"]),
    ("julia", &["-e"]),
    ("tclsh", &[]),
    ("awk", &[]),
    ("gawk", &[]),
    ("mawk", &[]),
    ("nawk", &[]),
];

const SPAWN_CALLS: [&str; 24] = [
    "system", "popen", "exec", "execsync", "execfilesync", "spawn", "spawnsync", "subprocess", "check_output", "check_call",
    "call(", "run(", "shell_exec", "passthru", "proc_open", "do shell script", "start-process", "invoke-expression", "iex",
    "io.popen", "os.execute", "%x", "pty.spawn", "qx",
];
const DELETE_CALLS: [&str; 10] = ["rmtree", "rm_rf", "rm_r", "remove_tree", "rmsync", "rmdirsync", "fs.rm(", "remove-item", "removedirs", "fileutils.rm"];
const WRITE_CALLS: [&str; 8] = ["writefile", "appendfile", "write_text", "set-content", "add-content", "out-file", "file.write", "file_put_contents"];
const NETWORK: [&str; 14] = ["urllib", "requests.", "http.client", "httpx", "socket", "fetch(", "xmlhttprequest", "net::http", "lwp", "io::socket", "invoke-webrequest", "invoke-restmethod", "curl", "http.request"];
const SECRETS: [&str; 12] = ["environ", "process.env", "env[", "$env{", "getenv", ".ssh", ".aws", ".netrc", "id_rsa", "token", "secret", "password"];
const HOME_IDIOMS: [&str; 10] = [
    "os.path.expanduser(\"~\")", "os.path.expanduser('~')", "path.home()", "os.homedir()", "dir.home", "$env{home}", "$env{'home'}",
    "process.env.home", "os.environ[\"home\"]", "os.environ['home']",
];

/// The interpreter's base name without a version (`python3.12` is
/// `python`).
fn family(program: &str) -> &str {
    program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
}

pub fn is_interpreter(program: &str) -> bool {
    let family = family(program);
    INTERPRETERS.iter().any(|(name, _)| *name == family)
}

/// Tools (as the hook and MCP name them) whose path arguments are written.
pub fn is_file_writing_tool(program: &str) -> bool {
    let tool = program.rsplit("__").next().unwrap_or(program);
    ["write", "edit", "create", "append", "save", "put", "upload", "move", "copy", "rename"].iter().any(|verb| tool.starts_with(verb) || tool.ends_with(verb))
}

/// The inline code of an interpreter command, analysed.
pub(super) fn inline(builder: &mut Builder, command: &Command) {
    let family = family(&command.program).to_owned();
    let Some((_, flags)) = INTERPRETERS.iter().find(|(name, _)| *name == family) else { return };
    let argv = &command.argv;
    let code = if family.ends_with("awk") {
        let program_file = argv.iter().any(|w| w == "-f");
        (!program_file).then(|| argv.iter().skip(1).find(|w| !w.starts_with('-')).cloned()).flatten()
    } else {
        argv.iter().position(|w| flags.contains(&w.as_str())).and_then(|at| argv.get(at + 1).cloned())
    };
    if let Some(code) = code {
        if command.dynamic_args {
            builder.fact(Fact::EvalOfUnknownText, format!("{} runs code that is not known before it runs", command.program));
        }
        analyze(builder, &family, &code);
    }
}

/// What a piece of code in `language` does.
pub(super) fn analyze(builder: &mut Builder, language: &str, code: &str) {
    // API names are found in an ASCII-lower-cased copy (same byte offsets);
    // literals are read from the code as written.
    let mut code = code.to_owned();
    let mut lower = code.to_ascii_lowercase();
    for idiom in HOME_IDIOMS {
        while let Some(at) = lower.find(idiom) {
            code.replace_range(at..at + idiom.len(), "\"~\"");
            lower.replace_range(at..at + idiom.len(), "\"~\"");
        }
    }
    let code = code.as_str();
    let literals = literals(code);
    for call in SPAWN_CALLS {
        for at in occurrences(&lower, call) {
            let groups = groups_in(code, &literals, at + call.len());
            if groups.is_empty() {
                builder.fact(Fact::EvalOfUnknownText, format!("{language} code starts a program named at run time: {}", preview(code)));
            }
            for group in groups {
                builder.shell_lenient(&group, Some(language));
            }
        }
    }
    command_builders(builder, language, code, &lower, &literals);
    if code.contains('`') && matches!(language, "perl" | "ruby" | "php") {
        for quoted in code.split('`').skip(1).step_by(2) {
            builder.shell_lenient(quoted, Some(language));
        }
    }
    for call in DELETE_CALLS {
        for at in occurrences(&lower, call) {
            let groups = groups_in(code, &literals, at + call.len());
            let dynamic = groups.is_empty();
            let target = groups.into_iter().next().unwrap_or_else(|| "$unknown".into());
            builder.command(Command::new(vec!["rm".into(), "-r".into(), "-f".into(), target], false, dynamic, Some(format!("{language} {call}"))));
        }
    }
    let writing: Vec<String> = WRITE_CALLS
        .iter()
        .chain(["open("].iter())
        .flat_map(|call| occurrences(&lower, call).into_iter().map(move |at| (call, at)))
        .filter(|(call, at)| **call != "open(" || mode_writes(&lower[*at..]))
        .flat_map(|(call, at)| groups_in(code, &literals, at + call.len()).into_iter().take(1))
        .collect();
    for path in &writing {
        builder.write(path);
    }
    for literal in literals.iter().map(|l| &l.text).filter(|t| looks_like_path(t)) {
        builder.read(literal);
    }
    let loops = ["while", "for ", "for(", "loop", "until", "1.."].iter().any(|w| lower.contains(w));
    if lower.contains("fork") && loops {
        builder.fact(Fact::ForkBomb, format!("{language} code forks in a loop"));
    }
    if NETWORK.iter().any(|n| lower.contains(n)) && SECRETS.iter().any(|s| lower.contains(s)) {
        builder.fact(Fact::CodeSendsSecret, format!("{language} code reads secrets and uses the network"));
    }
}

/// Rust's `Command::new("sh").arg("-c").arg("…")`: the program and every
/// literal handed to `arg` or `args` up to the end of the statement are
/// one argv, analysed as the command it runs.
fn command_builders(
    builder: &mut Builder,
    language: &str,
    code: &str,
    lower: &str,
    literals: &[Literal],
) {
    for at in lower.match_indices("command::new(").map(|(at, _)| at) {
        let inside = |literal: &&Literal| literal.start > at;
        let statement_end = code[at..].find(';').map_or(code.len(), |end| at + end);
        let end = literals
            .iter()
            .filter(inside)
            .find(|l| l.start < statement_end && l.end > statement_end)
            .map_or(statement_end, |l| {
                code[l.end..]
                    .find(';')
                    .map_or(code.len(), |end| l.end + end)
            });
        let argv: Vec<&str> = literals
            .iter()
            .filter(|l| l.start > at && l.end <= end)
            .filter(|l| {
                matches!(
                    called_with(code, l.start, literals),
                    Some("new" | "arg" | "args")
                )
            })
            .map(|l| l.text.as_str())
            .collect();
        if argv.is_empty() {
            builder.fact(
                Fact::EvalOfUnknownText,
                format!(
                    "{language} code starts a program named at run time: {}",
                    preview(&code[at..end])
                ),
            );
        } else {
            builder.shell_lenient(&quote_words(argv), Some(language));
        }
    }
}

/// The name of the call whose parentheses hold the literal at `start`.
fn called_with<'a>(code: &'a str, start: usize, literals: &[Literal]) -> Option<&'a str> {
    let mut depth = 0;
    let mut at = start;
    while at > 0 {
        at -= 1;
        if let Some(literal) = literals.iter().find(|l| l.end == at + 1 && l.start < start) {
            at = literal.start;
            continue;
        }
        match code.as_bytes()[at] {
            b')' => depth += 1,
            b'(' if depth == 0 => {
                let before = &code[..at];
                let name_start = before
                    .rfind(|c: char| !c.is_alphanumeric() && c != '_')
                    .map_or(0, |i| i + 1);
                return Some(&before[name_start..]);
            }
            b'(' => depth -= 1,
            _ => {}
        }
    }
    None
}

fn occurrences(text: &str, needle: &str) -> Vec<usize> {
    text.match_indices(needle)
        .map(|(at, _)| at)
        .filter(|&at| text[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric() && c != '_') || needle.ends_with('('))
        .collect()
}

fn looks_like_path(text: &str) -> bool {
    !text.contains(char::is_whitespace) && (text.starts_with('/') || text.starts_with('~') || text.starts_with("./") || text.contains("/."))
}

/// `open(…, "w")`, `open(…, 'a')`: the call's mode writes.
fn mode_writes(call: &str) -> bool {
    let end = call.find(')').unwrap_or(call.len());
    let inside = &call[..end];
    ["\"w", "'w", "\"a", "'a", "\"x", "'x", "\"r+", "'r+"].iter().any(|m| inside.contains(m))
}

struct Literal {
    start: usize,
    end: usize,
    text: String,
}

/// String literals in code: `'…'`, `"…"` and `` `…` `` with backslash
/// escapes; positions are byte offsets in `code`.
fn literals(code: &str) -> Vec<Literal> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let quote = bytes[at];
        if !matches!(quote, b'\'' | b'"' | b'`') {
            at += 1;
            continue;
        }
        let start = at;
        let mut text = String::new();
        at += 1;
        let mut chars = code[at..].char_indices();
        let mut closed = None;
        while let Some((offset, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        text.push(match escaped {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                    }
                }
                c if c as u32 == u32::from(quote) => {
                    closed = Some(at + offset + 1);
                    break;
                }
                c => text.push(c),
            }
        }
        let Some(end) = closed else { break };
        found.push(Literal { start, end, text });
        at = end;
    }
    found
}

/// The literal groups of the call starting at `from`: up to its closing
/// parenthesis, or the end of the statement when it has none. Literals
/// joined by `.`, `+` or nothing are one string; by `,` one string with a
/// space between (an argv list); anything else starts a new group.
fn groups_in(code: &str, literals: &[Literal], from: usize) -> Vec<String> {
    let rest = &code[from..];
    let trimmed = rest.trim_start();
    let end = if trimmed.starts_with('(') {
        let open = from + (rest.len() - trimmed.len());
        matching_paren(code, open, literals).unwrap_or(code.len())
    } else {
        from + rest.find([';', '\n']).unwrap_or(rest.len())
    };
    let inside: Vec<&Literal> = literals.iter().filter(|l| l.start >= from && l.end <= end).collect();
    let mut groups: Vec<String> = Vec::new();
    let mut previous_end = None;
    for literal in inside {
        let between = previous_end.and_then(|p: usize| code.get(p..literal.start)).map(str::trim);
        match (between, groups.last_mut()) {
            (Some("" | "." | "+" | ".."), Some(last)) => last.push_str(&literal.text),
            (Some(",") | Some("', '"), Some(last)) => {
                last.push(' ');
                last.push_str(&literal.text);
            }
            _ => groups.push(literal.text.clone()),
        }
        previous_end = Some(literal.end);
    }
    groups
}

fn matching_paren(code: &str, open: usize, literals: &[Literal]) -> Option<usize> {
    let mut depth = 0;
    let mut at = open;
    while at < code.len() {
        if let Some(literal) = literals.iter().find(|l| l.start == at) {
            at = literal.end;
            continue;
        }
        match code.as_bytes()[at] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at + 1);
                }
            }
            _ => {}
        }
        at += 1;
    }
    None
}

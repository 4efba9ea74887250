//! The lexical reader of code, for languages read without a grammar
//! (Perl, AppleScript, PowerShell, Lua, awk, Rust build scripts…) and for
//! code a grammar could not parse cleanly: well-known call names are found
//! in the text rather than parsed per language.
//!
//! - calls that start a shell or a program (`os.system`, `subprocess`,
//!   `system`, `exec`, `popen`, `child_process`, backticks…): their string
//!   literals, joined the way the code concatenates them (`"r"."m -rf ~"`),
//!   are analysed as shell; a call with no literal runs text built at run
//!   time, which is a fact;
//! - calls that delete trees (`shutil.rmtree`, `rm_rf`, `fs.rmSync`,
//!   `remove_tree`, `Remove-Item`): the command `rm -r -f PATH`; Perl's
//!   `unlink`, `truncate`, `rmdir` and `rename`: `rm -f`, `truncate -s 0`,
//!   `rmdir`, `mv`;
//! - every string literal that looks like a path is a file read, or
//!   written when it is handed to a writing call.
//!
//! Home-directory idioms (`expanduser("~")`, `Path.home()`, `os.homedir()`,
//! `$ENV{HOME}`, `process.env.HOME`, Perl's `glob('~…')` and `<~…>`) read
//! as home; a `~` written in a literal is home where a shell gets it and a
//! folder of that name where a file call opens it (`home`), except in
//! PowerShell, R and Tcl, whose file calls expand it. Perl's `open` is
//! read by its mode, and its here-documents, POD and `__END__` data are
//! set apart as data first (`perl`).

use super::home;
use crate::analysis::{Builder, Command, Fact, budget, preview, words::quote_words};

const SPAWN_CALLS: [&str; 24] = [
    "system",
    "popen",
    "exec",
    "execsync",
    "execfilesync",
    "spawn",
    "spawnsync",
    "subprocess",
    "check_output",
    "check_call",
    "call(",
    "run(",
    "shell_exec",
    "passthru",
    "proc_open",
    "do shell script",
    "start-process",
    "invoke-expression",
    "iex",
    "io.popen",
    "os.execute",
    "%x",
    "pty.spawn",
    "qx",
];
const DELETE_CALLS: [&str; 10] = [
    "rmtree",
    "rm_rf",
    "rm_r",
    "remove_tree",
    "rmsync",
    "rmdirsync",
    "fs.rm(",
    "remove-item",
    "removedirs",
    "fileutils.rm",
];
const WRITE_CALLS: [&str; 8] = [
    "writefile",
    "appendfile",
    "write_text",
    "set-content",
    "add-content",
    "out-file",
    "file.write",
    "file_put_contents",
];
const HOME_IDIOMS: [&str; 15] = [
    "os.path.expanduser(\"~\")",
    "os.path.expanduser('~')",
    "path.home()",
    "os.homedir()",
    "homedir()",
    "sys.getenv(\"home\")",
    "os.getenv(\"home\")",
    "os.getenv('home')",
    "getenv(\"home\")",
    "dir.home",
    "$env{home}",
    "$env{'home'}",
    "process.env.home",
    "os.environ[\"home\"]",
    "os.environ['home']",
];

/// Calls that some languages have and the others do not: in those, a
/// call that runs a shell string, one that starts a program from an argv
/// (the reader cannot join it, so it is a fact), and one that deletes
/// its first path.
struct LanguageCalls {
    languages: &'static [&'static str],
    shell: &'static [&'static str],
    program: &'static [&'static str],
    delete: &'static [&'static str],
}

const LANGUAGE_CALLS: [LanguageCalls; 5] = [
    LanguageCalls {
        languages: &["elisp"],
        shell: &[
            "shell-command",
            "async-shell-command",
            "call-process-shell-command",
            "start-process-shell-command",
            "process-lines",
        ],
        program: &["call-process", "process-file", "make-process", "start-file-process"],
        delete: &["delete-directory", "delete-file", "move-file-to-trash"],
    },
    LanguageCalls {
        languages: &["vim"],
        shell: &["jobstart", "job_start", "term_start", "termopen"],
        program: &[],
        delete: &["delete("],
    },
    LanguageCalls {
        languages: &["rscript"],
        shell: &[],
        program: &["system2", "processx::run"],
        delete: &["unlink(", "file.remove("],
    },
    LanguageCalls { languages: &["julia"], shell: &[], program: &[], delete: &["rm("] },
    LanguageCalls {
        languages: &["lua", "luajit"],
        shell: &[],
        program: &[],
        delete: &["os.remove("],
    },
];

/// What a piece of code in `language` does.
pub(super) fn analyze(builder: &mut Builder, language: &str, code: &str) {
    let own = LANGUAGE_CALLS.iter().filter(|calls| calls.languages.contains(&language));
    let (own_shell, own_program, own_delete): (Vec<&str>, Vec<&str>, Vec<&str>) = (
        own.clone().flat_map(|calls| calls.shell).copied().collect(),
        own.clone().flat_map(|calls| calls.program).copied().collect(),
        own.flat_map(|calls| calls.delete).copied().collect(),
    );
    let globbed;
    let code = match language {
        "perl" => {
            globbed = super::perl::home_globs(code);
            globbed.as_str()
        }
        _ => code,
    };
    let (code, lower) = with_home_read_as_tilde(code);
    // Perl's here-documents, POD and `__END__` data are no code: calls
    // are looked for in `lower`, where that data is blanked.
    let (code, lower) = match language {
        "perl" => {
            let apart = super::perl::set_apart(&code);
            let lower = blanked(&apart.code, &apart.data).to_ascii_lowercase();
            (apart.code, lower)
        }
        _ => (code, lower),
    };
    let code = code.as_str();
    let lower = lower.as_str();
    let index = Index::new(code);
    for call in SPAWN_CALLS.into_iter().chain(own_shell) {
        for at in occurrences(lower, call) {
            let groups = index.groups_in(code, at + call.len());
            if groups.is_empty() {
                builder.fact(
                    Fact::EvalOfUnknownText,
                    format!(
                        "{language} code starts a program named at run time: {}",
                        preview(code)
                    ),
                );
            }
            for group in groups {
                builder.shell_lenient(&home::for_shell(&group), Some(language));
            }
        }
    }
    if let Some(call) = own_program.into_iter().find(|call| lower.contains(call)) {
        builder.fact(
            Fact::EvalOfUnknownText,
            format!("{language} code starts a program with {call}: {}", preview(code)),
        );
    }
    command_builders(builder, language, code, lower, &index);
    if code.contains('`') && matches!(language, "perl" | "ruby" | "php" | "julia") {
        for quoted in backticked(code, lower) {
            builder.shell_lenient(&home::for_shell(quoted), Some(language));
        }
    }
    for call in DELETE_CALLS.into_iter().chain(own_delete) {
        for at in occurrences(lower, call) {
            let groups = index.groups_in(code, at + call.len());
            let dynamic = groups.is_empty();
            let target = groups
                .into_iter()
                .next()
                .map_or_else(|| super::UNKNOWN.into(), |target| file_path(language, &target));
            builder.command(Command::new(
                vec!["rm".into(), "-r".into(), "-f".into(), target],
                false,
                dynamic,
                Some(format!("{language} {call}")),
            ));
        }
    }
    let mut opened = Vec::new();
    if language == "perl" {
        perl_file_calls(builder, code, lower, &index);
        opened = perl_open_calls(builder, code, lower, &index);
    }
    if language.ends_with("awk") {
        awk_redirections(builder, code, &index);
    }
    let writing: Vec<String> = WRITE_CALLS
        .iter()
        .chain(["open("].iter())
        .flat_map(|call| occurrences(lower, call).into_iter().map(move |at| (call, at)))
        .filter(|(call, at)| **call != "open(" || index.mode_writes(lower, at + call.len() - 1))
        .flat_map(|(call, at)| index.groups_in(code, at + call.len()).into_iter().take(1))
        .collect();
    for path in &writing {
        builder.write(&file_path(language, path));
    }
    // A literal alone may yet reach a shell: its `~` is home. One a
    // file API opens was read or written as that API reads it.
    for literal in index.literals.iter().filter(|literal| !opened.contains(&literal.start)) {
        let text = home::for_shell(&literal.text);
        if looks_like_path(&text) {
            builder.read(&text);
        }
    }
}

/// awk's redirections of a string: `"CMD" | getline` and `print … |
/// "CMD"` run CMD in a shell, `print … > "F"` (and `>>`) writes F, and
/// `getline … < "F"` reads it.
fn awk_redirections(builder: &mut Builder, code: &str, index: &Index) {
    for literal in &index.literals {
        let before = code.get(..literal.start).unwrap_or_default().trim_end();
        let after = code.get(literal.end..).unwrap_or_default().trim_start();
        let piped_to_getline =
            after.strip_prefix('|').is_some_and(|rest| rest.trim_start().starts_with("getline"));
        if piped_to_getline {
            builder.shell_lenient(&home::for_shell(&literal.text), Some("awk"));
        } else if before.ends_with('|') && !before.ends_with("||") {
            // What awk prints is what the command reads.
            let direct = builder.shell_lenient(&home::for_shell(&literal.text), Some("awk"));
            crate::analysis::executors::runs_unseen_input(builder, &direct, "awk's print |");
        } else if before.ends_with('>') {
            builder.write(&home::for_file_api(&literal.text));
        } else if before.ends_with('<') {
            builder.read(&home::for_file_api(&literal.text));
        }
    }
}

/// Perl's own calls on files, as the commands they amount to: `unlink
/// LIST` is `rm -f LIST`, `truncate(FILE, N)` is `truncate -s 0 FILE`,
/// `rmdir DIR` is `rmdir DIR`, `rename OLD, NEW` is `mv OLD NEW`; with no
/// literal (a variable, `q(…)`), the target is known only when the code
/// runs.
fn perl_file_calls(builder: &mut Builder, code: &str, lower: &str, index: &Index) {
    const CALLS: [(&str, &[&str]); 4] = [
        ("unlink", &["rm", "-f"]),
        ("truncate", &["truncate", "-s", "0"]),
        ("rmdir", &["rmdir"]),
        ("rename", &["mv"]),
    ];
    for (call, command) in CALLS {
        // A call, not the word in a regex or a string (`/unlink/`).
        let called = |at: &usize| {
            lower.get(at + call.len()..).and_then(|rest| rest.chars().next()).is_none_or(|next| {
                next.is_whitespace() || matches!(next, '(' | '\'' | '"' | '$' | '@' | ';')
            })
        };
        for at in occurrences(lower, call).into_iter().filter(called) {
            let groups = index.groups_in(code, at + call.len());
            let targets: Vec<String> = match (call, groups.first()) {
                (_, None) => vec![super::UNKNOWN.to_owned()],
                ("truncate", Some(group)) => {
                    group.split(' ').take(1).map(home::for_file_api).collect()
                }
                // One side named by a variable: which one is not known,
                // so each literal may be the source, and where it goes is
                // unknown (`rename $old, '/x'` may move anything).
                ("rename", Some(group)) if !group.contains(' ') => {
                    let unknown = super::UNKNOWN.to_owned();
                    vec![unknown.clone(), home::for_file_api(group), unknown]
                }
                (_, Some(group)) => group.split(' ').map(home::for_file_api).collect(),
            };
            let argv = command.iter().map(|word| (*word).to_owned()).chain(targets).collect();
            builder.command(Command::new(
                argv,
                false,
                groups.is_empty(),
                Some(format!("perl {call}")),
            ));
        }
    }
}

/// A path a file API of `language` opens: PowerShell's providers, R's
/// connections and Tcl expand a leading `~`; the others do not (see
/// `home`).
fn file_path(language: &str, path: &str) -> String {
    match language {
        "pwsh" | "powershell" | "rscript" | "tclsh" | "elisp" | "vim" => home::for_shell(path),
        _ => home::for_file_api(path),
    }
}

/// Perl's `open`: `open(FH, MODE, PATH)` with a mode literal (`'>'`,
/// `'>>'`, `'+<'`, `'<:encoding(UTF-8)'`) before the path literal, or
/// `open(FH, '>PATH')` with the mode glued; a pipe opens no file. The
/// path is read or written as the mode says, with `~` as Perl opens it
/// (a folder, see `home`). Gives where each literal so opened starts.
fn perl_open_calls(builder: &mut Builder, code: &str, lower: &str, index: &Index) -> Vec<usize> {
    let mut opened = Vec::new();
    for at in occurrences(lower, "open") {
        let after = at + "open".len();
        let rest = code.get(after..).unwrap_or_default();
        let trimmed = rest.trim_start();
        let called = trimmed.starts_with('(') || rest.starts_with(char::is_whitespace);
        if !called {
            continue;
        }
        let end = if trimmed.starts_with('(') {
            index.close_of(after + (rest.len() - trimmed.len())).unwrap_or(code.len())
        } else {
            index.statement_end(after)
        };
        let literals = index.between(after, end);
        let (mode, path) = match literals {
            [mode, path, ..] if perl_mode(&mode.text).is_some() => {
                (perl_mode(&mode.text), Some((path, path.text.as_str())))
            }
            [glued, ..] => {
                let text = glued.text.trim();
                let path = text.trim_start_matches(['+', '<', '>']).trim_start();
                let mode = text.get(..text.len() - path.len()).unwrap_or_default();
                let pipe = text.starts_with('|') || text.ends_with('|');
                match (pipe, perl_mode(mode)) {
                    (true, _) => (None, None),
                    (false, Some(mode)) => (Some(mode), Some((glued, path))),
                    (false, None) => (Some((false, true)), Some((glued, path))),
                }
            }
            [] => (None, None),
        };
        let (Some((writes, reads)), Some((literal, path))) = (mode, path) else {
            continue;
        };
        // The path goes on through literals joined with `.`.
        let mut path = path.to_owned();
        let mut previous = literal;
        for next in literals.iter().skip_while(|other| other.start <= literal.start) {
            if code.get(previous.end..next.start).map(str::trim) != Some(".")
                || !budget::produce(next.text.len())
            {
                break;
            }
            path.push_str(&next.text);
            opened.push(next.start);
            previous = next;
        }
        let path = home::for_file_api(&path);
        if writes {
            builder.write(&path);
        }
        if reads {
            builder.read(&path);
        }
        opened.push(literal.start);
    }
    opened
}

/// A Perl `open` mode (`<`, `>`, `>>`, `+<`, `+>`, with `:layers`):
/// whether it writes and whether it reads.
fn perl_mode(mode: &str) -> Option<(bool, bool)> {
    let mode = mode.split(':').next().unwrap_or_default().trim();
    let is_mode = !mode.is_empty() && mode.chars().all(|c| matches!(c, '+' | '<' | '>'));
    is_mode.then(|| (mode.contains(['>', '+']), mode.contains(['<', '+'])))
}

/// The code with the bytes in `data` replaced by spaces: same offsets,
/// nothing to find there.
fn blanked(code: &str, data: &[std::ops::Range<usize>]) -> String {
    let mut bytes = code.as_bytes().to_vec();
    for range in data {
        for byte in bytes.get_mut(range.clone()).unwrap_or_default() {
            *byte = b' ';
        }
    }
    // Data ranges lie between ASCII quotes, so whole characters are
    // replaced; were one not, the code is read unblanked.
    String::from_utf8(bytes).unwrap_or_else(|_| code.to_owned())
}

/// The text between each pair of backticks `lower` shows (data is
/// blanked there), as `code` writes it.
fn backticked<'c>(code: &'c str, lower: &str) -> Vec<&'c str> {
    let ticks: Vec<usize> = lower.match_indices('`').map(|(at, _)| at).collect();
    ticks
        .chunks_exact(2)
        .filter_map(|pair| match pair {
            [open, close] => code.get(open + 1..*close),
            _ => None,
        })
        .collect()
}

/// The code with every home-directory idiom replaced by a literal of
/// home ([`home::EXPANDED`]), and its
/// ASCII-lower-cased copy (same byte offsets, where API names are found;
/// literals are read from the code as written). One pass per idiom.
fn with_home_read_as_tilde(code: &str) -> (String, String) {
    let mut code = code.to_owned();
    let mut lower = code.to_ascii_lowercase();
    for idiom in HOME_IDIOMS {
        if !lower.contains(idiom) {
            continue;
        }
        let (mut new_code, mut new_lower) =
            (String::with_capacity(code.len()), String::with_capacity(lower.len()));
        let mut from = 0;
        for (at, _) in lower.match_indices(idiom) {
            new_code.push_str(code.get(from..at).unwrap_or_default());
            new_lower.push_str(lower.get(from..at).unwrap_or_default());
            let expanded = format!("\"{}\"", home::EXPANDED);
            new_code.push_str(&expanded);
            new_lower.push_str(&expanded);
            from = at + idiom.len();
        }
        new_code.push_str(code.get(from..).unwrap_or_default());
        new_lower.push_str(lower.get(from..).unwrap_or_default());
        (code, lower) = (new_code, new_lower);
    }
    (code, lower)
}

/// Rust's `Command::new("sh").arg("-c").arg("…")`: the program and every
/// literal handed to `arg` or `args` up to the end of the statement are
/// one argv, analysed as the command it runs.
fn command_builders(builder: &mut Builder, language: &str, code: &str, lower: &str, index: &Index) {
    for at in lower.match_indices("command::new(").map(|(at, _)| at) {
        let statement_end = index.statement_end(at);
        // A `;` inside a literal does not end the statement.
        let end = index
            .literal_across(statement_end)
            .map_or(statement_end, |literal| index.statement_end(literal.end));
        let inside = index.between(at + 1, end);
        if !budget::work(inside.len()) {
            return;
        }
        let argv: Vec<&str> = inside
            .iter()
            .filter(|literal| {
                matches!(index.called_with(code, literal), Some("new" | "arg" | "args"))
            })
            .map(|literal| literal.text.as_str())
            .collect();
        if argv.is_empty() {
            builder.fact(
                Fact::EvalOfUnknownText,
                format!(
                    "{language} code starts a program named at run time: {}",
                    preview(code.get(at..end).unwrap_or(code))
                ),
            );
        } else {
            let argv: Vec<String> = argv.into_iter().map(home::for_shell).collect();
            builder.shell_lenient(&quote_words(argv.iter().map(String::as_str)), Some(language));
        }
    }
}

fn occurrences(text: &str, needle: &str) -> Vec<usize> {
    text.match_indices(needle)
        .map(|(at, _)| at)
        .filter(|&at| {
            text.get(..at)
                .unwrap_or_default()
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_')
                || needle.ends_with('(')
        })
        .collect()
}

pub(super) fn looks_like_path(text: &str) -> bool {
    !text.contains(char::is_whitespace)
        && (text.starts_with('/')
            || text.starts_with('~')
            || text.starts_with("./")
            || text.contains("/."))
}

struct Literal {
    start: usize,
    end: usize,
    text: String,
    /// The innermost parenthesis still open where the literal starts.
    opened_in: Option<usize>,
}

/// What the readers look up in one piece of code, found in one pass so
/// each look-up is a binary search: a reader that rescanned the code
/// for every call it met took minutes on 30 KB.
struct Index {
    /// String literals (`'…'`, `"…"`, `` `…` `` with backslash escapes),
    /// in order; positions are byte offsets in the code.
    literals: Vec<Literal>,
    /// Each `(` outside literals with the offset just after its `)`,
    /// ordered by the `(`.
    closes: Vec<(usize, usize)>,
    /// Offsets of `;` and newlines outside literals.
    statement_ends: Vec<usize>,
    /// The code's length: where the last statement ends.
    len: usize,
}

impl Index {
    fn new(code: &str) -> Self {
        let bytes = code.as_bytes();
        let mut index = Index {
            literals: Vec::new(),
            closes: Vec::new(),
            statement_ends: Vec::new(),
            len: code.len(),
        };
        let mut open: Vec<usize> = Vec::new();
        let mut at = 0;
        while let Some(&byte) = bytes.get(at) {
            match byte {
                b'\'' | b'"' | b'`' => match literal_at(code, at) {
                    Some((end, text)) => {
                        index.literals.push(Literal {
                            start: at,
                            end,
                            text,
                            opened_in: open.last().copied(),
                        });
                        at = end;
                        continue;
                    }
                    // An unclosed quote runs to the end: nothing after it
                    // is code.
                    None => break,
                },
                b'(' => open.push(at),
                b')' => {
                    if let Some(paren) = open.pop() {
                        index.closes.push((paren, at + 1));
                    }
                }
                b';' | b'\n' => index.statement_ends.push(at),
                _ => {}
            }
            at += 1;
        }
        index.closes.sort_unstable();
        index
    }

    /// Just after the `)` closing the `(` at `paren`.
    fn close_of(&self, paren: usize) -> Option<usize> {
        self.closes
            .binary_search_by_key(&paren, |&(open, _)| open)
            .ok()
            .and_then(|at| self.closes.get(at))
            .map(|&(_, close)| close)
    }

    /// The first `;` or newline at or after `from`, or the end of the code.
    fn statement_end(&self, from: usize) -> usize {
        let at = self.statement_ends.partition_point(|&end| end < from);
        self.statement_ends.get(at).copied().unwrap_or(self.len)
    }

    /// The literal that spans `offset`, if one does.
    fn literal_across(&self, offset: usize) -> Option<&Literal> {
        let at = self.literals.partition_point(|literal| literal.start < offset);
        at.checked_sub(1)
            .and_then(|before| self.literals.get(before))
            .filter(|literal| literal.end > offset)
    }

    /// The literals wholly within `from..end`.
    fn between(&self, from: usize, end: usize) -> &[Literal] {
        let first = self.literals.partition_point(|literal| literal.start < from);
        let rest = self.literals.get(first..).unwrap_or_default();
        let count = rest.partition_point(|literal| literal.end <= end);
        rest.get(..count).unwrap_or_default()
    }

    /// The name of the call whose parentheses hold `literal`.
    fn called_with<'a>(&self, code: &'a str, literal: &Literal) -> Option<&'a str> {
        let before = code.get(..literal.opened_in?)?;
        let name_start = before
            .char_indices()
            .rev()
            .find(|&(_, c)| !c.is_alphanumeric() && c != '_')
            .map_or(0, |(at, c)| at + c.len_utf8());
        before.get(name_start..)
    }

    /// `open(…, "w")`, `open(…, 'a')`: the call whose `(` is at `paren`
    /// has a mode that writes.
    fn mode_writes(&self, lower: &str, paren: usize) -> bool {
        let end = self.close_of(paren).unwrap_or_else(|| self.statement_end(paren));
        let inside = lower.get(paren..end).unwrap_or("");
        budget::work(inside.len())
            && ["\"w", "'w", "\"a", "'a", "\"x", "'x", "\"r+", "'r+"]
                .iter()
                .any(|m| inside.contains(m))
    }

    /// The literal groups of the call starting at `from`: up to its
    /// closing parenthesis, or the end of the statement when it has none.
    /// Literals joined by `.`, `+` or nothing are one string; by `,` one
    /// string with a space between (an argv list); anything else starts a
    /// new group.
    fn groups_in(&self, code: &str, from: usize) -> Vec<String> {
        let rest = code.get(from..).unwrap_or("");
        let trimmed = rest.trim_start();
        let end = if trimmed.starts_with('(') {
            self.close_of(from + (rest.len() - trimmed.len())).unwrap_or(code.len())
        } else {
            self.statement_end(from)
        };
        let inside = self.between(from, end);
        // A call that never closes takes every literal after it: the
        // work each such call costs is paid for.
        if !budget::work(inside.len()) {
            return Vec::new();
        }
        let mut groups: Vec<String> = Vec::new();
        let mut previous_end = None;
        for literal in inside {
            if !budget::produce(literal.text.len()) {
                break;
            }
            let between =
                previous_end.and_then(|p: usize| code.get(p..literal.start)).map(str::trim);
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
}

/// The literal opening at `start` (whose byte is its quote): the offset
/// just after it and its text with escapes undone; `None` if it never
/// closes.
fn literal_at(code: &str, start: usize) -> Option<(usize, String)> {
    let quote = char::from(*code.as_bytes().get(start)?);
    let mut text = String::new();
    let mut chars = code.get(start + 1..)?.char_indices();
    while let Some((offset, c)) = chars.next() {
        match c {
            '\\' => {
                if let Some((_, escaped)) = chars.next() {
                    // `\x20` and `\040` (awk, Perl, Python, PHP, Ruby and
                    // JavaScript strings alike) are the characters they code.
                    let radix = match escaped {
                        'x' => Some((16, 2)),
                        '0'..='7' => Some((8, 3)),
                        _ => None,
                    };
                    let coded = radix.and_then(|(radix, most)| {
                        let digits: String = std::iter::once(escaped)
                            .filter(|_| radix == 8)
                            .chain(chars.clone().map(|(_, d)| d))
                            .take(most)
                            .take_while(|d| d.is_digit(radix))
                            .collect();
                        let value = u32::from_str_radix(&digits, radix).ok()?;
                        let consumed = digits.len() - usize::from(radix == 8);
                        Some((char::from_u32(value)?, consumed))
                    });
                    match coded {
                        Some((character, consumed)) => {
                            text.push(character);
                            if let Some(last) = consumed.checked_sub(1) {
                                chars.nth(last);
                            }
                        }
                        None => text.push(match escaped {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        }),
                    }
                }
            }
            c if c == quote => return Some((start + 1 + offset + 1, text)),
            c => text.push(c),
        }
    }
    None
}

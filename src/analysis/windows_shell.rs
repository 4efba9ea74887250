//! Windows' shells, cmd and PowerShell, read into the commands the policy
//! matches. A line is split into statements (`;`, `&`, `&&`, `||`, new
//! lines) and pipelines, words are unquoted by the dialect's rules (cmd:
//! `"…"` and `^`; PowerShell: `'…'`, `"…"` and the backtick), and each
//! command that means a POSIX one is named as that program with its flags
//! (`Remove-Item -Recurse -Force X` and `rd /s /q X` are `rm -r -f X`;
//! `Get-Content X` and `type X` are `cat X`; `Set-Content`, `Out-File` and
//! `>` write their file). Other commands keep their own name in lower case
//! without `.exe` (`iwr`, `iex`, `format`, `vssadmin`), which is how the
//! policy names them. Paths in Windows form (`C:\Users\x`,
//! `%USERPROFILE%\.ssh`, `$env:USERPROFILE`) are normalised by
//! `words::normalize_path` like any path.
//!
//! Read when a command runs one of these shells (`cmd /c`, `powershell
//! -Command`, `-EncodedCommand` decoded) and, besides the POSIX reading,
//! when an action itself reads as one ([`dialect_of`]): finding more
//! commands can only make the decision stricter.

use super::{Builder, Command, Fact, preview};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    Cmd,
    PowerShell,
}

/// Commands that mean a POSIX program: their names, that program, and how
/// their switches read (`recurse`/`s` is `-r`…), by dialect-free name.
const MEANINGS: &[(&[&str], &str)] = &[
    (&["remove-item", "ri", "rm", "rmdir", "rd", "del", "erase"], "rm"),
    (&["get-content", "gc", "cat", "type"], "cat"),
    (&["copy-item", "cpi", "copy", "cp", "xcopy", "robocopy"], "cp"),
    (&["move-item", "mi", "move", "mv", "rename-item", "ren", "rni"], "mv"),
    (&["set-content", "add-content", "ac", "out-file"], "tee"),
    (&["get-childitem", "gci", "dir", "ls"], "ls"),
    (&["stop-process", "spps", "taskkill"], "kill"),
    (&["format-volume", "clear-disk", "initialize-disk", "remove-partition"], "format"),
];

/// Switches and what they mean for the POSIX program (`/s` and
/// `-Recurse` are `-r`; `/q`, `/f` and `-Force` are `-f`, or `-9` for kill).
fn switch(program: &str, name: &str) -> Option<&'static str> {
    match (program, name) {
        ("rm" | "cp" | "ls", "recurse" | "r" | "s" | "e") => Some("-r"),
        ("rm" | "cp" | "mv", "force" | "fo" | "q" | "f" | "y") => Some("-f"),
        ("kill", "force" | "f") => Some("-9"),
        ("tee", "append") => Some("-a"),
        _ => None,
    }
}

/// PowerShell parameters whose value is the path (or what) a command acts
/// on.
const VALUE_PARAMETERS: [&str; 12] = [
    "path",
    "literalpath",
    "destination",
    "filepath",
    "uri",
    "outfile",
    "value",
    "argumentlist",
    "name",
    "id",
    "command",
    "encodedcommand",
];

/// Cmdlets and aliases at the start of a statement that make a line read
/// as PowerShell.
const POWERSHELL_MARKS: [&str; 14] = [
    "remove-item",
    "get-content",
    "set-content",
    "add-content",
    "copy-item",
    "move-item",
    "get-childitem",
    "invoke-webrequest",
    "invoke-restmethod",
    "invoke-expression",
    "start-process",
    "stop-process",
    "out-file",
    "new-item",
];

/// Whether an action reads as a Windows shell line, and which.
pub(super) fn dialect_of(text: &str) -> Option<Dialect> {
    let lower = text.to_ascii_lowercase();
    let starts = lower
        .split(['\n', ';', '|', '&'])
        .filter_map(|statement| statement.split_whitespace().next());
    let cmdlet = starts
        .clone()
        .any(|first| POWERSHELL_MARKS.contains(&first.trim_start_matches(['(', '&', '.'])));
    if cmdlet || lower.contains("$env:") || lower.contains("${env:") {
        return Some(Dialect::PowerShell);
    }
    let cmd_builtin = starts.clone().any(|first| {
        matches!(
            first,
            "del"
                | "erase"
                | "rd"
                | "rmdir"
                | "type"
                | "copy"
                | "xcopy"
                | "move"
                | "ren"
                | "taskkill"
                | "reg"
                | "format"
        )
    });
    // `/s`, `/IM`: a switch, not a POSIX path.
    let switch = lower.split_whitespace().any(|w| {
        w.starts_with('/')
            && (2..=3).contains(&w.len())
            && w.get(1..).unwrap_or_default().chars().all(|c| c.is_ascii_alphabetic() || c == '?')
    });
    let cmd_form = lower.matches('%').count() >= 2 || switch || lower.contains(":\\");
    (cmd_builtin && cmd_form || lower.contains("%userprofile%") || lower.contains("%appdata%"))
        .then_some(Dialect::Cmd)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Pipe,
    Separator,
    Redirect { append: bool },
}

/// Reads a script; returns the commands it runs directly.
pub(super) fn analyze(
    builder: &mut Builder,
    dialect: Dialect,
    script: &str,
    via: Option<&str>,
) -> Vec<usize> {
    if builder.depth >= super::MAX_DEPTH {
        builder.fact(Fact::TooComplex, format!("shells nested deeper than {}", super::MAX_DEPTH));
        return Vec::new();
    }
    // Paid for by its length, as a bash parse is.
    if !super::budget::work(script.len() + super::budget::PARSE_STEPS) {
        return Vec::new();
    }
    builder.depth += 1;
    let mut direct = Vec::new();
    let mut stages: Vec<Vec<usize>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut redirect: Option<bool> = None;
    let mut targets: Vec<(String, bool)> = Vec::new();
    let tokens = tokenize(dialect, script);
    for token in tokens.into_iter().chain(std::iter::once(Token::Separator)) {
        match token {
            Token::Word(word) => match redirect.take() {
                Some(append) => targets.push((word, append)),
                None => words.push(word),
            },
            Token::Redirect { append } => redirect = Some(append),
            Token::Pipe | Token::Separator => {
                let ended_pipeline = token == Token::Separator;
                let upstream = stages.last().and_then(|stage| stage.first()).copied();
                let words = std::mem::take(&mut words);
                if let Some(index) = statement(builder, dialect, words, via, upstream) {
                    for (path, append) in targets.drain(..) {
                        builder.write_from(&[index], &path, append);
                    }
                    stages.push(vec![index]);
                }
                targets.clear();
                if ended_pipeline {
                    direct.extend(stages.iter().flatten());
                    builder.feed(std::mem::take(&mut stages));
                }
            }
        }
    }
    builder.depth -= 1;
    direct
}

/// One command of a statement, recorded; its index. `upstream` is the
/// pipeline stage before it, whose output it is given.
fn statement(
    builder: &mut Builder,
    dialect: Dialect,
    mut words: Vec<String>,
    via: Option<&str>,
    upstream: Option<usize>,
) -> Option<usize> {
    // PowerShell's call operators run the command that follows.
    while dialect == Dialect::PowerShell && words.first().is_some_and(|w| w == "&" || w == ".") {
        words.remove(0);
    }
    let first = words.first()?.clone();
    let name = super::command::base_name(&first);
    let dynamic_program = first.starts_with('$') || first.starts_with('(');
    if matches!(name.as_str(), "iex" | "invoke-expression") {
        return evaluate(builder, &words, via);
    }
    if name == "start-process" || name == "saps" || name == "start" {
        return start_process(builder, dialect, &words, via);
    }
    let meaning =
        MEANINGS.iter().find(|(names, _)| names.contains(&name.as_str())).map(|(_, posix)| *posix);
    let program = meaning.unwrap_or(name.as_str()).to_owned();
    let mut argv = vec![program.clone()];
    let mut rest = words.into_iter().skip(1).peekable();
    while let Some(word) = rest.next() {
        let Some(parameter) = parameter_name(dialect, &word) else {
            argv.push(word);
            continue;
        };
        if let Some(flag) = meaning.and_then(|posix| switch(posix, &parameter)) {
            argv.push(flag.to_owned());
        } else if meaning == Some("format") && DISK_PARAMETERS.contains(&parameter.as_str()) {
            argv.extend(rest.next().map(|value| disk_named(&parameter, &value)));
        } else if meaning == Some("format") && FORMAT_SETTINGS.contains(&parameter.as_str()) {
            rest.next();
        } else if dialect == Dialect::PowerShell
            && VALUE_PARAMETERS.contains(&parameter.as_str())
            && !word.contains(':')
        {
            argv.extend(rest.next());
        } else if meaning.is_none() {
            // A command the policy knows by its own name keeps its
            // switches as it wrote them (`vssadmin delete shadows /all`).
            argv.push(word.to_ascii_lowercase());
        }
    }
    if program == "ls" && argv.iter().skip(1).any(|a| a.eq_ignore_ascii_case("env:")) {
        argv = vec!["printenv".to_owned()];
    }
    // A cmdlet given no path acts on what the stage before it outputs
    // (`Get-ChildItem ~/.ssh | Remove-Item`, `Get-Disk 1 | Clear-Disk`).
    let mut dynamic_args = false;
    let written = argv.iter().skip(1).filter(|word| !word.starts_with('-')).count();
    let takes_paths = match program.as_str() {
        "rm" | "cat" | "kill" | "format" => 0,
        "cp" | "mv" => 1,
        _ => usize::MAX,
    };
    if dialect == Dialect::PowerShell && written <= takes_paths {
        match upstream.map(|index| piped_items(builder, index)) {
            Some(Some(items)) => argv.extend(items),
            Some(None) => dynamic_args = true,
            None => {}
        }
    }
    builder.command(Command::new(argv, dynamic_program, dynamic_args, via.map(str::to_owned)))
}

/// The items a pipeline stage outputs, where its words say which: a
/// listing's entries (`Get-ChildItem DIR` gives `DIR/*`); `None` when
/// they are known only as it runs.
fn piped_items(builder: &Builder, index: usize) -> Option<Vec<String>> {
    let listing = builder.analysis.commands.get(index).filter(|command| {
        command.program == "ls" && !command.dynamic_args && !command.dynamic_program
    })?;
    let folders = if listing.positionals.is_empty() {
        vec![".".to_owned()]
    } else {
        listing.positionals.clone()
    };
    Some(folders.iter().map(|folder| super::effects::entries_of(folder)).collect())
}

/// Parameters of the disk cmdlets that name the disk or volume.
const DISK_PARAMETERS: [&str; 10] = [
    "driveletter",
    "number",
    "disknumber",
    "partitionnumber",
    "uniqueid",
    "friendlyname",
    "serialnumber",
    "path",
    "objectid",
    "filesystemlabel",
];

/// Parameters of the disk cmdlets whose value is a setting, not a disk.
const FORMAT_SETTINGS: [&str; 6] =
    ["filesystem", "newfilesystemlabel", "allocationunitsize", "partitionstyle", "size", "offset"];

/// The disk a disk cmdlet's parameter names: a drive letter as `D:`,
/// anything else (a disk number, a partition, an id) as a disk known
/// only when it runs.
fn disk_named(parameter: &str, value: &str) -> String {
    if parameter == "driveletter" {
        format!("{}:", value.trim_end_matches(':'))
    } else {
        format!("$disk-{value}")
    }
}

/// `iex 'TEXT'` runs TEXT as PowerShell; without a literal (`iex $x`, or
/// fed by a pipe) what it runs is not known here.
fn evaluate(builder: &mut Builder, words: &[String], via: Option<&str>) -> Option<usize> {
    let name = super::command::base_name(words.first()?);
    let index =
        builder.command(Command::new(vec![name.clone()], false, false, via.map(str::to_owned)))?;
    let text: Vec<&str> = words
        .iter()
        .skip(1)
        .filter(|w| parameter_name(Dialect::PowerShell, w).is_none())
        .map(String::as_str)
        .collect();
    if text.iter().any(|w| w.starts_with('$') || w.starts_with('(')) {
        builder.fact(
            Fact::EvalOfUnknownText,
            format!("{name} runs text that is not known before it runs"),
        );
        if downloads(&text.join(" ")) {
            builder.fact(Fact::RunsDownloadedCode, format!("{name} runs what is downloaded"));
        }
    } else if !text.is_empty() {
        analyze(builder, Dialect::PowerShell, &text.join(" "), Some(&name));
    }
    Some(index)
}

/// Whether PowerShell text given to `iex` downloads what it evaluates: a
/// downloader starts a sub-expression or a pipeline (`iex (iwr URL)`,
/// `iex (irm URL | Out-String)`), or a web client's string is fetched
/// (`(New-Object Net.WebClient).DownloadString(URL)`).
fn downloads(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains(".downloadstring(")
        || lower.contains(".downloaddata(")
        || lower.split(['(', '|', ';']).any(|part| {
            part.split_whitespace()
                .next()
                .is_some_and(|first| super::executors::DOWNLOADERS.contains(&first))
        })
}

/// `Start-Process PROGRAM -ArgumentList ARGS`: PROGRAM with ARGS.
fn start_process(
    builder: &mut Builder,
    dialect: Dialect,
    words: &[String],
    via: Option<&str>,
) -> Option<usize> {
    let mut inner = Vec::new();
    let mut rest = words.iter().skip(1);
    while let Some(word) = rest.next() {
        match parameter_name(dialect, word).as_deref() {
            Some("argumentlist" | "args") => inner.extend(
                rest.next()
                    .map(|list| list.split([',', ' ']).filter(|a| !a.is_empty()).map(str::to_owned))
                    .into_iter()
                    .flatten(),
            ),
            Some("filepath") => inner.insert(0, rest.next()?.clone()),
            Some(_) => {}
            None => inner.push(word.clone()),
        }
    }
    let index = builder.command(Command::new(
        vec![super::command::base_name(words.first()?)],
        false,
        false,
        via.map(str::to_owned),
    ))?;
    if !inner.is_empty() {
        statement(builder, dialect, inner, Some("start-process"), None);
    }
    Some(index)
}

/// `-Recurse`, `-Recurse:$true` (PowerShell), `/s` (cmd): the parameter's
/// name in lower case.
fn parameter_name(dialect: Dialect, word: &str) -> Option<String> {
    let body = match dialect {
        Dialect::PowerShell => word.strip_prefix('-')?,
        Dialect::Cmd => word.strip_prefix('/').or_else(|| word.strip_prefix('-'))?,
    };
    let name = body.split(':').next().unwrap_or(body);
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric()))
        .then(|| name.to_ascii_lowercase())
}

/// Words and operators, unquoted by the dialect's rules.
fn tokenize(dialect: Dialect, script: &str) -> Vec<Token> {
    let escape = match dialect {
        Dialect::Cmd => '^',
        Dialect::PowerShell => '`',
    };
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = script.chars().peekable();
    let end_word = |tokens: &mut Vec<Token>, word: &mut String, in_word: &mut bool| {
        if *in_word {
            tokens.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            c if c == escape => {
                in_word = true;
                match chars.next() {
                    Some('n') if dialect == Dialect::PowerShell => word.push('\n'),
                    Some(next) => word.push(next),
                    None => {}
                }
            }
            '\'' if dialect == Dialect::PowerShell => {
                in_word = true;
                while let Some(q) = chars.next() {
                    if q == '\'' {
                        if chars.peek() == Some(&'\'') {
                            chars.next();
                            word.push('\'');
                            continue;
                        }
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '`' if dialect == Dialect::PowerShell => word.extend(chars.next()),
                        q => word.push(q),
                    }
                }
            }
            ' ' | '\t' | '\r' => end_word(&mut tokens, &mut word, &mut in_word),
            '\n' | ';' => {
                end_word(&mut tokens, &mut word, &mut in_word);
                tokens.push(Token::Separator);
            }
            '|' => {
                end_word(&mut tokens, &mut word, &mut in_word);
                if chars.peek() == Some(&'|') {
                    chars.next();
                    tokens.push(Token::Separator);
                } else {
                    tokens.push(Token::Pipe);
                }
            }
            '&' if dialect == Dialect::Cmd || chars.peek() == Some(&'&') => {
                end_word(&mut tokens, &mut word, &mut in_word);
                if chars.peek() == Some(&'&') {
                    chars.next();
                }
                tokens.push(Token::Separator);
            }
            '>' => {
                // `2>` and `*>` redirect a stream: the digit is no word.
                if in_word && (word == "2" || word == "1" || word == "*") {
                    word.clear();
                    in_word = false;
                }
                end_word(&mut tokens, &mut word, &mut in_word);
                let append = chars.peek() == Some(&'>');
                if append {
                    chars.next();
                }
                if chars.peek() == Some(&'&') {
                    // `2>&1` joins streams; nothing is written.
                    chars.next();
                    chars.next();
                    continue;
                }
                tokens.push(Token::Redirect { append });
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut tokens, &mut word, &mut in_word);
    tokens
}

/// `-EncodedCommand`'s argument: base64 of UTF-16LE text.
pub(super) fn decode_encoded_command(encoded: &str) -> Option<String> {
    let bytes = super::words::base64_bytes(encoded)?;
    if bytes.len() % 2 != 0 {
        return None;
    }
    let (pairs, _) = bytes.as_chunks::<2>();
    let units: Vec<u16> = pairs.iter().map(|&pair| u16::from_le_bytes(pair)).collect();
    String::from_utf16(&units).ok()
}

/// What `cmd /c …` or `powershell -Command …` runs, if the command is one
/// of these shells given a script; `None` for anything else.
pub(super) fn script_of(command: &Command) -> Option<(Dialect, String)> {
    let program = command.program.as_str();
    if !(program.contains("cmd") || program.contains("powershell") || program.contains("pwsh")) {
        return None;
    }
    let argv = &command.argv;
    match super::command::base_name(&command.program).as_str() {
        "cmd" => {
            let at = argv.iter().position(|w| {
                w.eq_ignore_ascii_case("/c")
                    || w.eq_ignore_ascii_case("/k")
                    || w.eq_ignore_ascii_case("/r")
            })?;
            Some((Dialect::Cmd, argv.get(at + 1..).unwrap_or_default().join(" ")))
        }
        "powershell" | "pwsh" => {
            let mut at = 1;
            while let Some(word) = argv.get(at) {
                let word = word.to_ascii_lowercase();
                let name = word.trim_start_matches(['-', '/']);
                if !word.starts_with(['-', '/']) {
                    // The first word that is no parameter starts the command.
                    return Some((
                        Dialect::PowerShell,
                        argv.get(at..).unwrap_or_default().join(" "),
                    ));
                }
                if name.len() >= 2 && "encodedcommand".starts_with(name)
                    || name == "ec"
                    || name == "e"
                {
                    let text = argv.get(at + 1).and_then(|encoded| decode_encoded_command(encoded));
                    return Some((
                        Dialect::PowerShell,
                        text.unwrap_or_else(|| {
                            format!("iex ${}", preview(argv.get(at + 1).map_or("", String::as_str)))
                        }),
                    ));
                }
                if !name.is_empty() && "command".starts_with(name) {
                    return Some((
                        Dialect::PowerShell,
                        argv.get(at + 1..).unwrap_or_default().join(" "),
                    ));
                }
                // Parameters with a value: -File, -ExecutionPolicy, -WindowStyle…
                let with_value = [
                    "file",
                    "f",
                    "executionpolicy",
                    "ep",
                    "ex",
                    "windowstyle",
                    "w",
                    "configurationname",
                    "workingdirectory",
                    "wd",
                    "outputformat",
                    "of",
                    "inputformat",
                    "if",
                ];
                at += if with_value.contains(&name) { 2 } else { 1 };
            }
            None
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;

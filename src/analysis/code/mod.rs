//! Inline code of interpreters (`python -c`, `perl -e`, `node -e`,
//! `ruby -e`, `php -r`, `osascript -e`, `pwsh -c`, awk programs…) and code
//! fed to them on standard input, read for what it does. Every finding is
//! carried the way the rest of the analysis already understands: a
//! deletion or truncation is the command it amounts to (`rm -r -f P`,
//! `truncate -s 0 P`), a written file is a write, a string run by a shell
//! is analysed as shell, an argv list as a command, and what cannot be
//! known before the code runs is a fact or an unknown word (`$(…)`), so
//! it needs a human, never silence.
//!
//! Python, JavaScript, Ruby and PHP are parsed with their tree-sitter
//! grammars and read for calls, with imports, aliases and constant
//! strings resolved (`syntax`). Perl and every other language are read
//! lexically for well-known call names (`text`): tree-sitter-perl 1.1.2
//! loses arguments of ordinary calls (`system 'rm', '-rf', $x` keeps two),
//! so it would read less than the lexical reader; its here-documents, POD
//! and `__END__` data are set apart first (`perl`). Code a grammar cannot
//! parse cleanly is read both ways. Where `~` is home follows how each
//! language opens files (`home`).
//!
//! For every language: `fork` in a loop is a fork bomb, and secrets read
//! where a network API is used is [`Fact::CodeSendsSecret`].

mod apis;
mod home;
mod javascript;
mod perl;
mod php;
mod python;
mod ruby;
mod syntax;
mod text;

use super::{Builder, Command, Fact};

/// A value the code computes at run time, where a path or an argument is
/// expected: the analysis reads it as it reads a command substitution.
use super::words::RUN_TIME_VALUE as UNKNOWN;

/// Interpreters, the options that carry their inline code, and the
/// options that take a value (which may look like a code option).
struct Interpreter {
    family: &'static str,
    code: &'static [&'static str],
    takes_value: &'static [&'static str],
    /// Several code options add up (`perl -e 'a' -e 'b'`).
    repeats: bool,
}

const fn interpreter(
    family: &'static str,
    code: &'static [&'static str],
    takes_value: &'static [&'static str],
    repeats: bool,
) -> Interpreter {
    Interpreter { family, code, takes_value, repeats }
}

const NODE_CODE: &[&str] = &["-e", "--eval", "-p", "--print"];
const NODE_VALUES: &[&str] = &["-r", "--require", "--import", "--input-type", "-C", "--conditions"];
const POWERSHELL_CODE: &[&str] = &["-c", "-command", "-Command", "-EncodedCommand"];

const INTERPRETERS: &[Interpreter] = &[
    interpreter("python", &["-c"], &["-W", "-X", "-m"], false),
    interpreter("pypy", &["-c"], &["-W", "-X", "-m"], false),
    interpreter("perl", &["-e", "-E"], &["-I", "-M", "-m", "-x"], true),
    interpreter("ruby", &["-e"], &["-I", "-r", "-C", "-E", "-x"], true),
    interpreter("node", NODE_CODE, NODE_VALUES, false),
    interpreter("nodejs", NODE_CODE, NODE_VALUES, false),
    interpreter("bun", NODE_CODE, NODE_VALUES, false),
    interpreter("deno", &["eval"], &[], false),
    interpreter("php", &["-r"], &["-d", "-c", "-f", "-z"], false),
    interpreter("osascript", &["-e"], &[], true),
    interpreter("pwsh", POWERSHELL_CODE, &[], false),
    interpreter("powershell", POWERSHELL_CODE, &[], false),
    interpreter("lua", &["-e"], &["-l"], true),
    interpreter("luajit", &["-e"], &["-l"], true),
    interpreter("rscript", &["-e"], &[], true),
    interpreter("julia", &["-e"], &[], false),
    interpreter("tclsh", &[], &[], false),
    // Tcl with its own commands: `spawn` starts a program.
    interpreter("expect", &["-c"], &["-f"], true),
    interpreter("awk", &[], &[], false),
    interpreter("gawk", &[], &[], false),
    interpreter("mawk", &[], &[], false),
    interpreter("nawk", &[], &[], false),
];

/// The interpreter's base name without a version (`python3.12` is
/// `python`).
fn family(program: &str) -> &str {
    program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
}

pub fn is_interpreter(program: &str) -> bool {
    let family = family(program);
    INTERPRETERS.iter().any(|interpreter| interpreter.family == family)
}

/// Tools (as the hook and MCP name them) whose path arguments are written.
pub fn is_file_writing_tool(program: &str) -> bool {
    let tool = program.rsplit("__").next().unwrap_or(program);
    ["write", "edit", "create", "append", "save", "put", "upload", "move", "copy", "rename"]
        .iter()
        .any(|verb| tool.starts_with(verb) || tool.ends_with(verb))
}

/// The inline code of an interpreter command, analysed.
pub(super) fn inline(builder: &mut Builder, command: &Command) {
    let family = family(&command.program).to_owned();
    let Some(interpreter) = INTERPRETERS.iter().find(|interpreter| interpreter.family == family)
    else {
        return;
    };
    let argv = &command.argv;
    let code = if family.ends_with("awk") {
        let program_file = argv.iter().any(|w| w == "-f");
        (!program_file)
            .then(|| argv.iter().skip(1).find(|w| !w.starts_with('-')).cloned())
            .flatten()
    } else {
        inline_code(interpreter, argv)
    };
    if let Some(option) = loads_unknown_code(interpreter, argv) {
        builder.fact(
            Fact::EvalOfUnknownText,
            format!(
                "{} loads code named only when it runs: {}",
                command.program,
                super::preview(&option)
            ),
        );
    }
    if family == "python" {
        run_module(builder, command);
    }
    if let Some(code) = code {
        if command.dynamic_args || super::command::is_run_time(&code) {
            builder.fact(
                Fact::EvalOfUnknownText,
                format!("{} runs code that is not known before it runs", command.program),
            );
        }
        analyze(builder, &family, &code);
    }
}

/// Where in its argv an interpreter command names the script file it
/// runs, with the language it is read in: the first word after the
/// interpreter's options (and their values), unless the code is given
/// inline (`python3 -c`, `node -e`), read from stdin (`-`) or run as a
/// module (`python3 -m`); `awk -f FILE` runs FILE, `deno run FILE` and
/// `bun run FILE` run FILE.
pub(super) fn script_file(command: &Command) -> Option<(&'static str, usize)> {
    let family = family(&command.program);
    let interpreter = INTERPRETERS.iter().find(|interpreter| interpreter.family == family)?;
    let language = interpreter.family;
    let mut words = command.argv.iter().enumerate().skip(1);
    if family.ends_with("awk") {
        return words.skip_while(|(_, word)| *word != "-f").nth(1).map(|(at, _)| (language, at));
    }
    let inline = |word: &str| {
        interpreter.code.iter().any(|code| {
            word == *code || code.len() == 2 && !word.starts_with("--") && word.starts_with(code)
        }) || matches!(language, "python" | "pypy") && word.starts_with("-m")
    };
    while let Some((at, word)) = words.next() {
        match word.as_str() {
            "--" => return words.next().map(|(at, _)| (language, at)),
            "-" => return None,
            _ if inline(word) => return None,
            _ if interpreter.takes_value.contains(&word.as_str()) => {
                words.next();
            }
            _ if word.starts_with('-') => {}
            // `deno run x.ts`, `bun run x.ts`.
            "run" if matches!(language, "deno" | "bun") => {}
            _ if language == "deno" => return None,
            _ => return Some((language, at)),
        }
    }
    None
}

/// `python -m MODULE ARGS…` runs the module as a program with ARGS, so it
/// is that command too (`python3 -m pip install …` is `pip install …`,
/// `python3 -m http.server -d ~` is `http.server -d ~`).
fn run_module(builder: &mut Builder, command: &Command) {
    let mut words = command.argv.iter().skip(1);
    while let Some(word) = words.next() {
        let module = match word.as_str() {
            "-m" => words.next().cloned(),
            "-W" | "-X" => {
                words.next();
                continue;
            }
            _ if word.starts_with("-m") => word.get(2..).map(str::to_owned),
            _ if word.starts_with('-') => continue,
            // The script: what follows is its own.
            _ => return,
        };
        let Some(module) = module else { return };
        let argv = std::iter::once(module).chain(words.cloned()).collect();
        builder.command(Command::new(
            argv,
            false,
            command.dynamic_args,
            Some(format!("{} -m", command.program)),
        ));
        return;
    }
}

/// Options of interpreters that load code from a module or file they
/// name (`python -m`, `node --require`/`--import`, `ruby -r`, `perl
/// -M`/`-m`, `awk -f`, `php -f`, `lua -l`).
const LOADS_CODE: [&str; 8] = ["-m", "-r", "--require", "--import", "-M", "-f", "-l", "--loader"];

/// The option, among those before the script, that loads code named only
/// when the action runs (`parallel python -m {}`, `node --require
/// "$MOD"`), or an option whose very name is known only then (`node
/// --{}`, which may be `--eval`).
fn loads_unknown_code(interpreter: &Interpreter, argv: &[String]) -> Option<String> {
    let unknown = |word: &str| word.contains('$') || super::command::is_run_time(word);
    let mut words = argv.iter().skip(1).peekable();
    while let Some(word) = words.next() {
        if !word.starts_with('-') || word == "-" || word == "--" {
            return None;
        }
        let name = word.split_once('=').map_or(word.as_str(), |(name, _)| name);
        let glued = LOADS_CODE.iter().any(|load| {
            load.len() == 2 && word.len() > 2 && word.starts_with(load) && !word.starts_with("--")
        });
        if unknown(name) && !glued {
            return Some(word.clone());
        }
        if glued || word.contains('=') && LOADS_CODE.contains(&name) {
            if unknown(word) {
                return Some(word.clone());
            }
            continue;
        }
        if LOADS_CODE.contains(&name) {
            match words.next() {
                Some(value) if unknown(value) => return Some(format!("{word} {value}")),
                _ => {}
            }
        } else if interpreter.takes_value.contains(&name) && !word.contains('=') {
            words.next();
        }
    }
    None
}

/// The code an interpreter's options carry: `-c CODE`, `--eval=CODE`,
/// clustered (`-we CODE`, `-vc CODE`) or glued (`-cCODE`), after options
/// that take a value (`-W error -c CODE`). Options end at the first
/// word that is not one (the script, or `-` for standard input): what
/// follows is the script's. Repeated code options join by lines.
fn inline_code(interpreter: &Interpreter, argv: &[String]) -> Option<String> {
    let mut pieces: Vec<String> = Vec::new();
    let mut words = argv.iter().skip(1);
    while let Some(word) = words.next() {
        if !pieces.is_empty() && !interpreter.repeats {
            break;
        }
        if interpreter.code.contains(&word.as_str()) {
            pieces.extend(words.next().cloned());
            continue;
        }
        if let Some((name, value)) = word.split_once('=').filter(|(name, _)| name.starts_with("--"))
        {
            if interpreter.code.contains(&name) {
                pieces.push(value.to_owned());
            }
            continue;
        }
        if word.starts_with("--") {
            if interpreter.takes_value.contains(&word.as_str()) {
                words.next();
            }
            continue;
        }
        let Some(letters) = word.strip_prefix('-').filter(|letters| !letters.is_empty()) else {
            break;
        };
        for (at, letter) in letters.char_indices() {
            let option = format!("-{letter}");
            let rest = letters.get(at + letter.len_utf8()..).unwrap_or_default();
            if interpreter.code.contains(&option.as_str()) {
                // `node -pe CODE` is `--print --eval CODE`: a code option
                // followed by another one takes the next word.
                let followed_by_code = interpreter.code.iter().any(|code| {
                    code.strip_prefix('-')
                        .is_some_and(|name| !name.starts_with('-') && name == rest)
                });
                match rest {
                    "" => pieces.extend(words.next().cloned()),
                    _ if followed_by_code => pieces.extend(words.next().cloned()),
                    glued => pieces.push(glued.to_owned()),
                }
                break;
            }
            if interpreter.takes_value.contains(&option.as_str()) {
                if rest.is_empty() {
                    words.next();
                }
                break;
            }
        }
    }
    (!pieces.is_empty()).then(|| pieces.join("\n"))
}

/// What a piece of code in `language` (an interpreter or a file's
/// language) does.
pub(super) fn analyze(builder: &mut Builder, language: &str, code: &str) {
    match syntax::Dialect::of(family(language)) {
        Some(dialect) => {
            if !syntax::read(builder, dialect, code) {
                text::analyze(builder, language, code);
                shell_written_as_code(builder, language, code);
            }
        }
        None => text::analyze(builder, language, code),
    }
    whole_code_facts(builder, language, code);
}

/// Code its language's grammar refuses, which is valid shell, is also
/// read as the shell command it is written as (`node -e "rm -rf /"`,
/// `ruby -e 'git push -f'`): the interpreter itself would stop at a
/// syntax error, but the agent that wrote it meant that command, and a
/// grammar narrower than its interpreter must not let a command through
/// as broken code. Code that is neither (`print('x'`) reads as nothing.
fn shell_written_as_code(builder: &mut Builder, language: &str, code: &str) {
    let valid_shell = super::budget::work(code.len() + super::budget::PARSE_STEPS)
        && super::parse_bash(code).is_some_and(|tree| !tree.root_node().has_error());
    if valid_shell {
        builder.shell_lenient(code, Some(language));
    }
}

const NETWORK: [&str; 14] = [
    "urllib",
    "requests.",
    "http.client",
    "httpx",
    "socket",
    "fetch(",
    "xmlhttprequest",
    "net::http",
    "lwp",
    "io::socket",
    "invoke-webrequest",
    "invoke-restmethod",
    "curl",
    "http.request",
];
const SECRETS: [&str; 12] = [
    "environ",
    "process.env",
    "env[",
    "$env{",
    "getenv",
    ".ssh",
    ".aws",
    ".netrc",
    "id_rsa",
    "token",
    "secret",
    "password",
];

/// Shells code may start, as its strings name them.
const SHELL_NAMES: [&str; 8] =
    ["/bin/sh", "/bin/bash", "/bin/zsh", "'sh'", "\"sh\"", "'bash'", "\"bash\"", "cmd.exe"];
/// Ways code hands a process's input and output to a descriptor (a
/// socket's, in a reverse shell).
const DESCRIPTOR_HANDOFF: [&str; 6] = ["dup2", "fileno()", "pty.spawn", ">&", "<&", ".pipe("];

/// Whether `code` names a way to reach the network (a client library,
/// a socket, `fetch(`), in any letter case.
fn uses_network(code: &str) -> bool {
    let lower = code.to_ascii_lowercase();
    NETWORK.iter().any(|n| lower.contains(n))
}

/// Facts about the code as a whole, whichever reader read it.
fn whole_code_facts(builder: &mut Builder, language: &str, code: &str) {
    if !super::budget::work(code.len()) {
        return;
    }
    let lower = code.to_ascii_lowercase();
    let loops = ["while", "for ", "for(", "loop", "until", "1.."].iter().any(|w| lower.contains(w));
    if lower.contains("fork") && loops {
        builder.fact(Fact::ForkBomb, format!("{language} code forks in a loop"));
    }
    let network = uses_network(code);
    if network
        && SHELL_NAMES.iter().any(|shell| lower.contains(shell))
        && DESCRIPTOR_HANDOFF.iter().any(|handoff| lower.contains(handoff))
    {
        builder.fact(
            Fact::EvalOfUnknownText,
            format!("{language} code connects a shell to the network: it runs what arrives there"),
        );
    }
    if network && SECRETS.iter().any(|s| lower.contains(s)) {
        builder.fact(
            Fact::CodeSendsSecret,
            format!("{language} code reads secrets and uses the network"),
        );
    }
}

#[cfg(test)]
mod tests;

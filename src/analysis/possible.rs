//! What a program the analysis has no model of may run. `tool rm -rf /`,
//! `uv run rm -rf ~` and `some-cli explain 'cat ~/.ssh/id_rsa'` hand a
//! program nobody here describes words that read as a command: whether it
//! runs them is its own business, so they are neither ignored (a runner
//! not in the tables would walk around every rule) nor judged as surely
//! run (a tool that only prints them would be stopped). They are walked
//! apart into [`super::Analysis::possible`], which the policy may ask a
//! human about and never stops for (`policy::Matches::may_run`).
//!
//! A command is read from any word after the program (`tool CMD…`, `tool
//! run CMD…`, `chrt -f 1 CMD…`, `op run --env-file x -- CMD…`: which of
//! its words are options and their values only its own grammar says)
//! that names a program that acts, when at least one word follows (`man
//! sudo` runs nothing); and an argument holding white space whose first
//! word names one is read as a command line (`'see <digest>/ for
//! layout'` is prose).
//! A script an interpreter runs (`node cli.js …`, `python3 tool.py …`) is
//! such a program: its arguments are read the same way.
//!
//! A command any program runs is also a candidate when an unquoted value
//! not known in advance stands among its arguments: the shell splits it
//! into any number of words, options among them, so the policy matches it
//! as though any options and arguments stood there ([`Command::open`]).

use super::{Builder, Command, code, command::base_name, executors, options, sql, words};

/// Candidates kept at most for one action: each is walked again.
const MAX_CANDIDATES: usize = 32;

/// Programs whose arguments are never a command they run, with a model
/// elsewhere in the analysis (their effects, their data, their listing)
/// or none needed (they only describe what they are given), and shell
/// words that are no program (`then git reset --hard` fails).
const NEVER_RUN_ARGUMENTS: [&str; 54] = [
    "echo", "printf", "print", "say", "cat", "head", "tail", "less", "more", "wc", "sort", "uniq",
    "cut", "tr", "diff", "cmp", "jq", "yq", "man", "info", "help", "tldr", "apropos", "whatis",
    "which", "whereis", "type", "ls", "stat", "file", "touch", "mkdir", "ln", "basename",
    "dirname", "realpath", "readlink", "cd", "test", "[", "gh", "bsdtar", "gtar", "unzip",
    "coproc", "alias", "then", "else", "elif", "fi", "do", "done", "esac", "function",
];

/// Programs whose name, where a command could start, reads as that
/// command, besides those with an option grammar, shells, wrappers,
/// interpreters and database clients: what deletes, overwrites, reads,
/// runs or sends. Other words there are most likely a tool's own
/// subcommands (`terraform init`, `pyenv init -`), not the programs they
/// share a name with.
const NAMES_A_COMMAND: [&str; 20] = [
    "git", "find", "dd", "truncate", "shred", "unlink", "rmdir", "cat", "tee", "chattr", "setfacl",
    "ssh", "scp", "kill", "pkill", "killall", "docker", "kubectl", "eval", "source",
];

/// What a candidate is: words already expanded, or one argument to parse;
/// or a command whose words from `at` on (an index in `argv`) include an
/// unquoted value not known in advance, which may become any words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Candidate {
    Words(Vec<String>),
    Text(String),
    Open { argv: Vec<String>, at: usize },
}

/// How a candidate's commands are named in explanations (`via …`).
const GIVEN_TO_AN_UNKNOWN_PROGRAM: &str = "a program with no model of it";
const SPLIT_UNQUOTED: &str = "an unquoted value split into any words";

/// Notes what `command`, a program the executors have no model of, may
/// run (an MCP tool call's values run only under the keys that say so).
/// An argument read as a command line is not also a path it reads:
/// `'cat ~/.ssh/id_rsa'` is judged as the read it names, apart.
pub(super) fn note(builder: &mut Builder, command: &Command) {
    let program = command.program.as_str();
    if command.dynamic_program
        || builder.recording_tool_call
        || NEVER_RUN_ARGUMENTS.contains(&program)
        || options::of(program, None).is_some()
        || executors::DOWNLOADERS.contains(&program)
    {
        return;
    }
    let argv = &command.argv;
    for start in 1..argv.len().saturating_sub(1) {
        if builder.possible.len() >= MAX_CANDIDATES {
            break;
        }
        let words = argv.get(start..).unwrap_or_default();
        if words.first().is_some_and(|first| names_a_command(first)) {
            push(builder, Candidate::Words(words.to_vec()));
        }
    }
    let command_line = |word: &&String| {
        let mut words = word.split_whitespace().skip_while(|w| w.contains('='));
        word.trim().contains(char::is_whitespace) && words.next().is_some_and(names_a_command)
    };
    for argument in argv.iter().skip(1).filter(command_line) {
        let read = words::normalize_path(argument);
        builder.analysis.reads.retain(|path| *path != read);
        push(builder, Candidate::Text(argument.clone()));
    }
}

/// Whether `word`, where a command could start, names one (its base name,
/// as `Command` reads a program's: `/bin/rm`, `RM.EXE`).
fn names_a_command(word: &str) -> bool {
    let name = base_name(word);
    let name = name.as_str();
    NAMES_A_COMMAND.contains(&name)
        || options::of(name, None).is_some()
        || executors::SHELLS.contains(&name)
        || executors::is_prefix_wrapper(name)
        || code::is_interpreter(name)
        || sql::is_client(name)
        || executors::DOWNLOADERS.contains(&name)
}

/// Notes `argv`, a command the action runs, as it may be when the
/// unquoted value not known in advance at `at` splits into other words,
/// options among them: `git branch $name` may delete a branch
/// (`name='-D main'`) and `find . $tests` may delete what it finds.
pub(super) fn note_open(builder: &mut Builder, argv: &[String], at: usize) {
    if builder.recording_tool_call {
        return;
    }
    push(builder, Candidate::Open { argv: argv.to_vec(), at });
}

fn push(builder: &mut Builder, candidate: Candidate) {
    if builder.possible.len() < MAX_CANDIDATES && !builder.possible.contains(&candidate) {
        builder.possible.push(candidate);
    }
}

/// Walks the candidates in a builder of their own: what they would do,
/// with nothing they name possibly run again.
pub(super) fn walk(candidates: Vec<Candidate>) -> Builder {
    let mut apart = Builder::default();
    for candidate in candidates {
        match candidate {
            Candidate::Words(argv) => {
                let via = Some(GIVEN_TO_AN_UNKNOWN_PROGRAM.to_owned());
                apart.command(Command::new(argv, false, false, via));
            }
            Candidate::Text(text) => {
                apart.shell_lenient(&text, Some(GIVEN_TO_AN_UNKNOWN_PROGRAM));
            }
            Candidate::Open { argv, at } => {
                let via = Some(SPLIT_UNQUOTED.to_owned());
                apart.command(Command::new(argv, false, true, via).open_from(at));
            }
        }
    }
    apart.possible.clear();
    apart
}

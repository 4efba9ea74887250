//! Programs with a command language of their own that reaches a shell or
//! an interpreter, read from their argv: vim's Ex commands (`vim -c
//! '!CMD'`, `+CMD`, `--cmd`, `--remote-expr`), less's start-up commands
//! (`less '+!CMD'`), man's pager and browser (`-P`, `-H`), gdb's and
//! lldb's commands (`gdb -ex 'shell CMD'`, `lldb -o 'platform shell
//! CMD'`, their `python` and expression commands), and Emacs Lisp given
//! to `emacs --eval`; Makefile text given to `make --eval`. What some of
//! them read on standard input is theirs too ([`StdinCommands`]: Ex and
//! debugger commands, a Makefile, a crontab installed with `crontab -`).
//! A shell escape is analysed as shell, embedded code
//! in its language (`code`), and a command that evaluates text built at
//! run time is [`Fact::EvalOfUnknownText`]. Commands that only move,
//! search or show are nothing.

use super::{
    Builder, Command, Fact, budget, code, options,
    pagers_editors::{self, Role},
    planted::table::Format,
    preview,
};

/// Reads `command`'s own commands, if it is one of these programs.
pub(super) fn analyze(builder: &mut Builder, command: &Command) -> bool {
    let args = command.argv.get(1..).unwrap_or_default();
    match command.program.as_str() {
        // rvim and rview run no shell.
        "vim" | "vi" | "nvim" | "view" | "vimdiff" | "gvim" | "ex" | "evim" | "gview" => {
            vim(builder, command, args)
        }
        "less" => {
            for start in args.iter().filter_map(|word| word.strip_prefix('+')) {
                less_command(builder, start.trim_start_matches('+'));
            }
        }
        "man" => {
            let parsed = options::MAN.parse(args);
            if let Some(pager) = parsed.value("-P") {
                pagers_editors::run(builder, pager, Role::Pager, "man -P");
            }
            if let Some(browser) = parsed.value("-H") {
                pagers_editors::run(builder, browser, Role::Editor, "man -H");
            }
        }
        "gdb" | "gdb-multiarch" | "cgdb" => {
            // gdb reads every long option with one dash too (`-ex`).
            let args: Vec<String> = args
                .iter()
                .map(|word| match word.strip_prefix('-') {
                    Some(name) if name.len() > 1 && !name.starts_with('-') => format!("--{name}"),
                    _ => word.clone(),
                })
                .collect();
            let parsed = options::GDB.parse(&args);
            for text in parsed.values(&["--ex", "--eval-command", "--iex", "--init-eval-command"]) {
                debugger_command(builder, "gdb", text);
            }
        }
        // `--eval TEXT` is Makefile text make reads before its files.
        "make" | "gmake" => {
            for text in options::MAKE.parse(args).values(&["-E"]) {
                super::planted::text_given(builder, Format::Makefile, "make --eval", text);
            }
        }
        "lldb" => {
            for text in options::LLDB.parse(args).values(&["-o", "-O", "-k"]) {
                debugger_command(builder, "lldb", text);
            }
        }
        "emacs" | "emacs-nox" | "xemacs" => {
            // `--eval` and `-eval` (and `--execute`) read one expression.
            let mut words = args.iter();
            while let Some(word) = words.next() {
                let expression = match word.split_once('=') {
                    Some(("--eval" | "-eval" | "--execute" | "-execute", value)) => {
                        Some(value.to_owned())
                    }
                    _ if matches!(word.as_str(), "--eval" | "-eval" | "--execute" | "-execute") => {
                        words.next().cloned()
                    }
                    _ => None,
                };
                if let Some(expression) = expression {
                    code::analyze(builder, "elisp", &expression);
                }
            }
        }
        _ => return false,
    }
    true
}

/// How a program reads commands on its standard input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StdinCommands {
    /// vim in Ex mode (`ex`, `vim -e`, `-es`): one Ex command a line.
    Ex,
    /// gdb or lldb: one debugger command a line.
    Debugger(&'static str),
    /// `crontab -` (or no file): the user's crontab, whose lines run on
    /// schedule.
    Crontab,
    /// `make -f -` (or `/dev/stdin`): its Makefile.
    Makefile,
}

/// Whether, and how, `command` reads commands on standard input.
pub(super) fn stdin_commands(command: &Command) -> Option<StdinCommands> {
    let args = command.argv.get(1..).unwrap_or_default();
    match command.program.as_str() {
        "ex" => Some(StdinCommands::Ex),
        "vim" | "vi" | "nvim" | "gvim"
            if options::VIM.parse(args).named(&["-e", "-E"]).next().is_some() =>
        {
            Some(StdinCommands::Ex)
        }
        "crontab" if crontab_reads_stdin(args) => Some(StdinCommands::Crontab),
        "gdb" | "gdb-multiarch" => Some(StdinCommands::Debugger("gdb")),
        "lldb" => Some(StdinCommands::Debugger("lldb")),
        "make" | "gmake"
            if options::MAKE
                .parse(args)
                .values(&["-f"])
                .any(|file| matches!(file, "-" | "/dev/stdin")) =>
        {
            Some(StdinCommands::Makefile)
        }
        _ => None,
    }
}

/// Whether `crontab ARGS` installs what it reads on standard input: a
/// file of `-`, or none, and no listing, removal or editing (`-l`, `-r`,
/// `-e`); `-u USER` names whose crontab.
fn crontab_reads_stdin(args: &[String]) -> bool {
    let mut files = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-u" => {
                words.next();
            }
            "-" => files.push(word),
            option if option.starts_with('-') => {
                if option.contains(['l', 'r', 'e', 'T', 'V']) {
                    return false;
                }
            }
            _ => files.push(word),
        }
    }
    files.iter().all(|file| *file == "-")
}

/// The commands in `text`, read on standard input as `reader` reads them.
pub(super) fn read_stdin_commands(builder: &mut Builder, reader: StdinCommands, text: &str) {
    let lines = text.lines().map(str::trim).filter(|line| !line.is_empty());
    match reader {
        StdinCommands::Ex => lines.for_each(|line| ex_command(builder, line)),
        StdinCommands::Debugger(debugger) => {
            lines.for_each(|line| debugger_command(builder, debugger, line));
        }
        StdinCommands::Crontab => super::planted::text_given(
            builder,
            Format::Crontab,
            "the crontab crontab reads on standard input",
            text,
        ),
        StdinCommands::Makefile => super::planted::text_given(
            builder,
            Format::Makefile,
            "the Makefile make reads on standard input",
            text,
        ),
    }
}

fn vim(builder: &mut Builder, command: &Command, args: &[String]) {
    let parsed = options::VIM.parse(args);
    let commands = parsed.values(&["-c", "--cmd"]).map(str::to_owned).chain(
        parsed.positionals.iter().filter_map(|word| {
            // `+N` goes to a line and `+/pattern` searches.
            let rest = word.strip_prefix('+')?;
            let moves = rest.is_empty()
                || rest.starts_with('/')
                || rest.chars().all(|c| c.is_ascii_digit());
            (!moves).then(|| rest.to_owned())
        }),
    );
    for text in commands.collect::<Vec<_>>() {
        ex_command(builder, &text);
    }
    if let Some(expression) = parsed.value("--remote-expr") {
        code::analyze(builder, "vim", expression);
    }
    if let Some(keys) = parsed.value("--remote-send") {
        // Keys typed into a running vim: each `:` line up to `<CR>` is
        // an Ex command.
        for line in keys.split(['\r', '\n']).flat_map(|part| part.split("<CR>")) {
            if let Some((_, line)) = line.split_once(':') {
                ex_command(builder, line);
            }
        }
    }
    // An unquoted value may split into options (`-c …`, `+…`); a quoted
    // one is a file to edit (`EDITOR=vim git commit` gives one).
    if command.open.is_some() {
        builder.fact(
            Fact::EvalOfUnknownText,
            format!(
                "{} is given words known only when it runs, which may be commands",
                command.program
            ),
        );
    }
}

/// Ex command modifiers that run the command after them.
const EX_MODIFIERS: [&str; 12] = [
    "silent!",
    "silent",
    "sil!",
    "sil",
    "keepalt",
    "keepjumps",
    "keepmarks",
    "noautocmd",
    "noa",
    "unsilent",
    "verbose",
    "vert",
];

/// One line of Ex commands (`|` separates commands, except after those
/// that take the rest of the line: `!`, `r !`, `w !`, `terminal`, the
/// interpreters, `normal`).
fn ex_command(builder: &mut Builder, line: &str) {
    let Some(_level) = budget::nest() else { return };
    let mut text = line.trim_start_matches([':', ' ', '\t']);
    loop {
        let word = text.split_whitespace().next().unwrap_or_default();
        if !EX_MODIFIERS.contains(&word) {
            break;
        }
        text = text.get(word.len()..).unwrap_or_default().trim_start_matches([':', ' ', '\t']);
    }
    // A range: `%`, `1,$`, `'<,'>`, `.`, `.,+3`.
    let text = text.trim_start_matches(|c: char| c.is_ascii_digit() || "%$.,;+-'<> \t".contains(c));
    if let Some(shell) = text.strip_prefix('!') {
        builder.shell(shell, Some("vim :!"));
        return;
    }
    let name_end = text.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(text.len());
    let name = text.get(..name_end).unwrap_or_default();
    let rest = text.get(name_end..).unwrap_or_default();
    let argument = rest.trim_start_matches('!').trim_start();
    let prefix_of = |full: &str, shortest: usize| name.len() >= shortest && full.starts_with(name);
    if (prefix_of("read", 1) || prefix_of("write", 1) || prefix_of("wq", 2))
        && rest.trim_start().starts_with('!')
        && !rest.starts_with('!')
    {
        // `r !CMD` and `w !CMD` (a space before `!`): CMD runs; `w`
        // gives it the buffer on its input.
        let shell = rest.trim_start().trim_start_matches('!');
        let direct = builder.shell(shell, Some("vim :r !"));
        if !prefix_of("read", 1) {
            super::executors::runs_unseen_input(builder, &direct, "vim :w !");
        }
        return;
    }
    match name {
        _ if prefix_of("terminal", 3) => {
            let shell = argument
                .split_whitespace()
                .skip_while(|w| w.starts_with("++"))
                .collect::<Vec<_>>()
                .join(" ");
            if !shell.is_empty() {
                builder.shell(&shell, Some("vim :terminal"));
            }
        }
        "py" | "python" | "py3" | "python3" | "pyx" | "pythonx" | "pydo" | "py3do" => {
            code::analyze(builder, "python", argument);
        }
        "lua" | "luado" => code::analyze(builder, "lua", argument),
        "perl" | "perldo" => code::analyze(builder, "perl", argument),
        "ruby" | "rubydo" => code::analyze(builder, "ruby", argument),
        "tcl" | "tcldo" => code::analyze(builder, "tclsh", argument),
        // Typed keys may reach any command.
        _ if prefix_of("normal", 4) => {
            if argument.contains(':') || argument.contains('!') {
                builder.fact(
                    Fact::EvalOfUnknownText,
                    format!("vim :normal types keys that may run commands: {}", preview(argument)),
                );
            }
        }
        // A constant string is the Ex command it holds.
        _ if prefix_of("execute", 3) && argument.starts_with(['"', '\'']) => {
            ex_command(builder, argument.trim_matches(['"', '\'']));
        }
        _ if prefix_of("execute", 3) => builder.fact(
            Fact::EvalOfUnknownText,
            format!("vim :execute runs text built when it runs: {}", preview(argument)),
        ),
        _ if prefix_of("call", 3)
            || prefix_of("echo", 2)
            || prefix_of("let", 3)
            || name == "eval" =>
        {
            code::analyze(builder, "vim", argument);
        }
        _ if prefix_of("source", 2) || prefix_of("runtime", 2) => {}
        _ => {
            if let Some((_, next)) = rest.split_once('|') {
                ex_command(builder, next);
            }
        }
    }
}

/// A less command given with `+`: `!CMD` runs CMD, `|mCMD` pipes to CMD.
fn less_command(builder: &mut Builder, text: &str) {
    if let Some(shell) = text.strip_prefix('!') {
        builder.shell(shell, Some("less +!"));
    } else if let Some(piped) = text.strip_prefix('|') {
        let shell = piped.get(1..).unwrap_or_default();
        builder.shell(shell, Some("less +|"));
    }
}

/// A gdb or lldb command: a shell escape (`shell CMD`, `!CMD`, `pipe
/// CMD | SHELL`, lldb's `platform shell CMD`), Python (`python CODE`,
/// lldb's `script CODE`), or an expression the debugged process
/// evaluates (`call system("…")`, `print …`, lldb's `expr`).
fn debugger_command(builder: &mut Builder, debugger: &str, text: &str) {
    let text = text.trim();
    let (name, argument) = match text.strip_prefix('!') {
        Some(shell) => ("shell", shell),
        None => {
            let (name, argument) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
            (name, argument.trim_start())
        }
    };
    let via = format!("{debugger} {name}");
    match name {
        "shell" => {
            builder.shell(argument, Some(&via));
        }
        "platform" if argument.starts_with("shell") => {
            let shell = argument.trim_start_matches("shell").trim_start();
            let shell = shell.strip_prefix("--").unwrap_or(shell);
            builder.shell(shell, Some(&via));
        }
        // `pipe CMD | SHELL` and `| CMD | SHELL`.
        _ if name == "pipe" || text.starts_with('|') => {
            if let Some((_, shell)) = text.rsplit_once('|') {
                builder.shell(shell, Some(&via));
            }
        }
        "python" | "py" | "python-interactive" | "pi" | "script" => {
            code::analyze(builder, "python", argument);
        }
        "call" | "print" | "p" | "output" | "expr" | "expression" | "po" | "set" | "eval" => {
            code::analyze(builder, "c", argument);
        }
        _ => {}
    }
}

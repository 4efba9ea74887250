//! Programs that run other programs, unwrapped: each arm of [`unwrap`]
//! reads the program's argv by its own option grammar (`options`) to find
//! the inner command (`sudo -u root X`, `timeout -s 9 5 X`, `find … -exec
//! X {} ;`, `parallel X ::: A`, `xargs -I R X`, `env -S 'X'`, `ssh host
//! X`, `zsh -lc -- 'X'`, `tar --to-command=X`, `git -c alias.p='!X'
//! p`…). The wrapper stays a command of its own; the inner one is
//! analysed like any other, recursively. Text fed to a shell,
//! an interpreter or a database client on stdin (here-documents, here-
//! strings, `echo … |`, decoded `base64 -d |`) is analysed as what that
//! program reads.

use super::{
    Builder, Command, Fact, Subshell, budget, code,
    command::{Invocation, is_run_time},
    options::{self, Grammar},
    pagers_editors, patches, preview, sql, tool_commands, windows_shell, words,
};

pub const SHELLS: [&str; 9] = ["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "csh"];

/// Whether `program` runs the command its words end with (`sudo`,
/// `timeout 5`, `nice`…).
pub(super) fn is_prefix_wrapper(program: &str) -> bool {
    prefix_wrapper(program).is_some()
}

/// Prefix wrappers: their options (by their grammar), then as many
/// leading positionals as the second field says, then the command.
fn prefix_wrapper(program: &str) -> Option<(&'static Grammar, usize)> {
    Some(match program {
        "sudo" => (&options::SUDO, 0),
        "doas" => (&DOAS, 0),
        "pkexec" => (&PKEXEC, 0),
        "nice" => (&options::NICE, 0),
        // `!` negates the status of what follows (`time -p -- ! f`).
        "!" | "nohup" | "builtin" | "unbuffer" | "caffeinate" | "catchsegv" | "chronic" => {
            (&NO_OPTIONS, 0)
        }
        "setsid" => (&options::SETSID, 0),
        "time" => (&options::TIME, 0),
        "command" => (&COMMAND, 0),
        "timeout" => (&options::TIMEOUT, 1),
        "stdbuf" => (&options::STDBUF, 0),
        "ionice" => (&options::IONICE, 0),
        "chroot" => (&options::CHROOT, 1),
        "flock" => (&options::FLOCK, 1),
        "exec" => (&options::EXEC, 0),
        "nsenter" => (&options::NSENTER, 0),
        "unshare" => (&options::UNSHARE, 0),
        "torsocks" | "proxychains" | "proxychains4" | "firejail" | "systemd-run" | "strace"
        | "ltrace" | "valgrind" => (&TRACERS, 0),
        _ => return None,
    })
}

/// Options of a privilege wrapper that, with no command after them, run
/// nothing and cache no credential: listing what the user may run
/// (`sudo -l`, `-U`), forgetting cached credentials (`-k`, `-K`, doas
/// `-L`), help and version, checking a rule (doas `-C`), and the user,
/// group, prompt and `-n` that only shape a command not given. Any other
/// (`-v` caches the password for the runs after it, `-s` and `-i` start a
/// shell, `-e` edits files, one not known here) acts.
const INERT_PRIVILEGE_OPTIONS: [&str; 18] = [
    "-l",
    "--list",
    "-U",
    "-k",
    "--reset-timestamp",
    "-K",
    "--remove-timestamp",
    "-L",
    "-V",
    "--version",
    "-h",
    "--help",
    "-C",
    "-u",
    "--user",
    "-g",
    "-p",
    "-n",
];

/// Whether a privilege wrapper (`sudo`, `doas`, `pkexec`) given `args`
/// runs nothing and caches no credential: no command follows its options
/// and each of them is inert ([`INERT_PRIVILEGE_OPTIONS`]): it
/// lists, forgets, prints its help or version, or refuses its own usage
/// (`sudo -u` with no user).
pub(super) fn privilege_runs_nothing(program: &str, args: &[String]) -> bool {
    if !matches!(program, "sudo" | "doas" | "pkexec") {
        return false;
    }
    let Some((grammar, _)) = prefix_wrapper(program) else { return false };
    let parsed = grammar.parse(args);
    parsed.rest >= args.len()
        && parsed.positionals.is_empty()
        && parsed
            .options
            .iter()
            .all(|option| INERT_PRIVILEGE_OPTIONS.contains(&option.flag.as_str()))
}

const NO_OPTIONS: Grammar = Grammar {
    short_values: "",
    short_optional: "",
    long: &[],
    abbreviates: false,
    stops_at_positional: true,
    unlisted: options::Unlisted::Flag,
    refuses_unlisted: false,
};
const DOAS: Grammar = Grammar { short_values: "uC", ..NO_OPTIONS };
const PKEXEC: Grammar = Grammar {
    short_values: "",
    long: &[options::Long { name: "user", short: None, takes: options::Takes::Value }],
    ..NO_OPTIONS
};
/// `command -v X` and `-V` describe X and run nothing.
const COMMAND: Grammar = NO_OPTIONS;
const TRACERS: Grammar = Grammar { short_values: "optuES", ..NO_OPTIONS };

/// Programs that fetch from the network.
pub const DOWNLOADERS: [&str; 14] = [
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "http",
    "https",
    "xh",
    "lwp-request",
    "invoke-webrequest",
    "iwr",
    "irm",
    "invoke-restmethod",
    "ftp",
    "tftp",
];

/// Programs that send what they are given to another host, besides the
/// downloaders: raw connections, remote shells and copies, and lookups
/// (a name looked up is sent to the resolver: `dig $(…).example.com`).
const SENDERS: [&str; 15] = [
    "nc", "ncat", "netcat", "socat", "telnet", "openssl", "ssh", "scp", "sftp", "dig", "nslookup",
    "host", "drill", "ping", "ping6",
];

/// Whether `command` sends its words or input to another host.
pub fn sends_to_a_host(command: &Command) -> bool {
    let program = command.program.as_str();
    DOWNLOADERS.contains(&program) || SENDERS.contains(&program)
}

/// Tools whose output, given these first arguments, is their own shell
/// setup (variables, a prompt hook, completions), written to be handed
/// to `eval` (`eval "$(direnv hook bash)"`); no arguments listed: with
/// options only.
const SHELL_SETUP_PRINTERS: [(&str, &[&str]); 16] = [
    ("ssh-agent", &[]),
    ("direnv", &["hook"]),
    ("brew", &["shellenv"]),
    ("pyenv", &["init", "virtualenv-init"]),
    ("rbenv", &["init"]),
    ("nodenv", &["init"]),
    ("goenv", &["init"]),
    ("jenv", &["init"]),
    ("zoxide", &["init"]),
    ("starship", &["init"]),
    ("fnm", &["env"]),
    ("mise", &["activate"]),
    ("atuin", &["init"]),
    ("opam", &["env"]),
    ("dircolors", &[]),
    ("rustup", &["completions"]),
];

/// Whether `command` prints its tool's own shell setup, for `eval`.
pub(super) fn prints_shell_setup(command: &Command) -> bool {
    !command.dynamic_program
        && !command.has_unknown_arguments()
        && SHELL_SETUP_PRINTERS.iter().any(|(program, first)| {
            command.program == *program
                && match first {
                    [] => command.positionals.is_empty(),
                    first => command.subcommand().is_some_and(|given| first.contains(&given)),
                }
        })
}

/// Programs that run text they are given as a script.
pub(super) const EVALUATORS: [&str; 3] = ["eval", "source", "."];
/// Whether what `command` runs in turn runs in the shell it is written
/// in (`eval`, `source`, `command`, `builtin`, `!`, the keyword `time`),
/// not in another program: a `cd` or a function defined there stays.
pub(super) fn runs_in_this_shell(command: &Command) -> bool {
    !command.dynamic_program
        && (EVALUATORS.contains(&command.program.as_str())
            || matches!(
                command.argv.first().map(String::as_str),
                Some("!" | "builtin" | "command" | "time")
            ))
}

/// Programs that decode their input.
const DECODERS: [&str; 7] = ["base64", "base32", "xxd", "openssl", "gunzip", "zcat", "uudecode"];

/// Finds and analyses what the command at `index` runs in turn.
pub(super) fn unwrap(builder: &mut Builder, index: usize) {
    let command = builder.get(index).clone();
    if command.invocation == Invocation::OnlyPrints {
        return;
    }
    let program = command.program.as_str();
    let argv = &command.argv;
    let via = |what: &str| Some(what.to_owned());
    if let Some(word) = unknown_action_word(&command) {
        builder.fact(
            Fact::EvalOfUnknownText,
            format!("{program}'s command `{}` is known only when it runs", preview(word)),
        );
    }
    if let Some((grammar, skip)) = prefix_wrapper(program) {
        prefix(builder, &command, grammar, skip);
        return;
    }
    if let Some((dialect, script)) = windows_shell::script_of(&command) {
        if command.dynamic_args || is_run_time(&script) {
            builder.fact(
                Fact::EvalOfUnknownText,
                format!(
                    "`{program}` runs text that is not known before it runs: {}",
                    preview(&script)
                ),
            );
        }
        windows_shell::analyze(builder, dialect, &script, Some(program));
        return;
    }
    match program {
        _ if SHELLS.contains(&program) => {
            if let ShellRuns::Text(script, parameters) = shell_runs(argv) {
                // The new shell sees the words after the text as `$0`, `$1`, ….
                let (zero, given) = match argv.get(parameters..).unwrap_or_default() {
                    [zero, given @ ..] => (zero.as_str(), given),
                    [] => ("", &[][..]),
                };
                builder.with_positionals(Some(zero), given, command.dynamic_args, |builder| {
                    run_text(builder, &command, &script, &format!("{program} -c"));
                });
            }
        }
        "su" => {
            if let Some(script) = su_script(argv) {
                run_text(builder, &command, &script, "su -c");
            }
        }
        "eval" => {
            run_text(builder, &command, &argv.get(1..).unwrap_or_default().join(" "), "eval");
        }
        "env" => env(builder, &command),
        "xargs" => xargs(builder, &command, None),
        "parallel" => parallel(builder, &command, None),
        "busybox" | "toybox" if argv.get(1).is_some_and(|applet| !applet.starts_with('-')) => {
            inner_command(
                builder,
                argv.get(1..).unwrap_or_default().to_vec(),
                &command,
                command.dynamic_args,
                via(program),
            );
        }
        "watch" => {
            let parsed = options::WATCH.parse(argv.get(1..).unwrap_or_default());
            let inner = argv.get(1 + parsed.rest..).unwrap_or_default();
            if parsed.has("-x") {
                inner_command(
                    builder,
                    inner.to_vec(),
                    &command,
                    command.dynamic_args,
                    via("watch -x"),
                );
            } else if !inner.is_empty() {
                run_text(builder, &command, &inner.join(" "), "watch");
            }
        }
        "find" => find(builder, &command),
        "fd" | "fdfind" => fd(builder, &command),
        "tar" => tar(builder, &command, argv.get(1..).unwrap_or_default()),
        "rsync" => {
            if let Some(remote_shell) =
                options::RSYNC.parse(argv.get(1..).unwrap_or_default()).value("-e")
            {
                run_text(builder, &command, remote_shell, "rsync -e");
            }
        }
        "ssh" | "scp" | "sftp" => {
            let parsed = options::SSH.parse(argv.get(1..).unwrap_or_default());
            for text in ssh_local_commands(&parsed) {
                run_text(builder, &command, &text, &format!("{program} -o"));
            }
            let remote = argv.get(2 + parsed.rest..).unwrap_or_default();
            if program == "ssh" && !remote.is_empty() {
                run_text(builder, &command, &remote.join(" "), "ssh");
            }
        }
        "docker" | "podman" | "nerdctl" => match command.subcommand() {
            Some("exec") => {
                after_subcommand(builder, &command, "exec", &options::DOCKER_EXEC, "docker exec")
            }
            Some("run") => {
                mounted_from_host(builder, &command, "run");
                after_subcommand(builder, &command, "run", &options::DOCKER_RUN, "docker run")
            }
            Some("create") => mounted_from_host(builder, &command, "create"),
            _ => {}
        },
        "kubectl" | "oc" if command.subcommand() == Some("exec") => {
            match argv.iter().position(|w| w == "--") {
                Some(at) => {
                    inner_command(
                        builder,
                        argv.get(at + 1..).unwrap_or_default().to_vec(),
                        &command,
                        command.dynamic_args,
                        via("kubectl exec"),
                    );
                }
                None => after_subcommand(
                    builder,
                    &command,
                    "exec",
                    &options::KUBECTL_EXEC,
                    "kubectl exec",
                ),
            }
        }
        "npx" | "bunx" | "pnpx" => package_runner(builder, &command, 1),
        "npm" | "pnpm" | "yarn" => {
            let runs = matches!(
                (program, command.subcommand()),
                ("npm", Some("exec" | "x")) | ("pnpm" | "yarn", Some("dlx"))
            );
            match argv.iter().position(|word| Some(word.as_str()) == command.subcommand()) {
                Some(at) if runs => package_runner(builder, &command, at + 1),
                _ => super::possible::note(builder, &command),
            }
        }
        "git" => git(builder, &command),
        "sed" | "gsed" => super::sed::analyze(builder, &command),
        _ if code::is_interpreter(program) => {
            code::inline(builder, &command);
            // A script's own arguments are its business, as an unknown
            // program's are (`node cli.js explain 'cat ~/.ssh/id_rsa'`).
            if let Some((_, at)) = code::script_file(&command) {
                let script_argv = argv.get(at..).unwrap_or_default().to_vec();
                let script_command = Command::new(script_argv, false, command.dynamic_args, None);
                super::possible::note(builder, &script_command);
            }
        }
        _ if sql::is_client(program) => sql::inline(builder, &command),
        _ => {
            if !tool_commands::analyze(builder, &command) {
                super::possible::note(builder, &command);
            }
        }
    }
}

/// A word naming what a tool does that is known only when it runs
/// (`kubectl $verb pod x`, `terraform "$action" -auto-approve`): it may be
/// the tool's most destructive command. git has its own reading (`git`).
/// An unknown word that may be an option's value is not one where as many
/// words as the tool's action words follow it (`kubectl -n $ns get pods`).
fn unknown_action_word(command: &Command) -> Option<&str> {
    let unknown = |word: &str| is_run_time(word) || command.dynamic_args && word.contains('$');
    let (depth, words) = command.action_words()?;
    words.iter().enumerate().map(|(index, word)| (index, word.as_str())).find_map(
        |(index, word)| {
            let at = command.argv.iter().position(|w| w == word)?;
            let a_value = command.may_be_a_value(at) && words.len() - index > depth;
            (unknown(word) && !a_value).then_some(word)
        },
    )
}

/// bash's `coproc [NAME] COMMAND` at `index` (the reserved word, which the
/// grammar reads as a program): COMMAND runs. A name comes only before a
/// compound command, whose first line the grammar leaves in the same
/// words (`coproc JOB { a; b; }` is `coproc JOB { a`, then `b`).
pub(super) fn coproc(builder: &mut Builder, index: usize) {
    let command = builder.get(index).clone();
    let mut inner = command.argv.get(1..).unwrap_or_default();
    if inner.get(1).is_some_and(|word| matches!(word.as_str(), "{" | "(")) {
        inner = inner.get(1..).unwrap_or_default();
    }
    while inner.first().is_some_and(|word| matches!(word.as_str(), "{" | "(")) {
        inner = inner.get(1..).unwrap_or_default();
    }
    inner_command(builder, inner.to_vec(), &command, command.dynamic_args, Some("coproc".into()));
}

/// `sudo -u root X`, `timeout -s 9 5 X`, `flock /tmp/l X` or `flock
/// /tmp/l -c 'X'`: the command after the wrapper's options and `skip`
/// positionals.
fn prefix(builder: &mut Builder, command: &Command, grammar: &Grammar, skip: usize) {
    let argv = &command.argv;
    let parsed = grammar.parse(argv.get(1..).unwrap_or_default());
    let program = command.program.as_str();
    let describes_only = program == "command"
        && argv
            .get(1..1 + parsed.rest)
            .unwrap_or_default()
            .iter()
            .any(|w| w.starts_with('-') && w.contains(['v', 'V']));
    if describes_only || program == "ionice" && parsed.has("-p") {
        return;
    }
    if let Some(script) = parsed.value("-c").filter(|_| program == "flock") {
        run_text(builder, command, script, "flock -c");
    }
    let inner = argv.get(1 + parsed.rest + skip..).unwrap_or_default();
    if program == "flock" && inner.first().is_some_and(|w| w.starts_with('-')) {
        let script = options::FLOCK.parse(inner).value("-c").map(str::to_owned);
        if let Some(script) = script {
            run_text(builder, command, &script, "flock -c");
        }
        return;
    }
    inner_command(builder, inner.to_vec(), command, command.dynamic_args, Some(program.to_owned()));
}

/// `docker exec [OPTIONS] CONTAINER CMD…`, `docker run [OPTIONS] IMAGE
/// CMD…`, `kubectl exec [OPTIONS] POD CMD…`: the command after the
/// subcommand's options and the one positional that names where it runs.
fn after_subcommand(
    builder: &mut Builder,
    command: &Command,
    subcommand: &str,
    grammar: &Grammar,
    via: &str,
) {
    let argv = &command.argv;
    let Some(at) = argv.iter().position(|w| w == subcommand) else { return };
    let rest = argv.get(at + 1..).unwrap_or_default();
    let parsed = grammar.parse(rest);
    let inner = rest.get(parsed.rest + 1..).unwrap_or_default();
    let inner = if inner.first().is_some_and(|w| w == "--") {
        inner.get(1..).unwrap_or_default()
    } else {
        inner
    };
    inner_command(builder, inner.to_vec(), command, command.dynamic_args, Some(via.to_owned()));
}

/// The host folders and files a container is given (`-v SRC:DST`,
/// `--volume`, `--mount type=bind,source=SRC`): whatever runs inside reads
/// them, so they are read, as `cp -r ~/.ssh` reads them. A named volume
/// (`-v pgdata:/var/lib/postgresql`) is no host path.
fn mounted_from_host(builder: &mut Builder, command: &Command, subcommand: &str) {
    let argv = &command.argv;
    let Some(at) = argv.iter().position(|w| w == subcommand) else { return };
    let parsed = options::DOCKER_RUN.parse(argv.get(at + 1..).unwrap_or_default());
    let host_path = |path: &str| path.starts_with(['/', '~', '.', '$']);
    let mut sources = Vec::new();
    for option in &parsed.options {
        let Some(value) = option.value.as_deref() else { continue };
        match option.flag.as_str() {
            "-v" => sources.extend(value.split(':').next().filter(|p| host_path(p))),
            "--mount" => sources.extend(
                value
                    .split(',')
                    .filter_map(|field| field.split_once('='))
                    .filter(|(key, _)| matches!(*key, "source" | "src"))
                    .map(|(_, path)| path)
                    .filter(|p| host_path(p)),
            ),
            _ => {}
        }
    }
    for source in sources {
        builder.read(source);
    }
}

/// `env [OPTIONS] [NAME=VALUE]… [CMD…]`. `-S STRING` splits its string
/// into words that stand where it stood, options and assignments
/// included, so the line is read again with them in place; `-C DIR` runs
/// the command in DIR, which is a `cd` before it.
fn env(builder: &mut Builder, command: &Command) {
    let mut args = command.argv.get(1..).unwrap_or_default().to_vec();
    let mut parsed = options::ENV.parse(&args);
    // GNU env acts on the first `-S` as it reads it: the words of its
    // string take its place and the words after its value follow, so in
    // `env -S sh -c 'rm -rf ~'` the `-c` is the shell's, never env's. Each
    // round takes one `-S` away, and its words are fewer than its text.
    while let Some(split) = parsed.options.iter().find(|o| o.flag == "-S") {
        let words = split.words.clone();
        let split = split_string(split.value.as_deref().unwrap_or_default());
        if !budget::work(split.len() + 1) {
            return;
        }
        // Flags clustered before it (`-iS STRING`) were read already.
        let cluster_before = args
            .get(words.start)
            .and_then(|word| word.strip_prefix('-'))
            .filter(|letters| !letters.starts_with('-'))
            .and_then(|letters| letters.split_once('S'))
            .map(|(before, _)| before)
            .filter(|before| !before.is_empty())
            .map(|before| format!("-{before}"));
        args = args
            .get(..words.start)
            .unwrap_or_default()
            .iter()
            .cloned()
            .chain(cluster_before)
            .chain(split)
            .chain(args.get(words.end..).unwrap_or_default().iter().cloned())
            .collect();
        parsed = options::ENV.parse(&args);
    }
    let after = args.get(parsed.rest..).unwrap_or_default();
    let at = after.iter().position(|w| !is_assignment(w)).unwrap_or(after.len());
    if at == after.len() {
        return;
    }
    let assignments: Vec<(String, String)> = after
        .get(..at)
        .unwrap_or_default()
        .iter()
        .filter_map(|w| w.split_once('='))
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect();
    environment(builder, &assignments, after.get(at..).unwrap_or_default());
    if let Some(folder) = parsed.value("-C") {
        builder.command(Command::new(
            vec!["cd".to_owned(), folder.to_owned()],
            false,
            command.dynamic_args,
            Some("env -C".to_owned()),
        ));
    }
    inner_command(
        builder,
        after.get(at..).unwrap_or_default().to_vec(),
        command,
        command.dynamic_args,
        Some("env".to_owned()),
    );
}

/// The words of `env -S STRING`: split at white space, with `'…'` and
/// `"…"` quoting and backslash escapes (`\_` is a space).
fn split_string(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (Some(open), c) if c == open => quote = None,
            (Some('\''), c) => word.get_or_insert_default().push(c),
            (_, '\\') => {
                let escaped = match chars.next() {
                    Some('_') => ' ',
                    Some('t') => '\t',
                    Some('n') => '\n',
                    Some(other) => other,
                    None => break,
                };
                word.get_or_insert_default().push(escaped);
            }
            (_, c) => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    words
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// What a shell's argv makes it run.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ShellRuns {
    /// `-c TEXT` (also `-lc`, `-xec`, `-c -- TEXT`, `-c'TEXT'` glued),
    /// and where the words the text sees as `$0`, `$1`, … start in argv.
    Text(String, usize),
    /// A script file, at this index of argv; what reaches it on stdin is
    /// the script's input.
    File(usize),
    /// No script: it reads commands from stdin (also `-s`).
    Stdin,
    /// `-n` (syntax check only), `--help`, `--version`.
    Nothing,
}

/// The script file a shell's argv runs (`bash -x deploy.sh`), if it
/// runs one rather than `-c` text or its stdin.
pub(super) fn shell_script_file(argv: &[String]) -> Option<&String> {
    match shell_runs(argv) {
        ShellRuns::File(at) => argv.get(at),
        _ => None,
    }
}

/// Reads a shell's options as bash, dash and zsh do: clusters of letters
/// after `-` or `+`, `-o NAME` and `-O NAME` taking a value, `--` or `-`
/// ending them; the first word after them is the `-c` text or the script.
fn shell_runs(argv: &[String]) -> ShellRuns {
    let (mut at, mut text_flag, mut glued, mut stdin, mut check_only) =
        (1, false, None, false, false);
    while let Some(word) = argv.get(at) {
        at += 1;
        if word == "--" || word == "-" {
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            match options::SHELL.long(name).map(|l| (l.name, l.takes)) {
                Some(("help" | "version", _)) => return ShellRuns::Nothing,
                Some(("command", _)) => text_flag = true,
                Some((_, options::Takes::Value)) if value.is_none() => at += 1,
                _ => {}
            }
            continue;
        }
        let Some(body) =
            word.strip_prefix('-').or_else(|| word.strip_prefix('+')).filter(|b| !b.is_empty())
        else {
            at -= 1;
            break;
        };
        let minus = word.starts_with('-');
        for (offset, letter) in body.char_indices() {
            let rest = body.get(offset + letter.len_utf8()..).unwrap_or_default();
            match letter {
                'c' if minus => {
                    text_flag = true;
                    // `-c'rm -rf /'` glued: no shell reads that as options,
                    // so whatever it does, the text is judged.
                    if rest.chars().any(|c| !c.is_ascii_alphabetic()) {
                        glued = Some(rest.to_owned());
                        break;
                    }
                }
                'o' | 'O' => {
                    if rest.is_empty() {
                        at += 1;
                    }
                    break;
                }
                'n' if minus => check_only = true,
                's' if minus => stdin = true,
                _ => {}
            }
        }
    }
    if check_only {
        return ShellRuns::Nothing;
    }
    match (text_flag, glued) {
        (_, Some(text)) => ShellRuns::Text(text, at),
        (true, None) => {
            argv.get(at).map_or(ShellRuns::Stdin, |text| ShellRuns::Text(text.clone(), at + 1))
        }
        (false, None) if at < argv.len() && !stdin => ShellRuns::File(at),
        (false, None) => ShellRuns::Stdin,
    }
}

/// The script of `su -c SCRIPT`, `su --command=SCRIPT`, `su -lc SCRIPT`.
fn su_script(argv: &[String]) -> Option<String> {
    let grammar = Grammar {
        short_values: "cgGsw",
        short_optional: "",
        long: &SU_LONG,
        abbreviates: true,
        stops_at_positional: false,
        unlisted: options::Unlisted::Flag,
        refuses_unlisted: false,
    };
    grammar.parse(argv.get(1..).unwrap_or_default()).value("-c").map(str::to_owned)
}

static SU_LONG: [options::Long; 4] = [
    options::Long { name: "command", short: Some('c'), takes: options::Takes::Value },
    options::Long { name: "session-command", short: Some('c'), takes: options::Takes::Value },
    options::Long { name: "shell", short: Some('s'), takes: options::Takes::Value },
    options::Long { name: "group", short: Some('g'), takes: options::Takes::Value },
];

/// Analyses text an executor runs: literal text as a script; text that
/// is not known statically is a fact.
/// Runs `script` as shell text; returns the commands it runs directly.
pub(super) fn run_text(
    builder: &mut Builder,
    command: &Command,
    script: &str,
    via: &str,
) -> Vec<usize> {
    if command.dynamic_args || is_run_time(script) {
        builder.fact(
            Fact::EvalOfUnknownText,
            format!("`{via}` runs text that is not known before it runs: {}", preview(script)),
        );
    }
    builder.take_back_reads(command, [script]);
    builder.shell(script, Some(via))
}

/// Records `argv` as a command `outer` runs; returns the commands recorded
/// (it and what it runs in turn).
fn inner_command(
    builder: &mut Builder,
    argv: Vec<String>,
    outer: &Command,
    dynamic_args: bool,
    via: Option<String>,
) -> Vec<usize> {
    let Some(program) = argv.first() else { return Vec::new() };
    let dynamic_program = program.contains("$(")
        || program.starts_with('$')
        || program.contains(['*', '?', '['])
        || outer.dynamic_program;
    // Words of an unquoted value the outer command was given among those
    // it runs stay open there (`timeout 5 git branch $name`).
    let open = outer.open.and_then(|open| {
        let skipped = outer.argv.len().checked_sub(argv.len())?;
        outer.argv.ends_with(&argv).then(|| open.at.checked_sub(skipped)).flatten()
    });
    // The words are the inner command's: what of them it reads, it
    // reports (`env CI=1 ssh -i KEY host` authenticates with the key,
    // `xargs cat KEY` reads it).
    builder.take_back_reads(outer, argv.iter().map(String::as_str));
    let mut command = Command::new(argv, dynamic_program, dynamic_args, via);
    if let Some(at) = open.filter(|&at| at > 0) {
        command = command.open_from(at);
    }
    let Some(at) = builder.command(command) else {
        return Vec::new();
    };
    (at..builder.analysis.commands.len()).collect()
}

/// A package runner (`npx`, `npm exec`, `pnpm dlx`…) from `argv[from]`:
/// after its options, the package's command with its words (a version
/// asked for, `rimraf@5`, is not part of the command's name), or the
/// shell string of `-c`/`--call`.
fn package_runner(builder: &mut Builder, command: &Command, from: usize) {
    let args = command.argv.get(from..).unwrap_or_default();
    let parsed = options::PACKAGE_RUNNER.parse(args);
    if let Some(text) = parsed.value("-c") {
        run_text(builder, command, text, &format!("{} -c", command.program));
        return;
    }
    let mut inner = args.get(parsed.rest..).unwrap_or_default().to_vec();
    if inner.first().is_some_and(|word| word == "--") {
        inner.remove(0);
    }
    if let Some(package) = inner.first_mut() {
        let name_end = package.get(1..).and_then(|rest| rest.find('@')).map(|at| at + 1);
        if let Some(end) = name_end {
            package.truncate(end);
        }
    }
    inner_command(builder, inner, command, command.dynamic_args, Some(command.program.clone()));
}

/// `find [-H -L -P -D X -OLEVEL] [-E -X -d -s -x] [-f ROOT] ROOTS …
/// EXPRESSION`: `-exec CMD {} ;` (and `+`, `-execdir`, `-ok`, `-okdir`)
/// runs CMD with `{}`, anywhere in a word, standing for what it finds
/// under ROOTS; `-delete` removes it, which is `rm -r -f ROOTS`;
/// `-fprint FILE` and friends write FILE.
fn find(builder: &mut Builder, command: &Command) {
    let argv = &command.argv;
    let (roots, expression) = find_roots(argv);
    let mut at = argv.len() - expression.len();
    let selected = find_selection(&roots, expression);
    let found = selected.join(" ");
    while let Some(word) = argv.get(at) {
        at += 1;
        match word.as_str() {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = argv
                    .get(at..)
                    .unwrap_or_default()
                    .iter()
                    .position(|w| w == ";" || w == "+")
                    .map_or(argv.len(), |i| at + i);
                let mut inner = Vec::new();
                for part in argv.get(at..end).unwrap_or_default() {
                    if part == "{}" {
                        inner.extend(selected.iter().cloned());
                    } else {
                        inner.push(part.replace("{}", &found));
                    }
                }
                inner_command(
                    builder,
                    inner,
                    command,
                    command.dynamic_args,
                    Some(format!("find {word}")),
                );
                at = end + 1;
            }
            "-delete" => find_deletes(builder, command, &selected),
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                if let Some(file) = argv.get(at) {
                    builder.write(file);
                }
                at += if word == "-fprintf" { 2 } else { 1 };
            }
            _ if FIND_VALUE_PRIMARIES.contains(&word.as_str())
                || super::command::FIND_NAME_PATTERNS.contains(&word.as_str())
                || word.starts_with("-newer") && word.len() == 8 =>
            {
                at += 1
            }
            // A primary known only when it runs (`xargs find . -name x`
            // appends words there) may be `-delete` or `-exec`.
            _ if is_run_time(word) || command.dynamic_args && word.starts_with('$') => {
                builder.fact(
                    Fact::EvalOfUnknownText,
                    format!(
                        "find's expression holds `{}`, known only when it runs (it may be -delete or -exec)",
                        preview(word)
                    ),
                );
                return;
            }
            _ => {}
        }
    }
    // Words an unquoted value becomes may be any primary, `-delete` too
    // (judged apart: [`Command::open`]).
    if command.open.is_some() {
        find_deletes(builder, command, &selected);
    }
}

/// `find -delete`: `rm -r -f` of what it selects.
fn find_deletes(builder: &mut Builder, command: &Command, selected: &[String]) {
    let mut inner = vec!["rm".to_owned(), "-r".to_owned(), "-f".to_owned()];
    inner.extend(selected.iter().cloned());
    inner_command(builder, inner, command, command.dynamic_args, Some("find -delete".into()));
}

/// `find` words that select nothing: options, actions (those that print
/// to a file too: `find . -fprint list -delete` still deletes the whole
/// tree), and `-type`.
const FIND_NON_TESTS: [&str; 26] = [
    "-delete",
    "-printf",
    "-fprint",
    "-fprint0",
    "-fprintf",
    "-fls",
    "-ls",
    "-depth",
    "-d",
    "-maxdepth",
    "-mindepth",
    "-xdev",
    "-mount",
    "-print",
    "-print0",
    "-daystart",
    "-follow",
    "-ignore_readdir_race",
    "-noleaf",
    "-regextype",
    "-warn",
    "-nowarn",
    "-type",
    "-xtype",
    "-true",
    "-a",
];

/// `find`'s start points (`.` when none is given) and the expression
/// after them, past its leading options (`-H`, `-L`, `-P`, `-D`, `-O`;
/// BSD `-f PATH` names a start point).
fn find_roots(argv: &[String]) -> (Vec<String>, &[String]) {
    let mut at = 1;
    let mut roots = Vec::new();
    while let Some(word) = argv.get(at) {
        match word.as_str() {
            "-H" | "-L" | "-P" | "-E" | "-X" | "-d" | "-s" | "-x" => at += 1,
            "-D" => at += 2,
            "-f" => {
                roots.extend(argv.get(at + 1).cloned());
                at += 2;
            }
            _ if word.starts_with("-O") && word.len() > 2 => at += 1,
            _ => break,
        }
    }
    // A word appended at run time after a start point (`xargs find .`)
    // may be a primary: it is read with the expression.
    while let Some(word) = argv.get(at).filter(|w| {
        !w.starts_with('-')
            && !matches!(w.as_str(), "(" | "!" | ")" | ",")
            && (roots.is_empty() || !is_run_time(w))
    }) {
        roots.push(word.clone());
        at += 1;
    }
    if roots.is_empty() {
        roots.push(".".to_owned());
    }
    (roots, argv.get(at..).unwrap_or_default())
}

/// What `find` selects, which `{}` stands for and `-delete` removes: the
/// trees it walks, or, when a test of its `expression` picks entries
/// (`-name '*.pyc'`, `-mtime +7`), entries below them (`./*.pyc`,
/// `./(selected by find)`); `-type` alone picks every file, which is the
/// whole tree.
fn find_selection(roots: &[String], expression: &[String]) -> Vec<String> {
    // The command an `-exec` runs is not part of the selection.
    let expression = expression
        .get(
            ..expression
                .iter()
                .position(|w| w.starts_with("-exec") || w.starts_with("-ok"))
                .unwrap_or(expression.len()),
        )
        .unwrap_or_default();
    let names: Vec<&str> = expression
        .windows(2)
        .filter_map(|w| match w {
            [test, name] if matches!(test.as_str(), "-name" | "-iname") => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let selects = |word: &String| word.starts_with('-') && !FIND_NON_TESTS.contains(&word.as_str());
    let below = match names.as_slice() {
        [name] => (*name).to_owned(),
        _ if expression.iter().any(selects) => "(selected by find)".to_owned(),
        _ => return roots.to_vec(),
    };
    roots.iter().map(|root| format!("{}/{below}", root.trim_end_matches('/'))).collect()
}

/// find's tests and actions that take the next word as their value,
/// besides the name patterns (`command::FIND_NAME_PATTERNS`).
const FIND_VALUE_PRIMARIES: [&str; 26] = [
    "-type",
    "-xtype",
    "-user",
    "-group",
    "-perm",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-newer",
    "-anewer",
    "-cnewer",
    "-maxdepth",
    "-mindepth",
    "-links",
    "-inum",
    "-samefile",
    "-uid",
    "-gid",
    "-printf",
    "-fstype",
    "-used",
    "-regextype",
];

/// `fd [OPTIONS] [PATTERN] [PATHS] -x CMD… [;]` (also `-X`, `--exec`,
/// `--exec-batch`): CMD runs with `{}`, `{/}`, `{//}`, `{.}`, `{/.}`
/// standing for what fd finds under PATHS, appended when none is written.
fn fd(builder: &mut Builder, command: &Command) {
    let argv = &command.argv;
    let is_exec = |w: &String| {
        matches!(w.as_str(), "-x" | "-X")
            || w.strip_prefix("--")
                .and_then(|l| options::FD.long(l))
                .is_some_and(|l| matches!(l.short, Some('x' | 'X')))
    };
    let Some(at) = argv.iter().position(is_exec) else { return };
    let searched = options::FD.parse(argv.get(1..at).unwrap_or_default()).positionals;
    let roots: Vec<String> = if searched.len() > 1 {
        searched.get(1..).unwrap_or_default().to_vec()
    } else {
        vec![".".to_owned()]
    };
    let end = argv
        .get(at + 1..)
        .unwrap_or_default()
        .iter()
        .position(|w| w == ";")
        .map_or(argv.len(), |i| at + 1 + i);
    let template = argv.get(at + 1..end).unwrap_or_default();
    let placeholders = ["{}", "{/}", "{//}", "{.}", "{/.}"];
    let mut inner: Vec<String> = template
        .iter()
        .map(|w| placeholders.iter().fold(w.clone(), |w, p| w.replace(p, &roots.join(" "))))
        .collect();
    if !template.iter().any(|w| placeholders.iter().any(|p| w.contains(p))) {
        inner.extend(roots);
    }
    inner_command(builder, inner, command, command.dynamic_args, Some("fd -x".into()));
}

/// tar's options that run a program, where tar would run it (the last of
/// each given): `--to-command=CMD` through a shell when extracting to
/// files; `-I PROG ARGS` (`--use-compress-program`) split into words, no
/// shell; for a remote archive (`host:file`, not `--force-local`)
/// `--rsh-command`, a program path, and `--rmt-command`, which the remote
/// host's shell runs; the shell scripts
/// of `-F` (`--info-script`, `--new-volume-script`) and every
/// `--checkpoint-action=exec=CMD`. Old-style options without a dash
/// (`tar xf a.tar`) are read as a cluster. `args` is argv without the
/// program (`TAR_OPTIONS` is read with it).
fn tar(builder: &mut Builder, command: &Command, args: &[String]) {
    let parsed = options::tar(args);
    let remote = !parsed.has("--force-local")
        && parsed.value("-f").is_some_and(|archive| {
            archive.split_once(':').is_some_and(|(host, _)| !host.contains('/'))
        });
    // What `--to-command` and `-I` run reads the archive's data on its
    // stdin: a shell or an interpreter there runs code nobody has seen.
    if let Some(program) =
        parsed.value("--to-command").filter(|_| parsed.has("-x") && !parsed.has("-O"))
    {
        let direct = run_text(builder, command, program, "tar --to-command");
        runs_unseen_input(builder, &direct, "tar --to-command");
    }
    if let Some(program) = parsed.value("-I") {
        let direct = inner_command(
            builder,
            split_string(program),
            command,
            command.dynamic_args || is_unknown_text(program),
            Some("tar -I".into()),
        );
        runs_unseen_input(builder, &direct, "tar -I");
    }
    if let Some(program) = parsed.value("--rsh-command").filter(|_| remote) {
        let program = vec![program.to_owned()];
        inner_command(
            builder,
            program,
            command,
            command.dynamic_args,
            Some("tar --rsh-command".into()),
        );
    }
    // The remote shell the rsh program reaches parses it, as `ssh HOST
    // CMD`'s command is read.
    if let Some(text) = parsed.value("--rmt-command").filter(|_| remote) {
        run_text(builder, command, text, "tar --rmt-command");
    }
    if let Some(script) = parsed.value("-F") {
        run_text(builder, command, script, "tar -F");
    }
    for option in parsed.options.iter().filter(|o| o.flag == "--checkpoint-action") {
        let Some(action) = option.value.as_deref() else { continue };
        if let Some(program) = action.strip_prefix("exec=") {
            // GNU tar decodes C escapes in the command (`\162m` is `rm`).
            let decoded = words::decode_ansi_c(program);
            run_text(builder, command, &decoded, "tar --checkpoint-action");
        } else if is_unknown_text(action) {
            // `--checkpoint-action="$A"` may be `exec=…`.
            builder.fact(
                Fact::EvalOfUnknownText,
                format!("tar's checkpoint action `{}` is known only when it runs", preview(action)),
            );
        }
    }
}

/// Text that holds a value known only when the action runs: an unknown
/// variable (`$name`, as the analysis writes one) or a substitution.
fn is_unknown_text(text: &str) -> bool {
    text.contains('$') || is_run_time(text)
}

/// A fact when a command among `direct` runs what it reads on stdin (a
/// shell with no script, an interpreter with no code), fed by `via` with
/// data the action does not show.
pub(super) fn runs_unseen_input(builder: &mut Builder, direct: &[usize], via: &str) {
    let runs = direct.iter().map(|&at| builder.get(at)).find(|command| {
        executes_its_input(command)
            && (!SHELLS.contains(&command.program.as_str())
                || shell_runs(&command.argv) == ShellRuns::Stdin)
    });
    if let Some(program) = runs.map(|command| command.program.clone()) {
        builder.fact(
            Fact::EvalOfUnknownText,
            format!("`{via}` feeds {program} data it runs, not known before it runs"),
        );
    }
}

/// `xargs [OPTIONS] [CMD…]` (GNU and BSD): CMD (`echo` when none is
/// given) runs with the words xargs reads appended, or put where `-I R`,
/// `-i[R]` or BSD `-J R` says. `input` is what it reads, when that is
/// known (`echo / | xargs rm -rf` is `rm -rf /`); otherwise the arguments
/// are not known before it runs: they stand where they go as
/// [`words::RUN_TIME_VALUE`], and what CMD was given stays known
/// (`xargs sh -c 'wc -l "$1"' _` runs a known script on unknown files).
fn xargs(builder: &mut Builder, command: &Command, input: Option<&str>) {
    let argv = &command.argv;
    let parsed = options::XARGS.parse(argv.get(1..).unwrap_or_default());
    let mut inner = argv.get(1 + parsed.rest..).unwrap_or_default().to_vec();
    if inner.is_empty() {
        inner.push("echo".to_owned());
    }
    let delimiter = if parsed.has("-0") { Some("\0") } else { parsed.value("-d") };
    // `--replace=` given no string replaces `{}`, as `-i` alone does.
    let replace = parsed.options.iter().rev().find_map(|o| match o.flag.as_str() {
        "-I" | "-J" | "-i" => {
            Some(o.value.clone().filter(|v| !v.is_empty()).unwrap_or_else(|| "{}".to_owned()))
        }
        _ => None,
    });
    let items: Vec<&str> = match input.filter(|_| !parsed.has("-a")) {
        None => vec![words::RUN_TIME_VALUE],
        Some(input) => match delimiter {
            Some(delimiter) => {
                input.split(&*words::decode_ansi_c(delimiter)).filter(|w| !w.is_empty()).collect()
            }
            // With a replacement string an item is a line.
            None if replace.is_some() => {
                input.lines().map(str::trim_start).filter(|w| !w.is_empty()).collect()
            }
            None => input.split_whitespace().collect(),
        },
    };
    let Some(token) = replace else {
        inner.extend(items.iter().map(|&w| w.to_owned()));
        inner_command(builder, inner, command, command.dynamic_args, Some("xargs".into()));
        return;
    };
    // One run per item, the item where the replacement string stands.
    if items.len() > MAX_PARALLEL_RUNS {
        builder.fact(
            Fact::TooComplex,
            format!("xargs runs its command for more than {MAX_PARALLEL_RUNS} items"),
        );
    }
    for item in items.iter().take(MAX_PARALLEL_RUNS) {
        let run = inner.iter().map(|w| w.replace(&token, item)).collect();
        inner_command(builder, run, command, command.dynamic_args, Some("xargs".into()));
    }
}

/// GNU parallel: `parallel [OPTIONS] [CMD…] (::: ARGS | :::: FILES)…`.
/// CMD runs through a shell once per combination of the argument lists,
/// each put where `{}`, `{N}`, `{.}`, `{/}`… stand (or `-I R`), or
/// appended. Without CMD, every argument (or, without `:::`, every line
/// read) is itself a command line. `input` is what it reads, when known.
fn parallel(builder: &mut Builder, command: &Command, input: Option<&str>) {
    let argv = &command.argv;
    let parsed = options::PARALLEL.parse(argv.get(1..).unwrap_or_default());
    if parsed.has("--dry-run") {
        return;
    }
    let rest = argv.get(1 + parsed.rest..).unwrap_or_default();
    let separator = |w: &String| matches!(w.as_str(), ":::" | "::::" | ":::+" | "::::+");
    let end = rest.iter().position(separator).unwrap_or(rest.len());
    let template = rest.get(..end).unwrap_or_default();
    let mut lists: Vec<Vec<String>> = Vec::new();
    let mut unknown_lists = parsed.has("-a");
    for word in rest.get(end..).unwrap_or_default() {
        if separator(word) {
            unknown_lists |= word.starts_with("::::");
            lists.push(Vec::new());
        } else if let Some(list) = lists.last_mut() {
            list.push(word.clone());
        }
    }
    if lists.is_empty() {
        match input {
            Some(input) => lists.push(input.lines().map(str::to_owned).collect()),
            None => unknown_lists = true,
        }
    }
    if template.is_empty() && unknown_lists {
        builder.fact(
            Fact::EvalOfUnknownText,
            "`parallel` without a command runs the lines it reads, not known before it runs",
        );
        return;
    }
    let replace = parsed.value("-I").unwrap_or("{}").to_owned();
    for combination in combinations(&lists, MAX_PARALLEL_RUNS) {
        let mut line: Vec<String> =
            template.iter().map(|w| substitute(w, &replace, &combination)).collect();
        if template.is_empty() {
            line.extend(combination.iter().cloned());
        } else if !template.iter().any(|w| w.contains(&replace) || has_positional_replacement(w)) {
            line.extend(combination.iter().map(|w| words::quote_words([w.as_str()])));
        }
        // The words are the outer shell's: a substitution among them is
        // read where it stands, not as text nobody knows.
        builder.shell(&line.join(" "), Some("parallel"));
    }
    if unknown_lists && !template.is_empty() {
        // What it reads stands where it goes, known only when it runs.
        let unknown = [words::RUN_TIME_VALUE.to_owned()];
        let mut line: Vec<String> =
            template.iter().map(|w| substitute(w, &replace, &unknown)).collect();
        if !template.iter().any(|w| w.contains(&replace) || has_positional_replacement(w)) {
            line.extend(unknown);
        }
        inner_command(builder, line, command, command.dynamic_args, Some("parallel".into()));
    }
}

/// Runs of `parallel` and `xargs -I` analysed at most; more is too
/// complex for `xargs`.
const MAX_PARALLEL_RUNS: usize = 16;

/// Every choice of one value from each list, at most `limit` of them.
fn combinations(lists: &[Vec<String>], limit: usize) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for list in lists.iter().filter(|l| !l.is_empty()) {
        out = out
            .iter()
            .flat_map(|prefix| {
                list.iter().map(move |value| [prefix.clone(), vec![value.clone()]].concat())
            })
            .take(limit)
            .collect();
    }
    out
}

fn has_positional_replacement(word: &str) -> bool {
    (1..=9).any(|n| {
        word.contains(&format!("{{{n}}}"))
            || word.contains(&format!("{{{n}.}}"))
            || word.contains(&format!("{{{n}/}}"))
    })
}

/// A parallel template word with the replacement strings filled in.
fn substitute(word: &str, replace: &str, values: &[String]) -> String {
    let all = values.join(" ");
    let mut word = word.replace(replace, &all);
    for placeholder in ["{.}", "{/}", "{//}", "{/.}"] {
        word = word.replace(placeholder, &all);
    }
    for (n, value) in values.iter().enumerate().take(9) {
        for suffix in ["", ".", "/", "//", "/."] {
            word = word.replace(&format!("{{{}{suffix}}}", n + 1), value);
        }
    }
    word
}

/// git's global options (`-c KEY=VALUE`, `-cKEY=VALUE`, `--config-env
/// KEY=VAR`, `-C DIR`…), what they configure that runs a program
/// (`core.pager`, `alias.NAME='!X'`, `core.fsmonitor`…), and its aliases.
fn git(builder: &mut Builder, command: &Command) {
    let argv = &command.argv;
    let globals = git_globals(argv);
    let subcommand = argv.get(globals.end).map(|s| s.to_lowercase());
    let mut aliases: Vec<(String, String)> = Vec::new();
    for (key, value) in &globals.config {
        match (key.strip_prefix("alias."), value) {
            (Some(name), Some(value)) => aliases.push((name.to_owned(), value.clone())),
            (Some(_), None) => {}
            // `parallel git -c {} status`: a setting known only when it
            // runs may be one that runs a program (`core.pager=…`).
            (None, _) if is_run_time(key) || key.contains('$') => builder.fact(
                Fact::EvalOfUnknownText,
                format!("git's setting `{}` is known only when it runs", preview(key)),
            ),
            (None, value) => {
                // A setting that names a program holds a command line; one
                // that names a file (`commit.template`) is read.
                if let Some(value) = value.as_deref().filter(|_| git_key_names_a_program(key)) {
                    builder.take_back_reads(command, [value]);
                }
                git_config(builder, key, value.as_deref(), git_reaches_network(argv), "git -c")
            }
        }
    }
    let Some(subcommand) = subcommand else { return };
    // `parallel git {} --hard`: which git command runs is not known.
    if is_run_time(&subcommand) || command.dynamic_args && subcommand.starts_with('$') {
        builder.fact(
            Fact::EvalOfUnknownText,
            format!("git's command `{}` is known only when it runs", preview(&subcommand)),
        );
        return;
    }
    let rest = argv.get(globals.end + 1..).unwrap_or_default();
    if let Some((_, value)) = aliases.iter().find(|(name, _)| *name == subcommand) {
        git_alias(builder, &subcommand, value, rest, command.dynamic_args);
        return;
    }
    // `git -C DIR` runs in DIR: a `cd` before it, as `env -C` is.
    for folder in &globals.folders {
        builder.command(Command::new(
            vec!["cd".to_owned(), folder.clone()],
            false,
            command.dynamic_args,
            Some("git -C".to_owned()),
        ));
    }
    if globals.end > 1 {
        let plain: Vec<String> = argv
            .first()
            .into_iter()
            .chain(argv.get(globals.end..).unwrap_or_default())
            .cloned()
            .collect();
        // What the command itself runs is found when that is walked.
        builder.command(Command::new(plain, false, command.dynamic_args, Some("git".into())));
        return;
    }
    git_runs_commands(builder, command, &subcommand, rest);
    for (option, program) in git_transport_programs(&subcommand, rest) {
        match program {
            Some(program) => {
                builder.fact(
                    Fact::ConfigExecutes,
                    format!("git {subcommand} {option} runs {}", preview(&program)),
                );
                builder.shell(&program, Some("git transport"));
            }
            None => builder.fact(
                Fact::ConfigExecutes,
                format!("git {subcommand} {option} runs a program not known before it runs"),
            ),
        }
    }
}

/// Runs git alias `name`, defined as `value`, with the words after it
/// (`rest`): a `!` alias is a shell command, any other more git words.
fn git_alias(builder: &mut Builder, name: &str, value: &str, rest: &[String], dynamic: bool) {
    if let Some(script) = value.strip_prefix('!') {
        builder.fact(Fact::ConfigExecutes, format!("git alias {name} runs {}", preview(script)));
        builder.shell(&format!("{script} {}", rest.join(" ")), Some("git alias"));
    } else {
        let mut expanded = vec!["git".to_owned()];
        expanded.extend(value.split_whitespace().map(str::to_owned));
        expanded.extend(rest.iter().cloned());
        builder.command(Command::new(expanded, false, dynamic, Some("git alias".into())));
    }
}

/// The commands ssh (and scp and sftp, which start it) runs on this
/// machine by its `-o` settings: `ProxyCommand` to reach the host,
/// `LocalCommand` once connected, `KnownHostsCommand` for host keys
/// (`Key=Value` or `Key Value`, the key in any case; `none` runs nothing).
fn ssh_local_commands(parsed: &options::Parsed) -> Vec<String> {
    const RUN_HERE: [&str; 3] = ["proxycommand", "localcommand", "knownhostscommand"];
    parsed
        .values(&["-o"])
        .filter_map(|setting| {
            let setting = setting.trim_start();
            let at = setting.find(|c: char| c == '=' || c.is_whitespace())?;
            let (key, value) = setting.split_at(at);
            let value = value.trim_start_matches(|c: char| c == '=' || c.is_whitespace());
            (RUN_HERE.contains(&key.to_ascii_lowercase().as_str())
                && !value.eq_ignore_ascii_case("none"))
            .then(|| value.to_owned())
        })
        .collect()
}

/// What git's command `subcommand` runs as it works, given in `args`:
/// `bisect run CMD ARGS…` runs its words at each step, `submodule
/// foreach CMD` its text in each submodule through a shell, and `rebase
/// -x`/`--exec`, `difftool -x`/`--extcmd` and `filter-branch`'s
/// `--*-filter` shell text of their own.
fn git_runs_commands(builder: &mut Builder, command: &Command, subcommand: &str, args: &[String]) {
    let via = format!("git {subcommand}");
    match subcommand {
        "bisect" => {
            if let Some(("run", words)) = args.split_first().map(|(w, rest)| (w.as_str(), rest)) {
                inner_command(builder, words.to_vec(), command, command.dynamic_args, Some(via));
            }
        }
        "submodule" => {
            let Some(at) = args.iter().position(|word| word == "foreach") else { return };
            let text: Vec<&str> = args
                .get(at + 1..)
                .unwrap_or_default()
                .iter()
                .map(String::as_str)
                .skip_while(|word| matches!(*word, "--recursive" | "-q" | "--quiet" | "--"))
                .collect();
            if !text.is_empty() {
                run_text(builder, command, &text.join(" "), &via);
            }
        }
        _ => {
            for (_, text) in named_options(options::git_command_options(subcommand), args) {
                if let Some(text) = text {
                    run_text(builder, command, &text, &via);
                }
            }
        }
    }
}

/// The programs git's command `subcommand` is told to run at the other
/// end of its connection, with the option that names each: through a
/// shell, on this machine for a remote that is a path (`git fetch
/// --upload-pack='…' ../repo`), over ssh otherwise. `--upload-pack`
/// (clone's `-u`), `--receive-pack` and `--exec`, each also by a prefix
/// git accepts; `None` when the program is missing.
pub(super) fn git_transport_programs(
    subcommand: &str,
    args: &[String],
) -> Vec<(String, Option<String>)> {
    named_options(options::git_transport_options(subcommand), args)
}

/// The values of the options `wanted` names, read with `grammar` from
/// `args` (abbreviations, clusters and `=` as the program reads them),
/// each with its option; `None` for one given no value.
fn named_options(
    grammar: Option<(&Grammar, &[&str])>,
    args: &[String],
) -> Vec<(String, Option<String>)> {
    let Some((grammar, wanted)) = grammar else { return Vec::new() };
    grammar
        .parse(args)
        .named(wanted)
        .map(|option| (option.flag.clone(), option.value.clone()))
        .collect()
}

/// What git's global options say: configuration (a value from the
/// environment, `--config-env`, is not known) and where the subcommand is.
struct GitGlobals {
    config: Vec<(String, Option<String>)>,
    /// `-C DIR`, in order: each runs git in DIR (relative to the last).
    folders: Vec<String>,
    end: usize,
}

/// Whether `git … config …` only prints settings: `--get`, `--get-all`,
/// `--get-regexp`, `--list`, `get`, `list`, or one key alone, with the
/// options that choose which file or how to print. A value after the
/// key, or any option that changes a file (`--add`, `--unset`, `-e`,
/// `set`…), sets.
pub(super) fn git_config_only_reads(argv: &[String]) -> bool {
    let end = git_globals(argv).end;
    if argv.get(end).map(String::as_str) != Some("config") {
        return false;
    }
    let (mut reading, mut operands) = (false, 0);
    let mut words = argv.get(end + 1..).unwrap_or_default().iter().map(String::as_str);
    while let Some(word) = words.next() {
        match word {
            "--get" | "--get-all" | "--get-regexp" | "--get-urlmatch" | "-l" | "--list" => {
                reading = true;
            }
            "get" | "list" if operands == 0 && !reading => reading = true,
            "--global" | "--system" | "--local" | "--worktree" | "--show-origin"
            | "--show-scope" | "--name-only" | "-z" | "--null" | "--includes" | "--no-includes"
            | "--bool" | "--int" | "--path" | "--all" => {}
            "-f" | "--file" | "--blob" | "--type" | "--default" => {
                words.next();
            }
            option if option.starts_with('-') => {
                if !["--file=", "--blob=", "--type=", "--default="]
                    .iter()
                    .any(|prefix| option.starts_with(prefix))
                {
                    return false;
                }
            }
            _ => operands += 1,
        }
    }
    if reading { operands <= 2 } else { operands == 1 }
}

fn git_globals(argv: &[String]) -> GitGlobals {
    let mut globals = GitGlobals { config: Vec::new(), folders: Vec::new(), end: 1 };
    while let Some(word) = argv.get(globals.end) {
        let next = argv.get(globals.end + 1);
        let (setting, known, width) = match word.as_str() {
            "-c" => (next.map(String::as_str), true, 2),
            "--config-env" => (next.map(String::as_str), false, 2),
            _ if word.starts_with("-c") => (Some(word.get(2..).unwrap_or_default()), true, 1),
            _ if word.starts_with("--config-env=") => {
                (Some(word.get("--config-env=".len()..).unwrap_or_default()), false, 1)
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix"
            | "--list-cmds" => (None, true, 2),
            _ if word.starts_with('-') => (None, true, 1),
            _ => break,
        };
        if word == "-C" {
            globals.folders.extend(next.cloned());
        }
        if let Some(setting) = setting {
            let (key, value) =
                setting.split_once('=').map_or((setting, None), |(k, v)| (k, Some(v.to_owned())));
            globals.config.push((key.to_lowercase(), value.filter(|_| known)));
        }
        globals.end += width;
    }
    globals
}

/// Subcommands that always reach a remote, the only ones with
/// [`git_reaches_network`]'s exceptions that run an ssh command.
const GIT_NETWORK: [&str; 6] = ["clone", "fetch", "pull", "push", "ls-remote", "submodule"];

/// Whether git's command in `argv` may reach a remote (so run an ssh
/// command): `git archive` only with `--remote`, `git remote` only to
/// `update`, `prune`, `show` (without `-n`) or `add -f`; with no command
/// known, it may.
fn git_reaches_network(argv: &[String]) -> bool {
    let end = git_globals(argv).end;
    let Some(subcommand) = argv.get(end).map(|s| s.to_lowercase()) else { return true };
    let rest = argv.get(end + 1..).unwrap_or_default();
    let has = |flag: &str| rest.iter().any(|w| w == flag || w.starts_with(&format!("{flag}=")));
    match subcommand.as_str() {
        "archive" => has("--remote"),
        "remote" => match rest.iter().find(|w| !w.starts_with('-')).map(String::as_str) {
            Some("update" | "prune") => true,
            Some("show") => !has("-n"),
            Some("add") => has("-f") || has("--fetch"),
            _ => false,
        },
        other => GIT_NETWORK.contains(&other),
    }
}

/// A configuration `key` set to `value` (`None`: not known) for a git
/// command that may reach a remote or not (`network`): a fact when it
/// names a program that command can run.
fn git_config(builder: &mut Builder, key: &str, value: Option<&str>, network: bool, how: &str) {
    if let Some(role) = pagers_editors::role_of_git_key(key) {
        match value {
            Some(value) if pagers_editors::names_no_program(key, value) => {}
            Some(value) => pagers_editors::run(builder, value, role, &format!("{how} {key}=")),
            None => builder.fact(
                Fact::ConfigExecutes,
                format!("{how} {key} runs a program not known before it runs"),
            ),
        }
        return;
    }
    let runs_here = match key {
        "core.sshcommand" | "ssh.variant" => network,
        _ => executing_git_key(key),
    };
    if !runs_here {
        return;
    }
    match value {
        Some(value) => {
            builder.fact(Fact::ConfigExecutes, format!("{how} {key}= runs {}", preview(value)));
            builder.shell(value, Some("git config"));
        }
        None => builder.fact(
            Fact::ConfigExecutes,
            format!("{how} {key} runs a program not known before it runs"),
        ),
    }
}

/// Whether git's setting `key` names a program: a pager, an editor, the
/// ssh command, or one of [`executing_git_key`].
fn git_key_names_a_program(key: &str) -> bool {
    pagers_editors::role_of_git_key(key).is_some()
        || matches!(key, "core.sshcommand" | "ssh.variant")
        || executing_git_key(key)
}

fn executing_git_key(key: &str) -> bool {
    matches!(
        key,
        "core.sshcommand"
            | "core.fsmonitor"
            | "core.hookspath"
            | "core.askpass"
            | "core.gitproxy"
            | "diff.external"
            | "credential.helper"
            | "gpg.program"
            | "gpg.ssh.program"
            | "uploadpack.packobjectshook"
            | "protocol.ext.allow"
    ) || key.starts_with("filter.")
        || key.starts_with("diff.") && key.ends_with(".textconv")
        || key.starts_with("merge.") && key.ends_with(".driver")
}

/// Environment assignments before a command (`argv`) that make it run
/// something: git's configuration from the environment
/// (`GIT_CONFIG_COUNT` with `GIT_CONFIG_KEY_n`/`VALUE_n`,
/// `GIT_CONFIG_PARAMETERS`, a config file), `GIT_SSH_COMMAND` for a
/// network subcommand, pagers and editors, `LD_PRELOAD`, `BASH_ENV` and
/// `ENV` (start-up files), `TAR_OPTIONS` for tar.
pub(super) fn environment(builder: &mut Builder, env: &[(String, String)], argv: &[String]) {
    let program = argv.first().map(|p| super::command::base_name(p));
    let git = program.as_deref() == Some("git");
    let subcommand =
        if git { argv.get(git_globals(argv).end).map(|s| s.to_lowercase()) } else { None };
    let lookup = |wanted: &str| {
        env.iter()
            .rev()
            .find(|(name, _)| name.eq_ignore_ascii_case(wanted))
            .map(|(_, value)| value.as_str())
    };
    let count: Option<usize> =
        lookup("GIT_CONFIG_COUNT").map(|count| count.trim().parse().unwrap_or(usize::MAX));
    // A setting from the environment: an alias of the subcommand runs in
    // its place, as one given with `git -c` does.
    let configure = |builder: &mut Builder, key: &str, value: Option<&str>, how: &str| {
        let alias_of_subcommand =
            key.strip_prefix("alias.").is_some_and(|alias| subcommand.as_deref() == Some(alias));
        match value {
            Some(value) if alias_of_subcommand => {
                let rest = argv.get(git_globals(argv).end + 1..).unwrap_or_default();
                git_alias(builder, key.trim_start_matches("alias."), value, rest, false);
            }
            None if alias_of_subcommand => builder.fact(
                Fact::ConfigExecutes,
                format!("{how} makes git's command an alias not known before it runs"),
            ),
            _ => git_config(builder, key, value, !git || git_reaches_network(argv), how),
        }
    };
    for (name, value) in env {
        let upper = name.to_uppercase();
        if let Some(n) = upper.strip_prefix("GIT_CONFIG_KEY_") {
            let counted = n.parse::<usize>().is_ok_and(|n| count.is_some_and(|count| n < count));
            if counted {
                let setting = lookup(&format!("GIT_CONFIG_VALUE_{n}"));
                configure(builder, &value.to_lowercase(), setting, name);
            }
            continue;
        }
        if let Some(role) = pagers_editors::role_of_variable(&upper) {
            if !value.trim().is_empty() {
                pagers_editors::run(builder, value, role, &format!("{name}="));
            }
            continue;
        }
        let runs = match upper.as_str() {
            "GIT_SSH_COMMAND" | "GIT_SSH" => !git || git_reaches_network(argv),
            "GIT_CONFIG_PARAMETERS" => {
                for (key, setting) in git_config_parameters(value) {
                    configure(builder, &key, Some(&setting), name);
                }
                false
            }
            "GIT_CONFIG_GLOBAL" | "GIT_CONFIG_SYSTEM" | "GIT_CONFIG"
                if value != "/dev/null" && !value.is_empty() =>
            {
                builder.fact(Fact::ConfigExecutes, format!("{name}= makes git read configuration not seen here, which may name a program to run"));
                false
            }
            "TAR_OPTIONS" if program.as_deref() == Some("tar") && is_unknown_text(value) => {
                builder.fact(
                    Fact::EvalOfUnknownText,
                    format!("{name}= gives tar options known only when it runs"),
                );
                false
            }
            "TAR_OPTIONS" if program.as_deref() == Some("tar") => {
                // Read before the command line's own options, as tar does.
                let options: Vec<String> = value
                    .split_whitespace()
                    .map(str::to_owned)
                    .chain(argv.iter().skip(1).cloned())
                    .collect();
                tar(builder, &Command::new(argv.to_vec(), false, false, None), &options);
                false
            }
            // A start-up file bash (`BASH_ENV`, not interactive) or sh
            // (`ENV`, interactive) sources, its name expanded first: a
            // plain name is a script run, judged as `source` of it is (by
            // its content where the action writes it); one known only
            // when the shell starts runs something unknown.
            "BASH_ENV" | "ENV" if !value.contains(['$', '`']) => {
                if !value.is_empty() {
                    builder
                        .shell(&super::words::quote_words(["source", value.as_str()]), Some(name));
                }
                false
            }
            "GIT_EXTERNAL_DIFF" | "GIT_ASKPASS" | "GIT_PROXY_COMMAND" | "SSH_ASKPASS"
            | "LD_PRELOAD" | "BASH_ENV" | "ENV" | "PROMPT_COMMAND" => true,
            _ => false,
        };
        if runs && !value.is_empty() {
            builder.fact(
                Fact::ConfigExecutes,
                format!("{name}= makes the command run {}", preview(value)),
            );
            builder.shell(value, Some(name));
        }
    }
}

/// `GIT_CONFIG_PARAMETERS`: `'key'='value'` pairs as git writes them for
/// `-c`, separated by spaces.
fn git_config_parameters(text: &str) -> Vec<(String, String)> {
    text.split("' '")
        .filter_map(|pair| {
            let pair = pair.trim().trim_matches('\'');
            let (key, value) = pair.split_once("'='").or_else(|| pair.split_once('='))?;
            Some((key.to_lowercase(), value.to_owned()))
        })
        .collect()
}

/// Whether a command runs what it is handed (a substitution, its stdin).
pub(super) fn executes_its_input(command: &Command) -> bool {
    let program = command.program.as_str();
    SHELLS.contains(&program)
        || EVALUATORS.contains(&program)
        || code::is_interpreter(program)
        || sql::is_client(program)
        || schedules_its_input(command)
        || tool_commands::stdin_commands(command).is_some()
}

/// `at TIME` and `batch` read the commands they run later from stdin,
/// unless given a file (`-f FILE`); listing, removing and printing jobs
/// (`at -l`, `-r`, `-d`, `-c`) run nothing.
fn schedules_its_input(command: &Command) -> bool {
    matches!(command.program.as_str(), "at" | "batch")
        && command.invocation == Invocation::Acts
        && !command.argv.iter().skip(1).any(|word| {
            word.strip_prefix('-').is_some_and(|letters| {
                !letters.starts_with('-') && letters.contains(['f', 'l', 'r', 'd', 'c'])
            })
        })
}

/// A fact when text decoded in a substitution (`$(echo … | base64 -d)`)
/// is handed to `executor`, whether or not the text could be read, as
/// when it is piped there.
pub(super) fn decoded_into(builder: &mut Builder, substituted: &[usize], executor: &[usize]) {
    if let Some(&decoder) = substituted.iter().find(|&&at| is_decoding(builder.get(at))) {
        let into = executor.first().map(|&at| builder.get(at).program.clone()).unwrap_or_default();
        let from = builder.get(decoder).program.clone();
        builder.fact(Fact::DecodedIntoExecutor, format!("text decoded by {from} runs in {into}"));
    }
}

/// Whether a command runs what reaches it through a chain: a shell without
/// a literal `-c` script, `eval`, `source`, an interpreter not given its
/// code inline (nor `-m module`).
pub(super) fn runs_its_input(command: &Command) -> bool {
    let program = command.program.as_str();
    if SHELLS.contains(&program) {
        return match shell_runs(&command.argv) {
            ShellRuns::Stdin => true,
            // A script named only at run time (`bash <(curl …)`) is what
            // fed it.
            ShellRuns::Text(script, _) => command.dynamic_args || is_run_time(&script),
            ShellRuns::File(_) => command.has_unknown_arguments(),
            ShellRuns::Nothing => false,
        };
    }
    if code::is_interpreter(program) {
        let inline = command
            .argv
            .iter()
            .skip(1)
            .any(|w| matches!(w.as_str(), "-c" | "-e" | "-E" | "-m" | "-r" | "--eval" | "-p"));
        return command.has_unknown_arguments() || !inline;
    }
    // PowerShell's `iex` and cmd without `/c` run what they read.
    let windows = matches!(program, "iex" | "invoke-expression" | "cmd" | "cmd.exe")
        && windows_shell::script_of(command).is_none()
        && command.argv.len() <= 2;
    EVALUATORS.contains(&program)
        || windows
        || schedules_its_input(command)
        || tool_commands::stdin_commands(command).is_some()
}

/// Text that reaches the command at `index` on stdin.
pub(super) fn stdin_text(builder: &mut Builder, index: usize, text: &str) {
    let receiver = builder.get(index).clone();
    in_the_receivers_shell(builder, &receiver, |builder| stdin_text_read(builder, index, text));
}

/// Walks what `receiver` is handed to run: what the text changes stays in
/// the receiver, unless that is this shell (`source /dev/stdin <<<…`).
fn in_the_receivers_shell(
    builder: &mut Builder,
    receiver: &Command,
    read: impl FnOnce(&mut Builder),
) {
    if runs_in_this_shell(receiver) {
        read(builder);
    } else {
        builder.in_subshell(Subshell::Program, read);
    }
}

/// A process substitution the command runs as its script (`bash <(echo
/// …)`, `source <(printf …)`, `python3 <(cat <<EOF …)`): what it prints,
/// where that is known, is run as the script. Every unknown word of the
/// command must be one of `files` (the commands of each process
/// substitution among its words, in order), so the script, its first
/// operand, is the first of them.
pub(super) fn script_given_as_a_file(builder: &mut Builder, group: &[usize], files: &[Vec<usize>]) {
    let Some(text) = files
        .first()
        .and_then(|file| file.last())
        .and_then(|&printer| static_output(builder, printer))
    else {
        return;
    };
    for &at in group {
        let command = builder.get(at);
        let unknown = command.argv.iter().filter(|word| *word == words::RUN_TIME_VALUE).count();
        if unknown != files.len() || !super::runs_an_unknown_script(command) {
            continue;
        }
        let command = command.clone();
        in_the_receivers_shell(builder, &command, |builder| {
            if code::is_interpreter(&command.program) {
                code::analyze(builder, &command.program, &text);
            } else {
                builder.shell(&text, Some(&command.program));
            }
        });
        return;
    }
}

fn stdin_text_read(builder: &mut Builder, index: usize, text: &str) {
    let command = builder.get(index).clone();
    let program = command.program.as_str();
    if SHELLS.contains(&program) {
        if shell_runs(&command.argv) == ShellRuns::Stdin {
            builder.shell(text, Some(program));
        }
    } else if code::is_interpreter(program) {
        code::analyze(builder, program, text);
    } else if sql::is_client(program) {
        sql::statements(builder, text, program);
    } else if EVALUATORS.contains(&program) || schedules_its_input(&command) {
        builder.shell(text, Some(program));
    } else if program == "cat" {
        builder.here_texts.insert(index, text.to_owned());
    } else if program == "curl" && curl_reads_config_from_stdin(&command.argv) {
        curl_config(builder, &command, text);
    } else if patches::applies_stdin(&command) {
        patches::apply(builder, text);
    } else if let Some(reader) = tool_commands::stdin_commands(&command) {
        tool_commands::read_stdin_commands(builder, reader, text);
    }
}

/// `curl -K -` (`--config -`, `--config=-`, `-K/dev/stdin`): curl reads
/// its options from standard input.
fn curl_reads_config_from_stdin(argv: &[String]) -> bool {
    let stdin = |value: &str| matches!(value, "-" | "/dev/stdin");
    let args = argv.get(1..).unwrap_or_default();
    options::CURL.parse(args).value("-K").is_some_and(stdin)
        || args.windows(2).any(|pair| {
            // The grammar reads a lone `-` after `-K` as an operand.
            pair.first().is_some_and(|w| w == "--config" || w == "-K")
                && pair.get(1).is_some_and(|v| stdin(v))
        })
        || args.iter().any(|word| word.strip_prefix("--config=").is_some_and(stdin))
}

/// The options of a curl config file given on stdin, as the command they
/// make (`url = https://x` and `form = a=@~/.ssh/id_rsa` are `curl --url
/// https://x --form a=@~/.ssh/id_rsa`): one option a line, its name with
/// or without dashes, its value after blanks, `=` or `:`, maybe quoted;
/// `#` starts a comment line.
fn curl_config(builder: &mut Builder, command: &Command, text: &str) {
    let mut argv = vec!["curl".to_owned()];
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let end =
            line.find(|c: char| c.is_whitespace() || c == '=' || c == ':').unwrap_or(line.len());
        let (name, rest) = line.split_at(end);
        argv.push(if name.starts_with('-') { name.to_owned() } else { format!("--{name}") });
        let value = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '=' || c == ':');
        if !value.is_empty() {
            let unquoted =
                value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
            argv.push(unquoted.to_owned());
        }
    }
    builder.command(Command::new(argv, false, command.dynamic_args, Some("curl -K -".to_owned())));
}

/// Whether `command` is an `xargs` that, reading a pipe, waits for the
/// text ([`pipeline_text`]) before it is read with its input unknown.
pub(super) fn reads_its_input_as_arguments(command: &Command) -> bool {
    command.program == "xargs" && command.invocation != Invocation::OnlyPrints
}

/// Programs whose arguments are only names and words: handed words by
/// `xargs`, they run nothing more.
const TAKES_WORDS_ONLY: [&str; 22] = [
    "rm", "rmdir", "unlink", "shred", "cp", "mv", "ln", "chmod", "chown", "chgrp", "touch",
    "mkdir", "truncate", "cat", "head", "tail", "wc", "ls", "stat", "du", "echo", "kill",
];

/// Whether `xargs` given `text` is read exactly by [`xargs`]: the items
/// split as xargs splits them (a delimiter given, or no quote or
/// backslash for its own quoting to take out) and handed to a program
/// that only takes words (`echo a.o b.o | xargs rm`). Otherwise its
/// input is also read as unknown, so what a shell or an interpreter
/// makes of it is never taken on trust.
fn xargs_reads_exactly(command: &Command, text: &str) -> bool {
    let argv = command.argv.get(1..).unwrap_or_default();
    let parsed = options::XARGS.parse(argv);
    let delimited = parsed.has("-0") || parsed.has("-d");
    let mut inner = argv.get(parsed.rest..).unwrap_or_default().iter().map(String::as_str);
    let program = match inner.next().map(super::command::base_name) {
        Some(wrapper) if matches!(wrapper.as_str(), "busybox" | "toybox") => {
            inner.next().map(super::command::base_name)
        }
        program => program,
    };
    !parsed.has("-a")
        && (delimited || !text.contains(['\'', '"', '\\']))
        && program.is_none_or(|program| TAKES_WORDS_ONLY.contains(&program.as_str()))
}

/// Literal text flowing through a pipeline: `echo X | sh`, `printf … |
/// python`, `cat <<EOF | sh`, and decoded on the way (`base64 -d`, `xxd
/// -r -p`, `rev`). Decoding into an executor is a fact whether or not the
/// text could be read. `xargs` and `parallel` run with that text; an
/// `xargs` waiting for its input is read with it unknown too unless
/// the text makes its reading exact ([`xargs_reads_exactly`]).
pub(super) fn pipeline_text(builder: &mut Builder, stages: &[Vec<usize>]) {
    let mut text: Option<String> = None;
    let mut decoded = false;
    for (at, stage) in stages.iter().enumerate() {
        if let Some(&reader) =
            stage.iter().find(|&&i| matches!(builder.get(i).program.as_str(), "xargs" | "parallel"))
        {
            // Known text, exact where xargs's own reading is; or names
            // `find -print0` prints, read apart by `xargs -0`: each one a
            // path under find's start points, never an option.
            let fed = match text.take() {
                Some(text) => {
                    let exact = builder.get(reader).program == "xargs"
                        && xargs_reads_exactly(builder.get(reader), &text);
                    Some((text, exact))
                }
                None => at
                    .checked_sub(1)
                    .and_then(|before| stages.get(before)?.last())
                    .and_then(|&lister| names_found(builder.get(lister), builder.get(reader)))
                    .map(|names| (names, true)),
            };
            if let Some((text, exact)) = fed {
                if exact {
                    builder.awaiting_input.retain(|&waiting| waiting != reader);
                }
                let reader = builder.get(reader).clone();
                builder.in_subshell(Subshell::Program, |builder| {
                    if reader.program == "xargs" {
                        xargs(builder, &reader, Some(&text));
                    } else {
                        parallel(builder, &reader, Some(&text));
                    }
                });
            }
            continue;
        }
        let Some(&first) = stage.last() else { continue };
        let command = builder.get(first).clone();
        let program = command.program.as_str();
        let shell_reads = SHELLS.contains(&program).then(|| shell_runs(&command.argv));
        if executes_its_input(&command)
            && shell_reads.as_ref().is_none_or(|runs| *runs == ShellRuns::Stdin)
        {
            if decoded {
                builder.fact(Fact::DecodedIntoExecutor, format!("decoded text runs in {program}"));
            }
            match text.take() {
                Some(text) => stdin_text(builder, first, &text),
                // `history | sh`, `make -n | bash`: the text is whatever
                // the previous stage prints.
                None if shell_reads.is_some() && at > 0 => {
                    builder.fact(Fact::EvalOfUnknownText, format!("`{program}` runs the output of another command, not known before it runs"));
                }
                None => {}
            }
            continue;
        }
        text = match program {
            "echo" | "printf" => Some(printed(builder, &command)),
            "cat" if command.positionals.is_empty() => builder.here_texts.get(&first).cloned(),
            "rev" => text.map(|t| t.chars().rev().collect()),
            _ if is_decoding(&command) => {
                decoded = true;
                text.and_then(|t| decode(&command, &t))
            }
            _ => None,
        };
    }
    builder.unwrap_awaiting_input();
}

/// What `lister` hands `reader` when it is `find … -print0` read by
/// `xargs -0`: the names find selects ([`find_selection`]), each a path
/// under its start points, `\0` between them. Any other output (`-print`,
/// `-printf`, `-ls`, `-exec`) or splitting is not read this way.
fn names_found(lister: &Command, reader: &Command) -> Option<String> {
    let argv = &lister.argv;
    let prints_names = argv.iter().any(|word| word == "-print0")
        && !argv.iter().any(|word| {
            matches!(word.as_str(), "-print" | "-printf" | "-ls" | "-fls")
                || word.starts_with("-exec")
                || word.starts_with("-ok")
        });
    let reads_names = reader.program == "xargs"
        && options::XARGS.parse(reader.argv.get(1..).unwrap_or_default()).has("-0");
    if lister.program != "find" || !prints_names || !reads_names || lister.has_unknown_arguments() {
        return None;
    }
    let (roots, expression) = find_roots(argv);
    Some(find_selection(&roots, expression).join("\0"))
}

/// What the command at `index` prints, when it is known without running
/// anything: `echo` and `printf` of static words, `cat` of a here-document.
pub(super) fn static_output(builder: &Builder, index: usize) -> Option<String> {
    let command = builder.get(index);
    match command.program.as_str() {
        "echo" | "printf" if !command.has_unknown_arguments() => Some(printed(builder, command)),
        "cat" if command.positionals.is_empty() => builder.here_texts.get(&index).cloned(),
        _ => None,
    }
}

/// What `echo` or `printf` prints ([`super::pure::printed`]); where that
/// cannot be worked out (an unknown conversion, unknown words), its words
/// in order, so text fed on is still read for what it may run.
fn printed(builder: &Builder, command: &Command) -> String {
    if let Some(text) = super::pure::printed(&command.argv, None, &builder.vars) {
        return text;
    }
    let joined = command.data.join(" ");
    if command.program == "printf" || command.argv.iter().any(|w| w == "-e") {
        super::words::decode_ansi_c(&joined)
    } else {
        joined
    }
}

fn is_decoding(command: &Command) -> bool {
    let argv = &command.argv;
    let has = |flag: &str| {
        argv.iter().any(|w| {
            w == flag
                || w.starts_with('-')
                    && !w.starts_with("--")
                    && flag.len() == 2
                    && w.contains(flag.get(1..).unwrap_or_default())
        })
    };
    match command.program.as_str() {
        "base64" | "base32" => has("-d") || argv.iter().any(|w| w == "--decode"),
        "xxd" => has("-r"),
        "openssl" => argv.iter().any(|w| w == "-d" || w == "base64"),
        program => DECODERS.contains(&program),
    }
}

fn decode(command: &Command, text: &str) -> Option<String> {
    match command.program.as_str() {
        "base64" => base64_decode(text),
        "xxd" => hex_decode(text),
        _ => None,
    }
}

fn base64_decode(text: &str) -> Option<String> {
    String::from_utf8(super::words::base64_bytes(text)?).ok()
}

fn hex_decode(text: &str) -> Option<String> {
    let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    let bytes: Option<Vec<u8>> = digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

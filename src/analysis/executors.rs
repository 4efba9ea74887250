//! Programs that run other programs, unwrapped: each row of [`unwrap`]
//! says where the inner command is in its argv (`sudo -u root X`,
//! `timeout 5 X`, `find … -exec X {} ;`, `ssh host X`, `bash -c 'X'`,
//! `git -c alias.p='!X' p`…). The wrapper stays a command of its own; the
//! inner one is analysed like any other, recursively. Text fed to a shell,
//! an interpreter or a database client on stdin (here-documents, here-
//! strings, `echo … |`, decoded `base64 -d |`) is analysed as what that
//! program reads.

use super::{Builder, Command, Fact, code, preview, sql, windows_shell};

pub const SHELLS: [&str; 10] = ["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox", "csh"];

/// Prefix wrappers: options (those in the second field take a value), then
/// as many leading positionals as the third field says, then the command.
const PREFIX_WRAPPERS: &[(&[&str], &[&str], usize)] = &[
    (&["sudo"], &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "--user", "--group", "--chdir", "--prompt", "--host", "--role", "--type"], 0),
    (&["doas"], &["-u", "-C"], 0),
    (&["pkexec"], &["--user"], 0),
    (&["env"], &["-u", "-C", "--unset", "--chdir", "-S", "--split-string"], 0),
    (&["nice"], &["-n", "--adjustment"], 0),
    (&["nohup", "setsid", "time", "builtin", "command", "unbuffer", "caffeinate", "catchsegv", "chronic"], &[], 0),
    (&["timeout"], &["-s", "-k", "--signal", "--kill-after"], 1),
    (&["stdbuf"], &["-i", "-o", "-e"], 0),
    (&["ionice"], &["-c", "-n", "-p", "-t"], 0),
    (&["chroot"], &["--userspec", "--groups"], 1),
    (&["flock"], &["-w", "-E", "--timeout", "--conflict-exit-code"], 1),
    (&["exec"], &["-a"], 0),
    (&["xargs"], &["-I", "-i", "-L", "-l", "-n", "-P", "-d", "-E", "-e", "-s", "-a", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--replace", "--max-lines"], 0),
    (&["torsocks", "proxychains", "proxychains4", "firejail", "unshare", "nsenter", "systemd-run", "strace", "ltrace", "valgrind"], &["-o", "-p", "-t", "-u", "--unit", "--uid"], 0),
];

/// Programs that fetch from the network.
pub const DOWNLOADERS: [&str; 14] = ["curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-request", "invoke-webrequest", "iwr", "irm", "invoke-restmethod", "ftp", "tftp"];

/// Programs that run text they are given as a script.
const EVALUATORS: [&str; 3] = ["eval", "source", "."];
/// Programs that decode their input.
const DECODERS: [&str; 7] = ["base64", "base32", "xxd", "openssl", "gunzip", "zcat", "uudecode"];

/// Finds and analyses what the command at `index` runs in turn.
pub(super) fn unwrap(builder: &mut Builder, index: usize) {
    let command = builder.get(index).clone();
    let program = command.program.as_str();
    let argv = &command.argv;
    let via = |what: &str| Some(what.to_owned());
    if let Some((_, takes_value, skip)) = PREFIX_WRAPPERS.iter().find(|(names, _, _)| names.contains(&program)) {
        if let Some(inner) = after_options(argv, takes_value, *skip, program == "env") {
            if program == "env" && let Some(split) = split_string(argv) {
                builder.shell(&split, Some("env -S"));
            }
            let dynamic_args = command.dynamic_args || program == "xargs";
            inner_command(builder, inner, &command, dynamic_args, via(program));
        }
        if program == "flock" && let Some(script) = value_of(argv, &["-c", "--command"]) {
            builder.shell(&script, Some("flock -c"));
        }
        return;
    }
    if let Some((dialect, script)) = windows_shell::script_of(&command) {
        if command.dynamic_args {
            builder.fact(Fact::EvalOfUnknownText, format!("`{program}` runs text that is not known before it runs: {}", preview(&script)));
        }
        windows_shell::analyze(builder, dialect, &script, Some(program));
        return;
    }
    match program {
        _ if SHELLS.contains(&program) => {
            if let Some(script) = shell_script(argv) {
                run_text(builder, &command, &script, &format!("{program} -c"));
            }
        }
        "su" => {
            if let Some(script) = value_of(argv, &["-c", "--command"]) {
                run_text(builder, &command, &script, "su -c");
            }
        }
        "eval" => run_text(builder, &command, &argv[1..].join(" "), "eval"),
        "watch" => {
            let inner = after_options(argv, &["-n", "-d", "--interval", "--differences"], 0, false).unwrap_or_default();
            builder.shell(&inner.join(" "), Some("watch"));
        }
        "parallel" => {
            let end = argv.iter().position(|w| w == ":::" || w == "::::").unwrap_or(argv.len());
            let inner = after_options(&argv[..end], &["-j", "--jobs", "-S", "--sshlogin"], 0, false).unwrap_or_default();
            inner_command(builder, inner, &command, true, via("parallel"));
        }
        "find" => find(builder, &command),
        "ssh" => {
            let inner = after_options(argv, &["-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D", "-b", "-c", "-E", "-e", "-I", "-m", "-O", "-Q", "-S", "-W", "-w", "-B"], 1, false).unwrap_or_default();
            if !inner.is_empty() {
                builder.shell(&inner.join(" "), Some("ssh"));
            }
        }
        "docker" | "podman" | "nerdctl" if command.subcommand() == Some("exec") => {
            let rest = &argv[1..];
            let at = rest.iter().position(|w| w == "exec").map_or(rest.len(), |i| i + 1);
            let mut exec_argv = vec!["exec".to_owned()];
            exec_argv.extend(rest[at..].iter().cloned());
            if let Some(inner) = after_options(&exec_argv, &["-e", "-u", "-w", "--env", "--user", "--workdir", "--env-file", "--detach-keys"], 1, false) {
                inner_command(builder, inner, &command, command.dynamic_args, via(program));
            }
        }
        "kubectl" | "oc" if command.subcommand() == Some("exec") => {
            if let Some(at) = argv.iter().position(|w| w == "--") {
                inner_command(builder, argv[at + 1..].to_vec(), &command, command.dynamic_args, via("kubectl exec"));
            }
        }
        "git" => git(builder, &command),
        _ if code::is_interpreter(program) => code::inline(builder, &command),
        _ if sql::is_client(program) => sql::inline(builder, &command),
        _ => {}
    }
}

/// The words after a wrapper's options and `skip` leading positionals, if
/// a command follows. `env` also skips `NAME=value` words.
fn after_options(argv: &[String], takes_value: &[&str], skip: usize, assignments: bool) -> Option<Vec<String>> {
    let mut at = 1;
    let mut skipped = 0;
    while at < argv.len() {
        let word = &argv[at];
        if word == "--" {
            at += 1;
            break;
        }
        if word.starts_with('-') && word.len() > 1 {
            let name = word.split_once('=').map_or(word.as_str(), |(n, _)| n);
            at += if takes_value.contains(&name) && !word.contains('=') { 2 } else { 1 };
            continue;
        }
        if assignments && word.contains('=') && !word.starts_with('=') {
            at += 1;
            continue;
        }
        if skipped < skip {
            skipped += 1;
            at += 1;
            continue;
        }
        break;
    }
    (at < argv.len()).then(|| argv[at..].to_vec())
}

/// The value after the first of `flags` (`-c CMD`, or `--command=CMD`).
fn value_of(argv: &[String], flags: &[&str]) -> Option<String> {
    argv.iter().enumerate().find_map(|(i, word)| {
        if flags.contains(&word.as_str()) {
            return argv.get(i + 1).cloned();
        }
        let (name, value) = word.split_once('=')?;
        flags.contains(&name).then(|| value.to_owned())
    })
}

/// `env -S 'X Y'` splits its string into a command.
fn split_string(argv: &[String]) -> Option<String> {
    value_of(argv, &["-S", "--split-string"])
}

/// The script of `sh -c SCRIPT` (also `-lc`, `-xec`…).
fn shell_script(argv: &[String]) -> Option<String> {
    let at = argv.iter().skip(1).position(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('c'))? + 1;
    argv.get(at + 1).cloned()
}

/// Analyses text an executor runs: literal text as a script; text that
/// is not known statically is a fact.
fn run_text(builder: &mut Builder, command: &Command, script: &str, via: &str) {
    if command.dynamic_args {
        builder.fact(Fact::EvalOfUnknownText, format!("`{via}` runs text that is not known before it runs: {}", preview(script)));
    }
    builder.shell(script, Some(via));
}

fn inner_command(builder: &mut Builder, argv: Vec<String>, outer: &Command, dynamic_args: bool, via: Option<String>) {
    if argv.is_empty() {
        return;
    }
    let dynamic_program = argv[0].contains("$(") || argv[0].starts_with('$') || argv[0].contains(['*', '?', '[']) || outer.dynamic_program;
    builder.command(Command::new(argv, dynamic_program, dynamic_args, via));
}

/// `find ROOTS … -exec CMD {} ;` runs CMD with `{}` standing for what it
/// selects; `-delete` removes it, which is `rm -r -f` of that. What it
/// selects is the trees it walks, or, when a test picks entries
/// (`-name '*.pyc'`, `-mtime +7`), entries below them (`./*.pyc`,
/// `./(selected by find)`); `-type` alone picks every file, which is the
/// whole tree.
fn find(builder: &mut Builder, command: &Command) {
    let argv = &command.argv;
    let selected = find_selection(argv);
    let mut at = 1;
    while at < argv.len() {
        let word = argv[at].as_str();
        if matches!(word, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let end = argv[at + 1..].iter().position(|w| w == ";" || w == "+").map_or(argv.len(), |i| at + 1 + i);
            let mut inner = Vec::new();
            for part in &argv[at + 1..end] {
                if part == "{}" {
                    inner.extend(selected.iter().cloned());
                } else {
                    inner.push(part.clone());
                }
            }
            inner_command(builder, inner, command, command.dynamic_args, Some(format!("find {word}")));
            at = end;
        } else if word == "-delete" {
            let mut inner = vec!["rm".to_owned(), "-r".to_owned(), "-f".to_owned()];
            inner.extend(selected.iter().cloned());
            inner_command(builder, inner, command, command.dynamic_args, Some("find -delete".into()));
        }
        at += 1;
    }
}

/// `find` words that select nothing: options, actions, and `-type`.
const FIND_NON_TESTS: [&str; 20] = [
    "-delete", "-depth", "-d", "-maxdepth", "-mindepth", "-xdev", "-mount", "-print", "-print0", "-daystart", "-follow", "-ignore_readdir_race",
    "-noleaf", "-regextype", "-warn", "-nowarn", "-type", "-xtype", "-true", "-a",
];

/// What `find`'s argv selects (see [`find`]).
fn find_selection(argv: &[String]) -> Vec<String> {
    let roots: Vec<String> = argv[1..].iter().take_while(|w| !w.starts_with('-') && *w != "(" && *w != "!").cloned().collect();
    let roots = if roots.is_empty() { vec![".".to_owned()] } else { roots };
    let after_roots = &argv[(1 + roots.len()).min(argv.len())..];
    // The command an `-exec` runs is not part of the selection.
    let expression = &after_roots[..after_roots.iter().position(|w| w.starts_with("-exec") || w.starts_with("-ok")).unwrap_or(after_roots.len())];
    let names: Vec<&str> = expression.windows(2).filter(|w| matches!(w[0].as_str(), "-name" | "-iname")).map(|w| w[1].as_str()).collect();
    let selects = |word: &String| word.starts_with('-') && !FIND_NON_TESTS.contains(&word.as_str());
    let below = match names.as_slice() {
        [name] => (*name).to_owned(),
        _ if expression.iter().any(selects) => "(selected by find)".to_owned(),
        _ => return roots,
    };
    roots.iter().map(|root| format!("{}/{below}", root.trim_end_matches('/'))).collect()
}

/// git's global options, and configuration that runs a program:
/// `-c core.pager=X`, `-c alias.NAME='!X'`, `-c core.fsmonitor=X`…
fn git(builder: &mut Builder, command: &Command) {
    let argv = &command.argv;
    let mut at = 1;
    let mut aliases: Vec<(String, String)> = Vec::new();
    while at < argv.len() {
        let word = argv[at].as_str();
        match word {
            "-c" => {
                if let Some((key, value)) = argv.get(at + 1).and_then(|kv| kv.split_once('=')) {
                    let key = key.to_lowercase();
                    if let Some(name) = key.strip_prefix("alias.") {
                        aliases.push((name.to_owned(), value.to_owned()));
                    } else if executing_git_key(&key) {
                        builder.fact(Fact::ConfigExecutes, format!("git -c {key}= runs {}", preview(value)));
                        builder.shell(value, Some("git config"));
                    }
                }
                at += 2;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" | "--config-env" => at += 2,
            _ if word.starts_with('-') => at += 1,
            _ => break,
        }
    }
    if at >= argv.len() {
        return;
    }
    let stripped_globals = at > 1;
    let subcommand = argv[at].to_lowercase();
    let rest = &argv[at + 1..];
    if let Some((_, value)) = aliases.iter().find(|(name, _)| *name == subcommand) {
        if let Some(script) = value.strip_prefix('!') {
            builder.fact(Fact::ConfigExecutes, format!("git alias {subcommand} runs {}", preview(script)));
            builder.shell(&format!("{script} {}", rest.join(" ")), Some("git alias"));
        } else {
            let mut expanded = vec!["git".to_owned()];
            expanded.extend(value.split_whitespace().map(str::to_owned));
            expanded.extend(rest.iter().cloned());
            builder.command(Command::new(expanded, false, command.dynamic_args, Some("git alias".into())));
        }
        return;
    }
    if stripped_globals {
        let mut plain = vec![argv[0].clone()];
        plain.extend(argv[at..].iter().cloned());
        builder.command(Command::new(plain, false, command.dynamic_args, Some("git".into())));
    }
}

fn executing_git_key(key: &str) -> bool {
    matches!(
        key,
        "core.pager" | "core.editor" | "core.sshcommand" | "core.fsmonitor" | "core.hookspath" | "core.askpass" | "core.gitproxy"
            | "sequence.editor" | "diff.external" | "credential.helper" | "gpg.program" | "gpg.ssh.program" | "pager.log"
            | "pager.diff" | "pager.show" | "uploadpack.packobjectshook" | "protocol.ext.allow"
    ) || key.starts_with("filter.") || key.starts_with("diff.") && key.ends_with(".textconv") || key.starts_with("merge.") && key.ends_with(".driver")
}

/// Environment assignments before a command that make it run something.
pub(super) fn environment(builder: &mut Builder, name: &str, value: &str, program: Option<&str>) {
    let upper = name.to_uppercase();
    let runs = matches!(upper.as_str(), "GIT_SSH_COMMAND" | "GIT_SSH" | "GIT_EXTERNAL_DIFF" | "GIT_PAGER" | "GIT_EDITOR" | "GIT_ASKPASS" | "GIT_PROXY_COMMAND" | "GIT_SEQUENCE_EDITOR" | "PAGER" | "EDITOR" | "VISUAL" | "SSH_ASKPASS" | "LD_PRELOAD" | "BASH_ENV" | "ENV" | "PROMPT_COMMAND")
        || upper.starts_with("GIT_CONFIG");
    let matters = !matches!(upper.as_str(), "PAGER" | "EDITOR" | "VISUAL") || program.is_some_and(|p| p == "git");
    if runs && matters && !value.is_empty() {
        builder.fact(Fact::ConfigExecutes, format!("{name}= makes the command run {}", preview(value)));
        builder.shell(value, Some(name));
    }
}

/// Whether a command runs what it is handed (a substitution, its stdin).
pub(super) fn executes_its_input(command: &Command) -> bool {
    let program = command.program.as_str();
    SHELLS.contains(&program) || EVALUATORS.contains(&program) || code::is_interpreter(program) || sql::is_client(program)
}

/// Whether a command runs what reaches it through a chain: a shell without
/// a literal `-c` script, `eval`, `source`, an interpreter not given its
/// code inline (nor `-m module`).
pub(super) fn runs_its_input(command: &Command) -> bool {
    let program = command.program.as_str();
    if SHELLS.contains(&program) {
        return command.dynamic_args || shell_script(&command.argv).is_none();
    }
    if code::is_interpreter(program) {
        let inline = command.argv.iter().skip(1).any(|w| matches!(w.as_str(), "-c" | "-e" | "-E" | "-m" | "-r" | "--eval" | "-p"));
        return command.dynamic_args || !inline;
    }
    // PowerShell's `iex` and cmd without `/c` run what they read.
    let windows = matches!(program, "iex" | "invoke-expression" | "cmd" | "cmd.exe") && windows_shell::script_of(command).is_none() && command.argv.len() <= 2;
    EVALUATORS.contains(&program) || windows
}

/// Text that reaches the command at `index` on stdin.
pub(super) fn stdin_text(builder: &mut Builder, index: usize, text: &str) {
    let command = builder.get(index).clone();
    let program = command.program.as_str();
    if SHELLS.contains(&program) && shell_script(&command.argv).is_none() {
        builder.shell(text, Some(program));
    } else if code::is_interpreter(program) {
        code::analyze(builder, program, text);
    } else if sql::is_client(program) {
        sql::statements(builder, text, program);
    } else if EVALUATORS.contains(&program) {
        builder.shell(text, Some(program));
    } else if program == "cat" {
        builder.here_texts.insert(index, text.to_owned());
    }
}

/// Literal text flowing through a pipeline: `echo X | sh`, `printf … |
/// python`, `cat <<EOF | sh`, and decoded on the way (`base64 -d`, `xxd
/// -r -p`, `rev`). Decoding into an executor is a fact whether or not the
/// text could be read.
pub(super) fn pipeline_text(builder: &mut Builder, stages: &[Vec<usize>]) {
    let mut text: Option<String> = None;
    let mut decoded = false;
    for stage in stages {
        if let Some(&xargs) = stage.iter().find(|&&i| builder.get(i).program == "xargs") {
            if let Some(text) = text.take() {
                let xargs = builder.get(xargs).clone();
                xargs_with(builder, &xargs, &text);
            }
            continue;
        }
        let Some(&first) = stage.last() else { continue };
        let command = builder.get(first).clone();
        let program = command.program.as_str();
        if executes_its_input(&command) && !(SHELLS.contains(&program) && shell_script(&command.argv).is_some()) {
            if decoded {
                builder.fact(Fact::DecodedIntoExecutor, format!("decoded text runs in {program}"));
            }
            if let Some(text) = text.take() {
                stdin_text(builder, first, &text);
            }
            continue;
        }
        text = match program {
            "echo" | "printf" => Some(printed(&command)),
            "cat" if command.positionals.is_empty() => builder.here_texts.get(&first).cloned(),
            "rev" => text.map(|t| t.chars().rev().collect()),
            _ if is_decoding(&command) => {
                decoded = true;
                text.and_then(|t| decode(&command, &t))
            }
            _ => None,
        };
    }
}

/// `echo ARGS | xargs CMD`: the command xargs runs, with the words it
/// reads (`-I R` puts them where `R` stands).
fn xargs_with(builder: &mut Builder, xargs: &Command, text: &str) {
    let Some((_, takes_value, _)) = PREFIX_WRAPPERS.iter().find(|(names, _, _)| names.contains(&"xargs")) else { return };
    let Some(mut inner) = after_options(&xargs.argv, takes_value, 0, false) else { return };
    let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    let replace = xargs.argv.windows(2).find(|w| w[0] == "-I" || w[0] == "-i").map(|w| w[1].clone());
    match replace {
        Some(token) => inner = inner.into_iter().map(|w| w.replace(&token, &words.join(" "))).collect(),
        None => inner.extend(words),
    }
    inner_command(builder, inner, xargs, false, Some("xargs".into()));
}

/// What the command at `index` prints, when it is known without running
/// anything: `echo` and `printf` of static words, `cat` of a here-document.
pub(super) fn static_output(builder: &Builder, index: usize) -> Option<String> {
    let command = builder.get(index);
    match command.program.as_str() {
        "echo" | "printf" if !command.dynamic_args => Some(printed(command)),
        "cat" if command.positionals.is_empty() => builder.here_texts.get(&index).cloned(),
        _ => None,
    }
}

fn printed(command: &Command) -> String {
    let joined = command.data.join(" ");
    if command.program == "printf" || command.argv.iter().any(|w| w == "-e") {
        super::words::decode_ansi_c(&joined)
    } else {
        joined
    }
}

fn is_decoding(command: &Command) -> bool {
    let argv = &command.argv;
    let has = |flag: &str| argv.iter().any(|w| w == flag || w.starts_with('-') && !w.starts_with("--") && flag.len() == 2 && w.contains(&flag[1..]));
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
    let bytes: Option<Vec<u8>> = digits.chunks(2).map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()).collect();
    String::from_utf8(bytes?).ok()
}

//! Which processes a command signals, where that is every process of the
//! session or of a user: `kill -- -1` and `kill -TERM -1` (every process
//! the user may signal), `killall5`, and `pkill`/`killall`
//! selecting a whole user (`pkill -u root`, `killall -u alice`) or a
//! pattern every command line matches (`pkill -f .`). The agent's own
//! harness, the user's editor and desktop go with them. A signal to named
//! processes (`kill 4242`, `pkill -f 'node server.js'`, `kill %1`), one
//! whose target is known only when it runs (`kill $PID`), and `kill -1`
//! alone (signal 1, no process) signal no such set; nor does `kill -HUP 1`:
//! init ignores what it does not handle, and in a container the first
//! process is the service, which a hang-up reloads.

use super::command::Command;

/// What `command` signals, when it is every process of the session or of
/// a user; `None` for any narrower set.
pub(super) fn every_process(command: &Command) -> Option<&'static str> {
    let args = command.argv.get(1..).unwrap_or_default();
    match command.program.as_str() {
        "killall5" => Some("killall5 signals every process outside its own session"),
        "kill" => kill_targets(args)
            .iter()
            .any(|pid| pid == "-1")
            .then_some("kill signals every process it may (pid -1)"),
        "pkill" | "killall" => selects_everything(&command.program, args)
            .then_some("every process of a user, or every process, is selected"),
        _ => None,
    }
}

/// The processes `kill ARGS` is given (bash's builtin and procps agree):
/// one signal option first (`-s SIG`, `-n N`, `--signal SIG`, `-SIG`,
/// `-N`), then `--` or not, then targets, `-1` among them. A listing
/// (`-l`, `-L`) signals nothing.
fn kill_targets(args: &[String]) -> &[String] {
    let skip = match args.first().map(String::as_str) {
        Some("-l" | "-L" | "--list" | "--table") | None => return &[],
        Some("-s" | "-n" | "--signal" | "-q" | "--queue") => 2,
        Some(word) if word.starts_with("--signal=") => 1,
        Some(word) if word.len() > 1 && word != "--" && word.starts_with('-') => {
            // `kill -1` alone sends signal 1 to nobody.
            if args.len() == 1 {
                return &[];
            }
            1
        }
        Some(_) => 0,
    };
    let rest = args.get(skip..).unwrap_or_default();
    match rest.split_first() {
        Some((first, targets)) if first == "--" => targets,
        _ => rest,
    }
}

/// Whether `pkill`/`killall` selects every process of a user, or every
/// process: a user selection (`-u`, `-U`, `--euid`, `--uid`, `--user`)
/// with no name or pattern, or a pattern every name matches.
fn selects_everything(program: &str, args: &[String]) -> bool {
    // Options that narrow the selection other than by user, and those
    // that take a value (of pkill, then killall).
    let (narrowing, valued): (&[&str], &[&str]) = if program == "pkill" {
        (
            &[
                "-g",
                "-G",
                "-P",
                "-s",
                "-t",
                "-F",
                "--pgroup",
                "--group",
                "--parent",
                "--session",
                "--terminal",
                "--pidfile",
                "--ns",
                "--cgroup",
            ],
            &[
                "-g", "-G", "-P", "-s", "-t", "-F", "-u", "-U", "--signal", "--euid", "--uid",
                "--ns", "--nslist", "--cgroup",
            ],
        )
    } else {
        (
            &["-n", "-y", "-o", "-Z", "--ns", "--younger-than", "--older-than", "--context"],
            &[
                "-n",
                "-y",
                "-o",
                "-Z",
                "-s",
                "-u",
                "--signal",
                "--user",
                "--ns",
                "--younger-than",
                "--older-than",
                "--context",
            ],
        )
    };
    let mut by_user = false;
    let mut names = Vec::new();
    let mut at = 0;
    while let Some(word) = args.get(at) {
        at += 1;
        let (option, glued) = match word.split_once('=') {
            Some((option, _)) if word.starts_with("--") => (option, true),
            _ => (word.as_str(), false),
        };
        if narrowing.contains(&option) {
            return false;
        }
        if matches!(option, "-u" | "-U" | "--euid" | "--uid" | "--user") {
            by_user = true;
        }
        if valued.contains(&option) {
            at += usize::from(!glued);
        } else if word == "--" {
            names.extend(args.get(at..).unwrap_or_default());
            break;
        } else if !word.starts_with('-') || word == "-" {
            names.push(word);
        }
    }
    let matches_any = |name: &&String| matches!(name.as_str(), "" | "." | ".*" | ".+" | "^" | "$");
    match names.as_slice() {
        [] => by_user,
        names => program == "pkill" && names.iter().any(matches_any),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every(line: &str) -> bool {
        let argv: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        every_process(&Command::new(argv, false, false, None)).is_some()
    }

    #[test]
    fn every_process_of_the_session_or_a_user() {
        for line in [
            "kill -- -1",
            "kill -TERM -1",
            "kill -s KILL -1",
            "kill -SIGKILL -1",
            "kill -9 4242 -1",
            "kill --signal=HUP -- -1",
            "killall5 -9",
            "pkill -u root",
            "pkill -9 -U 1000",
            "pkill --euid=alice",
            "killall -u alice",
            "killall -9 -u alice",
            "pkill -f .",
            "pkill -9 .*",
        ] {
            assert!(every(line), "{line}");
        }
    }

    #[test]
    fn named_processes_are_not_every_process() {
        for line in [
            "kill 4242",
            "kill -9 4242 4243",
            "kill -1",
            "kill -l",
            "kill %1",
            "kill -1 4242",
            "kill $PID",
            "kill -HUP 1",
            "pkill node",
            "pkill -u alice node",
            "pkill -f node.*server",
            "pkill -u alice -t pts/3",
            "killall -u alice node",
            "killall node",
            "pgrep -u root",
        ] {
            assert!(!every(line), "{line}");
        }
    }
}

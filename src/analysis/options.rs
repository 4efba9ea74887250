//! The option grammar of programs, as their own parsers read argv:
//! which short options take a value (glued `-n5` or the next word), which
//! take one only when glued (`xargs -i{}`), clusters of short options
//! (`-lc`, `-qf`), `--name=value`, `--` ending the options, and GNU long-
//! option abbreviation: a unique prefix of a long option is that option
//! (`rm --recurs`, `git reset --har`, `xargs --repl`). Each program's long
//! options live in one table here, read both when a wrapper's argv is
//! parsed (`executors`) and when flags are normalised for matching
//! (`command`), so abbreviation is resolved in one place.

/// What a long option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    Nothing,
    /// The next word, or the text after `=`.
    Value,
    /// Only the text after `=` (`--replace[=R]`).
    OptionalValue,
}

/// One long option: its full name (without `--`), the short option it is
/// the same as, if any, and what it takes.
#[derive(Debug, Clone, Copy)]
pub struct Long {
    pub name: &'static str,
    pub short: Option<char>,
    pub takes: Takes,
}

const fn flag(name: &'static str) -> Long {
    Long { name, short: None, takes: Takes::Nothing }
}
const fn same(name: &'static str, short: char) -> Long {
    Long { name, short: Some(short), takes: Takes::Nothing }
}
const fn value(name: &'static str) -> Long {
    Long { name, short: None, takes: Takes::Value }
}
const fn same_value(name: &'static str, short: char) -> Long {
    Long { name, short: Some(short), takes: Takes::Value }
}
const fn same_optional(name: &'static str, short: char) -> Long {
    Long { name, short: Some(short), takes: Takes::OptionalValue }
}
const fn optional(name: &'static str) -> Long {
    Long { name, short: None, takes: Takes::OptionalValue }
}

/// How one program reads its options.
#[derive(Debug, Clone, Copy)]
pub struct Grammar {
    /// Short options that take a value, glued or as the next word.
    pub short_values: &'static str,
    /// Short options that take a value only when glued (`-i{}`, `-l5`).
    pub short_optional: &'static str,
    pub long: &'static [Long],
    /// A unique prefix of a long option is accepted (GNU getopt_long,
    /// git's parse-options, Perl's Getopt::Long).
    pub abbreviates: bool,
    /// Options end at the first positional (POSIX `+` getopt: wrappers,
    /// whose command's own options follow). Otherwise options and
    /// positionals mix (GNU permutation).
    pub stops_at_positional: bool,
    /// How a long option missing from `long` is read.
    pub unlisted: Unlisted,
    /// Every option is listed, by its exact spelling: the program refuses
    /// to run at one it does not know (git's own options).
    pub refuses_unlisted: bool,
}

/// How a program reads a long option its table does not list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unlisted {
    /// As a flag (getopt: every option that takes a value is declared).
    Flag,
    /// As taking the next word, unless that word is an option or the name
    /// starts with `no-` (Python's argparse in the cloud CLIs, `aws
    /// --profile dev s3 ls`, whose generated parameters all take values
    /// and whose few switches the table lists).
    ValueUnlessOption,
}

/// Every GNU-style program knows these.
static HELP: [Long; 2] = [flag("help"), flag("version")];

impl Grammar {
    /// The long option `given` (without `--`) names: the exact name, or
    /// the one option it is a unique prefix of. An ambiguous prefix is
    /// refused by the program, so it names nothing.
    pub fn long(&self, given: &str) -> Option<&'static Long> {
        if let Some(exact) = self.long.iter().chain(&HELP).find(|l| l.name == given) {
            return Some(exact);
        }
        if !self.abbreviates || given.is_empty() {
            return None;
        }
        let mut found: Option<&'static Long> = None;
        for candidate in self.long.iter().chain(&HELP).filter(|l| l.name.starts_with(given)) {
            match found {
                // Two names for the same option are not ambiguous.
                Some(seen)
                    if seen.short.is_some()
                        && seen.short == candidate.short
                        && seen.takes == candidate.takes => {}
                Some(_) => return None,
                None => found = Some(candidate),
            }
        }
        found
    }

    /// Whether the long option `name` (as given, without `--` or `=`)
    /// takes `next`, the word after it, as its value.
    pub fn long_takes_next(&self, name: &str, next: Option<&str>) -> bool {
        match (self.long(name).map(|l| l.takes), self.unlisted) {
            (Some(Takes::Value), Unlisted::Flag) => true,
            (Some(Takes::Value), Unlisted::ValueUnlessOption) => {
                next.is_some_and(|word| !word.starts_with('-'))
            }
            (None, Unlisted::ValueUnlessOption) => {
                !name.starts_with("no-") && next.is_some_and(|word| !word.starts_with('-'))
            }
            _ => false,
        }
    }

    /// Whether the program refuses to run at `word`, an option it does not
    /// know ([`Grammar::refuses_unlisted`]).
    pub fn refuses(&self, word: &str) -> bool {
        let known = if let Some(body) = word.strip_prefix("--") {
            body.is_empty()
                || self.long(body.split_once('=').map_or(body, |(name, _)| name)).is_some()
        } else {
            match word.strip_prefix('-').and_then(|body| body.chars().next()) {
                Some(letter) => {
                    self.short_values.contains(letter)
                        || self.short_optional.contains(letter)
                        || self.long.iter().any(|long| long.short == Some(letter))
                }
                None => true,
            }
        };
        self.refuses_unlisted && !known
    }

    /// Parses `args` (argv without the program name).
    pub fn parse(&self, args: &[String]) -> Parsed {
        let mut parsed = Parsed { options: Vec::new(), positionals: Vec::new(), rest: args.len() };
        let mut at = 0;
        while let Some(word) = args.get(at) {
            let word = word.as_str();
            let start = at;
            at += 1;
            if word == "--" {
                if self.stops_at_positional {
                    parsed.rest = at;
                    return parsed;
                }
                parsed.positionals.extend(args.get(at..).unwrap_or_default().iter().cloned());
                return parsed;
            }
            if let Some(body) = word.strip_prefix("--") {
                let (name, glued) = match body.split_once('=') {
                    Some((name, value)) => (name, Some(value.to_owned())),
                    None => (body, None),
                };
                let long = self.long(name);
                let value = match glued {
                    Some(value) => Some(value),
                    None if self.long_takes_next(name, args.get(at).map(String::as_str)) => {
                        at += 1;
                        args.get(at - 1).cloned()
                    }
                    None => None,
                };
                let flag = match long {
                    Some(Long { short: Some(short), .. }) => format!("-{short}"),
                    Some(long) => format!("--{}", long.name),
                    None => format!("--{name}"),
                };
                parsed.options.push(Opt { flag, value, words: start..at });
                continue;
            }
            if word.len() > 1 && word.starts_with('-') {
                let body = word.get(1..).unwrap_or_default();
                for (offset, letter) in body.char_indices() {
                    let rest = body.get(offset + letter.len_utf8()..).unwrap_or_default();
                    if self.short_values.contains(letter) {
                        let value = if rest.is_empty() {
                            at += 1;
                            args.get(at - 1).cloned()
                        } else {
                            Some(rest.to_owned())
                        };
                        parsed.options.push(Opt {
                            flag: format!("-{letter}"),
                            value,
                            words: start..at,
                        });
                        break;
                    }
                    if self.short_optional.contains(letter) {
                        parsed.options.push(Opt {
                            flag: format!("-{letter}"),
                            value: (!rest.is_empty()).then(|| rest.to_owned()),
                            words: start..at,
                        });
                        break;
                    }
                    parsed.options.push(Opt {
                        flag: format!("-{letter}"),
                        value: None,
                        words: start..at,
                    });
                }
                continue;
            }
            if self.stops_at_positional {
                parsed.rest = at - 1;
                return parsed;
            }
            parsed.positionals.push(word.to_owned());
        }
        parsed
    }
}

/// One option as the program reads it: `-x` for every option with a short
/// form (long forms are mapped), `--name` in full for the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    pub flag: String,
    pub value: Option<String>,
    /// The words of `args` it was read from: its own word (a cluster of
    /// short options is one word) through its value.
    pub words: std::ops::Range<usize>,
}

/// What a program's argv holds.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub options: Vec<Opt>,
    /// Positionals before `rest` (all of them, for a program whose options
    /// and positionals mix).
    pub positionals: Vec<String>,
    /// Index in `args` of the first word after the options, for a program
    /// whose options stop at the first positional.
    pub rest: usize,
}

impl Parsed {
    pub fn has(&self, flag: &str) -> bool {
        self.options.iter().any(|o| o.flag == flag)
    }

    /// The value of the last of `flag` given (the one the program keeps).
    pub fn value(&self, flag: &str) -> Option<&str> {
        self.options.iter().rev().find(|o| o.flag == flag).and_then(|o| o.value.as_deref())
    }

    /// Every option among `flags`, in the order given.
    pub fn named<'a>(&'a self, flags: &'a [&'a str]) -> impl Iterator<Item = &'a Opt> + 'a {
        self.options.iter().filter(|option| flags.contains(&option.flag.as_str()))
    }

    /// The values of every option among `flags` (a repeated one adds up:
    /// `sed -e A -e B`), in the order given.
    pub fn values<'a>(&'a self, flags: &'a [&'a str]) -> impl Iterator<Item = &'a str> + 'a {
        self.named(flags).filter_map(|option| option.value.as_deref())
    }
}

/// A wrapper's grammar: options stop at its command.
const fn wrapper(
    short_values: &'static str,
    short_optional: &'static str,
    long: &'static [Long],
) -> Grammar {
    Grammar {
        short_values,
        short_optional,
        long,
        abbreviates: true,
        stops_at_positional: true,
        unlisted: Unlisted::Flag,
        refuses_unlisted: false,
    }
}

/// A tool's grammar: options and positionals mix.
pub(super) const fn tool(short_values: &'static str, long: &'static [Long]) -> Grammar {
    Grammar {
        short_values,
        short_optional: "",
        long,
        abbreviates: true,
        stops_at_positional: false,
        unlisted: Unlisted::Flag,
        refuses_unlisted: false,
    }
}

pub const ENV: Grammar = wrapper(
    "uCSa",
    "",
    &[
        same("ignore-environment", 'i'),
        same("null", '0'),
        same_value("unset", 'u'),
        same_value("chdir", 'C'),
        same_value("split-string", 'S'),
        same("debug", 'v'),
        same_value("argv0", 'a'),
        optional("block-signal"),
        optional("default-signal"),
        optional("ignore-signal"),
        flag("list-signal-handling"),
    ],
);

pub const XARGS: Grammar = wrapper(
    "aJdEILnPsRS",
    "eil",
    &[
        same("null", '0'),
        same_value("arg-file", 'a'),
        same_value("delimiter", 'd'),
        same_optional("eof", 'e'),
        same_optional("replace", 'i'),
        same_optional("max-lines", 'l'),
        same_value("max-args", 'n'),
        same_value("max-procs", 'P'),
        same_value("max-chars", 's'),
        same("interactive", 'p'),
        same("verbose", 't'),
        same("no-run-if-empty", 'r'),
        same("exit", 'x'),
        same("open-tty", 'o'),
        flag("show-limits"),
        value("process-slot-var"),
    ],
);

pub const PARALLEL: Grammar = wrapper(
    "aCdEIjPLnNSsBM",
    "el",
    &[
        same_value("arg-file", 'a'),
        same_value("colsep", 'C'),
        same_value("delimiter", 'd'),
        same_value("jobs", 'j'),
        same_value("max-lines", 'L'),
        same_value("max-args", 'n'),
        same_value("max-replace-args", 'N'),
        same_value("sshlogin", 'S'),
        same_value("max-chars", 's'),
        same_value("basefile", 'B'),
        value("results"),
        value("res"),
        value("workdir"),
        value("wd"),
        value("tagstring"),
        value("env"),
        value("timeout"),
        value("joblog"),
        value("load"),
        value("memfree"),
        value("nice"),
        value("transferfile"),
        value("tf"),
        value("return"),
        value("retries"),
        value("sshloginfile"),
        value("slf"),
        value("tmpdir"),
        value("halt"),
        value("delay"),
        value("header"),
        value("rpl"),
        value("block"),
        value("recstart"),
        value("recend"),
        value("arg-sep"),
        value("arg-file-sep"),
        value("termseq"),
        value("limit"),
        value("sqlmaster"),
        value("sqlworker"),
        value("sqlandworker"),
        value("ssh"),
        value("semaphorename"),
        value("id"),
        value("seqreplace"),
        value("filter"),
        value("tee"),
        value("shebang-wrap"),
        value("cleanup"),
        value("profile"),
        flag("eta"),
        same("null", '0'),
        same("keep-order", 'k'),
        same("ungroup", 'u'),
        same("quote", 'q'),
        same("verbose", 'v'),
        flag("dry-run"),
        flag("pipe"),
        flag("tag"),
        flag("will-cite"),
        flag("bar"),
        flag("progress"),
        flag("line-buffer"),
        flag("group"),
        flag("xargs"),
    ],
);

pub const FLOCK: Grammar = wrapper(
    "wEc",
    "",
    &[
        same("shared", 's'),
        same("exclusive", 'x'),
        same("unlock", 'u'),
        same("nonblock", 'n'),
        same("close", 'o'),
        same_value("timeout", 'w'),
        same_value("conflict-exit-code", 'E'),
        same("no-fork", 'F'),
        same("verbose", 'v'),
        same_value("command", 'c'),
    ],
);

pub const TIMEOUT: Grammar = wrapper(
    "sk",
    "",
    &[
        same_value("signal", 's'),
        same_value("kill-after", 'k'),
        flag("foreground"),
        flag("preserve-status"),
        same("verbose", 'v'),
    ],
);

pub const NICE: Grammar = wrapper("n", "", &[same_value("adjustment", 'n')]);
pub const IONICE: Grammar = wrapper(
    "cnpPu",
    "",
    &[
        same_value("class", 'c'),
        same_value("classdata", 'n'),
        same_value("pid", 'p'),
        same_value("pgid", 'P'),
        same_value("uid", 'u'),
        same("ignore", 't'),
    ],
);
pub const STDBUF: Grammar = wrapper(
    "ioe",
    "",
    &[same_value("input", 'i'), same_value("output", 'o'), same_value("error", 'e')],
);
pub const TIME: Grammar = wrapper(
    "fo",
    "",
    &[
        same_value("format", 'f'),
        same_value("output", 'o'),
        same("append", 'a'),
        same("portability", 'p'),
        same("verbose", 'v'),
        same("quiet", 'q'),
    ],
);
pub const SETSID: Grammar =
    wrapper("", "", &[same("ctty", 'c'), same("fork", 'f'), same("wait", 'w')]);
pub const CHROOT: Grammar =
    wrapper("", "", &[value("userspec"), value("groups"), flag("skip-chdir")]);
pub const NSENTER: Grammar = wrapper(
    "tSGW",
    "muinpUCTrw",
    &[
        same_value("target", 't'),
        same_optional("mount", 'm'),
        same_optional("uts", 'u'),
        same_optional("ipc", 'i'),
        same_optional("net", 'n'),
        same_optional("pid", 'p'),
        same_optional("user", 'U'),
        same_optional("cgroup", 'C'),
        same_optional("time", 'T'),
        same_value("setuid", 'S'),
        same_value("setgid", 'G'),
        same_optional("root", 'r'),
        same_optional("wd", 'w'),
        same_value("wdns", 'W'),
        flag("preserve-credentials"),
        same("all", 'a'),
        same("no-fork", 'F'),
        same("follow-context", 'Z'),
    ],
);
pub const UNSHARE: Grammar = wrapper(
    "SGRw",
    "muinpUCT",
    &[
        same_optional("mount", 'm'),
        same_optional("uts", 'u'),
        same_optional("ipc", 'i'),
        same_optional("net", 'n'),
        same_optional("pid", 'p'),
        same_optional("user", 'U'),
        same_optional("cgroup", 'C'),
        same_optional("time", 'T'),
        same("fork", 'f'),
        same("map-root-user", 'r'),
        same("map-current-user", 'c'),
        optional("kill-child"),
        optional("mount-proc"),
        value("propagation"),
        value("setgroups"),
        same_value("setuid", 'S'),
        same_value("setgid", 'G'),
        same_value("root", 'R'),
        same_value("wd", 'w'),
        value("map-user"),
        value("map-group"),
        value("map-users"),
        value("map-groups"),
        flag("keep-caps"),
        optional("monotonic"),
        optional("boottime"),
    ],
);
pub const WATCH: Grammar = wrapper(
    "n",
    "d",
    &[
        same_value("interval", 'n'),
        same_optional("differences", 'd'),
        same("beep", 'b'),
        same("errexit", 'e'),
        same("chgexit", 'g'),
        same("color", 'c'),
        same("no-title", 't'),
        same("exec", 'x'),
        same("precise", 'p'),
        same("no-wrap", 'w'),
    ],
);
pub const SUDO: Grammar = wrapper(
    "ugCDhprtTUR",
    "",
    &[
        same_value("user", 'u'),
        same_value("group", 'g'),
        same_value("close-from", 'C'),
        same_value("chdir", 'D'),
        same_value("host", 'h'),
        same_value("prompt", 'p'),
        same_value("role", 'r'),
        same_value("type", 't'),
        same_value("command-timeout", 'T'),
        same_value("other-user", 'U'),
        same_value("chroot", 'R'),
        same("login", 'i'),
        same("shell", 's'),
        same("edit", 'e'),
        same("preserve-env", 'E'),
        same("background", 'b'),
        same("non-interactive", 'n'),
        same("stdin", 'S'),
    ],
);
pub const EXEC: Grammar = wrapper("a", "", &[]);
/// bash, sh, zsh, dash, ksh: `-o NAME`, `-O NAME` take a value (`+o`,
/// `+O` as well, read by [`shell`]).
pub const SHELL: Grammar = wrapper(
    "oO",
    "",
    &[
        value("init-file"),
        value("rcfile"),
        flag("login"),
        flag("noprofile"),
        flag("norc"),
        flag("posix"),
        flag("restricted"),
        flag("verbose"),
        flag("debugger"),
        flag("dump-strings"),
        flag("dump-po-strings"),
        flag("noediting"),
        flag("pretty-print"),
        same("command", 'c'),
        value("emulate"),
    ],
);
pub const SSH: Grammar = wrapper("BbcDEeFIiJLlmOoPpQRSWw", "", &[]);
/// npx, bunx, pnpx, `npm exec`, `pnpm dlx`, `yarn dlx`: options up to the
/// package's command; `-c`/`--call` runs a shell string instead.
pub const PACKAGE_RUNNER: Grammar = wrapper(
    "pc",
    "",
    &[
        same_value("package", 'p'),
        same_value("call", 'c'),
        value("prefix"),
        value("registry"),
        value("cache"),
        value("userconfig"),
        value("workspace"),
        value("node-options"),
        value("shell"),
        flag("yes"),
        flag("no"),
        flag("quiet"),
        flag("silent"),
        flag("ignore-existing"),
        flag("workspaces"),
    ],
);
/// make (GNU): `-f FILE` (`-` is standard input), `-C DIR`, `-jN`,
/// `-E TEXT`/`--eval TEXT` (4.4).
pub const MAKE: Grammar = Grammar {
    short_values: "CfIoWE",
    short_optional: "jl",
    long: &[
        same_value("directory", 'C'),
        same_value("file", 'f'),
        same_value("makefile", 'f'),
        same_value("include-dir", 'I'),
        same_value("old-file", 'o'),
        same_value("assume-old", 'o'),
        same_value("what-if", 'W'),
        same_value("new-file", 'W'),
        same_value("assume-new", 'W'),
        same_value("eval", 'E'),
        same_optional("jobs", 'j'),
        same_optional("load-average", 'l'),
    ],
    abbreviates: true,
    stops_at_positional: false,
    unlisted: Unlisted::Flag,
    refuses_unlisted: false,
};
/// vim, nvim, vi, view, ex: `-c CMD`, `--cmd CMD`, `+CMD` (a positional);
/// `-S` and `-q` take a file only when one follows, so they are read as
/// flags (the file is a positional). Long options are not abbreviated.
pub const VIM: Grammar = Grammar {
    short_values: "cTuUitwW",
    short_optional: "V",
    long: &[
        value("cmd"),
        value("servername"),
        value("remote-send"),
        value("remote-expr"),
        value("startuptime"),
        value("listen"),
    ],
    abbreviates: false,
    stops_at_positional: false,
    unlisted: Unlisted::Flag,
    refuses_unlisted: false,
};
/// man: `-P PAGER`, `-H[BROWSER]`.
pub const MAN: Grammar = Grammar {
    short_values: "CMPSeLmprER",
    short_optional: "HTX",
    long: &[
        same_value("pager", 'P'),
        same_optional("html", 'H'),
        same_value("config-file", 'C'),
        same_value("manpath", 'M'),
        same_value("sections", 'S'),
        same_value("extension", 'e'),
        same_value("locale", 'L'),
        same_value("systems", 'm'),
        same_value("preprocessor", 'p'),
        same_value("prompt", 'r'),
        same_value("encoding", 'E'),
        same_value("recode", 'R'),
        same_optional("troff-device", 'T'),
        same_optional("gxditview", 'X'),
    ],
    abbreviates: true,
    stops_at_positional: false,
    unlisted: Unlisted::Flag,
    refuses_unlisted: false,
};
/// gdb (`-ex CMD`, `--eval-command=CMD`; one dash or two).
pub const GDB: Grammar = Grammar {
    short_values: "xbcdpse",
    short_optional: "",
    long: &[
        value("ex"),
        value("eval-command"),
        value("iex"),
        value("init-eval-command"),
        value("command"),
        value("init-command"),
        value("pid"),
        value("core"),
        value("cd"),
        value("directory"),
        value("symbols"),
        value("exec"),
        value("se"),
        value("tty"),
        value("data-directory"),
    ],
    abbreviates: false,
    stops_at_positional: false,
    unlisted: Unlisted::Flag,
    refuses_unlisted: false,
};
/// lldb (`-o CMD`, `--one-line CMD`, `-O`, `-k`, `-K`).
pub const LLDB: Grammar = Grammar {
    short_values: "oOkKsSafpnc",
    short_optional: "",
    long: &[
        same_value("one-line", 'o'),
        same_value("one-line-before-file", 'O'),
        same_value("one-line-on-crash", 'k'),
        same_value("source-on-crash", 'K'),
        same_value("source", 's'),
        same_value("source-before-file", 'S'),
        same_value("arch", 'a'),
        same_value("file", 'f'),
        same_value("attach-pid", 'p'),
        same_value("attach-name", 'n'),
        same_value("core", 'c'),
    ],
    abbreviates: false,
    stops_at_positional: false,
    unlisted: Unlisted::Flag,
    refuses_unlisted: false,
};
pub const DOCKER_RUN: Grammar = wrapper(
    "aceEhlmpuvw",
    "",
    &[
        value("add-host"),
        same_value("attach", 'a'),
        value("cap-add"),
        value("cap-drop"),
        value("cgroup-parent"),
        value("cidfile"),
        value("cpus"),
        value("cpu-shares"),
        same_value("cpu-shares", 'c'),
        value("cpuset-cpus"),
        value("device"),
        value("dns"),
        same_value("env", 'e'),
        value("entrypoint"),
        value("env-file"),
        value("expose"),
        value("gpus"),
        value("group-add"),
        same_value("hostname", 'h'),
        value("ipc"),
        same_value("label", 'l'),
        value("log-driver"),
        value("log-opt"),
        same_value("memory", 'm'),
        value("mount"),
        value("name"),
        value("network"),
        value("net"),
        value("pid"),
        value("platform"),
        same_value("publish", 'p'),
        value("pull"),
        value("restart"),
        value("runtime"),
        value("security-opt"),
        value("shm-size"),
        value("stop-signal"),
        value("tmpfs"),
        value("ulimit"),
        same_value("user", 'u'),
        value("userns"),
        same_value("volume", 'v'),
        value("volumes-from"),
        same_value("workdir", 'w'),
        value("detach-keys"),
        value("health-cmd"),
        value("uts"),
        value("label-file"),
        same("detach", 'd'),
        same("interactive", 'i'),
        same("tty", 't'),
        flag("rm"),
        flag("privileged"),
        same("publish-all", 'P'),
        flag("init"),
        flag("read-only"),
    ],
);
pub const DOCKER_EXEC: Grammar = wrapper(
    "euw",
    "",
    &[
        same_value("env", 'e'),
        same_value("user", 'u'),
        same_value("workdir", 'w'),
        value("env-file"),
        value("detach-keys"),
        same("detach", 'd'),
        same("interactive", 'i'),
        same("tty", 't'),
        flag("privileged"),
    ],
);
pub const KUBECTL_EXEC: Grammar = wrapper(
    "cnf",
    "",
    &[
        same_value("container", 'c'),
        same_value("namespace", 'n'),
        same_value("filename", 'f'),
        value("pod-running-timeout"),
        value("context"),
        value("kubeconfig"),
        value("cluster"),
        value("user"),
        value("server"),
        same("stdin", 'i'),
        same("tty", 't'),
        same("quiet", 'q'),
    ],
);
pub const FD: Grammar = tool(
    "etdEjSocxX",
    &[
        same_value("extension", 'e'),
        same_value("type", 't'),
        same_value("max-depth", 'd'),
        same_value("exclude", 'E'),
        same_value("threads", 'j'),
        same_value("size", 'S'),
        same_value("owner", 'o'),
        same_value("color", 'c'),
        value("min-depth"),
        value("exact-depth"),
        value("changed-within"),
        value("changed-before"),
        value("base-directory"),
        value("search-path"),
        value("max-results"),
        value("format"),
        value("path-separator"),
        value("ignore-file"),
        value("batch-size"),
        same_value("exec", 'x'),
        same_value("exec-batch", 'X'),
    ],
);
/// tar's options as tar reads them: a first word of letters without a
/// dash is a cluster of options (`tar xzf a.tgz` is `tar -xzf a.tgz`).
pub fn tar(args: &[String]) -> Parsed {
    let mut args = args.to_vec();
    if let Some(first) = args
        .first_mut()
        .filter(|w| !w.starts_with('-') && w.chars().all(|c| c.is_ascii_alphabetic()))
    {
        first.insert(0, '-');
    }
    TAR.parse(&args)
}

pub const TAR: Grammar = tool(
    "fCTXIFbLKNVgH",
    &[
        same_value("file", 'f'),
        same_value("directory", 'C'),
        same_value("files-from", 'T'),
        same_value("exclude-from", 'X'),
        same_value("use-compress-program", 'I'),
        same_value("info-script", 'F'),
        same_value("new-volume-script", 'F'),
        same_value("blocking-factor", 'b'),
        same_value("tape-length", 'L'),
        same_value("starting-file", 'K'),
        same_value("newer", 'N'),
        same_value("label", 'V'),
        same_value("listed-incremental", 'g'),
        same_value("format", 'H'),
        value("to-command"),
        value("checkpoint-action"),
        value("rsh-command"),
        value("rmt-command"),
        value("exclude"),
        value("transform"),
        value("xform"),
        value("strip-components"),
        value("owner"),
        value("group"),
        value("mode"),
        value("mtime"),
        value("suffix"),
        value("backup"),
        optional("checkpoint"),
        same("extract", 'x'),
        same("get", 'x'),
        same("create", 'c'),
        same("list", 't'),
        same("append", 'r'),
        same("update", 'u'),
        flag("delete"),
        same("verbose", 'v'),
        same("gzip", 'z'),
        same("bzip2", 'j'),
        same("xz", 'J'),
        flag("zstd"),
        same("compress", 'Z'),
        same("auto-compress", 'a'),
        flag("remove-files"),
        flag("overwrite"),
        same("unlink-first", 'U'),
        same("absolute-names", 'P'),
        same("keep-old-files", 'k'),
        flag("recursive-unlink"),
        same("to-stdout", 'O'),
        flag("force-local"),
    ],
);
/// GNU grep: `-e PATTERN` and `-f FILE` (in any cluster: `-rf .env`)
/// give the pattern, so the first positional is then a file.
const GREP: Grammar = tool(
    "efmABCDd",
    &[
        same_value("regexp", 'e'),
        same_value("file", 'f'),
        same_value("max-count", 'm'),
        same_value("after-context", 'A'),
        same_value("before-context", 'B'),
        same_value("context", 'C'),
        same_value("devices", 'D'),
        same_value("directories", 'd'),
        value("include"),
        value("exclude"),
        value("exclude-dir"),
        value("exclude-from"),
        value("label"),
        value("binary-files"),
    ],
);
/// ripgrep, read the same way as grep.
const RG: Grammar = tool(
    "efgtTmABCjMErd",
    &[
        same_value("regexp", 'e'),
        same_value("file", 'f'),
        same_value("glob", 'g'),
        same_value("type", 't'),
        same_value("type-not", 'T'),
        same_value("max-count", 'm'),
        same_value("after-context", 'A'),
        same_value("before-context", 'B'),
        same_value("context", 'C'),
        same_value("threads", 'j'),
        same_value("max-columns", 'M'),
        same_value("encoding", 'E'),
        same_value("replace", 'r'),
        same_value("max-depth", 'd'),
        value("iglob"),
        value("ignore-file"),
        value("type-add"),
        value("sort"),
        value("sortr"),
        value("color"),
    ],
);
pub const RSYNC: Grammar = tool(
    "eBfTM",
    &[
        same_value("rsh", 'e'),
        value("rsync-path"),
        same_value("filter", 'f'),
        value("exclude"),
        value("include"),
        value("exclude-from"),
        value("include-from"),
        same_value("temp-dir", 'T'),
        value("backup-dir"),
        value("suffix"),
        value("compare-dest"),
        value("copy-dest"),
        value("link-dest"),
        value("files-from"),
        value("chmod"),
        value("chown"),
        value("log-file"),
        value("password-file"),
        value("port"),
        same_value("remote-option", 'M'),
        same_value("block-size", 'B'),
        same("recursive", 'r'),
        same("archive", 'a'),
        same("verbose", 'v'),
        same("dry-run", 'n'),
        same("compress", 'z'),
        same("backup", 'b'),
        flag("delete"),
        flag("delete-before"),
        flag("delete-during"),
        flag("delete-delay"),
        flag("delete-after"),
        flag("delete-excluded"),
        flag("remove-source-files"),
        flag("force"),
        flag("ignore-existing"),
        flag("existing"),
    ],
);
const RM: Grammar = tool(
    "",
    &[
        same("force", 'f'),
        optional("interactive"),
        flag("one-file-system"),
        flag("no-preserve-root"),
        optional("preserve-root"),
        same("recursive", 'r'),
        same("dir", 'd'),
        same("verbose", 'v'),
    ],
);
const CHMOD: Grammar = tool(
    "",
    &[
        same("recursive", 'R'),
        same("changes", 'c'),
        same("silent", 'f'),
        same("quiet", 'f'),
        same("verbose", 'v'),
        value("reference"),
        flag("preserve-root"),
        flag("no-preserve-root"),
    ],
);
const CHOWN: Grammar = tool(
    "",
    &[
        same("recursive", 'R'),
        same("changes", 'c'),
        same("silent", 'f'),
        same("quiet", 'f'),
        same("verbose", 'v'),
        value("reference"),
        flag("preserve-root"),
        flag("no-preserve-root"),
        value("from"),
        flag("dereference"),
        same("no-dereference", 'h'),
    ],
);
const CP: Grammar = tool(
    "tS",
    &[
        same("recursive", 'R'),
        same("force", 'f'),
        same("archive", 'a'),
        same("interactive", 'i'),
        same("no-clobber", 'n'),
        same_value("target-directory", 't'),
        flag("remove-destination"),
        optional("backup"),
        same("link", 'l'),
        same("symbolic-link", 's'),
        optional("update"),
        same("verbose", 'v'),
        optional("preserve"),
        same("no-dereference", 'P'),
        same("dereference", 'L'),
        flag("parents"),
        same_value("suffix", 'S'),
        same("one-file-system", 'x'),
        value("sparse"),
        optional("reflink"),
        same("no-target-directory", 'T'),
        flag("strip-trailing-slashes"),
        flag("attributes-only"),
        flag("copy-contents"),
    ],
);
const INSTALL: Grammar = tool(
    "gmoSt",
    &[
        optional("backup"),
        same("compare", 'C'),
        same("directory", 'd'),
        same_value("group", 'g'),
        same_value("mode", 'm'),
        same_value("owner", 'o'),
        same("preserve-timestamps", 'p'),
        same("strip", 's'),
        value("strip-program"),
        same_value("suffix", 'S'),
        same_value("target-directory", 't'),
        same("no-target-directory", 'T'),
        same("verbose", 'v'),
        flag("preserve-context"),
        optional("context"),
    ],
);
const LN: Grammar = tool(
    "St",
    &[
        optional("backup"),
        same("directory", 'd'),
        same("force", 'f'),
        same("interactive", 'i'),
        same("logical", 'L'),
        same("no-dereference", 'n'),
        same("physical", 'P'),
        same("relative", 'r'),
        same("symbolic", 's'),
        same_value("suffix", 'S'),
        same_value("target-directory", 't'),
        same("no-target-directory", 'T'),
        same("verbose", 'v'),
    ],
);
/// scp (OpenSSH): short options only; `-S` names the program it connects
/// through, `-o` an ssh option.
const SCP: Grammar = tool("cDFiJloPSX", &[]);
const MV: Grammar = tool(
    "tS",
    &[
        same("force", 'f'),
        same("interactive", 'i'),
        same("no-clobber", 'n'),
        same_value("target-directory", 't'),
        optional("backup"),
        same_value("suffix", 'S'),
        optional("update"),
        same("verbose", 'v'),
        flag("strip-trailing-slashes"),
        same("no-target-directory", 'T'),
        flag("exchange"),
        flag("no-copy"),
    ],
);
const GIT_RESET: Grammar = tool(
    "",
    &[
        flag("hard"),
        flag("soft"),
        flag("mixed"),
        flag("merge"),
        flag("keep"),
        same("quiet", 'q'),
        same("patch", 'p'),
        flag("no-refresh"),
        flag("refresh"),
        optional("recurse-submodules"),
        value("pathspec-from-file"),
        flag("pathspec-file-nul"),
        same("intent-to-add", 'N'),
    ],
);
const GIT_CLEAN: Grammar = tool(
    "e",
    &[
        same("force", 'f'),
        same("dry-run", 'n'),
        same("quiet", 'q'),
        same_value("exclude", 'e'),
        same("interactive", 'i'),
    ],
);
const GIT_CHECKOUT: Grammar = tool(
    "bBU",
    &[
        same_value("unified", 'U'),
        value("inter-hunk-context"),
        same("force", 'f'),
        flag("ours"),
        flag("theirs"),
        optional("track"),
        flag("detach"),
        value("orphan"),
        same("merge", 'm'),
        same("patch", 'p'),
        same("quiet", 'q'),
        flag("overwrite-ignore"),
        flag("ignore-other-worktrees"),
        value("conflict"),
        flag("no-track"),
        flag("guess"),
        optional("recurse-submodules"),
        value("pathspec-from-file"),
        flag("progress"),
        flag("ignore-skip-worktree-bits"),
    ],
);
const GIT_SWITCH: Grammar = tool(
    "cC",
    &[
        same_value("create", 'c'),
        same_value("force-create", 'C'),
        same("detach", 'd'),
        flag("discard-changes"),
        same("force", 'f'),
        same("merge", 'm'),
        value("orphan"),
        same("quiet", 'q'),
        optional("track"),
        flag("guess"),
        value("conflict"),
        flag("progress"),
        optional("recurse-submodules"),
        flag("ignore-other-worktrees"),
    ],
);
const GIT_TAG: Grammar = tool(
    "umF",
    &[
        same("annotate", 'a'),
        same("sign", 's'),
        flag("no-sign"),
        same_value("local-user", 'u'),
        same("force", 'f'),
        same("delete", 'd'),
        same("verify", 'v'),
        same("list", 'l'),
        same_value("message", 'm'),
        same_value("file", 'F'),
        value("trailer"),
        same("edit", 'e'),
        value("cleanup"),
        flag("create-reflog"),
        value("sort"),
        value("format"),
        optional("color"),
        optional("column"),
        same("ignore-case", 'i'),
        flag("omit-empty"),
        optional("contains"),
        optional("no-contains"),
        optional("merged"),
        optional("no-merged"),
        optional("points-at"),
    ],
);
const GIT_RESTORE: Grammar = tool(
    "sU",
    &[
        same_value("unified", 'U'),
        value("inter-hunk-context"),
        same_value("source", 's'),
        same("staged", 'S'),
        same("worktree", 'W'),
        flag("ours"),
        flag("theirs"),
        same("merge", 'm'),
        value("conflict"),
        same("patch", 'p'),
        same("quiet", 'q'),
        flag("overlay"),
        flag("no-overlay"),
        flag("ignore-unmerged"),
        flag("ignore-skip-worktree-bits"),
        optional("recurse-submodules"),
        value("pathspec-from-file"),
        flag("progress"),
    ],
);
const GIT_RM: Grammar = tool(
    "",
    &[
        same("force", 'f'),
        same("dry-run", 'n'),
        flag("cached"),
        flag("ignore-unmatch"),
        flag("sparse"),
        same("quiet", 'q'),
        value("pathspec-from-file"),
        flag("pathspec-file-nul"),
    ],
);
/// The options of git's commands that name a program or shell text git
/// runs, with the grammar that reads each command's options (its short
/// options that take a value included, so a cluster ends where git ends
/// it: `git clone -bu x` names the branch `u`). Transport programs (the
/// other end of a connection) and commands run as git works are apart:
/// the first are settings of the connection, the second the work.
pub(super) fn git_transport_options(
    subcommand: &str,
) -> Option<(&'static Grammar, &'static [&'static str])> {
    const FETCH: Grammar = tool("o", &[value("upload-pack"), value("exec")]);
    const CLONE: Grammar = tool("bcjou", &[same_value("upload-pack", 'u'), value("exec")]);
    const PUSH: Grammar = tool("o", &[value("receive-pack"), value("exec")]);
    const ARCHIVE: Grammar = tool("o", &[value("exec"), value("remote")]);
    Some(match subcommand {
        "clone" => (&CLONE, &["-u", "--exec"]),
        "fetch" | "pull" | "ls-remote" | "fetch-pack" => (&FETCH, &["--upload-pack", "--exec"]),
        "push" | "send-pack" => (&PUSH, &["--receive-pack", "--exec"]),
        "archive" => (&ARCHIVE, &["--exec"]),
        _ => return None,
    })
}

/// See [`git_transport_options`]: `rebase -x`/`--exec`, `difftool
/// -x`/`--extcmd` and `filter-branch`'s `--*-filter`.
pub(super) fn git_command_options(
    subcommand: &str,
) -> Option<(&'static Grammar, &'static [&'static str])> {
    const REBASE: Grammar = tool("sXCx", &[same_value("exec", 'x')]);
    const DIFFTOOL: Grammar = tool("tx", &[same_value("extcmd", 'x')]);
    const FILTERS: [&str; 7] = [
        "--env-filter",
        "--tree-filter",
        "--index-filter",
        "--parent-filter",
        "--msg-filter",
        "--commit-filter",
        "--tag-name-filter",
    ];
    const FILTER_BRANCH: Grammar = tool(
        "d",
        &[
            value("env-filter"),
            value("tree-filter"),
            value("index-filter"),
            value("parent-filter"),
            value("msg-filter"),
            value("commit-filter"),
            value("tag-name-filter"),
        ],
    );
    Some(match subcommand {
        "rebase" => (&REBASE, &["-x"]),
        "difftool" => (&DIFFTOOL, &["-x"]),
        "filter-branch" => (&FILTER_BRANCH, &FILTERS),
        _ => return None,
    })
}

const GIT_PUSH: Grammar = tool(
    "o",
    &[
        same("force", 'f'),
        optional("force-with-lease"),
        flag("force-if-includes"),
        same("delete", 'd'),
        flag("mirror"),
        flag("all"),
        flag("branches"),
        flag("tags"),
        flag("follow-tags"),
        flag("prune"),
        flag("no-verify"),
        flag("verify"),
        same("set-upstream", 'u'),
        value("repo"),
        same("dry-run", 'n'),
        flag("porcelain"),
        same("verbose", 'v'),
        same("quiet", 'q'),
        flag("atomic"),
        same_value("push-option", 'o'),
        value("receive-pack"),
        value("exec"),
        optional("signed"),
        flag("thin"),
        optional("recurse-submodules"),
        flag("progress"),
    ],
);
const GIT_BRANCH: Grammar = tool(
    "u",
    &[
        same("delete", 'd'),
        same("force", 'f'),
        same("move", 'm'),
        same("copy", 'c'),
        same("list", 'l'),
        same("all", 'a'),
        same("remotes", 'r'),
        same_value("set-upstream-to", 'u'),
        flag("unset-upstream"),
        optional("track"),
        flag("no-track"),
        flag("edit-description"),
        optional("contains"),
        optional("merged"),
        optional("no-merged"),
        value("sort"),
        same("verbose", 'v'),
        same("quiet", 'q'),
        flag("show-current"),
        flag("create-reflog"),
        value("points-at"),
        value("format"),
        optional("color"),
        optional("column"),
        same("ignore-case", 'i'),
        optional("abbrev"),
        flag("recurse-submodules"),
    ],
);
/// git's own options, before its command (`git -C DIR -c KEY=VALUE log`):
/// git takes them by their exact names. An option it does not know makes
/// it refuse to run, so one not listed here is read as taking a value.
const GIT_GLOBAL: Grammar = Grammar {
    short_values: "Cc",
    short_optional: "",
    long: &[
        value("git-dir"),
        value("work-tree"),
        value("namespace"),
        value("config-env"),
        value("super-prefix"),
        value("list-cmds"),
        optional("exec-path"),
        same("paginate", 'p'),
        same("no-pager", 'P'),
        flag("bare"),
        flag("no-replace-objects"),
        flag("no-lazy-fetch"),
        flag("literal-pathspecs"),
        flag("glob-pathspecs"),
        flag("noglob-pathspecs"),
        flag("icase-pathspecs"),
        flag("no-optional-locks"),
        flag("no-advice"),
        flag("html-path"),
        flag("man-path"),
        flag("info-path"),
        same("version", 'v'),
        same("help", 'h'),
    ],
    abbreviates: false,
    stops_at_positional: true,
    unlisted: Unlisted::ValueUnlessOption,
    refuses_unlisted: true,
};
const GIT_WORKTREE: Grammar = tool(
    "b",
    &[
        same("force", 'f'),
        flag("detach"),
        flag("checkout"),
        flag("lock"),
        value("reason"),
        flag("orphan"),
        flag("track"),
        flag("guess-remote"),
        same("quiet", 'q'),
        same("dry-run", 'n'),
        same("verbose", 'v'),
        value("expire"),
    ],
);

/// curl: every short option that takes a value (`-sXGET` is `-s -X
/// GET`, `-oXDELETE` writes the file `XDELETE`). Its long options are
/// left as written, values in place.
pub const CURL: Grammar = tool("AbcCdDeEFHKmoPQrtTuUwxXyYz", &[]);
/// wget's short options that take a value (`-qO-` is `-q -O -`).
pub(super) const WGET: Grammar = tool("OoaiBtTwPUlARDXIeQ", &[]);
/// The switches the AWS CLI's parameters and global options include;
/// every other long option takes a value (`--profile dev`, `--output
/// json`, `--instance-ids i-1`).
const AWS: Grammar = argparse(
    "",
    &[
        flag("debug"),
        flag("no-verify-ssl"),
        flag("no-paginate"),
        flag("no-sign-request"),
        flag("no-cli-pager"),
        flag("cli-auto-prompt"),
        flag("recursive"),
        flag("dryrun"),
        flag("dry-run"),
        flag("quiet"),
        flag("force"),
        flag("delete"),
        flag("exact-timestamps"),
        flag("only-show-errors"),
        flag("follow-symlinks"),
        flag("summarize"),
        flag("human-readable"),
        flag("skip-final-snapshot"),
        flag("force-delete-without-recovery"),
    ],
);
/// The Azure CLI: `-n NAME`, `-g GROUP`, `-o FORMAT`, and long options
/// that take a value but for its switches.
const AZ: Grammar = argparse(
    "ngolsu",
    &[
        same("yes", 'y'),
        flag("debug"),
        flag("verbose"),
        flag("only-show-errors"),
        flag("no-wait"),
        flag("force"),
        flag("recursive"),
        flag("all"),
    ],
);
/// The Google Cloud CLI: long options that take a value but for its
/// switches.
const GCLOUD: Grammar = argparse(
    "",
    &[
        same("quiet", 'q'),
        flag("async"),
        flag("recursive"),
        flag("force"),
        flag("all"),
        flag("log-http"),
        flag("user-output-enabled"),
        flag("delete-disks"),
        flag("keep-disks"),
    ],
);

/// An argparse program's grammar: long options not listed take a value.
const fn argparse(short_values: &'static str, long: &'static [Long]) -> Grammar {
    Grammar {
        short_values,
        short_optional: "",
        long,
        abbreviates: false,
        stops_at_positional: false,
        unlisted: Unlisted::ValueUnlessOption,
        refuses_unlisted: false,
    }
}

/// The grammar of `program` (with its subcommand, for git), when its long
/// options are known.
pub fn of(program: &str, subcommand: Option<&str>) -> Option<&'static Grammar> {
    Some(match (program, subcommand) {
        ("rm", _) => &RM,
        ("chmod", _) => &CHMOD,
        ("chown" | "chgrp", _) => &CHOWN,
        ("cp", _) => &CP,
        ("mv", _) => &MV,
        ("install", _) => &INSTALL,
        ("ln", _) => &LN,
        ("scp", _) => &SCP,
        ("tar", _) => &TAR,
        ("rsync", _) => &RSYNC,
        ("xargs", _) => &XARGS,
        ("parallel", _) => &PARALLEL,
        ("env", _) => &ENV,
        ("fd" | "fdfind", _) => &FD,
        ("grep" | "egrep" | "fgrep" | "zgrep", _) => &GREP,
        ("rg", _) => &RG,
        ("curl", _) => &CURL,
        ("wget", _) => &WGET,
        ("aws", _) => &AWS,
        ("az", _) => &AZ,
        ("gcloud", _) => &GCLOUD,
        ("git", None) => &GIT_GLOBAL,
        ("git", Some("reset")) => &GIT_RESET,
        ("git", Some("clean")) => &GIT_CLEAN,
        ("git", Some("checkout")) => &GIT_CHECKOUT,
        ("git", Some("switch")) => &GIT_SWITCH,
        ("git", Some("restore")) => &GIT_RESTORE,
        ("git", Some("rm")) => &GIT_RM,
        ("git", Some("push")) => &GIT_PUSH,
        ("git", Some("branch")) => &GIT_BRANCH,
        ("git", Some("tag")) => &GIT_TAG,
        ("git", Some("worktree")) => &GIT_WORKTREE,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn a_unique_prefix_names_the_long_option() {
        assert_eq!(RM.long("recurs").and_then(|l| l.short), Some('r'));
        assert_eq!(GIT_RESET.long("har").map(|l| l.name), Some("hard"));
        assert_eq!(XARGS.long("repl").map(|l| l.name), Some("replace"));
        // `--force` is exact even though `--force-with-lease` shares it; `--forc` is ambiguous.
        assert_eq!(GIT_PUSH.long("force").map(|l| l.name), Some("force"));
        assert!(GIT_PUSH.long("forc").is_none());
        // `--quiet` and `--silent` are one option: a prefix of both is not ambiguous.
        assert!(RM.long("nothing-like-this").is_none());
    }

    #[test]
    fn values_clusters_and_the_end_of_options() {
        let parsed = XARGS.parse(&words("-0 -n1 -I {} --max-procs=4 --repl rm -rf {}"));
        assert_eq!(parsed.value("-I"), Some("{}"));
        assert_eq!(parsed.value("-n"), Some("1"));
        assert_eq!(parsed.value("-P"), Some("4"));
        assert!(parsed.has("-i"));
        assert_eq!(parsed.rest, 6);
        let shell = SHELL.parse(&words("-lc -- x"));
        assert!(shell.has("-l") && shell.has("-c"));
        assert_eq!(shell.rest, 2);
        // A value-taking letter ends the cluster and takes the rest of it.
        assert_eq!(ENV.parse(&words("-iS'rm -rf' /")).value("-S"), Some("'rm"));
        assert_eq!(TAR.parse(&words("-xf a.tar -C /")).value("-C"), Some("/"));
    }
}

//! One program that will run, and the shape rules are matched against: its
//! name (the base name of `argv[0]`, lower case), its flags (combined short
//! flags split, long forms of well-known flags mapped to their short form,
//! in any order; and as written), the operations it also names (an MCP
//! tool's own name, an SQL statement's `drop_table`), and its positional arguments in order (paths
//! normalised). Arguments that are data, not something the program acts
//! on, are set apart: everything `echo` and `printf` print, commit and tag
//! messages, the pattern of a search tool, and patterns given to options
//! (`find -name`, `git log --grep`).

use super::{
    options,
    words::{RUN_TIME_VALUE, normalize_path},
};

/// Command-line tools whose first words name what they do (`kubectl
/// delete`, `aws s3 rb`, `gcloud compute instances delete`), with how
/// many words do. git has its own reading (`executors::git`).
const ACTION_WORDS: [(&str, usize); 18] = [
    ("kubectl", 1),
    ("oc", 1),
    ("helm", 1),
    ("terraform", 1),
    ("tofu", 1),
    ("pulumi", 1),
    ("docker", 1),
    ("podman", 1),
    ("gh", 2),
    ("aws", 2),
    ("az", 2),
    ("gcloud", 2),
    ("heroku", 1),
    ("flyctl", 1),
    ("fly", 1),
    ("vercel", 1),
    ("npm", 1),
    ("cargo", 1),
];

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Command {
    /// The words as the program receives them.
    pub argv: Vec<String>,
    /// The base name of `argv[0]`, lower case.
    pub program: String,
    pub flags: Vec<String>,
    /// The option words as written, clusters whole and without a value
    /// after `=` (`-rf`, `--force-with-lease`, terraform's `-force`).
    pub written_flags: Vec<String>,
    pub positionals: Vec<String>,
    /// Values of `--name=value` flags, normalised like positionals.
    pub flag_values: Vec<String>,
    /// Arguments that are data (printed text, messages, search patterns).
    pub data: Vec<String>,
    /// The program's name is not known without running something.
    pub dynamic_program: bool,
    /// Some argument written in the action is not known without running
    /// something (a variable, a substitution). Words a runner appends at
    /// run time (`xargs`, `parallel`) are written [`RUN_TIME_VALUE`]
    /// instead, so what the command itself was given stays known:
    /// [`Command::has_unknown_arguments`] asks about both.
    pub dynamic_args: bool,
    /// The executor it was found inside (`sudo`, `bash -c`, `find -exec`…).
    pub via: Option<String>,
    /// Written all in capitals: flags are compared without case.
    pub shouted: bool,
    /// The file and line it was planted at, when it comes from a file
    /// written to run later.
    pub planted: Option<super::PlantedAt>,
    /// Whether it does what its words name or only prints its help.
    pub invocation: Invocation,
    /// Where an unquoted value not known in advance stands among its
    /// words, which the shell may split into any words, options among
    /// them. Only the commands of [`super::Analysis::possible`] have it:
    /// the policy matches them as though any options and arguments stood
    /// there.
    pub open: Option<OpenWords>,
}

/// Where the words of an unquoted value not known in advance stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpenWords {
    /// Its index in `argv`.
    pub at: usize,
    /// How many positionals come before it.
    pub after_positionals: usize,
    /// It is an option's value (`git -C $dir log`): the words it becomes
    /// may be options, but the tool's action is the one written after it.
    pub a_value: bool,
    /// They come before the end of options (`--`): they may be options.
    pub options: bool,
}

/// What running a command does, for matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Invocation {
    #[default]
    Acts,
    /// It prints its help, its version or what it holds, and stops (`git
    /// push --help`, `terraform destroy -help`, `ssh -V`, `crontab -l`):
    /// policies do not match it as the action its words name. Only where
    /// the program really stops there: a word a program would read as a
    /// file keeps it an action.
    OnlyPrints,
}

/// Programs that print help and stop at `--help` (and `help` as their
/// first positional) anywhere before `--`, whatever else is given.
const HELP_ANYWHERE: [&str; 12] = [
    "git",
    "kubectl",
    "oc",
    "gh",
    "terraform",
    "tofu",
    "az",
    "aws",
    "docker",
    "podman",
    "cargo",
    "npm",
];
/// Those of them for which `-h` is help in every subcommand.
const SHORT_HELP: [&str; 9] =
    ["git", "kubectl", "oc", "gh", "terraform", "tofu", "az", "cargo", "npm"];
/// GNU tools stop at `--help` or `--version`; their BSD namesakes read a
/// word after the first positional as a file (`rm -rf / --help` removes
/// `/` there), so only a flag before every positional counts.
const HELP_BEFORE_OPERANDS: [&str; 26] = [
    "rm", "cp", "mv", "ln", "chmod", "chown", "chgrp", "dd", "shred", "mkdir", "rmdir", "touch",
    "truncate", "install", "tee", "unlink", "find", "xargs", "tar", "rsync", "env", "ssh",
    "parallel", "timeout", "nice", "stdbuf",
];

/// Whether `argv` only asks `program` for its help or version.
fn invocation(program: &str, argv: &[String]) -> Invocation {
    let before_end: Vec<&str> =
        argv.iter().skip(1).map(String::as_str).take_while(|w| *w != "--").collect();
    // cargo's subcommands take `--version VERSION` (`cargo yank
    // --version 1.0.0`, `cargo install --version`): after the
    // subcommand it names a version to act on.
    let subcommand_at = before_end.iter().position(|w| !w.starts_with('-'));
    let anywhere = HELP_ANYWHERE.contains(&program)
        && (before_end.iter().enumerate().any(|(at, w)| {
            *w == "--help"
                || *w == "--version" && (program != "cargo" || subcommand_at.is_none_or(|s| at < s))
                || *w == "-h" && SHORT_HELP.contains(&program)
                || *w == "-help" && matches!(program, "terraform" | "tofu")
        }) || before_end.iter().find(|w| !w.starts_with('-')) == Some(&"help")
            || program == "aws" && before_end.last() == Some(&"help"));
    let before_operands = HELP_BEFORE_OPERANDS.contains(&program)
        && before_end
            .iter()
            .take_while(|w| w.starts_with('-'))
            .any(|w| matches!(*w, "--help" | "--version") || *w == "-V" && program == "ssh");
    let args = argv.get(1..).unwrap_or_default();
    if anywhere
        || before_operands
        || only_lists(program, args)
        || program == "git" && super::executors::git_config_only_reads(argv)
        || super::executors::privilege_runs_nothing(program, args)
    {
        Invocation::OnlyPrints
    } else {
        Invocation::Acts
    }
}

/// Programs that change what runs later, and the option with which they
/// only print it: `crontab -l` (`-u USER` names whose crontab), `at -l`.
/// Only that option, alone: with any other word (`crontab -l -r`, a
/// file to install) the program acts.
const LISTING_OPTIONS: [(&str, &str); 2] = [("crontab", "-l"), ("at", "-l")];

fn only_lists(program: &str, args: &[String]) -> bool {
    let Some(&(_, listing)) = LISTING_OPTIONS.iter().find(|(name, _)| *name == program) else {
        return false;
    };
    let mut listed = false;
    let mut words = args.iter().map(String::as_str);
    while let Some(word) = words.next() {
        match word {
            "-u" if program == "crontab" => {
                if words.next().is_none() {
                    return false;
                }
            }
            word if word == listing => listed = true,
            _ => return false,
        }
    }
    listed
}

/// Programs whose every argument is data.
const PRINTERS: [&str; 4] = ["echo", "printf", "print", "say"];
/// Programs whose first positional is a search pattern, not a file
/// (`search_files` is how a harness's own search tool is written).
const SEARCHERS: [&str; 9] =
    ["grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep", "git-grep", "search_files"];
/// Programs whose options are words after one dash (`xclip -selection`,
/// `find -name`), never clusters of letters.
const ONE_DASH_WORDS: [&str; 8] =
    ["xclip", "find", "java", "ffmpeg", "xwd", "xwininfo", "import", "magick"];
/// find's tests whose value is a pattern names are matched against.
pub(super) const FIND_NAME_PATTERNS: [&str; 10] = [
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
];

/// Options whose value is a pattern to match names or text against, not
/// a file: `find -name .env` reads nothing, `git log --grep .env` neither.
const PATTERN_OPTIONS: [(&str, &[&str]); 4] = [
    ("find", &FIND_NAME_PATTERNS),
    ("git", &["--grep", "--author", "--committer", "--grep-reflog", "-S", "-G"]),
    ("grep", &["--regexp"]),
    ("rg", &["--regexp"]),
];

/// Whether `option` of `program` takes a pattern (see [`PATTERN_OPTIONS`]).
fn takes_pattern(program: &str, option: &str) -> bool {
    PATTERN_OPTIONS.iter().any(|(name, options)| *name == program && options.contains(&option))
}

/// Flags whose value is a message.
const MESSAGE_FLAGS: [&str; 8] =
    ["-m", "--message", "--body", "--title", "--description", "--notes", "--comment", "--subject"];

/// Whether `word` is an option that may take the next word as its value,
/// read without the program's grammar: one written without `=`.
fn may_take_the_next_word(word: &str) -> bool {
    word.starts_with('-') && word.len() > 1 && word != "--" && !word.contains('=')
}

impl Command {
    /// A command written all in capitals (`RM -RF ~`) is read in lower
    /// case, and its flags are compared without case (`-P` may have been
    /// meant).
    pub fn new(
        argv: Vec<String>,
        dynamic_program: bool,
        dynamic_args: bool,
        via: Option<String>,
    ) -> Self {
        let shouted = argv.first().is_some_and(|first| {
            first.chars().any(|c| c.is_uppercase()) && !first.chars().any(|c| c.is_lowercase())
        });
        let argv = if shouted { argv.iter().map(|w| w.to_lowercase()).collect() } else { argv };
        let program = argv.first().map(|first| base_name(first)).unwrap_or_default();
        let mut command = Self {
            argv,
            program,
            flags: Vec::new(),
            written_flags: Vec::new(),
            positionals: Vec::new(),
            flag_values: Vec::new(),
            data: Vec::new(),
            dynamic_program,
            dynamic_args,
            via,
            shouted,
            planted: None,
            invocation: Invocation::Acts,
            open: None,
        };
        command.shape();
        command.invocation = invocation(&command.program, &command.argv);
        command
    }

    /// The same command with the words from `argv[at]` on an unquoted
    /// value not known in advance ([`Command::open`]).
    #[must_use]
    pub fn open_from(mut self, at: usize) -> Self {
        // The positionals of the words up to it, read alone.
        let positionals = |end: usize| {
            self.argv.get(..end).filter(|words| !words.is_empty()).map(|words| {
                Self::new(words.to_vec(), self.dynamic_program, false, None).positionals.len()
            })
        };
        if let (Some(before), Some(with)) = (positionals(at), positionals(at + 1)) {
            // Without a grammar, a word after an option may be its value
            // (`kubectl -n $ns get pods`) where a positional follows.
            // Unless what is written after it would make the program refuse
            // to run (`git -C $r -D main`): then the value's own words
            // are what end its options and name its command.
            let refused = before == 0
                && options::of(&self.program, None).is_some_and(|grammar| {
                    let after = self.argv.get(at + 1..).unwrap_or_default();
                    let options = after.get(..grammar.parse(after).rest).unwrap_or_default();
                    options.iter().any(|word| grammar.refuses(word))
                });
            let a_value = !refused
                && (with == before || self.may_be_a_value(at) && self.positionals.len() > with);
            let options = !self.argv.get(1..at).unwrap_or_default().iter().any(|w| w == "--");
            self.open = Some(OpenWords { at, after_positionals: before, a_value, options });
        }
        self
    }

    /// It prints its words (`echo`, `printf`), not what it reads.
    pub(crate) fn prints_its_words(&self) -> bool {
        PRINTERS.contains(&self.program.as_str()) && self.program != "say"
    }

    fn shape(&mut self) {
        let args: Vec<String> = self.argv.iter().skip(1).cloned().collect();
        if PRINTERS.contains(&self.program.as_str()) {
            self.data = args;
            return;
        }
        let searcher = SEARCHERS.contains(&self.program.as_str())
            || self.program == "git" && args.first().is_some_and(|a| a == "grep");
        // `-e PATTERN` or `-f FILE` anywhere (`grep .env -e x`, `-rf
        // .env`) gives the pattern, and `rg --files` takes none (it lists
        // what it would search): every positional is then a file.
        let mut pattern_given = searcher
            && options::of(&self.program, None).is_some_and(|grammar| {
                let parsed = grammar.parse(&args);
                parsed.has("-e") || parsed.has("-f") || parsed.has("--files")
            });
        let mut options_done = false;
        let mut words = args.iter().peekable();
        while let Some(word) = words.next() {
            if options_done || word == "-" || !word.starts_with('-') {
                let is_pattern = searcher
                    && !pattern_given
                    && !(self.program == "git" && self.positionals.is_empty());
                if is_pattern {
                    pattern_given = true;
                    self.data.push(word.clone());
                } else {
                    self.positionals.push(normalize_path(word));
                }
                continue;
            }
            if word == "--" {
                options_done = true;
                continue;
            }
            if let Some((name, value)) = word.split_once('=').filter(|_| word.starts_with("--")) {
                self.written_flags.push(name.to_owned());
                let flags = canonical_flags(&self.program, self.subcommand(), name);
                self.flags.extend(flags);
                if takes_pattern(&self.program, name) {
                    self.data.push(value.to_owned());
                } else {
                    self.flag_values.push(normalize_path(value));
                }
                continue;
            }
            self.written_flags.push(word.clone());
            if MESSAGE_FLAGS.contains(&word.as_str()) || takes_pattern(&self.program, word) {
                self.flags.push(word.clone());
                if let Some(message) = words.next() {
                    self.data.push(message.clone());
                }
                continue;
            }
            if searcher && matches!(word.as_str(), "-e" | "-f" | "--regexp" | "--file") {
                pattern_given = true;
            }
            let grammar = options::of(&self.program, self.subcommand());
            let (flags, value) = match grammar {
                Some(grammar) => {
                    let next = words.peek().map(|w| w.as_str());
                    let long_takes_next = word
                        .strip_prefix("--")
                        .is_some_and(|name| grammar.long_takes_next(name, next));
                    read_option(grammar, word, || words.next().cloned(), long_takes_next)
                }
                None => (split_short_flags(&self.program, word), None),
            };
            let pattern_value = searcher && flags.last().is_some_and(|flag| flag == "-e");
            for flag in flags {
                let canonical = canonical_flags(&self.program, self.subcommand(), &flag);
                self.flags.extend(canonical);
            }
            match value {
                Some(OptionValue::Glued(value) | OptionValue::NextWord(value)) if pattern_value => {
                    self.data.push(value)
                }
                Some(OptionValue::Glued(value)) => self.flag_values.push(normalize_path(&value)),
                // A value in a word of its own stays among the arguments
                // rules' globs see (`curl -H "X-Token: $TOKEN"`), except
                // where the first argument is the subcommand (the cloud
                // CLIs: `aws --profile dev s3 ls`), which it is not.
                Some(OptionValue::NextWord(value))
                    if grammar.is_some_and(|g| g.unlisted == options::Unlisted::Flag) =>
                {
                    self.positionals.push(normalize_path(&value))
                }
                Some(OptionValue::NextWord(value)) => self.flag_values.push(normalize_path(&value)),
                None => {}
            }
        }
        if self.program == "git" && self.subcommand() == Some("push") && git_push_forces(&self.argv)
        {
            self.flags.push("-f".into());
        }
    }

    /// Where it came from, for explanations: the executor it was found
    /// inside (`via sudo`) and the file it was planted in.
    pub fn origins(&self) -> impl Iterator<Item = String> + '_ {
        self.via
            .iter()
            .map(|via| format!("via {via}"))
            .chain(self.planted.iter().map(ToString::to_string))
    }

    /// The first positional, for programs with subcommands.
    pub fn subcommand(&self) -> Option<&str> {
        self.positionals.first().map(String::as_str)
    }

    /// Whether `argv[at]` may be the value of the option before it, as
    /// read without the program's grammar: that option is written without
    /// `=` (`kubectl -n prod get`, `gh -R o/r release view`).
    pub fn may_be_a_value(&self, at: usize) -> bool {
        options::of(&self.program, None).is_none()
            && at
                .checked_sub(1)
                .and_then(|option| self.argv.get(option))
                .is_some_and(|word| may_take_the_next_word(word))
    }

    /// For a tool of [`ACTION_WORDS`]: how many words name what it does,
    /// and the leading positionals that may be them. As many as it has
    /// action words where its option grammar is known; without it, a word
    /// after an option may be the option's value (`kubectl -n prod
    /// delete`, `gh release -R o/r delete`), so each option without `=`
    /// lets one more word be read. Every positional after an early `--`,
    /// which leaves no way to tell.
    pub fn action_words(&self) -> Option<(usize, &[String])> {
        let &(_, depth) = ACTION_WORDS.iter().find(|(tool, _)| *tool == self.program)?;
        let mut count = depth;
        if options::of(&self.program, None).is_none() {
            let (mut left, mut seen) = (depth, 0);
            for word in self.argv.iter().skip(1) {
                if left == 0 {
                    break;
                }
                match word.as_str() {
                    "--" => {
                        seen = self.positionals.len();
                        break;
                    }
                    flag if flag.starts_with('-') && flag != "-" => {
                        left += usize::from(may_take_the_next_word(flag));
                    }
                    _ => (seen, left) = (seen + 1, left - 1),
                }
            }
            count = seen;
        }
        Some((depth, self.positionals.get(..count).unwrap_or(&self.positionals)))
    }

    /// The operations it is besides its program, as a policy names
    /// operations (spec 8.7.2: `drop_*`, `delete_*`): an MCP tool call
    /// `server__tool` is also `tool`, and an SQL statement is its keyword
    /// and object joined (`drop table users` is also `drop_table`).
    pub fn operation_names(&self) -> impl Iterator<Item = String> + '_ {
        let tool = self
            .program
            .rsplit_once("__")
            .map(|(_, tool)| tool.to_owned())
            .filter(|tool| !tool.is_empty());
        let statement = super::sql::is_keyword(&self.program)
            .then(|| self.subcommand().map(|object| format!("{}_{object}", self.program)))
            .flatten();
        tool.into_iter().chain(statement)
    }

    /// Whether some argument is not known before it runs: written so, or
    /// appended at run time by a runner (`ls | xargs rm`).
    pub fn has_unknown_arguments(&self) -> bool {
        self.dynamic_args || self.argv.iter().skip(1).any(|word| is_run_time(word))
    }

    /// Every path-like argument: positionals and flag values (not data).
    pub fn arguments(&self) -> impl Iterator<Item = &str> {
        self.positionals.iter().chain(&self.flag_values).map(String::as_str)
    }
}

/// One option word as a program with a known grammar reads it: its flags
/// (a cluster split up to the first letter that takes a value) and the
/// value that letter or long option takes (the rest of the cluster, or
/// the next word, which `next` hands over; `long_takes_next` says whether
/// a long option takes it).
fn read_option(
    grammar: &options::Grammar,
    word: &str,
    next: impl FnOnce() -> Option<String>,
    long_takes_next: bool,
) -> (Vec<String>, Option<OptionValue>) {
    if word.starts_with("--") {
        let value = if long_takes_next { next().map(OptionValue::NextWord) } else { None };
        return (vec![word.to_owned()], value);
    }
    let body = word.get(1..).unwrap_or_default();
    let mut flags = Vec::new();
    for (offset, letter) in body.char_indices() {
        flags.push(format!("-{letter}"));
        let rest = body.get(offset + letter.len_utf8()..).unwrap_or_default();
        if grammar.short_values.contains(letter) {
            let value = if rest.is_empty() {
                next().map(OptionValue::NextWord)
            } else {
                Some(OptionValue::Glued(rest.to_owned()))
            };
            return (flags, value);
        }
        if grammar.short_optional.contains(letter) {
            return (flags, (!rest.is_empty()).then(|| OptionValue::Glued(rest.to_owned())));
        }
    }
    (flags, None)
}

/// Where an option's value was written.
enum OptionValue {
    /// In the option's word (`-XGET`).
    Glued(String),
    /// The word after it (`-X GET`, `--profile dev`).
    NextWord(String),
}

/// Whether `word` holds a value only known when the action runs, as the
/// analysis writes one ([`RUN_TIME_VALUE`]).
pub fn is_run_time(word: &str) -> bool {
    word.contains(RUN_TIME_VALUE)
}

/// The flags a pattern word stands for, split and mapped like a command's.
pub fn pattern_flags(program: &str, subcommand: Option<&str>, word: &str) -> Vec<String> {
    split_short_flags(program, word)
        .iter()
        .flat_map(|flag| canonical_flags(program, subcommand, flag))
        .collect()
}

/// The base name of a program path, lower case, without a Windows `.exe`:
/// `/usr/bin/RM`, `C:\\Git\\bin\\GIT.EXE` and `rm.exe` are `rm` and `git`.
pub fn base_name(word: &str) -> String {
    let base = word.rsplit(['/', '\\']).next().unwrap_or(word).to_lowercase();
    match base.strip_suffix(".exe") {
        Some(stem) if !stem.is_empty() => stem.to_owned(),
        _ => base,
    }
}

/// `-rf` is `-r -f`; a cluster holding anything but letters (`-n10`,
/// `-o/tmp/x`) stays whole, and so does every long flag and every option
/// of a program whose options are one-dash words.
fn split_short_flags(program: &str, word: &str) -> Vec<String> {
    let body = word.get(1..).unwrap_or_default();
    if word.starts_with("--")
        || body.len() < 2
        || !body.chars().all(|c| c.is_ascii_alphabetic())
        || ONE_DASH_WORDS.contains(&program)
    {
        return vec![word.to_owned()];
    }
    body.chars().map(|c| format!("-{c}")).collect()
}

/// Long flags (and other spellings) that are one short flag where the
/// program, and its subcommand when given, means the same by both. A flag
/// no entry names is taken at its word, except `--recursive` and `--force`,
/// which are `-r` and `-f` for any program ([`canonical_flag`]); only these
/// entries say what a short flag *means* ([`long_forms`]): `-f` is force
/// for `rm` and `git push`, a file for `tar` and `kubectl apply`.
struct Synonym {
    programs: &'static [&'static str],
    /// Subcommands (first positionals) it holds for; empty: any.
    subcommands: &'static [&'static str],
    spellings: &'static [&'static str],
    short: &'static str,
}

const SYNONYMS: [Synonym; 8] = [
    Synonym {
        programs: &["rm", "cp", "scp", "rsync", "shred", "unlink"],
        subcommands: &[],
        spellings: &["-R", "--recursive"],
        short: "-r",
    },
    Synonym {
        programs: &["rm", "cp", "mv", "ln", "shred", "umount", "npm", "gzip"],
        subcommands: &[],
        spellings: &["--force"],
        short: "-f",
    },
    Synonym {
        programs: &["chmod", "chown", "chgrp", "setfacl"],
        subcommands: &[],
        spellings: &["--recursive"],
        short: "-R",
    },
    Synonym {
        programs: &["git"],
        subcommands: &["push", "clean", "branch", "checkout", "add", "rm", "tag", "fetch"],
        spellings: &["--force"],
        short: "-f",
    },
    Synonym {
        programs: &["git"],
        subcommands: &["branch", "tag", "update-ref"],
        spellings: &["--delete"],
        short: "-d",
    },
    Synonym {
        programs: &["docker", "podman"],
        subcommands: &["rm", "rmi", "system", "volume", "network"],
        spellings: &["--force"],
        short: "-f",
    },
    Synonym { programs: &["zfs"], subcommands: &["destroy"], spellings: &["--force"], short: "-f" },
    Synonym {
        programs: &["helm"],
        subcommands: &["uninstall", "delete"],
        spellings: &["--force"],
        short: "-f",
    },
];

impl Synonym {
    fn holds_for(&self, program: &str, subcommand: Option<&str>) -> bool {
        self.programs.contains(&program)
            && (self.subcommands.is_empty()
                || subcommand.is_some_and(|s| self.subcommands.contains(&s)))
    }
}

/// The short form of well-known long flags, so `--recursive --force` is
/// `-r -f` where the program means the same by both; a long flag is first
/// read in full where the program accepts an abbreviation (`--recurs`).
fn canonical_flag(program: &str, subcommand: Option<&str>, flag: &str) -> String {
    let full = flag
        .strip_prefix("--")
        .and_then(|name| options::of(program, subcommand)?.long(name))
        .map(|long| match long.short {
            Some(short) => format!("-{short}"),
            None => format!("--{}", long.name),
        });
    let flag = full.as_deref().unwrap_or(flag);
    let known = SYNONYMS
        .iter()
        .find(|s| s.holds_for(program, subcommand) && s.spellings.contains(&flag))
        .map(|s| s.short);
    let any_program = match flag {
        "--recursive" => Some("-r"),
        "--force" => Some("-f"),
        _ => None,
    };
    known.or(any_program).unwrap_or(flag).to_owned()
}

/// Flags that stand for two others where a program says so: `git
/// branch`'s `-D` is `--delete --force`, `-M` is `--move --force`, `-C` is
/// `--copy --force`. A rule written either way sees every spelling.
const COMBINED: [(&str, &str, &str, [&str; 2]); 3] = [
    ("git", "branch", "-D", ["-d", "-f"]),
    ("git", "branch", "-M", ["-m", "-f"]),
    ("git", "branch", "-C", ["-c", "-f"]),
];

/// The canonical flags one option word's flag stands for: itself
/// ([`canonical_flag`]), or the two a combined flag is ([`COMBINED`]).
/// Read for every flag of every command, so it allocates no list.
fn canonical_flags(
    program: &str,
    subcommand: Option<&str>,
    flag: &str,
) -> impl Iterator<Item = String> + use<> {
    let combined = COMBINED
        .iter()
        .find(|(tool, command, short, _)| {
            *tool == program && subcommand == Some(*command) && *short == flag
        })
        .map(|(_, _, _, both)| both);
    let itself = combined.is_none().then(|| canonical_flag(program, subcommand, flag));
    itself.into_iter().chain(combined.into_iter().flatten().map(|&one| one.to_owned()))
}

/// The long flags a command's (canonical) flag stands for where its
/// program is known to mean them: `-f` of `rm` or `git push` is
/// `--force`; `-f` of `tar` is nothing more than `-f`.
pub fn long_forms<'a>(
    program: &'a str,
    subcommand: Option<&'a str>,
    flag: &'a str,
) -> impl Iterator<Item = &'static str> + 'a {
    SYNONYMS
        .iter()
        .filter(move |s| s.short == flag && s.holds_for(program, subcommand))
        .flat_map(|s| s.spellings.iter().copied().filter(|spelling| spelling.starts_with("--")))
}

/// Whether `git … push …` forces a ref: a refspec written `+SRC:DST`
/// (git's own `--force` for that ref). The first word after `push` that
/// is no option is the repository, unless `--repo` names it; the words
/// `-o`/`--push-option`, `--repo`, `--receive-pack` and `--exec` take
/// are their values, not refspecs; a dry run (`-n`, `--dry-run`) pushes
/// nothing.
fn git_push_forces(argv: &[String]) -> bool {
    const VALUED: [&str; 5] = ["-o", "--push-option", "--repo", "--receive-pack", "--exec"];
    let Some(push) = argv.iter().position(|word| word == "push") else { return false };
    let mut words = argv.iter().skip(push + 1);
    let (mut options_done, mut repository_named) = (false, false);
    let mut refspecs = Vec::new();
    while let Some(word) = words.next() {
        if !options_done && word.starts_with('-') && word != "-" {
            match word.as_str() {
                "--" => options_done = true,
                "-n" | "--dry-run" => return false,
                "--repo" => {
                    repository_named = true;
                    words.next();
                }
                _ if VALUED.contains(&word.as_str()) => drop(words.next()),
                _ if word.starts_with("--repo=") => repository_named = true,
                _ => {}
            }
            continue;
        }
        if repository_named {
            refspecs.push(word);
        } else {
            repository_named = true;
        }
    }
    refspecs.iter().any(|refspec| refspec.starts_with('+'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(line: &str) -> Command {
        Command::new(line.split_whitespace().map(str::to_owned).collect(), false, false, None)
    }

    /// A `+` forces a ref only on a refspec: not on the repository, not on
    /// an option's value, not in a dry run.
    #[test]
    fn a_push_forces_only_through_a_plus_refspec() {
        let forces = |line: &str| command(line).flags.contains(&"-f".to_owned());
        for line in [
            "git push upstream +HEAD:release",
            "git push -u fork +topic",
            "git push --repo fork +topic",
            "git push --repo=fork main +topic",
            "git push -o ci.skip fork +topic",
        ] {
            assert!(forces(line), "{line}");
        }
        for line in [
            "git push +mirror-remote",
            "git push +mirror-remote topic",
            "git push --push-option +ci.skip upstream topic",
            "git push -o +ci.skip upstream topic",
            "git push --receive-pack +x upstream topic",
            "git push --dry-run upstream +topic",
            "git push upstream topic -n +other",
        ] {
            assert!(!forces(line), "{line}");
        }
    }

    #[test]
    fn flags_are_split_mapped_and_order_free() {
        for line in
            ["rm -rf ~", "rm ~ -rf", "rm -r -f ~", "rm --recursive --force ~", "/bin/RM -Rf ~/"]
        {
            let c = command(line);
            let mut flags = c.flags.clone();
            flags.sort();
            assert_eq!(
                (c.program.as_str(), flags, c.positionals.clone()),
                ("rm", vec!["-f".to_owned(), "-r".to_owned()], vec!["~".to_owned()]),
                "{line}"
            );
        }
        assert_eq!(command("head -n10 x").flags, ["-n10"]);
        assert_eq!(command("git push origin +main").flags, ["-f"]);
        // Options that are one-dash words are not letter clusters: `-selection` holds no `-o`.
        assert_eq!(command("xclip -selection clipboard -i out.txt").flags, ["-selection", "-i"]);
        assert_eq!(pattern_flags("xclip", None, "-o"), ["-o"]);
    }

    #[test]
    fn a_short_flag_means_a_long_one_only_where_the_program_says_so() {
        let long = |program: &str, subcommand: Option<&str>, flag: &str| {
            long_forms(program, subcommand, flag).collect::<Vec<_>>()
        };
        assert_eq!(long("rm", None, "-f"), ["--force"]);
        assert_eq!(long("git", Some("push"), "-f"), ["--force"]);
        assert_eq!(long("rm", None, "-r"), ["--recursive"]);
        assert!(
            long("tar", None, "-f").is_empty()
                && long("kubectl", Some("apply"), "-f").is_empty()
                && long("git", Some("commit"), "-f").is_empty()
        );
        let terraform = command("terraform apply -force --var=x=1");
        assert_eq!(terraform.written_flags, ["-force", "--var"]);
    }

    #[test]
    fn tool_calls_and_statements_are_operations_too() {
        let names = |c: Command| c.operation_names().collect::<Vec<_>>();
        assert_eq!(names(command("postgres__drop_table users")), ["drop_table"]);
        assert_eq!(names(command("drop table users")), ["drop_table"]);
        assert!(names(command("rm -rf x")).is_empty() && names(command("a__ x")).is_empty());
    }

    #[test]
    fn abbreviated_long_flags_are_read_in_full() {
        let rm = command("rm --recurs --for ~");
        assert_eq!(
            (rm.flags.clone(), rm.positionals.clone()),
            (vec!["-r".to_owned(), "-f".to_owned()], vec!["~".to_owned()])
        );
        assert_eq!(command("git reset --har HEAD~3").flags, ["--hard"]);
        assert_eq!(command("chmod --rec 777 /").flags, ["-R"]);
        assert_eq!(command("cp --recursive a b").flags, ["-r"]);
        // Ambiguous: git refuses it, so it is not `--force`.
        assert_eq!(command("git push --forc").flags, ["--forc"]);
        assert_eq!(pattern_flags("git", Some("reset"), "--hard"), ["--hard"]);
    }

    #[test]
    fn a_combined_flag_is_both_flags_it_stands_for() {
        for line in [
            "git branch -D old",
            "git branch --delete --force old",
            "git branch -d -f old",
            "git branch -df old",
        ] {
            let flags = command(line).flags;
            assert!(flags.contains(&"-d".to_owned()) && flags.contains(&"-f".to_owned()), "{line}");
        }
        assert_eq!(pattern_flags("git", Some("branch"), "-D"), ["-d", "-f"]);
        // Only where the program says so: `git tag -D` is no such flag.
        assert_eq!(command("git branch -d old").flags, ["-d"]);
        assert_eq!(command("git tag -D v1").flags, ["-D"]);
    }

    fn assert_invocations(lines: &[&str], expected: Invocation) {
        for line in lines {
            assert_eq!(command(line).invocation, expected, "{line}");
        }
    }

    #[test]
    fn help_and_version_are_not_the_action_where_the_program_stops_there() {
        assert_invocations(
            &[
                "git push --help",
                "git help push",
                "kubectl delete ns prod -h",
                "terraform destroy -help",
                "ssh -V",
                "rm --help -rf /",
                "aws s3 rb s3://x help",
                "gh release delete v1 --help",
            ],
            Invocation::OnlyPrints,
        );
        // BSD rm removes `/` and then fails on `--help`; `--` ends the options; `-h` is not help everywhere.
        assert_invocations(
            &[
                "rm -rf / --help",
                "git push origin main -- --help",
                "docker run -h host alpine",
                "ssh host -V",
                "chmod 777 / --version",
                "git push",
            ],
            Invocation::Acts,
        );
    }

    #[test]
    fn listing_what_runs_later_is_only_printing_it() {
        assert_invocations(
            &["crontab -l", "crontab -u deploy -l", "at -l"],
            Invocation::OnlyPrints,
        );
        // A privilege wrapper with no command runs nothing as anyone.
        assert_invocations(
            &["sudo -l", "sudo -k", "sudo -V", "sudo -u", "doas -u", "sudo -h", "sudo"],
            Invocation::OnlyPrints,
        );
        assert_invocations(
            &[
                "sudo -v",
                "sudo --validate",
                "sudo -nv",
                "sudo -s",
                "sudo --login",
                "sudo -i",
                "sudo -e /etc/hosts",
                "sudo -E",
                "sudo -u root id",
                "sudo -- id",
            ],
            Invocation::Acts,
        );
        // Anything else it is given makes it act: installing, removing, editing.
        assert_invocations(
            &[
                "crontab -l -r",
                "crontab -l jobs.txt",
                "crontab -r",
                "crontab -e",
                "crontab -u -l",
                "crontab",
            ],
            Invocation::Acts,
        );
    }

    #[test]
    fn windows_names_and_case_name_the_same_program() {
        for (word, program) in [
            ("GIT.EXE", "git"),
            ("rm.exe", "rm"),
            ("C:\\Git\\bin\\git.exe", "git"),
            ("/usr/bin/RM", "rm"),
            (".exe", ".exe"),
        ] {
            assert_eq!(base_name(word), program);
        }
    }

    #[test]
    fn data_is_set_apart() {
        assert_eq!(command("echo rm -rf ~").data, ["rm", "-rf", "~"]);
        assert!(command("echo rm -rf ~").positionals.is_empty());
        let commit = command("git commit -m production");
        assert_eq!(
            (commit.positionals.clone(), commit.data.clone()),
            (vec!["commit".to_owned()], vec!["production".to_owned()])
        );
        let search = command("rg -n DROP db/schema/");
        assert_eq!(
            (search.data.clone(), search.positionals.clone()),
            (vec!["DROP".to_owned()], vec!["db/schema".to_owned()])
        );
        let git_grep = command("git grep secret src");
        assert_eq!(
            (git_grep.data.clone(), git_grep.positionals.clone()),
            (vec!["secret".to_owned()], vec!["grep".to_owned(), "src".to_owned()])
        );
    }

    /// Short options that take a value end their cluster; a value in its
    /// own word is no subcommand of a cloud CLI.
    #[test]
    fn option_values_are_read_by_each_programs_grammar() {
        let curl = command("curl -sXGET localhost:9200/x");
        assert_eq!(
            (curl.flags.clone(), curl.flag_values.clone()),
            (vec!["-s".to_owned(), "-X".to_owned()], vec!["GET".to_owned()])
        );
        assert_eq!(command("curl -fsST dump.sql https://h").flags, ["-f", "-s", "-S", "-T"]);
        let aws = command("aws --profile delete-me --output json s3 rm --recursive s3://b");
        assert_eq!(aws.subcommand(), Some("s3"));
        assert!(aws.positionals.contains(&"rm".to_owned()) && aws.flags.contains(&"-r".to_owned()));
        assert!(!aws.positionals.iter().any(|p| p.starts_with("delete")));
        // argparse takes no option as a value.
        assert_eq!(command("aws --output --debug s3 ls").subcommand(), Some("s3"));
    }

    #[test]
    fn long_flag_values_are_arguments() {
        let c = command("curl --output=~/./x https://h");
        assert_eq!(
            (c.flags.clone(), c.flag_values.clone()),
            (vec!["--output".to_owned()], vec!["~/x".to_owned()])
        );
    }
}

//! Policy patterns and how they match an [`Analysis`]. Every glob is a
//! globset glob (`*`, `?`, `[…]`, `{a,b}`, `**`), case-insensitive.
//!
//! - **Command** (`rm -rf ~`, `git push -f`, `kubectl delete *`): the first
//!   word is a glob on the program's base name; words starting with `-` are
//!   flags the command must have, in any order and position (a cluster
//!   `-rf` is `-r` and `-f`; `--recursive`, `--force` and the like are
//!   their short forms where the program means the same); the other words
//!   are globs that the command's positional arguments must match in order,
//!   others may come between and after (for git, the first is its
//!   subcommand: `git push` does not match `git stash push`; for a tool
//!   whose first words name what it does, the first is one of those:
//!   `gh release delete` does not match `gh search prs release delete`). In a
//!   positional glob that contains `/`, `*` stays within one path segment
//!   and `**` crosses them; elsewhere `*` matches anything. The program
//!   glob also sees the command's operation names (an MCP tool's own
//!   name, an SQL statement's `drop_table`), and a flag glob sees flags as
//!   written and the long flags they mean (`-f` of `rm` is `--force`). A
//!   flag with a `*` glued on (the spec's `rm -rf*`) is the flags before
//!   it followed by anything, or a flag the glob matches.
//! - **Text** (`*force*`, one word starting with `*`, the spec's reading
//!   of a glob on the action's text): a command whose program, a flag or
//!   an argument the glob matches.
//! - **Chain** (`curl * | sh`): command patterns that stages of one chain
//!   (a pipeline, a substitution handed to an executor, text fed to a
//!   shell) match in order.
//! - **Path** (`path:**/.ssh/id_*`): any file the action reads or writes,
//!   or is an effect's target (deleted, moved away, given permissions).
//!   An argument the shell would expand (`~/.ssh/id_rs?`) matches when it
//!   could expand to a matching path.
//! - **Read** (`read:**/.env`): a file the action reads (or touches
//!   otherwise), not one it only writes.
//! - **Write** (`write:~/.bashrc`): a file the action writes.
//! - **Effect** (`delete:@home`, `overwrite:/etc/**`, `permissions:@{system,system-root}`):
//!   a deletion (a move away included), an overwrite or a permission change
//!   (see `analysis::effects`) whose target is in one of the zones named
//!   after `@`, or matches the path glob.
//! - **Fact** (`fact:fork_bomb`, `fact:*`): a fact of the analysis.
//! - **Keyword** (risk rules' `keywords`): a whole word among the programs
//!   and the arguments they act on (never in data such as echoed text).
//!
//! A pattern no action could match is refused with how to write it (words
//! only the command's text has: quotes, redirections, `&&`, `$HOME`; a
//! flag's `=value`; a path glob in a form no normalised path has), and a
//! pattern that reads two ways carries a [`PatternNote`] saying how it
//! was read.

use std::collections::{HashMap, HashSet};

use globset::{Candidate, Glob, GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};

use crate::analysis::{
    Analysis, Command, EffectKind, Fact, Zone,
    command::{Invocation, OpenWords, long_forms, pattern_flags},
};

/// How a pattern was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternKind {
    Glob,
    Keyword,
}

/// A pattern could not be compiled; the message says why and how to write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError(pub String);

/// How a pattern that could be read two ways was read, for `check` to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternNote(pub String);

#[derive(Debug, Clone)]
struct CommandPattern {
    /// Index of the program glob in the set's program `GlobSet`.
    program: usize,
    /// Whether the program glob is a plain name: then the pattern is
    /// found through its program, otherwise through its first argument or
    /// flag glob when it has one (`* customer-db-*` is looked at only for
    /// commands with such an argument, not for every command).
    literal_program: bool,
    flags: Vec<String>,
    /// Indices in the set's word `GlobSet`.
    flag_globs: Vec<usize>,
    /// Flags written with a `*` glued on (`rm -rf*`).
    flag_prefixes: Vec<FlagPrefix>,
    /// Indices in the set's word `GlobSet`, in the order written.
    positionals: Vec<usize>,
    /// How many positionals come before a bare `*` or `**`: those name a
    /// tool's own command (`az devops * remove`: `devops`; `gcloud *
    /// print-access-token`: none).
    positionals_before_gap: usize,
}

/// A flag word with a `*` glued on (`-rf*`, the spec's `rm -rf*`): read as
/// the spec's text prefix, the flags before the `*` and anything after
/// them, or as a glob some flag matches (`--destroy*`); either will do.
#[derive(Debug, Clone)]
struct FlagPrefix {
    flags: Vec<String>,
    /// Index in the set's word `GlobSet`.
    glob: usize,
}

/// Which files a path pattern looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// `path:`, any file.
    Any,
    /// `read:`, a file not only written.
    Read,
    /// `write:`, a file written.
    Write,
}

#[derive(Debug, Clone)]
enum Compiled {
    Command(CommandPattern),
    Chain(Vec<CommandPattern>),
    /// A file the action touches as `access` says, by its index in the
    /// set's path `GlobSet`.
    File {
        glob: usize,
        access: Access,
    },
    /// An effect of this kind on a target in one of the zones or matching
    /// the path glob (an index in the set's path `GlobSet`).
    Effect {
        kind: EffectKind,
        target: EffectTarget,
    },
    /// A glob of one word starting with `*` (`*force*`, the spec's text
    /// reading): a command whose program (or operation name), a flag or
    /// an argument it matches, by its indices in the set's program and
    /// word `GlobSet`s.
    Text {
        program: usize,
        word: usize,
    },
    /// Facts whose names the glob matches.
    Fact(GlobMatcher),
    Keyword(String),
}

/// Which targets an effect pattern looks at.
#[derive(Debug, Clone)]
enum EffectTarget {
    Zones(Vec<Zone>),
    Path(usize),
}

/// What a matching pattern matched, for explanations.
pub type Subject = String;

/// Every pattern of a policy, addressed by its index in the order given.
///
/// Globs are compiled from lower-cased text and matched against lower-cased
/// subjects, so they are case-insensitive while globset can still match
/// literals, prefixes and suffixes without a regular expression. The globs
/// of every pattern's arguments and flags form one deduplicated set, so an
/// action's words are each looked up once, not once per pattern.
pub struct PatternSet {
    compiled: Vec<Compiled>,
    programs: GlobIndex,
    /// For each program glob, the command patterns found through it.
    program_anchored: Vec<Vec<usize>>,
    words: GlobIndex,
    /// For each word glob, the command patterns found through it.
    word_anchored: Vec<Vec<usize>>,
    paths: GlobIndex,
    /// For each path glob, its text (for arguments the shell would expand)
    /// and the patterns using it.
    path_sources: Vec<String>,
    path_owners: Vec<Vec<usize>>,
    notes: Vec<(usize, PatternNote)>,
}

fn glob(source: &str, within_segments: bool) -> Result<Glob, PatternError> {
    GlobBuilder::new(&source.to_lowercase())
        .literal_separator(within_segments)
        .backslash_escape(true)
        .build()
        .map_err(|e| PatternError(e.kind().to_string()))
}

#[derive(Default)]
struct Scratch {
    programs: Globs,
    words: Globs,
    paths: Globs,
    /// How the pattern being compiled was read, where that is a choice.
    notes: Vec<PatternNote>,
}

/// Globs as written, each compiled once (by lower-cased source and whether
/// `*` stays within a path segment), and what globset is given for them:
/// each brace alternative as a glob of its own, so that most become
/// literals, prefixes, suffixes or extensions that globset matches without
/// a regular expression (`/etc/{shadow,sudoers}` is two literals).
#[derive(Default)]
struct Globs {
    ids: HashMap<(String, bool), usize>,
    sources: Vec<String>,
    given: Vec<Glob>,
    /// For each glob given to globset, the written glob it stands for.
    written: Vec<usize>,
}

impl Globs {
    fn add(&mut self, source: &str, within_segments: bool) -> Result<usize, PatternError> {
        let key = (source.to_lowercase(), within_segments);
        if let Some(&id) = self.ids.get(&key) {
            return Ok(id);
        }
        let parts: Option<Vec<Glob>> = expand_braces(&key.0)
            .filter(|alternatives| alternatives.len() > 1)
            .and_then(|alternatives| {
                alternatives
                    .iter()
                    .map(|alternative| glob(alternative, within_segments).ok())
                    .collect()
            });
        // The glob as written, when it has no alternatives or one of them
        // does not compile on its own (its error is the written glob's).
        let parts = match parts {
            Some(parts) => parts,
            None => vec![glob(&key.0, within_segments)?],
        };
        let id = self.sources.len();
        for part in parts {
            self.given.push(part);
            self.written.push(id);
        }
        self.sources.push(key.0.clone());
        self.ids.insert(key, id);
        Ok(id)
    }

    fn len(&self) -> usize {
        self.sources.len()
    }

    fn build(self) -> Result<GlobIndex, globset::Error> {
        let mut builder = GlobSetBuilder::new();
        for glob in self.given {
            builder.add(glob);
        }
        Ok(GlobIndex { set: builder.build()?, written: self.written })
    }
}

/// A `GlobSet` answering in written globs.
struct GlobIndex {
    set: GlobSet,
    written: Vec<usize>,
}

impl GlobIndex {
    /// The written globs that match `subject` (lower case), ascending.
    #[expect(
        clippy::indexing_slicing,
        reason = "written has one entry per glob the set was built from"
    )]
    fn matches(&self, subject: &str) -> Vec<usize> {
        // globset answers ascending, and a written glob's parts are given
        // one after another.
        let mut ids: Vec<usize> = self
            .set
            .matches_candidate(&Candidate::new(subject))
            .into_iter()
            .map(|given| self.written[given])
            .collect();
        ids.dedup();
        ids
    }
}

/// Most alternatives a glob's braces are expanded to.
const MAX_ALTERNATIVES: usize = 64;

/// What a glob's `{a,b}` groups stand for: `~/.{bashrc,zshrc}` is
/// `~/.bashrc` and `~/.zshrc`. `None` when there would be more than
/// [`MAX_ALTERNATIVES`], or braces nest, or a character class or an
/// escape could make a brace literal.
fn expand_braces(glob: &str) -> Option<Vec<String>> {
    if glob.contains(['[', '\\']) {
        return None;
    }
    let Some(open) = glob.find('{') else { return Some(vec![glob.to_owned()]) };
    let close = open + glob.get(open..).unwrap_or_default().find('}')?;
    let choices = glob.get(open + 1..close).unwrap_or_default();
    if choices.contains('{') {
        return None;
    }
    let mut all = Vec::new();
    for choice in choices.split(',') {
        all.extend(expand_braces(&format!(
            "{}{choice}{}",
            glob.get(..open).unwrap_or_default(),
            glob.get(close + 1..).unwrap_or_default()
        ))?);
        if all.len() > MAX_ALTERNATIVES {
            return None;
        }
    }
    Some(all)
}

fn compile(
    source: &str,
    kind: PatternKind,
    scratch: &mut Scratch,
) -> Result<Compiled, PatternError> {
    let source = source.trim();
    if source.is_empty() {
        return Err(PatternError("empty pattern".into()));
    }
    if kind == PatternKind::Keyword {
        if source.contains(char::is_whitespace) {
            return Err(PatternError("a keyword is one word".into()));
        }
        if let Some(other) = source.chars().find(|&c| !is_keyword_char(c)) {
            return Err(PatternError(format!(
                "'{other}' is never in a keyword: an action's words are split at every character but letters, digits and `_`; write the parts as keywords of their own, or a pattern (`* *{source}*`)"
            )));
        }
        return Ok(Compiled::Keyword(source.to_lowercase()));
    }
    if let Some(name) = source.strip_prefix("fact:") {
        let name = name.trim();
        let matcher = glob(name, false)?.compile_matcher();
        if !Fact::ALL.iter().any(|f| matcher.is_match(f.name())) {
            let known = Fact::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ");
            return Err(PatternError(format!("no fact is called '{name}': the facts are {known}")));
        }
        return Ok(Compiled::Fact(matcher));
    }
    for kind in EffectKind::ALL {
        if let Some(target) =
            source.strip_prefix(kind.name()).and_then(|rest| rest.strip_prefix(':'))
        {
            let target = target.trim();
            let target = match target.strip_prefix('@') {
                Some(zones) => EffectTarget::Zones(zones_named(zones)?),
                None => EffectTarget::Path(scratch.paths.add(target, true)?),
            };
            return Ok(Compiled::Effect { kind, target });
        }
    }
    for (prefix, access) in
        [("path:", Access::Any), ("read:", Access::Read), ("write:", Access::Write)]
    {
        if let Some(path) = source.strip_prefix(prefix) {
            let path = path.trim();
            refuse_unnormalised_path(prefix, path)?;
            return Ok(Compiled::File { glob: scratch.paths.add(path, true)?, access });
        }
    }
    if let Some(group) = brace_group_with_spaces(source) {
        return Err(PatternError(format!(
            "'{group}': a pattern is split into words at spaces, so a brace group is one word: write `{}`",
            group.split_whitespace().collect::<String>()
        )));
    }
    if source.contains("||") {
        return Err(PatternError("`||` is the shell's \"or else\", not a chain: a pattern matches commands, so write one rule for each side".into()));
    }
    if source.contains('|') {
        let parts: Result<Vec<CommandPattern>, PatternError> =
            source.split('|').map(|part| command_pattern(part, scratch)).collect();
        return Ok(Compiled::Chain(parts?));
    }
    if !source.contains(char::is_whitespace)
        && source.starts_with('*')
        && source.trim_matches('*').chars().any(|c| !matches!(c, '*' | '?'))
    {
        refuse_shell_word(source)?;
        scratch.notes.push(PatternNote(format!(
            "'{source}' is read as text anywhere in a command: its program (an MCP tool's own name, an SQL statement's operation), a flag, by what it means too (`-f` of `rm` is `--force`), or an argument, never printed text or messages; to match programs only, write `{}`",
            source.trim_start_matches('*')
        )));
        return Ok(Compiled::Text {
            program: scratch.programs.add(source, false)?,
            word: scratch.words.add(source, false)?,
        });
    }
    command_pattern(source, scratch).map(Compiled::Command)
}

/// The zones `@home` or `@{home,system}` names.
fn zones_named(names: &str) -> Result<Vec<Zone>, PatternError> {
    let unknown = |name: &str| {
        let known =
            Zone::ALL.iter().map(|z| format!("@{}", z.name())).collect::<Vec<_>>().join(", ");
        PatternError(format!("no zone is called '@{name}': the zones are {known}"))
    };
    let names: Vec<&str> = match names.strip_prefix('{').and_then(|n| n.strip_suffix('}')) {
        Some(list) => list.split(',').map(str::trim).collect(),
        None => vec![names],
    };
    names
        .into_iter()
        .map(|name| {
            Zone::ALL.into_iter().find(|zone| zone.name() == name).ok_or_else(|| unknown(name))
        })
        .collect()
}

fn is_keyword_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A `{…}` group of the pattern with white space inside, which splitting
/// into words would cut in two.
fn brace_group_with_spaces(source: &str) -> Option<&str> {
    let open = source.find('{')?;
    let close = open + source.get(open..).unwrap_or_default().find('}')?;
    let group = source.get(open..=close).unwrap_or_default();
    group.contains(char::is_whitespace).then_some(group)
}

/// Refuses a path glob in a form no path compared has: paths are
/// normalised (`words::normalize_path`) before rules see them, with
/// `$HOME` as `~` and Windows paths in POSIX form.
fn refuse_unnormalised_path(prefix: &str, path: &str) -> Result<(), PatternError> {
    if path.is_empty() {
        return Err(PatternError(format!("`{prefix}` needs a path glob: `{prefix}**/.env`")));
    }
    for home in ["$HOME", "${HOME}"] {
        if let Some(rest) = path.strip_prefix(home) {
            return Err(PatternError(format!(
                "'{path}': paths are compared with the home folder as `~`: write `{prefix}~{rest}`"
            )));
        }
    }
    let drive = path.as_bytes().get(1) == Some(&b':')
        && path.starts_with(|c: char| c.is_ascii_alphabetic());
    if (path.contains('\\') && !drive) || path.split('/').any(|segment| segment == "..") {
        return Ok(());
    }
    let normalised = crate::analysis::words::normalize_path(path);
    if normalised == path {
        return Ok(());
    }
    let folder = if path.ends_with('/') && normalised != "/" {
        format!(" for the folder itself, or `{prefix}{normalised}/**` for what is in it")
    } else {
        String::new()
    };
    Err(PatternError(format!(
        "'{path}' never matches: paths are compared normalised (no `./`, `//`, trailing `/`; POSIX form), so write `{prefix}{normalised}`{folder}"
    )))
}

/// Refuses a word only the command's text has, never a word of the
/// parsed command: quotes, the shell's operators and redirections.
fn refuse_shell_word(word: &str) -> Result<(), PatternError> {
    let quoted =
        word.len() >= 2 && ['"', '\''].iter().any(|&q| word.starts_with(q) && word.ends_with(q));
    if quoted {
        return Err(PatternError(format!(
            "'{word}': patterns match the words a program receives, quotes already removed: write `{}`",
            word.get(1..word.len() - 1).unwrap_or_default()
        )));
    }
    let redirection =
        word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&').starts_with(['>', '<']);
    if redirection {
        return Err(PatternError(format!(
            "'{word}': a redirection is the shell's, never an argument; to match the file written, write `write:PATH` (or `read:PATH`)"
        )));
    }
    if word == "&&"
        || word == "&"
        || (word.len() > 1 && word.ends_with(';') && !word.ends_with("\\;"))
    {
        return Err(PatternError(format!(
            "'{word}': `&&`, `&` and `;` join commands in the shell; a pattern matches one command: write one rule per command, or a chain `a | b`"
        )));
    }
    if let Some(rest) = word.strip_prefix("$HOME").or_else(|| word.strip_prefix("${HOME}")) {
        return Err(PatternError(format!(
            "'{word}': the analysis reads the home folder as `~`: write `~{rest}`"
        )));
    }
    Ok(())
}

fn command_pattern(source: &str, scratch: &mut Scratch) -> Result<CommandPattern, PatternError> {
    let words: Vec<&str> = source.split_whitespace().collect();
    let Some(program) = words.first() else {
        return Err(PatternError("a chain part is empty: write `curl * | sh`".into()));
    };
    if program.contains('/') {
        return Err(PatternError(format!(
            "'{program}': a program is matched by its base name (write `{}`); to match a path anywhere, write path:{program}",
            program.rsplit('/').next().unwrap_or(program)
        )));
    }
    if program.starts_with('-') || program.starts_with("*-") {
        return Err(PatternError(format!(
            "'{program}': the first word is the program; to match a flag of any program, write `* {}`",
            program.trim_matches('*')
        )));
    }
    refuse_shell_word(program)?;
    if program.contains('=') || program.contains('$') || program.contains('(') {
        return Err(PatternError(format!(
            "'{program}' is not a program name: patterns match the parsed command, not its text"
        )));
    }
    let literal_program = (!has_glob(program)).then(|| program.to_lowercase());
    let mut pattern = CommandPattern {
        program: scratch.programs.add(program, false)?,
        literal_program: literal_program.is_some(),
        flags: Vec::new(),
        flag_globs: Vec::new(),
        flag_prefixes: Vec::new(),
        positionals: Vec::new(),
        positionals_before_gap: usize::MAX,
    };
    let mut subcommand: Option<String> = None;
    let flags_of = |word: &str, subcommand: &Option<String>| {
        pattern_flags(literal_program.as_deref().unwrap_or(""), subcommand.as_deref(), word)
    };
    for word in words.get(1..).unwrap_or_default() {
        if *word == "*" || *word == "**" {
            pattern.positionals_before_gap =
                pattern.positionals_before_gap.min(pattern.positionals.len());
            continue;
        }
        refuse_shell_word(word)?;
        if word.starts_with('-') && word.len() > 1 {
            refuse_unmatchable_flag(word)?;
            let prefix = word.trim_end_matches('*');
            // The flags the text before a glued `*` stands for, when they
            // are not just that text (a glob on it already covers those).
            let prefix_flags = (prefix.len() > 1
                && prefix != "--"
                && !has_glob(prefix)
                && !prefix.ends_with('\\'))
            .then(|| flags_of(prefix, &subcommand))
            .filter(|flags| *flags != [prefix]);
            if !has_glob(word) {
                pattern.flags.extend(flags_of(word, &subcommand));
            } else if let Some(flags) = prefix_flags {
                scratch.notes.push(PatternNote(format!(
                    "'{word}' is read as the flags {} followed by anything (the text `{prefix}…`), or as a flag that starts with `{prefix}`",
                    flags.join(" ")
                )));
                pattern
                    .flag_prefixes
                    .push(FlagPrefix { flags, glob: scratch.words.add(word, false)? });
            } else {
                pattern.flag_globs.push(scratch.words.add(word, false)?);
            }
            continue;
        }
        if subcommand.is_none() && !has_glob(word) {
            subcommand = Some(word.to_lowercase());
        }
        let normalized = crate::analysis::words::normalize_path(word);
        if let Some(parent) =
            normalized.strip_suffix('*').filter(|parent| parent.ends_with('/') && !has_glob(parent))
        {
            scratch.notes.push(PatternNote(format!(
                "'{word}' is read as a path glob: `*` stays within one folder, so it matches what is directly in `{parent}`, not deeper; to match anything below it, write `{parent}**`"
            )));
        }
        pattern.positionals.push(scratch.words.add(&normalized, normalized.contains('/'))?);
    }
    Ok(pattern)
}

/// Refuses a flag word no command's flags can hold.
fn refuse_unmatchable_flag(word: &str) -> Result<(), PatternError> {
    if word == "--" {
        return Err(PatternError(
            "`--` ends a command's options and is never one of its flags: leave it out".into(),
        ));
    }
    if word.starts_with("--")
        && let Some((name, _)) = word.split_once('=')
    {
        return Err(PatternError(format!(
            "'{word}': a flag is matched without its value (`--name=value` is the flag `--name`): write `{name}`"
        )));
    }
    Ok(())
}

fn has_glob(word: &str) -> bool {
    word.contains(['*', '?', '[', '{'])
}

impl CommandPattern {
    /// The word glob this pattern is found through, if not its program.
    fn word_anchor(&self) -> Option<usize> {
        if self.literal_program {
            return None;
        }
        self.positionals.first().or(self.flag_globs.first()).copied()
    }
}

impl PatternSet {
    /// Compiles every pattern; on failure, every pattern that failed, by
    /// index.
    #[expect(
        clippy::indexing_slicing,
        reason = "every glob index was handed out by scratch while compiling, and the owner tables are sized by scratch"
    )]
    pub fn new<'a>(
        patterns: impl IntoIterator<Item = (&'a str, PatternKind)>,
    ) -> Result<Self, Vec<(usize, PatternError)>> {
        let mut scratch = Scratch::default();
        let mut compiled = Vec::new();
        let mut errors = Vec::new();
        let mut notes = Vec::new();
        for (index, (source, kind)) in patterns.into_iter().enumerate() {
            match compile(source, kind, &mut scratch) {
                Ok(pattern) => compiled.push(pattern),
                Err(error) => errors.push((index, error)),
            }
            notes.extend(scratch.notes.drain(..).map(|note| (index, note)));
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut program_anchored = vec![Vec::new(); scratch.programs.len()];
        let mut word_anchored = vec![Vec::new(); scratch.words.len()];
        let mut path_owners = vec![Vec::new(); scratch.paths.len()];
        for (index, pattern) in compiled.iter().enumerate() {
            match pattern {
                Compiled::Command(pattern) => match pattern.word_anchor() {
                    Some(word) => word_anchored[word].push(index),
                    None => program_anchored[pattern.program].push(index),
                },
                Compiled::Text { program, word } => {
                    program_anchored[*program].push(index);
                    word_anchored[*word].push(index);
                }
                Compiled::File { glob, .. }
                | Compiled::Effect { target: EffectTarget::Path(glob), .. } => {
                    path_owners[*glob].push(index)
                }
                _ => {}
            }
        }
        let fail = |e: globset::Error| vec![(0, PatternError(e.to_string()))];
        let path_sources = std::mem::take(&mut scratch.paths.sources);
        // The three sets are independent; building them side by side
        // shortens start-up where it counts most, the hook's one call.
        let (programs, words, paths) = std::thread::scope(|scope| {
            let programs = scope.spawn(|| scratch.programs.build());
            let words = scope.spawn(|| scratch.words.build());
            let paths = scratch.paths.build();
            let joined = |built: std::thread::ScopedJoinHandle<'_, _>| {
                built.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            };
            (joined(programs), joined(words), paths)
        });
        Ok(Self {
            compiled,
            programs: programs.map_err(fail)?,
            program_anchored,
            words: words.map_err(fail)?,
            word_anchored,
            paths: paths.map_err(fail)?,
            path_sources,
            path_owners,
            notes,
        })
    }

    /// How patterns that could be read two ways were read, by index.
    pub fn notes(&self) -> &[(usize, PatternNote)] {
        &self.notes
    }

    pub fn len(&self) -> usize {
        self.compiled.len()
    }

    pub fn is_empty(&self) -> bool {
        self.compiled.is_empty()
    }

    /// Whether the pattern at `index` is a command pattern (what
    /// `autoApprove` takes).
    pub fn is_command(&self, index: usize) -> bool {
        matches!(self.compiled.get(index), Some(Compiled::Command(_)))
    }

    /// Looks every word of `analysis` up once, for [`Prepared::matches`]
    /// and [`Prepared::covering`].
    #[expect(
        clippy::indexing_slicing,
        reason = "globs index the owner tables built beside them by new; a word indexes table.hits, as lookup returned it"
    )]
    pub fn prepare<'a>(&'a self, analysis: &'a Analysis) -> Prepared<'a> {
        let mut table = WordTable::default();
        let commands = analysis
            .commands
            .iter()
            .map(|command| {
                let mut programs = self.programs.matches(&command.program);
                for name in command.operation_names() {
                    programs.extend(self.programs.matches(&name));
                }
                programs.sort_unstable();
                programs.dedup();
                let mut candidates: Vec<usize> = programs
                    .iter()
                    .flat_map(|&glob| &self.program_anchored[glob])
                    .copied()
                    .collect();
                let positionals: Vec<usize> = command
                    .positionals
                    .iter()
                    .map(|word| table.lookup(&self.words, word))
                    .collect();
                let mut positional_any = Bits::new(self.word_anchored.len());
                for &word in &positionals {
                    for &glob in &table.hits[word] {
                        positional_any.set(glob);
                        candidates.extend(&self.word_anchored[glob]);
                    }
                }
                let mut flag_any = Bits::new(self.word_anchored.len());
                for flag in flag_words(command) {
                    let word = table.lookup(&self.words, flag);
                    for &glob in &table.hits[word] {
                        flag_any.set(glob);
                        candidates.extend(&self.word_anchored[glob]);
                    }
                }
                let mut value_any = Bits::new(self.word_anchored.len());
                for value in &command.flag_values {
                    let word = table.lookup(&self.words, value);
                    for &glob in &table.hits[word] {
                        value_any.set(glob);
                        candidates.extend(&self.word_anchored[glob]);
                    }
                }
                candidates.sort_unstable();
                candidates.dedup();
                let action_words = if command.program == "git" {
                    Some((1, 1))
                } else {
                    command.action_words().map(|(depth, words)| (depth, words.len()))
                };
                CommandWords {
                    programs,
                    candidates,
                    positionals,
                    open: command.open,
                    action_words,
                    positional_any,
                    flag_any,
                    value_any,
                }
            })
            .collect();
        Prepared { set: self, analysis, commands, word_hits: table.hits }
    }
}

/// Each distinct word of an analysis with the word globs it matches.
#[derive(Default)]
struct WordTable<'a> {
    ids: HashMap<&'a str, usize>,
    hits: Vec<Vec<usize>>,
}

impl<'a> WordTable<'a> {
    fn lookup(&mut self, globs: &GlobIndex, word: &'a str) -> usize {
        if let Some(&id) = self.ids.get(word) {
            return id;
        }
        self.hits.push(globs.matches(&word.to_lowercase()));
        let id = self.hits.len() - 1;
        self.ids.insert(word, id);
        id
    }
}

/// A fixed-size set of small integers.
struct Bits(Vec<u64>);

impl Bits {
    fn new(size: usize) -> Self {
        Self(vec![0; size.div_ceil(64)])
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "a bit is a glob index below the size the set was made for"
    )]
    fn set(&mut self, bit: usize) {
        self.0[bit / 64] |= 1 << (bit % 64);
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "a bit is a glob index below the size the set was made for"
    )]
    fn has(&self, bit: usize) -> bool {
        self.0[bit / 64] & (1 << (bit % 64)) != 0
    }
}

/// What one command's words match.
struct CommandWords {
    /// The program globs its name matches, ascending.
    programs: Vec<usize>,
    /// The command patterns that might match it, in policy order: those
    /// found through its program or through one of its words.
    candidates: Vec<usize>,
    /// Each positional's entry in the word table.
    positionals: Vec<usize>,
    /// Where any words may stand ([`Command::open`]): every option (before
    /// `--`) and any arguments there.
    open: Option<OpenWords>,
    /// For a program whose first words name what it does (git's
    /// subcommand, a tool's action words, [`Command::action_words`]): how
    /// many such words there are, and how many leading positionals may
    /// be them. A pattern's first positionals, up to that many, must be
    /// among those, in order.
    action_words: Option<(usize, usize)>,
    /// Word globs some positional matches.
    positional_any: Bits,
    /// Word globs some flag matches ([`flag_words`]).
    flag_any: Bits,
    /// Word globs some `--name=value` value matches.
    value_any: Bits,
}

/// An analysis with every word looked up in a [`PatternSet`]'s globs.
pub struct Prepared<'a> {
    set: &'a PatternSet,
    analysis: &'a Analysis,
    commands: Vec<CommandWords>,
    word_hits: Vec<Vec<usize>>,
}

impl Prepared<'_> {
    /// For every pattern, what it matched in the analysis (if anything).
    #[expect(
        clippy::indexing_slicing,
        reason = "commands holds one entry per command of the analysis, owners index compiled and words index word_hits: all built together by prepare"
    )]
    pub fn matches(&self) -> Vec<Option<Subject>> {
        let set = self.set;
        let analysis = self.analysis;
        let mut hits: Vec<Option<Subject>> = vec![None; set.compiled.len()];
        // A command that only prints its help is not the action its words
        // name (`git push --help`); what else the action runs still counts.
        for (index, command) in
            analysis.commands.iter().enumerate().filter(|(_, c)| c.invocation == Invocation::Acts)
        {
            for &owner in &self.commands[index].candidates {
                let matched = match &set.compiled[owner] {
                    Compiled::Command(pattern) => self.command_matches(pattern, index),
                    Compiled::Text { program, word } => self.text_matches(*program, *word, index),
                    _ => false,
                };
                if matched && hits[owner].is_none() {
                    hits[owner] = Some(describe_command(command));
                }
            }
        }
        let mut keywords: Option<HashMap<String, &str>> = None;
        for (owner, compiled) in set.compiled.iter().enumerate() {
            match compiled {
                Compiled::Chain(parts) if hits[owner].is_none() => {
                    hits[owner] =
                        analysis.feeds.iter().find(|stages| self.chain_matches(parts, stages)).map(
                            |stages| {
                                stages
                                    .iter()
                                    .filter_map(|s| s.first())
                                    .map(|&i| describe_command(&analysis.commands[i]))
                                    .collect::<Vec<_>>()
                                    .join(" | ")
                            },
                        );
                }
                Compiled::Effect { kind, target: EffectTarget::Zones(zones) } => {
                    hits[owner] = analysis
                        .effects
                        .iter()
                        .find(|e| e.kind == *kind && zones.contains(&e.zone))
                        .map(|e| format!("{} {} (@{})", e.kind.name(), e.target, e.zone.name()));
                }
                Compiled::Fact(names) => {
                    hits[owner] = analysis
                        .facts
                        .iter()
                        .find(|(f, _)| names.is_match(f.name()))
                        .map(|(f, detail)| format!("{detail} (fact:{})", f.name()))
                }
                Compiled::Keyword(word) => {
                    let pieces = keywords.get_or_insert_with(|| keyword_pieces(analysis));
                    hits[owner] = pieces.get(word).map(|&piece| piece.to_owned());
                }
                _ => {}
            }
        }
        self.match_paths(&mut hits);
        hits
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "path globs index path_owners and path_sources, owners index compiled: all built together by PatternSet::new"
    )]
    fn match_paths(&self, hits: &mut [Option<Subject>]) {
        let set = self.set;
        if set.path_sources.is_empty() {
            return;
        }
        let mut mark = |path: &str, role: PathRole| {
            let direct = set.paths.matches(&path.to_lowercase());
            let expanded: Vec<usize> = if path.contains(['*', '?', '[']) {
                (0..set.path_sources.len())
                    .filter(|&i| could_match(path, &set.path_sources[i]))
                    .collect()
            } else {
                Vec::new()
            };
            for glob in direct.into_iter().chain(expanded) {
                for &owner in &set.path_owners[glob] {
                    let applies = match (&set.compiled[owner], role) {
                        (Compiled::File { access: Access::Any, .. }, _) => true,
                        (Compiled::File { access: Access::Read, .. }, PathRole::Read) => true,
                        (Compiled::File { access: Access::Write, .. }, PathRole::Written) => true,
                        (Compiled::Effect { kind, .. }, PathRole::Target(effect)) => {
                            *kind == effect
                        }
                        _ => false,
                    };
                    if applies && hits[owner].is_none() {
                        hits[owner] = Some(match role {
                            PathRole::Target(kind) => format!("{} {path}", kind.name()),
                            _ => path.to_owned(),
                        });
                    }
                }
            }
        };
        for path in &self.analysis.writes {
            mark(path, PathRole::Written);
        }
        for path in &self.analysis.reads {
            mark(path, PathRole::Read);
        }
        for effect in &self.analysis.effects {
            mark(&effect.target, PathRole::Target(effect.kind));
        }
    }

    /// The autoApprove pattern among `allowed` that covers the command at
    /// `index`.
    #[expect(
        clippy::indexing_slicing,
        reason = "commands holds one entry per command of the analysis, owners index compiled and words index word_hits: all built together by prepare"
    )]
    pub fn covering(&self, index: usize, allowed: impl Fn(usize) -> bool) -> Option<usize> {
        self.commands[index].candidates.iter().copied().filter(|&owner| allowed(owner)).find(|&owner| {
            matches!(&self.set.compiled[owner], Compiled::Command(pattern) if self.command_matches(pattern, index))
        })
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "commands holds one entry per command of the analysis, owners index compiled and words index word_hits: all built together by prepare"
    )]
    fn command_matches(&self, pattern: &CommandPattern, index: usize) -> bool {
        let command = &self.analysis.commands[index];
        let words = &self.commands[index];
        if words.programs.binary_search(&pattern.program).is_err() {
            return false;
        }
        let has = |wanted: &String| {
            command
                .flags
                .iter()
                .any(|f| f == wanted || command.shouted && f.eq_ignore_ascii_case(wanted))
        };
        // Words that may be anything may be every option of the program a
        // pattern names (`* --no-preserve-root` names none), before `--`.
        let open = words.open.is_some();
        if open && !pattern.literal_program {
            return false;
        }
        let flags_written = || {
            pattern.flags.iter().all(has)
                && pattern.flag_globs.iter().all(|&g| words.flag_any.has(g))
                && pattern
                    .flag_prefixes
                    .iter()
                    .all(|prefix| prefix.flags.iter().all(has) || words.flag_any.has(prefix.glob))
        };
        if !(words.open.is_some_and(|open| open.options) || flags_written()) {
            return false;
        }
        // Cheap refusal first: every positional glob must match some
        // argument before their order is looked at.
        if !open && !pattern.positionals.iter().all(|&g| words.positional_any.has(g)) {
            return false;
        }
        // `git push` is not `git stash push`, and `gh release delete` is
        // not a search for those words (`gh search prs release delete`).
        let all = words.positionals.len();
        let (leading, rest, window, open_window) = match words.action_words {
            Some((depth, window)) => {
                let named =
                    depth.min(pattern.positionals_before_gap).min(pattern.positionals.len());
                let (leading, rest) = pattern.positionals.split_at(named);
                // Words added after the last positional name what the tool
                // does while fewer than its action words are written; an
                // option's value before a written action word does not.
                let open_window = if words
                    .open
                    .is_some_and(|open| open.a_value && open.after_positionals < all)
                {
                    0
                } else {
                    window + usize::from(window == all && window < depth)
                };
                (leading, rest, window, open_window)
            }
            None => (&[][..], &pattern.positionals[..], 0, 0),
        };
        match self.in_order(words, leading, 0, window, open_window) {
            InOrder::Open => true,
            InOrder::Missing => false,
            InOrder::Next(from) => {
                self.in_order(words, rest, from, all, all + 1) != InOrder::Missing
            }
        }
    }

    /// Whether the positionals of `words` from `from` (below `end`) match
    /// `wanted` in order: where the next would be looked at, or whether
    /// words that may be anything ([`CommandWords::open`]) stand
    /// before it (below `open_end`), which may be every glob left.
    #[expect(
        clippy::indexing_slicing,
        reason = "positionals are word-table entries, which index word_hits"
    )]
    fn in_order(
        &self,
        words: &CommandWords,
        wanted: &[usize],
        from: usize,
        end: usize,
        open_end: usize,
    ) -> InOrder {
        let mut at = from;
        for &glob in wanted {
            loop {
                if words.open.is_some_and(|open| open.after_positionals == at) && at < open_end {
                    return InOrder::Open;
                }
                let Some(&argument) = words.positionals.get(at).filter(|_| at < end) else {
                    return InOrder::Missing;
                };
                at += 1;
                if self.word_hits[argument].binary_search(&glob).is_ok() {
                    break;
                }
            }
        }
        InOrder::Next(at)
    }

    /// Whether a [`Compiled::Text`] glob matches the command at `index`:
    /// its program or operation name, a flag, an argument or a value.
    #[expect(
        clippy::indexing_slicing,
        reason = "commands holds one entry per command of the analysis, owners index compiled and words index word_hits: all built together by prepare"
    )]
    fn text_matches(&self, program: usize, word: usize, index: usize) -> bool {
        let words = &self.commands[index];
        words.programs.binary_search(&program).is_ok()
            || words.positional_any.has(word)
            || words.flag_any.has(word)
            || words.value_any.has(word)
    }

    fn chain_matches(&self, parts: &[CommandPattern], stages: &[Vec<usize>]) -> bool {
        let mut stage = stages.iter();
        parts.iter().all(|part| {
            stage.any(|commands| commands.iter().any(|&i| self.command_matches(part, i)))
        })
    }
}

/// How far a pattern's positionals were met in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InOrder {
    /// All of them; the next is looked for from this positional.
    Next(usize),
    /// Words that may be anything stand where the rest are looked for.
    Open,
    Missing,
}

/// How a path the analysis reports is touched.
#[derive(Clone, Copy)]
enum PathRole {
    Written,
    Read,
    Target(EffectKind),
}

/// The words a flag glob is matched against: the command's flags (short
/// forms), the long flags they stand for where the program is known to
/// mean them (`-f` of `rm` is `--force`), and the option words as written
/// (`-rf`, `--force-with-lease`, terraform's `-force`).
fn flag_words<'a>(command: &'a Command) -> impl Iterator<Item = &'a str> + 'a {
    let subcommand = command.subcommand();
    let long = command.flags.iter().flat_map(move |flag| {
        long_forms(&command.program, subcommand, flag).map(|spelling| -> &'a str { spelling })
    });
    command.flags.iter().chain(&command.written_flags).map(String::as_str).chain(long)
}

/// Every word a keyword may match (see [`Analysis::words`]), split at
/// punctuation, lower-cased, with the first spelling seen.
fn keyword_pieces(analysis: &Analysis) -> HashMap<String, &str> {
    let mut pieces = HashMap::new();
    for piece in analysis
        .words()
        .flat_map(|w| w.split(|c: char| !c.is_alphanumeric() && c != '_'))
        .filter(|p| !p.is_empty())
    {
        pieces.entry(piece.to_lowercase()).or_insert(piece);
    }
    pieces
}

/// A command as explanations and approval requests name it: its words
/// and where it comes from (`via sudo`, `planted in Makefile line 5`).
pub(crate) fn describe_command(command: &Command) -> String {
    let text = command.argv.join(" ");
    let shown = crate::analysis::preview(&text);
    let origins: String = command.origins().map(|origin| format!(" ({origin})")).collect();
    format!("`{shown}`{origins}")
}

/// Whether `argument`, a glob the shell would expand (`*`, `?`, `[…]`),
/// could expand to a path `pattern` matches: the two globs' languages
/// intersect. `{a,b}` in the pattern is tried per alternative; character
/// classes are assumed to meet.
///
/// A relative argument cannot reach an absolute pattern, and the shell's
/// `*` and `?` at the start of a segment do not match a leading `.`.
///
/// A pattern that floats (`**/safety-dongle/*password*`, not rooted at `/`
/// or `~`) is met only where a character the argument spells (or a class
/// it writes) meets one the pattern spells, other than `/`: otherwise
/// every wildcard glob would "reach" it through names neither side wrote
/// (`src/**/*.tsx` as `src/safety-dongle/state.db-.tsx`). Hiding a name
/// still needs a spelled character to get anywhere (a leading `.` cannot
/// come from `*` or `?`), and an absolute argument against a rooted
/// pattern (`/*/*` against `/etc/shadow`) is met on the intersection alone.
pub fn could_match(argument: &str, pattern: &str) -> bool {
    let absolute = |p: &str| p.starts_with('/') || p.starts_with('~');
    expand_braces(pattern)
        .unwrap_or_else(|| vec![pattern.to_owned()])
        .iter()
        .filter(|alternative| absolute(argument) || !absolute(alternative))
        .any(|alternative| {
            let rooted = absolute(argument) && absolute(alternative);
            intersects(&tokens(argument, false), &tokens(alternative, true), rooted)
        })
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Char(char),
    One,
    Class,
    /// `*`: any run within a segment; `**`: any run at all.
    Run {
        crosses: bool,
    },
    /// The shell's `*` at the start of a segment: not a leading `.`.
    RunNoDot,
}

fn tokens(glob: &str, pattern: bool) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        let segment_start = matches!(out.last(), None | Some(Token::Char('/')));
        out.push(match c {
            '\\' if pattern => Token::Char(chars.next().unwrap_or('\\')),
            // The shell's `**` is `*` unless globstar is on, and even then
            // it skips hidden folders: either way, no leading dot.
            '*' if !pattern && segment_start => {
                while chars.peek() == Some(&'*') {
                    chars.next();
                }
                Token::RunNoDot
            }
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                Token::Run { crosses: pattern }
            }
            '*' => Token::Run { crosses: false },
            '?' if !pattern && segment_start => Token::Char('\u{0}'),
            '?' => Token::One,
            '[' => {
                for skipped in chars.by_ref() {
                    if skipped == ']' {
                        break;
                    }
                }
                Token::Class
            }
            c => Token::Char(c.to_lowercase().next().unwrap_or(c)),
        });
    }
    out
}

fn is_run(token: &Token) -> bool {
    matches!(token, Token::Run { .. } | Token::RunNoDot)
}

/// Non-emptiness of the intersection of two token languages, by a search
/// over pairs of positions (and whether the argument's current run has
/// consumed anything yet, for the leading-dot rule, and whether a spelled
/// character has met a spelled one yet: required unless `rooted`).
fn intersects(a: &[Token], b: &[Token], rooted: bool) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![(0usize, 0usize, false, rooted)];
    while let Some((i, j, started, met)) = stack.pop() {
        if !seen.insert((i, j, started, met)) {
            continue;
        }
        if i == a.len() && j == b.len() && met {
            return true;
        }
        // A run may match nothing.
        if a.get(i).is_some_and(is_run) {
            stack.push((i + 1, j, false, met));
        }
        if b.get(j).is_some_and(is_run) {
            stack.push((i, j + 1, started, met));
        }
        let (Some(x), Some(y)) = (a.get(i), b.get(j)) else { continue };
        // `?` at a segment start is encoded as NUL: one character, not `.`.
        let one_no_dot = |t: &Token| *t == Token::Char('\u{0}');
        let agree = match (x, y) {
            _ if one_no_dot(x) => !matches!(y, Token::Char('.' | '/')),
            (Token::Char(p), Token::Char(q)) => p == q,
            (Token::Run { crosses: false } | Token::RunNoDot, Token::Char('/'))
            | (Token::Char('/'), Token::Run { crosses: false }) => false,
            (Token::RunNoDot, Token::Char('.')) => started,
            _ => true,
        };
        if !agree {
            continue;
        }
        let spelled = |t: &Token| {
            matches!(t, Token::Class) || matches!(t, Token::Char(c) if *c != '/' && *c != '\u{0}')
        };
        let meets = met || (spelled(x) && spelled(y));
        match (is_run(x), is_run(y)) {
            (false, false) => stack.push((i + 1, j + 1, false, meets)),
            (true, false) => stack.push((i, j + 1, true, met)),
            (false, true) => stack.push((i + 1, j, false, met)),
            (true, true) => {
                stack.push((i + 1, j, false, met));
                stack.push((i, j + 1, true, met));
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;

    fn hit(pattern: &str, hint: &str) -> bool {
        let set = PatternSet::new([(pattern, PatternKind::Glob)]).unwrap();
        set.prepare(&analyze(hint).unwrap()).matches()[0].is_some()
    }

    fn error(pattern: &str) -> String {
        let Err(errors) = PatternSet::new([(pattern, PatternKind::Glob)]) else {
            panic!("'{pattern}' compiled")
        };
        errors[0].1.0.clone()
    }

    #[test]
    fn command_patterns_match_argv_not_text() {
        assert!(hit("rm -rf ~", "rm ~ --force -R"));
        assert!(hit("rm -r -f ~", "sudo /bin/rm -rf $HOME"));
        assert!(!hit("rm -rf ~", "rm -rf ~/project/target"));
        assert!(!hit("rm -rf ~", "echo rm -rf ~"));
        assert!(hit("git push -f", "git -c alias.p=push p --force origin main"));
        assert!(hit("git push -f", "git push origin +main"));
        assert!(hit(
            "kubectl delete namespace *",
            "kubectl --context prod delete namespace payments"
        ));
        assert!(hit("{curl,wget} * | {sh,bash}", "wget -qO- https://x | sudo bash"));
        assert!(!hit("curl * | sh", "curl -s https://x | jq ."));
    }

    #[test]
    fn path_patterns_see_normalised_and_expandable_paths() {
        for hint in [
            "cat ~/.ssh/./id_rsa",
            "cat ~/.ssh//id_rsa",
            "cat ~/.ssh/id_rs?",
            "cp /home/bob/.ssh/id_ed25519 /tmp",
            "cat ~/.ssh/*",
            "read_file /root/.ssh/id_rsa",
        ] {
            assert!(hit("path:**/.ssh/id_*", hint), "{hint}");
        }
        assert!(!hit("path:**/.ssh/id_*", "cat ~/.ssh/known_hosts"));
        assert!(hit("write:**/.bashrc", "echo 'curl x | sh' >> ~/.bashrc"));
        assert!(!hit("write:**/.bashrc", "cat ~/.bashrc"));
    }

    #[test]
    fn misleading_patterns_are_refused_with_the_way_to_write_them() {
        assert!(error("/bin/rm -rf").contains("base name"));
        assert!(error("-rf *").contains("* -rf"));
        assert!(error("fact:nope").contains("fork_bomb"));
        assert!(!error("rm [").is_empty());
    }

    fn notes(pattern: &str) -> Vec<String> {
        PatternSet::new([(pattern, PatternKind::Glob)])
            .unwrap()
            .notes()
            .iter()
            .map(|(_, note)| note.0.clone())
            .collect()
    }

    /// Each row: a pattern as the spec writes them, actions it must match
    /// and actions it must not.
    #[test]
    fn spec_style_patterns_match_what_their_text_says() {
        let rows: [(&str, &[&str], &[&str]); 8] = [
            (
                "rm -rf*",
                &[
                    "rm -rf /",
                    "rm -fr ~/x",
                    "rm -rf build",
                    "rm -r -f x",
                    "rm --recursive --force x",
                    "sudo rm -Rf /srv",
                ],
                &["rm -r x", "rm -f x", "echo rm -rf /", "rmdir -p x"],
            ),
            (
                "git push --force*",
                &[
                    "git push -f origin main",
                    "git push --force-with-lease",
                    "git push origin +main",
                ],
                &["git push origin main"],
            ),
            (
                "git push*",
                &["git push", "git push --force origin x", "git -C repo push"],
                &["git stash push", "git pull"],
            ),
            (
                "*force*",
                &[
                    "terraform apply -force",
                    "git push -f",
                    "git push --force-with-lease",
                    "rm -rf build",
                    "kubectl delete pod x --force",
                    "helm uninstall x --force-delete",
                    "git checkout force-layout",
                ],
                &[
                    "tar -xf a.tar",
                    "kubectl apply -f x.yaml",
                    "tail -f log",
                    "git commit -m 'force it'",
                    "echo --force",
                    "ls",
                ],
            ),
            (
                "drop_*",
                &[
                    "drop_table {\"name\": \"x\"}",
                    "db__drop_table {\"name\": \"x\"}",
                    "psql -c 'DROP TABLE users'",
                    "DROP DATABASE app",
                ],
                &["dropdb_helper_list {}", "psql -c 'select 1'", "drop"],
            ),
            (
                "delete_*",
                &[
                    "delete from users where id = 1",
                    "github__delete_file {\"path\": \"x\"}",
                    "delete_branch {}",
                ],
                &["rm x", "git branch -d x"],
            ),
            (
                "rm -rf /*",
                &["rm -rf /", "rm -rf /etc", "sudo rm -fr /usr"],
                &["rm -rf /etc/nginx", "rm -rf ./x", "rm -rf x"],
            ),
            (
                "*mkfs*",
                &["mkfs /dev/sda", "mkfs.ext4 /dev/sda1", "sudo mkfs.xfs -f /dev/sdb"],
                &["lsblk", "echo mkfs"],
            ),
        ];
        for (pattern, matching, other) in rows {
            for hint in matching {
                assert!(hit(pattern, hint), "'{pattern}' must match {hint}");
            }
            for hint in other {
                assert!(!hit(pattern, hint), "'{pattern}' must not match {hint}");
            }
        }
    }

    /// A tool's first words name what it does: a pattern's first
    /// positional is one of them, wherever options put them, unless a
    /// bare `*` comes first.
    #[test]
    fn the_first_positional_is_the_tools_own_command() {
        let rows: [(&str, &[&str], &[&str]); 5] = [
            (
                "gh release delete",
                &["gh release delete v1", "gh release -R owner/app delete v1 --yes"],
                &["gh search prs release delete --state open", "gh issue list --search release"],
            ),
            (
                "kubectl delete",
                &[
                    "kubectl delete pod x",
                    "kubectl -n prod delete pod x",
                    "kubectl --context=prod delete ns x",
                ],
                &["kubectl get pods -o name delete", "kubectl logs delete"],
            ),
            (
                "gcloud * print-access-token",
                &[
                    "gcloud auth print-access-token",
                    "gcloud auth application-default print-access-token",
                ],
                &["gcloud config list print-access-token-is-a-word"],
            ),
            ("aws s3 rb", &["aws --profile dev s3 rb s3://x"], &["aws s3 ls rb"]),
            (
                "az devops * remove",
                &["az devops user remove --user u", "az devops security group membership remove"],
                &["az repos list devops remove"],
            ),
        ];
        for (pattern, matching, other) in rows {
            for hint in matching {
                assert!(hit(pattern, hint), "'{pattern}' must match {hint}");
            }
            for hint in other {
                assert!(!hit(pattern, hint), "'{pattern}' must not match {hint}");
            }
        }
    }

    #[test]
    fn check_says_how_a_pattern_that_reads_two_ways_was_read() {
        assert!(notes("rm -rf*")[0].contains("the flags -r -f followed by anything"));
        assert!(notes("*force*")[0].contains("text anywhere in a command"));
        assert!(notes("rm -rf /*")[0].contains("directly in `/`"));
        for plain in [
            "rm -rf ~",
            "journalctl --vacuum*",
            "rm -r /{home,Users}/*",
            "rm -r /\\*",
            "git push*",
            "* -f*",
        ] {
            assert!(notes(plain).is_empty(), "{plain}: {:?}", notes(plain));
        }
    }

    /// Each row: a pattern no action can match, what the refusal says,
    /// and a near miss that is accepted.
    #[test]
    fn rules_that_can_never_match_are_refused_and_near_misses_are_not() {
        let rows: [(&str, &str, &str); 15] = [
            ("rm -rf \"/\"", "write `/`", "rm it's"),
            ("'rm' -rf /", "write `rm`", "rm -rf /"),
            ("echo * > ~/.bashrc", "write:PATH", "pip install *>=*"),
            ("cd * && rm *", "one rule per command", "find * -exec rm {} ;"),
            ("rm -rf /;", "one rule per command", "find * -exec rm {} \\;"),
            ("rm -rf $HOME", "write `~`", "{curl,wget} *$aws_*"),
            ("rm -- *", "`--` ends", "rm --force *"),
            ("kubectl --context=prod delete", "write `--context`", "kubectl --context delete"),
            ("{curl, wget} * | sh", "write `{curl,wget}`", "{curl,wget} * | sh"),
            ("make || rm -rf /", "one rule for each side", "curl * | sh"),
            ("curl * |", "chain part is empty", "curl * | *"),
            ("path:./secrets/*", "write `path:secrets/*`", "path:.env"),
            ("path:~/.ssh/", "`path:~/.ssh/**` for what is in it", "path:~/.ssh/**"),
            ("read:$HOME/.aws/*", "write `read:~/.aws/*`", "read:**/../*"),
            (
                "write:C:\\Users\\*\\.ssh\\*",
                "write `write:/Users/*/.ssh/*`",
                "write:/Users/*/.ssh/*",
            ),
        ];
        for (pattern, says, near_miss) in rows {
            let message = error(pattern);
            assert!(message.contains(says), "{pattern}: {message}");
            assert!(
                PatternSet::new([(near_miss, PatternKind::Glob)]).is_ok(),
                "{near_miss} is accepted"
            );
        }
        let keyword = |word: &str| {
            PatternSet::new([(word, PatternKind::Keyword)])
                .err()
                .map(|errors| errors[0].1.0.clone())
        };
        assert!(keyword("prod.db").is_some_and(|m| m.contains("'.' is never in a keyword")));
        assert!(keyword("prod*").is_some());
        assert!(keyword("prod_db").is_none());
        assert!(error("path:").contains("needs a path glob"));
    }

    #[test]
    fn brace_alternatives_are_globs_of_their_own_and_match_as_the_whole() {
        let alternatives = |glob: &str| expand_braces(glob).map(|all| all.join(" "));
        assert_eq!(
            alternatives("/etc/{a,b}/{c,d}").as_deref(),
            Some("/etc/a/c /etc/a/d /etc/b/c /etc/b/d")
        );
        assert_eq!(alternatives("~/.{,z}shrc").as_deref(), Some("~/.shrc ~/.zshrc"));
        assert_eq!(alternatives("x[{]y"), None, "a brace in a class is literal");
        let wide = format!(
            "{{{}}}",
            (0..=MAX_ALTERNATIVES).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
        );
        assert_eq!(alternatives(&wide), None);
        for (pattern, hint, expected) in [
            ("write:/etc/{shadow,sudoers}", "echo x > /etc/sudoers", true),
            ("write:/etc/{shadow,sudoers}", "echo x > /etc/sudoers.bak", false),
            ("read:**/{.netrc,.pgpass}", "cat ~/.PGPASS", true),
            ("{curl,wget} * | {sh,bash}", "WGET -qO- x | bash", true),
            ("rm -rf {/,~}", "rm -rf /", true),
            ("rm -rf {/,~}", "rm -rf /tmp", false),
        ] {
            assert_eq!(hit(pattern, hint), expected, "{pattern} on {hint}");
        }
        assert_eq!(alternatives("{a,{b,c}}"), None, "nested braces are left to globset");
        assert!(hit("rm {a,{b,c}}", "rm c") && !hit("rm {a,{b,c}}", "rm d"));
    }

    #[test]
    fn patterns_of_any_program_are_found_through_their_arguments_and_flags() {
        assert!(hit("* customer-db-*", "psql -h customer-db-7 -c 'select 1'"));
        assert!(hit("* customer-db-*", "env X=1 psql customer-db-7"));
        assert!(!hit("* customer-db-*", "psql other-db"));
        assert!(hit("* --no-preserve-root", "rm -rf / --no-preserve-root"));
        assert!(hit("* --destroy*", "tool --destroy-everything"));
        assert!(!hit("* --destroy*", "tool --keep"));
    }

    #[test]
    fn argument_globs_intersect_pattern_globs() {
        assert!(could_match("~/.ssh/id_rs?", "**/.ssh/id_*"));
        assert!(could_match("~/.ss*/id*", "**/.ssh/id_*"));
        assert!(!could_match("~/src/*.rs", "**/.ssh/id_*"));
        assert!(could_match("/etc/sha*", "/etc/{shadow,gshadow}"));
        assert!(!could_match("dist/*", "**/.netrc"), "the shell's * does not match a leading dot");
        assert!(could_match("dist/.n*", "**/.netrc"));
        assert!(
            !could_match("**/*.rs", "/dev/{tcp,udp}/**"),
            "a relative glob cannot reach an absolute path"
        );
        assert!(
            !could_match("src/**/*.tsx", "**/safety-dongle/{state.db-*,*password*}"),
            "wildcards meeting wildcards reach nothing either side spelled"
        );
        assert!(could_match("~/.local/share/*/state.db", "**/safety-dongle/state.db"));
        assert!(could_match("~/.*/*/s*y-*/*", "**/safety-dongle/*password*"));
        assert!(could_match("*/[s]afety-dongle/*", "**/safety-dongle/*password*"));
        assert!(
            could_match("/*/*", "/etc/{shadow,gshadow}"),
            "a rooted glob reaches a rooted path unspelled"
        );
    }
}

//! What an action will do, found without running it: every program that
//! will execute with its argv as the shell will pass it, the files it reads
//! and writes, which commands feed which, and facts a policy must know
//! (a command name nobody can know in advance, a file written and then run,
//! a fork bomb…). Policies match this, never the raw text (`policy`).
//!
//! An action is either a shell command line, parsed with tree-sitter-bash
//! (`shell`), or an MCP tool call written `name {json}` (`tool_call`).
//! Executors are unwrapped recursively (`executors`), inline code of
//! interpreters is read for what it does (`code`), and SQL is split into
//! statements (`sql`), each of which becomes a command of its own
//! (`drop table users` is the program `drop` with arguments). Analysis errs
//! towards more: anything that might run is reported, so a disguise can
//! only make the verdict stricter. What cannot be resolved statically is a
//! [`Fact`] that keeps the action from being auto-approved.

pub mod budget;
mod code;
pub mod command;
mod continuations;
mod discards;
pub mod effects;
pub mod envelope;
mod executors;
pub mod folder;
mod heredoc_operators;
mod incomplete;
pub mod options;
mod outputs;
mod pagers_editors;
mod patches;
pub mod planted;
mod possible;
mod pure;
mod sed;
mod shell;
mod signals;
mod sql;
pub(crate) mod tool_call;
mod tool_commands;
mod windows_shell;
pub mod words;

use crate::names::named_enum;
use std::cell::RefCell;

pub use command::Command;
pub use effects::{Effect, EffectKind, Zone};
pub use folder::{ProjectFolder, WorkingFolder};
use planted::table::Format;
pub use planted::{Change, CurrentFiles, FileWrite, NoCurrentFiles, OnDisk, PlantedAt, Replace};

/// The longest action analysed. Longer ones are refused, not truncated: a
/// dangerous tail must not hide behind a long harmless head.
pub const MAX_HINT_BYTES: usize = 8 * 1024;
/// Executors nested deeper than this (`sh -c "sh -c '…'"`) are not
/// followed; the action gets [`Fact::TooComplex`].
const MAX_DEPTH: usize = 6;

/// `$0` to `$9`: the positional parameters followed by value.
pub(super) const POSITIONALS_KNOWN: usize = 10;
/// The longest tool call analysed (`name {json}`): its values are
/// analysed one by one, each shell, SQL or code value at most
/// [`MAX_HINT_BYTES`], and file content as [`planted`] says.
pub const MAX_TOOL_CALL_BYTES: usize = planted::MAX_PLANTED_BYTES + MAX_HINT_BYTES;
/// Commands reported at most, over every level (a planted script counts).
const MAX_COMMANDS: usize = 4096;
/// Writes with known content judged at most in one action.
const MAX_PLANTED_WRITES: usize = 16;

named_enum! {
    /// Something about an action that a pattern over commands cannot express.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Fact {
        /// A program whose name comes from a variable, a substitution or a glob.
        DynamicCommand => "dynamic_command",
        /// `eval`, `sh -c` or `source` of text that is not known statically.
        EvalOfUnknownText => "eval_of_unknown_text",
        /// Decoded text (`base64 -d`, `xxd -r`) runs in a shell or interpreter.
        DecodedIntoExecutor => "decoded_into_executor",
        /// A file written earlier in the same action is executed.
        WrittenThenExecuted => "written_then_executed",
        /// The action is not valid shell syntax.
        Unparseable => "unparseable",
        /// Configuration that names a program to run (`GIT_SSH_COMMAND`, a
        /// `!` alias, `git -c core.fsmonitor=…`), or a pager or editor
        /// setting that names something other than a pager or an editor
        /// (`pagers_editors`).
        ConfigExecutes => "config_executes",
        /// Processes that multiply without end.
        ForkBomb => "fork_bomb",
        /// A signal sent to every process of the session or of a user
        /// (`kill -- -1`, `killall5`, `pkill -u root`: `signals`).
        SignalsEveryProcess => "signals_every_process",
        /// `DELETE` or `UPDATE` without `WHERE`, or any `TRUNCATE`.
        UnboundedSqlWrite => "unbounded_sql_write",
        /// Inline code that reads secrets and uses the network.
        CodeSendsSecret => "code_sends_secret",
        /// What a download fetched is run: piped or handed to a shell or an
        /// interpreter, or saved and then executed.
        RunsDownloadedCode => "runs_downloaded_code",
        /// Nested or long beyond what is analysed.
        TooComplex => "too_complex",
        /// A file that runs later is written with content the analysis cannot
        /// see or read (copied, moved, downloaded, reported without its text,
        /// or not valid in its format).
        PlantsUnseenCode => "plants_unseen_code",
        /// A write to an agent harness's configuration removes, disables or
        /// changes this guard's own hook or MCP server entry, or switches off
        /// every hook.
        SwitchesOffGuard => "switches_off_guard",
    }
}

impl Fact {
    /// Facts that make an action need a human whatever the policy says:
    /// what will run cannot be known from the text. An unseen plant is
    /// left to the policy: whether a blind write of a Makefile needs a
    /// human is a team's choice (the shipped policies say it does). So is
    /// switching the guard off, which is known, not unknown: the shipped
    /// policies deny it.
    pub fn needs_a_human(self) -> bool {
        !matches!(
            self,
            Self::ForkBomb
                | Self::SignalsEveryProcess
                | Self::UnboundedSqlWrite
                | Self::CodeSendsSecret
                | Self::PlantsUnseenCode
                | Self::SwitchesOffGuard
        )
    }
}

/// Everything found in one action.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    pub commands: Vec<Command>,
    /// Chains where each stage's output feeds the next: pipelines, a
    /// substitution handed to an executor (`bash <(curl …)`), text fed to a
    /// shell. Each stage is a list of indices into `commands`.
    pub feeds: Vec<Vec<Vec<usize>>>,
    /// Files written: redirection targets, `tee`, copy and download
    /// destinations, paths given to file-writing tools.
    pub writes: Vec<String>,
    /// Files read or touched otherwise: every other path-like argument.
    pub reads: Vec<String>,
    /// Facts with what showed them.
    pub facts: Vec<(Fact, String)>,
    /// Files that run later whose written content was judged.
    pub planted: Vec<String>,
    /// Files written, at least once, with content that was not judged
    /// (copied there, downloaded, the output of a program): a file among
    /// them that runs later is unseen, whatever else wrote it.
    pub unjudged_writes: Vec<String>,
    /// What the action does to files, by zone (`effects`).
    pub effects: Vec<Effect>,
    /// What programs the analysis has no model of may run, judged apart
    /// (`possible`): a policy may ask a human about it, never stop for it.
    pub possible: Option<Box<Analysis>>,
}

impl Analysis {
    pub fn has(&self, fact: Fact) -> bool {
        self.facts.iter().any(|(f, _)| *f == fact)
    }

    /// Words a keyword may match: program names and the arguments they act
    /// on, never data, nor the words of a command that only prints its
    /// help.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.commands.iter().filter(|c| c.invocation == command::Invocation::Acts).flat_map(|c| {
            std::iter::once(c.program.as_str())
                .chain(c.flags.iter().map(String::as_str))
                .chain(c.arguments())
        })
    }
}

/// The action is too long to analyse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HintTooLong {
    pub bytes: usize,
}

/// An action to analyse.
#[derive(Debug, Clone, Copy)]
pub struct Action<'a> {
    /// A shell command line, or an MCP tool call written `name {json}`.
    pub text: &'a str,
    /// File writes whose content the caller knows (a hooked `Write` or
    /// `Edit`, each file of a patch), judged with the text.
    pub writes: &'a [FileWrite],
    /// Where the action starts.
    pub folder: &'a WorkingFolder,
    /// How a file being edited is read as it is now.
    pub files: &'a dyn CurrentFiles,
}

/// Analyses an action: a shell command line, or an MCP tool call written
/// `name {json}`. A descriptive label at the start (`executing shell
/// command: …`, up to six words before `: `) is analysed with and without.
/// Relative paths are read as inside the project.
pub fn analyze(hint: &str) -> Result<Analysis, HintTooLong> {
    analyze_in(hint, &WorkingFolder::Project)
}

/// Like [`analyze`] for an action that starts in a known folder
/// (`folder`); no file is read.
pub fn analyze_in(hint: &str, start: &WorkingFolder) -> Result<Analysis, HintTooLong> {
    analyze_action(&Action { text: hint, writes: &[], folder: start, files: &NoCurrentFiles })
}

/// Analyses an action with the file write it makes, if the caller knows
/// it, judging every file that runs later by what it will run.
pub fn analyze_action(action: &Action<'_>) -> Result<Analysis, HintTooLong> {
    let hint = action.text;
    if hint.len() > MAX_TOOL_CALL_BYTES {
        return Err(HintTooLong { bytes: hint.len() });
    }
    let (analysed, exceeded) = budget::scope(|| {
        walk_action(action).map(|mut builder| {
            let candidates = std::mem::take(&mut builder.possible);
            let possibly = (!candidates.is_empty()).then(|| possible::walk(candidates));
            (builder, possibly)
        })
    });
    let (mut builder, possibly) = analysed?;
    if let Some(exceeded) = exceeded {
        // What was found before the budget ran out stands; the rest is
        // unknown, so a human decides.
        builder.fact(Fact::TooComplex, format!("analysis stopped: {}", exceeded.describe()));
    }
    let mut analysis = settle(builder, action.folder);
    if let Some(apart) = possibly {
        analysis.possible = Some(Box::new(settle(apart, action.folder)));
    }
    Ok(analysis)
}

/// What a walked builder found, with its paths placed and its effects read.
fn settle(mut builder: Builder, start: &WorkingFolder) -> Analysis {
    folder::resolve_in(&mut builder.analysis, &builder.scopes, &builder.written_by, start);
    builder.finish();
    effects::find(&mut builder.analysis);
    builder.analysis
}

/// Walks everything `action` runs and writes, within the caller's budget.
fn walk_action(action: &Action<'_>) -> Result<Builder, HintTooLong> {
    let hint = action.text;
    let normal = words_normalized(hint);
    let mut builder = Builder::default();
    if !tool_call::analyze(&mut builder, &normal) {
        if hint.len() > MAX_HINT_BYTES {
            return Err(HintTooLong { bytes: hint.len() });
        }
        builder.shell(&normal, None);
        if let Some(rest) = after_label(&normal) {
            builder.shell(rest, None);
        }
        // A line for cmd or PowerShell is read their way as well.
        if let Some(dialect) = windows_shell::dialect_of(&normal) {
            windows_shell::analyze(&mut builder, dialect, &normal, None);
            if let Some(rest) = after_label(&normal) {
                windows_shell::analyze(&mut builder, dialect, rest, None);
            }
        }
    }
    builder.pending_writes.extend(action.writes.iter().cloned());
    // The scripts the action's own commands run, found once: a file only
    // a planted script runs is judged as written and run, unseen.
    let scripts = builder.scripts_run();
    let mut judged = 0;
    while let Some(write) = builder.pending_writes.pop() {
        judged += 1;
        if judged > MAX_PLANTED_WRITES {
            builder.fact(
                Fact::TooComplex,
                format!("more than {MAX_PLANTED_WRITES} file writes with content"),
            );
            break;
        }
        let path = words::normalize_path(&write.path);
        let run_as: Vec<Format> = scripts
            .iter()
            .filter(|(file, _)| same_file(file, &path))
            .map(|(_, format)| *format)
            .collect();
        planted::plant(&mut builder, &write, &run_as, action.files);
    }
    planted::removed_guards(&mut builder, action.files);
    Ok(builder)
}

/// NFKC (full-width letters become ASCII) with invisible characters removed
/// (zero-width spaces and joiners, bidi controls, soft hyphens); case and
/// everything else as written.
fn words_normalized(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    if text.is_ascii() {
        return text.to_owned();
    }
    text.nfkc().filter(|&c| !is_invisible(c)).collect()
}

fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{FFF0}'..='\u{FFF8}' | '\u{E0000}'..='\u{E0FFF}')
}

/// The command after a label of one to six words and `: ` at the start.
fn after_label(text: &str) -> Option<&str> {
    let (label, rest) = text.split_once(": ")?;
    let words: Vec<&str> = label.split_whitespace().collect();
    let plain = (1..=6).contains(&words.len())
        && words.iter().all(|w| w.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_'));
    (plain && !rest.trim().is_empty()).then_some(rest)
}

/// Text the parser refuses, in a form bash runs the same way that it
/// accepts, if there is one: here-document operators respelled
/// (`heredoc_operators`), `cat <<EOF; cmd` with `cmd` moved after the
/// body (`shell`), or input that ends inside a quote or a here-document
/// completed (`incomplete`).
fn as_bash_reads(script: &str) -> Option<(tree_sitter::Tree, String)> {
    let respelled = heredoc_operators::respelled(script);
    let moved =
        shell::with_rests_after_heredocs(respelled.as_deref().unwrap_or(script)).or(respelled);
    let completed = incomplete::completed(moved.as_deref().unwrap_or(script));
    [moved, completed]
        .into_iter()
        .flatten()
        .filter(|text| budget::work(text.len() + budget::PARSE_STEPS))
        .find_map(|text| {
            let tree = parse_bash(&text).filter(|tree| !tree.root_node().has_error())?;
            Some((tree, text))
        })
}

/// Collects what every level of an action runs.
#[derive(Default)]
pub(crate) struct Builder {
    analysis: Analysis,
    depth: usize,
    vars: words::Vars,
    /// Here-documents and here-strings given to `cat`, by command index.
    here_texts: std::collections::HashMap<usize, String>,
    /// A `for` loop's body is being walked once per known word.
    unrolling: bool,
    /// Parsing text found inside code: what does not parse as shell is
    /// most likely not meant as shell, so it is not a fact.
    lenient: bool,
    /// What programs with no model may run, to walk apart (`possible`).
    possible: Vec<possible::Candidate>,
    /// An MCP tool call is being recorded: its keys say which values run
    /// (`tool_call`), so the others are not read as commands it may run.
    recording_tool_call: bool,
    /// Redirection targets written, with the commands whose output goes
    /// there.
    written_by: Vec<(Vec<usize>, String)>,
    /// File writes whose content is known, to judge once the action is
    /// walked.
    pending_writes: Vec<FileWrite>,
    /// Where the part being analysed was planted, while one is.
    planting: Option<Planting>,
    /// How many branches that may not run (`a && b`'s `b`, a loop body)
    /// enclose the part being walked.
    conditional: usize,
    /// Shell functions defined so far, by name: the text of their body,
    /// walked where a command calls them (the last definition before the
    /// call is the one that runs).
    functions: std::collections::HashMap<String, String>,
    /// Aliases defined so far (`alias NAME=VALUE`), by name: a later
    /// command whose first word is NAME runs VALUE with its other words.
    /// Harnesses run commands in shells that expand aliases (their shell
    /// snapshots turn `expand_aliases` on), and a definition on an
    /// earlier line of the same text takes effect, so every later
    /// command is read that way.
    aliases: std::collections::HashMap<String, String>,
    /// Names bound to a program's path (`hash -p PATH NAME`): a later
    /// command NAME runs PATH; `None` when the path is not known before
    /// it runs.
    hashed: std::collections::HashMap<String, Option<String>>,
    /// Functions exported to child processes (`export -f NAME`): another
    /// bash started by the action sees them.
    exported_functions: std::collections::HashSet<String>,
    /// The subshells and other processes enclosing the part being walked,
    /// outermost first (each a number of its own): what a `cd` in one
    /// changes ends with it.
    scope: Vec<u32>,
    /// Scopes opened so far, to number the next.
    scopes_opened: u32,
    /// The scope of every command recorded, by index.
    scopes: Vec<Vec<u32>>,
    /// The command being recorded is `time` with an assignment before it
    /// (`X=1 time f`): not the keyword but the program, which runs `f`
    /// in a process of its own.
    time_is_a_program: bool,
    /// The next command recorded reads a pipe from an earlier stage
    /// (`shell::pipeline` sets it for each later stage).
    stdin_piped: bool,
    /// `xargs` reading a pipe, by index: what it runs is worked out once
    /// the stages before it are walked, with the text those print when it
    /// is known (`executors::pipeline_text`).
    awaiting_input: Vec<usize>,
    /// Commands that print what others printed, by index: a printer given
    /// their output as words (`echo "$(env)"`, `printf %s "$X"`) or any
    /// command given it as a here-string (`base64 <<< "$X"`). A pipeline
    /// starting there is a chain from those others (`shell::pipeline`).
    prints_output_of: std::collections::HashMap<usize, Vec<usize>>,
}

/// Where a part runs that does not change the shell it is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subshell {
    /// A copy of the shell (`( … )`, a pipeline's stage, `$( … )`): it
    /// starts with the shell's functions and aliases.
    Copy,
    /// Another program (what `sudo`, `xargs` or `bash -c` runs): the
    /// shell's functions (but those exported) and aliases are not there.
    Program,
}

/// The planted part being analysed: where, and for a shell part the
/// depth it is parsed at (its top-level statements give the lines).
struct Planting {
    at: PlantedAt,
    first_line: usize,
    shell_depth: Option<usize>,
}

thread_local! {
    static PARSER: RefCell<Option<tree_sitter::Parser>> = const { RefCell::new(None) };
}

/// Parses shell text with this thread's parser. Nodes' byte ranges are
/// ranges of `script`.
///
/// The parser is given the text with every non-ASCII byte (and every
/// blank bash does not split at) replaced by `x`.
/// tree-sitter-bash 0.25.1's scanner hands the character after `{` (and
/// after `{N..`) to C's `isdigit`, which reads outside its table for
/// characters beyond Latin-1: `echo {` followed by U+F7000 crashes the
/// process. The replacement has the same length, so every range fits the
/// original, which is what the walk reads; and bash, like the grammar,
/// reads non-ASCII characters as word characters, as it reads `x`.
pub(crate) fn parse_bash(script: &str) -> Option<tree_sitter::Tree> {
    // Carriage returns, vertical tabs and form feeds are word characters
    // to bash (only space, tab and newline separate words), but the
    // grammar reads them as blanks: `echo a\r#b; rm -rf ~` would hide the
    // removal in a comment. They are given to it as `x` too.
    let word_character = |b: u8| b.is_ascii() && !matches!(b, b'\r' | 0x0b | 0x0c);
    let ascii: std::borrow::Cow<'_, [u8]> = if script.bytes().all(word_character) {
        script.as_bytes().into()
    } else {
        script.bytes().map(|b| if word_character(b) { b } else { b'x' }).collect::<Vec<u8>>().into()
    };
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let parser = match &mut *slot {
            Some(parser) => parser,
            None => {
                // Fails only if the grammar and the runtime disagree on
                // their ABI: nothing parses, every action is unparseable.
                let mut parser = tree_sitter::Parser::new();
                parser.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
                slot.insert(parser)
            }
        };
        parser.parse(&ascii, None)
    })
}

impl Builder {
    pub(crate) fn fact(&mut self, fact: Fact, detail: impl Into<String>) {
        if !self.analysis.has(fact) {
            let detail = match &self.planting {
                Some(planting) => format!("{} ({})", detail.into(), planting.at),
                None => detail.into(),
            };
            self.analysis.facts.push((fact, detail));
        }
    }

    /// Analyses a part planted at `at` with `analyse`: every command and
    /// fact found names the file and line (for a shell part, the line of
    /// its statement).
    pub(crate) fn planting(&mut self, at: PlantedAt, shell: bool, analyse: impl FnOnce(&mut Self)) {
        let planting =
            Planting { first_line: at.line, at, shell_depth: shell.then_some(self.depth) };
        let outer = self.planting.replace(planting);
        let outer_vars = std::mem::take(&mut self.vars);
        analyse(self);
        self.vars = outer_vars;
        self.planting = outer;
    }

    /// Parses and walks a script; returns the indices of the commands it
    /// runs directly (not those inside substitutions).
    pub(crate) fn shell(&mut self, script: &str, via: Option<&str>) -> Vec<usize> {
        if self.depth >= MAX_DEPTH {
            self.fact(Fact::TooComplex, format!("executors nested deeper than {MAX_DEPTH}"));
            return Vec::new();
        }
        // Text found inside other text (a call's arguments, a planted
        // file's lines) can be parsed many times over: each parse is paid
        // for by its length.
        if !budget::work(script.len() + budget::PARSE_STEPS) {
            return Vec::new();
        }
        let joined = continuations::joined(script);
        let script = joined.as_deref().unwrap_or(script);
        let Some(mut tree) = parse_bash(script) else {
            self.fact(Fact::Unparseable, "the shell parser gave up");
            return Vec::new();
        };
        let rewritten = tree.root_node().has_error().then(|| as_bash_reads(script)).flatten();
        let script = match rewritten {
            Some((rewritten, text)) => {
                tree = rewritten;
                std::borrow::Cow::Owned(text)
            }
            None => std::borrow::Cow::Borrowed(script),
        };
        let script = script.as_ref();
        if tree.root_node().has_error() && !self.lenient {
            self.fact(Fact::Unparseable, format!("not valid shell: {}", preview(script)));
        }
        let planted_part =
            self.planting.as_ref().is_some_and(|planting| planting.shell_depth == Some(self.depth));
        self.depth += 1;
        let outer_vars = self.depth > 1 && !planted_part;
        let saved = outer_vars.then(|| self.vars.clone());
        let direct = if planted_part {
            self.walk_planted(tree.root_node(), script)
        } else {
            shell::walk(self, tree.root_node(), script, via)
        };
        if let Some(saved) = saved {
            self.vars = saved;
        }
        self.depth -= 1;
        direct
    }

    /// A planted script's top-level statements, each with its line.
    fn walk_planted(&mut self, root: tree_sitter::Node<'_>, script: &str) -> Vec<usize> {
        let mut direct = Vec::new();
        let mut cursor = root.walk();
        for statement in root.named_children(&mut cursor) {
            if let Some(planting) = &mut self.planting {
                planting.at.line = planting.first_line + statement.start_position().row;
            }
            direct.extend(shell::walk(self, statement, script, None));
        }
        direct
    }

    /// Like [`Builder::shell`] for a string found in code.
    pub(crate) fn shell_lenient(&mut self, script: &str, via: Option<&str>) -> Vec<usize> {
        let was = std::mem::replace(&mut self.lenient, true);
        let direct = self.shell(script, via);
        self.lenient = was;
        direct
    }

    /// Records a command and what it runs in turn; returns its index.
    pub(crate) fn command(&mut self, mut command: Command) -> Option<usize> {
        let time_is_a_program = std::mem::take(&mut self.time_is_a_program);
        let stdin_piped = std::mem::take(&mut self.stdin_piped);
        if let Some(planting) = &self.planting {
            command.planted = Some(planting.at.clone());
        }
        if self.analysis.commands.len() >= MAX_COMMANDS {
            self.fact(Fact::TooComplex, format!("more than {MAX_COMMANDS} commands"));
            return None;
        }
        // What the analysis reports is produced too: a call that never
        // closes can hand every later string to each of thousands of
        // commands.
        if !budget::produce(command.argv.iter().map(String::len).sum()) {
            return None;
        }
        if command.dynamic_program {
            self.fact(
                Fact::DynamicCommand,
                format!(
                    "the program of `{}` is not known before it runs",
                    preview(&command.argv.join(" "))
                ),
            );
        }
        let index = self.analysis.commands.len();
        // A program that only lists names or changes metadata reads no
        // content: `ls ~/.ssh` shows which keys exist and `chmod 600` of
        // one guards it, `cat` of one shows the key.
        let reads_content = reads_content(&command);
        for argument in command.arguments().filter(|_| reads_content) {
            self.analysis.reads.push(argument.to_owned());
            // `-d @file`, `-F key=@file`: curl and friends read the file.
            if let Some((_, file)) =
                argument.rsplit_once('@').filter(|(_, f)| f.starts_with(['/', '~', '.']))
            {
                self.analysis.reads.push(words::normalize_path(file));
            }
            // `dd if=FILE` reads FILE.
            if let Some(file) = argument.strip_prefix("if=").filter(|_| command.program == "dd") {
                self.analysis.reads.push(words::normalize_path(file));
            }
            // `git show HEAD:.env` prints the file as committed.
            if let Some((_, file)) = argument
                .split_once(':')
                .filter(|(_, file)| !file.is_empty() && command.program == "git")
            {
                self.analysis.reads.push(words::normalize_path(file));
            }
        }
        let keys = keys_authenticated_with(&command);
        if !keys.is_empty() {
            self.take_back_reads(&command, keys.iter().map(String::as_str));
        }
        let called = (!command.dynamic_program)
            .then(|| command.argv.first().and_then(|name| self.functions.get(name)).cloned())
            .flatten();
        let aliased = (!command.dynamic_program)
            .then(|| {
                let (name, rest) = command.argv.split_first()?;
                let value = self.aliases.get(name)?;
                let text = std::iter::once(value.as_str())
                    .chain(rest.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ");
                Some((name.clone(), value.clone(), text))
            })
            .flatten();
        if command.program == "alias" {
            self.define_aliases(&command);
        }
        if command.program == "export" {
            self.export_functions(&command);
        }
        // Bash looks a hashed name up only when no function or alias has
        // it.
        // The path a name is bound to is run as it is, not looked up again.
        let hashed = (!command.dynamic_program
            && called.is_none()
            && aliased.is_none()
            && command.via.as_deref() != Some("hash"))
        .then(|| {
            let (name, rest) = command.argv.split_first()?;
            let path = self.hashed.get(name)?.clone();
            Some((path, rest.to_vec(), command.dynamic_args))
        })
        .flatten();
        if command.program == "hash" {
            self.hash(&command);
        }
        if let Some(why) = signals::every_process(&command) {
            let shown = preview(&command.argv.join(" "));
            self.fact(Fact::SignalsEveryProcess, format!("`{shown}`: {why}"));
        }
        self.analysis.commands.push(command);
        self.scopes.push(self.scope.clone());
        if let Some(body) = called {
            // A function calling itself nests until the depth bound.
            let call = self.get(index);
            let (args, appended) =
                (call.argv.get(1..).unwrap_or_default().to_vec(), call.dynamic_args);
            self.with_positionals(None, &args, appended, |builder| {
                builder.shell(&body, Some("function"));
            });
        }
        if let Some((name, value, text)) = aliased {
            // Bash does not expand an alias again inside its own value
            // (`alias ls='ls --color'`).
            self.aliases.remove(&name);
            self.shell(&text, Some("alias"));
            self.aliases.insert(name, value);
        }
        if let Some((path, rest, dynamic_args)) = hashed {
            let known = path.is_some();
            let argv = std::iter::once(path.unwrap_or_else(|| words::RUN_TIME_VALUE.to_owned()))
                .chain(rest)
                .collect();
            self.command(Command::new(argv, !known, dynamic_args, Some("hash".to_owned())));
        }
        if stdin_piped && executors::reads_its_input_as_arguments(self.get(index)) {
            self.awaiting_input.push(index);
        } else {
            self.unwrap(index, time_is_a_program);
        }
        Some(index)
    }

    /// Walks what the command at `index` runs in turn (`executors`), in
    /// the shell itself or in a process of its own, as it runs.
    fn unwrap(&mut self, index: usize, time_is_a_program: bool) {
        if self.depth < MAX_DEPTH + 1 {
            self.depth += 1;
            if executors::runs_in_this_shell(self.get(index)) && !time_is_a_program {
                executors::unwrap(self, index);
            } else {
                self.in_subshell(Subshell::Program, |builder| executors::unwrap(builder, index));
            }
            self.depth -= 1;
        } else {
            self.fact(Fact::TooComplex, format!("executors nested deeper than {MAX_DEPTH}"));
        }
    }

    /// Walks what each `xargs` still waiting for its input runs, that
    /// input not known.
    pub(crate) fn unwrap_awaiting_input(&mut self) {
        for index in std::mem::take(&mut self.awaiting_input) {
            self.unwrap(index, false);
        }
    }

    /// Runs `analyse` with the positional parameters a `-c` text or a
    /// function call sees: `zero` as `$0` when given (a function keeps the
    /// caller's), `args` as `$1` to `$9` (`sh -c 'rm -rf "$1"' _ ~`), one not
    /// given empty, as bash has them; none known when words are appended at
    /// run time (`xargs sh -c '…' _`). The caller's own are back after.
    /// `${10}` on, `$@`, `$*` and `$#` stay unknown.
    pub(crate) fn with_positionals(
        &mut self,
        zero: Option<&str>,
        args: &[String],
        appended: bool,
        analyse: impl FnOnce(&mut Self),
    ) {
        let saved: Vec<(String, Option<Option<String>>)> = (0..POSITIONALS_KNOWN)
            .map(|n| n.to_string())
            .map(|name| {
                let value = self.vars.value(&name).map(|v| v.map(str::to_owned));
                (name, value)
            })
            .collect();
        if let Some(zero) = zero {
            self.vars.set("0", (!appended).then(|| zero.to_owned()));
        }
        for position in 1..POSITIONALS_KNOWN {
            let value = args.get(position - 1).cloned().unwrap_or_default();
            self.vars.set(&position.to_string(), (!appended).then_some(value));
        }
        analyse(self);
        for (name, value) in saved {
            // One never set reads as unknown after, as it did before.
            self.vars.set(&name, value.flatten());
        }
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "every index a builder hands out is that of a command it pushed; commands are only \
                  renumbered once the walk is over"
    )]
    pub(crate) fn get(&self, index: usize) -> &Command {
        &self.analysis.commands[index]
    }

    /// A file written with content that is not judged.
    pub(crate) fn write(&mut self, path: &str) {
        self.write_judged(path);
        self.analysis.unjudged_writes.push(words::normalize_path(path));
    }

    /// A file written with content judged as a pending write.
    pub(crate) fn write_judged(&mut self, path: &str) {
        self.analysis.writes.push(words::normalize_path(path));
    }

    /// A redirection target written with the output of `commands`
    /// (appended with `>>`); what they print, when it is known, is judged
    /// as the file's content.
    pub(crate) fn write_from(&mut self, commands: &[usize], path: &str, append: bool) {
        let text = commands.last().and_then(|&last| executors::static_output(self, last));
        if text.is_some() {
            self.write_judged(path);
        } else {
            self.write(path);
        }
        if !append {
            // Placed in its zone once the action's paths are resolved.
            self.analysis.effects.push(Effect {
                kind: EffectKind::Overwrite,
                target: words::normalize_path(path),
                zone: Zone::Unknown,
            });
        }
        self.written_by.push((commands.to_vec(), words::normalize_path(path)));
        if let Some(text) = text {
            let change = if append { Change::Append(text) } else { Change::Whole(text) };
            self.pending_writes.push(FileWrite { path: path.to_owned(), change });
        }
    }

    /// The words of `command` that hold `values`, command lines it runs,
    /// settings it is given or the words of the command it runs (`-c
    /// TEXT`, `-e TEXT`, `NAME=TEXT`, `git -c core.sshCommand=TEXT`, `env
    /// CI=1 ssh -i KEY host`), name no file it reads itself: the reads
    /// `command` reported for them are taken back, and what the text or
    /// the inner command reads is found where it runs (`bash -c 'ls
    /// ~/.ssh'` lists, `bash -c 'cat ~/.ssh/id_rsa'` reads). At most as
    /// many reads of a value go as `command` has words holding it, the
    /// last reported: one another command reported earlier stays.
    pub(crate) fn take_back_reads<'v>(
        &mut self,
        command: &Command,
        values: impl IntoIterator<Item = &'v str>,
    ) {
        if !reads_content(command) {
            return;
        }
        let mut owned: Vec<&str> = command.arguments().collect();
        for value in values {
            let value = words::normalize_path(value);
            let holds = |word: &str| {
                word == value || word.split_once('=').is_some_and(|(_, held)| held == value)
            };
            let Some(at) = owned.iter().position(|word| holds(word)) else { continue };
            owned.swap_remove(at);
            if let Some(at) = self.analysis.reads.iter().rposition(|read| holds(read)) {
                self.analysis.reads.remove(at);
            }
        }
    }

    pub(crate) fn read(&mut self, path: &str) {
        self.analysis.reads.push(words::normalize_path(path));
    }

    pub(crate) fn feed(&mut self, stages: Vec<Vec<usize>>) {
        if stages.len() > 1 {
            self.analysis.feeds.push(stages);
        }
    }

    /// Defines a shell function. A function a planted file defines runs
    /// later, when whoever reads the file calls it: its body is walked
    /// now. One the action defines runs only where the action calls it.
    pub(crate) fn define_function(&mut self, name: &str, body: &str, via: Option<&str>) {
        if self.planting.is_some() {
            self.shell(body, via);
        } else {
            self.functions.insert(name.to_owned(), body.to_owned());
        }
    }

    /// Records the aliases `alias NAME=VALUE …` defines. One planted in a
    /// file (a shell's startup file) runs later, whenever its name is
    /// typed: its value is walked now. A value not known before the
    /// command runs makes the name run something unknown.
    fn define_aliases(&mut self, command: &Command) {
        if command.dynamic_args {
            self.fact(
                Fact::DynamicCommand,
                format!(
                    "`{}` defines an alias not known before it runs",
                    preview(&command.argv.join(" "))
                ),
            );
        }
        for definition in command.argv.iter().skip(1) {
            let Some((name, value)) = definition.split_once('=') else { continue };
            if self.planting.is_some() {
                self.shell(value, Some("alias"));
            } else {
                self.aliases.insert(name.to_owned(), value.to_owned());
            }
        }
    }

    /// Walks a part that runs in a subshell or another program with
    /// `walk`: what it assigns, defines, aliases, hashes or `cd`s into is
    /// not in force after it (`( cd ~/.ssh ); rm id_rsa` removes the
    /// project's `id_rsa`).
    pub(crate) fn in_subshell<T>(
        &mut self,
        kind: Subshell,
        walk: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let vars = self.vars.clone();
        let functions = self.functions.clone();
        let aliases = self.aliases.clone();
        let hashed = self.hashed.clone();
        let exported = self.exported_functions.clone();
        if kind == Subshell::Program {
            self.functions.retain(|name, _| exported.contains(name));
            self.aliases.clear();
            self.hashed.clear();
        }
        self.scopes_opened = self.scopes_opened.saturating_add(1);
        self.scope.push(self.scopes_opened);
        let walked = walk(self);
        self.scope.pop();
        self.vars = vars;
        self.functions = functions;
        self.aliases = aliases;
        self.hashed = hashed;
        self.exported_functions = exported;
        walked
    }

    /// Records what `hash` binds: `-p PATH NAME…` binds the names to PATH
    /// (unknown when its words are), `-d NAME…` unbinds them, `-r`
    /// forgets every binding.
    fn hash(&mut self, command: &Command) {
        let mut path: Option<Option<String>> = None;
        let mut deletes = false;
        let mut words = command.argv.iter().skip(1);
        let mut names = Vec::new();
        while let Some(word) = words.next() {
            if !names.is_empty() || word == "-" || !word.starts_with('-') {
                names.push(word.clone());
                continue;
            }
            if word == "--" {
                names.extend(words.by_ref().cloned());
                break;
            }
            let cluster = word.get(1..).unwrap_or_default();
            for (at, option) in cluster.char_indices() {
                match option {
                    'r' => self.hashed.clear(),
                    'd' => deletes = true,
                    'p' => {
                        let glued = cluster.get(at + 1..).unwrap_or_default();
                        let value = if glued.is_empty() {
                            words.next().cloned()
                        } else {
                            Some(glued.to_owned())
                        };
                        path = Some(value.filter(|_| !command.dynamic_args));
                        break;
                    }
                    _ => {}
                }
            }
        }
        for name in names {
            match &path {
                Some(path) if !deletes => {
                    self.hashed.insert(name, path.clone());
                }
                _ if deletes => {
                    self.hashed.remove(&name);
                }
                _ => {}
            }
        }
    }

    /// Marks the functions `export -f NAME …` exports to child processes.
    fn export_functions(&mut self, command: &Command) {
        let (options, names): (Vec<&String>, Vec<&String>) =
            command.argv.iter().skip(1).partition(|word| word.starts_with('-'));
        if options.iter().any(|option| option.contains('f') && !option.starts_with("--")) {
            self.exported_functions.extend(names.into_iter().cloned());
        }
    }

    pub(crate) fn vars(&mut self) -> &mut words::Vars {
        &mut self.vars
    }

    /// `name` is assigned the output of `commands` (none: no output), in
    /// place of what it held, or besides it where the assignment may not
    /// run.
    pub(crate) fn hold_output_of(&mut self, name: &str, commands: &[usize]) {
        let surely = self.conditional == 0;
        let commands = self.and_whose_output_they_print(commands.to_vec());
        self.vars.hold_output_of(name, &commands, surely);
    }

    /// `printer` prints what `commands` print (see `prints_output_of`).
    pub(crate) fn prints_output_of(&mut self, printer: usize, commands: Vec<usize>) {
        if !commands.is_empty() {
            let commands = self.and_whose_output_they_print(commands);
            self.prints_output_of.entry(printer).or_default().extend(commands);
        }
    }

    /// The commands whose output the commands of `stage` print.
    pub(crate) fn printed_by(&self, stage: &[usize]) -> Vec<usize> {
        stage.iter().filter_map(|at| self.prints_output_of.get(at)).flatten().copied().collect()
    }

    /// `commands` and, of those that print what others printed, those
    /// others: already closed when recorded, so one step suffices.
    pub(crate) fn and_whose_output_they_print(&self, mut commands: Vec<usize>) -> Vec<usize> {
        commands.extend(self.printed_by(&commands));
        commands.sort_unstable();
        commands.dedup();
        commands
    }

    /// Assigns a variable; inside a branch that may not run, a value
    /// other than the one it had makes it unknown (`S=/etc; false &&
    /// S=/tmp/d; … "$S"` may be either).
    pub(crate) fn assign(&mut self, name: &str, value: Option<String>) {
        let value = if self.conditional > 0 && self.vars.value(name) != Some(value.as_deref()) {
            None
        } else {
            value
        };
        self.vars.set(name, value);
    }

    /// Facts that need the whole action: a file written and then run
    /// (order does not matter: either way round is suspicious).
    fn finish(&mut self) {
        self.downloads_run();
        self.merge_repeated_commands();
        for command in &self.analysis.commands {
            let written = outputs::files_written_by(command);
            // A file-writing tool's content is the hook's pending write.
            if !code::is_file_writing_tool(&command.program) {
                self.analysis.unjudged_writes.extend(written.iter().cloned());
            }
            self.analysis.writes.extend(written);
        }
        // A script whose every write was judged was judged as it runs.
        let executed =
            self.analysis.commands.iter().filter_map(executed_script).map(|(file, _)| file).find(
                |file| {
                    self.analysis.writes.iter().any(|w| same_file(w, file)) && self.is_unseen(file)
                },
            );
        if let Some(file) = executed {
            self.fact(Fact::WrittenThenExecuted, format!("{file} is written and then run"));
        }
        self.analysis.writes.sort();
        self.analysis.writes.dedup();
        self.unseen_plants();
        // A destination (`cp a b`, `tee b`) is written, not read.
        let writes = &self.analysis.writes;
        self.analysis.reads.retain(|read| !writes.contains(read));
        self.analysis.reads.sort();
        self.analysis.reads.dedup();
    }
}

impl Builder {
    /// Files that run later written without their content being judged.
    fn unseen_plants(&mut self) {
        let unseen = self
            .analysis
            .writes
            .iter()
            .filter(|w| self.is_unseen(w))
            .find_map(|w| planted::why_it_runs(w).map(|why| (w.clone(), why)));
        if let Some((path, why)) = unseen {
            self.fact(Fact::PlantsUnseenCode, planted::describe_unseen(&path, why));
        }
    }

    /// The files the action's commands run (`bash x.sh`, `python3 x.py`,
    /// `./x`), once for each way a command reads one.
    fn scripts_run(&self) -> Vec<(String, Format)> {
        let mut seen = std::collections::HashSet::new();
        let mut scripts: Vec<(String, Format)> = Vec::new();
        for (file, format) in self.analysis.commands.iter().filter_map(executed_script) {
            if let Some(format) = format
                && seen.insert((file.trim_start_matches("./").to_owned(), format))
            {
                scripts.push((file, format));
            }
        }
        scripts
    }

    /// Whether what `path` holds after the action was not all judged:
    /// something wrote it without its content judged, or nothing judged
    /// any write of it.
    fn is_unseen(&self, path: &str) -> bool {
        let analysis = &self.analysis;
        analysis.unjudged_writes.iter().any(|w| same_file(w, path))
            || !analysis.planted.iter().any(|p| same_file(p, path))
    }

    /// Keeps one copy of each command found more than once (the text after
    /// a label is analysed twice; a loop body may repeat a line), so every
    /// command is matched once. Chains name the copy kept.
    fn merge_repeated_commands(&mut self) {
        let mut kept: std::collections::HashMap<&Command, usize> = std::collections::HashMap::new();
        let mut unique = Vec::new();
        let renumbered: Vec<usize> = self
            .analysis
            .commands
            .iter()
            .enumerate()
            .map(|(index, command)| {
                *kept.entry(command).or_insert_with(|| {
                    unique.push(index);
                    unique.len() - 1
                })
            })
            .collect();
        if unique.len() == self.analysis.commands.len() {
            return;
        }
        let mut index = 0;
        self.analysis.commands.retain(|_| {
            let keep = unique.binary_search(&index).is_ok();
            index += 1;
            keep
        });
        for stage in self.analysis.feeds.iter_mut().flatten() {
            for command in stage.iter_mut() {
                // INVARIANT: feeds hold indexes of commands; `renumbered`
                // has one entry per command.
                #[expect(clippy::indexing_slicing, reason = "see the invariant above")]
                let new = renumbered[*command];
                *command = new;
            }
            stage.dedup();
        }
        self.analysis.feeds.sort();
        self.analysis.feeds.dedup();
    }

    /// A downloader's output reaching an executor through a chain, or a
    /// file it saved being executed.
    fn downloads_run(&mut self) {
        let commands = &self.analysis.commands;
        let downloads =
            |stage: &Vec<usize>| stage.iter().filter_map(|&i| commands.get(i)).any(is_downloader);
        let runs = |stage: &Vec<usize>| {
            stage.iter().filter_map(|&i| commands.get(i)).any(executors::runs_its_input)
        };
        let piped = self.analysis.feeds.iter().find(|stages| {
            stages
                .iter()
                .position(downloads)
                .is_some_and(|at| stages.get(at + 1..).unwrap_or_default().iter().any(runs))
        });
        let planted_at = piped
            .and_then(|stages| {
                stages.iter().flatten().find_map(|&i| commands.get(i)?.planted.as_ref())
            })
            .map(|at| format!(" ({at})"))
            .unwrap_or_default();
        let mut saved: Vec<String> = commands
            .iter()
            .filter(|c| is_downloader(c))
            .flat_map(outputs::files_written_by)
            .collect();
        saved.extend(
            self.written_by
                .iter()
                .filter(|(from, _)| from.iter().filter_map(|&i| commands.get(i)).any(is_downloader))
                .map(|(_, path)| path.clone()),
        );
        let saved_run = commands
            .iter()
            .filter_map(executed_script)
            .map(|(file, _)| file)
            .find(|file| saved.iter().any(|s| same_file(s, file)));
        if piped.is_some() {
            self.fact(
                Fact::RunsDownloadedCode,
                format!("downloaded content flows into a shell or an interpreter{planted_at}"),
            );
        } else if let Some(file) = saved_run {
            self.fact(Fact::RunsDownloadedCode, format!("{file} is downloaded and then run"));
        }
    }
}

fn same_file(a: &str, b: &str) -> bool {
    a.trim_start_matches("./") == b.trim_start_matches("./")
}

/// The file a command runs, if it runs one (`./x`, `sh x`, `source x`,
/// `python3 x.py`), with the format its content is read in: `None` where
/// the file is named but how the command reads it is not worked out.
fn executed_script(command: &Command) -> Option<(String, Option<Format>)> {
    let first = command.argv.first()?;
    if first.contains('/') {
        // Run directly: a shebang names its interpreter (the table reads
        // it); bash runs a file without one as a script of its own.
        return Some((words::normalize_path(first), Some(Format::Shell)));
    }
    let program = command.program.as_str();
    let read = if matches!(program, "source" | ".") {
        command.positionals.first().map(|file| (file.as_str(), Format::Shell))
    } else if executors::SHELLS.contains(&program) {
        executors::shell_script_file(&command.argv).map(|file| (file.as_str(), Format::Shell))
    } else if let Some(file) = typescript_script(command) {
        Some((file, Format::Code("node")))
    } else {
        code::script_file(command).and_then(|(language, at)| {
            Some((command.argv.get(at)?.as_str(), Format::Code(language)))
        })
    };
    if let Some((file, format)) = read {
        return Some((words::normalize_path(file), Some(format)));
    }
    let runs_a_file = executors::SHELLS.contains(&program) || code::is_interpreter(program);
    runs_a_file.then(|| command.positionals.first().map(|file| (file.clone(), None))).flatten()
}

/// Whether the file a command runs as a script (`bash FILE`, `source
/// FILE`, `python3 FILE`) is a word not known before it runs.
fn runs_an_unknown_script(command: &Command) -> bool {
    executed_script(command).is_some_and(|(file, format)| {
        format.is_some() && file == words::RUN_TIME_VALUE && !command.dynamic_program
    })
}

/// Runners of TypeScript and modern JavaScript files, read as node code.
const SCRIPT_RUNNERS: [&str; 5] = ["tsx", "ts-node", "ts-node-esm", "esno", "vite-node"];

/// The file `tsx FILE` runs, also through a package runner (`npx tsx
/// FILE`, `pnpm exec ts-node FILE`, `bunx tsx FILE`): the first word
/// after the runner's options.
fn typescript_script(command: &Command) -> Option<&str> {
    let argv = &command.argv;
    let after_options = |from: usize| {
        let mut at = from;
        while let Some(word) = argv.get(at).filter(|word| word.starts_with('-')) {
            at += if matches!(word.as_str(), "-p" | "--package") { 2 } else { 1 };
        }
        at
    };
    let runner_at = match command.program.as_str() {
        "npx" | "pnpx" | "bunx" => after_options(1),
        "pnpm" | "yarn" if argv.get(1).is_some_and(|word| word == "exec") => after_options(2),
        program if SCRIPT_RUNNERS.contains(&program) => 0,
        _ => return None,
    };
    let runner = command::base_name(argv.get(runner_at)?);
    SCRIPT_RUNNERS
        .contains(&runner.as_str())
        .then(|| argv.get(after_options(runner_at + 1)).map(String::as_str))
        .flatten()
}

fn is_downloader(command: &Command) -> bool {
    executors::DOWNLOADERS.contains(&command.program.as_str())
}

/// Programs whose operands are listed or described (their names, sizes,
/// dates, kinds), made, entered or given other permissions, never read
/// for content: their arguments are no `read:` of a secret (`chmod 600
/// ~/.ssh/id_rsa` guards the key; `cd ~/.ssh` shows nothing). `file`
/// reads a few leading bytes to name a format, which shows nothing of a
/// key. `ssh-keygen` shows of a private key only its public half or
/// fingerprint, and writes the keys it makes (`files_written_by`);
/// `ssh-add` hands a key to the agent, which shows it to nobody.
/// Assignments (`export KEY=~/.ssh/id_rsa`, a variable set before a
/// command) name a value and read nothing.
/// Deleting or shredding a file shows nothing of it either: `rm id_rsa`
/// is judged by the delete rules, where it stands (a key in home asks).
/// Whatever else they do (a permissions change, a write through a
/// redirection, an effect) is found as for any program.
const READS_NO_CONTENT: [&str; 34] = [
    "ls",
    "dir",
    "stat",
    "du",
    "tree",
    "test",
    "[",
    "file",
    "realpath",
    "readlink",
    "ssh-keygen",
    "ssh-add",
    "chmod",
    "chown",
    "chgrp",
    "setfacl",
    "getfacl",
    "touch",
    "mkdir",
    "rmdir",
    "rm",
    "unlink",
    "shred",
    "srm",
    "wipe",
    "trash",
    "trash-put",
    "cd",
    "pushd",
    "export",
    "declare",
    "typeset",
    "local",
    "readonly",
];

/// The keys an ssh client is given to authenticate with (`ssh -i KEY`,
/// `scp -i`, `sftp -i`): the client proves it holds the key and shows
/// nobody its content, not even the host it connects to, so the key is
/// used, not read. The same file named again (`scp -i K K host:`) is read.
fn keys_authenticated_with(command: &Command) -> Vec<String> {
    if !matches!(command.program.as_str(), "ssh" | "scp" | "sftp") {
        return Vec::new();
    }
    let parsed = options::SSH.parse(command.argv.get(1..).unwrap_or_default());
    parsed.values(&["-i"]).map(words::normalize_path).collect()
}

/// Whether `command` reads the content of the files it names, for `read:`
/// rules. A prefix wrapper's words are its command's, which reports its
/// own reads (`timeout 5 ls ~/.aws` lists, `sudo cat` reads).
fn reads_content(command: &Command) -> bool {
    if READS_NO_CONTENT.contains(&command.program.as_str())
        || executors::is_prefix_wrapper(&command.program)
    {
        return false;
    }
    if command.program != "git" {
        return true;
    }
    // git commands that name, stage out or move paths without showing
    // what is in them (`git rm --cached .env` untracks a secret, `git
    // check-ignore .env` says whether it is ignored); `git log` shows
    // content only as a patch. `git add` stores the content in the
    // repository, and `diff`, `show`, `blame` print it: those read.
    match command.subcommand() {
        Some(
            "status" | "ls-files" | "check-ignore" | "check-attr" | "rm" | "mv" | "update-index",
        ) => false,
        Some("log" | "shortlog" | "whatchanged") => command.flags.iter().any(|flag| {
            matches!(flag.as_str(), "-p" | "-u" | "--patch" | "-L" | "-c" | "--cc" | "-W")
                || flag.starts_with("--patch-with")
                || flag.starts_with("--word-diff")
                || flag.starts_with("--function-context")
        }),
        _ => true,
    }
}

/// At most 80 characters of `text`, for explanations: white space folded,
/// and only as much of the text read as the preview shows (agent text can
/// be a megabyte, previewed once per finding).
pub(crate) fn preview(text: &str) -> String {
    let mut flat = String::new();
    for word in text.split_whitespace() {
        if !flat.is_empty() {
            flat.push(' ');
        }
        flat.push_str(word);
        if flat.chars().nth(80).is_some() {
            return format!("{}…", flat.chars().take(79).collect::<String>());
        }
    }
    flat
}

#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod tests;

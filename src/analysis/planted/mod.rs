//! Writes that plant code: a file that runs later (a git hook, a Makefile,
//! a `package.json`, a CI workflow, a shell start-up file… the table in
//! `table`) is judged by what it will run, with the same analysis as a
//! command. Each format's reader (`make`, `structured`, `pipelines`,
//! `system`) finds the shell and code parts of the content with their
//! lines; each part is analysed in place, so its commands, chains, files
//! and facts join the action's own and the policy decides on them, and
//! every command and fact found there names the file and line it was
//! planted at.
//!
//! A write is judged as the file it leaves behind: an edit is applied to
//! the file as it is now (read through [`CurrentFiles`]), so a fragment
//! that completes a dangerous line is seen; and parts already in the file
//! before the write are not judged again, so an agent's harmless change
//! next to a line a human wrote is not held against it.
//!
//! A file that runs later written with content the analysis cannot see
//! (copied, moved, downloaded, or reported without its text) or cannot
//! read (a `package.json` that is not JSON) is
//! [`Fact::PlantsUnseenCode`]: the policy decides what that needs.
//!
//! An agent harness's own configuration (`harness`) is such a file, and a
//! write there that removes, disables or changes this guard's hook or
//! server entry, or a command deleting or moving away a file that holds
//! one, is [`Fact::SwitchesOffGuard`].

mod harness;
mod make;
mod pipelines;
mod structured;
mod system;
pub mod table;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{
    Builder, Fact, WorkingFolder, budget, code, preview,
    words::{normalize_path, quote_words},
};
use table::{Format, RunsLater, by_path, by_shebang, runs_later};

/// The largest content judged; a larger file that runs later is unseen.
pub const MAX_PLANTED_BYTES: usize = 1024 * 1024;

/// Commands read at most from one structured file (a harness's settings,
/// an editor's tasks, and the steps of a YAML pipeline):
/// each is placed by a search of the file, so a file of countless entries
/// would stall the reader; beyond this it is unseen. Real files name a
/// few dozen.
const MAX_STRUCTURED_PARTS: usize = 512;

/// A file write whose content is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWrite {
    /// The path as the writer named it.
    pub path: String,
    pub change: Change,
}

/// What a write does to the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The file becomes this text.
    Whole(String),
    /// This text is added at the end (`>>`).
    Append(String),
    /// Replacements applied in order to the file as it is.
    Edits(Vec<Replace>),
}

/// One replacement of an edit (`Edit`, `MultiEdit`, `edit_file`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replace {
    pub old: String,
    pub new: String,
    /// Every occurrence, not only the first.
    pub all: bool,
}

/// Where the content a file has now comes from.
pub trait CurrentFiles: Sync + std::fmt::Debug {
    /// The file's text, if it exists, is a regular file and is readable
    /// text of at most [`MAX_PLANTED_BYTES`].
    fn current(&self, path: &str) -> Option<String>;
}

/// No file is read: every written file is taken as new.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCurrentFiles;

impl CurrentFiles for NoCurrentFiles {
    fn current(&self, _: &str) -> Option<String> {
        None
    }
}

/// Files as they are on this machine. Relative paths are read from `base`
/// (none: not read), `~` from the home folder. Only regular files are
/// read, opened without blocking (a FIFO cannot hold the reader).
#[derive(Debug, Clone, Default)]
pub struct OnDisk {
    base: Option<PathBuf>,
    home: Option<PathBuf>,
}

impl OnDisk {
    pub fn new(base: Option<PathBuf>) -> Self {
        Self { base, home: std::env::var_os("HOME").map(PathBuf::from) }
    }

    /// Relative paths are read from the working folder, when it is known.
    pub fn in_folder(folder: &WorkingFolder) -> Self {
        Self::new(folder.absolute().map(PathBuf::from))
    }

    fn locate(&self, path: &str) -> Option<PathBuf> {
        if let Some(rest) = path.strip_prefix("~/") {
            return self.home.as_ref().map(|home| home.join(rest));
        }
        let path = Path::new(path);
        if path.is_absolute() {
            return Some(path.to_path_buf());
        }
        self.base.as_ref().map(|base| base.join(path))
    }
}

impl CurrentFiles for OnDisk {
    fn current(&self, path: &str) -> Option<String> {
        use std::io::Read;
        let located = self.locate(path)?;
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(nix::libc::O_NONBLOCK);
        }
        let file = options.open(located).ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        let mut bytes = Vec::new();
        file.take(MAX_PLANTED_BYTES as u64 + 1).read_to_end(&mut bytes).ok()?;
        (bytes.len() <= MAX_PLANTED_BYTES).then(|| String::from_utf8(bytes).ok()).flatten()
    }
}

/// How a part of a file's content runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Language {
    Shell,
    Code(&'static str),
}

/// A piece of a file that will run, and the line it starts at (from 1).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Part {
    line: usize,
    text: String,
    language: Language,
}

impl Part {
    fn shell(line: usize, text: impl Into<String>) -> Self {
        Self { line, text: text.into(), language: Language::Shell }
    }
}

/// The content could not be read in its format.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Unreadable(String);

/// Where a command or fact was planted, for explanations.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlantedAt {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for PlantedAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "planted in {} line {}", self.file, self.line)
    }
}

/// The file a write leaves behind, and the one it replaces.
struct Outcome {
    before: Option<String>,
    after: String,
}

/// The file `change` leaves behind. Edits are applied one by one, each
/// paid for before it is made: forty edits that each double a letter ask
/// for a terabyte. `None` when the budget cannot pay for them.
fn apply(change: &Change, before: Option<String>) -> Option<Outcome> {
    let after = match change {
        Change::Whole(text) => text.clone(),
        Change::Append(text) => format!("{}{text}", before.as_deref().unwrap_or("")),
        Change::Edits(edits) => match &before {
            Some(current) => {
                let mut text = current.clone();
                for edit in edits {
                    text = apply_edit(text, edit)?;
                }
                text
            }
            // Nothing to edit: the new text is all there is to judge.
            None => edits.iter().map(|edit| edit.new.as_str()).collect::<Vec<_>>().join("\n"),
        },
    };
    Some(Outcome { before, after })
}

/// `text` after one edit, once the budget has paid for what it produces.
fn apply_edit(text: String, edit: &Replace) -> Option<String> {
    if edit.old.is_empty() || !text.contains(&edit.old) {
        // An edit that does not apply: its new text is judged where it
        // would go, at the end.
        return budget::produce(text.len() + 1 + edit.new.len())
            .then(|| format!("{text}\n{}", edit.new));
    }
    let replaced = if edit.all { text.matches(edit.old.as_str()).count() } else { 1 };
    let after_len = (text.len() - replaced * edit.old.len())
        .checked_add(replaced.checked_mul(edit.new.len())?)?;
    if !budget::work(text.len()) || !budget::produce(after_len) {
        return None;
    }
    Some(if edit.all {
        text.replace(&edit.old, &edit.new)
    } else {
        text.replacen(&edit.old, &edit.new, 1)
    })
}

/// The parts of `content` that will run, read in the file's format.
fn parts_of(kind: RunsLater, path: &str, content: &str) -> Result<Vec<Part>, Unreadable> {
    if content.contains('\0') {
        return Err(Unreadable("binary content".into()));
    }
    let parts = match kind.format {
        Format::Shell => vec![Part::shell(1, content)],
        Format::Code(language) => {
            vec![Part { line: 1, text: content.to_owned(), language: Language::Code(language) }]
        }
        Format::Makefile => make::parts(content),
        Format::PackageJson => structured::package_json(content)?,
        Format::ToolJson => structured::tool_json(content)?,
        Format::TomlCommands => structured::toml_commands(content)?,
        Format::GitConfig => structured::git_config(content),
        Format::YamlSteps => pipelines::yaml_steps(content),
        Format::Jenkinsfile => pipelines::jenkinsfile(content),
        Format::Containerfile => pipelines::containerfile(content),
        Format::Crontab => system::crontab(content, path.starts_with("/etc/")),
        Format::SystemdUnit => system::systemd_unit(content),
        Format::LaunchdPlist => system::launchd_plist(content)?,
        Format::HarnessJson | Format::HarnessToml => harness::parts(kind.format, content)?,
    };
    // Thousands of steps from a YAML alias repeated cost the writer a
    // line each: a file no one reviews step by step either, so it is
    // unseen and a human decides. (Other formats pay a line per part in
    // the analysis budget.)
    if kind.format == Format::YamlSteps && parts.len() > MAX_STRUCTURED_PARTS {
        return Err(Unreadable(format!("more than {MAX_STRUCTURED_PARTS} commands")));
    }
    Ok(parts)
}

/// Judges a write: the parts of the file it leaves behind that were not
/// there before are analysed where they stand. `run_as` is how the action
/// itself runs the file (`bash x.sh`, `python3 x.sh` after writing
/// `x.sh`): the content is judged in each of those formats as well as in
/// the one the table gives for what runs it later, so a runner that reads
/// it another way than its name suggests is never missed.
pub(super) fn plant(
    builder: &mut Builder,
    write: &FileWrite,
    run_as: &[Format],
    files: &dyn CurrentFiles,
) {
    let path = normalize_path(&write.path);
    // A shebang names what reads the file when it is run directly, even
    // one named after another language (`x.sh` starting `#!…python3`).
    let kinds = |content: &str| {
        let mut kinds: Vec<RunsLater> = Vec::new();
        let ran = run_as.iter().map(|&format| RunsLater { format, reason: "the action runs it" });
        for kind in by_path(&path).into_iter().chain(by_shebang(content)).chain(ran) {
            if !kinds.iter().any(|known| known.format == kind.format) {
                kinds.push(kind);
            }
        }
        kinds
    };
    // A whole new text that is not a file that runs needs nothing read;
    // an edit may complete a script's shebang, so it is applied.
    if let Change::Whole(text) = &write.change
        && kinds(text).is_empty()
    {
        return;
    }
    let Some(outcome) = apply(&write.change, files.current(&write.path)) else {
        // The budget's fact says why; what the edits leave is unknown.
        return;
    };
    let kinds = kinds(&outcome.after);
    let Some(first) = kinds.first() else {
        return;
    };
    builder.analysis.planted.push(path.clone());
    if outcome.after.len() > MAX_PLANTED_BYTES {
        builder.fact(
            Fact::PlantsUnseenCode,
            format!(
                "{path} runs later ({}) and is larger than the {MAX_PLANTED_BYTES} bytes judged",
                first.reason
            ),
        );
        return;
    }
    for kind in kinds {
        judge_as(builder, kind, &path, &outcome);
    }
}

/// Judges what `outcome` leaves in `path`, read as `kind`.
fn judge_as(builder: &mut Builder, kind: RunsLater, path: &str, outcome: &Outcome) {
    if kind.format.is_harness_config()
        && let Some(why) =
            harness::switches_off_guard(kind.format, outcome.before.as_deref(), &outcome.after)
    {
        builder.fact(Fact::SwitchesOffGuard, format!("{path}: {why}"));
    }
    let parts = match parts_of(kind, path, &outcome.after) {
        Ok(parts) => parts,
        Err(Unreadable(why)) => {
            builder.fact(
                Fact::PlantsUnseenCode,
                format!(
                    "{path} runs later ({}) and what it runs cannot be read: {why}",
                    kind.reason
                ),
            );
            return;
        }
    };
    // What was there before, by language and text: an edit of a file of
    // many parts looks each new part up once, not against every old one.
    let before: Vec<Part> = outcome
        .before
        .as_deref()
        .and_then(|before| parts_of(kind, path, before).ok())
        .unwrap_or_default();
    let already: std::collections::HashSet<(Language, &str)> =
        before.iter().map(|old| (old.language, old.text.as_str())).collect();
    for part in parts {
        if already.contains(&(part.language, part.text.as_str())) {
            continue;
        }
        analyse_part(builder, path, &part);
    }
}

/// One part that will run, analysed as from `file` at its line.
fn analyse_part(builder: &mut Builder, file: &str, part: &Part) {
    let at = PlantedAt { file: file.to_owned(), line: part.line };
    builder.planting(at, part.language == Language::Shell, |builder| match part.language {
        Language::Shell => {
            builder.shell(&part.text, None);
        }
        Language::Code(language) => code::analyze(builder, language, &part.text),
    });
}

/// Text a program is given to run, now or later, in a file's `format`
/// (a Makefile on `make -f -` or by `--eval`, a crontab on `crontab -`),
/// judged as a written file of that format is. `given` says where, for
/// explanations; text not readable in the format is unseen.
pub(crate) fn text_given(builder: &mut Builder, format: Format, given: &'static str, text: &str) {
    match parts_of(RunsLater { format, reason: given }, "", text) {
        Ok(parts) => parts.iter().for_each(|part| analyse_part(builder, given, part)),
        Err(Unreadable(why)) => {
            builder.fact(Fact::PlantsUnseenCode, format!("{given} is not readable: {why}"));
        }
    }
}

/// Deleting or moving away an agent harness's file that holds this
/// guard's hook or server entry switches the guard off: each file the
/// action's commands remove is read as it is now.
pub(super) fn removed_guards(builder: &mut Builder, files: &dyn CurrentFiles) {
    let removed: Vec<String> =
        builder.analysis.commands.iter().flat_map(files_removed_by).collect();
    for path in removed {
        let normal = normalize_path(&path);
        let Some(kind) = runs_later(&normal, None).filter(|kind| kind.format.is_harness_config())
        else {
            continue;
        };
        if files.current(&path).is_some_and(|content| harness::holds_guard(kind.format, &content)) {
            builder.fact(
                Fact::SwitchesOffGuard,
                format!("{normal}: deleting or moving it away removes this guard's own entry"),
            );
        }
    }
}

/// The files a command deletes or moves away.
fn files_removed_by(command: &super::Command) -> Vec<String> {
    match command.program.as_str() {
        "rm" | "unlink" | "shred" | "srm" | "trash" | "trash-put" | "gio" => {
            command.positionals.clone()
        }
        "mv" => command
            .positionals
            .split_last()
            .map(|(_, sources)| sources.to_vec())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The keys under which a file tool takes the path it writes (the first
/// present is the one written).
pub(super) const WRITE_PATH_KEYS: [&str; 9] = [
    "path",
    "file_path",
    "filepath",
    "filePath",
    "file",
    "filename",
    "target",
    "destination",
    "notebook_path",
];

/// The write a file tool's call makes, when its arguments name one file
/// and give its content or the edits to make (`write_file {"path": …,
/// "content": …}`, `edit_file {"path": …, "edits": [{"oldText": …,
/// "newText": …}]}`).
pub(super) fn from_tool_call(arguments: &Map<String, Value>) -> Option<FileWrite> {
    const CONTENT_KEYS: [&str; 8] =
        ["content", "contents", "text", "data", "body", "file_text", "new_source", "new_content"];
    let path =
        WRITE_PATH_KEYS.iter().find_map(|key| arguments.get(*key).and_then(Value::as_str))?;
    if let Some(content) =
        CONTENT_KEYS.iter().find_map(|key| arguments.get(*key).and_then(Value::as_str))
    {
        let append = arguments.get("append").and_then(Value::as_bool).unwrap_or(false)
            || arguments.get("mode").and_then(Value::as_str) == Some("append");
        let change = if append {
            Change::Append(content.to_owned())
        } else {
            Change::Whole(content.to_owned())
        };
        return Some(FileWrite { path: path.to_owned(), change });
    }
    let single = [arguments];
    let edits: Vec<&Map<String, Value>> = match arguments.get("edits") {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_object).collect(),
        _ => single.to_vec(),
    };
    let replaces: Vec<Replace> = edits.iter().filter_map(|edit| replace(edit)).collect();
    (!replaces.is_empty())
        .then(|| FileWrite { path: path.to_owned(), change: Change::Edits(replaces) })
}

fn replace(edit: &Map<String, Value>) -> Option<Replace> {
    let text = |keys: &[&str]| {
        keys.iter().find_map(|key| edit.get(*key).and_then(Value::as_str)).map(str::to_owned)
    };
    let new = text(&["newText", "new_text", "new_string", "newString", "replacement", "new"])?;
    let old = text(&["oldText", "old_text", "old_string", "oldString", "search", "old"])
        .unwrap_or_default();
    let all = edit
        .get("replace_all")
        .or_else(|| edit.get("replaceAll"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Some(Replace { old, new, all })
}

/// Whether `path` is a file that runs later; `None` if not.
pub(super) fn why_it_runs(path: &str) -> Option<&'static str> {
    runs_later(path, None).map(|kind| kind.reason)
}

/// The line (from 1) of `content` where `needle` first appears, or 1.
fn line_of(content: &str, needle: &str) -> usize {
    let needle = needle.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if needle.is_empty() {
        return 1;
    }
    let probe: String = needle.chars().take(40).collect();
    // Each part looks its line up from the start: paid for, line by line.
    content
        .lines()
        .position(|line| budget::work(line.len() + 1) && line.contains(&probe))
        .map_or(1, |at| at + 1)
}

/// What a fact planted in a file says about where.
pub(super) fn describe_unseen(path: &str, reason: &str) -> String {
    format!("{} runs later ({reason}) and what is written there is not known", preview(path))
}

#[cfg(test)]
mod tests;

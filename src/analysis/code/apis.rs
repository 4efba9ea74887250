//! The library calls the syntax reader knows, by qualified name as the
//! code's imports resolve them (`shutil.rmtree`, `fs.rmSync`,
//! `FileUtils.rm_rf`, `unlink`): what each does to files and processes,
//! and what the calls that only compute a value (a module, a home folder,
//! a joined path) return. Names are kept in one table for every language:
//! a name means the same wherever it is found, and a language's builtins
//! do not collide with another's modules.

use super::{home, syntax::Value};

/// What a call does, with the argument it does it to first (or named
/// `path`, `file`…).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Effect {
    /// Deletes its path arguments, as the command with these words does
    /// (`rm -r -f`, `rm -f`, `rmdir`).
    Delete(&'static str),
    /// Writes its path (whole or appended), with content not known.
    Write,
    /// Writes the text given after its path (`Path.write_text`,
    /// `fs.writeFileSync`, `File.write`, `file_put_contents`): the whole
    /// file, or added at its end when `appends` (or when the call's flags
    /// or `mode` say append). Known text is judged as the file's content.
    WriteText { appends: bool },
    /// Reads its path.
    Read,
    /// Reads its path and writes the path after it (a copy).
    Copy,
    /// Moves its path to the path after it, as `mv` does: gone from where
    /// it was (unless it stays in the same folder tree) and written where
    /// it lands.
    Move,
    /// Opens its path, writing when the mode at `mode_at` (or named
    /// `mode`) writes, or when no mode is given and `default_writes`;
    /// reading when the mode reads, or when no mode is given and it
    /// does not write.
    Open { mode_at: usize, default_writes: bool },
    /// Truncates its path to the length at `length_at` (0 when absent).
    Truncate { length_at: usize },
    /// Runs its first argument with a shell.
    Shell,
    /// Runs a shell string, an argv list, or its arguments as an argv.
    Command,
    /// Runs a program with the list of arguments after it.
    ProgramArgs,
    /// Replaces or spawns a process: the argv list it is given, or the
    /// arguments after the program's path (`os.execl(path, arg0, …)`).
    Exec,
    /// Evaluates its argument as code of the same language.
    Eval,
}

impl Effect {
    /// Whether the call opens, writes or deletes the files it is given
    /// (rather than handing text to a shell, a program or `eval`).
    pub(super) fn opens_files(self) -> bool {
        matches!(
            self,
            Self::Delete(_)
                | Self::Write
                | Self::WriteText { .. }
                | Self::Read
                | Self::Copy
                | Self::Move
                | Self::Open { .. }
                | Self::Truncate { .. }
        )
    }
}

const RM_RF: &str = "rm -r -f";
const RM: &str = "rm -f";
const RMDIR: &str = "rmdir";

/// Every call with an effect.
const EFFECTS: &[(&str, Effect)] = &[
    // Python
    ("os.remove", Effect::Delete(RM)),
    ("os.unlink", Effect::Delete(RM)),
    ("os.rmdir", Effect::Delete(RMDIR)),
    ("os.removedirs", Effect::Delete(RMDIR)),
    ("shutil.rmtree", Effect::Delete(RM_RF)),
    ("path.unlink", Effect::Delete(RM)),
    ("path.rmdir", Effect::Delete(RMDIR)),
    ("path.write_text", Effect::WriteText { appends: false }),
    ("path.write_bytes", Effect::WriteText { appends: false }),
    ("path.open", Effect::Open { mode_at: 1, default_writes: false }),
    ("path.touch", Effect::Write),
    ("path.read_text", Effect::Read),
    ("path.read_bytes", Effect::Read),
    ("shutil.copy", Effect::Copy),
    ("shutil.copy2", Effect::Copy),
    ("shutil.copyfile", Effect::Copy),
    ("shutil.move", Effect::Move),
    ("os.rename", Effect::Move),
    ("os.renames", Effect::Move),
    ("os.replace", Effect::Move),
    ("path.rename", Effect::Move),
    ("path.replace", Effect::Move),
    ("linecache.getline", Effect::Read),
    ("linecache.getlines", Effect::Read),
    ("fileinput.input", Effect::Read),
    ("open", Effect::Open { mode_at: 1, default_writes: false }),
    ("io.open", Effect::Open { mode_at: 1, default_writes: false }),
    ("codecs.open", Effect::Open { mode_at: 1, default_writes: false }),
    ("os.truncate", Effect::Truncate { length_at: 1 }),
    ("os.system", Effect::Shell),
    ("os.popen", Effect::Shell),
    ("subprocess.getoutput", Effect::Shell),
    ("subprocess.getstatusoutput", Effect::Shell),
    ("subprocess.run", Effect::Command),
    ("subprocess.call", Effect::Command),
    ("subprocess.check_call", Effect::Command),
    ("subprocess.check_output", Effect::Command),
    ("subprocess.Popen", Effect::Command),
    ("pty.spawn", Effect::Command),
    ("os.execv", Effect::Exec),
    ("os.execve", Effect::Exec),
    ("os.execvp", Effect::Exec),
    ("os.execvpe", Effect::Exec),
    ("os.execl", Effect::Exec),
    ("os.execle", Effect::Exec),
    ("os.execlp", Effect::Exec),
    ("os.execlpe", Effect::Exec),
    ("os.spawnv", Effect::Exec),
    ("os.spawnve", Effect::Exec),
    ("os.spawnvp", Effect::Exec),
    ("os.spawnvpe", Effect::Exec),
    ("os.spawnl", Effect::Exec),
    ("os.spawnle", Effect::Exec),
    ("os.spawnlp", Effect::Exec),
    ("os.spawnlpe", Effect::Exec),
    ("os.posix_spawn", Effect::Exec),
    ("os.posix_spawnp", Effect::Exec),
    ("exec", Effect::Eval),
    ("eval", Effect::Eval),
    ("compile", Effect::Eval),
    // JavaScript (`fs/promises` and `fs.promises` read as `fs`)
    ("fs.rm", Effect::Delete(RM_RF)),
    ("fs.rmSync", Effect::Delete(RM_RF)),
    ("fs.rmdir", Effect::Delete(RMDIR)),
    ("fs.rmdirSync", Effect::Delete(RMDIR)),
    ("fs.unlink", Effect::Delete(RM)),
    ("fs.unlinkSync", Effect::Delete(RM)),
    ("fs.writeFile", Effect::WriteText { appends: false }),
    ("fs.writeFileSync", Effect::WriteText { appends: false }),
    ("fs.appendFile", Effect::WriteText { appends: true }),
    ("fs.appendFileSync", Effect::WriteText { appends: true }),
    ("fs.createWriteStream", Effect::Write),
    ("fs.readFile", Effect::Read),
    ("fs.readFileSync", Effect::Read),
    ("fs.createReadStream", Effect::Read),
    ("fs.copyFile", Effect::Copy),
    ("fs.copyFileSync", Effect::Copy),
    ("fs.cp", Effect::Copy),
    ("fs.cpSync", Effect::Copy),
    ("fs.rename", Effect::Move),
    ("fs.renameSync", Effect::Move),
    ("Deno.rename", Effect::Move),
    ("Deno.renameSync", Effect::Move),
    ("Bun.file", Effect::Read),
    ("Deno.readFile", Effect::Read),
    ("Deno.readFileSync", Effect::Read),
    ("Deno.readTextFile", Effect::Read),
    ("Deno.readTextFileSync", Effect::Read),
    ("Deno.open", Effect::Read),
    ("Deno.openSync", Effect::Read),
    ("Deno.remove", Effect::Delete(RM_RF)),
    ("Deno.removeSync", Effect::Delete(RM_RF)),
    ("Deno.writeFile", Effect::Write),
    ("Deno.writeFileSync", Effect::Write),
    ("Deno.writeTextFile", Effect::WriteText { appends: false }),
    ("Deno.writeTextFileSync", Effect::WriteText { appends: false }),
    ("Deno.truncate", Effect::Truncate { length_at: 1 }),
    ("Deno.truncateSync", Effect::Truncate { length_at: 1 }),
    ("Deno.copyFile", Effect::Copy),
    ("Deno.copyFileSync", Effect::Copy),
    ("Bun.write", Effect::WriteText { appends: false }),
    ("fs.open", Effect::Open { mode_at: 1, default_writes: false }),
    ("fs.openSync", Effect::Open { mode_at: 1, default_writes: false }),
    ("fs.truncate", Effect::Truncate { length_at: 1 }),
    ("fs.truncateSync", Effect::Truncate { length_at: 1 }),
    ("child_process.exec", Effect::Shell),
    ("child_process.execSync", Effect::Shell),
    ("child_process.spawn", Effect::ProgramArgs),
    ("child_process.spawnSync", Effect::ProgramArgs),
    ("child_process.execFile", Effect::ProgramArgs),
    ("child_process.execFileSync", Effect::ProgramArgs),
    // Shells run by a tagged template (``Bun.$`rm -rf x` ``, zx's ``$`…` ``).
    ("Bun.$", Effect::Shell),
    ("zx.$", Effect::Shell),
    ("Bun.spawn", Effect::Command),
    ("Bun.spawnSync", Effect::Command),
    ("Function", Effect::Eval),
    // Ruby
    ("File.delete", Effect::Delete(RM)),
    ("File.unlink", Effect::Delete(RM)),
    ("FileUtils.rm", Effect::Delete(RM)),
    ("FileUtils.rm_f", Effect::Delete(RM)),
    ("FileUtils.remove", Effect::Delete(RM)),
    ("FileUtils.rm_r", Effect::Delete(RM_RF)),
    ("FileUtils.rm_rf", Effect::Delete(RM_RF)),
    ("FileUtils.rmtree", Effect::Delete(RM_RF)),
    ("FileUtils.remove_dir", Effect::Delete(RM_RF)),
    ("FileUtils.remove_entry", Effect::Delete(RM_RF)),
    ("FileUtils.remove_entry_secure", Effect::Delete(RM_RF)),
    ("FileUtils.rmdir", Effect::Delete(RMDIR)),
    ("Dir.rmdir", Effect::Delete(RMDIR)),
    ("Dir.delete", Effect::Delete(RMDIR)),
    ("Dir.unlink", Effect::Delete(RMDIR)),
    ("File.write", Effect::WriteText { appends: false }),
    ("IO.write", Effect::WriteText { appends: false }),
    ("File.binwrite", Effect::WriteText { appends: false }),
    ("FileUtils.touch", Effect::Write),
    ("File.read", Effect::Read),
    ("File.binread", Effect::Read),
    ("File.readlines", Effect::Read),
    ("File.foreach", Effect::Read),
    ("IO.read", Effect::Read),
    ("IO.binread", Effect::Read),
    ("IO.readlines", Effect::Read),
    ("IO.foreach", Effect::Read),
    ("path.read", Effect::Read),
    ("path.binread", Effect::Read),
    ("path.readlines", Effect::Read),
    ("FileUtils.cp", Effect::Copy),
    ("FileUtils.copy", Effect::Copy),
    ("FileUtils.copy_file", Effect::Copy),
    ("File.rename", Effect::Move),
    ("FileUtils.mv", Effect::Move),
    ("FileUtils.move", Effect::Move),
    ("File.open", Effect::Open { mode_at: 1, default_writes: false }),
    ("File.new", Effect::Open { mode_at: 1, default_writes: false }),
    ("File.truncate", Effect::Truncate { length_at: 1 }),
    ("Kernel.system", Effect::Command),
    ("Kernel.exec", Effect::Command),
    ("Kernel.spawn", Effect::Command),
    ("Process.spawn", Effect::Command),
    ("Process.exec", Effect::Command),
    ("Kernel.open", Effect::Open { mode_at: 1, default_writes: false }),
    ("Kernel.eval", Effect::Eval),
    ("IO.popen", Effect::Command),
    ("Open3.capture2", Effect::Command),
    ("Open3.capture2e", Effect::Command),
    ("Open3.capture3", Effect::Command),
    ("Open3.popen2", Effect::Command),
    ("Open3.popen2e", Effect::Command),
    ("Open3.popen3", Effect::Command),
    ("Open3.pipeline", Effect::Command),
    ("Kernel.instance_eval", Effect::Eval),
    // PHP (its functions are `php.NAME`)
    ("php.unlink", Effect::Delete(RM)),
    ("php.rmdir", Effect::Delete(RMDIR)),
    ("php.file_put_contents", Effect::WriteText { appends: false }),
    ("php.fopen", Effect::Open { mode_at: 1, default_writes: false }),
    ("php.ftruncate", Effect::Truncate { length_at: 1 }),
    ("php.file_get_contents", Effect::Read),
    ("php.file", Effect::Read),
    ("php.readfile", Effect::Read),
    ("php.parse_ini_file", Effect::Read),
    ("php.highlight_file", Effect::Read),
    ("php.show_source", Effect::Read),
    ("php.copy", Effect::Copy),
    ("php.rename", Effect::Move),
    ("php.exec", Effect::Shell),
    ("php.system", Effect::Shell),
    ("php.shell_exec", Effect::Shell),
    ("php.passthru", Effect::Shell),
    ("php.popen", Effect::Shell),
    ("php.proc_open", Effect::Command),
    ("php.pcntl_exec", Effect::ProgramArgs),
    ("php.eval", Effect::Eval),
];

/// PHP functions that call a function named by a string: `call_user_func`
/// with the arguments after it, the others later with values of their
/// own (`array_map('unlink', $paths)`).
pub(super) const PHP_CALLERS_BY_NAME: [&str; 10] = [
    "php.call_user_func",
    "php.call_user_func_array",
    "php.array_map",
    "php.array_walk",
    "php.array_walk_recursive",
    "php.array_filter",
    "php.array_reduce",
    "php.usort",
    "php.register_shutdown_function",
    "php.forward_static_call",
];

/// The effect of calling `function`, if it has one this reader knows.
/// A language's global functions that another language spells alike
/// are qualified by the reader (`Kernel.exec`, `php.exec`) so that
/// Python's `exec` (evaluation) is not PHP's (a shell).
pub(super) fn effect(function: &str) -> Option<Effect> {
    EFFECTS.iter().find(|(name, _)| *name == function).map(|(_, effect)| *effect)
}

/// A qualified name as the tables spell it: Node's `node:` scheme and
/// promise variants are the module itself; Python's `pathlib.Path`,
/// `os.path` and friends are one `path`.
pub(super) fn canonical(name: &str) -> String {
    let name = name.strip_prefix("node:").unwrap_or(name);
    let name = name.replace("fs/promises", "fs").replace("fs.promises", "fs").replace("node:", "");
    match name.as_str() {
        "pathlib.Path" | "pathlib.PosixPath" | "pathlib.PurePath" => "Path".into(),
        _ => name,
    }
}

/// Names that read as the home folder (`process.env.HOME`,
/// `os.environ['HOME']`, `ENV['HOME']`).
pub(super) fn is_home(name: &str) -> bool {
    ["os.environ.HOME", "process.env.HOME", "ENV.HOME", "$_SERVER.HOME", "$_ENV.HOME"]
        .contains(&name)
}

/// Keyword arguments that name the path a call acts on.
pub(super) fn names_a_path(keyword: &str) -> bool {
    ["path", "file", "filename", "name", "src", "source", "args", "cmd", "command"]
        .contains(&keyword)
}

/// Whether an `open` mode writes: `w`, `a`, `x`, `+` (Python, Ruby,
/// C-style), Node's flags (`w`, `a`, `r+`), Perl-style `>`.
pub(super) fn mode_writes(mode: &str) -> bool {
    mode.contains(['w', 'a', 'x', '+', '>'])
}

/// Whether an `open` mode reads: `r` (Python, Ruby, C-style, Node's
/// flags), `+` (read and write), Perl-style `<`.
pub(super) fn mode_reads(mode: &str) -> bool {
    mode.contains(['r', '+', '<'])
}

/// The temp folder, as the analysis writes the variable that names it
/// (`effects::zone_of` places what is below it in `@temp`).
const TEMP_FOLDER: &str = "$tmpdir";
/// The part of a new temp folder's path made when the code runs.
const MADE_IN_TEMP: &str = "/tmp-made-at-run-time";

/// What a call that only computes a value returns: a module
/// (`require('fs')`), the home folder (`Path.home()`), a path from its
/// parts (`os.path.join`, `path.resolve`), constant base64 decoded, a
/// method of text (`text.NAME`), or an unknown value.
pub(super) fn returns(function: &str, args: &[(Option<String>, Value)]) -> Value {
    let first = || args.first().map(|(_, value)| value.clone()).unwrap_or(Value::Unknown);
    match function {
        "require" | "__import__" | "importlib.import_module" => match first() {
            Value::Text { text, known: true } => Value::Api(canonical(&text)),
            _ => Value::Unknown,
        },
        // An attribute named by a string (`getattr(os, "remove")`).
        "getattr" => match (first(), args.get(1).map(|(_, value)| value)) {
            (Value::Api(object), Some(Value::Text { text, known: true })) => {
                Value::Api(canonical(&format!("{object}.{text}")))
            }
            _ => Value::Unknown,
        },
        "Path.home" | "os.homedir" | "Dir.home" => Value::text(home::EXPANDED),
        // A new folder in the temp folder (or in `dir`, when given): the
        // name is made when it runs, the place is known.
        "tempfile.mkdtemp" | "tempfile.mktemp" => {
            let folder = args
                .iter()
                .enumerate()
                .find(|(at, (name, _))| {
                    name.as_deref() == Some("dir") || name.is_none() && *at == 2
                })
                .map_or_else(|| Value::text(TEMP_FOLDER), |(_, (_, dir))| dir.clone());
            Value::concat(vec![folder, Value::text(MADE_IN_TEMP)])
        }
        "os.getenv" | "os.environ.get" | "php.getenv" | "ENV.fetch" | "Deno.env.get" => {
            match first() {
                Value::Text { text, .. } if text == "HOME" => Value::text(home::EXPANDED),
                _ => Value::Unknown,
            }
        }
        // The expanders: a leading `~` is home (see `home`).
        "os.path.expanduser" | "File.expand_path" | "Path.expanduser" | "text.expanduser" => {
            match first() {
                Value::Text { text, known } => Value::Text { text: home::expanded(&text), known },
                other => other,
            }
        }
        "Path" | "os.path.abspath" | "os.path.realpath" | "os.path.normpath" | "str"
        | "Pathname.new" | "path.normalize" | "php.realpath" => first(),
        "Path.resolve" | "Path.absolute" => first(),
        // Methods of text (`text.NAME`, the text first) that give the
        // text again (bytes decoded or encoded, a path made absolute),
        // trimmed, or joined.
        "text.decode" | "text.encode" | "text.toString" | "text.to_s" | "text.to_str"
        | "text.resolve" | "text.absolute" => first(),
        "text.strip" | "text.rstrip" | "text.lstrip" | "text.trim" | "text.trimEnd"
        | "text.trimStart" | "text.chomp" => match first() {
            Value::Text { text, known } => Value::Text { text: text.trim().to_owned(), known },
            _ => Value::Unknown,
        },
        // Python's `SEPARATOR.join(items)`.
        "text.join" => match (first(), args.get(1)) {
            (separator @ Value::Text { .. }, Some((_, Value::List(items)))) => {
                let mut parts = Vec::new();
                for (at, item) in items.iter().enumerate() {
                    if at > 0 {
                        parts.push(separator.clone());
                    }
                    parts.push(item.clone());
                }
                Value::concat(parts)
            }
            _ => Value::Unknown,
        },
        "base64.b64decode"
        | "base64.standard_b64decode"
        | "base64.urlsafe_b64decode"
        | "base64.decodebytes"
        | "Base64.strict_decode64" => base64_decoded(first(), Padding::Required),
        "Base64.decode64" | "Base64.urlsafe_decode64" | "php.base64_decode" | "atob" => {
            base64_decoded(first(), Padding::Optional)
        }
        // `Buffer.from(text)` is the text; with `'base64'`, its decoding.
        "Buffer.from" => match args.get(1) {
            None => first(),
            Some((_, Value::Text { text, .. })) if text.starts_with("base64") => {
                base64_decoded(first(), Padding::Optional)
            }
            Some(_) => Value::Unknown,
        },
        "os.path.join" | "path.join" | "File.join" | "Path.joinpath" | "text.joinpath"
        | "path.resolve" => {
            let mut parts = Vec::new();
            for (at, (_, value)) in args.iter().enumerate() {
                if at > 0 {
                    parts.push(Value::text("/"));
                }
                parts.push(value.clone());
            }
            Value::concat(parts)
        }
        _ => Value::Unknown,
    }
}

/// Whether a base64 decoder refuses text whose length is no multiple
/// of four (Python's `b64decode`, Ruby's `strict_decode64`) or decodes
/// it as if padded (Ruby's `decode64`, PHP, Node, `atob`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Padding {
    Required,
    Optional,
}

/// Constant base64 text decoded, as the language's decoder would: text
/// it refuses (a character outside base64, a length it cannot have, a
/// decoding that is no UTF-8 or nothing at all from something) is
/// unknown, never empty, and the decoding pays [`budget::produce`].
fn base64_decoded(encoded: Value, padding: Padding) -> Value {
    let Value::Text { text, known: true } = encoded else {
        return Value::Unknown;
    };
    let length = text.bytes().filter(|byte| !byte.is_ascii_whitespace()).count();
    let data = text.bytes().filter(|byte| !byte.is_ascii_whitespace() && *byte != b'=').count();
    let refused = data % 4 == 1 || padding == Padding::Required && length % 4 != 0;
    if refused || !crate::analysis::budget::produce(text.len()) {
        return Value::Unknown;
    }
    crate::analysis::words::base64_bytes(&text)
        .filter(|bytes| !bytes.is_empty() || text.is_empty())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .map_or(Value::Unknown, Value::text)
}

//! Which files run later, and why: the table a write's path is looked up
//! in. A file is found by its name and the folders above it, never by its
//! content, except that any file starting with a shebang is a script.
//! Every row says what will run the file, so an explanation can say why
//! writing it is judged by its content.

/// How a file's content is read for the commands it plants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// The whole file is a shell script.
    Shell,
    /// The whole file is code in this language (read by `code`).
    Code(&'static str),
    /// Recipes, `!=` assignments and `$(shell …)` of a Makefile.
    Makefile,
    /// `scripts` of a `package.json`.
    PackageJson,
    /// Commands of editor and container tool definitions (JSON with
    /// comments): `command`/`args`, `program`, `runtimeExecutable`,
    /// `post*Command`.
    ToolJson,
    /// String values of TOML tables that hold scripts, tasks, runners or
    /// wrappers (`pyproject.toml`, `.cargo/config.toml`).
    TomlCommands,
    /// `run:`, `script:`, `command:`, `entry:` and the like of a YAML
    /// pipeline definition.
    YamlSteps,
    /// `sh`, `bat` and `powershell` steps of a Jenkinsfile.
    Jenkinsfile,
    /// `RUN`, `CMD`, `ENTRYPOINT` and `SHELL` instructions.
    Containerfile,
    /// The command of each crontab line.
    Crontab,
    /// `Exec*=` lines of a systemd unit.
    SystemdUnit,
    /// `Program` and `ProgramArguments` of a launchd property list.
    LaunchdPlist,
    /// Git configuration keys that name a program (`core.fsmonitor`,
    /// `core.pager`, `alias.* = !…`, filter and diff drivers…).
    GitConfig,
    /// An agent harness's settings, hooks or MCP server list (JSON with
    /// comments): hooks' commands, servers' `command` + `args` + `env`,
    /// helper commands. Also judged for switching this guard off.
    HarnessJson,
    /// Codex's `config.toml`: `[mcp_servers.*]` and `notify`, read like
    /// [`Format::HarnessJson`].
    HarnessToml,
}

impl Format {
    /// An agent harness's own configuration, where this guard's hook and
    /// server entries live.
    pub fn is_harness_config(self) -> bool {
        matches!(self, Self::HarnessJson | Self::HarnessToml)
    }
}

/// A kind of file that runs later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunsLater {
    pub format: Format,
    /// What runs it, for explanations.
    pub reason: &'static str,
}

const fn row(format: Format, reason: &'static str) -> RunsLater {
    RunsLater { format, reason }
}

/// Names git runs as hooks. A file with one of these names is a hook in
/// any folder, since `core.hooksPath` can name any folder.
const GIT_HOOKS: [&str; 28] = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

/// Shell start-up files, run by every new shell of the user.
const SHELL_STARTUP: [&str; 17] = [
    ".bashrc",
    ".bash_aliases",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".xprofile",
    ".xinitrc",
    ".xsessionrc",
    "bash.bashrc",
];

const SHELL_EXTENSIONS: [&str; 6] = ["sh", "bash", "zsh", "ksh", "command", "fish"];

const YAML_PIPELINES: [&str; 9] = [
    ".gitlab-ci.yml",
    ".travis.yml",
    "azure-pipelines.yml",
    "bitbucket-pipelines.yml",
    ".drone.yml",
    ".pre-commit-config.yaml",
    "Taskfile.yml",
    "Taskfile.yaml",
    "lefthook.yml",
];

/// Interpreters a shebang may name, with the language `code` reads.
const SHEBANG_CODE: [(&str, &str); 7] = [
    ("python", "python"),
    ("node", "node"),
    ("perl", "perl"),
    ("ruby", "ruby"),
    ("php", "php"),
    ("pwsh", "pwsh"),
    ("osascript", "osascript"),
];

/// The kind of file `path` (normalised) is, if it runs later; `content`
/// decides for a file with a shebang.
pub fn runs_later(path: &str, content: Option<&str>) -> Option<RunsLater> {
    by_path(path).or_else(|| content.and_then(by_shebang))
}

/// Names a file may have where a folder, not its name, makes it run:
/// one with no meaning of its own, and one of each extension a folder row
/// asks for (a workflow's `.yml`, a launch agent's `.plist`, a harness's
/// hooks' `.json`).
const ANY_ENTRY: [&str; 4] = ["entry", "entry.yml", "entry.plist", "entry.json"];

/// The kind of file `path` (normalised) is by its name and folders.
/// `DIR/*`, every entry of a folder (an archive extracted there, a tree
/// copied), is one that runs later where the folder alone makes an entry
/// run, whatever it is named (`.github/workflows/*`, `~/.local/bin/*`,
/// `/etc/cron.d/*`); a name that runs later in any folder (a git hook's,
/// `Makefile`) does not count, or every extraction would.
pub fn by_path(path: &str) -> Option<RunsLater> {
    if let Some(folder) = path.strip_suffix("/*") {
        return ANY_ENTRY.iter().find_map(|entry| by_path(&format!("{folder}/{entry}")));
    }
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty() && *s != ".").collect();
    let name = *segments.last()?;
    let parent = segments.len().checked_sub(2).and_then(|i| segments.get(i)).copied().unwrap_or("");
    let under =
        |folder: &str| segments.get(..segments.len() - 1).unwrap_or_default().contains(&folder);
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    if let Some(found) = harness_config(name, parent, &under) {
        return Some(found);
    }
    let found = match name {
        _ if GIT_HOOKS.contains(&name) => {
            row(Format::Shell, "git runs it as a hook (git commit, checkout, merge, push…)")
        }
        "config" if parent == ".git" || (parent == "git" && under(".config")) => {
            row(Format::GitConfig, "git runs the programs its settings name")
        }
        ".gitconfig" | "gitconfig" | ".gitmodules" => {
            row(Format::GitConfig, "git runs the programs its settings name")
        }
        "Makefile" | "makefile" | "GNUmakefile" => row(Format::Makefile, "make runs its recipes"),
        _ if extension == "mk" => row(Format::Makefile, "make runs its recipes"),
        "package.json" => row(
            Format::PackageJson,
            "npm, yarn and pnpm run its scripts, install scripts on every install",
        ),
        "pyproject.toml" => {
            row(Format::TomlCommands, "build backends and task runners run what it names")
        }
        "config.toml" | "config" if parent == ".cargo" => {
            row(Format::TomlCommands, "cargo runs the runners, wrappers and linkers it names")
        }
        "setup.py" => row(Format::Code("python"), "pip and setuptools run it on install and build"),
        "conftest.py" => row(Format::Code("python"), "pytest runs it before any test"),
        "build.rs" => row(Format::Code("rust"), "cargo runs it before every build"),
        "Jenkinsfile" => row(Format::Jenkinsfile, "Jenkins runs its steps"),
        "Dockerfile" | "Containerfile" => row(
            Format::Containerfile,
            "docker and podman build run its RUN lines; containers run CMD and ENTRYPOINT",
        ),
        _ if name.starts_with("Dockerfile.")
            || name.starts_with("Containerfile.")
            || extension == "dockerfile"
            || extension == "containerfile" =>
        {
            row(
                Format::Containerfile,
                "docker and podman build run its RUN lines; containers run CMD and ENTRYPOINT",
            )
        }
        ".envrc" => row(Format::Shell, "direnv runs it when a shell enters the folder"),
        _ if in_home_bin(&segments) => row(
            Format::Shell,
            "it is on the user's PATH: it runs in place of any program of its name",
        ),
        "tasks.json" | "launch.json" if parent == ".vscode" => row(
            Format::ToolJson,
            "the editor runs its tasks and launch commands, some on opening the folder",
        ),
        "devcontainer.json" | ".devcontainer.json" => {
            row(Format::ToolJson, "dev container tools run its lifecycle commands")
        }
        "crontab" => row(Format::Crontab, "cron runs its lines on schedule"),
        _ if under("cron.d") || under("crontabs") || (parent == "cron" && under("spool")) => {
            row(Format::Crontab, "cron runs its lines on schedule")
        }
        _ if parent.starts_with("cron.") => {
            row(Format::Shell, "cron runs the scripts in this folder on schedule")
        }
        _ if matches!(extension.as_str(), "service" | "socket" | "mount" | "path" | "timer") => {
            row(Format::SystemdUnit, "systemd runs its Exec lines")
        }
        _ if extension == "plist" && (under("LaunchAgents") || under("LaunchDaemons")) => {
            row(Format::LaunchdPlist, "launchd runs its program at login or boot")
        }
        _ if SHELL_STARTUP.contains(&name) => row(Format::Shell, "every new shell runs it"),
        "profile" | "zshrc" | "zprofile" | "rc.local" if parent == "etc" => {
            row(Format::Shell, "every new shell, or the system at boot, runs it")
        }
        "config.fish" => row(Format::Shell, "every new fish shell runs it"),
        _ if under("profile.d") => row(Format::Shell, "every new login shell runs it"),
        _ if (under(".github")
            && (parent == "workflows" || name == "action.yml" || name == "action.yaml"))
            && matches!(extension.as_str(), "yml" | "yaml") =>
        {
            row(Format::YamlSteps, "CI runs its steps on push and pull request")
        }
        "config.yml" if parent == ".circleci" => {
            row(Format::YamlSteps, "CI runs its steps on push")
        }
        _ if YAML_PIPELINES.contains(&name) => {
            row(Format::YamlSteps, "CI, hook managers or task runners run its steps")
        }
        _ if SHELL_EXTENSIONS.contains(&extension.as_str()) => {
            row(Format::Shell, "a shell script: whatever runs it runs this")
        }
        _ => return None,
    };
    Some(found)
}

/// An agent harness's settings, hooks or MCP server list: the harness runs
/// the commands it names (hooks on every tool call, servers at start-up),
/// and this guard's own hook and server entries live there.
fn harness_config(name: &str, parent: &str, under: &dyn Fn(&str) -> bool) -> Option<RunsLater> {
    let json = |reason| Some(row(Format::HarnessJson, reason));
    match (parent, name) {
        (".claude", "settings.json" | "settings.local.json") | (_, "managed-settings.json") => {
            json("Claude Code runs its hooks and helper commands on every session and tool call")
        }
        (_, ".claude.json" | ".mcp.json") => json("Claude Code starts the MCP servers it lists"),
        (_, "claude_desktop_config.json") => json("Claude Desktop starts the MCP servers it lists"),
        (".cursor", "mcp.json" | "hooks.json") => {
            json("Cursor runs its hooks and starts the MCP servers it lists")
        }
        (".gemini", "settings.json") => {
            json("Gemini CLI runs its hooks and tool commands and starts its MCP servers")
        }
        (".codex", "config.toml") => Some(row(
            Format::HarnessToml,
            "Codex starts the MCP servers it lists and runs its notify program",
        )),
        (".codex", "hooks.json") => json("Codex runs its hooks on tool calls"),
        (".copilot", "mcp-config.json" | "config.json") => {
            json("Copilot CLI starts the MCP servers it lists and runs its hooks")
        }
        ("hooks", _) if under(".github") && name.ends_with(".json") => {
            json("Copilot CLI runs its hooks on tool calls")
        }
        ("windsurf", "mcp_config.json") if under(".codeium") => {
            json("Windsurf starts the MCP servers it lists")
        }
        (".windsurf" | "windsurf", "hooks.json") => json("Windsurf runs its hooks on tool calls"),
        (".vscode", "mcp.json") | ("User", "mcp.json") => {
            json("VS Code starts the MCP servers it lists")
        }
        (".factory", "settings.json" | "mcp.json" | "hooks.json") => {
            json("Factory Droid runs its hooks and starts its MCP servers")
        }
        (_, "opencode.json" | "opencode.jsonc") => json("opencode starts the MCP servers it lists"),
        _ => None,
    }
}

/// A file starting with `#!` is a script of the interpreter it names:
/// run directly, that interpreter reads it, whatever its name says.
pub fn by_shebang(content: &str) -> Option<RunsLater> {
    let line = content.strip_prefix("#!")?.lines().next()?;
    let mut words = line.split_whitespace();
    let mut program = words.next()?.rsplit('/').next()?;
    if program == "env" {
        program = words.find(|w| !w.starts_with('-') && !w.contains('='))?;
    }
    let family = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let format = match SHEBANG_CODE.iter().find(|(name, _)| *name == family) {
        Some((_, language)) => Format::Code(language),
        None => Format::Shell,
    };
    Some(row(format, "a script with a shebang: whatever runs it runs this"))
}

/// Whether a file's segments put it in a home's own program folder
/// (`~/bin`, `~/.local/bin`), which login shells put on `PATH`.
fn in_home_bin(segments: &[&str]) -> bool {
    let Some((_, folder)) = segments.split_last() else { return false };
    let Some(home) = folder.strip_suffix(&["bin"]) else { return false };
    let home = home.strip_suffix(&[".local"]).unwrap_or(home);
    matches!(home, [tilde] if tilde.starts_with('~'))
        || matches!(home, ["home" | "Users", _] | ["root"])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(path: &str) -> Option<Format> {
        runs_later(path, None).map(|r| r.format)
    }

    #[test]
    fn files_are_found_by_name_and_folder() {
        let rows = [
            (".git/hooks/pre-commit", Some(Format::Shell)),
            ("/home/u/app/.husky/pre-push", Some(Format::Shell)),
            (".git/config", Some(Format::GitConfig)),
            ("sub/Makefile", Some(Format::Makefile)),
            ("rules/build.mk", Some(Format::Makefile)),
            ("package.json", Some(Format::PackageJson)),
            (".github/workflows/ci.yml", Some(Format::YamlSteps)),
            (".github/dependabot.yml", None),
            (".circleci/config.yml", Some(Format::YamlSteps)),
            ("docker/Dockerfile.dev", Some(Format::Containerfile)),
            (".vscode/tasks.json", Some(Format::ToolJson)),
            (".vscode/settings.json", None),
            ("/etc/cron.d/backup", Some(Format::Crontab)),
            ("/etc/cron.daily/backup", Some(Format::Shell)),
            ("~/.config/systemd/user/x.service", Some(Format::SystemdUnit)),
            ("~/Library/LaunchAgents/x.plist", Some(Format::LaunchdPlist)),
            ("~/.zshrc", Some(Format::Shell)),
            ("scripts/release.sh", Some(Format::Shell)),
            ("~/.local/bin/git", Some(Format::Shell)),
            ("~/bin/ls", Some(Format::Shell)),
            ("/home/u/.local/bin/python3", Some(Format::Shell)),
            ("bin/run", None),
            ("~/src/app/bin/run", None),
            ("build.rs", Some(Format::Code("rust"))),
            (".cargo/config.toml", Some(Format::TomlCommands)),
            ("src/main.rs", None),
            ("README.md", None),
            (".claude/settings.json", Some(Format::HarnessJson)),
            ("/home/u/app/.claude/settings.local.json", Some(Format::HarnessJson)),
            ("~/.claude/settings.json", Some(Format::HarnessJson)),
            ("~/.claude.json", Some(Format::HarnessJson)),
            (".mcp.json", Some(Format::HarnessJson)),
            (
                "~/Library/Application Support/Claude/claude_desktop_config.json",
                Some(Format::HarnessJson),
            ),
            (".cursor/mcp.json", Some(Format::HarnessJson)),
            ("~/.cursor/hooks.json", Some(Format::HarnessJson)),
            ("~/.gemini/settings.json", Some(Format::HarnessJson)),
            ("~/.codex/config.toml", Some(Format::HarnessToml)),
            ("~/.copilot/mcp-config.json", Some(Format::HarnessJson)),
            (".github/hooks/guard.json", Some(Format::HarnessJson)),
            ("~/.codeium/windsurf/mcp_config.json", Some(Format::HarnessJson)),
            (".windsurf/hooks.json", Some(Format::HarnessJson)),
            (".vscode/mcp.json", Some(Format::HarnessJson)),
            ("~/.config/Code/User/mcp.json", Some(Format::HarnessJson)),
            (".factory/settings.json", Some(Format::HarnessJson)),
            ("opencode.json", Some(Format::HarnessJson)),
            ("src/settings.json", None),
            ("docs/mcp.json", None),
        ];
        for (path, expected) in rows {
            assert_eq!(format(path), expected, "{path}");
        }
    }

    #[test]
    fn a_shebang_makes_any_file_a_script() {
        assert_eq!(
            runs_later("bin/tool", Some("#!/usr/bin/env python3\nprint(1)")).map(|r| r.format),
            Some(Format::Code("python"))
        );
        assert_eq!(
            runs_later("bin/tool", Some("#!/bin/sh\necho")).map(|r| r.format),
            Some(Format::Shell)
        );
        assert_eq!(runs_later("notes.txt", Some("hello")), None);
    }
}

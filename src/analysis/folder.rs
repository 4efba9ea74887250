//! The folder an action runs in, and what its paths name from there.
//!
//! Policies read a relative path as inside the project (`rm -rf target`
//! is cleanup) and an absolute one as what it names. Two things refine
//! that, both after the commands are found:
//!
//! - **The project folder**, when the caller knows it (the Claude Code
//!   hook's `cwd`) and it is one ([`ProjectFolder::new`]: absolute, below
//!   a home or a non-system folder, not a home itself nor above one, not
//!   hidden): an absolute path inside it is rewritten to the relative path
//!   it is (`/home/u/app/target` from `/home/u/app` is `target`).
//! - **`cd`** inside the action, or a known working folder that is not a
//!   project (`/`, a home, `/etc`, `~/.ssh`): relative arguments after it
//!   name something else, so each such command is reported a second time
//!   with them resolved (`cd ~/.ssh && rm id_rsa` is also
//!   `rm ~/.ssh/id_rsa`, `cd .. && rm -rf app` is also `rm -rf ../app`).
//!   `pushd` and `popd` move the same way, and so do `env -C DIR` and
//!   `git -C DIR` for the command they run; in a folder known only when
//!   the action runs (`cd "$DIR"`), a relative path is unknown.
//!   The first form stays, so a disguise can only make the verdict
//!   stricter; and a `cd` never makes a folder the project, since the
//!   agent writes it. A folder outside every home, system and temp folder
//!   (`cd /repo`) is read like the project: relative paths there are not
//!   resolved (its `*` is still everything in it).

use super::{
    Analysis, Command, Effect, EffectKind, Fact, MAX_COMMANDS, preview,
    words::{RUN_TIME_VALUE, normalize_path},
};

/// Top-level folders of the system, never a project.
pub(super) const SYSTEM_FOLDERS: [&str; 22] = [
    "bin",
    "boot",
    "dev",
    "etc",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "opt",
    "proc",
    "root",
    "run",
    "sbin",
    "sys",
    "usr",
    "var",
    "System",
    "Library",
    "Applications",
    "private",
    "Volumes",
    "cores",
];

/// What follows `folder` in `path` (empty, or starting with `/`) when
/// `path` is `folder` or inside it.
fn under<'p>(path: &'p str, folder: &str) -> Option<&'p str> {
    path.strip_prefix(folder).filter(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// A working folder trusted as the project the agent works in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFolder {
    /// The folder as written (`/home/u/app`), normalised.
    absolute: String,
    /// The same folder under the home as `~/app`, when it is there.
    home_form: Option<String>,
}

impl ProjectFolder {
    /// The project folder for a working folder, or `None` when the folder
    /// is not one a project can be (then it is only a folder: see
    /// [`resolve_in`]). `home` is the user's home folder, if known.
    pub fn new(cwd: &str, home: Option<&str>) -> Option<Self> {
        let absolute = normalize_path(cwd.trim());
        if !absolute.starts_with('/') {
            return None;
        }
        let home = home.map(normalize_path).filter(|h| h.starts_with('/') && h != "/");
        let home_form = home
            .as_deref()
            .and_then(|home| under(&absolute, home))
            .filter(|rest| !rest.is_empty())
            .map(|rest| format!("~{rest}"));
        let segments: Vec<&str> = absolute.split('/').filter(|s| !s.is_empty()).collect();
        let above_or_at_home = home
            .as_deref()
            .is_some_and(|home| home == absolute || home.starts_with(&format!("{absolute}/")));
        let hidden = segments.iter().any(|s| s.starts_with('.'));
        let users = matches!(segments.first(), Some(&("home" | "Users")));
        let deep_enough =
            if home_form.is_some() || users { segments.len() >= 3 } else { segments.len() >= 2 };
        let system = home_form.is_none()
            && segments.first().is_some_and(|first| SYSTEM_FOLDERS.contains(first));
        (!above_or_at_home && !hidden && deep_enough && !system)
            .then_some(Self { absolute, home_form })
    }

    /// The relative path an absolute one inside the project is, if it is.
    fn relative(&self, path: &str) -> Option<String> {
        let rest = under(path, &self.absolute)
            .or_else(|| self.home_form.as_deref().and_then(|home_form| under(path, home_form)))?;
        Some(normalize_path(&format!(".{rest}")))
    }
}

/// Where an action starts: in a project, in a known folder that is not
/// one, or (an MCP step) where relative paths are the project.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WorkingFolder {
    #[default]
    Project,
    In(ProjectFolder),
    Outside(String),
}

impl WorkingFolder {
    /// The folder as an absolute path, when it is known as one.
    pub fn absolute(&self) -> Option<String> {
        match self {
            Self::Project => None,
            Self::In(project) => Some(project.absolute.clone()),
            Self::Outside(folder) => match folder.strip_prefix('~') {
                Some(rest) => std::env::var("HOME").ok().map(|home| format!("{home}{rest}")),
                None => folder.starts_with('/').then(|| folder.clone()),
            },
        }
    }

    /// [`WorkingFolder::from_cwd`] with this process's `HOME`.
    pub fn for_this_user(cwd: &str) -> Self {
        Self::from_cwd(cwd, std::env::var("HOME").ok().as_deref())
    }

    /// The working folder the caller reported (`cwd`), with the home folder
    /// used to tell a project from a home or a system folder.
    pub fn from_cwd(cwd: &str, home: Option<&str>) -> Self {
        match ProjectFolder::new(cwd, home) {
            Some(project) => Self::In(project),
            None => {
                let home = home.map(normalize_path);
                let folder = normalize_path(cwd.trim());
                match home.as_deref().and_then(|home| under(&folder, home)) {
                    Some(rest) => Self::Outside(format!("~{rest}")),
                    None => Self::Outside(folder),
                }
            }
        }
    }
}

/// Rewrites and adds what the folder an action runs in changes.
/// `scopes` holds the subshells and programs each command runs in
/// (`Builder::in_subshell`), by index: a `cd` moves the commands after it
/// in the same one or inside it. `redirections` are the files written
/// through `>` and `>>`, each with the commands whose output goes there:
/// one written after a `cd` is also written where it resolves (`cd /etc
/// && echo x > hosts` writes `/etc/hosts`).
pub(super) fn resolve_in(
    analysis: &mut Analysis,
    scopes: &[Vec<u32>],
    redirections: &[(Vec<usize>, String)],
    start: &WorkingFolder,
) {
    let project = match start {
        WorkingFolder::In(project) => Some(project),
        _ => None,
    };
    if let Some(project) = project {
        let relative = |path: &mut String| {
            if let Some(inside) = project.relative(path) {
                *path = inside;
            }
        };
        for command in &mut analysis.commands {
            command.positionals.iter_mut().for_each(relative);
            command.flag_values.iter_mut().for_each(relative);
        }
        analysis.reads.iter_mut().for_each(relative);
        analysis.writes.iter_mut().for_each(relative);
        analysis.planted.iter_mut().for_each(relative);
        analysis.effects.iter_mut().for_each(|effect| relative(&mut effect.target));
    }
    let start_folder = match start {
        WorkingFolder::Project | WorkingFolder::In(_) => ".".to_owned(),
        WorkingFolder::Outside(folder) => folder.clone(),
    };
    // A file judged for what it plants is judged under the name its
    // write resolves to as well.
    if let WorkingFolder::Outside(outside) = start {
        let resolved: Vec<String> = analysis
            .planted
            .iter()
            .filter(|p| !p.starts_with(['/', '~']))
            .map(|p| normalize_path(&format!("{outside}/{p}")))
            .collect();
        analysis.planted.extend(resolved);
    }
    let mut resolved = Vec::new();
    // The folder each command runs in, where relative paths name
    // something other than the project's.
    let mut elsewhere_at: Vec<Option<String>> = vec![None; analysis.commands.len()];
    // The folder (and `pushd` stack) of each subshell or program the walk
    // is in, outermost first: one they end is left as it was before.
    let mut folders: Vec<(&[u32], String, Vec<String>)> = vec![(&[], start_folder, Vec::new())];
    for (at, command) in analysis.commands.iter().enumerate() {
        let scope = scopes.get(at).map_or(&[][..], Vec::as_slice);
        while folders.len() > 1
            && folders.last().is_some_and(|(inner, _, _)| !scope.starts_with(inner))
        {
            folders.pop();
        }
        let Some((current, folder, pushed)) = folders.last() else { break };
        if *current != scope {
            let entered = (scope, folder.clone(), pushed.clone());
            folders.push(entered);
        }
        let Some((_, folder, pushed)) = folders.last_mut() else { break };
        let moves = match command.program.as_str() {
            "cd" => true,
            "pushd" => {
                pushed.push(folder.clone());
                true
            }
            "popd" => {
                // Below the first `pushd` of the action, the stack holds
                // folders it does not know.
                *folder = pushed.pop().unwrap_or_else(|| RUN_TIME_VALUE.to_owned());
                continue;
            }
            _ => false,
        };
        if moves {
            *folder = match command.positionals.first().map(String::as_str) {
                None if command.program == "cd" => "~".to_owned(),
                None => RUN_TIME_VALUE.to_owned(),
                Some(target) if target.starts_with(['/', '~']) => {
                    project.and_then(|p| p.relative(target)).unwrap_or_else(|| target.to_owned())
                }
                Some(target) => normalize_path(&format!("{folder}/{target}")),
            };
            continue;
        }
        let folder = folder.as_str();
        // Inside the project, relative stays relative; so does a folder
        // outside every home, system and temp folder that the action
        // `cd`s into (`cd /repo && rm -rf target`): it is taken as a
        // workspace of its own, where the project's rules apply.
        let workspace =
            folder.starts_with('/') && super::effects::zone_of(folder) == super::Zone::Elsewhere;
        // In a folder not known before the action runs (`cd "$DIR"`,
        // `env -C "$DIR"`), a relative path names something unknown.
        let unknown = super::effects::zone_of(folder) == super::Zone::Unknown;
        let elsewhere = !workspace
            && (unknown
                || folder.starts_with(['/', '~'])
                || folder == ".."
                || folder.starts_with("../"));
        if !elsewhere {
            continue;
        }
        if let Some(slot) = elsewhere_at.get_mut(at) {
            *slot = Some(folder.to_owned());
        }
        if let Some(copy) = resolved_copy(command, folder) {
            resolved.push(copy);
        }
    }
    for (commands, path) in redirections {
        // The folder of the last command whose output goes there.
        let Some(folder) =
            commands.iter().max().and_then(|&at| elsewhere_at.get(at)).cloned().flatten()
        else {
            continue;
        };
        if !is_relative(path) {
            continue;
        }
        let there = normalize_path(&format!("{folder}/{path}"));
        let overwritten: Vec<Effect> = analysis
            .effects
            .iter()
            .filter(|effect| effect.kind == EffectKind::Overwrite && effect.target == *path)
            .map(|effect| Effect { target: there.clone(), ..effect.clone() })
            .collect();
        analysis.effects.extend(overwritten);
        if analysis.planted.contains(path) {
            analysis.planted.push(there.clone());
        }
        if analysis.unjudged_writes.contains(path) {
            analysis.unjudged_writes.push(there.clone());
        }
        analysis.writes.push(there);
    }
    for command in resolved {
        if analysis.commands.len() >= MAX_COMMANDS {
            // Not silently: the copies left out could be what decides.
            if !analysis.has(Fact::TooComplex) {
                analysis.facts.push((
                    Fact::TooComplex,
                    format!(
                        "more than {MAX_COMMANDS} commands with `{}` resolved",
                        preview(&command.argv.join(" "))
                    ),
                ));
            }
            break;
        }
        analysis
            .reads
            .extend(command.positionals.iter().filter(|p| p.starts_with(['/', '~', '.'])).cloned());
        analysis.commands.push(command);
    }
}

/// Whether `word` is a path relative to the folder it is used in.
fn is_relative(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with(['/', '~', '$', '-', '+'])
        && !word.contains("://")
        && !word.contains('=')
}

/// The command with its relative arguments resolved in `folder`, if any
/// of them is relative.
fn resolved_copy(command: &Command, folder: &str) -> Option<Command> {
    if !command.positionals.iter().any(|p| is_relative(p)) {
        return None;
    }
    let mut copy = command.clone();
    for positional in &mut copy.positionals {
        if is_relative(positional) {
            *positional = normalize_path(&format!("{folder}/{positional}"));
        }
    }
    copy.via = Some(format!("cd {folder}"));
    Some(copy)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: Option<&str> = Some("/home/u");

    #[test]
    fn a_project_is_below_a_home_or_a_non_system_folder_and_not_hidden() {
        for project in
            ["/home/u/app", "/home/u/src/app", "/work/main", "/tmp/build/x", "/home/other/app"]
        {
            assert!(ProjectFolder::new(project, HOME).is_some(), "{project}");
        }
        for not_one in [
            "/",
            "/home",
            "/home/u",
            "/home/u/.ssh",
            "/home/u/.config/x",
            "/etc/nginx",
            "/usr/local/src",
            "/work",
            "relative/app",
            "/Users/x",
        ] {
            assert!(ProjectFolder::new(not_one, HOME).is_none(), "{not_one}");
        }
    }

    #[test]
    fn paths_inside_the_project_become_relative_in_either_form() {
        let project = ProjectFolder::new("/home/u/app/", HOME).unwrap();
        assert_eq!(project.relative("/home/u/app/target").as_deref(), Some("target"));
        assert_eq!(project.relative("~/app/node_modules").as_deref(), Some("node_modules"));
        assert_eq!(project.relative("/home/u/app").as_deref(), Some("."));
        assert_eq!(project.relative("/home/u/application"), None);
        assert_eq!(project.relative("~/.ssh"), None);
    }

    fn positionals(hint: &str, start: &WorkingFolder) -> Vec<Vec<String>> {
        let analysis = super::super::analyze_in(hint, start).unwrap();
        analysis
            .commands
            .iter()
            .filter(|c| c.program == "rm")
            .map(|c| c.positionals.clone())
            .collect()
    }

    #[test]
    fn the_project_turns_its_absolute_paths_relative_and_a_cd_adds_resolved_forms() {
        let app = WorkingFolder::from_cwd("/home/u/app", HOME);
        assert_eq!(positionals("rm -rf /home/u/app/target ~/app/x", &app), [["target", "x"]]);
        assert_eq!(positionals("rm -rf /home/u/other", &app), [["/home/u/other"]]);
        assert_eq!(
            positionals("cd ~/.ssh && rm id_rsa", &app),
            [vec!["id_rsa"], vec!["~/.ssh/id_rsa"]]
        );
        assert_eq!(
            positionals("cd .. && rm -rf app", &WorkingFolder::Project),
            [vec!["app"], vec!["../app"]]
        );
        assert_eq!(
            positionals("cd /home/u/app/src && rm -rf build", &app),
            [["build"]],
            "a cd inside the project stays relative"
        );
        assert_eq!(
            positionals("rm -rf target", &WorkingFolder::from_cwd("/", HOME)),
            [vec!["target"], vec!["/target"]]
        );
        let ssh = WorkingFolder::from_cwd("/home/u/.ssh", HOME);
        let analysis = super::super::analyze_in("rm id_rsa", &ssh).unwrap();
        assert!(analysis.reads.contains(&"~/.ssh/id_rsa".to_owned()), "{:?}", analysis.reads);
    }

    #[test]
    fn a_folder_known_only_when_the_action_runs_makes_relative_paths_unknown() {
        for hint in [
            "cd \"$DIR\" && rm -rf build",
            "env -C \"$DIR\" rm -rf build",
            "env --chdir=$DIR rm -rf build",
            "pushd $DIR && rm -rf build",
            "pushd src; popd; popd; rm -rf build",
        ] {
            let found = positionals(hint, &WorkingFolder::Project);
            assert!(
                found.iter().flatten().any(|p| p.ends_with("/build") && p.contains('$')),
                "{hint}: {found:?}"
            );
        }
        assert_eq!(
            positionals("pushd src && rm -rf build && popd", &WorkingFolder::Project),
            [["build"]]
        );
        let analysis = super::super::analyze("git -C ~/other rm -rf docs").unwrap();
        assert!(
            analysis.commands.iter().any(|c| c.positionals.contains(&"~/other/docs".to_owned())),
            "{:?}",
            analysis.commands
        );
    }

    #[test]
    fn resolved_forms_beyond_the_command_limit_make_the_action_too_complex() {
        // Only a planted script holds that many commands.
        let removals: String = (1..MAX_COMMANDS - 1).map(|i| format!("rm a{i}\n")).collect();
        let write = super::super::FileWrite {
            path: "x.sh".into(),
            change: super::super::Change::Whole(format!("cd ~/.ssh\n{removals}")),
        };
        let action = super::super::Action {
            text: "write_file x.sh",
            writes: std::slice::from_ref(&write),
            folder: &WorkingFolder::Project,
            files: &super::super::NoCurrentFiles,
        };
        let analysis = super::super::analyze_action(&action).unwrap();
        assert_eq!(analysis.commands.len(), MAX_COMMANDS);
        assert!(
            analysis
                .facts
                .iter()
                .any(|(fact, detail)| *fact == Fact::TooComplex && detail.contains("resolved")),
            "{:?}",
            analysis.facts
        );
    }

    #[test]
    fn a_folder_that_is_no_project_is_kept_in_its_home_form() {
        assert_eq!(
            WorkingFolder::from_cwd("/home/u/.ssh", HOME),
            WorkingFolder::Outside("~/.ssh".into())
        );
        assert_eq!(WorkingFolder::from_cwd("/home/u", HOME), WorkingFolder::Outside("~".into()));
        assert_eq!(WorkingFolder::from_cwd("/", HOME), WorkingFolder::Outside("/".into()));
    }
}

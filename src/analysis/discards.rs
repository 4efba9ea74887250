//! What git commands throw away: work that exists nowhere else once the
//! command has run. Changes not yet committed are lost when a command
//! puts the committed version of files back (`git checkout -- f`,
//! `git checkout main f`, `git restore f`, `git checkout -f`,
//! `git reset --hard` or `--merge`), removes files with their changes
//! (`git rm -f`, `git clean -f`, `git worktree remove -f`), forces a
//! submodule out or back (`git submodule deinit -f`, `update -f`), throws them
//! away to switch branch (`git switch -f`, `--discard-changes`), or ends a
//! merge, rebase or cherry-pick in progress (`--abort`); stashed work is
//! lost with `git stash drop` or `clear`. Plumbing does the same:
//! `git read-tree -u --reset` and `git checkout-index -f`.
//!
//! Each yields the targets of a `discard` effect ([`super::EffectKind`]):
//! the paths named, `.` for the whole working tree, `.git/refs/stash` for
//! the stash, and an unknown target when the paths come from a file or
//! at run time. Commands that only move a branch, touch the index alone
//! (`git restore --staged`) or refuse to lose changes (`git rm` without
//! `-f`, `git reset --keep`) discard nothing.
//!
//! Options are read with each subcommand's grammar ([`super::options`]),
//! abbreviations included; of an option and its `--no-` form, the last
//! given holds, as git reads them.

use super::{
    Command,
    options::{self, Parsed},
    words::{RUN_TIME_VALUE as UNKNOWN, normalize_path},
};
/// The whole working tree.
const WORKING_TREE: &str = ".";
/// The stash.
const STASH: &str = ".git/refs/stash";

/// What `command` (a `git` command, global options already unwrapped)
/// throws away, as `discard` targets.
pub(super) fn discarded(command: &Command) -> Vec<String> {
    let Some(subcommand) = command.subcommand() else { return Vec::new() };
    // Words an unquoted value becomes may be any options (`git clean
    // $opts` may be `-fdx`), or the stash's own command: the worst case
    // (judged apart: [`Command::open`]). Ending a merge or rebase in
    // progress (`--abort`) is left out: `git merge $branch` is everyday
    // work, and an operation in progress is rare.
    if command.open.is_some_and(|open| open.options) {
        match subcommand {
            "checkout" | "switch" | "reset" | "clean" | "rm" | "restore" | "worktree"
            | "read-tree" | "checkout-index" => return vec![WORKING_TREE.to_owned()],
            "stash" => return vec![STASH.to_owned()],
            _ => {}
        }
    }
    let Some(at) = command.argv.iter().position(|word| word.eq_ignore_ascii_case(subcommand))
    else {
        return Vec::new();
    };
    let args = command.argv.get(at + 1..).unwrap_or_default();
    let parse = |name: &str, args: &[String]| {
        options::of("git", Some(name)).map(|grammar| grammar.parse(args)).unwrap_or_default()
    };
    let appended = |paths: Vec<String>| {
        if paths.is_empty() && command.has_unknown_arguments() {
            vec![UNKNOWN.to_owned()]
        } else {
            paths
        }
    };
    match subcommand {
        "checkout" => {
            let (before, after) = split_at_end_of_options(args);
            let parsed = parse("checkout", before);
            if parsed.has("--pathspec-from-file") {
                return vec![UNKNOWN.to_owned()];
            }
            // Git refuses paths beside a new, tracking or detached branch.
            let switches_only =
                ["-b", "-B", "--orphan", "--track", "--detach"].iter().any(|flag| parsed.has(flag));
            let mut paths: Vec<String> = match after {
                _ if switches_only => Vec::new(),
                Some(after) => appended(paths_of(after)),
                // `git checkout BRANCH PATH…`: past the first, paths.
                None if parsed.positionals.len() >= 2 => {
                    paths_of(parsed.positionals.get(1..).unwrap_or_default())
                }
                None => paths_of(&parsed.positionals)
                    .into_iter()
                    .filter(|path| names_paths_not_branch(path))
                    .collect(),
            };
            if last_of(&parsed, "-f", "--no-force") {
                paths.push(WORKING_TREE.to_owned());
            }
            paths
        }
        // A switch that throws local changes away to switch.
        "switch" => {
            let parsed = parse("switch", args);
            if parsed.has("-f") || parsed.has("--discard-changes") {
                vec![WORKING_TREE.to_owned()]
            } else {
                Vec::new()
            }
        }
        "restore" => {
            let parsed = parse("restore", args);
            // The working tree is restored unless only the index is
            // asked for; asking for neither is refused.
            let staged = last_of(&parsed, "-S", "--no-staged");
            let worktree = given_last(&parsed, "-W", "--no-worktree").unwrap_or(!staged);
            if !worktree {
                return Vec::new();
            }
            if parsed.has("--pathspec-from-file") {
                return vec![UNKNOWN.to_owned()];
            }
            appended(paths_of(&parsed.positionals))
        }
        "reset" => {
            let (before, after) = split_at_end_of_options(args);
            let parsed = parse("reset", before);
            // With paths git resets the index alone: it refuses `--hard`
            // and `--merge` there.
            if after.is_some_and(|paths| !paths.is_empty()) {
                Vec::new()
            } else if parsed.has("--hard") || parsed.has("--merge") {
                vec![WORKING_TREE.to_owned()]
            } else if before.iter().any(|word| super::command::is_run_time(word)) {
                // `parallel git reset {}`: a word known only when it runs
                // may be `--hard`.
                vec![UNKNOWN.to_owned()]
            } else {
                Vec::new()
            }
        }
        "clean" => {
            let parsed = parse("clean", args);
            let removes = (last_of(&parsed, "-f", "--no-force") || parsed.has("-i"))
                && !last_of(&parsed, "-n", "--no-dry-run");
            if !removes {
                return Vec::new();
            }
            let paths = paths_of(&parsed.positionals);
            if paths.is_empty() { vec![WORKING_TREE.to_owned()] } else { paths }
        }
        "rm" => {
            let parsed = parse("rm", args);
            let removes = last_of(&parsed, "-f", "--no-force")
                && !last_of(&parsed, "--cached", "--no-cached")
                && !last_of(&parsed, "-n", "--no-dry-run");
            if !removes {
                return Vec::new();
            }
            if parsed.has("--pathspec-from-file") {
                return vec![UNKNOWN.to_owned()];
            }
            appended(paths_of(&parsed.positionals))
        }
        "worktree" => {
            let parsed = parse("worktree", args);
            match parsed.positionals.split_first() {
                Some((action, rest)) if action == "remove" && parsed.has("-f") => {
                    appended(paths_of(rest))
                }
                _ => Vec::new(),
            }
        }
        "submodule" => submodule_work_discarded(args).map_or_else(Vec::new, appended),
        "stash" => match args.iter().find(|word| !word.starts_with('-')).map(String::as_str) {
            Some("drop" | "clear") => vec![STASH.to_owned()],
            _ => Vec::new(),
        },
        // Plumbing that writes the working tree: `read-tree -u --reset`
        // overwrites files with changes (`-m -u` refuses to), and
        // `checkout-index -f` overwrites the files it names (`-a`: all).
        "read-tree" => {
            let has = |flag: &str| args.iter().any(|word| word == flag);
            if has("-u") && has("--reset") { vec![WORKING_TREE.to_owned()] } else { Vec::new() }
        }
        "checkout-index" => {
            let (options, paths): (Vec<&String>, Vec<&String>) =
                args.iter().partition(|word| word.starts_with('-'));
            let has = |short: char, long: &str| {
                options
                    .iter()
                    .any(|word| *word == long || !word.starts_with("--") && word.contains(short))
            };
            match (has('f', "--force"), has('a', "--all")) {
                (false, _) => Vec::new(),
                (true, true) => vec![WORKING_TREE.to_owned()],
                (true, false) => {
                    appended(paths.into_iter().map(|path| normalize_path(path)).collect())
                }
            }
        }
        "merge" | "rebase" | "cherry-pick" | "revert" | "am" => {
            // No grammar is kept for these: `--abort` or a prefix of it
            // from `--abo` on, as git accepts it abbreviated.
            let aborts = args
                .iter()
                .take_while(|word| *word != "--")
                .any(|word| word.len() >= 5 && "--abort".starts_with(word.as_str()));
            if aborts { vec![WORKING_TREE.to_owned()] } else { Vec::new() }
        }
        _ => Vec::new(),
    }
}

/// The words before a `--` that ends the options, and those after it.
fn split_at_end_of_options(args: &[String]) -> (&[String], Option<&[String]>) {
    match args.iter().position(|word| word == "--") {
        Some(end) => (args.get(..end).unwrap_or_default(), args.get(end + 1..)),
        None => (args, None),
    }
}

/// What `git submodule deinit -f` or `update -f` throws away: the local
/// changes of the submodules named (`--all`, or `update` naming none:
/// every one), which git refuses to lose without `-f`/`--force`. `None`
/// when it throws nothing away.
fn submodule_work_discarded(args: &[String]) -> Option<Vec<String>> {
    let (options, words): (Vec<&String>, Vec<&String>) =
        args.iter().take_while(|word| *word != "--").partition(|word| word.starts_with('-'));
    let after_end = args.iter().skip_while(|word| *word != "--").skip(1);
    let (action, named) = words.split_first()?;
    let forced = options.iter().any(|word| {
        *word == "--force"
            || !word.starts_with("--")
                && word.len() > 1
                && word.chars().skip(1).all(|c| "fq".contains(c))
                && word.contains('f')
    });
    let every = options.iter().any(|word| *word == "--all");
    let paths: Vec<String> =
        named.iter().copied().chain(after_end).map(|word| normalize_path(word)).collect();
    match action.as_str() {
        "deinit" | "update" if forced && (every || paths.is_empty()) => {
            Some(vec![WORKING_TREE.to_owned()])
        }
        "deinit" | "update" if forced => Some(paths),
        _ => None,
    }
}

fn paths_of(words: &[String]) -> Vec<String> {
    words.iter().map(|word| normalize_path(word)).collect()
}

/// Whether the one word `git checkout WORD` is given can only be a path:
/// git takes it as a branch or commit when one has that name, which a
/// branch named `.` or holding a glob never has.
fn names_paths_not_branch(word: &str) -> bool {
    word == WORKING_TREE
        || word.starts_with("./")
        || word.starts_with(':')
        || word.contains(['*', '?', '['])
}

/// Whether `flag` holds: given after the last `negation`.
fn last_of(parsed: &Parsed, flag: &str, negation: &str) -> bool {
    given_last(parsed, flag, negation).unwrap_or(false)
}

/// Whether the last of `flag` and `negation` given is `flag`; `None`
/// when neither is.
fn given_last(parsed: &Parsed, flag: &str, negation: &str) -> Option<bool> {
    parsed
        .options
        .iter()
        .rev()
        .find(|option| option.flag == flag || option.flag == negation)
        .map(|option| option.flag == flag)
}

#[cfg(test)]
mod tests {
    use crate::analysis::{EffectKind, WorkingFolder, analyze_in};

    fn discarded(line: &str) -> Vec<String> {
        discards_of(analyze_in(line, &WorkingFolder::Project).unwrap())
    }

    fn discards_of(analysis: crate::analysis::Analysis) -> Vec<String> {
        analysis
            .effects
            .into_iter()
            .filter(|effect| effect.kind == EffectKind::Discard)
            .map(|effect| effect.target)
            .collect()
    }

    #[test]
    fn an_unquoted_value_may_be_the_options_that_discard() {
        let possibly = |line: &str| {
            let analysis = analyze_in(line, &WorkingFolder::Project).unwrap();
            (discards_of(analysis.clone()), analysis.possible.map(|p| discards_of(*p)))
        };
        let none = Vec::<String>::new();
        assert_eq!(possibly("git clean $opts"), (none.clone(), Some(vec![".".to_owned()])));
        assert_eq!(
            possibly("git stash $action"),
            (none.clone(), Some(vec![".git/refs/stash".to_owned()]))
        );
        assert_eq!(possibly("git log $range"), (none.clone(), Some(none.clone())));
        assert_eq!(possibly("git clean -- $path"), (none.clone(), Some(none.clone())));
        assert_eq!(possibly("git clean \"$opts\""), (none, None));
    }

    #[test]
    fn commands_that_put_committed_files_back_discard_the_changes() {
        let cases: [(&str, &[&str]); 19] = [
            ("git read-tree -u --reset HEAD~2", &["."]),
            ("git checkout-index -f -a", &["."]),
            ("git checkout-index -fu -- src/lib.rs", &["src/lib.rs"]),
            ("git checkout-index --force README.md", &["README.md"]),
            ("git checkout -- src/main.rs", &["src/main.rs"]),
            ("git checkout HEAD -- a.txt b.txt", &["a.txt", "b.txt"]),
            ("git checkout main notes.md", &["notes.md"]),
            ("git checkout .", &["."]),
            ("git checkout -f main", &["."]),
            ("git checkout --forc main", &["."]),
            ("git checkout -qf main", &["."]),
            ("git checkout HEAD --pathspec-from-file=paths.txt", &["$(…)"]),
            ("git restore notes.md", &["notes.md"]),
            ("git restore -S -W notes.md", &["notes.md"]),
            ("git restore --source=HEAD~2 src", &["src"]),
            ("git restore -S --no-staged notes.md", &["notes.md"]),
            ("git reset --hard HEAD~1", &["."]),
            ("git reset --mer HEAD~1", &["."]),
            ("git -C /tmp/repo checkout -- f", &["f"]),
        ];
        for (line, targets) in cases {
            assert_eq!(discarded(line), targets, "{line}");
        }
    }

    #[test]
    fn commands_that_remove_or_drop_work_discard_it() {
        let cases: [(&str, &[&str]); 15] = [
            ("git rm -f notes.md", &["notes.md"]),
            ("git submodule deinit -f --all", &["."]),
            ("git submodule deinit --force vendor/lib", &["vendor/lib"]),
            ("git submodule update -f", &["."]),
            ("git rm --cached --no-cached --force notes.md", &["notes.md"]),
            ("git clean -fd", &["."]),
            ("git clean -f build/", &["build"]),
            ("git switch -qf main", &["."]),
            ("git switch --discard-ch release", &["."]),
            ("git reset $(cat ref.txt)", &["$(…)"]),
            ("git worktree remove --force ../wt", &["../wt"]),
            ("git stash drop stash@{0}", &[".git/refs/stash"]),
            ("git stash clear", &[".git/refs/stash"]),
            ("git rebase --abort", &["."]),
            ("git merge --abor", &["."]),
        ];
        for (line, targets) in cases {
            assert_eq!(discarded(line), targets, "{line}");
        }
    }

    #[test]
    fn commands_that_keep_every_change_discard_nothing() {
        for line in [
            "git read-tree -m -u HEAD origin/main",
            "git read-tree --reset HEAD",
            "git checkout-index -a --prefix=export/",
            "git checkout main",
            "git checkout -b feature/login",
            "git checkout -b feature/login origin/main",
            "git checkout -b test main notes.md",
            "git checkout -bnew-branch",
            "git checkout -qbfeature",
            "git checkout --orphan gh-pages",
            "git checkout -",
            "git switch main",
            "git switch -q --detach v1.0",
            "git reset $(cat mode.txt) -- src/lib.rs",
            "git restore --staged notes.md",
            "git restore --staged .",
            "git restore --no-worktree notes.md",
            "git restore -W --no-worktree notes.md",
            "git restore notes.md --help",
            "git checkout --track origin/main notes.md",
            "git checkout -U3 main",
            "git checkout --inter-hunk-context 3 main",
            "git reset --soft HEAD~1",
            "git reset --keep HEAD~1",
            "git reset notes.md",
            "git rm notes.md",
            "git rm --cached -f notes.md",
            "git rm -f -n notes.md",
            "git clean -n",
            "git clean -f --dry-run",
            "git worktree remove ../wt",
            "git submodule deinit --all",
            "git submodule update --init --recursive",
            "git submodule foreach git pull",
            "git stash",
            "git stash pop",
            "git stash push -m wip",
            "git rebase main",
            "git merge --no-ff feature",
            "git add -f notes.md",
            "git log -- notes.md",
        ] {
            assert_eq!(discarded(line), Vec::<String>::new(), "{line}");
        }
    }

    #[test]
    fn paths_given_at_run_time_are_unknown() {
        assert_eq!(discarded("git ls-files -m | xargs git checkout --"), ["$(…)"]);
        assert_eq!(discarded("git diff --name-only | xargs git restore"), ["$(…)"]);
        assert_eq!(discarded("git ls-files | xargs git add"), Vec::<String>::new());
    }
}

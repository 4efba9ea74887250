//! What an action does to files, whatever program and spelling does it:
//! each command found ([`super::Command`]) and each redirection yields
//! effects (delete, overwrite, change permissions or open a file to other
//! users, discard uncommitted work, format a disk or image, read a folder
//! whole), each on a target path placed in a [`Zone`] (the project, a
//! temp folder, the home folder, the system, elsewhere, or unknown).
//! Policies match effects by zone or by path (`delete:@home`,
//! `overwrite:/etc/**`), so `mv ~/Documents /tmp/x`, `find ~ -delete` and
//! `rm -rf ~/Documents` are the same deletion.
//!
//! A move deletes its source where it was and overwrites its destination;
//! `find -delete` is the `rm` of what it selects (`executors`); a
//! redirection with `>` overwrites its target. A target that is
//! not known before the action runs (an unknown variable, a command
//! substitution, arguments appended at run time) is [`Zone::Unknown`],
//! never the project: a deletion there needs a human.

use super::{
    Analysis, Command, code,
    command::Invocation,
    outputs,
    words::{RUN_TIME_VALUE, normalize_path},
};
use crate::names::named_enum;

named_enum! {
    /// What an effect does to its target.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum EffectKind {
        /// Removed from where it was (deleted, or moved away).
        Delete => "delete",
        /// Replaced or emptied (`>`, `truncate`, a copy or move over it).
        Overwrite => "overwrite",
        /// Permissions, ownership or ACLs changed.
        Permissions => "permissions",
        /// Opened to other users, besides the permissions change: a mode
        /// that gives the group or others any access (`chmod 644`, `o+r`,
        /// `+r`, a mode not known in advance or copied by `--reference`),
        /// or an ACL entry that grants someone else access (`setfacl -m
        /// u:bob:r`). `chmod 600` and `go-rwx` open nothing. A recursive
        /// change opens what the folder holds (`DIR/*`).
        Expose => "expose",
        /// Work that exists nowhere else thrown away: changes not yet
        /// committed, stashed or in progress (`git checkout -- f`,
        /// `git reset --hard`, `git stash drop`: [`super::discards`]).
        Discard => "discard",
        /// A file system, partition table or signature written over, or a
        /// device's blocks discarded (`mkfs`, `wipefs`, `parted`…): the
        /// device or image file they are given.
        Format => "format",
        /// Every file below a folder read at once: a recursive search, an
        /// archive made of it, a recursive copy or sync of it (`grep -r
        /// KEY ~`, `tar czf x.tgz ~`, `cp -r ~ /tmp/x`). Of a home or the
        /// root, that is every credential kept there.
        Collect => "collect",
    }
}

named_enum! {
    /// Where a target is, relative to where an agent may work freely.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Zone {
        /// Inside the project, below its root.
        Project => "project",
        /// The project root itself, or everything in it (`.`, `*`, `.*`).
        ProjectRoot => "project-root",
        /// Inside a temp folder (`/tmp/x`, `/var/tmp/x`, a Windows `Temp`).
        Temp => "temp",
        /// Inside a home folder, outside the project.
        Home => "home",
        /// A home folder itself, or everything in it (`~`, `~/*`, `/home/u`).
        HomeRoot => "home-root",
        /// Inside a system folder (`/etc/nginx`, `/usr/local/x`, `/dev/sda`).
        System => "system",
        /// The root, a top-level system folder, a temp folder itself, or the
        /// folder of all homes (`/`, `/etc`, `/tmp`, `/home`).
        SystemRoot => "system-root",
        /// Anywhere else: another absolute folder, or above the project.
        Elsewhere => "elsewhere",
        /// Not known before the action runs.
        Unknown => "unknown",
    }
}

/// One thing an action does to one target.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Effect {
    pub kind: EffectKind,
    /// The target as the analysis reads it (normalised; relative paths
    /// are inside the project).
    pub target: String,
    pub zone: Zone,
}

/// Top-level folders that hold system data besides the ones no project
/// can be in ([`super::folder::SYSTEM_FOLDERS`]): a service's files.
const MORE_SYSTEM_FOLDERS: [&str; 3] = ["srv", "snap", "nix"];
/// Folders that hold every user's home.
const HOMES: [&str; 2] = ["home", "users"];
/// Devices writing to which changes nothing.
const HARMLESS_DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
];

/// Where `target` (a normalised path as the analysis reports it) is.
pub fn zone_of(target: &str) -> Zone {
    if let Some(rest) = TEMP_VARIABLES.iter().find_map(|variable| {
        target.strip_prefix(variable).filter(|rest| rest.is_empty() || rest.starts_with('/'))
    }) {
        // `$TMPDIR/x` is in the temp folder; `$TMPDIR/../x` anywhere.
        return if rest.split('/').any(|segment| segment == "..") || is_unknown(rest) {
            Zone::Unknown
        } else {
            Zone::Temp
        };
    }
    if is_unknown(target) {
        return Zone::Unknown;
    }
    let segments: Vec<String> =
        target.split('/').filter(|s| !s.is_empty()).map(str::to_lowercase).collect();
    let everything_after = |from: usize| segments.iter().skip(from).all(|s| matches_every_name(s));
    if target.starts_with('~') {
        return match (segments.get(1).map(String::as_str), segments.len()) {
            // `~/..` is the folder of all homes, `~/../bob` another home.
            (Some(".."), 2) => Zone::SystemRoot,
            (Some(".."), _) if everything_after(3) => Zone::HomeRoot,
            (Some(".."), _) => Zone::Home,
            _ if everything_after(1) => Zone::HomeRoot,
            _ => Zone::Home,
        };
    }
    if is_remote(target) {
        return Zone::Elsewhere;
    }
    if target.starts_with('/') {
        if let Some(after) = temp_root_length(&segments) {
            return if segments.len() == after { Zone::SystemRoot } else { Zone::Temp };
        }
        let Some(first) = segments.first() else { return Zone::SystemRoot };
        if everything_after(0) {
            return Zone::SystemRoot;
        }
        if HOMES.contains(&first.as_str()) {
            return match segments.len() {
                1 => Zone::SystemRoot,
                _ if everything_after(1) => Zone::SystemRoot,
                _ if everything_after(2) => Zone::HomeRoot,
                _ => Zone::Home,
            };
        }
        if super::folder::SYSTEM_FOLDERS.iter().any(|folder| folder.eq_ignore_ascii_case(first))
            || MORE_SYSTEM_FOLDERS.contains(&first.as_str())
        {
            return if everything_after(1) { Zone::SystemRoot } else { Zone::System };
        }
        return Zone::Elsewhere;
    }
    if segments.first().is_some_and(|s| s == "..") {
        return Zone::Elsewhere;
    }
    if everything_after(0) { Zone::ProjectRoot } else { Zone::Project }
}

/// A value the shell only knows when the action runs. (The temp folder's
/// variable is known to name a temp folder: see [`TEMP_VARIABLES`].)
fn is_unknown(target: &str) -> bool {
    target.is_empty() || target.contains(['$', '…']) || target.contains("{}")
}

/// Variables that name the temp folder, as the analysis writes an unknown
/// variable (lower case, `$name`).
const TEMP_VARIABLES: [&str; 4] = ["$tmpdir", "$tmp", "$temp", "$runner_temp"];

/// A place on another machine or service: `host:path`, `s3://bucket`.
fn is_remote(target: &str) -> bool {
    // One letter before the colon is a Windows drive, not a host.
    target.contains("://")
        || target.split_once(':').is_some_and(|(host, _)| {
            host.len() > 1 && !host.contains('/') && !target.starts_with(['/', '~'])
        })
}

/// A path segment that names every entry of its folder (`*`, `.*`, `**`).
fn matches_every_name(segment: &str) -> bool {
    !segment.is_empty()
        && segment.chars().all(|c| matches!(c, '*' | '?' | '.' | '[' | ']' | '!' | '^'))
}

/// How many leading segments name a temp folder, if `segments` is in one.
fn temp_root_length(segments: &[String]) -> Option<usize> {
    let starts = |prefix: &[&str]| {
        segments.len() >= prefix.len()
            && segments.iter().zip(prefix).all(|(s, p)| p == &"*" || s == p)
    };
    let roots: [&[&str]; 7] = [
        &["tmp"],
        &["var", "tmp"],
        &["private", "tmp"],
        &["private", "var", "tmp"],
        &["dev", "shm"],
        &["users", "*", "appdata", "local", "temp"],
        &["*", "users", "*", "appdata", "local", "temp"],
    ];
    // A six-segment root starts with a drive letter (`/c/Users/…`).
    roots
        .iter()
        .find(|root| {
            starts(root)
                && (root.len() != 6 || segments.first().is_some_and(|drive| drive.len() == 1))
        })
        .map(|root| root.len())
}

/// Every effect of `analysis`'s commands, added to those its walk found
/// (redirections), each placed in its zone.
pub(super) fn find(analysis: &mut Analysis) {
    let mut found: Vec<(EffectKind, String)> =
        analysis.effects.drain(..).map(|effect| (effect.kind, effect.target)).collect();
    // A command that only prints its help does nothing else.
    for command in analysis.commands.iter().filter(|command| command.invocation == Invocation::Acts)
    {
        of_command(command, &mut found);
    }
    let mut effects: Vec<Effect> = found
        .into_iter()
        .filter(|(_, target)| {
            !HARMLESS_DEVICES.contains(&target.as_str()) && !target.starts_with("/dev/fd/")
        })
        .map(|(kind, target)| Effect { kind, zone: zone_of(&target), target })
        .collect();
    effects.sort();
    effects.dedup();
    // What is written over is written: `write:` rules (start-up files,
    // keys, histories) see `truncate -s 0 ~/.bash_history` as they see
    // `> ~/.bash_history`.
    for effect in effects.iter().filter(|effect| effect.kind == EffectKind::Overwrite) {
        if !analysis.writes.contains(&effect.target) {
            analysis.writes.push(effect.target.clone());
        }
    }
    analysis.effects = effects;
}

/// What one command does, by its program's grammar.
fn of_command(command: &Command, found: &mut Vec<(EffectKind, String)>) {
    let positionals = &command.positionals;
    let mut each = |kind: EffectKind, targets: &[String]| {
        found.extend(targets.iter().map(|target| (kind, target.clone())));
        // Arguments appended at run time (`xargs rm`) are targets too.
        if command.has_unknown_arguments() && targets.is_empty() {
            found.push((kind, RUN_TIME_VALUE.to_owned()));
        }
    };
    match command.program.as_str() {
        // rimraf and del-cli are npm's `rm -rf`.
        "rm" | "unlink" | "rmdir" | "shred" | "srm" | "wipe" | "trash" | "trash-put" | "rimraf"
        | "del-cli" => each(EffectKind::Delete, positionals),
        // GLib's file tool: `gio remove`, `gio trash`.
        "gio" if matches!(positionals.first().map(String::as_str), Some("remove" | "trash")) => {
            each(EffectKind::Delete, positionals.get(1..).unwrap_or_default())
        }
        "mv" => {
            let moved = sources_and_destination(command);
            let moved_away: Vec<String> = moved
                .sources
                .into_iter()
                .filter(|source| !stays_in_place(source, &moved.landed))
                .collect();
            each(EffectKind::Delete, &moved_away);
        }
        // What a copy, move or link lands on is written over (`outputs`,
        // below): a link replaces what had its name (`ln -sf /tmp/x
        // ~/bin/git`); a remote copy lands like a local one.
        "rsync" => {
            let copied = sources_and_destination(command);
            if command.flags.iter().any(|f| f.starts_with("--del")) {
                each(EffectKind::Delete, &copied.landed);
            }
            if command.flags.iter().any(|f| f == "--remove-source-files") {
                each(EffectKind::Delete, &copied.sources);
            }
        }
        "truncate" => {
            each(EffectKind::Overwrite, &operands(command, &["-s", "--size", "-r", "--reference"]))
        }
        "tee" if !command.flags.iter().any(|f| f == "-a" || f == "--append") => {
            each(EffectKind::Overwrite, positionals)
        }
        "dd" => {
            let targets: Vec<String> = positionals
                .iter()
                .filter_map(|p| p.strip_prefix("of="))
                .map(normalize_path)
                .collect();
            each(EffectKind::Overwrite, &targets);
        }
        "chmod" | "chown" | "chgrp" => {
            let by_reference = command.flags.iter().any(|f| f.starts_with("--reference"));
            // `chmod -w f`: a mode that looks like an option is read as
            // one, so the first operand is already a target.
            let mode_given_as_flag = command.program == "chmod"
                && command.argv.iter().skip(1).any(|w| is_symbolic_mode(w));
            let targets = if by_reference || mode_given_as_flag {
                positionals.clone()
            } else {
                positionals.iter().skip(1).cloned().collect()
            };
            each(EffectKind::Permissions, &targets);
            let mode = if by_reference {
                None
            } else if mode_given_as_flag {
                // `-w`, `-rx`: a removal, which opens nothing.
                Some("-")
            } else {
                positionals.first().map(String::as_str)
            };
            if command.program == "chmod" && mode.is_none_or(opens_to_others) {
                each(EffectKind::Expose, &opened(command, &targets));
            }
        }
        // `chattr +i f`, `chattr -i f`, `chattr =ai f`: every operand but
        // the attribute changes is a target.
        "chattr" => {
            let targets: Vec<String> = operands(command, &["-v", "-p"])
                .into_iter()
                .filter(|word| !word.starts_with(['+', '=']))
                .collect();
            each(EffectKind::Permissions, &targets);
        }
        "setfacl" => {
            let targets = operands(
                command,
                &[
                    "-m",
                    "-M",
                    "-x",
                    "-X",
                    "--modify",
                    "--modify-file",
                    "--remove",
                    "--remove-file",
                    "--set",
                    "--set-file",
                ],
            );
            each(EffectKind::Permissions, &targets);
            if acl_grants(command) {
                each(EffectKind::Expose, &opened(command, &targets));
            }
        }
        program if formats_a_disk(program) => {
            // parted, sfdisk and the like take commands after the device.
            let targets: Vec<String> = if matches!(program, "parted" | "sgdisk" | "sfdisk") {
                positionals.iter().take(1).cloned().collect()
            } else {
                positionals
                    .iter()
                    .filter(|p| !p.chars().all(|c| c.is_ascii_digit()))
                    .cloned()
                    .collect()
            };
            each(EffectKind::Format, &targets)
        }
        "git" => found.extend(
            super::discards::discarded(command)
                .into_iter()
                .map(|target| (EffectKind::Discard, target)),
        ),
        // Remote stores' own removals: Azure's copy tool, HDFS's shell
        // (`hdfs dfs -rm -r /data`, `hadoop fs -rm`, `-rmdir`, `-rmr`).
        "azcopy" if matches!(positionals.first().map(String::as_str), Some("rm" | "remove")) => {
            each(EffectKind::Delete, positionals.get(1..).unwrap_or_default())
        }
        "hdfs" | "hadoop"
            if matches!(positionals.first().map(String::as_str), Some("dfs" | "fs"))
                && command.written_flags.iter().any(|f| f.starts_with("-rm")) =>
        {
            each(EffectKind::Delete, positionals.get(1..).unwrap_or_default())
        }
        _ => {}
    }
    if deletes_objects_named_at_run_time(command) {
        found.push((EffectKind::Delete, RUN_TIME_VALUE.to_owned()));
    }
    found.extend(collected(command).into_iter().map(|folder| (EffectKind::Collect, folder)));
    // What a program writes by its own options and operands (`sort -o`,
    // `wget -O`, `gzip FILE`) is written over, unless it appends. A
    // harness's file-writing tool is judged as the write it reports.
    if !outputs::appends(command) && !code::is_file_writing_tool(&command.program) {
        let written = outputs::files_written_by(command);
        found.extend(written.into_iter().map(|target| (EffectKind::Overwrite, target)));
    }
}

/// What a command reads whole, every file below it ([`EffectKind::Collect`]):
/// the operands of a recursive search (`grep -r`, `rgrep`, and `rg`, `ag`,
/// `ack` and a harness's `search_files`, which recurse by default), of an
/// archive made (`tar -c`, after
/// its `-C`; `zip -r`), of a recursive copy or sync (`cp -r`/`-a`, `rsync
/// -r`/`-a`, `scp -r`). A search given no folder searches the project.
fn collected(command: &Command) -> Vec<String> {
    let has = |flags: &[&str]| command.flags.iter().any(|flag| flags.contains(&flag.as_str()));
    match command.program.as_str() {
        "grep" | "egrep" | "fgrep" | "zgrep"
            if has(&["-r", "-R", "--recursive", "--dereference-recursive"]) =>
        {
            command.positionals.clone()
        }
        // A harness's own search tool (Claude Code's `Grep`) is ripgrep.
        "rgrep" | "rg" | "ag" | "ack" | "ack-grep" | "search_files" => command.positionals.clone(),
        "tar" | "bsdtar" | "gtar" => {
            let parsed = super::options::tar(command.argv.get(1..).unwrap_or_default());
            if !parsed.has("-c") {
                return Vec::new();
            }
            let folder = parsed.value("-C").map(normalize_path);
            parsed
                .positionals
                .iter()
                .map(|source| match &folder {
                    Some(folder) if !source.starts_with(['/', '~', '$']) => {
                        normalize_path(&format!("{folder}/{source}"))
                    }
                    _ => normalize_path(source),
                })
                .collect()
        }
        // zip's clusters often hold a level (`-qr9`), which is no flag of
        // its own, so the letters are looked for as written.
        "zip"
            if command.written_flags.iter().any(|flag| {
                flag == "--recurse-paths" || !flag.starts_with("--") && flag.contains(['r', 'R'])
            }) =>
        {
            command.positionals.iter().skip(1).cloned().collect()
        }
        "cp" | "rsync" | "scp" if has(&["-r", "-R", "-a", "--archive", "--recursive"]) => {
            sources_and_destination(command).sources
        }
        _ => Vec::new(),
    }
}

/// A tool that names what it does by its first words (`docker`,
/// `kubectl`, `aws`…: [`Command::action_words`]) deleting objects it
/// names, one of them known only when it runs: `docker rm -f $(docker ps
/// -aq)`, `docker ps -q | xargs docker rmi`, `aws ec2
/// terminate-instances --instance-ids $(…)`. Containers, images and cloud
/// resources are not files, so a deletion of a known one is no effect
/// (policies name those commands); of an unknown one it is a deletion of
/// an unknown target. A package manager's removal (`npm uninstall $PKG`)
/// changes the project's dependencies, not objects elsewhere.
fn deletes_objects_named_at_run_time(command: &Command) -> bool {
    let Some((depth, _)) = command.action_words() else { return false };
    if matches!(command.program.as_str(), "npm" | "cargo") {
        return false;
    }
    // The verb is one of the action words or the word after them
    // (`docker container rm`, `gcloud compute instances delete`).
    let Some(verb) = command.positionals.iter().take(depth + 1).find(|word| deletes_by_name(word))
    else {
        return false;
    };
    let mut after_verb = command.argv.iter().skip_while(|word| *word != verb).skip(1);
    after_verb.any(|word| is_unknown(word))
}

/// A tool's command word that deletes what it is given: `rm`, `delete`,
/// `destroy`…, aws's `delete-table` and `terminate-instances`, heroku's
/// `apps:destroy`.
fn deletes_by_name(word: &str) -> bool {
    const VERBS: [&str; 11] = [
        "rm",
        "rmi",
        "del",
        "delete",
        "destroy",
        "remove",
        "purge",
        "drop",
        "rb",
        "uninstall",
        "terminate",
    ];
    let verb = word.rsplit(':').next().unwrap_or(word);
    let stem = verb.split_once('-').map_or(verb, |(stem, _)| stem);
    VERBS.contains(&verb) || VERBS.contains(&stem)
}

/// Every entry of `folder`, as a target (`~/*` is everything in the
/// home): what an archive extracted into it writes, what a recursive
/// permissions change opens, what a listing of it pipes on.
pub(super) fn entries_of(folder: &str) -> String {
    normalize_path(&format!("{folder}/*"))
}

/// A symbolic mode that starts with `-` (`-w`, `-x`, `-rwx`, `-s`), which
/// chmod reads as a mode although it looks like an option.
fn is_symbolic_mode(word: &str) -> bool {
    word.strip_prefix('-').is_some_and(|rest| {
        !rest.is_empty() && rest.chars().all(|c| matches!(c, 'r' | 'w' | 'x' | 'X' | 's' | 't'))
    })
}

/// Whether a chmod mode gives the group or others any access: an octal
/// mode with a group or other digit (`644`, `7` is `0007`), a symbolic
/// clause that adds or sets permissions for them (`o+r`, `g=u`, `+x`,
/// which is everyone's), or a mode not known in advance.
fn opens_to_others(mode: &str) -> bool {
    if is_unknown(mode) {
        return true;
    }
    if !mode.is_empty() && mode.chars().all(|c| c.is_ascii_digit()) {
        let group_and_other = mode.chars().rev().take(2);
        return group_and_other.into_iter().any(|digit| digit != '0');
    }
    mode.split(',').any(|clause| {
        let who: String = clause.chars().take_while(|c| "ugoa".contains(*c)).collect();
        let others = who.is_empty() || who.contains(['g', 'o', 'a']);
        let actions = clause.get(who.len()..).unwrap_or_default();
        // `+r-w`, `=rx`: each operator with the permissions after it.
        let mut granting = false;
        let mut grants = false;
        for c in actions.chars() {
            match c {
                '+' | '=' => granting = true,
                '-' => granting = false,
                _ => grants |= granting,
            }
        }
        others && grants
    })
}

/// Whether `setfacl` grants someone other than the owner access: an entry
/// of `-m`/`--modify`/`--set` for a named user, a group or others with
/// any permission (`u:bob:r`, `g::rx`, `o::r`); entries from a file
/// (`-M`, `--set-file`) are not known in advance.
fn acl_grants(command: &Command) -> bool {
    let mut words = command.argv.iter().skip(1);
    let mut specs = Vec::new();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-m" | "--modify" | "--set" => specs.extend(words.next().cloned()),
            "-M" | "--modify-file" | "--set-file" => return true,
            _ => {
                if let Some(spec) = word
                    .strip_prefix("--modify=")
                    .or_else(|| word.strip_prefix("--set="))
                    .or_else(|| word.strip_prefix("-m").filter(|spec| !spec.is_empty()))
                {
                    specs.push(spec.to_owned());
                } else if word.starts_with("--modify-file=") || word.starts_with("--set-file=") {
                    return true;
                }
            }
        }
    }
    specs.iter().flat_map(|spec| spec.split(',')).any(|entry| {
        let entry =
            entry.strip_prefix("default:").or_else(|| entry.strip_prefix("d:")).unwrap_or(entry);
        let parts: Vec<&str> = entry.split(':').collect();
        let (kind, qualifier, permissions) = match parts.as_slice() {
            [kind, qualifier, permissions] => (*kind, *qualifier, *permissions),
            [kind, permissions] => (*kind, "", *permissions),
            _ => return is_unknown(entry),
        };
        let someone_else = match kind {
            "u" | "user" => !qualifier.is_empty(),
            "g" | "group" | "o" | "other" => true,
            _ => false,
        };
        someone_else
            && (is_unknown(permissions) || permissions.chars().any(|c| c != '-' && c != '0'))
    })
}

/// What a permissions change opens: its targets, and with `-R` what the
/// folders hold.
fn opened(command: &Command, targets: &[String]) -> Vec<String> {
    let recursive = command.flags.iter().any(|flag| flag == "-R" || flag == "--recursive");
    let inside = targets.iter().filter(|_| recursive).map(|target| entries_of(target));
    targets.iter().cloned().chain(inside).collect()
}

/// Programs that write a file system, partition table or signature over
/// what they are given, or discard its blocks (Windows' `format` too).
fn formats_a_disk(program: &str) -> bool {
    program.starts_with("mkfs.")
        || matches!(
            program,
            "mkfs"
                | "mke2fs"
                | "mkswap"
                | "mkdosfs"
                | "mkntfs"
                | "wipefs"
                | "blkdiscard"
                | "sgdisk"
                | "sfdisk"
                | "fdisk"
                | "cfdisk"
                | "parted"
                | "format"
        )
}

/// Whether moving `source` to `destination` keeps it where its owner
/// will find it: within the same project, temp folder or home (a trash
/// folder included), and not a home or system root, nor a home's hidden
/// configuration (`~/.ssh/key`, `~/.config/app`), which programs read
/// from where it was.
fn stays_in_place(source: &str, destination: &[String]) -> bool {
    let zone = zone_of(source);
    let hidden = |path: &str| {
        path.split('/').skip(1).any(|segment| {
            segment.starts_with('.')
                && !TRASH_FOLDERS.contains(&segment)
                && segment != "."
                && segment != ".."
        })
    };
    matches!(zone, Zone::Project | Zone::Temp | Zone::Home)
        && !(zone == Zone::Home && (hidden(source) || is_top_of_home(source)))
        && destination.iter().all(|to| {
            !to.split('/').any(|segment| segment == "..")
                && (zone_of(to) == zone || zone == Zone::Home && zone_of(to) == Zone::HomeRoot)
        })
}

/// A folder or file right in a home (`~/Documents`, `/Users/u/x`), which
/// what the user keeps is found through.
fn is_top_of_home(path: &str) -> bool {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if path.starts_with('~') { segments.len() == 2 } else { segments.len() == 3 }
}

/// Hidden folders that are where moved things wait to be deleted by hand.
const TRASH_FOLDERS: [&str; 2] = [".Trash", ".local"];

/// The words of `command` that are neither options nor the values of
/// the options in `taking_value`, normalised.
fn operands(command: &Command, taking_value: &[&str]) -> Vec<String> {
    let mut operands = Vec::new();
    let mut words = command.argv.iter().skip(1);
    let mut options_done = false;
    while let Some(word) = words.next() {
        if options_done || !word.starts_with('-') || word == "-" {
            operands.push(normalize_path(word));
        } else if word == "--" {
            options_done = true;
        } else if taking_value.contains(&word.as_str()) {
            words.next();
        }
    }
    operands
}

/// A copy's, a move's or a link's sources and what they land on.
pub(super) struct Transfer {
    pub sources: Vec<String>,
    /// Each source under its own name in a `-t` folder; otherwise the
    /// last operand (a file, or a folder they land in), or a destination
    /// appended at run time.
    pub landed: Vec<String>,
    /// `landed` names each path a source lands on (`-t DIR`), not a
    /// destination that may be a folder.
    pub exact: bool,
}

/// A copy's, a move's or a link's sources and destination, by its
/// program's grammar: `-t DIR` (`--target-directory`) names a folder each
/// source lands in under its own name, otherwise the last operand is the
/// destination. A destination appended at run time is unknown.
pub(super) fn sources_and_destination(command: &Command) -> Transfer {
    let Some(grammar) = super::options::of(&command.program, None) else {
        return Transfer { sources: Vec::new(), landed: Vec::new(), exact: false };
    };
    let parsed = grammar.parse(command.argv.get(1..).unwrap_or_default());
    let mut sources: Vec<String> = parsed.positionals.iter().map(|p| normalize_path(p)).collect();
    if let Some(folder) = parsed.value("-t").map(normalize_path) {
        let landed = sources
            .iter()
            .map(|source| {
                normalize_path(&format!("{folder}/{}", source.rsplit('/').next().unwrap_or(source)))
            })
            .collect();
        return Transfer { sources, landed, exact: true };
    }
    if command.has_unknown_arguments() {
        // `xargs mv -t DIR`'s sources or `xargs cp A`'s destination come
        // at run time.
        return Transfer { sources, landed: vec![RUN_TIME_VALUE.to_owned()], exact: false };
    }
    let landed = if sources.len() >= 2 { sources.pop().into_iter().collect() } else { Vec::new() };
    Transfer { sources, landed, exact: false }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{WorkingFolder, analyze_in};

    #[test]
    fn zones_place_a_path_by_where_an_agent_may_work() {
        let cases = [
            ("build", Zone::Project),
            ("src/main.rs", Zone::Project),
            (".", Zone::ProjectRoot),
            ("*", Zone::ProjectRoot),
            (".*", Zone::ProjectRoot),
            ("/tmp/build", Zone::Temp),
            ("/tmp/*", Zone::Temp),
            ("/var/tmp/cache", Zone::Temp),
            ("/private/var/tmp/x", Zone::Temp),
            ("/Users/u/AppData/Local/Temp/x", Zone::Temp),
            ("/c/Users/u/AppData/Local/Temp/x", Zone::Temp),
            ("/tmp", Zone::SystemRoot),
            ("/tmp-backup/build", Zone::Elsewhere),
            ("/c/Users/u/AppData/Local/Tempx/y", Zone::Elsewhere),
            ("~", Zone::HomeRoot),
            ("~/*", Zone::HomeRoot),
            ("~/Documents", Zone::Home),
            ("~/..", Zone::SystemRoot),
            ("~/../bob", Zone::HomeRoot),
            ("user@host:/var/www", Zone::Elsewhere),
            ("s3://bucket/key", Zone::Elsewhere),
            ("~someone/escape", Zone::Home),
            ("/home/alice", Zone::HomeRoot),
            ("/Users/bob/Documents", Zone::Home),
            ("/home", Zone::SystemRoot),
            ("/", Zone::SystemRoot),
            ("/*", Zone::SystemRoot),
            ("/etc", Zone::SystemRoot),
            ("/etc/nginx", Zone::System),
            ("/dev/sda", Zone::System),
            ("/some/path", Zone::Elsewhere),
            ("../other", Zone::Elsewhere),
            ("$tmpdir/build", Zone::Temp),
            ("$tmpdir/../etc", Zone::Unknown),
            ("$somewhere/build", Zone::Unknown),
            ("C:UsersuAppData", Zone::Project),
            ("$(…)", Zone::Unknown),
            ("{}", Zone::Unknown),
        ];
        for (target, zone) in cases {
            assert_eq!(zone_of(target), zone, "{target}");
        }
    }

    fn effects(line: &str) -> Vec<(EffectKind, String, Zone)> {
        let analysis = analyze_in(line, &WorkingFolder::Project).unwrap();
        analysis.effects.into_iter().map(|e| (e.kind, e.target, e.zone)).collect()
    }

    fn has(line: &str, kind: EffectKind, zone: Zone) -> bool {
        effects(line).iter().any(|(k, _, z)| *k == kind && *z == zone)
    }

    #[test]
    fn a_move_deletes_its_source_and_overwrites_its_destination() {
        assert!(has("mv ~/Documents /tmp/x", EffectKind::Delete, Zone::Home));
        assert!(has("mv ~/.config/app/settings.json ~/Documents/", EffectKind::Delete, Zone::Home));
        // Within one home, a trash folder included, nothing is lost.
        assert!(!has("mv ~/Documents/a.txt ~/.Trash/", EffectKind::Delete, Zone::Home));
        assert!(!has(
            "mv ~/Documents/Personal ~/Documents/_archived/",
            EffectKind::Delete,
            Zone::Home
        ));
        // A home's own folders are what the user finds things through.
        assert!(has("mv ~/Documents ~/Docs", EffectKind::Delete, Zone::Home));
        assert!(has("mv ~/Documents/a ~/Documents/../../srv/x", EffectKind::Delete, Zone::Home));
        assert!(has("mv /etc ~/.Trash/", EffectKind::Delete, Zone::SystemRoot));
        assert!(has("mv -t /etc a.md", EffectKind::Overwrite, Zone::System));
        assert!(has("mv --target-directory=/etc a.md", EffectKind::Overwrite, Zone::System));
        assert!(has("mv a.md ~", EffectKind::Overwrite, Zone::HomeRoot));
        let inside = effects("mv src/a.rs src/b.rs");
        assert!(inside.iter().all(|(_, _, zone)| *zone == Zone::Project), "{inside:?}");
    }

    #[test]
    fn deletions_are_found_whatever_program_does_them() {
        assert!(has("rm -rf /some/path", EffectKind::Delete, Zone::Elsewhere));
        assert!(has("find ~ -delete", EffectKind::Delete, Zone::HomeRoot));
        assert!(has("find ~ -name '*.log' -delete", EffectKind::Delete, Zone::Home));
        assert!(has("find . -name '*.pyc' -delete", EffectKind::Delete, Zone::Project));
        assert!(has("find . -mtime +7 -delete", EffectKind::Delete, Zone::Project));
        assert!(has("find . -type f -delete", EffectKind::Delete, Zone::ProjectRoot));
        assert!(has("find . -name '*' -delete", EffectKind::Delete, Zone::ProjectRoot));
        assert!(has("find build -name '*.o' -delete", EffectKind::Delete, Zone::Project));
        assert!(has("rsync -a --delete dist/ ~/site/", EffectKind::Delete, Zone::Home));
        assert!(has(
            "rsync -a --remove-source-files ~/photos/ backup/",
            EffectKind::Delete,
            Zone::Home
        ));
        assert!(has("unlink ~/.profile", EffectKind::Delete, Zone::Home));
        assert!(has("rm -rf \"$SOMEWHERE\"/cache", EffectKind::Delete, Zone::Unknown));
        assert!(has("ls | xargs rm -f", EffectKind::Delete, Zone::Unknown));
        assert!(!has("rm -rf target", EffectKind::Delete, Zone::Unknown));
    }

    #[test]
    fn a_tool_deleting_objects_it_names_at_run_time_deletes_an_unknown_target() {
        let deletes_unknown = |line: &str| has(line, EffectKind::Delete, Zone::Unknown);
        for line in [
            "docker rm -f $(docker ps -aq)",
            "docker ps -aq | xargs docker rm -f",
            "docker container rm \"$CID\"",
            "podman rmi -f $(podman images -q)",
            "aws ec2 terminate-instances --instance-ids $(cat ids)",
            "gcloud compute instances delete $(gcloud compute instances list --format=value)",
            "heroku apps:destroy $APP",
        ] {
            assert!(deletes_unknown(line), "{line}");
        }
        // Known names are the policy's to judge; other commands, other
        // words and package managers delete nothing unknown.
        for line in [
            "docker rm -f web",
            "docker stop $(docker ps -q)",
            "docker logs $(docker ps -lq)",
            "docker run --rm $IMAGE",
            "docker exec $(docker ps -q) ls",
            "npm uninstall $PKG",
        ] {
            assert!(!deletes_unknown(line), "{line}");
        }
        // Remote stores' removals delete what they name.
        assert!(has("hdfs dfs -rm -r /data", EffectKind::Delete, Zone::Elsewhere));
        assert!(has(
            "hadoop fs -rm -r -skipTrash /user/me/out",
            EffectKind::Delete,
            Zone::Elsewhere
        ));
        assert!(has(
            "azcopy rm https://a.blob.core.windows.net/c --recursive",
            EffectKind::Delete,
            Zone::Elsewhere
        ));
        assert!(!has("hdfs dfs -ls /data", EffectKind::Delete, Zone::Elsewhere));
    }

    #[test]
    fn searching_archiving_or_copying_a_folder_whole_collects_it() {
        for (line, zone) in [
            ("grep -r AKIA ~", Zone::HomeRoot),
            ("grep --recursive -l token /home/alice", Zone::HomeRoot),
            ("rg -uuu 'BEGIN RSA PRIVATE KEY' /", Zone::SystemRoot),
            ("tar czf /tmp/h.tgz ~", Zone::HomeRoot),
            ("tar -czf x.tgz -C ~ .", Zone::HomeRoot),
            ("zip -qr /tmp/all.zip ~", Zone::HomeRoot),
            ("zip -qr9 /tmp/all.zip ~ -x '*/node_modules/*'", Zone::HomeRoot),
            ("cp -a ~ /tmp/copy", Zone::HomeRoot),
            ("rsync -a ~/ host:/backups/", Zone::HomeRoot),
            ("grep -rn TODO src", Zone::Project),
            ("search_files AKIA /home/dev", Zone::HomeRoot),
        ] {
            assert!(has(line, EffectKind::Collect, zone), "{line}: {:?}", effects(line));
        }
        // Not recursive, only names, extracting, or a search of the project.
        for line in [
            "grep AKIA ~/.bashrc",
            "ls -R ~",
            "tar xzf h.tgz -C ~",
            "tar tzf h.tgz",
            "zip /tmp/one.zip ~/notes.txt",
            "cp ~/notes.txt .",
            "rg fixme",
        ] {
            assert!(
                !effects(line).iter().any(|(kind, _, _)| *kind == EffectKind::Collect),
                "{line}: {:?}",
                effects(line)
            );
        }
    }

    #[test]
    fn overwrites_and_permission_changes_are_found() {
        assert!(has("echo x > /etc/hosts", EffectKind::Overwrite, Zone::System));
        assert!(has("truncate -s 0 ~/.ssh/known_hosts", EffectKind::Overwrite, Zone::Home));
        assert!(has("cp /dev/null ~/.bash_history", EffectKind::Overwrite, Zone::Home));
        assert!(has("setfacl -R -m u:app:rwx /etc", EffectKind::Permissions, Zone::SystemRoot));
        assert!(has("chmod -R 777 ~", EffectKind::Permissions, Zone::HomeRoot));
        // Appending is not overwriting; the null device is nothing.
        assert!(effects("echo x >> /var/log/app.log").is_empty());
        assert!(effects("make > /dev/null 2>&1").is_empty());
        // The mode is not a target.
        assert!(
            effects("chmod 755 scripts/build.sh")
                .iter()
                .all(|(_, target, _)| target == "scripts/build.sh")
        );
        assert!(
            effects("truncate -s 0 logs/dev.log").iter().all(|(_, _, zone)| *zone == Zone::Project)
        );
    }

    #[test]
    fn what_a_program_writes_by_its_own_options_is_written_over() {
        for (line, zone) in [
            ("sort -uo /etc/hosts data.txt", Zone::System),
            ("uniq -c data.txt /etc/hosts", Zone::System),
            ("wget -qO /usr/local/bin/tool https://x.example/t", Zone::System),
            ("wget -P /usr/local/bin https://x.example/t", Zone::System),
            ("curl -sSLo /usr/local/bin/tool https://x.example/t", Zone::System),
            ("curl --output-dir=/usr/local/bin -O https://x.example/t", Zone::System),
            ("openssl enc -d -in x.enc -out /etc/app.conf", Zone::System),
            ("iconv -f latin1 -t utf-8 -o /etc/motd notes.txt", Zone::System),
            ("yq e -i '.a = 1' /etc/app.yml", Zone::System),
            ("patch /etc/hosts fix.diff", Zone::System),
            ("gzip -r /etc", Zone::SystemRoot),
            ("zstd --rm /var/lib/app.db", Zone::System),
            ("dos2unix /etc/hosts", Zone::System),
            ("sponge /etc/hosts", Zone::System),
            ("tar -czf /srv/backup.tgz src", Zone::System),
            ("7z x a.7z -o/opt/app", Zone::System),
            ("gcc -o /usr/local/bin/tool tool.c", Zone::System),
            ("sort -o \"$OUT\" data.txt", Zone::Unknown),
            ("ssh-keygen -R github.com", Zone::Home),
            ("ssh-keygen -f /etc/ssh/ssh_known_hosts -R github.com", Zone::System),
        ] {
            assert!(has(line, EffectKind::Overwrite, zone), "{line}: {:?}", effects(line));
        }
        // To stdout, keeping the original, appending, or in the project:
        // nothing is lost outside it.
        for line in [
            "wget -qO- https://x.example/t",
            "gzip -k /var/log/app.log",
            "gzip -dc /var/log/app.log.gz",
            "zstd /var/lib/app.db",
            "sponge -a /var/log/app.log",
            "sort -o sorted.txt data.txt",
            "gcc -O2 -o build/tool tool.c",
            "patch -p1 -i fix.diff",
            "curl -o out.json https://x.example/t",
        ] {
            let found = effects(line);
            assert!(found.iter().all(|(_, _, zone)| *zone == Zone::Project), "{line}: {found:?}");
        }
    }

    #[test]
    fn a_sync_a_link_and_a_remote_copy_overwrite_where_they_land() {
        assert!(has("rsync -a x/ /usr/local/bin/", EffectKind::Overwrite, Zone::System));
        assert!(has("rsync -a x/ ~/", EffectKind::Overwrite, Zone::HomeRoot));
        assert!(has("rsync -a dist/ deploy@web:/srv/app/", EffectKind::Overwrite, Zone::Elsewhere));
        assert!(has("ln -sf /tmp/x /usr/local/bin/git", EffectKind::Overwrite, Zone::System));
        assert!(has("ln -s -t /etc/nginx/sites-enabled site", EffectKind::Overwrite, Zone::System));
        assert!(has("scp host:x /usr/local/bin/y", EffectKind::Overwrite, Zone::System));
        // Inside the project each lands where it may.
        for line in ["rsync -a src/ backup/", "ln -s ../shared shared", "scp host:x out/"] {
            let found = effects(line);
            assert!(found.iter().all(|(_, _, zone)| *zone == Zone::Project), "{line}: {found:?}");
            assert!(!found.is_empty(), "{line}");
        }
    }

    #[test]
    fn extracting_writes_into_the_folder_and_attributes_are_permissions() {
        assert!(has("tar xf x.tar -C ~", EffectKind::Overwrite, Zone::HomeRoot));
        assert!(has(
            "tar --extract -f x.tar --directory=/",
            EffectKind::Overwrite,
            Zone::SystemRoot
        ));
        assert!(has("unzip x.zip -d ~", EffectKind::Overwrite, Zone::HomeRoot));
        assert!(effects("tar xf x.tar").is_empty());
        // Creating an archive writes the archive, where tar was started,
        // and reads what it holds whole, from its `-C` folder.
        assert_eq!(
            effects("tar cf x.tar -C ~ notes"),
            [
                (EffectKind::Overwrite, "x.tar".to_owned(), Zone::Project),
                (EffectKind::Collect, "~/notes".to_owned(), Zone::Home)
            ]
        );
        assert!(effects("unzip -l x.zip -d ~").is_empty());
        assert!(has("chattr -i /etc/passwd", EffectKind::Permissions, Zone::System));
        assert!(has("chattr +i /etc/passwd", EffectKind::Permissions, Zone::System));
        assert!(has("chmod -w ~", EffectKind::Permissions, Zone::HomeRoot));
        assert!(!has("chmod 755 ~/bin/tool", EffectKind::Permissions, Zone::HomeRoot));
    }
}

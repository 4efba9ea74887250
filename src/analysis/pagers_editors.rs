//! Pagers and editors that settings name (`PAGER`, `GIT_PAGER`,
//! `MANPAGER`, `EDITOR`, `VISUAL`, `GIT_EDITOR`, `GIT_SEQUENCE_EDITOR`,
//! `LESSOPEN`, git's `core.pager`, `pager.<cmd>`, `core.editor` and
//! `sequence.editor`, `man -P`): each is shell text, analysed as the
//! program that reads the setting runs it: a pager with that program's
//! output on its input, an editor (or `LESSOPEN`'s filter) with a file
//! name as its word, neither known here. What the text runs is matched
//! like any command (`GIT_PAGER='rm -rf ~' git log` deletes home).
//!
//! A setting that names a program other than one that shows or edits
//! text ([`SHOWS_OR_EDITS`]) is configuration that executes
//! ([`Fact::ConfigExecutes`]), which a human looks at: `GIT_PAGER=cat git
//! log` and `EDITOR='code --wait' git commit` are ordinary, `git -c
//! core.pager='sh -c id' log` is not.

use super::{Builder, Fact, executors, preview};

/// What the program reading a setting gives the one it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// A pager: the output, on its input.
    Pager,
    /// An editor: the file to edit, as its last word.
    Editor,
    /// `LESSOPEN`'s input filter: `%s` is the file (a leading `|` says
    /// the output is piped, `-` that standard input is filtered too).
    Filter,
}

/// Programs whose work, named as a pager or an editor, is showing or
/// editing text (and the ones that do nothing: `GIT_EDITOR=true`).
const SHOWS_OR_EDITS: [&str; 36] = [
    "cat",
    "less",
    "more",
    "most",
    "pg",
    "bat",
    "batcat",
    "delta",
    "diff-so-fancy",
    "diff-highlight",
    "riff",
    "lesspipe",
    "lesspipe.sh",
    "head",
    "tail",
    "col",
    "true",
    "false",
    ":",
    "vi",
    "vim",
    "nvim",
    "view",
    "vimdiff",
    "nano",
    "pico",
    "micro",
    "emacs",
    "emacsclient",
    "code",
    "code-insiders",
    "cursor",
    "subl",
    "mate",
    "hx",
    "kak",
];

/// Analyses `text`, named by the setting `how` for `role`.
pub(super) fn run(builder: &mut Builder, text: &str, role: Role, how: &str) {
    let direct = match role {
        Role::Pager => {
            let direct = builder.shell(text, Some(how));
            executors::runs_unseen_input(builder, &direct, how);
            direct
        }
        // `"$@"` is a word not known before the program runs.
        Role::Editor => builder.shell(&format!("{text} \"$@\""), Some(how)),
        Role::Filter => {
            let command = text.trim_start_matches(['|', '-']).replace("%s", "\"$@\"");
            builder.shell(&command, Some(how))
        }
    };
    let shows_or_edits = !direct.is_empty()
        && direct.iter().all(|&at| SHOWS_OR_EDITS.contains(&builder.get(at).program.as_str()));
    if !shows_or_edits {
        builder.fact(
            Fact::ConfigExecutes,
            format!("{how} names {}, which is no pager or editor", preview(text)),
        );
    }
}

/// A setting's role, by the environment variable's name (upper case).
pub(super) fn role_of_variable(name: &str) -> Option<Role> {
    match name {
        "PAGER" | "GIT_PAGER" | "MANPAGER" | "SYSTEMD_PAGER" | "PSQL_PAGER" => Some(Role::Pager),
        "EDITOR"
        | "VISUAL"
        | "GIT_EDITOR"
        | "GIT_SEQUENCE_EDITOR"
        | "SUDO_EDITOR"
        | "KUBE_EDITOR" => Some(Role::Editor),
        "LESSOPEN" | "LESSCLOSE" => Some(Role::Filter),
        _ => None,
    }
}

/// A git configuration key's role (lower case).
pub(super) fn role_of_git_key(key: &str) -> Option<Role> {
    match key {
        "core.pager" => Some(Role::Pager),
        _ if key.starts_with("pager.") => Some(Role::Pager),
        "core.editor" | "sequence.editor" => Some(Role::Editor),
        _ => None,
    }
}

/// Whether a git setting of a pager or an editor names no program: it is
/// empty, or `pager.<cmd>` is a boolean that turns the pager on or off.
pub(super) fn names_no_program(key: &str, value: &str) -> bool {
    let boolean = ["true", "false", "yes", "no", "on", "off", "1", "0"]
        .iter()
        .any(|word| value.trim().eq_ignore_ascii_case(word));
    value.trim().is_empty() || key.starts_with("pager.") && boolean
}

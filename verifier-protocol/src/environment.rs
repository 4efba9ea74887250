//! The environments child processes get in place of the dongle's own,
//! which may hold credentials (`SAFETY_DONGLE_STATE_PASSWORD`, adapter
//! tokens, cloud and API keys, `PGPASSWORD`): allowlists, so a credential
//! under a name nobody thought of is not passed on either.
//!
//! - [`for_programs`]: what a program needs to run at all (`PATH`, the
//!   home folder, the user, shell, locale, time zone, temporary folders,
//!   terminal type, and the variables Windows needs to start a process).
//!   A downstream MCP server gets this, plus what its entry names.
//! - [`for_reaching_humans`]: that, and what a desktop dialog, a
//!   notification or a user's bridge program needs to reach a person (the
//!   display, the session bus, the desktop's settings). The verifier gets
//!   this, and passes the same on to its `command` channel's program.

use std::ffi::{OsStr, OsString};

/// What any program needs to run, by name (`LC_*` too).
const FOR_PROGRAMS: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TERM",
    "XDG_RUNTIME_DIR",
    // Windows needs these to start a process and find the user's folders;
    // macOS its text encoding.
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "__CF_USER_TEXT_ENCODING",
];

/// What reaching a person on the desktop adds: X11, Wayland, the session
/// bus (notifications) and the settings GTK reads.
const FOR_REACHING_HUMANS: &[&str] = &[
    "DISPLAY",
    "XAUTHORITY",
    "WAYLAND_DISPLAY",
    "XDG_SESSION_TYPE",
    "XDG_CURRENT_DESKTOP",
    "XDG_DATA_DIRS",
    "XDG_DATA_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "DBUS_SESSION_BUS_ADDRESS",
    "GDK_BACKEND",
    "GTK_THEME",
];

/// The variables of `vars` a program is started with.
pub fn for_programs(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    keep(vars, &[FOR_PROGRAMS])
}

/// The variables of `vars` the verifier and its channel programs are
/// started with.
pub fn for_reaching_humans(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    keep(vars, &[FOR_PROGRAMS, FOR_REACHING_HUMANS])
}

fn keep(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    lists: &[&[&str]],
) -> Vec<(OsString, OsString)> {
    vars.into_iter().filter(|(name, _)| is_named(name, lists)).collect()
}

/// Whether `name` is on one of `lists` or is a locale category (`LC_ALL`,
/// `LC_MESSAGES`, ...).
fn is_named(name: &OsStr, lists: &[&[&str]]) -> bool {
    name.to_str().is_some_and(|name| {
        // Windows names are case-insensitive (`Path`, `SystemRoot`).
        let upper = name.to_ascii_uppercase();
        upper.starts_with("LC_") || lists.iter().any(|list| list.contains(&upper.as_str()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each variable, and whether programs and the verifier get it.
    const CASES: [(&str, bool, bool); 18] = [
        ("SAFETY_DONGLE_STATE_PASSWORD", false, false),
        ("PGPASSWORD", false, false),
        ("PGPASSFILE", false, false),
        ("AWS_SECRET_ACCESS_KEY", false, false),
        ("GITHUB_TOKEN", false, false),
        ("ANTHROPIC_API_KEY", false, false),
        ("SSH_AUTH_SOCK", false, false),
        ("LD_PRELOAD", false, false),
        ("MCPAQL_SAFETY_LOOP", false, false),
        ("DISPLAY", false, true),
        ("WAYLAND_DISPLAY", false, true),
        ("DBUS_SESSION_BUS_ADDRESS", false, true),
        ("XDG_RUNTIME_DIR", true, true),
        ("HOME", true, true),
        ("PATH", true, true),
        ("Path", true, true),
        ("LANG", true, true),
        ("LC_MESSAGES", true, true),
    ];

    #[test]
    fn credentials_are_never_passed_on_and_the_desktop_only_to_reach_humans() {
        let given =
            || CASES.iter().map(|(name, _, _)| (OsString::from(name), OsString::from("value")));
        let names = |kept: Vec<(OsString, OsString)>| {
            kept.into_iter().map(|(name, _)| name).collect::<Vec<_>>()
        };
        let (programs, humans) =
            (names(for_programs(given())), names(for_reaching_humans(given())));
        for (name, to_programs, to_humans) in CASES {
            assert_eq!(programs.contains(&OsString::from(name)), to_programs, "programs: {name}");
            assert_eq!(humans.contains(&OsString::from(name)), to_humans, "humans: {name}");
        }
    }
}

//! An OS-native dialog in this process, never a helper program whose
//! command line would carry the code: GTK 3 on Linux (`gtk`), rfd's
//! `MessageBoxW` on Windows and `NSAlert` on macOS (`system`). A dialog
//! that cannot be shown fails the channel before the request is announced,
//! so the next channel is tried.
//!
//! Each backend is told the message as it must be to show it literally
//! ([`dialog_text`], tested for every backend on every platform): GTK gets
//! it as the argument of a `%s` format, so printf conversions in it stay
//! text; Windows' `MessageBoxW` and macOS's `NSAlert` take it as data.
//! `MessageBoxW` shows OK and Cancel whatever labels are asked for, so
//! there the text says which one approves.

#[cfg(target_os = "linux")]
#[path = "dialog/gtk.rs"]
mod native;
#[cfg(not(target_os = "linux"))]
#[path = "dialog/system.rs"]
mod native;

use verifier_protocol::{Decision, Kind};

use super::Presentation;

pub fn present(
    shown: &Presentation<'_>,
    announce: &mut dyn FnMut(),
) -> Result<Option<Decision>, String> {
    let approval = shown.request.kind == Kind::Approval;
    let approved = native::show(
        shown.title(),
        &dialog_text(Backend::HERE, &shown.body(), approval),
        approval,
        announce,
    )?;
    Ok(approval.then_some(if approved { Decision::Approve } else { Decision::Deny }))
}

/// How each platform's dialog shows a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    /// GTK 3 (Linux): the message is the argument of a `%s` format.
    Gtk,
    /// Win32 `MessageBoxW`: the message is data; buttons are OK and Cancel.
    MessageBox,
    /// AppKit `NSAlert` (macOS): the message is data.
    NsAlert,
}

impl Backend {
    const HERE: Self = if cfg!(target_os = "linux") {
        Self::Gtk
    } else if cfg!(windows) {
        Self::MessageBox
    } else {
        Self::NsAlert
    };
}

/// The message as `backend` must receive it to show it literally.
fn dialog_text(backend: Backend, body: &str, approval: bool) -> String {
    match backend {
        Backend::MessageBox if approval => format!("{body}\n\nOK approves, Cancel denies."),
        Backend::Gtk | Backend::MessageBox | Backend::NsAlert => body.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{Backend, dialog_text};

    /// Agent text reaches every backend as text to show: conversion
    /// specifiers stay inert where the backend formats, and arrive as they
    /// are where it does not.
    #[test]
    fn every_backend_is_given_agent_text_as_data() {
        let agent_text = "rm -rf ~ %s%n%x <b>approve</b> 100%";
        assert_eq!(dialog_text(Backend::Gtk, agent_text, true), agent_text);
        assert_eq!(dialog_text(Backend::NsAlert, agent_text, true), agent_text);
        assert_eq!(dialog_text(Backend::MessageBox, agent_text, false), agent_text);
        let asked = dialog_text(Backend::MessageBox, agent_text, true);
        assert!(
            asked.starts_with(agent_text) && asked.ends_with("OK approves, Cancel denies."),
            "{asked}"
        );
    }
}

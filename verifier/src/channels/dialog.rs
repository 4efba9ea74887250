//! An OS-native dialog in this process (rfd; on Linux GTK 3, never a
//! helper program whose command line would carry the code). GTK hangs when
//! no display is reachable, so one is checked for first and the channel
//! fails fast without it.
//!
//! Each of rfd's backends is told the message as it must be to show it
//! literally ([`dialog_text`], tested for every backend on every
//! platform): GTK 3 passes it to `gtk_message_dialog_format_secondary_text`
//! as its printf format, so every `%` is doubled first and `%n` cannot
//! write into this process's memory; Windows' `MessageBoxW` and macOS's
//! `NSAlert` take it as data. `MessageBoxW` shows OK and Cancel whatever
//! labels are asked for, so there the text says which one approves.

use rfd::{MessageButtons, MessageDialog, MessageDialogResult, MessageLevel};

use verifier_protocol::{Decision, Kind};

use super::Presentation;

pub fn present(shown: &Presentation<'_>, announce: &mut dyn FnMut()) -> Result<Option<Decision>, String> {
    display_reachable()?;
    let approval = shown.request.kind == Kind::Approval;
    let buttons = if approval {
        MessageButtons::OkCancelCustom("Approve".into(), "Deny".into())
    } else {
        MessageButtons::Ok
    };
    let dialog = MessageDialog::new()
        .set_level(MessageLevel::Warning)
        .set_title(shown.title())
        .set_description(dialog_text(Backend::HERE, &shown.body(), approval))
        .set_buttons(buttons);
    announce();
    let answer = dialog.show();
    if !approval {
        return Ok(None);
    }
    Ok(Some(match answer {
        MessageDialogResult::Ok | MessageDialogResult::Yes => Decision::Approve,
        MessageDialogResult::Custom(label) if label == "Approve" => Decision::Approve,
        _ => Decision::Deny,
    }))
}

/// How rfd shows a message on each platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    /// GTK 3 (Linux): the message is a printf format.
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
        Backend::Gtk => crate::plain_text::escape_printf(body),
        Backend::MessageBox if approval => format!("{body}\n\nOK approves, Cancel denies."),
        Backend::MessageBox | Backend::NsAlert => body.to_owned(),
    }
}

/// Whether a Wayland or X11 display accepts connections.
#[cfg(target_os = "linux")]
fn display_reachable() -> Result<(), String> {
    use std::{os::unix::net::UnixStream, path::PathBuf, time::Duration};

    if let Ok(wayland) = std::env::var("WAYLAND_DISPLAY") {
        let socket = if wayland.starts_with('/') {
            PathBuf::from(&wayland)
        } else {
            PathBuf::from(std::env::var("XDG_RUNTIME_DIR").unwrap_or_default()).join(&wayland)
        };
        if UnixStream::connect(&socket).is_ok() {
            return Ok(());
        }
    }
    let display = std::env::var("DISPLAY").map_err(|_| "no display: DISPLAY and WAYLAND_DISPLAY are not set".to_owned())?;
    let (host, rest) = display.split_once(':').ok_or_else(|| format!("no display: cannot parse DISPLAY={display}"))?;
    let number = rest.split('.').next().unwrap_or_default();
    let reachable = if host.is_empty() || host == "unix" {
        UnixStream::connect(format!("/tmp/.X11-unix/X{number}")).is_ok()
    } else {
        let port = number.parse::<u16>().map(|n| 6000 + n).unwrap_or(6000);
        std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
            .ok()
            .and_then(|mut addrs| addrs.next())
            .is_some_and(|addr| std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_ok())
    };
    if reachable { Ok(()) } else { Err(format!("no display: DISPLAY={display} does not accept connections")) }
}

#[cfg(not(target_os = "linux"))]
fn display_reachable() -> Result<(), String> {
    Ok(())
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
        assert_eq!(dialog_text(Backend::Gtk, agent_text, true), "rm -rf ~ %%s%%n%%x <b>approve</b> 100%%");
        assert_eq!(dialog_text(Backend::NsAlert, agent_text, true), agent_text);
        assert_eq!(dialog_text(Backend::MessageBox, agent_text, false), agent_text);
        let asked = dialog_text(Backend::MessageBox, agent_text, true);
        assert!(asked.starts_with(agent_text) && asked.ends_with("OK approves, Cancel denies."), "{asked}");
    }
}

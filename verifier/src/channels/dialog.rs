//! An OS-native dialog in this process (rfd; on Linux GTK 3, never a
//! helper program whose command line would carry the code). GTK hangs when
//! no display is reachable, so one is checked for first and the channel
//! fails fast without it.
//!
//! rfd's GTK 3 backend passes the message to
//! `gtk_message_dialog_format_secondary_text` as its printf format, so on
//! Linux every `%` is doubled first ([`dialog_text`]): the text is shown,
//! never interpreted, and `%n` cannot write into this process's memory.

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
        .set_description(dialog_text(&shown.body()))
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

/// The message as rfd's backend must receive it to show it literally.
#[cfg(target_os = "linux")]
fn dialog_text(body: &str) -> String {
    crate::plain_text::escape_printf(body)
}

#[cfg(not(target_os = "linux"))]
fn dialog_text(body: &str) -> String {
    body.to_owned()
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

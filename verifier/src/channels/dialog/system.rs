//! The dialog on Windows and macOS, through rfd: Win32 `MessageBoxW` and
//! AppKit `NSAlert`, both in this process. The request is announced just
//! before the (blocking) call that shows it.

use rfd::{MessageButtons, MessageDialog, MessageDialogResult, MessageLevel};

/// Shows `text` under `title` until a button is clicked; returns whether
/// Approve (or, where labels cannot be chosen, OK) was clicked.
pub fn show(
    title: &str,
    text: &str,
    ask: bool,
    announce: &mut dyn FnMut(),
) -> Result<bool, String> {
    let buttons = if ask {
        MessageButtons::OkCancelCustom("Approve".into(), "Deny".into())
    } else {
        MessageButtons::Ok
    };
    let dialog = MessageDialog::new()
        .set_level(MessageLevel::Warning)
        .set_title(title)
        .set_description(text)
        .set_buttons(buttons);
    announce();
    let answer = dialog.show();
    Ok(ask
        && match answer {
            MessageDialogResult::Ok | MessageDialogResult::Yes => true,
            MessageDialogResult::Custom(label) => label == "Approve",
            _ => false,
        })
}

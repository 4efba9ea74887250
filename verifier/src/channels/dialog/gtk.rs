//! The dialog on Linux: GTK 3 through its safe bindings, initialised on the
//! verifier's main thread, which then runs the dialog (the process shows
//! one dialog and exits).
//!
//! A display GTK cannot open is an error returned before anything is
//! announced, so the next channel is tried at once. (rfd's GTK backend,
//! used here before, initialised GTK on a thread of its own and, when that
//! failed, waited forever: the request had already been announced as shown
//! and no window ever appeared.) The request is announced once the display
//! server has processed the window's creation and mapping.
//!
//! Agent text reaches GTK as a property value, never as a printf format:
//! conversions in it stay text.

use gtk::{ButtonsType, DialogFlags, MessageDialog, MessageType, ResponseType, prelude::*};

/// Shows `text` under `title` until a button is clicked or the window is
/// closed; `announce` is called once the window is on the display.
/// Returns whether Approve was clicked (`ask`: Approve and Deny buttons;
/// otherwise a single OK).
pub fn show(
    title: &str,
    text: &str,
    ask: bool,
    announce: &mut dyn FnMut(),
) -> Result<bool, String> {
    gtk::init().map_err(|_| no_display())?;
    let buttons = if ask { ButtonsType::None } else { ButtonsType::Ok };
    let dialog = MessageDialog::new(
        None::<&gtk::Window>,
        DialogFlags::MODAL,
        MessageType::Warning,
        buttons,
        title,
    );
    dialog.set_title(title);
    dialog.set_property("secondary-text", text);
    if ask {
        dialog.add_button("Approve", ResponseType::Ok);
        dialog.add_button("Deny", ResponseType::Cancel);
    }
    // A person can select (and copy) the code, or the action asked about.
    if let Ok(area) = dialog.message_area().downcast::<gtk::Container>() {
        for label in
            area.children().into_iter().filter_map(|child| child.downcast::<gtk::Label>().ok())
        {
            label.set_selectable(true);
        }
    }
    dialog.show_all();
    WidgetExt::display(&dialog).sync();
    announce();
    let response = dialog.run();
    dialog.hide();
    WidgetExt::display(&dialog).flush();
    Ok(ask && response == ResponseType::Ok)
}

/// Why GTK could not start: the display it was given, or that it had none.
fn no_display() -> String {
    let named: Vec<String> = ["WAYLAND_DISPLAY", "DISPLAY"]
        .into_iter()
        .filter_map(|name| {
            std::env::var(name)
                .ok()
                .filter(|value| !value.is_empty())
                .map(|value| format!("{name}={value}"))
        })
        .collect();
    if named.is_empty() {
        "no display: DISPLAY and WAYLAND_DISPLAY are not set".to_owned()
    } else {
        format!("no display: GTK could not open {}", named.join(" or "))
    }
}

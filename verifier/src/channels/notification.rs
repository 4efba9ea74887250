//! A desktop notification over D-Bus. It can show a code, but it cannot
//! ask a question, so for approvals it declines and the next channel is
//! tried. Notification servers read the body as markup (`<b>`, `<a>`,
//! entities), so it is escaped: the text is shown, never interpreted.

use notify_rust::{Notification, Timeout};

use verifier_protocol::{Decision, Kind};

use super::Presentation;

pub fn present(
    shown: &Presentation<'_>,
    announce: &mut dyn FnMut(),
) -> Result<Option<Decision>, String> {
    if shown.request.kind == Kind::Approval {
        return Err("a notification can inform but cannot ask for approval".into());
    }
    session_bus_reachable()?;
    Notification::new()
        .appname("safety-dongle")
        .summary(shown.title())
        .body(&crate::plain_text::escape_markup(&shown.body()))
        .timeout(Timeout::Never)
        .show()
        .map_err(|e| format!("the notification service refused: {e}"))?;
    announce();
    Ok(None)
}

/// A session bus must exist, or connecting to it can stall.
fn session_bus_reachable() -> Result<(), String> {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some() {
        return Ok(());
    }
    let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(std::path::PathBuf::from);
    match runtime.map(|dir| dir.join("bus")) {
        Some(bus) if bus.exists() => Ok(()),
        _ => Err("no D-Bus session bus".into()),
    }
}

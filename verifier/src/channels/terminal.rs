//! The controlling terminal (`/dev/tty`), opened directly: never this
//! process's stdout, which is the pipe to the dongle. For a human at a
//! terminal without a desktop, as in `safety-dongle demo`.

use std::{
    fs::OpenOptions,
    io::{BufRead, BufReader, Write},
};

use verifier_protocol::{Decision, Kind};

use super::Presentation;

pub fn present(shown: &Presentation<'_>, announce: &mut dyn FnMut()) -> Result<Option<Decision>, String> {
    let mut tty = OpenOptions::new().read(true).write(true).open("/dev/tty").map_err(|_| "no controlling terminal".to_owned())?;
    let rule = "=".repeat(64);
    let text = format!("\n{rule}\n{}\n{rule}\n{}\n{rule}\n", shown.title(), shown.body());
    tty.write_all(text.as_bytes()).map_err(|e| format!("writing to the terminal failed: {e}"))?;
    announce();
    if shown.request.kind != Kind::Approval {
        return Ok(None);
    }
    tty.write_all(b"Approve? type 'approve' and press Enter (anything else denies): ").map_err(|e| e.to_string())?;
    let mut line = String::new();
    BufReader::new(tty).read_line(&mut line).map_err(|e| format!("reading the terminal failed: {e}"))?;
    Ok(Some(if line.trim().eq_ignore_ascii_case("approve") { Decision::Approve } else { Decision::Deny }))
}

//! The controlling terminal (`/dev/tty`; on Windows the console,
//! `CONIN$` and `CONOUT$`), opened directly: never this process's stdout,
//! which is the pipe to the dongle. For a human at a terminal without a
//! desktop, as in `safety-dongle demo`.

use std::{
    fs::OpenOptions,
    io::{BufRead, BufReader, Write},
};

use verifier_protocol::{Decision, Kind};

use super::Presentation;

#[cfg(not(windows))]
const CONSOLE_IN: &str = "/dev/tty";
#[cfg(not(windows))]
const CONSOLE_OUT: &str = "/dev/tty";
#[cfg(windows)]
const CONSOLE_IN: &str = "CONIN$";
#[cfg(windows)]
const CONSOLE_OUT: &str = "CONOUT$";

pub fn present(
    shown: &Presentation<'_>,
    announce: &mut dyn FnMut(),
) -> Result<Option<Decision>, String> {
    let mut tty = OpenOptions::new()
        .write(true)
        .open(CONSOLE_OUT)
        .map_err(|_| "no controlling terminal".to_owned())?;
    let rule = "=".repeat(64);
    let text = format!("\n{rule}\n{}\n{rule}\n{}\n{rule}\n", shown.title(), shown.body());
    tty.write_all(text.as_bytes()).map_err(|e| format!("writing to the terminal failed: {e}"))?;
    announce();
    if shown.request.kind != Kind::Approval {
        return Ok(None);
    }
    tty.write_all(b"Approve? type 'approve' and press Enter (anything else denies): ")
        .map_err(|e| e.to_string())?;
    let mut line = String::new();
    let input = OpenOptions::new()
        .read(true)
        .open(CONSOLE_IN)
        .map_err(|_| "no controlling terminal to read".to_owned())?;
    BufReader::new(input)
        .read_line(&mut line)
        .map_err(|e| format!("reading the terminal failed: {e}"))?;
    Ok(Some(if line.trim().eq_ignore_ascii_case("approve") {
        Decision::Approve
    } else {
        Decision::Deny
    }))
}

//! Fuzzes writes that may plant code, by path: the input is the path
//! written, a newline, the content written, and optionally a NUL and the
//! file as it is now. The write is judged by what the file will run (git
//! hooks, Makefiles, CI definitions, unit files, scripts with a shebang…),
//! parts already in the file as they were.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use safety_dongle::analysis::{Change, CurrentFiles, FileWrite, WorkingFolder};

/// The one file the write changes, as it is now (`None`: a new file).
#[derive(Debug)]
struct Existing(Option<String>);

impl CurrentFiles for Existing {
    fn current(&self, _: &str) -> Option<String> {
        self.0.clone()
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Some((path, rest)) = text.split_once('\n') else { return };
    let (content, now) = match rest.split_once('\0') {
        Some((content, now)) => (content, Some(now.to_owned())),
        None => (rest, None),
    };
    let write = FileWrite { path: path.to_owned(), change: Change::Whole(content.to_owned()) };
    common::judge(
        &format!("write_file {path}"),
        Some(&write),
        &WorkingFolder::Project,
        &Existing(now),
    );
});

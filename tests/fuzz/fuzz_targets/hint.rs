//! Fuzzes the analysis of what an agent writes: any bytes, as the text of
//! a `nextActionHint` or a hooked shell command, are redacted, parsed as
//! the shell would run them (through every executor and interpreter the
//! analysis reads) and judged by the default policy, and come back as a
//! verdict.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use safety_dongle::analysis::{NoCurrentFiles, WorkingFolder};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    common::judge(text, None, &WorkingFolder::Project, &NoCurrentFiles);
});

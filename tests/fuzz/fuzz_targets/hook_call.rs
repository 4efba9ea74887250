//! Fuzzes a Claude Code tool call as the hook receives it: any bytes, as
//! the PreToolUse payload on the hook's stdin, are either refused as a
//! payload error or read into the action and the file it writes, which are
//! then judged by the default policy in the call's `cwd`.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use safety_dongle::{
    analysis::{NoCurrentFiles, WorkingFolder},
    hook::claude_code,
};

fuzz_target!(|data: &[u8]| {
    let Ok((call, reading)) = claude_code::ADAPTER.read(data) else { return };
    let folder = call.cwd.as_deref().map_or(WorkingFolder::Project, WorkingFolder::for_this_user);
    common::judge(&reading.action, reading.writes.first(), &folder, &NoCurrentFiles);
});

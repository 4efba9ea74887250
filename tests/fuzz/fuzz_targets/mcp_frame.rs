//! Fuzzes the screen every MCP frame passes before rmcp parses it (stdio
//! and HTTP): any bytes, as one frame, are ignored, refused with an answer
//! addressed to the request, or handed on as a parsed message.

#![no_main]

use libfuzzer_sys::fuzz_target;
use safety_dongle::{
    protocol::limits::Limits,
    server::screen::{Screened, refuse_unparseable, screen},
};

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    // A frame longer than the limit arrives cut to it, with its real length.
    let kept = data.get(..limits.max_request_size).unwrap_or(data);
    let screened = screen(kept, data.len(), &limits);
    if let Some(refused) = refuse_unparseable(kept, data.len(), &limits) {
        assert!(
            matches!(refused, Screened::Reply(_) | Screened::Ignore),
            "the HTTP screen refused with a message: {refused:?}"
        );
        assert!(
            !matches!(screened, Screened::Message(_)),
            "the HTTP screen refuses what the stdio screen passes: {screened:?}"
        );
    }
});

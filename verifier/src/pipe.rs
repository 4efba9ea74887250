//! The verifier's end of the private pipe to the dongle: the one request
//! line read from stdin (size-limited), event lines written to stdout and
//! flushed at once. The messages themselves are typed in
//! `verifier_protocol`, shared with the dongle.

use std::io::{BufRead, Read, Write};

use verifier_protocol::{Event, MAX_REQUEST_BYTES, Request};

/// Reads the request line, refusing one longer than the limit.
pub fn read_request(input: impl Read) -> Result<Request, String> {
    let mut line = Vec::new();
    let mut limited = std::io::BufReader::new(input.take(MAX_REQUEST_BYTES + 1));
    limited.read_until(b'\n', &mut line).map_err(|e| format!("reading the request failed: {e}"))?;
    Request::parse(&line).map_err(|error| format!("request refused: {error}"))
}

/// Writes one event line and flushes, so the dongle sees it at once. A
/// dongle that stopped listening has nobody left to tell.
pub fn emit(out: &mut impl Write, event: &Event) {
    let _ = out.write_all(event.line().as_bytes());
    let _ = out.flush();
}

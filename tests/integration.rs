//! Integration tests: the real `safety-dongle` binary, driven over stdio and
//! HTTP by rmcp's client and by raw frames. One test binary, a module per
//! area, shared helpers in `it::support`.

// Tests may panic on what they did not expect; the lint guards library code.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::string_slice,
    clippy::unreachable
)]

mod it;

//! The judge: one resident process per user and configuration that keeps
//! the compiled policy and the open state, and decides hook calls sent to
//! it over a private Unix domain socket, so a hook call costs a connection
//! instead of a start-up (docs/ARCHITECTURE.md, "The judge").
//!
//! The judge is an optimisation the hook can always do without: a hook
//! that cannot reach one, or gets anything but a well-formed answer in
//! time, decides in-process exactly as it would without a judge. Nothing
//! it answers is less strict than that: both decide with the same
//! function (`cli::hook`), each call its own session, and the judge
//! answers only while its policy is the one the files say
//! ([`address::freshness`]).
//!
//! Here: what a judge is called and where it listens ([`address`]), the
//! one message format between hook and judge ([`wire`]), and the hook's
//! end of it ([`client`]). The judge's serving loop is `cli::judge`.

pub mod address;
#[cfg(unix)]
pub mod client;
pub mod wire;

/// The environment variable that keeps a hook from asking (or starting) a
/// judge when set to anything but `0`, `false`, `no` or `off`.
pub const NO_JUDGE_ENV: &str = "SAFETY_DONGLE_NO_JUDGE";

//! The command line (DESIGN.md 7.1): parsing, then one module per command.
//!
//! With no command, `safety-dongle` serves MCP on stdio, which is what an
//! MCP client's config runs. Exit codes: 0 success, 1 a failure the user
//! must fix (bad config, errors found by `check`), 2 a usage error.

mod check;
mod serve;

use std::{net::SocketAddr, path::PathBuf, process::ExitCode};

use clap::{Args, Parser, Subcommand};

use crate::{config::LoopMode, protocol::surface::EndpointMode};

const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (MCP-AQL 1.0.0-draft)");

#[derive(Debug, Parser)]
#[command(name = "safety-dongle", version = VERSION, about = "An MCP-AQL safety layer between AI agents and what they can touch")]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP on stdio (the default) or on loopback HTTP.
    Serve(ServeArgs),
    /// Check a config file; print every error as file:line:col and exit 1 on any.
    Check(CheckArgs),
}

#[derive(Debug, Args, Default)]
struct ServeArgs {
    /// Config file (TOML).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Folder for the dongle's state; overrides the config file.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Policy file (TOML); repeat to merge several in order. Replaces the
    /// config file's list; without any, the embedded default policy applies.
    #[arg(long = "policy", value_name = "FILE")]
    policies: Vec<PathBuf>,
    /// Safety-loop mode: enforcing, monitoring, logging or disabled.
    #[arg(long, value_name = "M", value_parser = parse_loop_mode)]
    mode: Option<LoopMode>,
    /// Endpoint tools to expose: semantic, single or all.
    #[arg(long, value_name = "MODE", value_parser = parse_endpoint_mode)]
    endpoints: Option<EndpointMode>,
    /// Serve streamable HTTP on this loopback address instead of stdio.
    #[arg(long, value_name = "127.0.0.1:PORT")]
    http: Option<SocketAddr>,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// Config file to check.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Further files to check.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
}

fn parse_loop_mode(s: &str) -> Result<LoopMode, String> {
    s.parse()
}

fn parse_endpoint_mode(s: &str) -> Result<EndpointMode, String> {
    s.parse()
}

/// Runs the command line and returns the process's exit code.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command.unwrap_or(Command::Serve(ServeArgs::default())) {
        Command::Serve(args) => serve::run(args),
        Command::Check(args) => check::run(args),
    }
}

#[cfg(test)]
mod tests {
    use crate::protocol::router::PROTOCOL_VERSION;

    #[test]
    fn version_names_the_protocol_version_served() {
        assert!(super::VERSION.contains(PROTOCOL_VERSION));
    }
}

//! The command line (DESIGN.md 7.1): parsing, then one module per command.
//!
//! With no command, `safety-dongle` serves MCP on stdio, which is what an
//! MCP client's config runs. Exit codes: 0 success, 1 a failure the user
//! must fix (bad config, errors found by `check`), 2 a usage error.

mod adapter;
mod assemble;
mod audit;
mod check;
mod demo;
mod doctor;
mod eval;
mod front;
mod hook;
mod install;
mod judge;
#[cfg(test)]
mod panic_tests;
mod policy;
mod reload;
mod replay;
mod serve;
mod status;
mod terminal_text;
mod unblock;
mod watch;

use std::{net::SocketAddr, path::PathBuf, process::ExitCode};

use clap::{Args, Parser, Subcommand};

pub use front::run as run_front;

use crate::{
    config::{Config, LoopMode},
    hook::harness::Harness,
    protocol::surface::EndpointMode,
};

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
    /// Check the config and policy files; print every error as file:line:col and exit 1 on any.
    Check(CheckArgs),
    /// For every coding agent found on this machine, whether the guard's hook is installed, would fail open, or would be skipped; exit 1 when one is left unguarded.
    Doctor(DoctorArgs),
    /// Explain, stage by stage, what the policy decides for an action; changes no state.
    Eval(EvalArgs),
    /// What a candidate policy would decide differently over the recorded actions; exit 1 if anything would be looser.
    Replay(ReplayArgs),
    /// Blocked agents, active executions and challenges waiting for a human.
    Status(ConfigArg),
    /// Show the audit log, or `audit verify` to check its hash chain.
    Audit(AuditArgs),
    /// Lift an agent's hard block: type back a code the verifier shows out of band (interactive terminal only; audited).
    Unblock(UnblockArgs),
    /// A scripted agent session showing every outcome, on a fresh temporary state.
    Demo,
    /// Run as a coding agent's enforcement hook: `hook HARNESS` (claude-code, codex, gemini, ...) reads the harness's pre-tool-call payload on stdin and answers in its format.
    Hook(HookCommand),
    /// Keep the policy and state loaded and decide hook calls over a private socket in the data folder; hooks start it when they need it, and it exits after `[judge] idle_secs` without calls.
    Judge(JudgeArgs),
    /// Write the enforcement hook into a harness's own settings (merged, backed up, diff printed; idempotent).
    Install(InstallArgs),
    /// Remove the enforcement hook from a harness's own settings (backed up, diff printed).
    Uninstall(InstallArgs),
    /// Policy files: `policy diff OLD NEW` compares two; `policy push FILE...` makes them the central policy.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Adapter files: `adapter import-openapi` writes one for an OpenAPI document.
    Adapter {
        #[command(subcommand)]
        command: AdapterCommand,
    },
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Rules and settings added, removed and changed, and the examples of both policies whose decision changes.
    Diff(PolicyDiffArgs),
    /// Check the files and store them, merged in order, as the next version of the central
    /// policy in the state; every dongle on that state decides by it from its next decision.
    Push(PolicyPushArgs),
}

#[derive(Debug, Args)]
struct PolicyPushArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// The policy file(s), merged in order.
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
}

#[derive(Debug, Args)]
struct PolicyDiffArgs {
    /// The policy as it is.
    #[arg(value_name = "OLD")]
    old: PathBuf,
    /// The policy as it would be.
    #[arg(value_name = "NEW")]
    new: PathBuf,
    /// Print the diff as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum AdapterCommand {
    /// Write an adapter file (trust level `generated`) for the operations of an
    /// OpenAPI 3.0/3.1 or Swagger 2.0 document, JSON or YAML.
    ImportOpenapi(ImportOpenApiArgs),
}

#[derive(Debug, Args)]
struct ImportOpenApiArgs {
    /// The OpenAPI or Swagger document.
    #[arg(value_name = "SPEC")]
    spec: PathBuf,
    /// The adapter's name (lowercase, digits and '-'); derived from the document's title when not given.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Write the adapter to FILE (conventionally NAME-adapter.md) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct HookCommand {
    /// The harness whose hook this is: claude-code, codex, copilot, gemini, droid, cursor or opencode.
    #[arg(value_name = "HARNESS", value_parser = parse_harness)]
    harness: Harness,
    #[command(flatten)]
    args: HookArgs,
}

#[derive(Debug, Clone, Args)]
struct HookArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// Policy file(s) instead of the configured ones.
    #[arg(long = "policy", value_name = "FILE")]
    policies: Vec<PathBuf>,
    /// The agent name the calls are attributed to (blocks apply per
    /// agent). Default: per harness, machine, user and project,
    /// `HARNESS:USER@HOST-ID[:PROJECT]` (`hook::identity`).
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// The hook's own deadline in seconds: a call not decided by then is
    /// denied. Keep it inside the hook entry's `timeout` in Claude Code's
    /// settings (`check` verifies this).
    #[arg(long, value_name = "SECS", default_value_t = crate::hook::claude_settings::DEFAULT_DEADLINE_SECS, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    timeout: u64,
    /// Decide in this process, without asking (or starting) a judge.
    #[arg(long, env = crate::judge::NO_JUDGE_ENV, value_parser = clap::builder::FalseyValueParser::new())]
    no_judge: bool,
    /// Set by the hook's front (`safety-dongle-hook`) when the judge took
    /// this call and did not decide it: refuse it and audit the refusal.
    #[arg(long, value_name = "WHY", hide = true)]
    judge_lost: Option<String>,
}

impl HookArgs {
    /// The configuration with `--data-dir` and `--policy` applied, or why
    /// not.
    fn load_config(&self) -> Result<Config, Vec<crate::diagnostics::Diagnostic>> {
        let mut config = self.config.load_or_diagnose()?;
        if !self.policies.is_empty() {
            config.policies = self.policies.clone();
        }
        Ok(config)
    }

    /// These arguments as a command line `hook HARNESS ...` parses back
    /// into them, with `deadline_secs` for the time-out.
    #[cfg(unix)]
    fn command_line(&self, harness: Harness, deadline_secs: u64) -> Vec<std::ffi::OsString> {
        let mut line: Vec<std::ffi::OsString> = vec!["hook".into(), harness.name().into()];
        // `--name=VALUE`: a value that starts with `-` stays a value.
        let mut option = |name: &str, value: &std::ffi::OsStr| {
            let mut word = std::ffi::OsString::from(format!("--{name}="));
            word.push(value);
            line.push(word);
        };
        if let Some(file) = &self.config.config {
            option("config", file.as_os_str());
        }
        if let Some(dir) = &self.config.data_dir {
            option("data-dir", dir.as_os_str());
        }
        for policy in &self.policies {
            option("policy", policy.as_os_str());
        }
        if let Some(agent) = &self.agent {
            option("agent", agent.as_ref());
        }
        option("timeout", deadline_secs.to_string().as_ref());
        if let Some(why) = &self.judge_lost {
            option("judge-lost", why.as_ref());
        }
        if self.no_judge {
            line.push("--no-judge".into());
        }
        line
    }
}

/// What a judge decides with; a hook asks the judge started with the same.
#[derive(Debug, Clone, Args)]
struct JudgeArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// Policy file(s) instead of the configured ones.
    #[arg(long = "policy", value_name = "FILE")]
    policies: Vec<PathBuf>,
}

#[derive(Debug, Args)]
struct DoctorArgs {
    /// Config file (its approval_timeout_secs must fit inside each hook's deadline).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The project whose settings are checked besides the user's (default: the current folder).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct InstallArgs {
    /// The harness: claude-code, codex, copilot, gemini, droid, cursor or opencode.
    #[arg(value_name = "HARNESS", value_parser = parse_harness)]
    harness: Harness,
    /// The project's settings, in the current folder (the default).
    #[arg(long, conflicts_with = "user")]
    project: bool,
    /// The user's own settings, in the home folder.
    #[arg(long)]
    user: bool,
    /// Print the change and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The config file the hook reads (written into the hook's command as an absolute path).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The hook's own deadline in seconds; the harness's time-out is set above it.
    #[arg(long, value_name = "SECS", default_value_t = crate::hook::claude_settings::DEFAULT_DEADLINE_SECS, value_parser = clap::value_parser!(u64).range(10..=86_400))]
    timeout: u64,
}

/// `--config FILE` and `--data-dir DIR`, shared by every command that
/// reads the configuration.
#[derive(Debug, Clone, Args, Default)]
struct ConfigArg {
    /// Config file (TOML).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Folder of the dongle's state; overrides the config file.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
}

impl ConfigArg {
    /// Loads the configuration with `--data-dir` applied, printing every
    /// error; `None` means exit 1.
    fn load(&self) -> Option<Config> {
        self.load_or_diagnose().map_err(|errors| print_diagnostics(&errors)).ok()
    }

    /// Loads the configuration with `--data-dir` applied, or says why not.
    fn load_or_diagnose(&self) -> Result<Config, Vec<crate::diagnostics::Diagnostic>> {
        let mut config = Config::load(self.config.as_deref())?;
        if let Some(dir) = &self.data_dir {
            config.data_dir = Some(dir.clone());
        }
        Ok(config)
    }

    /// Opens the state database of the configuration, printing why not;
    /// `None` means exit 1.
    fn open_store(&self) -> Option<crate::store::Store> {
        let config = self.load()?;
        assemble::open_store(&config).map_err(|error| eprintln!("safety-dongle: {error}")).ok()
    }
}

/// The async runtime for commands that serve; `None` (after saying why)
/// means exit 1.
fn runtime() -> Option<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| eprintln!("safety-dongle: cannot start the async runtime: {error}"))
        .ok()
}

#[derive(Debug, Args)]
struct EvalArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// Policy file(s) to evaluate against instead of the configured ones.
    #[arg(long = "policy", value_name = "FILE")]
    policies: Vec<PathBuf>,
    /// The agent (`element_name`) the action is evaluated for.
    #[arg(long, value_name = "NAME", default_value = "agent")]
    agent: String,
    /// The step number within the execution.
    #[arg(long, value_name = "N", default_value_t = 1)]
    step: u32,
    /// The outcome reported for the previous step: success, failure or skipped.
    #[arg(long, value_name = "OUTCOME")]
    outcome: Option<String>,
    /// The folder the action runs in, as the Claude Code hook reports it
    /// (`cwd`); without it, relative paths are the project.
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// A file write to judge by its content: the path written (with
    /// --content-file); the action is then `write_file PATH` unless a HINT
    /// is given. The file as it is now, if it exists, is what the write
    /// changes.
    #[arg(long = "write", value_name = "PATH", requires = "content_file")]
    write: Option<String>,
    /// The content the write puts in PATH, read from this file.
    #[arg(long = "content-file", value_name = "FILE", requires = "write")]
    content_file: Option<PathBuf>,
    /// Print the explanation as JSON (src/lab/explanation.schema.json).
    #[arg(long)]
    json: bool,
    /// The action, as an agent would report it in nextActionHint.
    #[arg(value_name = "HINT", required_unless_present = "write")]
    hint: Option<String>,
}

#[derive(Debug, Args)]
struct ReplayArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// The candidate policy file(s), merged in order.
    #[arg(long = "policy", value_name = "FILE", required = true)]
    policies: Vec<PathBuf>,
    /// Only actions recorded within this long before now (7d, 12h, 30m).
    #[arg(long, value_name = "DURATION")]
    since: Option<String>,
    /// Only this agent's actions.
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// How many rows of each transition to show.
    #[arg(long, value_name = "N", default_value_t = 5)]
    rows: usize,
}

#[derive(Debug, Args)]
struct AuditArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// Only this agent's rows.
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// How many of the newest rows to show.
    #[arg(long, value_name = "N", default_value_t = 50)]
    limit: usize,
    /// `verify`: recompute the hash chain and exit 1 if it is broken.
    #[arg(value_name = "verify", value_parser = ["verify"])]
    action: Option<String>,
}

#[derive(Debug, Args)]
struct UnblockArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// The agent (`element_name`) to unblock.
    #[arg(value_name = "AGENT")]
    agent: String,
}

/// Loads the configuration, printing every error; `None` means exit 1.
/// Prints `value` as pretty JSON on stdout; `false` (after saying why on
/// stderr) if it could not be written as JSON.
fn print_json(value: &impl serde::Serialize, what: &str) -> bool {
    match serde_json::to_string_pretty(value) {
        Ok(json) => {
            println!("{json}");
            true
        }
        Err(error) => {
            eprintln!("safety-dongle: cannot write the {what} as JSON: {error}");
            false
        }
    }
}

fn print_diagnostics(errors: &[crate::diagnostics::Diagnostic]) {
    for error in errors {
        eprintln!("{}", error.render());
    }
}

#[derive(Debug, Args, Default)]
struct ServeArgs {
    /// Config file (TOML). Without `--config`, `SAFETY_DONGLE_CONFIG` names
    /// it: for clients such as MCP Inspector that take `--config` for
    /// themselves. Only `serve` reads the variable: a hook's configuration
    /// comes from the command line its harness's settings hold.
    #[arg(long, value_name = "FILE", env = "SAFETY_DONGLE_CONFIG")]
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
    /// Proxy the servers of an MCP client's configuration (`mcpServers`
    /// JSON, as Claude Desktop or Cursor keep it).
    #[arg(long, value_name = "FILE")]
    import_client_config: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// Config file to check.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Further files to check: policies (`.toml`), adapter files (`.md`),
    /// Claude Code settings (`.json`; those of the current project and the
    /// user's are checked whenever they exist).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
}

fn parse_harness(s: &str) -> Result<Harness, String> {
    Harness::parse(s).ok_or_else(|| {
        let names: Vec<&str> = Harness::ALL.iter().map(|harness| harness.name()).collect();
        format!("'{s}' is not a harness; one of: {}", names.join(", "))
    })
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
        Command::Doctor(args) => doctor::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Status(args) => status::run(args),
        Command::Audit(args) => audit::run(args),
        Command::Unblock(args) => unblock::run(args),
        Command::Demo => demo::run(),
        Command::Hook(HookCommand { harness, args }) => hook::run(harness, args),
        Command::Judge(args) => judge::run(args),
        Command::Install(args) => install::install(args),
        Command::Uninstall(args) => install::uninstall(args),
        Command::Adapter { command: AdapterCommand::ImportOpenapi(args) } => {
            adapter::import_openapi(args)
        }
        Command::Policy { command: PolicyCommand::Diff(args) } => policy::diff_files(args),
        Command::Policy { command: PolicyCommand::Push(args) } => policy::push(args),
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

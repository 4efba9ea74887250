//! The config file (DESIGN.md 7.2) and how its settings combine with the
//! environment and the command line.
//!
//! Precedence, highest first: command-line flags, environment variables
//! (`MCP_AQL_ENDPOINT_MODE`, `MCP_AQL_TOOL_PREFIX`, `MCPAQL_SAFETY_LOOP`;
//! an empty `MCP_AQL_TOOL_PREFIX` means no prefix), the config file, the
//! defaults. Relative paths in the file are relative to the file's folder.
//! A bad value anywhere is an error, never a silent fallback: the server
//! does not start on a configuration it does not understand.

use crate::names::named_enum;
use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    str::FromStr,
    time::Duration,
};

use serde::Deserialize;

use crate::{
    diagnostics::{Diagnostic, SourceFile, toml_doc},
    protocol::{
        registry::Category,
        surface::{EndpointMode, ToolPrefix},
    },
};

pub const ENDPOINT_MODE_ENV: &str = "MCP_AQL_ENDPOINT_MODE";
pub const LOOP_MODE_ENV: &str = "MCPAQL_SAFETY_LOOP";
pub const TOOL_PREFIX_ENV: &str = "MCP_AQL_TOOL_PREFIX";
/// The password for a `state` database, when no `state_password_file` is
/// set.
pub const STATE_PASSWORD_ENV: &str = "SAFETY_DONGLE_STATE_PASSWORD";

named_enum! {
    /// How the execution safety loop treats reported actions (spec 8.6.1).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum LoopMode {
        #[default]
        Enforcing => "enforcing",
        Monitoring => "monitoring",
        Logging => "logging",
        Disabled => "disabled",
    }
}

impl LoopMode {
    /// How much protection the mode gives: enforcing > monitoring >
    /// logging > disabled.
    fn strictness(self) -> u8 {
        match self {
            Self::Enforcing => 3,
            Self::Monitoring => 2,
            Self::Logging => 1,
            Self::Disabled => 0,
        }
    }
}

impl FromStr for LoopMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "enforcing" => Ok(Self::Enforcing),
            "monitoring" => Ok(Self::Monitoring),
            "logging" => Ok(Self::Logging),
            "disabled" => Ok(Self::Disabled),
            other => Err(format!(
                "unknown safety-loop mode '{other}' (expected enforcing, monitoring, logging or disabled)"
            )),
        }
    }
}

/// How a central policy (`safety-dongle policy push`) stands to this
/// machine's own policy. Set in the permission-checked config file only:
/// whoever can write the shared state (on SQLite, the agent's own user)
/// must not be able to replace the machine's policy by pushing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CentralPolicy {
    /// The machine's own policy files (or the embedded default) stay a
    /// floor under any central version: a push can add strictness here,
    /// never take it away.
    #[default]
    Floor,
    /// The central version decides, with the machine's own files only
    /// able to tighten it (for a team whose machines trust its database).
    Replace,
}

/// A channel the verifier may show a request on. `terminal` (the
/// controlling terminal, opened directly) extends DESIGN.md's list for
/// humans without a desktop.
pub use verifier_protocol::Channel;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    data_dir: Option<PathBuf>,
    state: Option<toml::Spanned<String>>,
    state_password_file: Option<toml::Spanned<PathBuf>>,
    central_policy: Option<CentralPolicy>,
    mode: Option<LoopMode>,
    #[serde(default)]
    allow_weaker_mode: bool,
    endpoints: Option<EndpointMode>,
    tool_prefix: Option<ToolPrefix>,
    #[serde(default)]
    policies: Vec<PathBuf>,
    #[serde(default)]
    adapters: Vec<PathBuf>,
    verifier: Option<toml::Spanned<VerifierSettings>>,
    #[serde(default)]
    servers: BTreeMap<String, toml::Spanned<ServerSettings>>,
    client_config: Option<PathBuf>,
    judge: Option<JudgeSettings>,
}

/// `[judge]`: the resident process that decides hook calls
/// (`safety-dongle judge`, docs/ARCHITECTURE.md). Either way every call is
/// decided by the same policy and state; the judge only saves the start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeSettings {
    /// Whether hooks ask a judge (and start one) before deciding
    /// in-process.
    #[serde(default = "default_judge_enabled")]
    pub enabled: bool,
    /// How long a judge waits for a call before it exits.
    #[serde(default = "default_judge_idle")]
    pub idle_secs: u64,
}

fn default_judge_enabled() -> bool {
    true
}

fn default_judge_idle() -> u64 {
    600
}

impl Default for JudgeSettings {
    fn default() -> Self {
        Self { enabled: default_judge_enabled(), idle_secs: default_judge_idle() }
    }
}

/// `[verifier]`: how humans are reached.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifierSettings {
    pub program: Option<PathBuf>,
    #[serde(default = "default_channels")]
    pub channels: Vec<Channel>,
    pub command: Option<Vec<String>>,
    #[serde(default = "default_challenge_ttl")]
    pub challenge_ttl_secs: u64,
    #[serde(default = "default_approval_timeout")]
    pub approval_timeout_secs: u64,
}

fn default_channels() -> Vec<Channel> {
    vec![Channel::Dialog, Channel::Notification]
}

fn default_challenge_ttl() -> u64 {
    300
}

fn default_approval_timeout() -> u64 {
    120
}

impl Default for VerifierSettings {
    fn default() -> Self {
        Self {
            program: None,
            channels: default_channels(),
            command: None,
            challenge_ttl_secs: default_challenge_ttl(),
            approval_timeout_secs: default_approval_timeout(),
        }
    }
}

/// Where the safety state (blocks, challenges, executions, the audit
/// trail) lives. Set in the config file only: whoever controls the
/// environment or the command line must not be able to point the dongle
/// at a database without the blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateLocation {
    /// The SQLite file in the data folder (the default).
    DataFolder,
    /// A PostgreSQL database (`state = "postgres://user@host/db"`), shared
    /// by every machine pointed at it. The password is never in the file:
    /// it comes from `state_password_file` or [`STATE_PASSWORD_ENV`].
    Postgres { url: String, password_file: Option<PathBuf> },
}

/// `[servers.NAME]`: one downstream MCP server, over stdio or HTTP.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// When to connect: as the dongle starts, or on first need.
    #[serde(default)]
    pub start: StartPolicy,
    /// How long one call may take before it is cancelled.
    #[serde(default = "default_call_timeout")]
    pub timeout_secs: u64,
    /// Semantic categories by tool name, overriding the classification
    /// from annotations and verbs.
    #[serde(default)]
    pub categories: BTreeMap<String, Category>,
    /// Retries of a call safe to repeat after its connection failed or it
    /// timed out, with the backoff HTTP adapters use.
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// The first backoff delay, in milliseconds; each retry doubles it.
    #[serde(default = "default_retry_base_ms")]
    pub retry_base_ms: u64,
    /// Whether a tool's calls are safe to repeat, by tool name, overriding
    /// what its annotations claim (`readOnlyHint`, `idempotentHint`).
    #[serde(default)]
    pub retryable: BTreeMap<String, bool>,
}

impl ServerSettings {
    /// How this server's calls that are safe to repeat are retried.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            max_retries: self.max_retries,
            base: std::time::Duration::from_millis(self.retry_base_ms),
        }
    }
}

/// The `max_retries` of a server that does not set one.
pub fn default_max_retries() -> u32 {
    RetryPolicy::default().max_retries
}

/// The `retry_base_ms` of a server that does not set one.
pub fn default_retry_base_ms() -> u64 {
    u64::try_from(RetryPolicy::default().base.as_millis()).unwrap_or(u64::MAX)
}

/// The `timeout_secs` of a server that does not set one.
pub fn default_call_timeout() -> u64 {
    60
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StartPolicy {
    /// Connect in the background as the dongle starts.
    #[default]
    Startup,
    /// Connect when an agent first needs the server's operations.
    Lazy,
}

/// The settings in force, after file, environment and defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `None` when the platform has no data folder and none was configured.
    pub data_dir: Option<PathBuf>,
    /// Where the safety state lives.
    pub state: StateLocation,
    /// Whether a central policy replaces the machine's own or stands on it.
    pub central_policy: CentralPolicy,
    /// Private: changed only through [`Config::override_mode`], which keeps
    /// flags and the environment from weakening what the file set.
    mode: LoopMode,
    /// Whether flags and the environment may set a weaker mode than the
    /// file's (`allow_weaker_mode`, off by default).
    pub allow_weaker_mode: bool,
    pub endpoints: EndpointMode,
    /// Goes before every tool name (`github_` makes `github_mcp_aql_read`).
    pub tool_prefix: ToolPrefix,
    pub policies: Vec<PathBuf>,
    pub adapters: Vec<PathBuf>,
    pub verifier: VerifierSettings,
    pub judge: JudgeSettings,
    pub servers: BTreeMap<String, ServerSettings>,
    /// An MCP client's configuration (`mcpServers`) whose servers are
    /// proxied too.
    pub client_config: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            data_dir: dirs::data_dir().map(|d| d.join("safety-dongle")),
            state: StateLocation::DataFolder,
            central_policy: CentralPolicy::default(),
            mode: LoopMode::default(),
            allow_weaker_mode: false,
            endpoints: EndpointMode::default(),
            tool_prefix: ToolPrefix::default(),
            policies: Vec::new(),
            adapters: Vec::new(),
            verifier: VerifierSettings::default(),
            judge: JudgeSettings::default(),
            servers: BTreeMap::new(),
            client_config: None,
        }
    }
}

impl Config {
    /// Loads the config file if one is given, then applies the environment.
    pub fn load(path: Option<&Path>) -> Result<Self, Vec<Diagnostic>> {
        let mut config = match path {
            Some(path) => Self::from_file(path)?,
            None => Self::default(),
        };
        config.apply_env(|name| std::env::var(name).ok()).map_err(|refused| {
            vec![Diagnostic::whole_file(Path::new("<environment>"), refused.to_string())]
        })?;
        Ok(config)
    }

    fn from_file(path: &Path) -> Result<Self, Vec<Diagnostic>> {
        refuse_unsafe_permissions(path).map_err(|d| vec![d])?;
        let source = SourceFile::read(path).map_err(|d| vec![d])?;
        let (raw, mut errors) = toml_doc::load_partial::<RawConfig>(&source);
        if let Some(raw) = &raw {
            errors.extend(validate(raw, &source));
        }
        let raw = match raw {
            Some(raw) if errors.is_empty() => raw,
            _ => {
                errors.sort_by_key(|d| (d.line, d.col));
                return Err(errors);
            }
        };
        let base = path.parent().unwrap_or(Path::new("."));
        let resolve = |p: &PathBuf| if p.is_absolute() { p.clone() } else { base.join(p) };
        let defaults = Self::default();
        Ok(Self {
            data_dir: raw.data_dir.as_ref().map(resolve).or(defaults.data_dir),
            state: match &raw.state {
                Some(url) => StateLocation::Postgres {
                    url: url.get_ref().clone(),
                    password_file: raw
                        .state_password_file
                        .as_ref()
                        .map(|file| resolve(file.get_ref())),
                },
                None => StateLocation::DataFolder,
            },
            central_policy: raw.central_policy.unwrap_or_default(),
            mode: raw.mode.unwrap_or_default(),
            allow_weaker_mode: raw.allow_weaker_mode,
            endpoints: raw.endpoints.unwrap_or_default(),
            tool_prefix: raw.tool_prefix.unwrap_or_default(),
            policies: raw.policies.iter().map(resolve).collect(),
            adapters: raw.adapters.iter().map(resolve).collect(),
            verifier: raw.verifier.map(toml::Spanned::into_inner).unwrap_or_default(),
            judge: raw.judge.unwrap_or_default(),
            servers: raw.servers.into_iter().map(|(name, s)| (name, s.into_inner())).collect(),
            client_config: raw.client_config.as_ref().map(resolve),
        })
    }

    /// Applies environment overrides read through `var`.
    pub fn apply_env(
        &mut self,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<(), EnvOverrideError> {
        if let Some(value) = var(ENDPOINT_MODE_ENV) {
            self.endpoints = value
                .parse()
                .map_err(|why| EnvOverrideError::BadValue { variable: ENDPOINT_MODE_ENV, why })?;
        }
        if let Some(value) = var(TOOL_PREFIX_ENV) {
            self.tool_prefix = value
                .parse()
                .map_err(|why| EnvOverrideError::BadValue { variable: TOOL_PREFIX_ENV, why })?;
        }
        if let Some(value) = var(LOOP_MODE_ENV) {
            let mode = value
                .parse()
                .map_err(|why| EnvOverrideError::BadValue { variable: LOOP_MODE_ENV, why })?;
            self.override_mode(mode, LOOP_MODE_ENV).map_err(EnvOverrideError::Weaker)?;
        }
        Ok(())
    }

    /// The safety-loop mode in force.
    pub fn mode(&self) -> LoopMode {
        self.mode
    }

    /// Sets the mode from a flag or the environment (`from` names which).
    /// Either may make protection stricter than the config file says, but
    /// weaker only when the file itself allows it: whoever controls a
    /// process's environment or arguments (an agent starting a shell, a
    /// client config it can edit) is not the owner of the file.
    pub fn override_mode(
        &mut self,
        mode: LoopMode,
        from: &'static str,
    ) -> Result<(), WeakerModeRefused> {
        if mode.strictness() < self.mode.strictness() && !self.allow_weaker_mode {
            return Err(WeakerModeRefused { from, asked: mode, configured: self.mode });
        }
        self.mode = mode;
        Ok(())
    }
}

/// Why an environment override was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvOverrideError {
    #[error("{variable}: {why}")]
    BadValue { variable: &'static str, why: String },
    #[error(transparent)]
    Weaker(WeakerModeRefused),
}

/// A flag or the environment asked for less protection than the config
/// file sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeakerModeRefused {
    pub from: &'static str,
    pub asked: LoopMode,
    pub configured: LoopMode,
}

impl std::fmt::Display for WeakerModeRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} asks for safety-loop mode '{}', weaker than the configured '{}': only stricter modes may be set there \
             (a config file that should allow it says allow_weaker_mode = true)",
            self.from,
            self.asked.name(),
            self.configured.name()
        )
    }
}

impl std::error::Error for WeakerModeRefused {}

/// Rules serde cannot express, each reported at the table it concerns.
fn validate(raw: &RawConfig, source: &SourceFile) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    if let Some(url) = &raw.state
        && let Some(problem) = state_url_problem(url.get_ref())
    {
        errors.push(source.at(url.span(), format!("state {problem}")));
    }
    if let (Some(file), None) = (&raw.state_password_file, &raw.state) {
        errors.push(source.at(
            file.span(),
            "state_password_file is set but state is not: the password is for a state database",
        ));
    }
    if let Some(verifier) = &raw.verifier {
        validate_verifier(verifier.get_ref(), verifier.span(), source, &mut errors);
    }
    for (name, server) in &raw.servers {
        if let Some(message) =
            server_name_problem(name).or_else(|| server_settings_problem(server.get_ref()))
        {
            errors.push(source.at(server.span(), format!("servers.{name} {message}")));
        }
    }
    errors
}

/// What is wrong with a `state` URL, if anything. The URL itself is never
/// repeated: it may hold a password.
fn state_url_problem(url: &str) -> Option<&'static str> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Some(
            "must be a postgres:// URL (leave it out to keep the state in the data folder)",
        );
    }
    match url.parse::<postgres::Config>() {
        Err(_) => Some("is not a connection URL the PostgreSQL client can read"),
        Ok(config) if config.get_password().is_some() => Some(
            "holds a password: keep it out of the config file, in state_password_file or SAFETY_DONGLE_STATE_PASSWORD",
        ),
        Ok(_) => None,
    }
}

/// What is wrong with a downstream server's name, if anything: its
/// operations are named `<server>__<tool>`.
fn server_name_problem(name: &str) -> Option<String> {
    let fits = crate::protocol::registry::is_snake_case(name) && !name.contains("__");
    (!fits).then(|| "has a name that is not lower_snake_case without '__' (its operations are named <server>__<tool>)".into())
}

/// What is wrong with how a downstream server is reached or called, if
/// anything.
pub fn server_settings_problem(settings: &ServerSettings) -> Option<String> {
    let message = match (&settings.command, &settings.url) {
        (Some(_), Some(_)) => "sets both command and url; choose one transport",
        (None, None) => "needs either command (stdio) or url (streamable HTTP)",
        (Some(command), None) if command.is_empty() => "has an empty command",
        (None, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => {
            "has a url that is not http:// or https://"
        }
        _ if settings.timeout_secs == 0 => "timeout_secs must be at least 1",
        _ if settings.max_retries > MAX_RETRIES => {
            return Some(format!("max_retries must be at most {MAX_RETRIES}"));
        }
        _ if !(1..=MAX_RETRY_BASE_MS).contains(&settings.retry_base_ms) => {
            return Some(format!("retry_base_ms must be between 1 and {MAX_RETRY_BASE_MS}"));
        }
        _ => return None,
    };
    Some(message.into())
}

fn validate_verifier(
    verifier: &VerifierSettings,
    verifier_at: std::ops::Range<usize>,
    source: &SourceFile,
    errors: &mut Vec<Diagnostic>,
) {
    if verifier.channels.is_empty() {
        errors.push(
            source.at(verifier_at.clone(), "verifier.channels must name at least one channel"),
        );
    }
    match &verifier.command {
        Some(command) if command.first().is_none_or(String::is_empty) => {
            errors
                .push(source.at(verifier_at.clone(), "verifier.command must start with a program"));
        }
        None if verifier.channels.contains(&Channel::Command) => errors.push(source.at(
            verifier_at.clone(),
            "verifier.channels lists \"command\" but verifier.command is not set",
        )),
        _ => {}
    }
    for (key, value) in [
        ("challenge_ttl_secs", verifier.challenge_ttl_secs),
        ("approval_timeout_secs", verifier.approval_timeout_secs),
    ] {
        if value == 0 {
            errors
                .push(source.at(verifier_at.clone(), format!("verifier.{key} must be at least 1")));
        }
    }
}

/// Refuses files that users other than the owner can write: anyone who can
/// edit the dongle's configuration can switch its protection off.
pub fn refuse_unsafe_permissions(path: &Path) -> Result<(), Diagnostic> {
    match crate::platform::writable_by_others(path) {
        Some(problem) => Err(Diagnostic::whole_file(path, problem)),
        None => Ok(()),
    }
}

/// Retries after the first attempt, unless configured otherwise.
const DEFAULT_MAX_RETRIES: u32 = 3;
/// The first backoff delay, unless configured otherwise.
const DEFAULT_RETRY_BASE: Duration = Duration::from_millis(500);
/// The most retries a configuration may ask for.
pub const MAX_RETRIES: u32 = 10;
/// The longest first backoff delay a configuration may ask for, in ms.
pub const MAX_RETRY_BASE_MS: u64 = 60_000;

/// How often, and how patiently, a call safe to repeat is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts after the first.
    pub max_retries: u32,
    /// The first backoff delay; each retry doubles it.
    pub base: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self { max_retries: DEFAULT_MAX_RETRIES, base: DEFAULT_RETRY_BASE }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn write_config(text: &str) -> tempfile::NamedTempFile {
        let mut file = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        file
    }

    #[test]
    fn a_full_config_loads_with_paths_relative_to_the_file() {
        let file = write_config(
            "data_dir = \"state\"\nmode = \"monitoring\"\nendpoints = \"all\"\npolicies = [\"p/default.toml\"]\n\
             [verifier]\nchannels = [\"command\"]\ncommand = [\"/bin/echo\"]\n\
             [servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\n",
        );
        let config = Config::from_file(file.path()).unwrap();
        let base = file.path().parent().unwrap();
        assert_eq!(config.data_dir, Some(base.join("state")));
        assert_eq!(config.mode, LoopMode::Monitoring);
        assert_eq!(config.endpoints, EndpointMode::All);
        assert_eq!(config.policies, vec![base.join("p/default.toml")]);
        assert_eq!(config.verifier.channels, vec![Channel::Command]);
        assert_eq!(config.servers["fs"].args, vec!["-y", "x"]);
        assert_eq!(
            config.servers["fs"].retry_policy(),
            RetryPolicy::default(),
            "the HTTP adapters' retries unless set"
        );
    }

    #[test]
    fn a_servers_retries_are_bounded_like_an_adapters() {
        let retries = |lines: &str| {
            Config::from_file(
                write_config(&format!("[servers.fs]\ncommand = \"npx\"\n{lines}")).path(),
            )
        };
        let set = retries(
            "max_retries = 1\nretry_base_ms = 50\nretryable = { search = true, send = false }\n",
        )
        .unwrap();
        let fs = &set.servers["fs"];
        assert_eq!(
            fs.retry_policy(),
            RetryPolicy { max_retries: 1, base: std::time::Duration::from_millis(50) }
        );
        assert_eq!(
            (fs.retryable.get("search"), fs.retryable.get("send")),
            (Some(&true), Some(&false))
        );
        for (lines, problem) in [
            ("max_retries = 11\n", "max_retries must be at most 10"),
            ("retry_base_ms = 0\n", "retry_base_ms must be between 1 and 60000"),
        ] {
            let errors = retries(lines).unwrap_err();
            assert!(errors.iter().any(|e| e.to_string().contains(problem)), "{lines}: {errors:#?}");
        }
    }

    #[test]
    fn every_error_is_reported_with_its_line() {
        let file = write_config(
            "endpoints = \"double\"\nbogus = 1\n[verifier]\nchannels = [\"command\"]\n[servers.a]\nargs = []\n",
        );
        let errors = Config::from_file(file.path()).unwrap_err();
        let lines: Vec<usize> = errors.iter().map(|d| d.line).collect();
        assert!(lines.contains(&1) && lines.contains(&2), "{errors:#?}");
        let file = write_config("[verifier]\nchannels = [\"command\"]\n[servers.a]\nargs = []\n");
        let errors = Config::from_file(file.path()).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors[0].to_string().contains(":1:1: verifier.channels lists \"command\""));
        assert!(errors[1].to_string().contains(":3:1: servers.a needs either command"));
    }

    #[test]
    fn a_state_database_is_a_postgres_url_without_its_password() {
        let file = write_config(
            "state = \"postgres://dongle@db.example:5432/safety\"\nstate_password_file = \"pw\"\n",
        );
        let config = Config::from_file(file.path()).unwrap();
        let password_file = Some(file.path().parent().unwrap().join("pw"));
        assert_eq!(
            config.state,
            StateLocation::Postgres {
                url: "postgres://dongle@db.example:5432/safety".into(),
                password_file
            }
        );
        assert_eq!(
            Config::from_file(write_config("mode = \"enforcing\"\n").path()).unwrap().state,
            StateLocation::DataFolder
        );

        let rows = [
            ("state = \"mysql://db/x\"\n", ":1:9: state must be a postgres:// URL"),
            (
                "mode = \"enforcing\"\nstate = \"postgres://dongle:hunter2@db/x\"\n",
                ":2:9: state holds a password",
            ),
            (
                "state_password_file = \"pw\"\n",
                ":1:23: state_password_file is set but state is not",
            ),
        ];
        for (text, expected) in rows {
            let errors = Config::from_file(write_config(text).path()).unwrap_err();
            assert!(
                errors.len() == 1 && errors[0].to_string().contains(expected),
                "{text}: {errors:#?}"
            );
            assert!(
                !errors[0].to_string().contains("hunter2"),
                "the password is never repeated: {errors:#?}"
            );
        }
    }

    #[test]
    fn environment_overrides_the_file_and_bad_values_are_errors() {
        let mut config = Config::default();
        config.apply_env(|name| (name == ENDPOINT_MODE_ENV).then(|| "single".to_string())).unwrap();
        assert_eq!(config.endpoints, EndpointMode::Single);
        let err = config
            .apply_env(|name| (name == LOOP_MODE_ENV).then(|| "relaxed".to_string()))
            .unwrap_err();
        assert!(err.to_string().contains("MCPAQL_SAFETY_LOOP"), "{err}");
    }

    #[test]
    fn the_tool_prefix_comes_from_the_environment_then_the_file_and_is_checked() {
        let file = write_config("tool_prefix = \"dongle_\"\n");
        let mut config = Config::from_file(file.path()).unwrap();
        assert_eq!(config.tool_prefix.as_str(), "dongle_");
        config.apply_env(|name| (name == TOOL_PREFIX_ENV).then(|| "github_".to_string())).unwrap();
        assert_eq!(config.tool_prefix.as_str(), "github_");
        config.apply_env(|name| (name == TOOL_PREFIX_ENV).then(String::new)).unwrap();
        assert_eq!(config.tool_prefix.as_str(), "", "an empty variable means no prefix");
        let err = config
            .apply_env(|name| (name == TOOL_PREFIX_ENV).then(|| "GitHub".to_string()))
            .unwrap_err();
        assert!(
            err.to_string().contains("MCP_AQL_TOOL_PREFIX: tool prefix 'GitHub' must be"),
            "{err}"
        );
        let errors = Config::from_file(
            write_config("mode = \"monitoring\"\ntool_prefix = \"no-dashes_\"\n").path(),
        )
        .unwrap_err();
        assert!(
            errors
                .iter()
                .any(|d| d.line == 2 && d.to_string().contains("must be lowercase letters")),
            "{errors:#?}"
        );
    }

    /// One row per (file mode, allowed, asked): whether the override holds.
    #[test]
    fn flags_and_environment_only_tighten_unless_the_file_allows_weakening() {
        use LoopMode::*;
        let rows = [
            (Enforcing, false, Disabled, false),
            (Enforcing, false, Monitoring, false),
            (Enforcing, false, Logging, false),
            (Enforcing, false, Enforcing, true),
            (Monitoring, false, Enforcing, true),
            (Monitoring, false, Logging, false),
            (Logging, false, Monitoring, true),
            (Disabled, false, Logging, true),
            (Enforcing, true, Disabled, true),
            (Monitoring, true, Disabled, true),
        ];
        for (configured, allowed, asked, holds) in rows {
            let mut config =
                Config { mode: configured, allow_weaker_mode: allowed, ..Config::default() };
            let result =
                config.apply_env(|name| (name == LOOP_MODE_ENV).then(|| asked.name().to_owned()));
            assert_eq!(
                result.is_ok(),
                holds,
                "{configured:?} allowed={allowed} asked {asked:?}: {result:?}"
            );
            assert_eq!(config.mode, if holds { asked } else { configured });
        }
        let mut config = Config::default();
        let refused = config.override_mode(Disabled, "--mode").unwrap_err();
        assert!(refused.to_string().contains("--mode asks for safety-loop mode 'disabled', weaker than the configured 'enforcing'"), "{refused}");
    }

    #[test]
    fn the_file_decides_whether_weakening_is_allowed() {
        let file = write_config("mode = \"enforcing\"\nallow_weaker_mode = true\n");
        assert!(Config::from_file(file.path()).unwrap().allow_weaker_mode);
        let file = write_config("mode = \"monitoring\"\n");
        let config = Config::from_file(file.path()).unwrap();
        assert!(!config.allow_weaker_mode);
        assert_eq!(config.mode, LoopMode::Monitoring);
    }

    #[cfg(unix)]
    #[test]
    fn group_writable_files_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let file = write_config("mode = \"enforcing\"\n");
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o664)).unwrap();
        let errors = Config::from_file(file.path()).unwrap_err();
        assert!(errors[0].message.contains("writable by group or others"));
    }
}

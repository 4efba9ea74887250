//! The dongle's end of the private pipe to `safety-dongle-verifier`.
//!
//! One verifier process per request, spawned with `--stdio`; the request
//! goes to its stdin, events come back on its stdout, its stderr is
//! discarded (nothing it prints can reach a log). For a code, only the
//! salted hash ever arrives. The caller waits only until the request is
//! shown (or could not be); a dialog left open, or an approval still
//! waiting for its human, is followed by a background task, so nothing
//! blocks the server.
//!
//! An approval becomes an [`Approved`] value only here, from the
//! verifier's `approve` answer: no MCP input can produce one.

use crate::store::records::CodeHash;
use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader},
    process::{ChildStdout, Command},
    sync::oneshot,
};

use verifier_protocol::{Channel, Event, Kind, MAX_EVENT_BYTES, Request, Tier, VERSION};

use crate::{config::VerifierSettings, platform};

// Every action a door accepts must reach a human whole when one is asked
// about it: a tool call with a file's content here, a hooked call's
// payload where the hook defines its limit, and an MCP request (its
// frame, checked in the tests below).
const _: () = assert!(crate::analysis::MAX_TOOL_CALL_BYTES <= verifier_protocol::MAX_ACTION_BYTES);
/// How long a request may take to be shown (a command channel may be slow).
const SHOW_TIMEOUT: Duration = Duration::from_secs(30);

pub const VERIFIER_PROGRAM: &str = "safety-dongle-verifier";

/// Proof that a human approved one request through the verifier.
#[derive(Debug)]
pub struct Approved {
    approval_id: String,
}

impl Approved {
    pub fn approval_id(&self) -> &str {
        &self.approval_id
    }

    /// A proof for the board's own tests, which have no verifier.
    #[cfg(test)]
    pub(crate) fn for_tests(approval_id: &str) -> Self {
        Self { approval_id: approval_id.to_owned() }
    }
}

/// A human's answer to an approval request.
#[derive(Debug)]
pub enum Decision {
    Approve(Approved),
    Deny,
    TimedOut,
}

/// Where a request was shown, or why it could not be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    On(Channel),
    Nowhere(Vec<String>),
}

/// The result of asking for a code to be shown.
#[derive(Debug)]
pub struct CodeOutcome {
    /// What a typed code is checked against.
    pub hash: Option<CodeHash>,
    pub shown: Shown,
}

/// The result of asking for an approval: whether it was shown, and the
/// human's answer to come.
pub struct ApprovalTicket {
    pub shown: Shown,
    pub decision: Option<oneshot::Receiver<Decision>>,
}

/// What the human is asked about.
pub struct HumanRequest<'a> {
    pub id: &'a str,
    pub agent: &'a str,
    /// For codes.
    pub tier: Option<Tier>,
    pub reason: &'a str,
    pub action: &'a str,
    pub expires_at: &'a str,
    pub timeout_secs: u64,
}

/// Why no verifier can be asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifierUnavailable {
    #[error(
        "no safety-dongle-verifier next to safety-dongle, and verifier.program is not set (PATH is never searched)"
    )]
    NotFound,
    #[error("refusing the verifier {path}: {why}")]
    Untrusted { path: String, why: String },
}

/// How to reach the verifier.
#[derive(Debug, Clone)]
pub struct VerifierLink {
    program: PathBuf,
    channels: Vec<Channel>,
    command: Option<Vec<String>>,
}

impl VerifierLink {
    pub fn new(program: PathBuf, channels: Vec<Channel>, command: Option<Vec<String>>) -> Self {
        Self { program, channels, command }
    }

    /// The link the settings describe, if its program can be trusted.
    pub fn from_settings(settings: &VerifierSettings) -> Result<Self, VerifierUnavailable> {
        Self::locate(settings.program.as_deref())
            .map(|program| Self::new(program, settings.channels.clone(), settings.command.clone()))
    }

    /// The same link without the terminal channel, if any channel remains:
    /// for a code that must reach a human by another way than the terminal
    /// asking for it (whoever drives that terminal would read it there).
    pub fn out_of_band(&self) -> Option<Self> {
        let channels: Vec<Channel> =
            self.channels.iter().copied().filter(|c| *c != Channel::Terminal).collect();
        (!channels.is_empty()).then(|| Self { channels, ..self.clone() })
    }

    /// The configured program, else the verifier next to this executable;
    /// never one found on `PATH`, where anyone who can prepend a folder
    /// could plant a verifier that approves everything and picks its own
    /// codes. The file must be trustworthy by the platform's own means
    /// ([`platform::trust_problem`]): whoever can replace it answers every
    /// approval.
    pub fn locate(configured: Option<&Path>) -> Result<PathBuf, VerifierUnavailable> {
        let path = match configured {
            Some(path) => path.to_path_buf(),
            None => {
                let beside = std::env::current_exe().ok().map(|exe| {
                    exe.with_file_name(format!(
                        "{VERIFIER_PROGRAM}{}",
                        std::env::consts::EXE_SUFFIX
                    ))
                });
                beside.filter(|p| p.is_file()).ok_or(VerifierUnavailable::NotFound)?
            }
        };
        match platform::trust_problem(&path) {
            Some(why) => {
                Err(VerifierUnavailable::Untrusted { path: path.display().to_string(), why })
            }
            None => Ok(path),
        }
    }

    fn request_line(&self, kind: Kind, request: &HumanRequest<'_>) -> String {
        Request {
            version: VERSION,
            kind,
            id: request.id.to_owned(),
            agent: request.agent.to_owned(),
            tier: request.tier,
            reason: request.reason.to_owned(),
            action: request.action.to_owned(),
            expires_at: request.expires_at.to_owned(),
            timeout_secs: request.timeout_secs,
            channels: self.channels.clone(),
            command: self.command.clone(),
        }
        .line()
    }

    async fn spawn(
        &self,
        line: &str,
    ) -> Result<(tokio::process::Child, BufReader<ChildStdout>), String> {
        // A minimal environment: the verifier needs the desktop, never the
        // dongle's credentials (the state's password among them).
        let mut child = Command::new(&self.program)
            .arg("--stdio")
            .env_clear()
            .envs(verifier_protocol::environment::for_reaching_humans(std::env::vars_os()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!(
                    "verifier: cannot start {}: {}",
                    self.program.display(),
                    crate::diagnostics::io_reason(&e)
                )
            })?;
        let mut stdin = child.stdin.take().ok_or("verifier: no stdin")?;
        stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|_| "verifier: the request could not be sent".to_owned())?;
        drop(stdin);
        let stdout = child.stdout.take().ok_or("verifier: no stdout")?;
        Ok((child, BufReader::new(stdout)))
    }

    /// Asks the verifier to generate and show a code.
    pub async fn show_code(&self, request: &HumanRequest<'_>) -> CodeOutcome {
        let (mut child, mut events) = match self
            .spawn(&self.request_line(Kind::Code, request))
            .await
        {
            Ok(spawned) => spawned,
            Err(error) => return CodeOutcome { hash: None, shown: Shown::Nowhere(vec![error]) },
        };
        let mut hash = None;
        let shown = tokio::time::timeout(SHOW_TIMEOUT, async {
            loop {
                let Some(event) = next_event(&mut events).await else {
                    return Shown::Nowhere(vec![
                        "verifier: exited without showing the code".into(),
                    ]);
                };
                match event {
                    Event::Hash { salt, hash: salted } => {
                        hash = Some(CodeHash { salt, hash: salted })
                    }
                    Event::Shown { channel } => return Shown::On(channel),
                    Event::Unshown { errors } => return Shown::Nowhere(errors),
                    Event::Error { message } => {
                        return Shown::Nowhere(vec![format!("verifier: {message}")]);
                    }
                    Event::Decision { .. } => {
                        return Shown::Nowhere(vec![
                            "verifier: answered a code request with a decision".into(),
                        ]);
                    }
                }
            }
        })
        .await
        .unwrap_or_else(|_| {
            Shown::Nowhere(vec!["verifier: no channel showed the code in time".into()])
        });
        if matches!(shown, Shown::Nowhere(_)) {
            let _ = child.start_kill();
        }
        // Reap the process whenever its dialog closes.
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        CodeOutcome { hash, shown }
    }

    /// Asks a human to approve or deny.
    pub async fn ask_approval(&self, request: &HumanRequest<'_>) -> ApprovalTicket {
        let (mut child, mut events) =
            match self.spawn(&self.request_line(Kind::Approval, request)).await {
                Ok(spawned) => spawned,
                Err(error) => {
                    return ApprovalTicket { shown: Shown::Nowhere(vec![error]), decision: None };
                }
            };
        let shown = tokio::time::timeout(SHOW_TIMEOUT, async {
            match next_event(&mut events).await {
                Some(Event::Shown { channel }) => Shown::On(channel),
                Some(Event::Unshown { errors }) => Shown::Nowhere(errors),
                Some(Event::Error { message }) => {
                    Shown::Nowhere(vec![format!("verifier: {message}")])
                }
                _ => Shown::Nowhere(vec!["verifier: exited without showing the request".into()]),
            }
        })
        .await
        .unwrap_or_else(|_| {
            Shown::Nowhere(vec!["verifier: no channel showed the request in time".into()])
        });
        if let Shown::Nowhere(_) = shown {
            let _ = child.start_kill();
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
            return ApprovalTicket { shown, decision: None };
        }
        let (answer, decision) = oneshot::channel();
        let approval_id = request.id.to_owned();
        let limit = Duration::from_secs(request.timeout_secs.saturating_add(5));
        tokio::spawn(async move {
            let event = tokio::time::timeout(limit, next_event(&mut events)).await.ok().flatten();
            // Only an explicit approve approves; silence is a timeout and
            // anything else a deny.
            let outcome = match event {
                Some(Event::Decision { decision: verifier_protocol::Decision::Approve }) => {
                    Decision::Approve(Approved { approval_id })
                }
                Some(Event::Decision { decision: verifier_protocol::Decision::Timeout }) | None => {
                    Decision::TimedOut
                }
                Some(_) => Decision::Deny,
            };
            let _ = answer.send(outcome);
            let _ = child.start_kill();
            let _ = child.wait().await;
        });
        ApprovalTicket { shown, decision: Some(decision) }
    }
}

/// The next event line, if the verifier sends one that reads as an event
/// of this protocol version; `None` at end of output or on any other line
/// (the caller then treats the verifier as gone).
async fn next_event<R: AsyncRead + Unpin>(events: &mut BufReader<R>) -> Option<Event> {
    let mut line = Vec::new();
    let read = (&mut *events).take(MAX_EVENT_BYTES).read_until(b'\n', &mut line).await.ok()?;
    if read == 0 {
        return None;
    }
    Event::parse(&line).ok()
}

#[cfg(test)]
mod tests {
    use crate::protocol::limits::Limits;

    /// An MCP request's action is never longer than the request itself.
    #[test]
    fn every_mcp_request_fits_a_request_to_the_verifier() {
        assert!(Limits::default().max_request_size <= verifier_protocol::MAX_ACTION_BYTES);
    }
}

//! `safety-dongle judge`: the resident process that decides hook calls
//! (`judge`). It compiles the policy and opens the state once, then
//! serves every hook of its setup over its private socket, a task per
//! connection, deciding each call with the hook's own [`Deciding`] (each
//! call its own session, waits for a human bounded by the asking hook's
//! deadline, and cancelled when that hook goes away).
//!
//! One judge per setup: the first to lock the socket's lock file listens,
//! any other exits at once, quietly. Every call's stamp is checked against
//! the files the judge loaded: a call made under other files is not
//! decided here (the hook decides it in-process) and the judge reloads
//! through `serve`'s [`Reloader`]; a setting that only a restart applies
//! (the verifier, the mode, the state) makes it exit instead, and the next
//! hook starts a new one. It exits after `[judge] idle_secs` without a
//! call, and as soon as its socket is removed or replaced (nobody can
//! reach it any more); calls it took are decided before it goes.

use std::process::ExitCode;

use super::JudgeArgs;

#[cfg(not(unix))]
pub(super) fn run(_: JudgeArgs) -> ExitCode {
    eprintln!(
        "safety-dongle: the judge needs Unix domain sockets; on this platform every hook decides in-process"
    );
    ExitCode::from(1)
}

#[cfg(unix)]
pub(super) fn run(args: JudgeArgs) -> ExitCode {
    match serving::serve(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("safety-dongle judge: {why}");
            ExitCode::from(1)
        }
    }
}

#[cfg(unix)]
mod serving {
    use std::{
        os::unix::fs::{MetadataExt, PermissionsExt},
        sync::{
            Arc, Mutex,
            atomic::{AtomicBool, AtomicUsize, Ordering},
        },
        time::{Duration, Instant},
    };

    use tokio::{
        io::AsyncReadExt,
        net::{UnixListener, UnixStream},
    };
    use tokio_util::sync::CancellationToken;

    use crate::{
        config::Config,
        diagnostics::Diagnostic,
        hook::{answer, harness::Harness, reading::MAX_PAYLOAD_BYTES},
        judge::{
            address::{JudgeAddress, JudgeSetup, freshness},
            wire::{self, MAX_REQUEST_BYTES, Reply, Request, VERSION},
        },
    };

    use super::super::{
        JudgeArgs,
        assemble::{build_loop_core, policy_reloader},
        hook::{Deciding, HookCall},
        reload::Reloader,
    };

    /// How often an idle judge looks whether it should exit.
    const LOOK_EVERY: Duration = Duration::from_secs(1);

    /// How long a hook may take to send its request once connected.
    const REQUEST_WITHIN: Duration = Duration::from_secs(5);

    /// A stamp no hook sends: the files changed while the judge read
    /// them, so the next call makes it read them again.
    const UNSETTLED: &str = "";

    /// A running judge.
    struct Judge {
        args: JudgeArgs,
        setup: JudgeSetup,
        deciding: Arc<Deciding>,
        reloader: Arc<Reloader>,
        /// The [`freshness`] of the files its policy was loaded from.
        stamp: Mutex<String>,
        reloading: AtomicBool,
        /// Set when it must exit: no new call is taken.
        stopping: AtomicBool,
        /// Connections being served.
        serving: AtomicUsize,
        last_call: Mutex<Instant>,
        uid: u32,
    }

    fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        // Plain values replaced whole: a panic elsewhere leaves them usable.
        mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The configuration a judge decides with: the config file and the
    /// environment, then its command line; no adapters or servers.
    fn configure(args: &JudgeArgs) -> Result<Config, Vec<Diagnostic>> {
        let mut config = args.config.load_or_diagnose()?;
        if !args.policies.is_empty() {
            config.policies = args.policies.clone();
        }
        config.adapters.clear();
        config.servers.clear();
        config.client_config = None;
        Ok(config)
    }

    /// Reads the configuration and hands it to `load`, with the stamp of
    /// the files it came from, or [`UNSETTLED`] when they changed while
    /// they were read (the stamps taken before and after differ).
    fn read_settled<T>(
        args: &JudgeArgs,
        setup: &JudgeSetup,
        load: impl FnOnce(Result<Config, Vec<Diagnostic>>) -> T,
    ) -> (T, String) {
        let policies = |config: &Result<Config, Vec<Diagnostic>>| match config {
            Ok(config) => config.policies.clone(),
            Err(_) => Vec::new(),
        };
        let before = freshness(setup.config_file.as_deref(), &policies(&configure(args)));
        let config = configure(args);
        let read = policies(&config);
        let loaded = load(config);
        let after = freshness(setup.config_file.as_deref(), &read);
        (loaded, if before == after { after } else { UNSETTLED.to_owned() })
    }

    pub(super) fn serve(args: &JudgeArgs) -> Result<(), String> {
        let first = configure(args).map_err(|errors| Diagnostic::one_line(&errors))?;
        let data_dir = first.data_dir.clone().ok_or("no data folder: pass --data-dir")?;
        let setup = JudgeSetup {
            data_dir,
            config_file: args.config.config.clone(),
            policies: args.policies.clone(),
        }
        .canonical();
        let address = setup.address().map_err(|error| format!("no address: {error}"))?;
        crate::platform::create_private_dir(&address.folder)
            .map_err(|error| format!("{}: {error}", address.folder.display()))?;
        if let Some(problem) = crate::platform::secret_exposed(&address.folder) {
            return Err(format!("{}: {problem}", address.folder.display()));
        }
        let lock_file = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&address.lock)
            .map_err(|error| format!("{}: {error}", address.lock.display()))?;
        if lock_file.try_lock().is_err() {
            // Another judge serves this setup (two hooks started one each).
            return Ok(());
        }
        let (loaded, stamp) = read_settled(args, &setup, |config| {
            let config = config.map_err(|errors| Diagnostic::one_line(&errors))?;
            let core = build_loop_core(&config).map_err(|error| error.to_string())?;
            Ok::<_, String>((config, core))
        });
        let (config, core) = loaded?;
        let deciding = Arc::new(Deciding::new(Arc::new(core)));
        let reloader = policy_reloader(deciding.core.clone(), deciding.gate.clone(), &config);
        let judge = Arc::new(Judge {
            args: args.clone(),
            setup,
            deciding,
            reloader: reloader.clone(),
            stamp: Mutex::new(stamp),
            reloading: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            serving: AtomicUsize::new(0),
            last_call: Mutex::new(Instant::now()),
            uid: nix::unistd::geteuid().as_raw(),
        });
        let idle = Duration::from_secs(config.judge.idle_secs.max(1));
        let runtime = super::super::runtime().ok_or("no async runtime")?;
        let served = runtime.block_on(listen(judge.clone(), &address, idle));
        reloader.forget();
        runtime.shutdown_timeout(Duration::from_secs(1));
        drop(lock_file);
        served
    }

    /// Listens until the judge must exit, then lets the calls it took
    /// finish.
    async fn listen(
        judge: Arc<Judge>,
        address: &JudgeAddress,
        idle: Duration,
    ) -> Result<(), String> {
        // The lock is held: whatever is at the socket's path is a dead
        // judge's.
        let _ = std::fs::remove_file(&address.socket);
        let listener = UnixListener::bind(&address.socket)
            .map_err(|error| format!("{}: {error}", address.socket.display()))?;
        let _ = std::fs::set_permissions(&address.socket, std::fs::Permissions::from_mode(0o600));
        let ours = std::fs::metadata(&address.socket).map(|m| m.ino()).ok();
        tokio::spawn(judge.reloader.clone().follow_central());
        let mut look = tokio::time::interval(LOOK_EVERY);
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        judge.serving.fetch_add(1, Ordering::SeqCst);
                        tokio::spawn(serve_connection(judge.clone(), stream));
                    }
                    Err(error) => tracing::warn!(%error, "a connection could not be taken"),
                },
                _ = look.tick() => {
                    let idle_now = judge.serving.load(Ordering::SeqCst) == 0
                        && lock(&judge.last_call).elapsed() >= idle;
                    let unreachable =
                        std::fs::metadata(&address.socket).map(|m| m.ino()).ok() != ours;
                    if idle_now || unreachable || judge.stopping.load(Ordering::SeqCst) {
                        break;
                    }
                }
            }
        }
        judge.stopping.store(true, Ordering::SeqCst);
        if std::fs::metadata(&address.socket).map(|m| m.ino()).ok() == ours {
            let _ = std::fs::remove_file(&address.socket);
        }
        drop(listener);
        while judge.serving.load(Ordering::SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }

    /// Counts a connection as served until dropped.
    struct Serving(Arc<Judge>);

    impl Drop for Serving {
        fn drop(&mut self) {
            *lock(&self.0.last_call) = Instant::now();
            self.0.serving.fetch_sub(1, Ordering::SeqCst);
        }
    }

    async fn serve_connection(judge: Arc<Judge>, stream: UnixStream) {
        let _serving = Serving(judge.clone());
        match stream.peer_cred() {
            Ok(peer) if peer.uid() == judge.uid => {}
            // Someone else's process: nothing is said to it.
            _ => return,
        }
        let (mut reading, mut writing) = stream.into_split();
        let received = tokio::time::timeout(REQUEST_WITHIN, async {
            let request: Request = wire::receive(&mut reading, MAX_REQUEST_BYTES).await?;
            let payload = wire::read_frame(&mut reading, MAX_PAYLOAD_BYTES).await?;
            Ok::<_, wire::WireError>((request, payload))
        });
        let refuse = |why: String| Reply::Refused { version: VERSION, why };
        let (request, payload) = match received.await {
            Ok(Ok(received)) => received,
            Ok(Err(error)) => {
                let _ = wire::send(&mut writing, &refuse(error.to_string())).await;
                return;
            }
            Err(_) => return,
        };
        let taken = if request.version != VERSION {
            Err(refuse(format!("protocol version {} is not {VERSION}", request.version)))
        } else if judge.stopping.load(Ordering::SeqCst) {
            Err(refuse("this judge is stopping".into()))
        } else if request.stamp != *lock(&judge.stamp) {
            judge.clone().reload_soon();
            Err(Reply::Stale { version: VERSION })
        } else if request.harness.adapter().is_none() {
            Err(refuse(format!("no adapter for {}", request.harness)))
        } else {
            Ok(())
        };
        if let Err(reply) = taken {
            let _ = wire::send(&mut writing, &reply).await;
            return;
        }
        if wire::send(&mut writing, &Reply::Accepted { version: VERSION }).await.is_err() {
            // The hook is gone before anything was decided.
            return;
        }
        let cancelled = CancellationToken::new();
        let mut deciding =
            tokio::task::spawn_blocking(decide(judge.clone(), request, payload, cancelled.clone()));
        // The hook sends nothing more: a read that returns means it has
        // stopped waiting, and so does any wait for a human on its call.
        let decided = tokio::select! {
            decided = &mut deciding => decided,
            _ = reading.read_u8() => {
                cancelled.cancel();
                deciding.await
            }
        };
        let verdict = decided.unwrap_or_else(|_| {
            answer::Verdict::Deny(
                "safety-dongle failed while evaluating this tool call, so it is refused".into(),
            )
        });
        let _ = wire::send(&mut writing, &Reply::Decided { version: VERSION, verdict }).await;
    }

    /// Decides one call as the hook would, on a thread of the blocking
    /// pool (the decision blocks on the state).
    fn decide(
        judge: Arc<Judge>,
        request: Request,
        payload: Vec<u8>,
        cancelled: CancellationToken,
    ) -> impl FnOnce() -> answer::Verdict {
        let runtime = tokio::runtime::Handle::current();
        let answer_by = tokio::time::Instant::now() + Duration::from_millis(request.wait_ms);
        move || {
            answer::answer_failing_closed(|attempt| {
                let harness: Harness = request.harness;
                let adapter = harness.adapter().ok_or(NoAdapter(harness))?;
                let (call, reading) = adapter.read(&payload)?;
                let asking = HookCall {
                    harness,
                    agent: request.agent,
                    answer_by: Some(answer_by),
                    cancelled,
                };
                Ok::<_, Undecidable>(
                    runtime.block_on(judge.deciding.decide(&asking, &call, &reading, attempt)),
                )
            })
        }
    }

    /// Why a call the judge took could not be decided: the same words as
    /// the hook's in-process refusal.
    #[derive(Debug, thiserror::Error)]
    enum Undecidable {
        #[error(transparent)]
        Payload(#[from] crate::hook::reading::PayloadError),
        #[error(transparent)]
        NoAdapter(#[from] NoAdapter),
    }

    #[derive(Debug, thiserror::Error)]
    #[error("the hook does not speak {0} yet")]
    struct NoAdapter(Harness);

    impl Judge {
        /// Reloads what the files say, once at a time, in the background:
        /// the policy through the reloader; a setting only a restart
        /// applies stops the judge.
        fn reload_soon(self: Arc<Self>) {
            if self.reloading.swap(true, Ordering::SeqCst) {
                return;
            }
            tokio::spawn(async move {
                let runtime = tokio::runtime::Handle::current();
                let judge = self.clone();
                let reloaded = tokio::task::spawn_blocking(move || {
                    read_settled(&judge.args, &judge.setup, |config| {
                        runtime.block_on(judge.reloader.reload(config))
                    })
                })
                .await;
                if let Ok((report, stamp)) = reloaded {
                    if !report.needs_restart.is_empty() {
                        tracing::info!(settings = ?report.needs_restart, "the judge exits: only a restart applies them");
                        self.stopping.store(true, Ordering::SeqCst);
                    } else if report.refused.is_empty() {
                        *lock(&self.stamp) = stamp;
                    }
                }
                self.reloading.store(false, Ordering::SeqCst);
            });
        }
    }
}

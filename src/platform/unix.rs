//! The POSIX layer: permission bits, a folder made `0700`, process groups
//! and signals. Nothing Linux-only (no `/proc`), so it holds on macOS and
//! the BSDs too.

use std::{
    os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt},
    path::Path,
    time::Duration,
};

use nix::{
    errno::Errno,
    sys::signal::{Signal, kill, killpg},
    unistd::Pid,
};

/// Why a file that users other than its owner can write must not be
/// trusted; `None` when it is fine or cannot be read (reading it then
/// fails with its own error).
pub fn writable_by_others(path: &Path) -> Option<String> {
    let mode = std::fs::metadata(path).ok()?.permissions().mode();
    (mode & 0o022 != 0).then(|| {
        format!(
            "refusing a file writable by group or others (mode {:o}); run chmod go-w on it",
            mode & 0o777
        )
    })
}

/// What exposes a file holding a secret, if anything: any access for
/// group or others.
pub fn secret_exposed(path: &Path) -> Option<String> {
    let mode = std::fs::metadata(path).ok()?.permissions().mode();
    (mode & 0o077 != 0).then(|| {
        format!("is open to group or others (mode {:o}); run chmod go-rwx on it", mode & 0o777)
    })
}

/// Creates `dir` (and its parents) readable by this user alone.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// What makes a verifier program untrustworthy, if anything: missing, not
/// a regular file, writable by group or others, or owned by someone other
/// than this user or root. Whoever can replace it answers every approval.
pub fn trust_problem(path: &Path) -> Option<String> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) => {
            return Some(format!("cannot be read ({})", crate::diagnostics::io_reason(&error)));
        }
    };
    if !metadata.is_file() {
        return Some("is not a regular file".into());
    }
    if metadata.mode() & 0o022 != 0 {
        return Some(format!(
            "is writable by group or others (mode {:o}); run chmod go-w on it",
            metadata.mode() & 0o777
        ));
    }
    let me = nix::unistd::geteuid().as_raw();
    if metadata.uid() != me && metadata.uid() != 0 {
        return Some(format!(
            "is owned by user {}, neither this user ({me}) nor root",
            metadata.uid()
        ));
    }
    None
}

/// Whether process `pid` still runs: signal 0 reaches it, or it exists but
/// belongs to someone else.
pub fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else { return false };
    !matches!(kill(Pid::from_raw(pid), None), Err(Errno::ESRCH))
}

/// This machine, as rows in a shared database name it: the host name and,
/// where the system keeps one, its machine id (two containers of one
/// image share the id but not the host name; two laptops may share a host
/// name but not the id).
pub fn machine_name() -> String {
    let host = nix::unistd::gethostname()
        .ok()
        .and_then(|name| name.into_string().ok())
        .unwrap_or_default();
    let id = ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|file| std::fs::read_to_string(file).ok())
        .unwrap_or_default();
    match id.trim() {
        "" => host,
        id => format!("{host}/{id}"),
    }
}

/// The user this process runs as: the system's name for its user id (not
/// `$USER`, which whoever starts the process sets), else the id.
pub fn user_name() -> String {
    let uid = nix::unistd::geteuid();
    nix::unistd::User::from_uid(uid)
        .ok()
        .flatten()
        .map_or_else(|| uid.to_string(), |user| user.name)
}

/// A child process with everything it starts: its own process group.
pub struct ProcessTree {
    child: tokio::process::Child,
}

impl ProcessTree {
    /// Makes the command start a process group of its own.
    pub fn prepare(command: &mut tokio::process::Command) {
        command.process_group(0);
    }

    /// Takes the spawned child of a prepared command.
    pub fn adopt(child: tokio::process::Child) -> Self {
        Self { child }
    }

    /// Ends the child and everything it started: SIGTERM to the group,
    /// then SIGKILL to whatever of it is left after `grace`.
    pub async fn terminate(mut self, grace: Duration) {
        if let Some(group) =
            self.child.id().and_then(|pid| i32::try_from(pid).ok()).map(Pid::from_raw)
        {
            let _ = killpg(group, Signal::SIGTERM);
            let _ = tokio::time::timeout(grace, self.child.wait()).await;
            // Whether the leader left in time or not, nothing of the group
            // stays: helpers it started go with it.
            let _ = killpg(group, Signal::SIGKILL);
        }
        let _ = self.child.kill().await;
    }
}

//! The Windows layer: each file's owner and access list read as SDDL and
//! judged by [`super::acl`], the data folder given its access list, and
//! downstream servers run in a job object that ends them (and all they
//! started) when it closes: when the dongle stops them or exits, however.

use std::{io, path::Path, time::Duration};

use windows_permissions::{
    constants::{SeObjectType, SecurityInformation},
    wrappers::{
        ConvertStringSecurityDescriptorToSecurityDescriptor, GetNamedSecurityInfo,
        SetNamedSecurityInfo,
    },
};

use super::acl::{self, SecurityDescriptor, Writers};

/// The owner and access list of a file or folder.
fn descriptor(path: &Path) -> io::Result<SecurityDescriptor> {
    let found = GetNamedSecurityInfo(
        path.as_os_str(),
        SeObjectType::SE_FILE_OBJECT,
        SecurityInformation::Owner | SecurityInformation::Dacl,
    )?;
    let sddl = found.as_sddl()?;
    SecurityDescriptor::parse(&sddl.to_string_lossy())
        .map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))
}

/// Why a file that users other than its owner, Administrators and SYSTEM
/// can change must not be trusted; `None` when it is fine or does not
/// exist (reading it then fails with its own error).
pub fn writable_by_others(path: &Path) -> Option<String> {
    if !path.exists() {
        return None;
    }
    match descriptor(path).map(|found| found.writers()) {
        Ok(Writers::OwnerAndAdministratorsOnly) => None,
        Ok(writers) => Some(format!(
            "refusing a file others can change: {writers}; remove their write access (icacls FILE /inheritance:r /grant:r %USERNAME%:F)"
        )),
        Err(error) => Some(format!("refusing a file whose access list cannot be read ({error})")),
    }
}

/// What exposes a file holding a secret, if anything: here, that others
/// can change it (who may read it is not checked on Windows).
pub fn secret_exposed(path: &Path) -> Option<String> {
    writable_by_others(path)
}

/// Creates `dir` (and its parents); a folder it creates gets an access
/// list for its owner (this user) alone, nothing inherited from above.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    let owner =
        descriptor(dir)?.owner.ok_or_else(|| io::Error::other("the new folder has no owner"))?;
    let private =
        ConvertStringSecurityDescriptorToSecurityDescriptor(&acl::private_folder_sddl(&owner))?;
    let dacl =
        private.dacl().ok_or_else(|| io::Error::other("the private access list did not build"))?;
    SetNamedSecurityInfo(
        dir.as_os_str(),
        SeObjectType::SE_FILE_OBJECT,
        SecurityInformation::Dacl | SecurityInformation::ProtectedDacl,
        None,
        None,
        Some(dacl),
        None,
    )
}

/// What makes a verifier program untrustworthy, if anything
/// ([`acl::verifier_problem`]).
pub fn trust_problem(path: &Path) -> Option<String> {
    if !path.is_file() {
        return Some("is not a regular file".into());
    }
    let verifier = match descriptor(path) {
        Ok(found) => found,
        Err(error) => return Some(format!("its access list cannot be read ({error})")),
    };
    let dongle_owner = std::env::current_exe()
        .ok()
        .and_then(|exe| descriptor(&exe).ok())
        .and_then(|found| found.owner);
    acl::verifier_problem(&verifier, dongle_owner.as_deref())
}

/// Windows gives no cheap, handle-free way to ask; a process is assumed to
/// run (its challenges then wait for their expiry rather than being
/// cancelled early).
pub fn process_alive(_pid: u32) -> bool {
    true
}

/// This machine, as rows in a shared database name it: its computer name.
pub fn machine_name() -> String {
    std::env::var("COMPUTERNAME").unwrap_or_default()
}

/// The user this process runs as: its account name.
pub fn user_name() -> String {
    std::env::var("USERNAME").unwrap_or_default()
}

/// A child process in a job object that kills everything in it when its
/// handle closes.
pub struct ProcessTree {
    child: tokio::process::Child,
    job: Option<win32job::Job>,
}

impl ProcessTree {
    /// Nothing to set before the start: the child joins its job right
    /// after it (a process it starts in the first instant would escape).
    pub fn prepare(_command: &mut tokio::process::Command) {}

    /// Puts the spawned child in a job of its own.
    pub fn adopt(child: tokio::process::Child) -> Self {
        let job = child.raw_handle().and_then(|handle| {
            let mut limits = win32job::ExtendedLimitInfo::new();
            limits.limit_kill_on_job_close();
            let job = win32job::Job::create_with_limit_info(&limits).ok()?;
            job.assign_process(handle as isize).ok()?;
            Some(job)
        });
        if job.is_none() {
            tracing::warn!(
                "a downstream server could not be put in a job object: what it starts may outlive it"
            );
        }
        Self { child, job }
    }

    /// Ends the child, then closes its job, which ends all it started.
    /// Windows has no polite signal to send first.
    pub async fn terminate(mut self, _grace: Duration) {
        let _ = self.child.kill().await;
        drop(self.job.take());
    }
}

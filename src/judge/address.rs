//! What a judge is called, where it listens, and whether it still decides
//! by the files a hook would decide by.
//!
//! A judge listens on a Unix domain socket in `judge/` inside the data
//! folder (made `0700`), named by a hash of everything that makes two
//! judges decide differently: this build (its version and the executable's
//! path, size and modification time, so a rebuilt binary never asks an old
//! judge), the config file's canonical path, the `--policy` list, the data
//! folder, and the environment a decision reads (`HOME`, the mode and
//! state variables, and what the verifier is started with). A hook with
//! any of them different finds another socket, or none.
//!
//! What changes while a judge runs (the config file's and the policy
//! files' content and permissions) is not in the name: the hook sends a
//! [`freshness`] stamp of them with each call, and a judge whose own stamp
//! differs does not decide (it reloads).

use std::{
    io,
    path::{Path, PathBuf},
};

use sha2::{Digest, Sha256};

use crate::{
    config::{ENDPOINT_MODE_ENV, LOOP_MODE_ENV, STATE_PASSWORD_ENV, TOOL_PREFIX_ENV},
    hex,
};

/// The folder inside the data folder that holds the judges' sockets. Short:
/// a socket's path must fit in about 100 bytes.
const FOLDER: &str = "judge";

/// Where one judge listens and who may be it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeAddress {
    /// The private folder of the sockets.
    pub folder: PathBuf,
    /// The socket.
    pub socket: PathBuf,
    /// Held (locked) by the judge listening on the socket while it runs.
    pub lock: PathBuf,
    /// Where the judge's standard error goes.
    pub log: PathBuf,
}

/// What a judge decides with, as given on its command line: the data
/// folder, the config file, the `--policy` files. [`Self::canonical`]
/// resolves them so that a hook and the judge it starts name the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeSetup {
    pub data_dir: PathBuf,
    pub config_file: Option<PathBuf>,
    pub policies: Vec<PathBuf>,
}

impl JudgeSetup {
    /// The same setup with every path absolute and, where it exists,
    /// canonical.
    pub fn canonical(&self) -> Self {
        Self {
            data_dir: canonical(&self.data_dir),
            config_file: self.config_file.as_deref().map(canonical),
            policies: self.policies.iter().map(|path| canonical(path)).collect(),
        }
    }

    /// The address of the judge for this setup, run by this executable in
    /// this environment; an error when the executable cannot be looked at
    /// (then no judge is used).
    pub fn address(&self) -> io::Result<JudgeAddress> {
        self.address_run_by(&std::env::current_exe()?)
    }

    /// The address of the judge for this setup run by `executable` (the
    /// hook's front asks the judge its full binary runs).
    pub fn address_run_by(&self, executable: &Path) -> io::Result<JudgeAddress> {
        let setup = self.canonical();
        let mut hash = Sha256::new();
        field(&mut hash, env!("CARGO_PKG_VERSION").as_bytes());
        field(&mut hash, &super::wire::VERSION.to_be_bytes());
        field(&mut hash, executable_identity(executable)?.as_bytes());
        field(&mut hash, setup.data_dir.as_os_str().as_encoded_bytes());
        match &setup.config_file {
            Some(file) => field(&mut hash, file.as_os_str().as_encoded_bytes()),
            None => field(&mut hash, b"<no config file>"),
        }
        field(&mut hash, &setup.policies.len().to_be_bytes());
        for policy in &setup.policies {
            field(&mut hash, policy.as_os_str().as_encoded_bytes());
        }
        for (name, value) in decision_environment() {
            field(&mut hash, name.as_encoded_bytes());
            field(&mut hash, value.as_encoded_bytes());
        }
        let name = hex::encode(hash.finalize().get(..8).unwrap_or_default());
        let folder = setup.data_dir.join(FOLDER);
        Ok(JudgeAddress {
            socket: folder.join(format!("{name}.sock")),
            lock: folder.join(format!("{name}.lock")),
            log: folder.join(format!("{name}.log")),
            folder,
        })
    }
}

/// The path absolute and, when it exists, canonical.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// One length-prefixed field, so that no two lists of fields hash alike.
fn field(hash: &mut Sha256, bytes: &[u8]) {
    hash.update(bytes.len().to_be_bytes());
    hash.update(bytes);
}

/// An executable as a file: its canonical path, size and modification
/// time.
fn executable_identity(executable: &Path) -> io::Result<String> {
    let exe = std::fs::canonicalize(executable)?;
    let metadata = std::fs::metadata(&exe)?;
    let modified = metadata
        .modified()?
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    Ok(format!("{}\0{}\0{modified}", exe.display(), metadata.len()))
}

/// The variables a decision depends on, sorted: the home folder (`~` in
/// commands and the user's own files), the settings the configuration
/// takes from the environment, and what the verifier and its channels are
/// started with.
fn decision_environment() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let named = ["HOME", LOOP_MODE_ENV, ENDPOINT_MODE_ENV, TOOL_PREFIX_ENV, STATE_PASSWORD_ENV]
        .into_iter()
        .filter_map(|name| std::env::var_os(name).map(|value| (name.into(), value)));
    let mut vars: Vec<_> = named
        .chain(verifier_protocol::environment::for_reaching_humans(std::env::vars_os()))
        .collect();
    vars.sort();
    vars.dedup();
    vars
}

/// A stamp of the files a decision is made by, as they are now: the
/// config file and every policy file, each by its canonical path, owner, mode and
/// content (a permission the loader refuses counts as much as a rule). A
/// file that cannot be read counts by why.
pub fn freshness(config_file: Option<&Path>, policies: &[PathBuf]) -> String {
    let mut hash = Sha256::new();
    for file in config_file.into_iter().chain(policies.iter().map(PathBuf::as_path)) {
        let file = canonical(file);
        field(&mut hash, file.as_os_str().as_encoded_bytes());
        match std::fs::metadata(&file).and_then(|metadata| Ok((metadata, std::fs::read(&file)?))) {
            Ok((metadata, content)) => {
                field(&mut hash, permissions(&metadata).as_bytes());
                field(&mut hash, &content);
            }
            Err(error) => field(&mut hash, error.kind().to_string().as_bytes()),
        }
    }
    hex::encode(&hash.finalize())
}

#[cfg(unix)]
fn permissions(metadata: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    format!("{}:{:o}", metadata.uid(), metadata.mode())
}

#[cfg(not(unix))]
fn permissions(metadata: &std::fs::Metadata) -> String {
    format!("{}", metadata.permissions().readonly())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_differs_by_what_decides_and_the_stamp_by_content_and_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let policy = dir.path().join("p.toml");
        std::fs::write(&policy, "[defaults]\n").unwrap();
        let setup = JudgeSetup {
            data_dir: dir.path().join("state"),
            config_file: None,
            policies: vec![policy.clone()],
        };
        let address = setup.address().unwrap();
        assert_eq!(address, setup.address().unwrap(), "the same setup, the same judge");
        assert!(address.socket.starts_with(dir.path().join("state").join(FOLDER)));
        let other_policies = JudgeSetup { policies: vec![], ..setup.clone() };
        let other_data = JudgeSetup { data_dir: dir.path().join("elsewhere"), ..setup.clone() };
        assert_ne!(other_policies.address().unwrap(), address);
        assert_ne!(other_data.address().unwrap(), address);

        let stamp = freshness(None, std::slice::from_ref(&policy));
        assert_eq!(stamp, freshness(None, std::slice::from_ref(&policy)));
        std::fs::write(&policy, "[defaults]\ndeny = [\"x*\"]\n").unwrap();
        let edited = freshness(None, std::slice::from_ref(&policy));
        assert_ne!(edited, stamp);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&policy, std::fs::Permissions::from_mode(0o666)).unwrap();
            assert_ne!(freshness(None, std::slice::from_ref(&policy)), edited);
        }
        std::fs::remove_file(&policy).unwrap();
        assert_ne!(freshness(None, &[policy]), edited, "a missing file counts too");
    }
}

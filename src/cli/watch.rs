//! Watching the files a serving dongle was assembled from, and reloading
//! when one changes.
//!
//! The folders holding the files are watched (not the files: editors save
//! by writing a new file and renaming it over the old one, which a watch
//! on the old file would miss), and an event counts when it names a
//! watched file or something inside a watched adapter folder. Events come
//! in bursts (truncate, write, close; or write, rename): a reload starts
//! once the files have been quiet for [`QUIET`], and what is watched is
//! worked out again after each reload, since the config file may now name
//! other files. A file half-written when the reload reads it is refused
//! like any broken file, and the next event reloads it again. The watch
//! begins after the files were first read (once the policy is in force),
//! so a file modified since then is reloaded when the watch begins.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, SystemTime},
};

use notify::{EventKind, RecursiveMode, Watcher, event::AccessKind};
use tokio::sync::mpsc;

use crate::{config::Config, diagnostics::Diagnostic};

use super::reload::Reloader;

/// How long the files must be quiet before a reload starts.
const QUIET: Duration = Duration::from_millis(15);

/// Reads the configuration again, as the process read it at start-up.
pub type Reread = Box<dyn Fn() -> Result<Config, Vec<Diagnostic>> + Send + Sync>;

/// What is watched: files by path, and folders whose every entry counts.
#[derive(Debug, Default, PartialEq, Eq)]
struct Watched {
    files: BTreeSet<PathBuf>,
    folders: BTreeSet<PathBuf>,
}

impl Watched {
    fn of(paths: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut watched = Self::default();
        for path in paths {
            let path = std::path::absolute(&path).unwrap_or(path);
            if path.is_dir() {
                watched.folders.insert(path);
            } else {
                watched.files.insert(path);
            }
        }
        watched
    }

    /// The folders to ask the OS about: each watched folder, and the folder
    /// of each watched file.
    fn folders_to_watch(&self) -> BTreeSet<PathBuf> {
        self.files
            .iter()
            .filter_map(|file| file.parent().map(Path::to_path_buf))
            .chain(self.folders.iter().cloned())
            .collect()
    }

    /// Whether a watched file, a watched folder or an entry of one was
    /// modified at or after `since` (or cannot be looked at: then it may
    /// have been).
    fn changed_since(&self, since: SystemTime) -> bool {
        let modified_since = |path: &Path| {
            std::fs::metadata(path)
                .and_then(|m| m.modified())
                .map_or(true, |modified| modified >= since)
        };
        let entries = self
            .folders
            .iter()
            .filter_map(|folder| std::fs::read_dir(folder).ok())
            .flatten()
            .flatten()
            .map(|entry| entry.path());
        self.files
            .iter()
            .chain(&self.folders)
            .cloned()
            .chain(entries)
            .any(|path| modified_since(&path))
    }

    fn names(&self, path: &Path) -> bool {
        self.files.contains(path)
            || path.parent().is_some_and(|folder| self.folders.contains(folder))
    }
}

/// Whether an event may have changed a file's content or presence.
fn may_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(notify::event::AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// Watches the files behind `reloader` (and `config_file`, when the
/// configuration came from one) and reloads on every change, until the
/// runtime ends; `read_since` is when the process began reading them, so a
/// change made before the watch was in place (its modification time is
/// not older) is reloaded as soon as it is. An error means nothing is
/// watched (the dongle runs on as it was assembled).
pub fn spawn(
    reloader: Arc<Reloader>,
    config_file: Option<PathBuf>,
    reread: Reread,
    read_since: SystemTime,
) -> notify::Result<()> {
    let (events, mut changes) = mpsc::unbounded_channel::<Vec<PathBuf>>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event
            && may_change(&event.kind)
        {
            let _ = events.send(event.paths);
        }
    })?;
    tokio::spawn(async move {
        let mut watched = Watched::default();
        let mut watching: BTreeSet<PathBuf> = BTreeSet::new();
        let mut unseen_changes = true;
        loop {
            let now = Watched::of(reloader.watched().await.into_iter().chain(config_file.clone()));
            if now != watched {
                watching = rewatch(&mut watcher, &watching, now.folders_to_watch());
                watched = now;
            }
            if std::mem::take(&mut unseen_changes) && watched.changed_since(read_since) {
                let report = reloader.reload(reread()).await;
                tracing::debug!(?report, "reloaded what changed before the watch began");
                continue;
            }
            let Some(paths) = changes.recv().await else { return };
            let mut relevant = paths.iter().any(|path| watched.names(path));
            // Quiet for QUIET: drain the rest of the burst.
            while let Ok(Some(paths)) = tokio::time::timeout(QUIET, changes.recv()).await {
                relevant |= paths.iter().any(|path| watched.names(path));
            }
            if relevant {
                let report = reloader.reload(reread()).await;
                tracing::debug!(?report, "reloaded");
            }
        }
    });
    Ok(())
}

/// Watches `wanted` instead of `watching`; a folder that cannot be watched
/// (it does not exist yet) is logged and left out.
fn rewatch(
    watcher: &mut impl Watcher,
    watching: &BTreeSet<PathBuf>,
    wanted: BTreeSet<PathBuf>,
) -> BTreeSet<PathBuf> {
    for gone in watching.difference(&wanted) {
        let _ = watcher.unwatch(gone);
    }
    let mut now = BTreeSet::new();
    for folder in wanted {
        if watching.contains(&folder) {
            now.insert(folder);
            continue;
        }
        match watcher.watch(&folder, RecursiveMode::NonRecursive) {
            Ok(()) => {
                now.insert(folder);
            }
            Err(error) => {
                tracing::warn!(folder = %folder.display(), %error, "a folder could not be watched; changes in it need a restart")
            }
        }
    }
    now
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_or_folder_entry_modified_since_the_first_read_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let policy = dir.path().join("policy.toml");
        let adapters = dir.path().join("adapters");
        std::fs::create_dir(&adapters).unwrap();
        std::fs::write(&policy, "[defaults]\n").unwrap();
        std::fs::write(adapters.join("a-adapter.md"), "---\n").unwrap();
        let watched = Watched::of([policy.clone(), adapters.clone()]);
        assert_eq!((watched.files.len(), watched.folders.len()), (1, 1));
        let later = SystemTime::now() + Duration::from_secs(3600);
        assert!(!watched.changed_since(later), "nothing was modified after the read");
        let earlier = SystemTime::now() - Duration::from_secs(3600);
        assert!(watched.changed_since(earlier));
        let only_entry =
            Watched { files: BTreeSet::new(), folders: BTreeSet::from([adapters.clone()]) };
        let entry_time =
            std::fs::metadata(adapters.join("a-adapter.md")).unwrap().modified().unwrap();
        assert!(
            only_entry.changed_since(entry_time),
            "an adapter file modified at the read's instant counts"
        );
    }
}

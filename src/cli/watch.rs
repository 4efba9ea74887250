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
//! like any broken file, and the next event reloads it again.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
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
        self.files.iter().filter_map(|file| file.parent().map(Path::to_path_buf)).chain(self.folders.iter().cloned()).collect()
    }

    fn names(&self, path: &Path) -> bool {
        self.files.contains(path) || path.parent().is_some_and(|folder| self.folders.contains(folder))
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
/// runtime ends. An error means nothing is watched (the dongle runs on as
/// it was assembled).
pub fn spawn(reloader: Arc<Reloader>, config_file: Option<PathBuf>, reread: Reread) -> notify::Result<()> {
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
        loop {
            let now = Watched::of(reloader.watched().await.into_iter().chain(config_file.clone()));
            if now != watched {
                watching = rewatch(&mut watcher, &watching, now.folders_to_watch());
                watched = now;
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
fn rewatch(watcher: &mut impl Watcher, watching: &BTreeSet<PathBuf>, wanted: BTreeSet<PathBuf>) -> BTreeSet<PathBuf> {
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
            Err(error) => tracing::warn!(folder = %folder.display(), %error, "a folder could not be watched; changes in it need a restart"),
        }
    }
    now
}

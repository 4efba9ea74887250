//! A person at a terminal, played by tmux: a detached session running one
//! command, whose screen a test reads and into which it types. Each
//! session has a tmux server of its own (`-L`): two tests starting the
//! first session at once would otherwise race to start the shared server,
//! and one would get no session at all. The server is killed when the
//! value is dropped, pass or fail.

use std::{
    process::Command,
    time::{Duration, Instant},
};

pub struct Terminal {
    session: String,
}

fn tmux(socket: &str, args: &[&str]) -> String {
    let output = Command::new("tmux")
        .args(["-L", socket])
        .args(args)
        .output()
        .expect("tmux is installed (.ci/run installs it)");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

impl Terminal {
    /// Starts `command` (a shell command line) in a fresh 220x80 session.
    pub fn run(command: &str) -> Self {
        let session = format!("t-{}", uuid::Uuid::new_v4().simple());
        tmux(&session, &["new-session", "-d", "-s", &session, "-x", "220", "-y", "80", command]);
        Self { session }
    }

    /// What the screen shows, with up to 300 lines of scrollback.
    pub fn screen(&self) -> String {
        tmux(&self.session, &["capture-pane", "-t", &self.session, "-p", "-J", "-S", "-300"])
    }

    /// Waits up to 20 s for the screen to satisfy `what`; returns it.
    pub fn wait_for(&self, what: impl Fn(&str) -> bool, describe: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = self.screen();
            if what(&text) {
                return text;
            }
            assert!(Instant::now() < deadline, "waited for {describe}; the screen shows:\n{text}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Types `text` and presses Enter.
    pub fn type_line(&self, text: &str) {
        tmux(&self.session, &["send-keys", "-t", &self.session, "-l", text]);
        tmux(&self.session, &["send-keys", "-t", &self.session, "Enter"]);
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.session, "kill-server"]).output();
    }
}

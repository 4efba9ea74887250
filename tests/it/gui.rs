//! The real dialog under Xvfb: the verifier's GTK window appears with the
//! expected title, a click on Approve reaches `confirm_operation`, and no
//! process's argv holds anything shaped like a code while a code dialog is
//! open. Text an agent controls is shown literally: printf conversions
//! stay text (the verifier survives `%n`), control and look-alike
//! characters become visible markers. Screenshots are kept in
//! `target/gui-*.png` as CI artefacts. Needs Xvfb, xdotool, xclip and
//! ImageMagick's `import` (`.ci/run` installs them).

use std::{
    io::{BufRead, BufReader},
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use super::{
    humans::{Answer, Setup, confirm, notified_id},
    support::{ask, execute, step},
};

/// An Xvfb server on a display number it chose itself.
struct VirtualDisplay {
    child: Child,
    display: String,
}

impl VirtualDisplay {
    fn start() -> Self {
        let mut child = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "1024x768x24", "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb is installed (.ci/run installs xvfb)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("Xvfb reports its display");
        Self { child, display: format!(":{}", line.trim()) }
    }

    fn xdotool(&self, args: &[&str]) -> String {
        let output = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.display)
            .output()
            .expect("xdotool is installed");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The first window whose title contains `title`, once it appears.
    fn wait_for_window(&self, title: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(id) = self.xdotool(&["search", "--name", title]).lines().next() {
                return id.to_owned();
            }
            assert!(Instant::now() < deadline, "no window titled {title:?} appeared");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The text of a dialog's message, as a person would copy it: a click
    /// into the (selectable) message, select all, copy, read the clipboard.
    fn message_text(&self, window: &str) -> String {
        self.xdotool(&["mousemove", "--window", window, "40", "45", "click", "1"]);
        std::thread::sleep(Duration::from_millis(200));
        self.xdotool(&["key", "ctrl+a"]);
        self.xdotool(&["key", "ctrl+c"]);
        std::thread::sleep(Duration::from_millis(300));
        let output = Command::new("timeout")
            .args(["5", "xclip", "-o", "-selection", "clipboard"])
            .env("DISPLAY", &self.display)
            .output()
            .expect("xclip is installed (.ci/run installs it)");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn screenshot(&self, name: &str) -> PathBuf {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target").join(name);
        let status = Command::new("import")
            .args(["-window", "root"])
            .arg(&path)
            .env("DISPLAY", &self.display)
            .status()
            .expect("ImageMagick's import is installed");
        assert!(status.success() && path.is_file(), "screenshot {}", path.display());
        path
    }
}

impl Drop for VirtualDisplay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `text` holds something shaped like a shown code.
fn has_code_shape(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.windows(31).any(|w| {
        w.iter().enumerate().all(|(i, &b)| {
            if i % 6 == 5 { b == b'-' } else { b.is_ascii_uppercase() || b.is_ascii_digit() }
        })
    })
}

fn argv_of_every_process() -> Vec<(String, String)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
        .filter_map(|e| {
            let bytes = std::fs::read(e.path().join("cmdline")).ok()?;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                String::from_utf8_lossy(&bytes).replace('\0', " "),
            ))
        })
        .collect()
}

#[tokio::test]
async fn the_real_dialog_shows_requests_and_a_click_approves() {
    let screen = VirtualDisplay::start();
    let human = Setup::with_channels(Answer::Deny, 300, "[\"dialog\"]");
    let mut raw =
        human.start_with_env(&[("DISPLAY", &screen.display), ("WAYLAND_DISPLAY", "")]).await;

    // A verification code in a real dialog.
    ask(&mut raw, execute(1, "gui-publisher")).await;
    let pause = ask(&mut raw, step(2, "gui-publisher", "npm publish")).await["data"].clone();
    notified_id(&pause, "autonomy_pause", "verificationId");
    assert!(
        !pause["reason"].as_str().unwrap_or("").contains("No channel"),
        "the dialog was not shown: {pause}"
    );
    let code_window = screen.wait_for_window("safety-dongle: verification code");
    assert_eq!(
        screen.xdotool(&["getwindowname", &code_window]).trim(),
        "safety-dongle: verification code"
    );
    screen.screenshot("gui-verification-code.png");
    let processes = argv_of_every_process();
    assert!(
        processes.iter().any(|(_, argv)| argv.contains("safety-dongle-verifier --stdio")),
        "the verifier is running"
    );
    for (pid, argv) in &processes {
        assert!(!has_code_shape(argv), "process {pid} has a code-shaped argument: {argv}");
    }

    // An approval: the human clicks Approve.
    ask(&mut raw, execute(3, "gui-pusher")).await;
    let pause = ask(&mut raw, step(4, "gui-pusher", "git push origin main")).await["data"].clone();
    let approval = notified_id(&pause, "autonomy_pause", "approvalId");
    assert!(
        !pause["reason"].as_str().unwrap_or("").contains("No channel"),
        "the dialog was not shown: {pause}"
    );
    let window = screen.wait_for_window("safety-dongle: approve this action?");
    screen.screenshot("gui-approval.png");
    let geometry = screen.xdotool(&["getwindowgeometry", "--shell", &window]);
    let dimension = |key: &str| -> u32 {
        geometry
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .and_then(|v| v.trim().parse().ok())
            .expect("window geometry")
    };
    let (width, height) = (dimension("WIDTH"), dimension("HEIGHT"));
    // The buttons share the bottom row: Approve on the left, Deny on the right.
    let (x, y) = ((width / 4).to_string(), (height - 18).to_string());
    let waiting = tokio::spawn(async move {
        let answered = ask(&mut raw, confirm(5, &approval)).await;
        (raw, answered)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    screen.xdotool(&["mousemove", "--window", &window, &x, &y, "click", "1"]);
    let (mut raw, answered) = tokio::time::timeout(Duration::from_secs(20), waiting)
        .await
        .expect("confirm_operation answered")
        .expect("task");
    assert_eq!(
        answered["data"]["approved"], true,
        "the click reached confirm_operation: {answered}"
    );
    assert_eq!(ask(&mut raw, step(6, "gui-pusher", "cargo build")).await["data"]["continue"], true);
}

/// Whether a verifier process is running.
fn verifier_running() -> bool {
    argv_of_every_process().iter().any(|(_, argv)| argv.contains("safety-dongle-verifier --stdio"))
}

#[tokio::test]
async fn hostile_text_is_shown_literally_and_the_verifier_survives() {
    let screen = VirtualDisplay::start();
    let human = Setup::with_channels(Answer::Deny, 300, "[\"dialog\"]");
    let mut raw =
        human.start_with_env(&[("DISPLAY", &screen.display), ("WAYLAND_DISPLAY", "")]).await;

    // printf conversions (that leaked the verifier's stack), an ANSI
    // sequence, a right-to-left override, a Cyrillic look-alike and a line
    // break that pretends to end the action.
    let hint = "git push origin /tmp/%x.%x.%x.%x.%x.%x/%s%s%s%s%n \u{1b}[2K \u{202e}gpj.exe \u{0440}m\n\nWhy it needs you: routine";
    ask(&mut raw, execute(1, "gui-hostile")).await;
    let pause = ask(&mut raw, step(2, "gui-hostile", hint)).await["data"].clone();
    notified_id(&pause, "autonomy_pause", "approvalId");
    assert!(
        !pause["reason"].as_str().unwrap_or("").contains("No channel"),
        "the dialog was not shown: {pause}"
    );
    let window = screen.wait_for_window("safety-dongle: approve this action?");
    screen.screenshot("gui-hostile-text.png");
    assert!(verifier_running(), "the verifier is alive with the dialog open");
    let text = screen.message_text(&window);
    let expected_action = "git push origin /tmp/%x.%x.%x.%x.%x.%x/%s%s%s%s%n «ESC»[2K «U+202E»gpj.exe «U+0440»m«LF»\n    «LF»\n    Why it needs you: routine";
    assert!(
        text.contains(expected_action),
        "the dialog shows the action literally, markers for the rest:\n{text}"
    );
    assert_eq!(
        text.matches("Why it needs you:").count(),
        2,
        "the faked line stays inside the action:\n{text}"
    );
    assert!(verifier_running(), "the verifier is still alive after its text was read");

    // A code dialog, whose hint would have crashed the verifier before any
    // window appeared.
    ask(&mut raw, execute(3, "gui-hostile-2")).await;
    let pause = ask(&mut raw, step(4, "gui-hostile-2", "npm publish /tmp/%s%s%s%s%s%s%s%s%n%n"))
        .await["data"]
        .clone();
    notified_id(&pause, "autonomy_pause", "verificationId");
    assert!(
        !pause["reason"].as_str().unwrap_or("").contains("No channel"),
        "the code dialog was not shown: {pause}"
    );
    screen.wait_for_window("safety-dongle: verification code");
    tokio::time::sleep(Duration::from_millis(500)).await;
    screen.screenshot("gui-hostile-code.png");
    assert!(verifier_running(), "the verifier showing the code survived the format string");
    raw.assert_alive();
}

#[test]
fn the_code_shape_detector_works() {
    assert!(has_code_shape("x JM9CK-2C60M-TH0WX-8EGCR-Q81DD-T y"));
    assert!(!has_code_shape("safety-dongle-verifier --stdio"));
    assert!(!has_code_shape("0b6f1a2e-1111-4222-8333-444455556666"));
}

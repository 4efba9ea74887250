//! `safety-dongle install` and `uninstall` through the real binary on
//! temporary HOMEs: each harness's settings get the guard that `doctor`
//! then finds sound, what was there stays (with a backup), a second
//! install changes nothing, `--dry-run` writes nothing, and uninstall
//! leaves the harness unguarded and the rest of its settings in place.

use std::path::{Path, PathBuf};

use super::support::{dongle_command, scratch_dir};

async fn dongle(home: &Path, project: &Path, args: &[&str]) -> (i32, String) {
    let output = dongle_command(args)
        .current_dir(project)
        .env("HOME", home)
        .env("PATH", home.join("no-programs"))
        .env_remove("COPILOT_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .await
        .unwrap();
    (output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Each harness, with the file `--user` writes and what was in it before.
fn harnesses(home: &Path) -> [(&'static str, PathBuf, Option<&'static str>); 4] {
    [
        ("copilot", home.join(".copilot/hooks/safety-dongle.json"), None),
        (
            "droid",
            home.join(".factory/settings.json"),
            Some(
                r#"{"model": "custom:Mine-0", "hooks": {"PreToolUse": [{"matcher": "Execute", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}}"#,
            ),
        ),
        (
            "cursor",
            home.join(".cursor/hooks.json"),
            Some(r#"{"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}]}}"#),
        ),
        ("opencode", home.join(".config/opencode/plugins/safety-dongle.js"), None),
    ]
}

#[tokio::test]
async fn install_guards_each_harness_once_and_uninstall_takes_only_the_guard_out() {
    for index in 0..4 {
        // A machine of its own per harness: doctor judges every harness it finds.
        let home = scratch_dir();
        let (harness, file, before) = harnesses(&home).into_iter().nth(index).unwrap();
        let project = scratch_dir();
        if let Some(before) = before {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, before).unwrap();
        }
        let (code, out) =
            dongle(&home, &project, &["install", harness, "--user", "--dry-run"]).await;
        assert_eq!(code, 0, "{harness}: {out}");
        assert!(out.contains("dry run"), "{harness}: the diff is printed: {out}");
        assert_eq!(
            std::fs::read_to_string(&file).ok().as_deref(),
            before,
            "{harness}: a dry run writes nothing"
        );

        let (code, out) = dongle(&home, &project, &["install", harness, "--user"]).await;
        assert_eq!(code, 0, "{harness}: {out}");
        let installed = std::fs::read_to_string(&file).unwrap();
        let (code, out) = dongle(&home, &project, &["doctor"]).await;
        assert_eq!(code, 0, "{harness}: doctor finds the installed guard sound: {out}");
        assert!(out.lines().any(|l| l == format!("{harness}: guarded")), "{out}");
        if let Some(before) = before {
            let mut backup = file.clone().into_os_string();
            backup.push(".safety-dongle.bak");
            assert_eq!(
                std::fs::read_to_string(PathBuf::from(backup)).unwrap(),
                before,
                "{harness}: backup"
            );
            for kept in ["./lint.sh", "custom:Mine-0", "./format.sh"] {
                assert_eq!(
                    before.contains(kept),
                    installed.contains(kept),
                    "{harness}: {kept} kept"
                );
            }
        }

        let (code, out) = dongle(&home, &project, &["install", harness, "--user"]).await;
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("nothing to change"), "{harness}: a second install: {out}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), installed, "{harness}: idempotent");

        let (code, out) = dongle(&home, &project, &["uninstall", harness, "--user"]).await;
        assert_eq!(code, 0, "{harness}: {out}");
        let (code, out) = dongle(&home, &project, &["doctor"]).await;
        if before.is_some() {
            assert_eq!(code, 1, "{harness}: unguarded after uninstall: {out}");
            assert!(out.contains("no safety-dongle hook is installed"), "{harness}: {out}");
            let left = std::fs::read_to_string(&file).unwrap();
            for kept in ["./lint.sh", "custom:Mine-0", "./format.sh"] {
                assert_eq!(
                    before.is_some_and(|b| b.contains(kept)),
                    left.contains(kept),
                    "{harness}: {kept}"
                );
            }
            assert!(!left.contains("safety-dongle"), "{harness}: {left}");
        } else {
            assert!(!file.exists(), "{harness}: its own file is removed");
        }
    }
}

#[tokio::test]
async fn a_copilot_project_install_says_the_folder_must_be_trusted() {
    let home = scratch_dir();
    let project = scratch_dir();
    let (code, out) = dongle(&home, &project, &["install", "copilot"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(project.join(".github/hooks/safety-dongle.json").is_file());
    assert!(out.contains("only in a folder you trust"), "{out}");
    let (code, out) = dongle(&home, &project, &["doctor"]).await;
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("is not a trusted folder"), "{out}");
}

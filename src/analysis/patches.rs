//! Unified diffs handed to a program that applies them (`git apply`,
//! `patch`) on standard input: the files the diff names are written
//! (`--- a/.env` / `+++ b/.env` changes `.env`), so write rules and
//! effects see them as they see a redirection. A diff in a file
//! (`git apply fix.patch`) is not read: only text the action holds is.
//!
//! Only the header lines of each file are read (`+++ `, `--- `, and git's
//! `rename to`/`copy to`); a path is taken as git and `patch -p1` take it,
//! without its first segment (`a/`, `b/`), and `/dev/null` (a file added
//! or deleted) names nothing.

use super::{Builder, Command};

/// Whether `command` applies a diff read from standard input.
pub(super) fn applies_stdin(command: &Command) -> bool {
    match command.program.as_str() {
        // `git apply` and `git am` read the patch from stdin without a
        // file operand (or with `-`).
        "git" => {
            matches!(command.subcommand(), Some("apply" | "am"))
                && command.positionals.iter().skip(1).all(|p| p == "-")
        }
        // `patch` reads stdin unless given `-i FILE` or a patch operand
        // after the file to patch.
        "patch" | "gpatch" => {
            !command.argv.iter().any(|w| w == "-i" || w.starts_with("--input"))
                && command.positionals.len() < 2
        }
        _ => false,
    }
}

/// Records as written each file the unified diff `text` changes.
pub(super) fn apply(builder: &mut Builder, text: &str) {
    for path in targets(text) {
        builder.write(&path);
    }
}

/// The files a unified diff changes, as the applying program reads them:
/// the lines a hunk's header counts (`@@ -1,3 +1,4 @@`) are its content,
/// whatever they look like (`--- .env` there is a line removed); a
/// header that does not read counts none, so every line after it that
/// looks like a file header is taken as one.
fn targets(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let (mut old_left, mut new_left) = (0_usize, 0_usize);
    for line in text.lines() {
        if old_left > 0 || new_left > 0 {
            match line.as_bytes().first() {
                Some(b'-') => old_left = old_left.saturating_sub(1),
                Some(b'+') => new_left = new_left.saturating_sub(1),
                Some(b' ') | None => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                }
                Some(b'\\') => {}
                // Not hunk content: the hunk was shorter than it said.
                _ => (old_left, new_left) = (0, 0),
            }
            if old_left > 0 || new_left > 0 || line.starts_with(['-', '+', ' ', '\\']) {
                continue;
            }
        }
        if let Some(counts) = line.strip_prefix("@@ ").and_then(hunk_counts) {
            (old_left, new_left) = counts;
            continue;
        }
        let named = line
            .strip_prefix("+++ ")
            .or_else(|| line.strip_prefix("--- "))
            .map(strip_first_segment)
            .or_else(|| line.strip_prefix("rename to ").map(str::trim))
            .or_else(|| line.strip_prefix("copy to ").map(str::trim));
        let Some(path) = named.filter(|p| !p.is_empty() && *p != "/dev/null") else { continue };
        let path = path.to_owned();
        if !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// The old and new line counts of a hunk header's ranges (`-1,3 +1,4
/// @@`; a count left out is 1).
fn hunk_counts(ranges: &str) -> Option<(usize, usize)> {
    let mut parts = ranges.split_whitespace();
    let count = |range: Option<&str>, sign: char| -> Option<usize> {
        let range = range?.strip_prefix(sign)?;
        match range.split_once(',') {
            Some((start, count)) => start.parse::<usize>().ok().and(count.parse().ok()),
            None => range.parse::<usize>().ok().map(|_| 1),
        }
    };
    Some((count(parts.next(), '-')?, count(parts.next(), '+')?))
}

/// `b/src/x.rs` as `src/x.rs`: the path after a header, up to a tab (a
/// timestamp follows), without its first segment when it has several.
fn strip_first_segment(header: &str) -> &str {
    let path = header.split('\t').next().unwrap_or_default().trim();
    if path == "/dev/null" {
        return path;
    }
    match path.split_once('/') {
        Some((_, rest)) if !rest.is_empty() && !path.starts_with('/') => rest,
        _ => path,
    }
}

#[cfg(test)]
mod tests {
    use super::targets;

    #[test]
    fn a_diff_names_the_files_it_changes() {
        let cases: [(&str, &[&str]); 5] = [
            ("--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-A=1\n+A=2\n", &[".env"]),
            ("--- /dev/null\n+++ b/src/new.rs\n", &["src/new.rs"]),
            ("--- a/old.txt\n+++ /dev/null\n", &["old.txt"]),
            ("diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n", &["y"]),
            ("--- .env\t2024-01-01\n+++ .env\t2024-01-02\n", &[".env"]),
        ];
        for (diff, expected) in cases {
            assert_eq!(targets(diff), expected, "{diff}");
        }
        assert!(targets("just text\n").is_empty());
        // A hunk's counted lines are content, whatever they look like;
        // the next file's headers follow them.
        let content = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n--- .env\n+++ .env\n--- a/y\n+++ b/y\n";
        assert_eq!(targets(content), ["x", "y"]);
        let context = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n keep\n-+++ b/.env\n++++ b/.npmrc\n";
        assert_eq!(targets(context), ["x"]);
        // A header that does not read counts nothing: what follows may name files.
        assert_eq!(targets("--- a/x\n+++ b/x\n@@ bad @@\n--- a/.env\n+++ b/.env\n"), ["x", ".env"]);
    }
}

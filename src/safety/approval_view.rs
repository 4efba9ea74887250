//! What a person is shown when the gate asks them to approve an action,
//! so they approve what will run, not a file name: the reason is every
//! rule (or other cause) that asked, each with what it matched; the action
//! is the action's text and, for a write whose content was judged, what
//! the file will run: first the planted lines a rule asked about, with
//! their file and line, then a summary of the rest. A long action is cut
//! before that list, so the list is within what a channel shows.
//!
//! Bounded whatever the file holds: at most [`MAX_LISTED`] lines each way,
//! each cut short by `preview`; the verifier bounds every field again
//! before a channel shows it.

use crate::{
    analysis::{Analysis, Command, preview},
    policy::pattern::describe_command,
};

/// Planted commands listed at most, among those a rule asked about and
/// among the rest.
const MAX_LISTED: usize = 12;

/// Characters of the action itself kept before what it will run, so the
/// listed lines come within what a channel shows even when the action
/// carries the whole file (a proxied `write_file` with its content).
const MAX_ACTION_HEAD_CHARS: usize = 300;

/// The text of an approval request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalView {
    pub action: String,
    pub reason: String,
}

/// The request for `action`, which the evaluation paused with `reason`
/// and `factors` (each naming a rule and what it matched).
pub fn approval_view(
    action: &str,
    reason: &str,
    factors: &[String],
    analysis: Option<&Analysis>,
) -> ApprovalView {
    let reason = if factors.is_empty() {
        reason.to_owned()
    } else {
        factors.iter().map(|factor| without_stage(factor)).collect::<Vec<_>>().join("; ")
    };
    let planted: Vec<&Command> = analysis
        .map(|analysis| {
            analysis.commands.iter().filter(|command| command.planted.is_some()).collect()
        })
        .unwrap_or_default();
    if planted.is_empty() {
        return ApprovalView { action: action.to_owned(), reason };
    }
    // A planted line can be found more than once (a recipe a target
    // depends on): each is listed once, under "asked" if any finding was.
    let mut asked: Vec<String> = Vec::new();
    let mut rest: Vec<String> = Vec::new();
    for command in planted {
        let described = describe_command(command);
        let line = line_of(command);
        if factors.iter().any(|factor| factor.contains(&described)) {
            rest.retain(|other| *other != line);
            if !asked.contains(&line) {
                asked.push(line);
            }
        } else if !asked.contains(&line) && !rest.contains(&line) {
            rest.push(line);
        }
    }
    let mut shown = format!("{}\nWhat it will run that a rule asked about:", head(action));
    if asked.is_empty() {
        shown.push_str(" none by itself (see why it needs you)");
    }
    for line in asked.iter().take(MAX_LISTED) {
        shown.push_str(&format!("\n  {line}"));
    }
    if asked.len() > MAX_LISTED {
        shown.push_str(&format!("\n  and {} more", asked.len() - MAX_LISTED));
    }
    if !rest.is_empty() {
        let more = rest.len().saturating_sub(MAX_LISTED);
        let more = if more > 0 { format!("; and {more} more") } else { String::new() };
        let listed =
            rest.iter().take(MAX_LISTED).map(String::as_str).collect::<Vec<_>>().join("; ");
        shown.push_str(&format!(
            "\nAlso runs {} command(s) no rule asked about: {listed}{more}",
            rest.len()
        ));
    }
    ApprovalView { action: shown, reason }
}

/// The start of a long action, the cut announced.
fn head(action: &str) -> String {
    let count = action.chars().count();
    if count <= MAX_ACTION_HEAD_CHARS {
        return action.to_owned();
    }
    let kept: String = action.chars().take(MAX_ACTION_HEAD_CHARS).collect();
    format!("{kept} [... {} more characters of the call]", count - MAX_ACTION_HEAD_CHARS)
}

/// `Makefile line 6: git push origin main`.
fn line_of(command: &Command) -> String {
    let text = preview(&command.argv.join(" "));
    match &command.planted {
        Some(at) => format!("{} line {}: {text}", at.file, at.line),
        None => text,
    }
}

/// A factor without its `stage 3: ` prefix: the person needs the rule, not
/// the evaluator's stage.
fn without_stage(factor: &str) -> &str {
    factor
        .strip_prefix("stage ")
        .and_then(|rest| rest.split_once(": "))
        .map_or(factor, |(_, rest)| rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{
        Action, Change, FileWrite, NoCurrentFiles, WorkingFolder, analyze_action,
    };

    fn makefile(recipes: &str) -> Analysis {
        let write = FileWrite { path: "Makefile".into(), change: Change::Whole(recipes.into()) };
        analyze_action(&Action {
            text: "write_file Makefile",
            writes: std::slice::from_ref(&write),
            folder: &WorkingFolder::Project,
            files: &NoCurrentFiles,
        })
        .unwrap()
    }

    #[test]
    fn the_lines_that_asked_come_first_with_every_rule_then_the_rest() {
        // `deploy` depends on `build`: its recipe is found twice, listed once.
        let analysis = makefile(
            "build:\n\tcargo build\n\ndeploy: build\n\tgit push origin main\n\tcrontab -r\n",
        );
        let factors = [
            "stage 3: requiresApproval pattern 'git push' (policy default.toml:182) on `git push origin main` (planted in Makefile line 5)".to_owned(),
            "stage 3: requiresApproval pattern 'crontab' (policy default.toml:201) on `crontab -r` (planted in Makefile line 6)".to_owned(),
        ];
        let view = approval_view(
            "write_file Makefile",
            "Action requires human approval: git push",
            &factors,
            Some(&analysis),
        );
        assert_eq!(
            view.action,
            "write_file Makefile\nWhat it will run that a rule asked about:\n  Makefile line 5: git push origin main\n  Makefile line 6: crontab -r\nAlso runs 1 command(s) no rule asked about: Makefile line 2: cargo build"
        );
        assert!(
            view.reason.starts_with("requiresApproval pattern 'git push'")
                && view.reason.contains("; requiresApproval pattern 'crontab'"),
            "{}",
            view.reason
        );
    }

    #[test]
    fn a_long_file_is_summarised_and_an_action_without_plants_is_itself() {
        let recipes: String = (0..40).map(|i| format!("t{i}:\n\techo step {i}\n")).collect();
        let analysis = makefile(&recipes);
        let view = approval_view("write_file Makefile", "why", &[], Some(&analysis));
        assert!(
            view.action.contains("none by itself")
                && view.action.contains("Also runs 40 command(s)")
                && view.action.ends_with("; and 28 more"),
            "{}",
            view.action
        );
        assert_eq!(view.reason, "why");
        // A call that carries the file's content: what it will run comes
        // early, within what a channel shows.
        let call = format!(
            "fs__write_file {{\"content\":\"{}\",\"path\":\"Makefile\"}}",
            "# padding\\n".repeat(500)
        );
        let view = approval_view(&call, "why", &[], Some(&analysis));
        let at = view.action.find("What it will run").unwrap();
        assert!(
            at < 400
                && view
                    .action
                    .get(..at)
                    .unwrap_or_default()
                    .contains("more characters of the call"),
            "{}",
            view.action.get(..at).unwrap_or_default()
        );
        let plain = approval_view(
            "git push origin main",
            "why",
            &["stage 3: requiresApproval pattern 'git push' (p:1) on `git push origin main`"
                .into()],
            None,
        );
        assert_eq!(
            plain,
            ApprovalView {
                action: "git push origin main".into(),
                reason: "requiresApproval pattern 'git push' (p:1) on `git push origin main`"
                    .into()
            }
        );
    }
}

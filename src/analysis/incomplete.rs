//! Input that ends too early: inside a quote, or inside a here-document
//! whose closing line never comes. Bash treats the two differently, and
//! the analysis reads each as bash runs it:
//!
//! - **An unterminated quote** is a syntax error: bash runs nothing of
//!   the command it opens (only complete commands on earlier lines run).
//!   Everything after the quote is inside it, so no command hides there.
//!   The text is read with the quote closed at the end: what that runs is
//!   at least what bash runs (`rm -rf / 'x` is read as `rm -rf / x`,
//!   which bash would not even start), and an ordinary command with a
//!   stray quote (`echo 'it`) is not a command nobody can know.
//! - **An unterminated here-document** is no error: bash warns and feeds
//!   the body up to the end of the input. The text is read with its
//!   closing line added.
//!
//! Either form is used only when the completed text parses without error;
//! otherwise the input stays unparseable.

/// The script completed as bash reads it (a closing quote, or the missing
/// closing lines of its here-documents), when one is missing.
pub(super) fn completed(script: &str) -> Option<String> {
    if let Some(quote) = open_quote(script) {
        return Some(format!("{script}{quote}"));
    }
    let missing = missing_heredoc_ends(script);
    (!missing.is_empty()).then(|| format!("{script}\n{}", missing.join("\n")))
}

/// The quote character left open at the end of `script`, if one is.
/// Here-document bodies are not read specially: a stray apostrophe in
/// one gives a completion that fails to parse, and the caller drops it.
fn open_quote(script: &str) -> Option<char> {
    let mut open: Option<char> = None;
    let mut escaped = false;
    let mut comment = false;
    let mut previous = ' ';
    for c in script.chars() {
        let before = std::mem::replace(&mut previous, c);
        if comment {
            comment = c != '\n';
            continue;
        }
        if escaped {
            escaped = false;
            continue;
        }
        match (open, c) {
            (Some('\''), '\'') => open = None,
            (Some('\''), _) => {}
            (_, '\\') => escaped = true,
            (Some(quote), c) if c == quote => open = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => open = Some(c),
            (None, '#') if before.is_whitespace() || matches!(before, ';' | '&' | '|' | '(') => {
                comment = true;
            }
            _ => {}
        }
    }
    open
}

/// The closing lines of the here-documents `script` opens and never
/// closes, in the order bash waits for them.
fn missing_heredoc_ends(script: &str) -> Vec<String> {
    let mut lines = script.split('\n');
    let mut missing = Vec::new();
    while let Some(line) = lines.next() {
        if !line.contains("<<") {
            continue;
        }
        for (delimiter, strips_tabs) in super::shell::heredoc_delimiters(line) {
            if delimiter.is_empty() {
                continue;
            }
            let closed = lines.by_ref().any(|body| {
                let end = if strips_tabs { body.trim_start_matches('\t') } else { body };
                end == delimiter
            });
            if !closed {
                missing.push(delimiter);
            }
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_quote_is_closed_at_the_end() {
        assert_eq!(completed("echo 'it").as_deref(), Some("echo 'it'"));
        assert_eq!(completed("rg \"find . -delete").as_deref(), Some("rg \"find . -delete\""));
        assert_eq!(completed("echo \"it's\" `date").as_deref(), Some("echo \"it's\" `date`"));
        assert_eq!(completed("echo ok # it's"), None, "a quote in a comment opens nothing");
        assert_eq!(completed("echo it\\'s"), None, "an escaped quote opens nothing");
    }

    #[test]
    fn a_heredoc_without_its_end_runs_its_body_to_the_end_of_the_input() {
        assert_eq!(
            completed("bash <<'SH'\nrm -rf ~/work").as_deref(),
            Some("bash <<'SH'\nrm -rf ~/work\nSH")
        );
        assert_eq!(completed("cat <<EOF\nbody\nEOF"), None);
        assert_eq!(
            completed("cat <<-A\n\tx\n\tA\ncat <<B\ny").as_deref(),
            Some("cat <<-A\n\tx\n\tA\ncat <<B\ny\nB")
        );
    }
}

//! Here-document operators tree-sitter-bash refuses and bash runs,
//! respelled the way the grammar reads them, with the same meaning:
//!
//! - **A delimiter with a quoted part** (`<<E'O'F`, `<<"E"OF`): bash ends
//!   the body at the line `EOF` and, since part of the word is quoted,
//!   expands nothing in it. It is written `<<'EOF'`.
//! - **Several here-documents on one command** (`cat <<'A' <<'B'`): bash
//!   reads every body, in order, after the line, expands each unquoted
//!   one, and gives the command the last. The earlier ones are written
//!   as commands of their own that read them and run nothing (`: <<'A';
//!   cat <<'B'`), which bash runs the same way; `shell` then moves the
//!   rest after the bodies. Only a line that is one command is respelled
//!   so: a `;`, `|`, `&` or parenthesis outside quotes leaves it as it is.
//!
//! The respelled text is used only when it parses without error (the
//! caller's check), so a line read wrongly here stays unparseable.

/// One here-document operator on a line: where it starts (`<<`) and
/// ends (after its delimiter word), and that word as written.
struct Operator<'a> {
    start: usize,
    end: usize,
    word: &'a str,
}

/// The script with its here-document operators respelled, or `None` when
/// no line needs it. Body lines are copied as they are.
pub(super) fn respelled(script: &str) -> Option<String> {
    let mut lines = script.split('\n');
    let mut out: Vec<String> = Vec::new();
    let mut changed = false;
    while let Some(line) = lines.next() {
        let line = match respell_line(line) {
            Some(respelled) => {
                changed = true;
                respelled
            }
            None => line.to_owned(),
        };
        let delimiters = super::shell::heredoc_delimiters(&line);
        out.push(line);
        for (delimiter, strips_tabs) in delimiters {
            for body in lines.by_ref() {
                out.push(body.to_owned());
                let end = if strips_tabs { body.trim_start_matches('\t') } else { body };
                if end == delimiter {
                    break;
                }
            }
        }
    }
    changed.then(|| out.join("\n"))
}

fn respell_line(line: &str) -> Option<String> {
    let (operators, one_command) = operators(line);
    let quoted_part = |word: &str| {
        let unquoted = word.trim_matches(['\'', '"']);
        unquoted.contains(['\'', '"']) && !unquoted.is_empty()
    };
    let several = operators.len() > 1 && one_command;
    if !several && !operators.iter().any(|operator| quoted_part(operator.word)) {
        return None;
    }
    let spelled = |operator: &Operator<'_>| {
        let dash = line.get(operator.start + 2..).is_some_and(|after| after.starts_with('-'));
        let word = if quoted_part(operator.word) {
            format!("'{}'", operator.word.replace(['\'', '"'], ""))
        } else {
            operator.word.to_owned()
        };
        format!("<<{}{word}", if dash { "-" } else { "" })
    };
    let mut respelled = String::new();
    let (earlier, last) = match operators.split_last() {
        Some((last, earlier)) if several => (earlier, std::slice::from_ref(last)),
        _ => (&[][..], operators.as_slice()),
    };
    for operator in earlier {
        respelled.push_str(&format!(": {}; ", spelled(operator)));
    }
    let mut at = 0;
    for operator in &operators {
        respelled.push_str(line.get(at..operator.start)?);
        if last.iter().any(|kept| kept.start == operator.start) {
            respelled.push_str(&spelled(operator));
        }
        at = operator.end;
    }
    respelled.push_str(line.get(at..)?);
    Some(respelled)
}

/// The here-document operators of a line outside quotes and comments,
/// and whether the line is one command (no `;`, `|`, `&` or parenthesis
/// outside quotes).
fn operators(line: &str) -> (Vec<Operator<'_>>, bool) {
    let bytes = line.as_bytes();
    let mut found = Vec::new();
    let mut one_command = true;
    let mut quote: Option<u8> = None;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        match (quote, byte) {
            (Some(b'\''), b'\'') => quote = None,
            (Some(b'\''), _) => {}
            (_, b'\\') => at += 1,
            (Some(open), b) if b == open => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(byte),
            (None, b'#') if at == 0 || bytes.get(at - 1).is_some_and(u8::is_ascii_whitespace) => {
                break;
            }
            (None, b';' | b'|' | b'&' | b'(' | b')') => one_command = false,
            (None, b'<')
                if bytes.get(at + 1) == Some(&b'<')
                    && bytes.get(at + 2) != Some(&b'<')
                    && (at == 0 || bytes.get(at - 1) != Some(&b'<')) =>
            {
                let mut word_start = at + 2;
                if bytes.get(word_start) == Some(&b'-') {
                    word_start += 1;
                }
                while bytes.get(word_start).is_some_and(|b| *b == b' ' || *b == b'\t') {
                    word_start += 1;
                }
                let end = delimiter_end(bytes, word_start);
                if let Some(word) = line.get(word_start..end).filter(|word| !word.is_empty()) {
                    found.push(Operator { start: at, end, word });
                }
                at = end;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    (found, one_command)
}

/// Where a delimiter word starting at `start` ends: at a blank or an
/// operator character outside quotes.
fn delimiter_end(bytes: &[u8], start: usize) -> usize {
    let mut quote: Option<u8> = None;
    let mut at = start;
    while let Some(&byte) = bytes.get(at) {
        match quote {
            Some(open) if byte == open => quote = None,
            Some(_) => {}
            None if byte == b'\'' || byte == b'"' => quote = Some(byte),
            None if byte.is_ascii_whitespace() || b";|&<>()".contains(&byte) => break,
            None => {}
        }
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::respelled;

    #[test]
    fn a_delimiter_with_a_quoted_part_is_quoted_whole() {
        assert_eq!(
            respelled("cat <<E'N'D\n$(rm -rf ~)\nEND").as_deref(),
            Some("cat <<'END'\n$(rm -rf ~)\nEND")
        );
        assert_eq!(
            respelled("cat <<-\"E\"OF\n\tx\n\tEOF").as_deref(),
            Some("cat <<-'EOF'\n\tx\n\tEOF")
        );
    }

    #[test]
    fn earlier_here_documents_of_one_command_are_read_by_a_command_of_their_own() {
        assert_eq!(
            respelled("sort <<ONE <<'TWO'\n$(id)\nONE\nb\nTWO").as_deref(),
            Some(": <<ONE; sort  <<'TWO'\n$(id)\nONE\nb\nTWO")
        );
    }

    #[test]
    fn lines_that_need_nothing_or_hold_several_commands_stay() {
        assert_eq!(respelled("cat <<'EOF'\na <<B c\nEOF"), None);
        assert_eq!(respelled("cat <<A | tr a b <<B\nx\nA\ny\nB"), None);
        assert_eq!(respelled("echo '<<A <<B'"), None);
    }
}

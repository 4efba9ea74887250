//! Line continuations inside a word. Bash removes a backslash-newline
//! before it splits words, so `git re\` on one line and `set --hard` on
//! the next is `git reset --hard`; tree-sitter-bash reads the pair as a
//! blank between two words (`git re set --hard`). Before the text is
//! parsed, every backslash-newline glued to a word character on both
//! sides, outside single quotes and comments, is removed. One between
//! blanks or at a word's edge splits words either way and stays, so the
//! text and its byte ranges change only where the reading differs.

/// The script with its in-word line continuations joined, or `None` when
/// it has none.
pub(super) fn joined(script: &str) -> Option<String> {
    if !script.contains("\\\n") {
        return None;
    }
    let bytes = script.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut single_quoted = false;
    let mut comment = false;
    let mut changed = false;
    let mut at = 0;
    let glued = |byte: Option<&u8>| byte.is_some_and(|b| !b.is_ascii_whitespace());
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'\n' => comment = false,
            _ if comment => {}
            b'\'' => single_quoted = !single_quoted,
            b'#' if !single_quoted && (at == 0 || !glued(bytes.get(at - 1))) => comment = true,
            b'\\' if !single_quoted => {
                let continues = bytes.get(at + 1) == Some(&b'\n');
                if continues && at > 0 && glued(bytes.get(at - 1)) && glued(bytes.get(at + 2)) {
                    changed = true;
                    at += 2;
                    continue;
                }
                // An escaped character is taken as it is (`\'`, `\\`).
                out.push(byte);
                out.extend(bytes.get(at + 1));
                at += 2;
                continue;
            }
            _ => {}
        }
        out.push(byte);
        at += 1;
    }
    // Only ASCII bytes were removed, at character boundaries.
    changed.then(|| String::from_utf8(out).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::joined;

    #[test]
    fn a_continuation_inside_a_word_joins_it() {
        assert_eq!(joined("git re\\\nset --hard").as_deref(), Some("git reset --hard"));
        assert_eq!(joined("echo \"a\\\nb\"").as_deref(), Some("echo \"ab\""));
    }

    #[test]
    fn continuations_between_words_in_single_quotes_or_comments_stay() {
        assert_eq!(joined("make \\\n  test"), None);
        assert_eq!(joined("echo 'a\\\nb'"), None);
        assert_eq!(joined("ls # a\\\nb"), None);
        assert_eq!(joined("ls"), None);
    }
}

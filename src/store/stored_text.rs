//! How text crosses into the state's `TEXT` columns, the same on both
//! backends: exactly as given, except that U+0000, which PostgreSQL's
//! `TEXT` refuses outright (an agent's command may hold one), is written
//! as U+FFFF `0`, and U+FFFF itself as U+FFFF U+FFFF, so every text reads
//! back as it was sent and the audit chain, hashed over what was sent,
//! verifies. U+FFFF is a Unicode noncharacter, reserved for a program's
//! internal use; text without either character is stored unchanged, and a
//! U+FFFF followed by anything else reads back as it is (so rows written
//! before this escape existed read as they were, unless they held exactly
//! those pairs).

use std::borrow::Cow;

/// The escape character.
const ESCAPE: char = '\u{FFFF}';
/// What follows [`ESCAPE`] to stand for U+0000.
const NUL_MARK: char = '0';

/// `text` as it is stored.
pub fn encode(text: &str) -> Cow<'_, str> {
    if !text.contains(['\0', ESCAPE]) {
        return Cow::Borrowed(text);
    }
    let mut stored = String::with_capacity(text.len() + 8);
    for ch in text.chars() {
        match ch {
            '\0' => stored.extend([ESCAPE, NUL_MARK]),
            ESCAPE => stored.extend([ESCAPE, ESCAPE]),
            other => stored.push(other),
        }
    }
    Cow::Owned(stored)
}

/// The text that `stored` was made from by [`encode`].
pub fn decode(stored: String) -> String {
    if !stored.contains(ESCAPE) {
        return stored;
    }
    let mut text = String::with_capacity(stored.len());
    let mut chars = stored.chars().peekable();
    while let Some(ch) = chars.next() {
        match (ch, chars.peek()) {
            (ESCAPE, Some(&NUL_MARK)) => {
                chars.next();
                text.push('\0');
            }
            (ESCAPE, Some(&ESCAPE)) => {
                chars.next();
                text.push(ESCAPE);
            }
            (other, _) => text.push(other),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::{decode, encode};

    #[test]
    fn every_text_reads_back_as_sent_and_none_holds_a_nul_when_stored() {
        let texts = [
            "",
            "ls -la",
            "a\0b",
            "\0",
            "\0\0",
            "\u{FFFF}",
            "\u{FFFF}0",
            "\u{FFFF}\u{FFFF}",
            "x\u{FFFF}\0y",
            "\u{FFFF}\0\u{FFFF}",
            "é\0ü",
        ];
        for text in texts {
            let stored = encode(text);
            assert!(!stored.contains('\0'), "{text:?} stored as {stored:?}");
            assert_eq!(decode(stored.into_owned()), text, "round trip of {text:?}");
        }
        assert!(
            matches!(encode("plain text"), std::borrow::Cow::Borrowed(_)),
            "ordinary text is not copied"
        );
    }

    #[test]
    fn different_texts_are_stored_differently() {
        let texts = ["\0", "\u{FFFF}0", "\u{FFFF}\u{FFFF}", "\u{FFFF}", "0", ""];
        let stored: std::collections::HashSet<String> =
            texts.iter().map(|text| encode(text).into_owned()).collect();
        assert_eq!(stored.len(), texts.len());
    }

    #[test]
    fn a_lone_escape_written_before_the_escape_existed_reads_as_it_was() {
        assert_eq!(decode("a\u{FFFF}b".into()), "a\u{FFFF}b");
        assert_eq!(decode("end\u{FFFF}".into()), "end\u{FFFF}");
    }
}

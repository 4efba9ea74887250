//! Text an agent supplied (its name, the actions and reasons built from
//! them), as it may reach an operator's terminal: control characters and
//! the invisible or bidirectional-formatting ones are written as
//! `\u{..}` escapes, so no such text can move the cursor, recolour the
//! screen, hide part of a line or make it read in another order.

use std::borrow::Cow;

/// `text`, safe to print; borrowed when nothing needed escaping.
pub fn terminal_text(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs_escape(c) {
            shown.extend(c.escape_unicode());
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c,
            // Arabic letter mark; zero-width space, joiners and marks
            '\u{061C}' | '\u{200B}'..='\u{200F}'
            // line and paragraph separators, bidi embeddings and overrides
            | '\u{2028}'..='\u{202E}'
            // word joiner, invisible operators, bidi isolates
            | '\u{2060}'..='\u{2069}'
            | '\u{FEFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_bidi_controls_are_shown_not_obeyed() {
        assert!(matches!(terminal_text("builder-1 rm -rf ./target"), Cow::Borrowed(_)));
        assert_eq!(terminal_text("ok\u{1b}[2J\u{1b}[31mred"), "ok\\u{1b}[2J\\u{1b}[31mred");
        assert_eq!(terminal_text("line\nnext\r"), "line\\u{a}next\\u{d}");
        assert_eq!(terminal_text("safe\u{202E}txt.exe"), "safe\\u{202e}txt.exe");
        assert_eq!(terminal_text("a\u{2066}b\u{2069}\u{200B}"), "a\\u{2066}b\\u{2069}\\u{200b}");
        // Other scripts pass untouched.
        assert_eq!(terminal_text("агент 代理 وكيل"), "агент 代理 وكيل");
    }
}

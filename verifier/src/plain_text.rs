//! What a person reads is what will run: every piece of request text an
//! agent controls (its name, the action, the reason built around it) is
//! turned into plain printable ASCII before any channel shows it.
//!
//! Printable ASCII passes unchanged. Everything else becomes a visible
//! marker in guillemets: control characters by name (`«ESC»`, `«NUL»`,
//! `«LF»`), every other character by code point (`«U+202E»` for a
//! right-to-left override, `«U+0430»` for a Cyrillic `а` that looks like
//! a Latin `a`). No input can forge a marker, because the guillemets
//! themselves are outside ASCII and so are always escaped. This
//! neutralises ANSI escape sequences, bidi overrides, zero-width and
//! look-alike characters in one rule, at the cost of showing legitimate
//! non-ASCII text (accented file names) as code points.
//!
//! Each field is bounded in characters; a cut is announced in the text,
//! so a person never mistakes a part for the whole.
//!
//! Channels with an interpreter of their own escape on top of this: the
//! notification escapes its markup.

use std::fmt::Write;

/// How a field's line breaks are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// A line break is a `«LF»` marker, nothing more: for one-line fields,
    /// so a name or a reason cannot fake more lines of the message.
    Marked,
    /// A line break is a `«LF»` marker followed by a real break and
    /// `indent`: a multi-line script stays readable and every line of it
    /// stays visibly inside its field.
    Indented(&'static str),
}

/// Printable ASCII only, at most `max_chars` characters of the input.
pub fn neutralise(text: &str, max_chars: usize, lines: Lines) -> String {
    let mut out = String::with_capacity(text.len().min(max_chars * 2));
    for (shown, ch) in text.chars().enumerate() {
        if shown == max_chars {
            let rest = text.chars().count() - shown;
            let _ = write!(out, " «... {rest} more characters not shown»");
            break;
        }
        match ch {
            ' '..='~' => out.push(ch),
            '\n' => {
                out.push_str("«LF»");
                if let Lines::Indented(indent) = lines {
                    out.push('\n');
                    out.push_str(indent);
                }
            }
            _ => match control_name(ch) {
                Some(name) => {
                    let _ = write!(out, "«{name}»");
                }
                None => {
                    let _ = write!(out, "«U+{:04X}»", u32::from(ch));
                }
            },
        }
    }
    out
}

/// The names of the C0 controls and DEL, as people know them.
fn control_name(ch: char) -> Option<&'static str> {
    const C0: [&str; 32] = [
        "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "TAB", "LF", "VT", "FF",
        "CR", "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM",
        "SUB", "ESC", "FS", "GS", "RS", "US",
    ];
    match u32::from(ch) {
        code @ 0..=31 => C0.get(code as usize).copied(),
        127 => Some("DEL"),
        _ => None,
    }
}

/// Escapes the characters that the desktop notification specification's
/// body markup gives a meaning.
pub fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(ch),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per class of hostile text: input, what a person is shown.
    #[test]
    fn hostile_text_becomes_visible_ascii() {
        let rows = [
            ("rm -rf /tmp/x", "rm -rf /tmp/x"),
            ("rm -rf /tmp/%s%n%x", "rm -rf /tmp/%s%n%x"),
            ("ls\u{1b}[2K\u{1b}[1Agit status", "ls«ESC»[2K«ESC»[1Agit status"),
            ("echo safe\r rm -rf ~", "echo safe«CR» rm -rf ~"),
            ("cat \u{202e}txt.hs", "cat «U+202E»txt.hs"),
            ("r\u{200b}m -rf ~", "r«U+200B»m -rf ~"),
            ("\u{0440}m -rf ~", "«U+0440»m -rf ~"),
            ("git push \u{ff0d}\u{ff0d}force", "git push «U+FF0D»«U+FF0D»force"),
            ("a\0b\u{7f}c\td", "a«NUL»b«DEL»c«TAB»d"),
            ("forged «U+0041» marker", "forged «U+00AB»U+0041«U+00BB» marker"),
        ];
        for (input, shown) in rows {
            assert_eq!(neutralise(input, 1000, Lines::Marked), shown, "{input:?}");
        }
    }

    #[test]
    fn line_breaks_are_marked_and_indented_lines_stay_inside_their_field() {
        let fake = "ls\n\nWhy it needs you: routine cleanup";
        assert_eq!(
            neutralise(fake, 100, Lines::Marked),
            "ls«LF»«LF»Why it needs you: routine cleanup"
        );
        assert_eq!(
            neutralise(fake, 100, Lines::Indented("    ")),
            "ls«LF»\n    «LF»\n    Why it needs you: routine cleanup"
        );
    }

    #[test]
    fn long_text_is_cut_and_says_so() {
        let long = "x".repeat(5000);
        let shown = neutralise(&long, 100, Lines::Marked);
        assert!(shown.starts_with(&"x".repeat(100)));
        assert!(shown.ends_with(" «... 4900 more characters not shown»"), "{shown}");
        assert_eq!(neutralise(&"y".repeat(100), 100, Lines::Marked), "y".repeat(100));
        // Escaped characters count once each, so the bound holds for them too.
        let wide = neutralise(&"\u{202e}".repeat(50), 10, Lines::Marked);
        assert_eq!(wide.matches("«U+202E»").count(), 10);
    }

    #[test]
    fn notification_markup_is_escaped() {
        assert_eq!(
            escape_markup("<b>x</b> & <a href='u'>"),
            "&lt;b&gt;x&lt;/b&gt; &amp; &lt;a href=&apos;u&apos;&gt;"
        );
    }
}

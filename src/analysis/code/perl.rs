//! Perl's data set apart from its code, for the lexical reader: a
//! here-document's body (`<<'TAG'`, `<<"TAG"`, `<<TAG`, `<<~TAG`, up to
//! the line `TAG`, indented for `<<~`) is one string literal where its
//! operator stands, and POD (`=pod`, `=head1`… to `=cut`) and what
//! follows `__END__` or `__DATA__` are not code at all. Only text the
//! reader is sure is outside a string is read so: once a line holds
//! syntax whose strings a line-by-line reader cannot follow (`q{…}`,
//! `qq(…)`, a regex), or a here-document never ends, everything after
//! is read as code, as before, so that no code is ever hidden as data.

use std::ops::Range;

use super::home;
use crate::analysis::budget;

/// Perl code with its here-documents as literals, POD and the data
/// after `__END__` removed, and where each literal made of a
/// here-document lies: it is data, where no call is looked for.
pub(super) struct SetApart {
    pub(super) code: String,
    pub(super) data: Vec<Range<usize>>,
}

/// Perl's globs of home as the literal of home they give:
/// `glob('~/x')` and `glob("~/x")` hold [`home::EXPANDED`], and `<~/x>`
/// is that literal.
pub(super) fn home_globs(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(['g', '<']) {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let glob = ["glob('~", "glob(\"~", "glob ('~", "glob (\"~"]
            .iter()
            .find(|glob| from.starts_with(**glob));
        if let Some(glob) = glob {
            out.push_str(glob.get(..glob.len() - 1).unwrap_or_default());
            out.push_str(home::EXPANDED);
            rest = from.get(glob.len()..).unwrap_or_default();
            continue;
        }
        // `<~/x>`: a file glob, no whitespace inside.
        let angle = from
            .strip_prefix("<~")
            .and_then(|inside| inside.find('>').map(|close| (inside, close)))
            .filter(|(inside, close)| {
                inside.get(..*close).is_some_and(|path| !path.contains(char::is_whitespace))
            });
        match angle {
            Some((inside, close)) => {
                out.push('"');
                out.push_str(home::EXPANDED);
                out.push_str(inside.get(..close).unwrap_or_default());
                out.push('"');
                rest = inside.get(close + 1..).unwrap_or_default();
            }
            None => {
                let next = from.chars().next().map_or(1, char::len_utf8);
                out.push_str(from.get(..next).unwrap_or_default());
                rest = from.get(next..).unwrap_or_default();
            }
        }
    }
    out.push_str(rest);
    out
}

/// A here-document waiting for its body: the terminator and whether it
/// may be indented (`<<~`).
struct Pending {
    tag: String,
    indented: bool,
    /// Where its literal goes in the output, between its quotes.
    at: usize,
}

pub(super) fn set_apart(code: &str) -> SetApart {
    let mut out = String::with_capacity(code.len());
    let mut data: Vec<Range<usize>> = Vec::new();
    let mut lines = code.split_inclusive('\n').peekable();
    // The reader knows it is outside every string at the start of a line.
    let mut sure = true;
    let mut statement_ended = true;
    while let Some(line) = lines.next() {
        if !budget::work(line.len()) {
            out.push_str(line);
            out.extend(lines);
            break;
        }
        let bare = line.trim_end_matches(['\n', '\r']);
        if sure && statement_ended && matches!(bare, "__END__" | "__DATA__") {
            break;
        }
        if sure && statement_ended && starts_pod(bare) {
            // POD runs to its `=cut` line (or the end).
            for pod in lines.by_ref() {
                if pod.starts_with("=cut") {
                    break;
                }
            }
            continue;
        }
        let start = out.len();
        let (pending, still_sure) = if sure { read_line(bare) } else { (Vec::new(), false) };
        sure = still_sure;
        // Bodies follow the line, in the order of their operators.
        let mut after = lines.clone();
        let mut holes = Vec::new();
        let mut bodies = Vec::new();
        for (operator, tag, indented) in &pending {
            let hole = Pending { tag: tag.clone(), indented: *indented, at: 0 };
            let mut attempt = after.clone();
            let text = body(&mut attempt, &hole);
            if text.is_some() {
                after = attempt;
            }
            holes.push((operator.clone(), hole));
            bodies.push(text);
        }
        if holes.is_empty() || runs_its_here_documents(bare, &holes, &bodies) {
            // Read as code, bodies and all, as before they were set apart.
            out.push_str(line);
        } else {
            lines = after;
            // Each operator becomes `""`, filled with its body below.
            let mut from = 0;
            for (operator, hole) in &mut holes {
                out.push_str(line.get(from..operator.start).unwrap_or_default());
                out.push('"');
                hole.at = out.len() - start;
                out.push('"');
                from = operator.end;
            }
            out.push_str(line.get(from..).unwrap_or_default());
            let mut line_out = out.split_off(start);
            // Filled last to first so earlier offsets hold.
            for ((_, hole), text) in holes.iter().zip(bodies).rev() {
                // Never ends: Perl would not run it; read it all.
                let text = text.unwrap_or_else(|| {
                    sure = false;
                    String::new()
                });
                let literal = escaped(&text);
                let shift = literal.len();
                line_out.insert_str(hole.at, &literal);
                for range in &mut data {
                    if range.start >= start + hole.at {
                        range.start += shift;
                        range.end += shift;
                    }
                }
                data.push(start + hole.at..start + hole.at + shift);
            }
            out.push_str(&line_out);
        }
        let ended = bare.trim_end();
        if !ended.is_empty() && !ended.starts_with('#') {
            statement_ended = ended.ends_with([';', '{', '}']);
        }
    }
    SetApart { code: out, data }
}

/// Whether the here-documents opened on `line`, with their `bodies`, may
/// be code: given to `eval` on that line (`eval <<'CODE'`), or
/// interpolating (`<<"X"`, `<<X`) a body that holds a code block (`${\
/// do {…}}`, `@{[ … ]}`), which Perl runs as it builds the string.
fn runs_its_here_documents(
    line: &str,
    holes: &[(Range<usize>, Pending)],
    bodies: &[Option<String>],
) -> bool {
    let evaluates =
        line.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|word| word == "eval");
    evaluates
        || holes.iter().zip(bodies).any(|((operator, _), text)| {
            let interpolates = !line.get(operator.clone()).is_some_and(|text| text.contains('\''));
            interpolates
                && text.as_ref().is_some_and(|text| text.contains("${") || text.contains("@{"))
        })
}

/// `=pod`, `=head1`, `=begin`…: a line opening POD.
fn starts_pod(line: &str) -> bool {
    line.strip_prefix('=').and_then(|rest| rest.chars().next()).is_some_and(|c| c.is_alphabetic())
}

/// The body of the here-document `pending` from the lines that follow,
/// its terminator line consumed; `None` when it never ends.
fn body<'a>(lines: &mut impl Iterator<Item = &'a str>, pending: &Pending) -> Option<String> {
    let mut text = String::new();
    for line in lines {
        let bare = line.trim_end_matches(['\n', '\r']);
        let candidate = if pending.indented { bare.trim_start() } else { bare };
        if candidate == pending.tag {
            return Some(text);
        }
        if !budget::produce(line.len()) {
            return None;
        }
        text.push_str(line);
    }
    None
}

/// The text as a double-quoted literal's inside, as `text::literal_at`
/// reads it back.
fn escaped(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The here-document operators of one line outside its strings and
/// comments (where each is, its tag, whether indented), and whether the
/// reader is still sure where strings are after it.
fn read_line(line: &str) -> (Vec<(Range<usize>, String, bool)>, bool) {
    let mut found = Vec::new();
    let mut quote: Option<char> = None;
    let mut chars = line.char_indices().peekable();
    let mut previous = ' ';
    while let Some((at, c)) = chars.next() {
        if let Some(open) = quote {
            if c == '\\' {
                chars.next();
            } else if c == open {
                quote = None;
            }
            previous = c;
            continue;
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '#' if previous != '$' => break,
            '<' if line.get(at..).is_some_and(|rest| rest.starts_with("<<")) => {
                if let Some((end, tag, indented)) = heredoc_at(line, at) {
                    found.push((at..end, tag, indented));
                    while chars.peek().is_some_and(|(next, _)| *next < end) {
                        chars.next();
                    }
                }
            }
            _ if quote_like_at(line, at, previous) => return (found, false),
            _ => {}
        }
        previous = c;
    }
    (found, quote.is_none())
}

/// A here-document operator at `at` (`<<"TAG"`, `<<'TAG'`, `<<~TAG`,
/// `<<TAG`): where it ends, its tag, and whether it is indented.
fn heredoc_at(line: &str, at: usize) -> Option<(usize, String, bool)> {
    let rest = line.get(at + 2..)?;
    let (rest, indented, skipped) = match rest.strip_prefix('~') {
        Some(rest) => (rest, true, 3),
        None => (rest, false, 2),
    };
    let first = rest.chars().next()?;
    if first == '\'' || first == '"' {
        let inner = rest.get(1..)?;
        let close = inner.find(first)?;
        let tag = inner.get(..close)?;
        return Some((at + skipped + close + 2, tag.to_owned(), indented));
    }
    if !(first.is_alphabetic() || first == '_') {
        return None;
    }
    let length = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    Some((at + skipped + length, rest.get(..length)?.to_owned(), indented))
}

/// Syntax whose strings a line-by-line reader cannot follow: the
/// quote-like operators (`q{`, `qq(`, `qw/`, `m!`, `s{`, `tr/`…) and
/// regexes (`=~ /…/`, `split /…/`).
fn quote_like_at(line: &str, at: usize, previous: char) -> bool {
    let rest = line.get(at..).unwrap_or_default();
    if rest.starts_with("=~") || rest.starts_with("!~") {
        return true;
    }
    if rest.starts_with('/') && matches!(previous, '(' | ',' | ' ' | '{' | '!' | '=') {
        // `/` after an operand is division; after these, a regex may open.
        let before = line.get(..at).unwrap_or_default().trim_end();
        return before.is_empty() || before.ends_with(['(', ',', '{', '!', '=', '~']);
    }
    if previous.is_alphanumeric() || previous == '_' || previous == '$' || previous == '@' {
        return false;
    }
    ["qq", "qw", "qx", "qr", "tr", "q", "m", "s", "y"].iter().any(|word| {
        rest.strip_prefix(word).is_some_and(|after| {
            let after = after.trim_start();
            after.chars().next().is_some_and(|delimiter| {
                !delimiter.is_alphanumeric()
                    && !delimiter.is_whitespace()
                    && !matches!(delimiter, '_' | ',' | ';' | ')' | '=' | '-')
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::set_apart;

    #[test]
    fn here_documents_are_literals_and_code_after_them_stays() {
        let apart = set_apart("print <<'DATA';\nopen(FH, '>', '/x');\nDATA\nunlink 'a';\n");
        assert_eq!(apart.code, "print \"open(FH, '>', '/x');\n\";\nunlink 'a';\n");
        assert_eq!(apart.data.len(), 1);
    }

    #[test]
    fn here_documents_that_may_run_stay_code() {
        for code in [
            "eval <<'CODE';\nunlink '/x';\nCODE\n",
            "print eval <<CODE;\nunlink '/x';\nCODE\n",
            "print <<\"X\";\n${\\ do { unlink '/x'; '' }}\nX\n",
            "print <<X;\n@{[ unlink '/x' ]}\nX\n",
        ] {
            let apart = set_apart(code);
            assert!(apart.data.is_empty() && apart.code.contains("unlink '/x'"), "{code}");
        }
        // Single-quoted, the same braces are text.
        let apart = set_apart("print <<'X';\n${\\ do { unlink '/x'; '' }}\nX\n");
        assert_eq!(apart.data.len(), 1);
    }

    #[test]
    fn unclear_strings_keep_everything_code() {
        for code in [
            "my $x = q{\n__END__\n};\nunlink 'a';\n",
            "$x =~ /\"/; print \"a;\n__END__\nunlink 'a';\n",
        ] {
            assert!(set_apart(code).code.contains("unlink"), "{code}");
        }
    }
}

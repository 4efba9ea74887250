//! `sed` read for what its script does besides editing text: GNU sed's
//! `e COMMAND` runs a shell command, `e` alone and the `s///e` flag run
//! the pattern space (a line of the input, so code nobody has seen), and
//! `w FILE`, `W FILE` and the `s///w FILE` flag write a file; `-i`
//! rewrites every file it is given. `--sandbox` refuses all of these, so
//! nothing is found then.
//!
//! The script is read command by command (addresses, `{…}` blocks, `;`
//! and newlines, the delimiters of `s` and `y`, text of `a`, `i`, `c`),
//! in one pass over its characters. A script in a file (`-f FILE`) is not
//! seen: sed then runs whatever that file says, which is left to what the
//! rest of the action shows about the file.

use super::{Builder, Command, Fact, options, preview};

/// GNU sed's options (BSD's `-E`, `-i EXT` included), for where its
/// script and files are.
static SED: options::Grammar = options::Grammar {
    short_values: "efl",
    short_optional: "i",
    long: &[
        options::Long { name: "expression", short: Some('e'), takes: options::Takes::Value },
        options::Long { name: "file", short: Some('f'), takes: options::Takes::Value },
        options::Long { name: "line-length", short: Some('l'), takes: options::Takes::Value },
        options::Long { name: "in-place", short: Some('i'), takes: options::Takes::OptionalValue },
        options::Long { name: "sandbox", short: None, takes: options::Takes::Nothing },
    ],
    abbreviates: true,
    stops_at_positional: false,
    unlisted: options::Unlisted::Flag,
    refuses_unlisted: false,
};

/// What one script does besides editing text.
#[derive(Debug, Default, PartialEq, Eq)]
struct Effects {
    /// Shell commands it runs (`e COMMAND`, the replacement of `s///e`).
    runs: Vec<String>,
    /// It runs text from its input (`e` alone, `s///e`).
    runs_input: bool,
    /// Files it writes (`w FILE`, `s///w FILE`).
    writes: Vec<String>,
}

/// Analyses a `sed` command: the commands its scripts run and the files
/// they and `-i` write.
pub(super) fn analyze(builder: &mut Builder, command: &Command) {
    let parsed = SED.parse(command.argv.get(1..).unwrap_or_default());
    let mut scripts: Vec<&str> = parsed.values(&["-e"]).collect();
    // BSD's `sed -i '' …`: the empty word is `-i`'s suffix.
    let bsd_suffix = parsed.has("-i")
        && parsed.value("-i").is_none()
        && parsed.positionals.first().is_some_and(String::is_empty);
    let mut files = parsed.positionals.iter().skip(usize::from(bsd_suffix)).map(String::as_str);
    if scripts.is_empty() && !parsed.has("-f") {
        scripts.extend(files.next());
    }
    if parsed.has("-i") {
        for file in files {
            builder.write_from(&[], file, false);
        }
    }
    if parsed.has("--sandbox") {
        return;
    }
    for script in scripts {
        let found = read_script(script);
        for text in &found.runs {
            super::executors::run_text(builder, command, text, "sed e");
        }
        if found.runs_input {
            builder.fact(
                Fact::EvalOfUnknownText,
                format!("sed runs lines of its input as commands: {}", preview(script)),
            );
        }
        for file in &found.writes {
            builder.write_from(&[], file, false);
        }
    }
}

/// Reads a script command by command.
fn read_script(script: &str) -> Effects {
    let chars: Vec<char> = script.chars().collect();
    let mut found = Effects::default();
    let mut at = 0;
    while at < chars.len() {
        at = skip_address(&chars, at);
        let Some(&command) = chars.get(at) else { break };
        at += 1;
        match command {
            's' => {
                let Some(&delimiter) = chars.get(at) else { break };
                let pattern_end = delimited(&chars, at + 1, delimiter);
                let replacement_end = delimited(&chars, pattern_end + 1, delimiter);
                let replacement: String = chars
                    .get(pattern_end + 1..replacement_end)
                    .unwrap_or_default()
                    .iter()
                    .collect();
                at = replacement_end + 1;
                let flags_end = chars
                    .iter()
                    .skip(at)
                    .position(|c| matches!(c, ';' | '\n' | '}' | 'w'))
                    .map_or(chars.len(), |offset| at + offset);
                let flags: String = chars.get(at..flags_end).unwrap_or_default().iter().collect();
                at = flags_end;
                if flags.contains('e') {
                    found.runs_input = true;
                    found.runs.push(
                        replacement
                            .replace(format!("\\{delimiter}").as_str(), &delimiter.to_string()),
                    );
                }
                if chars.get(at) == Some(&'w') {
                    let (file, end) = rest_of_line(&chars, at + 1);
                    found.writes.push(file);
                    at = end;
                }
            }
            'y' => {
                let Some(&delimiter) = chars.get(at) else { break };
                let from_end = delimited(&chars, at + 1, delimiter);
                at = delimited(&chars, from_end + 1, delimiter) + 1;
            }
            'e' => {
                let (text, end) = rest_of_line(&chars, at);
                if text.is_empty() {
                    found.runs_input = true;
                } else {
                    found.runs.push(text);
                }
                at = end;
            }
            'w' | 'W' => {
                let (file, end) = rest_of_line(&chars, at);
                found.writes.push(file);
                at = end;
            }
            // Text to the end of the line, and on to the next line
            // while a line ends with a backslash.
            'a' | 'i' | 'c' => loop {
                let (text, end) = rest_of_line(&chars, at);
                at = end;
                if !text.ends_with('\\') || at >= chars.len() {
                    break;
                }
            },
            // A file name to the end of the line.
            'r' | 'R' => at = rest_of_line(&chars, at).1,
            // A label or a branch target runs to `;` or the end of the line.
            ':' | 'b' | 't' | 'T' => {
                at = chars
                    .iter()
                    .skip(at)
                    .position(|c| matches!(c, ';' | '\n'))
                    .map_or(chars.len(), |offset| at + offset);
            }
            _ => {}
        }
    }
    found
}

/// Past the address of a command (`12`, `$`, `/re/`, `\%re%`, a range
/// `A,B`, `~step`, `!`), and the blanks, `;` and braces before it.
fn skip_address(chars: &[char], mut at: usize) -> usize {
    loop {
        match chars.get(at) {
            Some(c)
                if c.is_whitespace()
                    || matches!(c, ';' | '{' | '}' | '!' | ',' | '$' | '~' | '+') =>
            {
                at += 1
            }
            Some(c) if c.is_ascii_digit() => at += 1,
            Some('/') => at = delimited(chars, at + 1, '/') + 1,
            Some('\\') => match chars.get(at + 1) {
                Some(&delimiter) => at = delimited(chars, at + 2, delimiter) + 1,
                None => return chars.len(),
            },
            // `I` and `M` after a regex address are its flags.
            Some('I' | 'M') if at > 0 && chars.get(at - 1) == Some(&'/') => at += 1,
            _ => return at,
        }
    }
}

/// Where the part starting at `from` ends: the next `delimiter` that is
/// not escaped (or the end of the script).
fn delimited(chars: &[char], from: usize, delimiter: char) -> usize {
    let mut at = from;
    while let Some(&c) = chars.get(at) {
        if c == '\\' {
            at += 2;
            continue;
        }
        if c == delimiter {
            return at;
        }
        at += 1;
    }
    chars.len()
}

/// The argument from `from` to the end of the line, leading blanks
/// removed, and where the next command starts.
fn rest_of_line(chars: &[char], from: usize) -> (String, usize) {
    let end = chars.iter().skip(from).position(|&c| c == '\n').map_or(chars.len(), |o| from + o);
    let text: String = chars.get(from..end).unwrap_or_default().iter().collect();
    (text.trim().to_owned(), end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_that_run_or_write_are_found_past_addresses_and_other_commands() {
        assert_eq!(read_script("e rm -rf /tmp/x").runs, ["rm -rf /tmp/x"]);
        assert_eq!(read_script("1e touch stamp\np").runs, ["touch stamp"]);
        let substituted = read_script("s|x|git reset --hard|e");
        assert_eq!(substituted.runs, ["git reset --hard"]);
        assert!(substituted.runs_input);
        assert!(read_script("/^#/!e").runs_input);
        assert_eq!(read_script("s/a/b/gw out.txt").writes, ["out.txt"]);
        assert_eq!(read_script("/start/,/end/{ w ~/.profile\n}").writes, ["~/.profile"]);
    }

    #[test]
    fn ordinary_edits_run_and_write_nothing() {
        for script in [
            "s/e/E/g",
            "s/old/new/;s/x/y/",
            "/^$/d",
            "1,20p",
            "y/abc/xyz/",
            "s/\\/e/x/",
            "$a\\\nend of file",
            "/^version = /c version = \"2.0\"",
            "s/ws/w/",
            ":a;N;$!ba;s/\\n/ /g",
        ] {
            assert_eq!(read_script(script), Effects::default(), "{script}");
        }
    }
}

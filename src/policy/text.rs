//! What the policy sees of an action: the hint normalised, split into shell
//! segments, unwrapped, and dequoted, as a small set of variants.
//!
//! Normalisation is Unicode NFKC, removal of invisible format characters
//! (zero-width spaces and joiners, bidi controls, soft hyphens), lower case,
//! whitespace collapsed to single spaces, `${name}` written `$name`, and
//! `$home` written `~`. Segments are split at shell
//! separators (`;`, `&`, `|`, newlines, backticks, parentheses and braces,
//! which covers `&&`, `||` and `$(…)`). Each segment is unwrapped: leading
//! `VAR=value` assignments and wrapper programs (`sudo`, `env`, `nice`,
//! `timeout`, `xargs`, …, with their options) are removed, an absolute or
//! relative program path is reduced to its name, git's global options
//! (`git -C dir push`) are dropped, and the payload of
//! `bash -c '…'`, `python -c '…'` and the like is analysed as a hint of its
//! own. Every form is also offered with shell quotes and backslashes
//! removed. Splitting errs towards more variants: a policy pattern that
//! matches any variant counts, so extra variants can only make the verdict
//! stricter.
//!
//! Hints longer than [`MAX_HINT_BYTES`] are not analysed at all: the caller
//! must fail closed.

use unicode_normalization::UnicodeNormalization;

/// The longest hint analysed. Longer hints are refused, not truncated: a
/// dangerous tail must not hide behind a long harmless head.
pub const MAX_HINT_BYTES: usize = 8 * 1024;

/// Nested `sh -c` payloads followed before giving up on deeper ones.
const MAX_PAYLOAD_DEPTH: usize = 4;

/// A hint broken into the forms patterns are matched against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variants {
    /// Every distinct form: the whole hint (as written and dequoted), then
    /// each segment's forms.
    forms: Vec<String>,
    /// Per segment, its forms: as written, unwrapped, dequoted.
    pub segments: Vec<Vec<String>>,
}

impl Variants {
    /// Every distinct form, whole and per segment.
    pub fn all(&self) -> impl Iterator<Item = &str> {
        self.forms.iter().map(String::as_str)
    }
}

/// The hint is too long to analyse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HintTooLong {
    pub bytes: usize,
}

/// Normalises and splits `hint`.
pub fn variants(hint: &str) -> Result<Variants, HintTooLong> {
    if hint.len() > MAX_HINT_BYTES {
        return Err(HintTooLong { bytes: hint.len() });
    }
    let normal = plain_variables(&normalize(hint));
    let whole = collapse(&normal);
    let mut forms = Vec::new();
    push_unique(&mut forms, dequote(&whole));
    forms.insert(0, whole);
    let mut segments = Vec::new();
    collect_segments(&normal, 0, &mut segments);
    for form in segments.iter().flatten() {
        push_unique(&mut forms, form.clone());
    }
    Ok(Variants { forms, segments })
}

/// NFKC, invisible characters removed, lower case. Whitespace is kept as
/// is so newlines can still separate segments.
pub fn normalize(text: &str) -> String {
    // ASCII is already NFKC and has no invisible characters.
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    text.nfkc()
        .filter(|&c| !is_invisible(c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Characters that render as nothing but would split a pattern's literal.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{FFF0}'..='\u{FFF8}' | '\u{E0000}'..='\u{E0FFF}')
}

/// `${name}` -> `$name`, so braces around a variable do not split it, and
/// `$home` -> `~`, so one pattern covers both ways of naming home.
fn plain_variables(text: &str) -> String {
    let text = braces_to_plain_variables(text);
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("$home") {
        let end = at + "$home".len();
        let whole_word = rest[end..].chars().next().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        out.push_str(&rest[..at]);
        out.push_str(if whole_word { "~" } else { "$home" });
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn braces_to_plain_variables(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        let after = &rest[at + 2..];
        let name_len = after.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(after.len());
        if name_len > 0 && after[name_len..].starts_with('}') {
            out.push_str(&rest[..at + 1]);
            out.push_str(&after[..name_len]);
            rest = &after[name_len + 1..];
        } else {
            out.push_str(&rest[..at + 2]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Collapses runs of whitespace to one space and trims.
pub fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn dequote(text: &str) -> String {
    collapse(&text.replace(['\'', '"', '\\'], ""))
}

fn push_unique(forms: &mut Vec<String>, form: String) {
    if !form.is_empty() && !forms.contains(&form) {
        forms.push(form);
    }
}

fn is_separator(c: char) -> bool {
    matches!(c, ';' | '&' | '|' | '\n' | '\r' | '`' | '(' | ')' | '{' | '}')
}

fn collect_segments(text: &str, depth: usize, out: &mut Vec<Vec<String>>) {
    for piece in text.split(is_separator) {
        let written = collapse(piece);
        if written.is_empty() || written == "$" {
            continue;
        }
        let mut forms = vec![written.clone()];
        // A descriptive label ("executing shell command: sudo rm …") is
        // dropped so the command after it can be unwrapped too.
        let command = written.rsplit_once(": ").map_or(written.as_str(), |(_, command)| command);
        let (unwrapped, payload) = unwrap(command);
        push_unique(&mut forms, command.to_owned());
        push_unique(&mut forms, unwrapped.clone());
        push_unique(&mut forms, dequote(&written));
        push_unique(&mut forms, dequote(&unwrapped));
        out.push(forms);
        if let Some(payload) = payload
            && depth < MAX_PAYLOAD_DEPTH
        {
            let payload = strip_outer_quotes(&payload);
            out.push(vec![collapse(&payload)]);
            collect_segments(&payload, depth + 1, out);
        }
    }
}

fn strip_outer_quotes(text: &str) -> String {
    let trimmed = text.trim();
    for quote in ['\'', '"'] {
        if let Some(inner) = trimmed.strip_prefix(quote).and_then(|t| t.strip_suffix(quote)) {
            return inner.to_owned();
        }
    }
    trimmed.replace(['\'', '"'], "")
}

/// Options of wrapper programs that take a separate argument.
fn option_takes_argument(wrapper: &str, option: &str) -> bool {
    let with_argument: &[&str] = match wrapper {
        "sudo" | "doas" => &["-u", "-g", "-h", "-p", "-c", "-d", "-r", "-t"],
        "env" => &["-u", "-s", "-c", "--unset", "--chdir", "--split-string"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "xargs" => &["-i", "-n", "-p", "-d", "-l", "-e", "-s", "-a", "--max-args", "--max-procs", "--delimiter", "--arg-file"],
        "ionice" => &["-c", "-n", "-p", "--class", "--classdata"],
        "stdbuf" => &["-i", "-o", "-e"],
        "chrt" => &["-p"],
        _ => &[],
    };
    with_argument.contains(&option)
}

/// Wrapper programs whose arguments are another command.
fn is_wrapper(program: &str) -> bool {
    matches!(program,
        "sudo" | "doas" | "env" | "nice" | "nohup" | "timeout" | "xargs" | "command" | "exec"
        | "time" | "setsid" | "stdbuf" | "ionice" | "chrt" | "unbuffer" | "builtin" | "then" | "do"
        | "else" | "!")
}

/// Interpreters whose `-c`/`-e` argument is a program text of its own.
fn payload_flag(program: &str) -> Option<&'static [&'static str]> {
    match program {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish" | "ash" | "busybox" | "su" => Some(&["-c"]),
        "python" | "python2" | "python3" | "pypy" | "pypy3" => Some(&["-c"]),
        "perl" | "ruby" | "node" | "nodejs" | "deno" | "php" | "lua" => Some(&["-e", "-r", "-c"]),
        "eval" => Some(&[]),
        _ => None,
    }
}

fn is_assignment(token: &str) -> bool {
    token.split_once('=').is_some_and(|(name, _)| {
        let mut chars = name.chars();
        chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && chars.all(|c| c.is_alphanumeric() || c == '_')
    })
}

fn program_name(token: &str) -> &str {
    let bare = token.trim_matches(['\'', '"']);
    bare.rsplit('/').next().filter(|name| !name.is_empty()).unwrap_or(bare)
}

/// Removes assignments and wrappers from the front of a segment and reduces
/// the program to its name. Returns the unwrapped command and, for an
/// interpreter given `-c`-style code, that code.
fn unwrap(segment: &str) -> (String, Option<String>) {
    let tokens: Vec<&str> = segment.split(' ').collect();
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        if is_assignment(token) {
            i += 1;
            continue;
        }
        let program = program_name(token);
        if !is_wrapper(program) {
            break;
        }
        i += 1;
        // Skip the wrapper's options (and their arguments), assignments (for
        // `env`), and a duration (for `timeout`).
        while i < tokens.len() {
            let t = tokens[i];
            if t == "--" {
                i += 1;
                break;
            }
            if t.starts_with('-') && t.len() > 1 {
                let takes = option_takes_argument(program, t);
                i += if takes { 2 } else { 1 };
            } else if is_assignment(t) || (program == "timeout" && t.starts_with(|c: char| c.is_ascii_digit())) {
                i += 1;
            } else {
                break;
            }
        }
    }
    let Some(first) = tokens.get(i) else {
        return (segment.to_owned(), None);
    };
    let program = program_name(first);
    let mut command = vec![program];
    let mut rest = i + 1;
    if program == "git" {
        // Global options go before the subcommand: `git -C repo push`.
        while let Some(option) = tokens.get(rest).filter(|t| t.starts_with('-')) {
            let takes = matches!(*option, "-c" | "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" | "--config-env");
            rest += if takes { 2 } else { 1 };
        }
    }
    command.extend_from_slice(tokens.get(rest..).unwrap_or_default());
    let payload = payload_flag(program).and_then(|flags| {
        let rest = &tokens[i + 1..];
        if flags.is_empty() {
            return (!rest.is_empty()).then(|| rest.join(" "));
        }
        // A payload flag may be combined with others (`bash -lc`, `-ec`).
        rest.iter().position(|t| {
            flags.contains(t) || (t.starts_with('-') && !t.starts_with("--") && flags.iter().any(|f| t.ends_with(&f[1..])))
        })
        .filter(|&at| at + 1 < rest.len())
        .map(|at| rest[at + 1..].join(" "))
    });
    (command.join(" "), payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_forms(hint: &str) -> Vec<String> {
        variants(hint).unwrap().all().map(str::to_owned).collect()
    }

    fn has(hint: &str, form: &str) -> bool {
        all_forms(hint).iter().any(|f| f == form)
    }

    #[test]
    fn normalisation() {
        assert_eq!(collapse(&normalize("  RM\t -RF\u{200B}  /  ")), "rm -rf /");
        assert_eq!(collapse(&normalize("ｒｍ －ｒｆ ／")), "rm -rf /");
        assert_eq!(collapse(&normalize("r\u{200D}m -r\u{00AD}f /")), "rm -rf /");
    }

    #[test]
    fn segments_split_at_shell_separators() {
        for hint in [
            "ls; rm -rf /", "ls && rm -rf /", "ls || rm -rf /", "ls | rm -rf /", "ls\nrm -rf /",
            "echo $(rm -rf /)", "echo `rm -rf /`", "ls & rm -rf /", "(rm -rf /)", "{ rm -rf /; }",
        ] {
            assert!(has(hint, "rm -rf /"), "{hint}: {:?}", all_forms(hint));
        }
    }

    #[test]
    fn unwrapping_removes_wrappers_assignments_and_paths() {
        for hint in [
            "sudo rm -rf /", "sudo -u root rm -rf /", "env rm -rf /", "env -i PATH=/bin rm -rf /",
            "FOO=1 BAR=2 rm -rf /", "/bin/rm -rf /", "/usr/bin/rm -rf /", "nice -n 10 rm -rf /",
            "nohup rm -rf /", "timeout 5 rm -rf /", "timeout -s KILL 10s rm -rf /", "xargs rm -rf /",
            "sudo env X=1 nice nohup /usr/bin/rm -rf /", "command rm -rf /", "exec rm -rf /",
            "executing shell command: sudo FOO=1 /bin/rm -rf /",
        ] {
            assert!(has(hint, "rm -rf /"), "{hint}: {:?}", all_forms(hint));
        }
        for hint in ["git -C ~/repo push --force", "git -c a=b --no-pager push --force", "/usr/bin/git -C x push --force"] {
            assert!(has(hint, "git push --force"), "{hint}: {:?}", all_forms(hint));
        }
        for hint in ["rm -rf ${HOME}", "rm -rf \"${HOME}\"", "rm -rf $HOME", "rm -rf ~"] {
            assert!(all_forms(hint).iter().any(|f| f == "rm -rf ~"), "{hint}: {:?}", all_forms(hint));
        }
        assert!(all_forms("echo $homework").iter().any(|f| f == "echo $homework"));
    }

    #[test]
    fn interpreter_payloads_are_analysed() {
        for hint in [
            "bash -c 'rm -rf /'", "sh -c \"rm -rf /\"", "bash -lc 'cd /tmp; rm -rf /'",
            "sudo bash -c 'sudo rm -rf /'", "zsh -c 'echo hi && rm -rf /'", "eval 'rm -rf /'",
            "bash -c \"sh -c 'rm -rf /'\"",
        ] {
            assert!(has(hint, "rm -rf /"), "{hint}: {:?}", all_forms(hint));
        }
        let python = "python3 -c 'import shutil; shutil.rmtree(\"/\")'";
        assert!(all_forms(python).iter().any(|f| f == "shutil.rmtree"), "{:?}", all_forms(python));
    }

    #[test]
    fn quotes_are_removed_in_a_variant() {
        assert!(has("rm -rf \"/\"", "rm -rf /"));
        assert!(has("'rm' -rf '/'", "rm -rf /"));
        assert!(has("r\\m -rf /", "rm -rf /"));
    }

    #[test]
    fn over_long_hints_are_refused() {
        assert_eq!(variants(&"a".repeat(MAX_HINT_BYTES + 1)), Err(HintTooLong { bytes: MAX_HINT_BYTES + 1 }));
        assert!(variants(&"a".repeat(MAX_HINT_BYTES)).is_ok());
    }
}

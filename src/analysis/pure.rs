//! What a command substitution prints, when that is fixed by its text:
//! `$(echo ~)`, `$(printf '%s' /etc)`, `$(dirname /etc/x)`, `$(pwd)`,
//! `$(printf %s ZXRj | base64 -d)`. Only a small set of programs whose
//! output depends on nothing but their arguments, their input and the
//! working folder is evaluated (`echo`, `printf`, `pwd`, `dirname`,
//! `basename`, `base64 -d`, `cat` passing its input on), alone or in a
//! pipeline of them, with every word known. Anything else (another
//! program, a redirection, an assignment, an unknown word, more than one
//! statement) is `None`: the value stays unknown
//! ([`super::words::RUN_TIME_VALUE`]). The commands inside still run and
//! are analysed as such by the walk; this only says what they print.
//!
//! The same evaluation gives what `echo` and `printf` write when their
//! output is redirected or piped ([`printed`]). And where the output is
//! not known, whether it may hold an option ([`prints_no_options`]).

use tree_sitter::Node;

use super::words::{self, Vars};

/// Conversions of one `printf` format applied at most this many times
/// (the format repeats while arguments remain).
const MAX_FORMAT_ROUNDS: usize = 64;

/// What the substitution `node` prints, trailing newlines removed as the
/// shell removes them; `None` when that is not known without running it.
pub(super) fn substitution_output(node: Node<'_>, source: &str, vars: &Vars) -> Option<String> {
    let mut cursor = node.walk();
    let statements: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    let [statement] = statements.as_slice() else { return None };
    let stages: Vec<Node<'_>> = match statement.kind() {
        "command" => vec![*statement],
        "pipeline" => {
            let mut cursor = statement.walk();
            statement.named_children(&mut cursor).collect()
        }
        _ => return None,
    };
    let mut input: Option<String> = None;
    for stage in stages {
        let argv = known_words(stage, source, vars)?;
        input = Some(printed(&argv, input.as_deref(), vars)?);
    }
    input.map(|output| output.trim_end_matches('\n').to_owned())
}

/// git commands that print object names or ref names, which never start
/// with `-` (git refuses such a ref), and options that make them print
/// other text.
const GIT_PRINTS_NAMES: [&str; 8] = [
    "rev-parse",
    "merge-base",
    "hash-object",
    "write-tree",
    "commit-tree",
    "rev-list",
    "symbolic-ref",
    "describe",
];
const GIT_PRINTS_TEXT: [&str; 3] = ["--sq-quote", "--parseopt", "--format"];

/// Whether the substitution `node`, whose output is not known, prints
/// only words that are never options: the names git prints
/// (`$(git merge-base HEAD main)`), a user's name or id, a count.
pub(super) fn prints_no_options(node: Node<'_>, source: &str, vars: &Vars) -> bool {
    let mut cursor = node.walk();
    let statements: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    let [statement] = statements.as_slice() else { return false };
    let Some(argv) = known_words(*statement, source, vars) else { return false };
    let Some((program, args)) = argv.split_first() else { return false };
    match super::command::base_name(program).as_str() {
        "git" => {
            args.first().is_some_and(|command| GIT_PRINTS_NAMES.contains(&command.as_str()))
                && !args.iter().any(|arg| GIT_PRINTS_TEXT.iter().any(|text| arg.starts_with(text)))
        }
        "nproc" | "whoami" => true,
        "id" => args.iter().all(|arg| matches!(arg.as_str(), "-u" | "-g" | "-un" | "-gn")),
        _ => false,
    }
}

/// The words of a plain command (no assignment, redirection or unknown
/// word), expanded.
fn known_words(command: Node<'_>, source: &str, vars: &Vars) -> Option<Vec<String>> {
    if command.kind() != "command" {
        return None;
    }
    let mut cursor = command.walk();
    let mut argv = Vec::new();
    for child in command.named_children(&mut cursor) {
        if matches!(child.kind(), "variable_assignment" | "file_redirect" | "herestring_redirect") {
            return None;
        }
        let expanded = words::expand(child, source, vars);
        if expanded.dynamic || expanded.globbed {
            return None;
        }
        argv.extend(expanded.words);
    }
    Some(argv)
}

/// What `argv` prints given `input`, for the programs evaluated here;
/// `None` for any other program or use.
pub(super) fn printed(argv: &[String], input: Option<&str>, vars: &Vars) -> Option<String> {
    let (program, args) = argv.split_first()?;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match super::command::base_name(program).as_str() {
        "echo" => Some(echo(&args)),
        "printf" => printf(&args),
        "pwd" if args.iter().all(|a| matches!(*a, "-L" | "-P")) => working_folder(vars),
        "dirname" if !args.is_empty() && args.iter().all(|a| !a.starts_with('-')) => {
            Some(args.iter().map(|path| format!("{}\n", dirname(path))).collect())
        }
        "basename" => basename(&args),
        "base64" if matches!(args.as_slice(), ["-d" | "--decode" | "-D"]) => {
            String::from_utf8(words::base64_bytes(input?)?).ok()
        }
        "cat" if args.is_empty() || args == ["-"] => input.map(str::to_owned),
        _ => None,
    }
}

/// `$PWD` when the action set it, else the folder the action starts in,
/// which the analysis writes `.` (resolved later against the real one).
fn working_folder(vars: &Vars) -> Option<String> {
    match vars.value("PWD") {
        None => Some(".\n".to_owned()),
        Some(known) => known.map(|folder| format!("{folder}\n")),
    }
}

fn echo(args: &[&str]) -> String {
    let mut newline = true;
    let mut escapes = false;
    let mut at = 0;
    while let Some(flag) = args.get(at).and_then(|a| a.strip_prefix('-')) {
        if flag.is_empty() || !flag.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for c in flag.chars() {
            match c {
                'n' => newline = false,
                'e' => escapes = true,
                _ => escapes = false,
            }
        }
        at += 1;
    }
    let text = args.get(at..).unwrap_or_default().join(" ");
    let mut out = if escapes { words::decode_ansi_c(&text) } else { text };
    if newline {
        out.push('\n');
    }
    out
}

/// `printf FORMAT ARGS…` for the conversions that copy an argument
/// (`%s`, `%q`, `%b`, `%d`…, any width ignored) and `%%`; `-v` (which prints
/// nothing) and unknown conversions are `None`. The shells' builtin takes
/// no other option: it refuses one and prints nothing (`printf --hard`).
fn printf(args: &[&str]) -> Option<String> {
    let args = match args.first() {
        Some(&"--") => args.get(1..)?,
        Some(first) if first.starts_with("-v") => return None,
        Some(first) if first.starts_with('-') && *first != "-" => return Some(String::new()),
        _ => args,
    };
    let (format, mut rest) = args.split_first()?;
    let format = words::decode_ansi_c(format);
    let mut out = String::new();
    for _ in 0..MAX_FORMAT_ROUNDS {
        let mut converted = false;
        let mut chars = format.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            while chars.peek().is_some_and(|c| matches!(c, '-' | '+' | ' ' | '#' | '0'..='9' | '.'))
            {
                chars.next();
            }
            match chars.next()? {
                '%' => out.push('%'),
                conversion @ ('s' | 'q' | 'b' | 'c' | 'd' | 'i' | 'u') => {
                    converted = true;
                    let (argument, after) = rest.split_first().map_or(("", rest), |(a, r)| (a, r));
                    rest = after;
                    match conversion {
                        'b' => out.push_str(&words::decode_ansi_c(argument)),
                        'c' => out.extend(argument.chars().next()),
                        _ => out.push_str(argument),
                    }
                }
                _ => return None,
            }
        }
        if !converted || rest.is_empty() {
            return Some(out);
        }
    }
    None
}

fn dirname(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return if path.is_empty() { ".".into() } else { "/".into() };
    }
    match trimmed.rsplit_once('/') {
        None => ".".into(),
        Some((head, _)) => {
            let head = head.trim_end_matches('/');
            if head.is_empty() { "/".into() } else { head.into() }
        }
    }
}

/// `basename NAME [SUFFIX]`; options (`-a`, `-s`) are not evaluated.
fn basename(args: &[&str]) -> Option<String> {
    let (name, suffix) = match args {
        [name] => (*name, None),
        [name, suffix] => (*name, Some(*suffix)),
        _ => return None,
    };
    if name.starts_with('-') {
        return None;
    }
    let trimmed = name.trim_end_matches('/');
    let base = match trimmed.rsplit_once('/') {
        _ if trimmed.is_empty() => {
            if name.is_empty() {
                ""
            } else {
                "/"
            }
        }
        Some((_, base)) => base,
        None => trimmed,
    };
    let base = suffix
        .and_then(|suffix| base.strip_suffix(suffix).filter(|stripped| !stripped.is_empty()))
        .unwrap_or(base);
    Some(format!("{base}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `read` of the first command substitution in `line`.
    fn substitution<T>(line: &str, read: impl Fn(Node<'_>, &str, &Vars) -> T) -> T {
        let tree = super::super::parse_bash(line).unwrap();
        let mut found = None;
        let mut stack = vec![tree.root_node()];
        while let Some(node) = stack.pop() {
            if node.kind() == "command_substitution" {
                found = Some(node);
                break;
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
        read(found.unwrap(), line, &Vars::default())
    }

    fn output(line: &str) -> Option<String> {
        substitution(line, substitution_output)
    }

    #[test]
    fn names_git_prints_are_never_options() {
        for (line, never) in [
            ("x $(git merge-base HEAD main)", true),
            ("x $(git rev-parse --abbrev-ref HEAD)", true),
            ("x $(id -u)", true),
            ("x $(git rev-parse --sq-quote -rf)", false),
            ("x $(git log -1 --format=%s)", false),
            ("x $(git rev-parse $REF)", false),
            ("x $(cat args.txt)", false),
        ] {
            assert_eq!(substitution(line, prints_no_options), never, "{line}");
        }
    }

    #[test]
    fn pure_programs_print_what_their_words_say() {
        for (line, printed) in [
            ("x $(echo ~)", "~"),
            ("x `echo -n /var/log`", "/var/log"),
            ("x $(printf '%s/%s\\n' /srv data)", "/srv/data"),
            ("x $(printf %s ZXRj | base64 -d)", "etc"),
            ("x $(dirname /opt/app/conf)", "/opt/app"),
            ("x $(dirname file)", "."),
            ("x $(basename /usr/lib/libx.so .so)", "libx"),
            ("x $(pwd)", "."),
            ("x $(echo a b | cat)", "a b"),
            ("x $(printf '%s ' one two)", "one two "),
            ("x $(printf --hard)", ""),
        ] {
            assert_eq!(output(line).as_deref(), Some(printed), "{line}");
        }
    }

    #[test]
    fn anything_that_depends_on_more_than_the_text_is_unknown() {
        for line in [
            "x $(cat notes.txt)",
            "x $(echo $UNSET)",
            "x $(ls)",
            "x $(echo a; echo b)",
            "x $(echo a > f)",
            "x $(printf -v v %s a)",
            "x $(echo *.txt)",
            "x $(whoami)",
        ] {
            assert_eq!(output(line), None, "{line}");
        }
    }
}

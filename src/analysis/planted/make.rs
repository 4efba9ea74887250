//! What a Makefile runs: recipe lines (a tab after a rule, or after `;`
//! on the rule line), the shell of `!=` assignments and of `$(shell …)`
//! anywhere, and `define` bodies (which `$(call)` and `$(eval)` can turn
//! into recipes). Make's own syntax is undone before the shell sees a
//! line: backslash-newline continuations join, `@ - +` prefixes go, `$$`
//! is `$`, variables defined in the file (and make's built-in ones) are
//! expanded, `$(shell X)` becomes `$(X)` (its output is spliced in), and
//! a variable nobody defined becomes a shell variable, which the command
//! analysis reports as not known in advance.

use std::collections::HashMap;

use super::Part;
use crate::analysis::budget;

/// Variables expanded inside one another at most this deep.
const MAX_EXPANSION: usize = 8;

/// Make's built-in variables a recipe is likely to use.
const BUILT_IN: [(&str, &str); 12] = [
    ("MAKE", "make"),
    ("CC", "cc"),
    ("CXX", "g++"),
    ("CPP", "cc -E"),
    ("AR", "ar"),
    ("AS", "as"),
    ("LD", "ld"),
    ("RM", "rm -f"),
    ("INSTALL", "install"),
    ("SHELL", "/bin/sh"),
    ("MAKEFLAGS", ""),
    ("CURDIR", "."),
];

/// One line as make reads it, continuation lines joined.
struct Logical {
    line: usize,
    text: String,
    recipe: bool,
}

/// Joins continuation lines: a recipe keeps its backslash-newlines (the
/// shell reads them) minus the next line's tab; other lines join with a
/// space.
fn logical_lines(content: &str) -> Vec<Logical> {
    let mut out = Vec::new();
    let mut lines = content.lines().enumerate();
    while let Some((index, first)) = lines.next() {
        let recipe = first.starts_with('\t');
        let mut text = first.strip_prefix('\t').unwrap_or(first).to_owned();
        while text.ends_with('\\') && !text.ends_with("\\\\") {
            let Some((_, next)) = lines.next() else { break };
            if recipe {
                text.push('\n');
                text.push_str(next.strip_prefix('\t').unwrap_or(next));
            } else {
                text.pop();
                text.push(' ');
                text.push_str(next.trim_start());
            }
        }
        out.push(Logical { line: index + 1, text, recipe });
    }
    out
}

/// An assignment: name, operator and value.
fn assignment(text: &str) -> Option<(&str, &str, &str)> {
    let body = text.trim_start();
    let body = body
        .strip_prefix("export ")
        .or_else(|| body.strip_prefix("override "))
        .unwrap_or(body)
        .trim_start();
    let equals = body.find('=')?;
    let before = body.get(..equals).unwrap_or_default();
    let (name, operator) = ["::::", ":::", "::", ":", "?", "+", "!"]
        .iter()
        .find_map(|op| {
            before
                .strip_suffix(op)
                .map(|name| (name, body.get(equals - op.len()..=equals).unwrap_or_default()))
        })
        .unwrap_or((before, "="));
    let name = name.trim();
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-$(){}".contains(c));
    valid.then(|| (name, operator, body.get(equals + 1..).unwrap_or_default().trim()))
}

struct Expander<'a> {
    variables: &'a HashMap<String, String>,
    /// `$(shell …)` bodies met while expanding, for parts of their own.
    shells: Vec<String>,
}

impl Expander<'_> {
    /// `text` with make's references replaced by what they stand for.
    fn expand(&mut self, text: &str, depth: usize) -> String {
        let mut out = String::with_capacity(text.len());
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if c != '$' {
                out.push(c);
                continue;
            }
            match chars.peek().map(|&(_, next)| next) {
                Some('$') => {
                    chars.next();
                    out.push('$');
                }
                Some(open @ ('(' | '{')) => {
                    let close = if open == '(' { ')' } else { '}' };
                    let start = at + 2;
                    let Some(end) = matching(text, start, open, close) else {
                        out.push_str(text.get(at..).unwrap_or_default());
                        break;
                    };
                    let inner = text.get(start..end).unwrap_or_default();
                    out.push_str(&self.reference(inner, depth));
                    while chars.peek().is_some_and(|&(i, _)| i <= end) {
                        chars.next();
                    }
                }
                Some(single) if "@<^?*%+|".contains(single) => {
                    chars.next();
                    out.push_str("make-target");
                }
                Some(single) if single.is_ascii_alphanumeric() => {
                    chars.next();
                    out.push_str(&self.reference(&single.to_string(), depth));
                }
                _ => out.push('$'),
            }
        }
        out
    }

    /// What `$(inner)` stands for.
    fn reference(&mut self, inner: &str, depth: usize) -> String {
        if depth >= MAX_EXPANSION {
            return format!("${{{}}}", sanitized(inner));
        }
        if let Some(command) =
            inner.strip_prefix("shell ").or_else(|| inner.strip_prefix("shell\t"))
        {
            let command = self.expand(command, depth + 1);
            self.shells.push(command.clone());
            return format!("$({command})");
        }
        if inner.contains(' ') || inner.contains(',') {
            // Another function (`wildcard`, `patsubst`, `call`…): a word
            // whose value make computes, not a program it runs.
            return "make-function-result".into();
        }
        if inner.starts_with(['@', '<', '^', '*', '?']) {
            return "make-target".into();
        }
        match self.variables.get(inner) {
            // Each reference copies the variable's expansion: eight
            // levels of sixteen references each ask for 4 GiB, so every
            // copy is paid for and a spent budget expands nothing more.
            Some(_) if budget::exhausted() => format!("${{{}}}", sanitized(inner)),
            Some(value) => {
                let value = value.clone();
                let expanded = self.expand(&value, depth + 1);
                if budget::produce(expanded.len()) {
                    expanded
                } else {
                    format!("${{{}}}", sanitized(inner))
                }
            }
            None => format!("${{{}}}", sanitized(inner)),
        }
    }
}

/// A name the shell reads as one variable.
fn sanitized(name: &str) -> String {
    let clean: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if clean.is_empty() || clean.starts_with(|c: char| c.is_ascii_digit()) {
        format!("make_{clean}")
    } else {
        clean
    }
}

/// The index of the `close` matching an `open` just before `start`.
fn matching(text: &str, start: usize, open: char, close: char) -> Option<usize> {
    let mut depth = 1;
    for (offset, c) in text.get(start..)?.char_indices() {
        // Nested references rescan what follows them.
        if !budget::work(1) {
            return None;
        }
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(start + offset);
            }
        }
    }
    None
}

/// A recipe line without make's `@`, `-` and `+` prefixes.
fn recipe_body(text: &str) -> &str {
    text.trim_start().trim_start_matches(['@', '-', '+', ' ', '\t'])
}

/// Where a rule line's `:` is (not one of an assignment operator).
fn rule_colon(text: &str) -> Option<usize> {
    let colon = text.find(':')?;
    let rest = text.get(colon..).unwrap_or_default();
    (!rest.starts_with(":=") && !rest.starts_with("::=")).then_some(colon)
}

pub(super) fn parts(content: &str) -> Vec<Part> {
    let lines = logical_lines(content);
    let mut variables: HashMap<String, String> =
        BUILT_IN.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    // Definitions first: make expands recipes after reading the whole file.
    let mut define: Option<(String, Vec<String>)> = None;
    for logical in &lines {
        let text = logical.text.trim();
        if let Some((name, body)) = &mut define {
            if text == "endef" {
                variables.insert(name.clone(), body.join("\n"));
                define = None;
            } else {
                body.push(logical.text.clone());
            }
            continue;
        }
        if let Some(name) = text.strip_prefix("define ") {
            let name = name.trim().trim_end_matches(['=', ':', '!', '?', '+', ' ']).to_owned();
            define = Some((name, Vec::new()));
            continue;
        }
        if logical.recipe {
            continue;
        }
        if let Some((name, operator, value)) = assignment(&logical.text) {
            match operator {
                "+=" => {
                    let joined = format!(
                        "{} {value}",
                        variables.get(name).map(String::as_str).unwrap_or("")
                    )
                    .trim()
                    .to_owned();
                    variables.insert(name.to_owned(), joined);
                }
                "?=" if variables.contains_key(name)
                    && !BUILT_IN.iter().any(|(k, _)| *k == name) => {}
                "!=" => {
                    variables.insert(name.to_owned(), format!("$(shell {value})"));
                }
                _ => {
                    variables.insert(name.to_owned(), value.to_owned());
                }
            }
        }
    }
    let mut parts = Vec::new();
    let mut expander = Expander { variables: &variables, shells: Vec::new() };
    let mut in_rule = false;
    let mut in_define = false;
    for logical in &lines {
        let text = logical.text.trim();
        if in_define {
            in_define = text != "endef";
            if in_define {
                let body = expander.expand(recipe_body(&logical.text), 0);
                parts.push(Part::shell(logical.line, body));
            }
            continue;
        }
        if text.starts_with("define ") {
            in_define = true;
            continue;
        }
        if logical.recipe && in_rule {
            let body = expander.expand(recipe_body(&logical.text), 0);
            parts.push(Part::shell(logical.line, body));
        } else if text.is_empty() || text.starts_with('#') {
            // Blank lines and comments do not end a rule.
        } else if let Some((_, operator, value)) = assignment(&logical.text).filter(|_| {
            rule_colon(&logical.text)
                .is_none_or(|c| logical.text.get(..c).unwrap_or_default().contains('='))
        }) {
            if operator == "!=" {
                parts.push(Part::shell(logical.line, expander.expand(value, 0)));
            } else {
                expander.expand(value, 0);
            }
        } else if let Some(colon) = rule_colon(&logical.text) {
            in_rule = true;
            let rest = logical.text.get(colon + 1..).unwrap_or_default();
            match rest.split_once(';') {
                Some((prerequisites, recipe)) => {
                    expander.expand(prerequisites, 0);
                    parts.push(Part::shell(logical.line, expander.expand(recipe_body(recipe), 0)));
                }
                None => {
                    expander.expand(rest, 0);
                }
            }
        } else {
            // `include`, `ifeq`, `vpath`…: conditionals may sit inside a
            // rule, anything else ends it.
            let conditional = ["ifeq", "ifneq", "ifdef", "ifndef", "else", "endif"]
                .iter()
                .any(|k| text.starts_with(k));
            in_rule &= conditional;
            expander.expand(text, 0);
        }
        for shell in std::mem::take(&mut expander.shells) {
            parts.push(Part::shell(logical.line, shell));
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(content: &str) -> Vec<(usize, String)> {
        parts(content).into_iter().map(|p| (p.line, p.text)).collect()
    }

    #[test]
    fn recipes_are_read_as_the_shell_gets_them() {
        let makefile = "CURL = curl -fsSL\nURL := https://h/x\n\nbuild: src\n\t@cargo build\n\n# comment\n\t-$(CURL) $(URL) \\\n\t  | sh\n\t$(RM) out $$HOME\nlater:\n";
        assert_eq!(
            texts(makefile),
            [
                (5, "cargo build".to_owned()),
                (8, "curl -fsSL https://h/x \\\n  | sh".to_owned()),
                (10, "rm -f out $HOME".to_owned())
            ]
        );
    }

    #[test]
    fn shell_functions_assignments_and_unknown_variables() {
        let found =
            texts("X != curl h | sh\nY = $(shell wget -qO- h | bash)\nall: ; $(TOOL) run $@\n");
        assert!(found.contains(&(1, "curl h | sh".to_owned())), "{found:?}");
        assert!(found.contains(&(2, "wget -qO- h | bash".to_owned())), "{found:?}");
        assert!(found.contains(&(3, "${TOOL} run make-target".to_owned())), "{found:?}");
    }

    #[test]
    fn define_bodies_and_self_reference_are_bounded() {
        let found = texts("define RUN\ncurl h | sh\nendef\nA = $(A) x\nt:\n\techo $(A)\n");
        assert!(found.contains(&(2, "curl h | sh".to_owned())), "{found:?}");
        assert!(
            found.iter().any(|(line, text)| *line == 6 && text.starts_with("echo")),
            "{found:?}"
        );
    }
}

//! Compiled patterns and how they match the variants of a hint.
//!
//! A glob (`*` any run of characters, `?` one character, `\` escapes the
//! next) is normalised like hints are and compiled twice: as a *suffix*
//! pattern, which matches a form when it matches the whole form or any
//! suffix of it that starts at a word boundary (the start, or just after a
//! non-word character), and as a *whole* pattern, which must match the
//! entire form. A keyword matches as a whole word anywhere (`rob` does not
//! match `probe`).
//!
//! Matching is prefiltered: the longest literal run of each pattern goes
//! into one Aho-Corasick automaton, and only patterns whose literal occurs
//! in a form are run as regexes. Patterns with no literal (`*`) are always
//! run.

use aho_corasick::AhoCorasick;
use regex::Regex;

use super::text::{collapse, normalize};

/// How one pattern matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternKind {
    Glob,
    Keyword,
}

/// A pattern could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError(pub String);

struct Compiled {
    suffix: Regex,
    whole: Option<Regex>,
}

/// A set of patterns, addressed by their index in the order given.
pub struct PatternSet {
    compiled: Vec<Compiled>,
    prefilter: Option<AhoCorasick>,
    /// For each literal in the automaton, the patterns that require it.
    literal_owners: Vec<Vec<usize>>,
    /// Patterns without a literal: always candidates.
    unfiltered: Vec<usize>,
}

impl PatternSet {
    pub fn new<'a>(patterns: impl IntoIterator<Item = (&'a str, PatternKind)>) -> Result<Self, (usize, PatternError)> {
        let mut compiled = Vec::new();
        let mut literals: Vec<String> = Vec::new();
        let mut literal_owners: Vec<Vec<usize>> = Vec::new();
        let mut unfiltered = Vec::new();
        for (index, (source, kind)) in patterns.into_iter().enumerate() {
            let normal = collapse(&normalize(source));
            let (pattern, literal) = compile(&normal, kind).map_err(|e| (index, e))?;
            compiled.push(pattern);
            match literal {
                Some(literal) => match literals.iter().position(|l| *l == literal) {
                    Some(at) => literal_owners[at].push(index),
                    None => {
                        literals.push(literal);
                        literal_owners.push(vec![index]);
                    }
                },
                None => unfiltered.push(index),
            }
        }
        let prefilter = if literals.is_empty() {
            None
        } else {
            Some(AhoCorasick::new(&literals).map_err(|e| (0, PatternError(e.to_string())))?)
        };
        Ok(Self { compiled, prefilter, literal_owners, unfiltered })
    }

    pub fn len(&self) -> usize {
        self.compiled.len()
    }

    pub fn is_empty(&self) -> bool {
        self.compiled.is_empty()
    }

    /// Marks in `hits` (indexed by pattern) every pattern whose suffix form
    /// matches `form`.
    pub fn mark_suffix_matches(&self, form: &str, hits: &mut [bool]) {
        self.for_each_candidate(form, |index| {
            if !hits[index] && self.compiled[index].suffix.is_match(form) {
                hits[index] = true;
            }
        });
    }

    /// The first pattern (lowest index) among `allowed` whose whole form
    /// matches `form` entirely.
    pub fn first_whole_match(&self, form: &str, allowed: impl Fn(usize) -> bool) -> Option<usize> {
        let mut best: Option<usize> = None;
        self.for_each_candidate(form, |index| {
            let whole = self.compiled[index].whole.as_ref();
            if best.is_none_or(|b| index < b) && allowed(index) && whole.is_some_and(|re| re.is_match(form)) {
                best = Some(index);
            }
        });
        best
    }

    fn for_each_candidate(&self, form: &str, mut visit: impl FnMut(usize)) {
        if let Some(prefilter) = &self.prefilter {
            for found in prefilter.find_overlapping_iter(form) {
                for &index in &self.literal_owners[found.pattern().as_usize()] {
                    visit(index);
                }
            }
        }
        for &index in &self.unfiltered {
            visit(index);
        }
    }
}

/// Checks a pattern's syntax without compiling it.
pub fn check(source: &str, kind: PatternKind) -> Result<(), PatternError> {
    let normal = collapse(&normalize(source));
    if normal.is_empty() {
        return Err(PatternError("empty pattern".into()));
    }
    match kind {
        PatternKind::Keyword => Ok(()),
        PatternKind::Glob => glob_to_regex(&normal).map(|_| ()),
    }
}

/// Compiles one normalised pattern; returns it and its longest literal.
fn compile(normal: &str, kind: PatternKind) -> Result<(Compiled, Option<String>), PatternError> {
    if normal.is_empty() {
        return Err(PatternError("empty pattern".into()));
    }
    match kind {
        PatternKind::Keyword => {
            let body = regex::escape(normal);
            let suffix = build(&format!(r"(?s)(?:^|\W){body}(?:\W|\z)"))?;
            Ok((Compiled { suffix, whole: None }, Some(normal.to_owned())))
        }
        PatternKind::Glob => {
            let (body, literal) = glob_to_regex(normal)?;
            let suffix = build(&format!(r"(?s)(?:^|\W){body}\z"))?;
            let whole = build(&format!(r"(?s)\A{body}\z"))?;
            Ok((Compiled { suffix, whole: Some(whole) }, literal))
        }
    }
}

fn build(pattern: &str) -> Result<Regex, PatternError> {
    Regex::new(pattern).map_err(|_| PatternError("pattern too complex to compile".into()))
}

/// The regex body of a glob and its longest literal run.
fn glob_to_regex(glob: &str) -> Result<(String, Option<String>), PatternError> {
    let mut body = String::new();
    let mut literal = String::new();
    let mut longest = String::new();
    let mut chars = glob.chars();
    let end_literal = |literal: &mut String, longest: &mut String| {
        if literal.len() > longest.len() {
            *longest = std::mem::take(literal);
        } else {
            literal.clear();
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '*' => {
                body.push_str(".*");
                end_literal(&mut literal, &mut longest);
            }
            '?' => {
                body.push('.');
                end_literal(&mut literal, &mut longest);
            }
            '\\' => {
                let escaped = chars
                    .next()
                    .ok_or_else(|| PatternError("pattern ends with a lone backslash".into()))?;
                body.push_str(&regex::escape(&escaped.to_string()));
                literal.push(escaped);
            }
            other => {
                body.push_str(&regex::escape(&other.to_string()));
                literal.push(other);
            }
        }
    }
    end_literal(&mut literal, &mut longest);
    Ok((body, (!longest.is_empty()).then_some(longest)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(patterns: &[(&str, PatternKind)]) -> PatternSet {
        PatternSet::new(patterns.iter().copied()).unwrap()
    }

    fn suffix_hits(set: &PatternSet, form: &str) -> Vec<usize> {
        let mut hits = vec![false; set.len()];
        set.mark_suffix_matches(form, &mut hits);
        hits.iter().enumerate().filter(|(_, h)| **h).map(|(i, _)| i).collect()
    }

    /// One row per case: pattern, form, whether the suffix form matches.
    #[test]
    fn suffix_matching_table() {
        let rows: &[(&str, &str, bool)] = &[
            ("rm -rf*", "rm -rf build", true),
            ("rm -rf*", "executing shell command: sudo /bin/rm -rf build", true),
            ("rm -rf*", "farm -rf x", false),
            ("rm -rf*", "rm -r build", false),
            ("git push*", "git push --force origin main", true),
            ("git push*", "i will git push later", true),
            ("git push*", "legit push", false),
            ("drop table*", "drop table users", true),
            ("drop table*", "backdrop table", false),
            ("*--force*", "git push --force", true),
            ("curl * | *sh*", "curl https://x.sh/i | sudo bash", true),
            ("curl * | *sh*", "curl https://x.io | jq .", false),
            ("mkfs*", "mkfs.ext4 /dev/sda1", true),
            ("cat *", "cat", false),
            ("read_*", "read_file src/main.rs", true),
            ("/etc/shadow*", "cat /etc/shadow", true),
            ("?? -rf*", "rm -rf x", true),
            ("a\\*b", "a*b", true),
            ("a\\*b", "axxb", false),
            ("RM -RF*", "rm -rf /", true),
        ];
        for &(pattern, form, expected) in rows {
            let s = set(&[(pattern, PatternKind::Glob)]);
            assert_eq!(!suffix_hits(&s, form).is_empty(), expected, "{pattern:?} on {form:?}");
        }
    }

    #[test]
    fn keywords_match_whole_words_only() {
        let s = set(&[("rob", PatternKind::Keyword), ("prod", PatternKind::Keyword)]);
        assert_eq!(suffix_hits(&s, "probe the service"), Vec::<usize>::new());
        assert_eq!(suffix_hits(&s, "rob the bank"), vec![0]);
        assert_eq!(suffix_hits(&s, "deploy to prod now"), vec![1]);
        assert_eq!(suffix_hits(&s, "deploy to prod"), vec![1]);
        assert_eq!(suffix_hits(&s, "deploy to production"), Vec::<usize>::new());
        assert_eq!(suffix_hits(&s, "(prod)"), vec![1]);
    }

    #[test]
    fn whole_matching_and_literal_free_patterns() {
        let s = set(&[("ls*", PatternKind::Glob), ("*", PatternKind::Glob), ("git status*", PatternKind::Glob)]);
        assert_eq!(s.first_whole_match("ls -la", |_| true), Some(0));
        assert_eq!(s.first_whole_match("ls -la", |i| i != 0), Some(1));
        assert_eq!(s.first_whole_match("echo ls", |i| i != 1), None);
        assert_eq!(s.first_whole_match("git status", |i| i == 2), Some(2));
    }

    #[test]
    fn bad_patterns_are_reported_with_their_index() {
        let err = PatternSet::new([("ok*", PatternKind::Glob), ("bad\\", PatternKind::Glob)]).err().unwrap();
        assert_eq!(err.0, 1);
        assert!(PatternSet::new([("  ", PatternKind::Glob)]).is_err());
    }
}

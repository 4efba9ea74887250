//! Errors in files users write, located as `file:line:col`.
//!
//! Every loader (config, policies, adapter files) reports through
//! [`Diagnostic`], so `safety-dongle check` prints them all the same way:
//! the location, the message, then the source line with a caret, as
//! `visudo -c` does.

pub mod toml_doc;

use std::{
    fmt,
    ops::Range,
    path::{Path, PathBuf},
};

/// One error at one place in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    pub message: String,
    /// The text of the line, for rendering a caret.
    pub source_line: Option<String>,
}

impl Diagnostic {
    /// An error about a file as a whole (unreadable, unsafe permissions).
    pub fn whole_file(file: &Path, message: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            line: 1,
            col: 1,
            message: message.into(),
            source_line: None,
        }
    }

    /// Several on one line, `; ` between them (for a log line or a
    /// refusal that cannot show carets).
    pub fn one_line(diagnostics: &[Diagnostic]) -> String {
        diagnostics.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    }

    /// The location line followed by the source line and a caret.
    pub fn render(&self) -> String {
        match &self.source_line {
            Some(source) => {
                format!("{self}\n    {source}\n    {caret:>width$}", caret = "^", width = self.col)
            }
            None => self.to_string(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file.display(), self.line, self.col, self.message)
    }
}

/// A file's text, for turning byte offsets into locations. Read-only
/// once made: the index of line starts is computed from the text.
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
    /// Byte offset of each line's start, ascending (the first is 0).
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        let text = text.into();
        let line_starts =
            std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        Self { path: path.into(), text, line_starts }
    }

    pub fn read(path: &Path) -> Result<Self, Diagnostic> {
        std::fs::read_to_string(path).map(|text| Self::new(path, text)).map_err(|e| {
            Diagnostic::whole_file(path, format!("cannot read file: {}", io_reason(&e)))
        })
    }

    /// A diagnostic at the start of `span` (clamped to the text).
    pub fn at(&self, span: Range<usize>, message: impl Into<String>) -> Diagnostic {
        let offset = self.char_boundary(span.start.min(self.text.len()));
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let line_start = line
            .checked_sub(1)
            .and_then(|before| self.line_starts.get(before))
            .copied()
            .unwrap_or(0);
        let line_end = self.line_starts.get(line).map_or(self.text.len(), |next| next - 1);
        Diagnostic {
            file: self.path.clone(),
            line,
            col: self.text.get(line_start..offset).unwrap_or_default().chars().count() + 1,
            message: message.into(),
            source_line: Some(
                self.text
                    .get(line_start..line_end)
                    .unwrap_or_default()
                    .trim_end_matches('\r')
                    .to_owned(),
            ),
        }
    }

    fn char_boundary(&self, mut offset: usize) -> usize {
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }
}

/// A short, path-free reason for an I/O failure.
pub fn io_reason(error: &std::io::Error) -> &'static str {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file",
        std::io::ErrorKind::PermissionDenied => "permission denied",
        std::io::ErrorKind::InvalidData => "not valid UTF-8 text",
        std::io::ErrorKind::IsADirectory => "is a directory",
        _ => "I/O error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_one_based_and_count_characters() {
        let file = SourceFile::new("p.toml", "a = 1\nbé = \"x\"\n");
        let d = file.at(10..11, "bad");
        assert_eq!((d.line, d.col), (2, 4));
        assert_eq!(d.to_string(), "p.toml:2:4: bad");
        assert_eq!(d.render(), "p.toml:2:4: bad\n    bé = \"x\"\n       ^");
    }
}

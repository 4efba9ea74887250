//! Splitting an adapter file into its YAML front matter and Markdown body
//! (runtime seed 3.2): the file starts with a `---` line, the front matter
//! ends at the next line that is exactly `---`, and what follows is the
//! documentation.

use crate::diagnostics::{Diagnostic, SourceFile};

use super::MAX_FRONT_MATTER_BYTES;

/// The two parts of an adapter file.
pub struct Parts<'a> {
    pub yaml: &'a str,
    /// How many lines precede the YAML in the file (the opening `---`), to
    /// turn YAML line numbers into file line numbers.
    pub line_offset: usize,
    pub body: &'a str,
}

pub fn split(source: &SourceFile) -> Result<Parts<'_>, Vec<Diagnostic>> {
    let text = source.text.strip_prefix('\u{feff}').unwrap_or(&source.text);
    let mut lines = text.split_inclusive('\n');
    let opening = lines.next().unwrap_or("");
    if opening.trim_end_matches(['\r', '\n']) != "---" {
        return Err(vec![source.at(
            0..0,
            "an adapter file must start with a '---' line that opens its YAML front matter",
        )]);
    }
    let yaml_start = opening.len();
    let mut offset = yaml_start;
    for line in lines {
        if line.trim_end_matches(['\r', '\n']) == "---" {
            let yaml = text.get(yaml_start..offset).unwrap_or_default();
            if yaml.len() > MAX_FRONT_MATTER_BYTES {
                return Err(vec![source.at(0..0, format!("the front matter is {} bytes; at most {MAX_FRONT_MATTER_BYTES} are accepted", yaml.len()))]);
            }
            return Ok(Parts {
                yaml,
                line_offset: 1,
                body: text.get(offset + line.len()..).unwrap_or_default(),
            });
        }
        offset += line.len();
    }
    Err(vec![source.at(0..0, "the YAML front matter is never closed: add a line '---' after it")])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(text: &str) -> SourceFile {
        SourceFile::new("x-adapter.md", text)
    }

    #[test]
    fn front_matter_and_body_are_separated() {
        let file = source("---\r\nname: a\n---\n# Title\nbody\n");
        let parts = split(&file).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(parts.yaml, "name: a\n");
        assert_eq!(parts.body, "# Title\nbody\n");
        assert_eq!(parts.line_offset, 1);
    }

    #[test]
    fn missing_delimiters_are_errors() {
        let opening = split(&source("name: a\n---\n")).err().unwrap_or_default();
        assert!(opening[0].message.contains("must start with a '---' line"), "{opening:?}");
        let closing = split(&source("---\nname: a\n")).err().unwrap_or_default();
        assert!(closing[0].message.contains("never closed"), "{closing:?}");
        // A horizontal rule in the body is not a second front matter.
        let file = source("---\na: 1\n---\ntext\n---\n");
        let parts = split(&file).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(parts.body, "text\n---\n");
    }
}

//! The documents hold together: every folder directly under `src/` is named
//! in `docs/ARCHITECTURE.md` (a newcomer looking for a module finds it
//! there), and every relative link in `README.md` and `docs/*.md` reaches a
//! file that exists and, when it names a heading (`FILE.md#anchor`), a
//! heading that exists (GitHub's anchor for it).

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("read {}: {error}", path.display()))
}

/// `README.md` and every Markdown file of `docs/`.
fn documents() -> Vec<PathBuf> {
    let mut documents = vec![repository().join("README.md")];
    let mut in_docs: Vec<PathBuf> = std::fs::read_dir(repository().join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.expect("list docs/").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    in_docs.sort();
    documents.extend(in_docs);
    documents
}

/// The text outside fenced code blocks and inline code spans, where a
/// `[text](target)` is a link rather than an example.
fn prose(markdown: &str) -> String {
    let mut prose = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Every other backtick run opens a span and the next one closes it.
        for (index, piece) in line.split('`').enumerate() {
            if index % 2 == 0 {
                prose.push_str(piece);
            }
        }
        prose.push('\n');
    }
    prose
}

/// The targets of the inline links `[text](target)` in `markdown`.
fn link_targets(markdown: &str) -> Vec<String> {
    let prose = prose(markdown);
    prose
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target.trim().to_owned()))
        .collect()
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces
/// as hyphens; a repeated heading gets `-1`, `-2`, … in order.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut anchors = BTreeSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let Some(heading) = line.strip_prefix('#').filter(|_| !fenced) else { continue };
        let text = heading.trim_start_matches('#').trim();
        let slug: String = text
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut anchor = slug.clone();
        let mut repeat = 0;
        while anchors.contains(&anchor) {
            repeat += 1;
            anchor = format!("{slug}-{repeat}");
        }
        anchors.insert(anchor);
    }
    anchors
}

#[test]
fn every_folder_under_src_is_named_in_the_architecture_document() {
    let architecture = read(&repository().join("docs/ARCHITECTURE.md"));
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(repository().join("src")).expect("list src/") {
        let path = entry.expect("list src/").path();
        if path.is_dir() {
            let name = path.file_name().expect("a folder's name").to_string_lossy().into_owned();
            if !architecture.contains(&format!("src/{name}/")) {
                missing.push(format!("src/{name}/"));
            }
        }
    }
    assert!(missing.is_empty(), "docs/ARCHITECTURE.md does not name {missing:?}");
}

#[test]
fn every_relative_link_in_the_documents_reaches_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for document in documents() {
        let text = read(&document);
        let folder = document.parent().expect("a document's folder");
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if file.is_empty() { document.clone() } else { folder.join(file) };
            if !linked.exists() {
                broken.push(format!("{}: {target}: no such file", document.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if linked.extension().is_some_and(|extension| extension == "md")
                && !anchors(&read(&linked)).contains(anchor)
            {
                broken.push(format!("{}: {target}: no such heading", document.display()));
            }
        }
    }
    assert!(checked > 20, "the documents link to each other ({checked} relative links found)");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The checks above read Markdown as GitHub does, or they would pass
/// broken links and fail good ones.
#[test]
fn links_and_anchors_are_read_as_github_renders_them() {
    let markdown = "# Team scale: one `PostgreSQL` database\n## Install\n## Install\n\
                    See [the guide](docs/GUIDE.md#install) and `[code](not/a/link)`.\n\
                    ```sh\n# not a heading [x](nor/a/link)\n```\n";
    assert_eq!(link_targets(markdown), ["docs/GUIDE.md#install"]);
    assert_eq!(
        anchors(markdown),
        BTreeSet::from([
            "team-scale-one-postgresql-database".to_owned(),
            "install".to_owned(),
            "install-1".to_owned(),
        ])
    );
}

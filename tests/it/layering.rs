//! The layering `src/lib.rs` promises, checked on the source: each module
//! under `src/` sits in a layer, and production code imports only from its
//! own layer or a lower one (`use crate::x`, `crate::x::...` in a path,
//! and each item of `use crate::{x, y::z}`). Test code may reach upward (a
//! test of the analysis may judge through the evaluator): files named
//! `tests.rs` or `*_tests.rs` and a trailing `#[cfg(test)] mod` are not
//! read.
//!
//! The one exception is a witness: the store lifts a hard block only for
//! a `verify::Unblock`, a proof only a higher layer can build. It is named
//! here item by item, so no other upward import can hide behind it.

use std::path::{Path, PathBuf};

/// The layers, lowest first.
const LAYERS: &[&[&str]] = &[
    &["names", "hex", "redact", "diagnostics"],
    &["platform"],
    &["analysis"],
    &["store"],
    &["protocol"],
    &["config"],
    &["policy"],
    &["verify"],
    &["safety"],
    &["gate"],
    &["hook", "adapter", "lab"],
    &["judge"],
    &["server"],
    &["cli"],
    // Binaries' `main`s beside `src/main.rs` (the hook's front).
    &["bin"],
];

/// Upward imports allowed by design: (module, imported path).
const WITNESSES: &[(&str, &str)] = &[("store", "verify::Unblock")];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The production code of a file: no comments, no trailing test module.
fn production_code(text: &str) -> String {
    let text = match text
        .find("#[cfg(test)]\nmod ")
        .or_else(|| text.find("#[cfg(test)]\npub(crate) mod "))
    {
        Some(tests) => &text[..tests],
        None => text,
    };
    text.lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path a file reaches through `crate::`, as `module::rest`.
fn crate_paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            paths.extend(top_level_items(&group[..end]));
        } else {
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            paths.push(path.trim_end_matches(':').to_owned());
        }
    }
    paths
}

/// The items of a `{...}` group split at its top-level commas, with their
/// nested groups flattened into one text each.
fn top_level_items(group: &str) -> Vec<String> {
    let (mut items, mut current, mut depth) = (Vec::new(), String::new(), 0);
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    items.push(current);
    items
        .into_iter()
        .map(|item| item.split_whitespace().collect::<String>())
        .filter(|item| !item.is_empty())
        .collect()
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = Vec::new();
    let mut unplaced = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let name = relative.file_name().unwrap().to_string_lossy();
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let module = relative.components().next().unwrap().as_os_str().to_string_lossy();
        let module = module.trim_end_matches(".rs");
        if matches!(module, "lib" | "main") {
            continue;
        }
        let Some(own) = layer_of(module) else {
            unplaced.push(module.to_owned());
            continue;
        };
        for path in crate_paths(&production_code(&std::fs::read_to_string(file).unwrap())) {
            let target = path.split("::").next().unwrap_or_default();
            let Some(layer) = layer_of(target) else {
                unplaced.push(target.to_owned());
                continue;
            };
            let witness =
                WITNESSES.iter().any(|&(from, allowed)| from == module && path == allowed);
            if layer > own && !witness {
                upward.push(format!(
                    "{}: crate::{path} ({module} is below {target})",
                    relative.display()
                ));
            }
        }
    }
    unplaced.sort();
    unplaced.dedup();
    assert!(unplaced.is_empty(), "modules in no layer (add them to LAYERS): {unplaced:?}");
    assert!(upward.is_empty(), "upward imports:\n{}", upward.join("\n"));
}

#[test]
fn the_reader_sees_every_form_of_import_and_skips_tests() {
    let code = production_code(
        "use crate::{a::b, c::{d, e::f}};\nuse crate::g;\nfn x() { crate::h::i(); } // crate::j\n#[cfg(test)]\nmod tests { use crate::k; }\n",
    );
    assert_eq!(crate_paths(&code), ["a::b", "c::{d,e::f}", "g", "h::i"]);
    // A layer above is caught; the same layer or below is not.
    assert!(layer_of("store") < layer_of("verify") && layer_of("cli") > layer_of("server"));
}

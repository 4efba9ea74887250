//! Names from outside sources made into MCP-AQL names: sanitised to
//! `^[a-z][a-z0-9_]*$`, made unique deterministically (`claim` hands out
//! `_2`, `_3` suffixes within a length limit), and classified into a
//! semantic category by their leading verb.

use std::collections::BTreeSet;

use crate::protocol::registry::Category;

/// Lower-cases ASCII letters and turns every other character that is not a
/// digit or `_` into `_`; a name that would not start with a letter gets
/// an `x_` prefix, an empty one becomes `x`.
pub fn sanitise(raw: &str) -> String {
    let mut name: String = raw
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '_' => c,
            'A'..='Z' => c.to_ascii_lowercase(),
            _ => '_',
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name.insert_str(0, "x_");
    }
    if name == "x_" { "x".into() } else { name }
}

/// Sanitised names for `raw` names, unique among themselves and against
/// `taken`, in the order given. Collisions are settled in the sorted order
/// of the raw names (the first keeps the plain name, later ones get `_2`,
/// `_3`, ...), so the same set of names always maps the same way whatever
/// order a server lists them in.
pub fn unique_names(raw: &[String]) -> Vec<String> {
    let mut order: Vec<usize> = (0..raw.len()).collect();
    order.sort_by(|&a, &b| raw[a].cmp(&raw[b]));
    let mut taken = BTreeSet::new();
    let mut names = vec![String::new(); raw.len()];
    for index in order {
        names[index] = claim(&mut taken, &sanitise(&raw[index]), usize::MAX);
    }
    names
}

/// `base`, or the first of `base_2`, `base_3`, ... not yet in `taken`; the
/// name returned joins `taken`. A suffixed name stays within `max_len`
/// bytes by cutting `base` before the suffix (`base` itself is expected to
/// fit already).
pub fn claim(taken: &mut BTreeSet<String>, base: &str, max_len: usize) -> String {
    let mut name = base.to_owned();
    let mut suffix = 2u32;
    while taken.contains(&name) {
        let tail = format!("_{suffix}");
        let mut keep = max_len.saturating_sub(tail.len()).min(base.len());
        while !base.is_char_boundary(keep) {
            keep -= 1;
        }
        name = format!("{}{tail}", base[..keep].trim_end_matches('_'));
        suffix += 1;
    }
    taken.insert(name.clone());
    name
}

/// The category a name's leading verb suggests; `None` when it has no
/// telling verb.
pub fn category_from_verb(name: &str) -> Option<Category> {
    let verb = name.split('_').next().unwrap_or("");
    match verb {
        "get" | "list" | "read" | "search" => Some(Category::Read),
        "create" | "add" | "write" => Some(Category::Create),
        "update" | "edit" | "set" | "move" => Some(Category::Update),
        "delete" | "remove" => Some(Category::Delete),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitising_keeps_the_naming_rule() {
        let rows = [
            ("get-annotated-message", "get_annotated_message"),
            ("readFile", "readfile"),
            ("3d-render", "x_3d_render"),
            ("_hidden", "x__hidden"),
            ("", "x"),
            ("ümlaut.tool", "x__mlaut_tool"),
        ];
        for (raw, expected) in rows {
            let name = sanitise(raw);
            assert_eq!(name, expected, "{raw}");
            assert!(crate::protocol::registry::is_snake_case(&name), "{raw} -> {name}");
        }
    }

    #[test]
    fn collisions_resolve_the_same_whatever_the_listing_order() {
        let forward = vec!["get-item".to_owned(), "get_item".to_owned(), "Get_Item".to_owned(), "other".to_owned()];
        let names = unique_names(&forward);
        assert_eq!(names, ["get_item_2", "get_item_3", "get_item", "other"]);
        let mut reversed = forward.clone();
        reversed.reverse();
        let again = unique_names(&reversed);
        for (raw, name) in forward.iter().zip(&names) {
            let position = reversed.iter().position(|r| r == raw).unwrap_or(usize::MAX);
            assert_eq!(&again[position], name, "{raw}");
        }
    }

    #[test]
    fn claimed_names_stay_unique_and_within_their_length() {
        let mut taken = BTreeSet::new();
        let long = "a".repeat(64);
        assert_eq!(claim(&mut taken, &long, 64), long);
        let second = claim(&mut taken, &long, 64);
        assert_eq!(second, format!("{}_2", "a".repeat(62)));
        let third = claim(&mut taken, &long, 64);
        assert_eq!(third, format!("{}_3", "a".repeat(62)));
        assert_eq!(claim(&mut taken, "short", 64), "short");
        assert_eq!(claim(&mut taken, "short", 64), "short_2");
    }

    #[test]
    fn verbs_suggest_categories() {
        assert_eq!(category_from_verb("list_directory"), Some(Category::Read));
        assert_eq!(category_from_verb("write_file"), Some(Category::Create));
        assert_eq!(category_from_verb("move_file"), Some(Category::Update));
        assert_eq!(category_from_verb("remove_user"), Some(Category::Delete));
        assert_eq!(category_from_verb("echo"), None);
        assert_eq!(category_from_verb("getter"), None);
    }
}

//! Names from outside sources made into MCP-AQL names: the one sanitiser
//! for downstream tools, OpenAPI operations and server names, snake_case
//! by words and camelCase humps so verbs stay words (`readFile` ->
//! `read_file`), keeping `^[a-z][a-z0-9_]*$`; made unique deterministically (`claim` hands out
//! `_2`, `_3` suffixes within a length limit), and classified into a
//! semantic category by their leading verb.

use std::collections::BTreeSet;

use crate::protocol::registry::Category;

/// `raw` in snake_case: words split at every character that is not an
/// ASCII letter or digit and at camelCase humps (`listPetsByID` ->
/// `list_pets_by_id`, `HTTPServer` -> `http_server`, `getIDs` ->
/// `get_ids`), digits staying with the word before them (`v2`, `oauth2`).
/// The result keeps the naming rule: one that would not start with a
/// letter gets an `x_` prefix, an empty one is `x`.
pub fn snake_case(raw: &str) -> String {
    let name = words(raw).join("_");
    if name.is_empty() {
        "x".to_owned()
    } else if name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name
    } else {
        format!("x_{name}")
    }
}

fn words(raw: &str) -> Vec<String> {
    let chars: Vec<char> = raw.chars().collect();
    let mut words = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 && !current.is_empty() && starts_hump(&chars, i) {
            words.push(std::mem::take(&mut current));
        }
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// Whether the upper-case letter at `i` (not the first of its word) starts
/// a new word: after a lower-case letter (`listPets`), or after capitals or
/// digits when a lower-case run follows (`HTTPServer`, `v2Repos`), except
/// a plural `s` closing an acronym (`IDs`, `URLs`).
fn starts_hump(chars: &[char], i: usize) -> bool {
    let Some(&previous) = i.checked_sub(1).and_then(|before| chars.get(before)) else {
        return false;
    };
    if previous.is_ascii_lowercase() {
        return true;
    }
    let next = chars.get(i + 1).copied();
    let after_next = chars.get(i + 2).copied();
    let plural_acronym = next == Some('s') && !after_next.is_some_and(|c| c.is_ascii_lowercase());
    next.is_some_and(|c| c.is_ascii_lowercase()) && !plural_acronym
}

/// Sanitised names for `raw` names, unique among themselves and against
/// `taken`, in the order given. Collisions are settled in the sorted order
/// of the raw names (the first keeps the plain name, later ones get `_2`,
/// `_3`, ...), so the same set of names always maps the same way whatever
/// order a server lists them in.
pub fn unique_names(raw: &[String]) -> Vec<String> {
    let mut order: Vec<(usize, &String)> = raw.iter().enumerate().collect();
    order.sort_by_key(|&(_, name)| name);
    let mut taken = BTreeSet::new();
    let mut names: Vec<(usize, String)> = order
        .into_iter()
        .map(|(index, name)| (index, claim(&mut taken, &snake_case(name), usize::MAX)))
        .collect();
    names.sort_unstable_by_key(|(index, _)| *index);
    names.into_iter().map(|(_, name)| name).collect()
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
        name = format!("{}{tail}", base.get(..keep).unwrap_or_default().trim_end_matches('_'));
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
    fn one_sanitiser_splits_words_and_humps_and_keeps_the_naming_rule() {
        let rows = [
            ("repos/get", "repos_get"),
            ("listPetsByID", "list_pets_by_id"),
            ("get-user_by.id", "get_user_by_id"),
            ("HTTPServer", "http_server"),
            ("getIDs", "get_ids"),
            ("listURLsForRepo", "list_urls_for_repo"),
            ("v2Repos", "v2_repos"),
            ("oauth2Token", "oauth2_token"),
            ("X-Request-ID", "x_request_id"),
            ("labelNames", "label_names"),
            // Downstream tools: the verb stays a word, so it classifies.
            ("readFile", "read_file"),
            ("ReadFile", "read_file"),
            ("get-annotated-message", "get_annotated_message"),
            ("ümlaut.tool", "mlaut_tool"),
            ("_links", "links"),
            ("get /repos/{owner}/{repo}", "get_repos_owner_repo"),
            ("2fa-enable", "x_2fa_enable"),
            ("Ünïcode name", "n_code_name"),
            ("", "x"),
            ("---", "x"),
        ];
        for (raw, expected) in rows {
            let name = snake_case(raw);
            assert_eq!(name, expected, "{raw:?}");
            assert!(crate::protocol::registry::is_snake_case(&name), "{raw:?} -> {name}");
        }
    }

    #[test]
    fn collisions_resolve_the_same_whatever_the_listing_order() {
        let forward = vec![
            "get-item".to_owned(),
            "get_item".to_owned(),
            "Get_Item".to_owned(),
            "other".to_owned(),
        ];
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
        assert_eq!(category_from_verb(&snake_case("readFile")), Some(Category::Read));
        assert_eq!(category_from_verb("list_directory"), Some(Category::Read));
        assert_eq!(category_from_verb("write_file"), Some(Category::Create));
        assert_eq!(category_from_verb("move_file"), Some(Category::Update));
        assert_eq!(category_from_verb("remove_user"), Some(Category::Delete));
        assert_eq!(category_from_verb("echo"), None);
        assert_eq!(category_from_verb("getter"), None);
    }
}

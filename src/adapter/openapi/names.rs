//! Names for what an OpenAPI document calls things: operation and
//! parameter names in snake_case (`^[a-z][a-z0-9_]*$`), shortened to at
//! most [`MAX_NAME`] characters by dropping the least telling words first;
//! the adapter's kebab-case name; and the environment variables its
//! credentials come from.

/// Longest operation or parameter name: MCP clients refuse tool names past
/// 64 characters, and the adapter format keeps the same bound.
pub const MAX_NAME: usize = 64;

/// The adapter name used when the document's title gives none.
pub const FALLBACK_ADAPTER_NAME: &str = "imported-api";

/// Words dropped after version segments and repeated words when a name is
/// still too long: they join the telling words but rarely tell operations
/// apart.
const FILLER_WORDS: [&str; 14] =
    ["a", "an", "and", "at", "by", "for", "from", "in", "of", "on", "or", "the", "to", "with"];

/// A snake_case `name` shortened to at most `max` characters, dropping
/// words in order of how little they tell, one at a time, left to right,
/// only until it fits: version segments (`v1`, `v2beta`), then repeated
/// words (their later occurrences), then filler words (`for`, `by`, ...),
/// then the words just before the last one (the last word usually names
/// the object, the first the namespace or verb), and only then a hard cut.
/// The first word always stays.
pub fn fit(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_owned();
    }
    let mut words: Vec<&str> = name.split('_').filter(|w| !w.is_empty()).collect();
    drop_words_while_long(&mut words, max, |words, i| {
        words.get(i).is_some_and(|word| is_version(word))
    });
    drop_words_while_long(&mut words, max, |words, i| {
        words.get(i).is_some_and(|word| words.get(..i).unwrap_or_default().contains(word))
    });
    drop_words_while_long(&mut words, max, |words, i| {
        words.get(i).is_some_and(|word| FILLER_WORDS.contains(word))
    });
    while joined_len(&words) > max && words.len() > 2 {
        words.remove(words.len() - 2);
    }
    let mut fitted = words.join("_");
    if fitted.len() > max {
        // Snake-case names are ASCII, so every byte is a character boundary.
        fitted.truncate(max);
        fitted.truncate(fitted.trim_end_matches('_').len());
    }
    fitted
}

fn drop_words_while_long(
    words: &mut Vec<&str>,
    max: usize,
    droppable: impl Fn(&[&str], usize) -> bool,
) {
    let mut i = 1;
    while i < words.len() && joined_len(words) > max {
        if droppable(words, i) {
            words.remove(i);
        } else {
            i += 1;
        }
    }
}

fn joined_len(words: &[&str]) -> usize {
    words.iter().map(|w| w.len()).sum::<usize>() + words.len().saturating_sub(1)
}

/// `v1`, `v2`, `v1beta2`: a `v` followed by a digit.
fn is_version(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next() == Some('v') && chars.next().is_some_and(|c| c.is_ascii_digit())
}

/// Whether `name` keeps the adapter naming rule: `^[a-z][a-z0-9-]*[a-z0-9]$`,
/// 2 to 64 characters.
pub fn is_adapter_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    (2..=MAX_NAME).contains(&bytes.len())
        && bytes.first().is_some_and(u8::is_ascii_lowercase)
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.last().is_some_and(|&last| last != b'-')
}

/// An adapter name from a document title: lower-cased, apostrophes
/// dropped (`GitHub's` -> `githubs`), every other run of characters
/// outside `[a-z0-9]` made one `-`, an `api-` prefix when it would start
/// with a digit, cut at a `-` to 64 characters; [`FALLBACK_ADAPTER_NAME`]
/// when nothing usable is left.
pub fn adapter_name(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            slug.push(c);
        } else if !matches!(c, '\'' | '\u{2019}') && !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    if slug.starts_with(|c: char| c.is_ascii_digit()) {
        slug.insert_str(0, "api-");
    }
    if slug.len() > MAX_NAME {
        let cut = slug
            .get(..=MAX_NAME)
            .unwrap_or_default()
            .rfind('-')
            .filter(|&at| at >= 2)
            .unwrap_or(MAX_NAME);
        slug.truncate(cut);
    }
    let slug = slug.trim_end_matches('-');
    if is_adapter_name(slug) { slug.to_owned() } else { FALLBACK_ADAPTER_NAME.to_owned() }
}

/// The prefix of the adapter's credential variables: `github-api` ->
/// `GITHUB_API` (then `_TOKEN`, `_API_KEY`, `_USERNAME`, `_PASSWORD`).
pub fn env_prefix(adapter_name: &str) -> String {
    adapter_name.to_ascii_uppercase().replace('-', "_")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::{adapter::naming, protocol::registry::is_snake_case};

    #[test]
    fn long_names_lose_their_least_telling_words_first() {
        let rows = [
            // Version segments go first, then repeated words (left to right).
            (
                "binance_delete_sapi_v1_sub_account_sub_account_api_ip_restriction_ip_list",
                "binance_delete_sapi_sub_account_api_ip_restriction_ip_list",
            ),
            // A repeated word, then filler.
            (
                "packages_get_all_package_versions_for_package_owned_by_authenticated_user",
                "packages_get_all_package_versions_owned_by_authenticated_user",
            ),
            // Filler, then the words before the last: `definition` and
            // `definitions` stay apart.
            (
                "orgs_custom_properties_for_repos_create_or_update_organization_definition",
                "orgs_custom_properties_repos_create_update_definition",
            ),
            (
                "orgs_custom_properties_for_repos_create_or_update_organization_definitions",
                "orgs_custom_properties_repos_create_update_definitions",
            ),
            // Nothing else droppable: the words before the last go.
            (
                "aaaaaaaaaa_bbbbbbbbbb_cccccccccc_dddddddddd_eeeeeeeeee_ffffffffff_gggggggggg",
                "aaaaaaaaaa_bbbbbbbbbb_cccccccccc_dddddddddd_gggggggggg",
            ),
        ];
        for (raw, expected) in rows {
            let fitted = fit(raw, MAX_NAME);
            assert_eq!(fitted, expected, "{raw}");
            assert!(fitted.len() <= MAX_NAME && is_snake_case(&fitted), "{fitted}");
        }
        let one_word = "a".repeat(80);
        assert_eq!(fit(&one_word, MAX_NAME), "a".repeat(64));
        let two_words = format!("{}_{}", "a".repeat(40), "b".repeat(40));
        assert_eq!(fit(&two_words, MAX_NAME), format!("{}_{}", "a".repeat(40), "b".repeat(23)));
        assert_eq!(
            fit("short_name_v1", MAX_NAME),
            "short_name_v1",
            "names that fit are kept whole"
        );
    }

    #[test]
    fn names_cut_to_the_same_text_stay_unique() {
        let long = "a".repeat(70);
        let (one, other) =
            (fit(&format!("{long}_x"), MAX_NAME), fit(&format!("{long}_y"), MAX_NAME));
        assert_eq!(one, other, "both cut to the same text");
        let mut taken = BTreeSet::new();
        let first = naming::claim(&mut taken, &one, MAX_NAME);
        let second = naming::claim(&mut taken, &other, MAX_NAME);
        assert_ne!(first, second);
        assert!(first.len() <= MAX_NAME && second.len() <= MAX_NAME, "{first} {second}");
        assert!(is_snake_case(&second), "{second}");
    }

    #[test]
    fn adapter_names_come_from_titles() {
        let rows = [
            ("GitHub API", "github-api"),
            (
                "GitHub's official OpenAPI spec + Octokit extension",
                "githubs-official-openapi-spec-octokit-extension",
            ),
            ("  Swagger Petstore -- v1.0  ", "swagger-petstore-v1-0"),
            ("3D Printing Service", "api-3d-printing-service"),
            ("Über", "ber"),
            ("X", FALLBACK_ADAPTER_NAME),
            ("!!!", FALLBACK_ADAPTER_NAME),
            ("", FALLBACK_ADAPTER_NAME),
        ];
        for (title, expected) in rows {
            assert_eq!(adapter_name(title), expected, "{title:?}");
        }
        let long = adapter_name(&"word ".repeat(20));
        assert!(
            long.len() <= MAX_NAME && is_adapter_name(&long) && long.ends_with("word"),
            "{long}"
        );
    }

    #[test]
    fn the_adapter_naming_rule() {
        for good in ["ab", "github-api", "a1", &"a".repeat(64)] {
            assert!(is_adapter_name(good), "{good}");
        }
        for bad in ["a", "1a", "a-", "Ab", "a_b", "-ab", &"a".repeat(65)] {
            assert!(!is_adapter_name(bad), "{bad}");
        }
        assert_eq!(env_prefix("github-api"), "GITHUB_API");
    }
}

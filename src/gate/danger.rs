//! Danger levels of operations from outside sources
//! (`adapter/danger-levels.md`): the default of each semantic category,
//! raised by the standard name patterns of section 6, and the baseline risk
//! score each level gives the evaluator (section 8.1), so a destructive
//! call needs a human and a forbidden one stops the agent even when the
//! policy has no rule about it.

use crate::names::named_enum;
use crate::protocol::registry::Category;

named_enum! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    pub enum DangerLevel {
        Safe => "safe",
        Reversible => "reversible",
        Destructive => "destructive",
        Dangerous => "dangerous",
        Forbidden => "forbidden",
    }
}

/// Section 6.1: names that default to `dangerous`.
const DANGEROUS: [Affix; 7] = [
    Affix::Prefix("force_"),
    Affix::Suffix("_permanently"),
    Affix::Prefix("bulk_delete"),
    Affix::Prefix("override_"),
    Affix::Prefix("bypass_"),
    Affix::Suffix("_without_backup"),
    Affix::Prefix("purge_"),
];

/// Section 6.2: names that default to `forbidden`.
const FORBIDDEN: [Affix; 7] = [
    Affix::Prefix("drop_"),
    Affix::Prefix("delete_all"),
    Affix::Prefix("truncate_"),
    Affix::Prefix("reset_"),
    Affix::Prefix("destroy_"),
    Affix::Prefix("wipe_"),
    Affix::Suffix("_production"),
];

enum Affix {
    Prefix(&'static str),
    Suffix(&'static str),
}

impl Affix {
    fn matches(&self, name: &str) -> bool {
        match self {
            Self::Prefix(prefix) => name.starts_with(prefix),
            Self::Suffix(suffix) => name.ends_with(suffix),
        }
    }
}

impl DangerLevel {
    /// Section 3.3: the level of an operation nobody classified.
    pub fn default_for(category: Category) -> Self {
        match category {
            Category::Read => Self::Safe,
            Category::Create | Category::Update | Category::Execute => Self::Reversible,
            Category::Delete => Self::Destructive,
        }
    }

    /// The category's default, raised by the name patterns (anchored like
    /// globs: `drop_*` matches names that start with `drop_`); when several
    /// apply the highest wins (section 5.1). `name` is the operation's own
    /// name, without its source prefix.
    pub fn classify(category: Category, name: &str) -> Self {
        let by_name = if FORBIDDEN.iter().any(|a| a.matches(name)) {
            Self::Forbidden
        } else if DANGEROUS.iter().any(|a| a.matches(name)) {
            Self::Dangerous
        } else {
            Self::Safe
        };
        Self::default_for(category).max(by_name)
    }

    /// The baseline risk score of section 8.1, inside the level's range:
    /// reversible stays advisory, destructive reaches the confirm tier,
    /// dangerous the verify tier, forbidden the danger zone.
    pub fn risk_floor(self) -> Option<u8> {
        match self {
            Self::Safe => None,
            Self::Reversible => Some(20),
            Self::Destructive => Some(50),
            Self::Dangerous => Some(75),
            Self::Forbidden => Some(90),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_defaults_raised_by_name_patterns() {
        let rows = [
            (Category::Read, "read_file", DangerLevel::Safe),
            (Category::Create, "write_file", DangerLevel::Reversible),
            (Category::Delete, "remove_item", DangerLevel::Destructive),
            (Category::Execute, "force_push", DangerLevel::Dangerous),
            (Category::Read, "purge_cache", DangerLevel::Dangerous),
            // Patterns anchor at the name's start or end, as globs do, so
            // `get_reset_status` stays a getter.
            (Category::Execute, "force_delete_all", DangerLevel::Dangerous),
            (Category::Delete, "delete_all_users", DangerLevel::Forbidden),
            (Category::Update, "deploy_production", DangerLevel::Forbidden),
            (Category::Delete, "drop_table", DangerLevel::Forbidden),
            (Category::Read, "get_reset_status", DangerLevel::Safe),
        ];
        for (category, name, expected) in rows {
            assert_eq!(DangerLevel::classify(category, name), expected, "{name}");
        }
    }

    #[test]
    fn risk_floors_land_in_the_tiers_of_section_8_1() {
        assert_eq!(DangerLevel::Safe.risk_floor(), None);
        let floors: Vec<u8> = [
            DangerLevel::Reversible,
            DangerLevel::Destructive,
            DangerLevel::Dangerous,
            DangerLevel::Forbidden,
        ]
        .iter()
        .filter_map(|level| level.risk_floor())
        .collect();
        assert_eq!(floors, [20, 50, 75, 90]);
        assert!(
            (16..=30).contains(&floors[0])
                && (31..=60).contains(&floors[1])
                && (61..=85).contains(&floors[2])
                && floors[3] >= 86
        );
    }
}

//! Adapter trust levels (`adapter/trust-levels.md`) and the danger x trust
//! gating matrix of `adapter/danger-levels.md` section 4.1.
//!
//! Gating is opt-in (DESIGN.md 3): an adapter file that declares
//! `trust.level` is gated by the matrix; one that declares nothing is not,
//! and the policy still judges every call either way.

use super::danger::DangerLevel;
use crate::names::named_enum;

named_enum! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    pub enum TrustLevel {
        Untested => "untested",
        Generated => "generated",
        Validated => "validated",
        CommunityReviewed => "community_reviewed",
        Certified => "certified",
    }
}

/// What the matrix allows for one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum TrustGate {
    Allow,
    /// A human must approve the call, whatever the policy says.
    Confirm,
    /// Refused; `minimum` is the lowest trust level that would not deny it.
    Deny {
        minimum: TrustLevel,
    },
}

impl TrustLevel {
    /// The matrix cell for `danger` at this trust level. `introspect_only`
    /// (an untested adapter's safe operations) refuses the call itself:
    /// introspection never reaches an adapter operation.
    pub fn gate(self, danger: DangerLevel) -> TrustGate {
        use DangerLevel as D;
        use TrustLevel as T;
        let allowed_from = match danger {
            D::Safe => T::Generated,
            D::Reversible => T::Validated,
            D::Destructive => T::CommunityReviewed,
            D::Dangerous => T::Certified,
            D::Forbidden => {
                return if self == T::Certified {
                    TrustGate::Confirm
                } else {
                    TrustGate::Deny { minimum: T::Certified }
                };
            }
        };
        let confirm_from = match danger {
            D::Destructive => Some(T::Validated),
            D::Dangerous => Some(T::CommunityReviewed),
            _ => None,
        };
        if self >= allowed_from {
            TrustGate::Allow
        } else if confirm_from.is_some_and(|level| self >= level) {
            TrustGate::Confirm
        } else {
            TrustGate::Deny { minimum: confirm_from.unwrap_or(allowed_from) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The matrix of `danger-levels.md` 4.1, row by row.
    #[test]
    fn matrix_matches_the_specification() {
        use TrustGate::{Allow as A, Confirm as C};
        let deny = |minimum| TrustGate::Deny { minimum };
        let rows = [
            (DangerLevel::Safe, [deny(TrustLevel::Generated), A, A, A, A]),
            (
                DangerLevel::Reversible,
                [deny(TrustLevel::Validated), deny(TrustLevel::Validated), A, A, A],
            ),
            (
                DangerLevel::Destructive,
                [deny(TrustLevel::Validated), deny(TrustLevel::Validated), C, A, A],
            ),
            (
                DangerLevel::Dangerous,
                [
                    deny(TrustLevel::CommunityReviewed),
                    deny(TrustLevel::CommunityReviewed),
                    deny(TrustLevel::CommunityReviewed),
                    C,
                    A,
                ],
            ),
            (
                DangerLevel::Forbidden,
                [
                    deny(TrustLevel::Certified),
                    deny(TrustLevel::Certified),
                    deny(TrustLevel::Certified),
                    deny(TrustLevel::Certified),
                    C,
                ],
            ),
        ];
        for (danger, cells) in rows {
            for (trust, expected) in TrustLevel::ALL.into_iter().zip(cells) {
                assert_eq!(trust.gate(danger), expected, "{danger:?} at {trust:?}");
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for level in TrustLevel::ALL {
            assert_eq!(TrustLevel::parse(level.name()), Some(level));
        }
        assert_eq!(TrustLevel::parse("verified"), None);
    }
}

//! One budget for the whole analysis of one action: the bytes every kind
//! of expansion produces (shell variables, brace expansion, make
//! variables, YAML aliases, edits applied to a file), the syntax depth any
//! walk over agent text reaches, and the total work its readers do.
//! Agent text is hostile: a few hundred bytes can ask for gigabytes
//! (`a=$a$a` forty times) or nest four thousand subshells, so every
//! expansion is measured while it happens, and every recursion over agent
//! input holds a [`Nested`] guard. Whatever exceeds the budget stops where
//! it is and leaves [`Fact::TooComplex`](super::Fact::TooComplex) on the
//! action, which always needs a human: never a crash, never silence.
//!
//! The budget belongs to the thread analysing (analysis is synchronous
//! and single-threaded; the readers that charge it sit many calls below
//! the [`super::Builder`] and need not carry it): [`scope`] opens one for
//! an action, and a scope opened inside another charges the outer one.

use std::cell::Cell;

/// Bytes all expansions of one action may produce together.
pub const MAX_PRODUCED_BYTES: usize = 4 * 1024 * 1024;
/// Steps of work the readers of one action may take together: a step is
/// a byte parsed, a syntax node visited or expanded, a byte scanned by a
/// reader that re-reads text. The largest script judged (1 MiB) takes a
/// few million.
pub const MAX_WORK: usize = 16 * 1024 * 1024;
/// What starting one parse costs beyond the bytes it reads, in steps:
/// code that hands thousands of tiny strings to a shell pays for each.
pub const PARSE_STEPS: usize = 256;
/// How deep any walk over agent text may nest (syntax inside syntax,
/// executors inside executors, aliases inside aliases), counted over the
/// whole action. Deep enough for any script a person writes, and shallow
/// enough that the walk stays within a worker thread's stack.
pub const MAX_SYNTAX_DEPTH: usize = 120;

/// Which part of the budget an action exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    Produced,
    Work,
    Depth,
}

impl Exceeded {
    /// Why the analysis stopped, for the fact's detail.
    pub fn describe(self) -> String {
        match self {
            Self::Produced => format!(
                "its expansions produce more than {} MiB",
                MAX_PRODUCED_BYTES / (1024 * 1024)
            ),
            Self::Work => {
                format!("reading it takes more than {} million steps", MAX_WORK / 1_000_000)
            }
            Self::Depth => format!("it nests more than {MAX_SYNTAX_DEPTH} levels deep"),
        }
    }
}

const NOTHING_SPENT: Spent = Spent { produced: 0, work: 0, depth: 0, exceeded: None, scopes: 0 };

#[derive(Clone, Copy)]
struct Spent {
    produced: usize,
    work: usize,
    depth: usize,
    exceeded: Option<Exceeded>,
    scopes: usize,
}

thread_local! {
    static SPENT: Cell<Spent> = const { Cell::new(NOTHING_SPENT) };
}

fn update<R>(change: impl FnOnce(&mut Spent) -> R) -> R {
    SPENT.with(|cell| {
        let mut spent = cell.get();
        let result = change(&mut spent);
        cell.set(spent);
        result
    })
}

/// Runs `analyse` within a budget; returns what it returned and which part
/// of the budget it exceeded, if any. Nested scopes share the outermost.
pub fn scope<R>(analyse: impl FnOnce() -> R) -> (R, Option<Exceeded>) {
    let outermost = update(|spent| {
        spent.scopes += 1;
        if spent.scopes == 1 {
            *spent = Spent { scopes: 1, ..NOTHING_SPENT };
            true
        } else {
            false
        }
    });
    // Closes the scope even if `analyse` unwinds, so a later action on
    // this thread starts with a whole budget.
    struct Close;
    impl Drop for Close {
        fn drop(&mut self) {
            update(|spent| spent.scopes = spent.scopes.saturating_sub(1));
        }
    }
    let close = Close;
    let result = analyse();
    let exceeded = update(|spent| spent.exceeded);
    drop(close);
    (result, if outermost { exceeded } else { None })
}

/// Whether this action's budget is spent: readers stop as soon as it is.
pub fn exhausted() -> bool {
    update(|spent| spent.exceeded.is_some())
}

fn exceed(spent: &mut Spent, part: Exceeded) -> bool {
    spent.exceeded.get_or_insert(part);
    false
}

/// Charges `bytes` produced by an expansion; `false` when the budget
/// cannot pay them (the expansion must not happen).
#[must_use]
pub fn produce(bytes: usize) -> bool {
    charge(bytes, MAX_PRODUCED_BYTES, Exceeded::Produced, |spent| &mut spent.produced)
}

/// Charges `steps` of work; `false` when the budget is spent (the reader
/// stops).
#[must_use]
pub fn work(steps: usize) -> bool {
    charge(steps, MAX_WORK, Exceeded::Work, |spent| &mut spent.work)
}

/// Adds `amount` to the total `meter` picks, unless that passes `limit`.
fn charge(
    amount: usize,
    limit: usize,
    part: Exceeded,
    meter: fn(&mut Spent) -> &mut usize,
) -> bool {
    update(|spent| {
        if spent.exceeded.is_some() {
            return false;
        }
        let total = meter(spent);
        match total.checked_add(amount).filter(|&sum| sum <= limit) {
            Some(sum) => {
                *total = sum;
                true
            }
            None => exceed(spent, part),
        }
    })
}

/// One level of nesting, held while a walk is inside it.
#[must_use]
pub struct Nested(());

impl Drop for Nested {
    fn drop(&mut self) {
        update(|spent| spent.depth = spent.depth.saturating_sub(1));
    }
}

/// Enters one more level of nesting; `None` when that would be deeper than
/// [`MAX_SYNTAX_DEPTH`] or the budget is spent (the walk does not go in).
pub fn nest() -> Option<Nested> {
    update(|spent| {
        if spent.exceeded.is_some() {
            return None;
        }
        if spent.depth >= MAX_SYNTAX_DEPTH {
            exceed(spent, Exceeded::Depth);
            return None;
        }
        spent.depth += 1;
        Some(Nested(()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_part_stops_what_exceeds_it_and_says_which() {
        let (produced, exceeded) = scope(|| produce(MAX_PRODUCED_BYTES) && produce(1));
        assert!(!produced);
        assert_eq!(exceeded, Some(Exceeded::Produced));

        let (worked, exceeded) = scope(|| work(usize::MAX));
        assert!(!worked);
        assert_eq!(exceeded, Some(Exceeded::Work));

        let (levels, exceeded) = scope(|| {
            let mut held = Vec::new();
            while let Some(level) = nest() {
                held.push(level);
            }
            held.len()
        });
        assert_eq!(levels, MAX_SYNTAX_DEPTH);
        assert_eq!(exceeded, Some(Exceeded::Depth));
    }

    #[test]
    fn a_spent_budget_stops_everything_and_the_next_action_starts_whole() {
        let ((), exceeded) = scope(|| {
            assert!(!produce(MAX_PRODUCED_BYTES + 1));
            assert!(!work(1), "work after the budget is spent");
            assert!(nest().is_none(), "nesting after the budget is spent");
            assert!(exhausted());
        });
        assert_eq!(exceeded, Some(Exceeded::Produced));
        let (fine, exceeded) = scope(|| produce(1024) && work(1024) && nest().is_some());
        assert!(fine);
        assert_eq!(exceeded, None);
    }

    #[test]
    fn an_inner_scope_charges_the_outer_one() {
        let (inner, outer) = scope(|| {
            assert!(produce(MAX_PRODUCED_BYTES - 1));
            let (paid, inner) = scope(|| produce(2));
            assert!(!paid);
            inner
        });
        assert_eq!(inner, None, "an inner scope reports nothing of its own");
        assert_eq!(outer, Some(Exceeded::Produced));
    }

    #[test]
    fn levels_are_given_back_when_a_walk_leaves_them() {
        let ((), exceeded) = scope(|| {
            for _ in 0..MAX_SYNTAX_DEPTH * 3 {
                let _level = nest().expect("a level given back is there again");
            }
        });
        assert_eq!(exceeded, None);
    }
}

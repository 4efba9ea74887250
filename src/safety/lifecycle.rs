//! The execution lifecycle of spec 8.4 as types: each state is a type, each
//! transition consumes the old state, and only the transitions the spec
//! allows exist. A stored execution is brought back through
//! [`AnyExecution`], whose accessors turn an impossible request (completing
//! a cancelled execution, say) into a [`LifecycleError`], never a panic.

use std::{fmt, marker::PhantomData};

use crate::store::{StoreError, owner::Owner, records::ExecutionRow};

pub mod state {
    //! Marker types, one per state.
    #[derive(Debug)]
    pub struct Pending;
    #[derive(Debug)]
    pub struct Running;
    #[derive(Debug)]
    pub struct Completed;
    #[derive(Debug)]
    pub struct Failed;
    #[derive(Debug)]
    pub struct Cancelled;
}

use state::{Cancelled, Completed, Failed, Pending, Running};

pub use crate::store::records::ExecutionStatus as Status;

/// An execution in state `S`.
#[derive(Debug)]
pub struct Execution<S> {
    row: ExecutionRow,
    state: PhantomData<S>,
}

impl<S> Execution<S> {
    pub fn row(&self) -> &ExecutionRow {
        &self.row
    }

    pub fn into_row(self) -> ExecutionRow {
        self.row
    }

    fn to<T>(mut self, status: Status) -> Execution<T> {
        self.row.status = status;
        Execution { row: self.row, state: PhantomData }
    }

    fn finish<T>(mut self, status: Status, at: i64, summary: Option<String>) -> Execution<T> {
        self.row.finished_at = Some(at);
        if summary.is_some() {
            self.row.summary = summary;
        }
        self.to(status)
    }
}

/// The facts an execution starts with.
pub struct NewExecution {
    pub id: String,
    pub agent: String,
    pub max_steps: u32,
    pub started_at: i64,
    pub owner: Owner,
    pub session_id: String,
    pub event_cursor: i64,
    pub goal: Option<String>,
}

impl Execution<Pending> {
    pub fn new(facts: NewExecution) -> Self {
        Self {
            row: ExecutionRow {
                id: facts.id,
                agent: facts.agent,
                status: Status::Pending,
                steps: 0,
                max_steps: facts.max_steps,
                started_at: facts.started_at,
                finished_at: None,
                owner: facts.owner,
                session_id: facts.session_id,
                event_cursor: facts.event_cursor,
                goal: facts.goal,
                summary: None,
            },
            state: PhantomData,
        }
    }

    pub fn start(self) -> Execution<Running> {
        self.to(Status::Running)
    }

    pub fn cancel(self, at: i64, reason: Option<String>) -> Execution<Cancelled> {
        self.finish(Status::Cancelled, at, reason)
    }
}

impl Execution<Running> {
    /// Counts one more step; returns its number (1-based).
    pub fn record_step(&mut self) -> u32 {
        self.row.steps = self.row.steps.saturating_add(1);
        self.row.steps
    }

    pub fn advance_cursor(&mut self, event_id: i64) {
        self.row.event_cursor = self.row.event_cursor.max(event_id);
    }

    pub fn complete(self, at: i64, summary: Option<String>) -> Execution<Completed> {
        self.finish(Status::Completed, at, summary)
    }

    pub fn fail(self, at: i64, summary: Option<String>) -> Execution<Failed> {
        self.finish(Status::Failed, at, summary)
    }

    pub fn cancel(self, at: i64, reason: Option<String>) -> Execution<Cancelled> {
        self.finish(Status::Cancelled, at, reason)
    }
}

impl Execution<Failed> {
    /// The optional `failed -> running` retry of spec 8.4.2.
    pub fn retry(mut self) -> Execution<Running> {
        self.row.finished_at = None;
        self.to(Status::Running)
    }
}

/// A transition the lifecycle does not allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LifecycleError {
    pub from: Status,
    pub wanted: &'static str,
}

impl fmt::Display for LifecycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an execution that is {} cannot be {}", self.from.name(), self.wanted)
    }
}

/// A stored execution in whichever state it is.
#[derive(Debug)]
pub enum AnyExecution {
    Pending(Execution<Pending>),
    Running(Execution<Running>),
    Completed(Execution<Completed>),
    Failed(Execution<Failed>),
    Cancelled(Execution<Cancelled>),
}

impl AnyExecution {
    pub fn from_row(row: ExecutionRow) -> Result<Self, StoreError> {
        let status = row.status;
        fn execution<S>(row: ExecutionRow) -> Execution<S> {
            Execution { row, state: PhantomData }
        }
        Ok(match status {
            Status::Pending => Self::Pending(execution(row)),
            Status::Running => Self::Running(execution(row)),
            Status::Completed => Self::Completed(execution(row)),
            Status::Failed => Self::Failed(execution(row)),
            Status::Cancelled => Self::Cancelled(execution(row)),
        })
    }

    pub fn status(&self) -> Status {
        match self {
            Self::Pending(_) => Status::Pending,
            Self::Running(_) => Status::Running,
            Self::Completed(_) => Status::Completed,
            Self::Failed(_) => Status::Failed,
            Self::Cancelled(_) => Status::Cancelled,
        }
    }

    pub fn row(&self) -> &ExecutionRow {
        match self {
            Self::Pending(e) => e.row(),
            Self::Running(e) => e.row(),
            Self::Completed(e) => e.row(),
            Self::Failed(e) => e.row(),
            Self::Cancelled(e) => e.row(),
        }
    }

    /// The execution as running, or why it is not.
    pub fn running(self, wanted: &'static str) -> Result<Execution<Running>, LifecycleError> {
        match self {
            Self::Running(e) => Ok(e),
            other => Err(LifecycleError { from: other.status(), wanted }),
        }
    }

    /// Cancels a pending or running execution.
    pub fn cancel(
        self,
        at: i64,
        reason: Option<String>,
    ) -> Result<Execution<Cancelled>, LifecycleError> {
        match self {
            Self::Pending(e) => Ok(e.cancel(at, reason)),
            Self::Running(e) => Ok(e.cancel(at, reason)),
            other => Err(LifecycleError { from: other.status(), wanted: "cancelled" }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh() -> Execution<Pending> {
        Execution::new(NewExecution {
            id: "e1".into(),
            agent: "a".into(),
            max_steps: 3,
            started_at: 1,
            owner: Owner::current(),
            session_id: "s".into(),
            event_cursor: 0,
            goal: None,
        })
    }

    #[test]
    fn the_allowed_transitions() {
        let mut running = fresh().start();
        assert_eq!(running.record_step(), 1);
        let done = running.complete(5, Some("ok".into()));
        assert_eq!((done.row().status, done.row().finished_at), (Status::Completed, Some(5)));
        let failed = fresh().start().fail(3, None);
        let retried = failed.retry();
        assert_eq!((retried.row().status, retried.row().finished_at), (Status::Running, None));
        assert_eq!(fresh().cancel(2, None).row().status, Status::Cancelled);
    }

    #[test]
    fn forbidden_transitions_are_errors() {
        let done = AnyExecution::from_row(fresh().start().complete(5, None).into_row()).unwrap();
        let err = done.running("completed").unwrap_err();
        assert_eq!(err.from, Status::Completed);
        assert_eq!(err.to_string(), "an execution that is completed cannot be completed");
        let cancelled = AnyExecution::from_row(fresh().cancel(1, None).into_row()).unwrap();
        assert!(cancelled.cancel(2, None).is_err());
    }
}

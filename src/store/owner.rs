//! Which dongle process a row belongs to: its machine and its process id.
//!
//! Several machines may share one database (PostgreSQL), so a process id
//! alone names nothing: rows carry the machine too, and only a process on
//! this machine can be checked for life. A process on another machine
//! counts as running, so what it holds (a pause waiting for its human, an
//! execution) ends by its own expiry or its own process, never because a
//! process id happens to be free here. Rows written before machines were
//! recorded name none (`""`): they were written on this machine.

use std::sync::OnceLock;

/// How long a serving dongle may go without saying it is alive
/// (`records::heartbeat`) before it counts as gone: its executions end,
/// and `status` says it fell silent.
pub const SILENT_AFTER_MS: i64 = 60_000;

/// A dongle process, as rows name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub machine: String,
    pub pid: u32,
}

impl Owner {
    /// This process.
    pub fn current() -> Self {
        Self { machine: this_machine().to_owned(), pid: std::process::id() }
    }

    /// Whether the owner may still be running, as far as this process can
    /// tell: itself, or a live process on this machine, or any process on
    /// another machine.
    pub fn may_be_running(&self) -> bool {
        if !self.is_on_this_machine() {
            return true;
        }
        self.pid == std::process::id() || crate::platform::process_alive(self.pid)
    }

    pub fn is_on_this_machine(&self) -> bool {
        self.machine.is_empty() || self.machine == this_machine()
    }
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_on_this_machine() {
            write!(f, "pid {}", self.pid)
        } else {
            write!(f, "pid {} on {}", self.pid, self.machine)
        }
    }
}

/// This machine's name, as rows name it (read once).
pub fn this_machine() -> &'static str {
    static MACHINE: OnceLock<String> = OnceLock::new();
    MACHINE.get_or_init(crate::platform::machine_name)
}

#[cfg(test)]
mod tests {
    use super::Owner;

    #[test]
    fn only_processes_of_this_machine_are_judged_dead() {
        let gone = u32::MAX - 7;
        assert!(Owner::current().may_be_running());
        assert!(
            !Owner { machine: Owner::current().machine, pid: gone }.may_be_running(),
            "a process id free here, on this machine: gone"
        );
        assert!(
            !Owner { machine: String::new(), pid: gone }.may_be_running(),
            "rows from before machines were recorded are this machine's"
        );
        assert!(
            Owner { machine: "ci-runner-7/0123".into(), pid: gone }.may_be_running(),
            "another machine's process cannot be checked from here"
        );
        assert_eq!(
            Owner { machine: "ci-runner-7/0123".into(), pid: 42 }.to_string(),
            "pid 42 on ci-runner-7/0123"
        );
    }
}

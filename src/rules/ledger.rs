//! The path ledger (DESIGN.md, "Every path ends in the ledger"): how each path of a
//! member's check ended. A path starts at the check's root, at each two-way branch
//! and when execution goes on after a `join`; it ends by reaching the end of what
//! was verified, by a recorded failure, by a prune (the decider proved the path
//! infeasible), by a recorded timeout, or by merging into a `join`.
//!
//! Architecture invariant: the rules only count here; `verify` reads the balance
//! after a check, and an unbalanced ledger is an internal error, never a verdict.

use serde::Serialize;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Ledger {
    pub started: u64,
    pub completed: u64,
    pub failed: u64,
    pub pruned: u64,
    pub timeout: u64,
    pub merged: u64,
}

impl Ledger {
    /// Paths started and not (yet) ended: zero once a check is over.
    pub fn open(&self) -> i128 {
        self.started as i128
            - (self.completed + self.failed + self.pruned + self.timeout + self.merged) as i128
    }

    pub fn balanced(&self) -> bool {
        self.open() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::Ledger;

    #[test]
    fn a_ledger_balances_when_every_started_path_ended() {
        let mut l = Ledger { started: 3, ..Ledger::default() };
        assert!(!l.balanced());
        l.completed = 1;
        l.failed = 1;
        assert_eq!(l.open(), 1);
        l.merged = 1;
        assert!(l.balanced());
        l.pruned = 1;
        assert_eq!(l.open(), -1);
    }
}

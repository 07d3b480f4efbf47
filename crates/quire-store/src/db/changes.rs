//! How a process knows whether something it read from the database earlier may have changed
//! since, so that hot point reads (a space with the caller's role) can be answered from memory.
//!
//! A [`Stamp`] is taken before a read and kept with what was read; the answer is current for as
//! long as [`Changes::stamp`] still returns the same stamp. The generation behind it moves on
//! every write this process commits and, as the engine reports them, on writes of other
//! processes:
//!
//! - SQLite: `PRAGMA data_version` on a connection of its own changes whenever any other
//!   connection, of this process or another (`quire admin` beside a server), has committed.
//! - PostgreSQL: a process sends `NOTIFY` after its write transactions commit (one for a burst
//!   of them), and a thread of each process listens. While that connection is down the process
//!   trusts nothing it kept.
//!
//! Taking the stamp before reading makes a race safe: a write that commits while the read runs
//! moves the generation after the read took its stamp, so the answer is dropped even when it
//! already saw the write.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What a process sends after its writes commit (see `postgres::Notifier`): delivered to every
/// listening process, this one included.
pub const PG_NOTIFY: &str = "NOTIFY quire_writes";
/// What each process's listening connection runs, on the same channel.
pub const PG_LISTEN: &str = "LISTEN quire_writes";

/// A point in this process's view of the database's history; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stamp(u64);

#[cfg(test)]
impl Stamp {
    /// The stamp after `writes` writes, for tests of what keeps stamps without a database.
    pub(crate) fn after(writes: u64) -> Stamp {
        Stamp(writes)
    }
}

pub struct Changes {
    generation: AtomicU64,
    /// Woken on every bump: background work that reacts to writes (the job runner) waits on it.
    pub(crate) bumped: tokio::sync::Notify,
    /// Whether every write since the last bump is known to have moved the generation: false on
    /// PostgreSQL until the listening connection is up, and again whenever it drops.
    trusted: AtomicBool,
}

impl Changes {
    pub fn new(trusted: bool) -> Changes {
        Changes {
            generation: AtomicU64::new(0),
            bumped: tokio::sync::Notify::new(),
            trusted: AtomicBool::new(trusted),
        }
    }

    /// The current stamp, or None while writes may go unnoticed.
    pub fn stamp(&self) -> Option<Stamp> {
        if !self.trusted.load(Ordering::SeqCst) {
            return None;
        }
        Some(Stamp(self.generation.load(Ordering::SeqCst)))
    }

    /// Something may have changed: every stamp taken so far is stale.
    pub fn bump(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.bumped.notify_waiters();
    }

    /// Writes from now on are heard; what was kept before is stale.
    pub fn trust(&self) {
        self.bump();
        self.trusted.store(true, Ordering::SeqCst);
    }

    /// Writes may go unheard from now on.
    pub fn distrust(&self) {
        self.trusted.store(false, Ordering::SeqCst);
        self.bump();
    }
}

#[cfg(test)]
mod tests {
    use super::Changes;

    #[test]
    fn a_bump_outdates_every_earlier_stamp() {
        let changes = Changes::new(true);
        let before = changes.stamp();
        assert!(before.is_some());
        assert_eq!(changes.stamp(), before);
        changes.bump();
        assert_ne!(changes.stamp(), before);
    }

    #[test]
    fn nothing_is_current_while_writes_may_go_unheard() {
        let changes = Changes::new(true);
        let before = changes.stamp();
        changes.distrust();
        assert_eq!(changes.stamp(), None);
        changes.trust();
        let after = changes.stamp();
        assert!(after.is_some());
        assert_ne!(after, before);
    }
}

//! Writes that compute their outcome before their transaction (merges, updates, content
//! batches) and write it only if what it was computed on did not move meanwhile: when it did,
//! they compute again, and this decides when to compute inside the transaction instead.

use std::time::Duration;

/// Stale outcomes after which the next attempt computes inside the transaction, so that a busy
/// space still makes progress.
const MAX_OPTIMISTIC: usize = 3;

/// An outcome computed faster than this is computed inside the transaction once it went stale:
/// holding the writer that long costs less than another round, which concurrent writers of the
/// space (merges moving main one after another) would likely make stale again.
const CHEAP: Duration = Duration::from_millis(25);

/// The attempts of one write.
#[derive(Default)]
pub struct Attempts {
    stale: usize,
    last_cost: Option<Duration>,
}

impl Attempts {
    /// Whether the next attempt computes inside the transaction.
    pub fn inline(&self) -> bool {
        self.stale >= MAX_OPTIMISTIC || self.last_cost.is_some_and(|cost| cost < CHEAP)
    }

    /// Notes an attempt whose outcome, computed in `cost`, went stale before it was written.
    pub fn stale(&mut self, cost: Duration) {
        self.stale += 1;
        self.last_cost = Some(cost);
    }

    /// Whether another attempt may follow (the inline one cannot go stale).
    pub fn more(&self) -> bool {
        self.stale <= MAX_OPTIMISTIC
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cheap_outcomes_go_inline_after_one_stale_attempt_slow_ones_after_three() {
        let mut cheap = Attempts::default();
        assert!(!cheap.inline());
        cheap.stale(Duration::from_millis(2));
        assert!(cheap.inline());

        let mut slow = Attempts::default();
        for _ in 0..MAX_OPTIMISTIC {
            assert!(!slow.inline());
            slow.stale(Duration::from_secs(1));
        }
        assert!(slow.inline());
        assert!(slow.more());
    }
}

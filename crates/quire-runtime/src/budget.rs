//! Time a call has used: the script's running time is the time since the start less the
//! time spent waiting for the host (fetches) and for timers, which is not the script's doing.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// Which limit stopped the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tripped {
    None = 0,
    Cpu = 1,
    Wall = 2,
}

pub struct Budget {
    started: Instant,
    waited: Mutex<Duration>,
    cpu: Duration,
    wall: Duration,
    tripped: AtomicU8,
}

impl Budget {
    pub fn new(cpu: Duration, wall: Duration) -> Budget {
        Budget {
            started: Instant::now(),
            waited: Mutex::new(Duration::ZERO),
            cpu,
            wall,
            tripped: AtomicU8::new(Tripped::None as u8),
        }
    }

    fn waited(&self) -> Duration {
        *self.waited.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a wait that does not count as the script's time.
    pub fn add_wait(&self, wait: Duration) {
        *self.waited.lock().unwrap_or_else(|e| e.into_inner()) += wait;
    }

    pub fn used(&self) -> Duration {
        self.started.elapsed().saturating_sub(self.waited())
    }

    /// Time left before the wall limit.
    pub fn wall_left(&self) -> Duration {
        self.wall.saturating_sub(self.started.elapsed())
    }

    /// True when a limit is passed (and remembers which): the interpreter's interrupt check.
    pub fn check(&self) -> bool {
        let tripped = if self.started.elapsed() > self.wall {
            Tripped::Wall
        } else if self.used() > self.cpu {
            Tripped::Cpu
        } else {
            return self.tripped() != Tripped::None;
        };
        self.tripped.store(tripped as u8, Ordering::Relaxed);
        true
    }

    pub fn tripped(&self) -> Tripped {
        match self.tripped.load(Ordering::Relaxed) {
            1 => Tripped::Cpu,
            2 => Tripped::Wall,
            _ => Tripped::None,
        }
    }

    pub fn trip_wall(&self) {
        self.tripped.store(Tripped::Wall as u8, Ordering::Relaxed);
    }
}

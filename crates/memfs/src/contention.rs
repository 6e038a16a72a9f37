//! Waiting after a lost race for the head: exponential backoff with full jitter, measured in
//! rounds of the store at hand.
//!
//! A commit is a round of requests (read the head, write the new objects, swap the head), and
//! the writers racing for one head collide when their rounds overlap. Waiting a few
//! milliseconds, the same on every store, does nothing for that: on S3, where a round is tens
//! of milliseconds, a writer that lost would be back within the very next round, against the
//! same rivals, and every lost round costs the store a head read and the loser's object writes
//! for nothing. So the window doubles from one round: after the k-th loss in a row a writer
//! waits a random time up to 2^(k-1) rounds (the rounds this handle measured, a moving
//! average), so that 16 writers in a burst spread over 16 rounds after their fifth loss and
//! mostly stop colliding. The window is never less than the old fixed one (2^k ms up to 500 ms,
//! which stays the whole wait on a store with sub-millisecond rounds) and never more than
//! [`MAX_WAIT`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The longest wait between two attempts of one command.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(1);

/// The most rounds one wait spans (after the sixth loss in a row and on).
const MAX_ROUNDS: u32 = 32;

/// A moving average of how long this handle's commit rounds take.
#[derive(Debug, Default)]
pub(crate) struct Rounds {
    /// In microseconds; 0 until the first round is measured.
    average_us: AtomicU64,
}

impl Rounds {
    /// Counts one round (an attempt at a commit, from reading the head to the swap's answer).
    pub(crate) fn record(&self, round: Duration) {
        let us = u64::try_from(round.as_micros()).unwrap_or(u64::MAX).max(1);
        // An exponential moving average with weight 1/4: recent rounds matter most, one slow
        // request does not dominate. Racing updates may drop a sample, which is harmless.
        let old = self.average_us.load(Ordering::Relaxed);
        let new = if old == 0 { us } else { old - old / 4 + us / 4 };
        self.average_us.store(new, Ordering::Relaxed);
    }

    /// The window to wait in after losing `attempt` (1, 2, …) times in a row.
    pub(crate) fn window(&self, attempt: u32) -> Duration {
        let attempt = attempt.max(1);
        let floor = Duration::from_millis((1u64 << attempt.min(9)).min(500));
        let rounds = (1u32 << (attempt - 1).min(MAX_ROUNDS.trailing_zeros())).min(MAX_ROUNDS);
        let scaled = Duration::from_micros(self.average_us.load(Ordering::Relaxed)) * rounds;
        floor.max(scaled).min(MAX_WAIT)
    }

    /// Waits a random time up to [`Rounds::window`] (full jitter: rivals that lost together
    /// do not come back together).
    pub(crate) async fn backoff(&self, attempt: u32) {
        let window = u64::try_from(self.window(attempt).as_micros()).unwrap_or(u64::MAX);
        let mut b = [0u8; 8];
        let wait = match getrandom::fill(&mut b) {
            Ok(()) => u64::from_le_bytes(b) % (window + 1),
            Err(_) => window / 2,
        };
        tokio::time::sleep(Duration::from_micros(wait)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_any_round_the_window_is_the_fixed_one() {
        let rounds = Rounds::default();
        let ms = |n| Duration::from_millis(n);
        assert_eq!([1, 2, 3, 8, 9, 100].map(|a| rounds.window(a)), [ms(2), ms(4), ms(8), ms(256), ms(500), ms(500)]);
    }

    #[test]
    fn the_window_doubles_from_one_round_up_to_32_rounds_or_a_second() {
        let rounds = Rounds::default();
        rounds.record(Duration::from_millis(20));
        let ms = |n| Duration::from_millis(n);
        assert_eq!(
            [1, 2, 3, 4, 5, 6, 7, 200].map(|a| rounds.window(a)),
            [ms(20), ms(40), ms(80), ms(160), ms(320), ms(640), ms(640), ms(640)]
        );
        // Slow rounds: at most a second.
        let slow = Rounds::default();
        slow.record(Duration::from_millis(100));
        assert_eq!([1, 4, 5, 6].map(|a| slow.window(a)), [ms(100), ms(800), MAX_WAIT, MAX_WAIT]);
        // Rounds shorter than the fixed window leave it as it was.
        let fast = Rounds::default();
        fast.record(Duration::from_micros(100));
        assert_eq!([1, 4, 6].map(|a| fast.window(a)), [ms(2), ms(16), ms(64)]);
    }

    #[test]
    fn the_average_follows_recent_rounds() {
        let rounds = Rounds::default();
        rounds.record(Duration::from_millis(40));
        rounds.record(Duration::from_millis(8));
        // 40 - 10 + 2 = 32 ms.
        assert_eq!(rounds.window(1), Duration::from_millis(32));
        for _ in 0..64 {
            rounds.record(Duration::from_millis(8));
        }
        // Integer steps settle within 3 µs above the samples.
        let settled = rounds.window(1).as_micros();
        assert!((8000..8004).contains(&settled), "{settled} µs");
    }
}

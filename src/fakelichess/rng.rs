//! A small seeded generator for the fault schedule and its lines: the same seed gives the same
//! soak, so a failing one can be replayed.

use std::time::Duration;

/// A small seeded generator (SplitMix64): reproducible schedules without a dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`0` when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform between `lo` and `hi` (`lo` when `hi <= lo`).
    pub fn between(&mut self, lo: Duration, hi: Duration) -> Duration {
        lo + hi.saturating_sub(lo).mul_f64(self.unit())
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_ranges_hold() {
        let mut rng = Rng::new(11);
        for _ in 0..1000 {
            assert!(rng.below(3) < 3);
            let u = rng.unit();
            assert!((0.0..1.0).contains(&u));
            let d = rng.between(Duration::from_millis(10), Duration::from_millis(20));
            assert!(d >= Duration::from_millis(10) && d <= Duration::from_millis(20));
        }
        assert_eq!(rng.below(0), 0);
    }
}

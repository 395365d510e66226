//! Simulated work with durations that vary like real callbacks' do.

use std::time::{Duration, Instant};

/// A small deterministic generator (xorshift64*), one per callback.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next value in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A duration around `mean_us` with a long right tail (log-normal, sigma 0.5), like callback times.
    pub fn work_time(&mut self, mean_us: f64) -> Duration {
        // Box-Muller for a normal deviate.
        let (u1, u2) = (self.next_f64().max(1e-12), self.next_f64());
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        let sigma = 0.5;
        let us = mean_us * (sigma * z - sigma * sigma / 2.0).exp();
        Duration::from_nanos((us * 1e3) as u64)
    }
}

/// Computes for `d` (the CPU is busy, as in a real callback) and returns a value so it is not optimized away.
pub fn busy(d: Duration) -> u64 {
    let end = Instant::now() + d;
    let mut acc = 0u64;
    while Instant::now() < end {
        for i in 0..64u64 {
            acc = acc.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
    }
    std::hint::black_box(acc)
}

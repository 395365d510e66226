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

/// The callbacks whose work is multiplied (`rostrace demo --slow`), by label, set once before
/// the nodes start: a regression made on purpose, for `rostrace diff` to find.
static SLOW: std::sync::OnceLock<Vec<(String, f64)>> = std::sync::OnceLock::new();

/// The demo's callbacks by label: `NODE:TOPIC` (subscriptions), `NODE:timer`, `NODE:SERVICE`.
pub const CALLBACKS: [&str; 9] = [
    "/sensing/lidar:timer",
    "/sensing/imu:timer",
    "/sensing/lidar_filter:/sensing/points_raw",
    "/map/map_server:/map/speed_limit",
    "/localization/fusion:/sensing/imu",
    "/localization/fusion:/sensing/points_filtered",
    "/planning/planner:/localization/pose",
    "/planning/planner:timer",
    "/control/actuator:/control/cmd_vel",
];

/// Parses `LABEL[=FACTOR]` (factor 2 when left out; above 0 and at most 1000), the label one of
/// [`CALLBACKS`].
pub fn parse_slow(s: &str) -> Result<(String, f64), String> {
    let (label, factor) = match s.rsplit_once('=') {
        Some((l, f)) => match f.parse::<f64>() {
            Ok(x) if x > 0.0 && x <= 1000.0 => (l, x),
            _ => return Err(format!("--slow {s}: the factor {f:?} is not a number above 0 and at most 1000")),
        },
        None => (s, 2.0),
    };
    if !CALLBACKS.contains(&label) {
        return Err(format!("--slow {s}: no demo callback {label:?}; they are: {}", CALLBACKS.join(", ")));
    }
    Ok((label.to_string(), factor))
}

/// Multiplies the work of the callbacks `slow` (label, factor) from now on; only the first call counts.
pub fn set_slow(slow: Vec<(String, f64)>) {
    let _ = SLOW.set(slow);
}

/// The mean work (µs) of the callback `label`: `mean_us`, multiplied when it is slowed.
pub fn mean_of(label: &str, mean_us: f64) -> f64 {
    let f: f64 = SLOW.get().map(|v| v.iter().filter(|(l, _)| l == label).map(|(_, f)| *f).product()).unwrap_or(1.0);
    mean_us * f
}

/// How far every timer of the demo is shifted (`rostrace demo --phase`), set once before the
/// nodes start.
static PHASE: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();

/// Parses `--phase`: milliseconds, at least 0 and below 10 (the shortest timer period).
pub fn parse_phase(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(ms) if (0.0..10.0).contains(&ms) => Ok(Duration::from_secs_f64(ms / 1e3)),
        _ => Err(format!("--phase {s}: give milliseconds, at least 0 and below 10")),
    }
}

/// Shifts every timer by `phase` from now on; only the first call counts.
pub fn set_phase(phase: Duration) {
    let _ = PHASE.set(phase);
}

/// The offset of a timer that ticks `offset` past the multiples of its period, shifted by
/// [`set_phase`].
pub fn phase(offset: Duration) -> Duration {
    offset + PHASE.get().copied().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_is_milliseconds_below_the_shortest_period() {
        assert_eq!(parse_phase("5"), Ok(Duration::from_millis(5)));
        assert_eq!(parse_phase("0.5"), Ok(Duration::from_micros(500)));
        for bad in ["10", "-1", "x", "NaN"] {
            assert!(parse_phase(bad).unwrap_err().contains("below 10"), "{bad}");
        }
    }
}

//! Summary statistics of a sample of durations or latencies (ns).

use serde::Serialize;

/// Count, mean, standard deviation, min, percentiles and max of a sample, in ns.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Sample size.
    pub count: u64,
    /// Mean.
    pub mean: f64,
    /// Standard deviation (population).
    pub std: f64,
    /// Minimum.
    pub min: i64,
    /// Median.
    pub p50: i64,
    /// 90th percentile.
    pub p90: i64,
    /// 99th percentile.
    pub p99: i64,
    /// Maximum.
    pub max: i64,
    /// Sum.
    pub sum: i128,
}

impl Stats {
    /// Statistics of `v` (sorted in place). Percentiles are nearest-rank.
    pub fn of(v: &mut [i64]) -> Stats {
        if v.is_empty() {
            return Stats::default();
        }
        v.sort_unstable();
        let n = v.len();
        let sum: i128 = v.iter().map(|x| *x as i128).sum();
        let mean = sum as f64 / n as f64;
        let var = v.iter().map(|x| (*x as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        // Nearest rank, ceil(pct / 100 * n), in integers (0.9 * 30 in floating point is 27.000000000000004).
        let rank = |pct: usize| v[(pct * n).div_ceil(100).clamp(1, n) - 1];
        Stats {
            count: n as u64,
            mean,
            std: var.sqrt(),
            min: v[0],
            p50: rank(50),
            p90: rank(90),
            p99: rank(99),
            max: v[n - 1],
            sum,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let mut v: Vec<i64> = (1..=100).rev().collect();
        let s = Stats::of(&mut v);
        assert_eq!((s.count, s.min, s.max, s.p50, s.p90, s.p99), (100, 1, 100, 50, 90, 99));
        assert_eq!(s.mean, 50.5);
        assert!((s.std - 28.866).abs() < 1e-3);
        assert_eq!(Stats::of(&mut []), Stats::default());
        let s = Stats::of(&mut [7]);
        assert_eq!((s.p50, s.p99, s.std), (7, 7, 0.0));
        // Nearest rank of 30 values: p90 is the 27th (0.9 * 30 is not 27 in floating point).
        let mut v: Vec<i64> = (1..=30).collect();
        let s = Stats::of(&mut v);
        assert_eq!((s.p50, s.p90, s.p99), (15, 27, 30));
    }
}

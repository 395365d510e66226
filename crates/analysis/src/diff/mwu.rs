//! The Mann–Whitney U test, two-sided, by the normal approximation with the tie correction and
//! a continuity correction; chosen for latencies because it assumes no distribution (latency
//! samples are skewed, heavy-tailed and multimodal, far from the normal a t-test needs) and a
//! few outliers move it by their rank only.

use serde::Serialize;

/// The test of a sample `y` against a sample `x`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MannWhitney {
    /// U of `y`: the pairs (x, y) with y > x, ties counting one half.
    pub u: f64,
    /// The standard score of `u` (positive: `y` larger).
    pub z: f64,
    /// Two-sided p-value (1 when either sample is empty or all values are equal).
    pub p_value: f64,
    /// Cliff's delta: P(y > x) − P(y < x), from `u`.
    pub cliff_delta: f64,
}

/// The test of `y` against `x`.
pub fn mann_whitney(x: &[i64], y: &[i64]) -> MannWhitney {
    let (n1, n2) = (x.len() as f64, y.len() as f64);
    if x.is_empty() || y.is_empty() {
        return MannWhitney { u: 0.0, z: 0.0, p_value: 1.0, cliff_delta: 0.0 };
    }
    let mut all: Vec<(i64, bool)> = x.iter().map(|v| (*v, false)).chain(y.iter().map(|v| (*v, true))).collect();
    all.sort_unstable_by_key(|p| p.0);
    let n = all.len();
    let (mut rank_y, mut ties) = (0.0f64, 0.0f64);
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j < n && all[j].0 == all[i].0 {
            j += 1;
        }
        // Ranks i+1 ..= j share their mean.
        let mean_rank = (i + 1 + j) as f64 / 2.0;
        let in_y = all[i..j].iter().filter(|p| p.1).count() as f64;
        rank_y += mean_rank * in_y;
        let t = (j - i) as f64;
        ties += t * t * t - t;
        i = j;
    }
    let u = rank_y - n2 * (n2 + 1.0) / 2.0;
    let mu = n1 * n2 / 2.0;
    let nn = n as f64;
    let var = n1 * n2 / 12.0 * ((nn + 1.0) - ties / (nn * (nn - 1.0)).max(1.0));
    let cliff_delta = 2.0 * u / (n1 * n2) - 1.0;
    if var <= 0.0 {
        return MannWhitney { u, z: 0.0, p_value: 1.0, cliff_delta };
    }
    let d = u - mu;
    let z = (d.abs() - 0.5).max(0.0).copysign(d) / var.sqrt();
    MannWhitney { u, z, p_value: erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0), cliff_delta }
}

/// The complementary error function (Numerical Recipes' Chebyshev fit, relative error below
/// 1.2e-7 everywhere), since the standard library has none.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807
                                + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // By hand: U = 25 of 25 pairs, sd = sqrt(25 / 12 * 11), z = (12.5 - 0.5) / sd, p = erfc(z / sqrt 2),
        // as scipy.stats.mannwhitneyu(method="asymptotic") gives.
        let m = mann_whitney(&[1, 2, 3, 4, 5], &[6, 7, 8, 9, 10]);
        assert_eq!(m.u, 25.0);
        assert!((m.p_value - 0.0121858).abs() < 1e-6, "{m:?}");
        assert_eq!(m.cliff_delta, 1.0);
        // Ties: the variance lowered by sum(t^3 - t) / (n (n - 1)) over tied groups.
        let m = mann_whitney(&[1, 2, 2, 3, 3, 3], &[2, 3, 3, 4, 4, 5]);
        assert_eq!(m.u, 29.0);
        assert!((m.p_value - 0.0784029).abs() < 1e-6, "{m:?}");
        // A sample against itself: no difference.
        let v: Vec<i64> = (0..100).map(|i| (i * 37) % 101).collect();
        let m = mann_whitney(&v, &v);
        assert_eq!((m.p_value, m.cliff_delta), (1.0, 0.0));
        assert_eq!(mann_whitney(&[], &[1]).p_value, 1.0);
        assert_eq!(mann_whitney(&[3, 3], &[3, 3]).p_value, 1.0);
        assert!((erfc(0.0) - 1.0).abs() < 1e-7 && (erfc(1.0) - 0.157299).abs() < 1e-6);
    }
}

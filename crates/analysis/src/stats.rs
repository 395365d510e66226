//! Summary statistics of a sample of durations or latencies (ns).

use serde::{Deserialize, Serialize};

/// Count, mean, standard deviation, min, percentiles and max of a sample, in ns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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

/// The values kept exactly by a [`Sample`] before it turns to buckets: a callback or topic of
/// fewer values has exact percentiles.
const EXACT: usize = 1024;

/// Relative accuracy of a [`Sample`]'s buckets: each holds the values within this fraction of
/// its representative value (so a percentile read from them is within it of the exact one).
pub const SKETCH_RELATIVE_ERROR: f64 = 0.005;

/// A sample of durations or latencies that is added to value by value (slice of time by slice
/// of time, in a streamed analysis), in memory bounded by the range of its values, not
/// their number. Count, sum, mean, min and max are exact; so is the standard deviation, up to
/// floating point (sums of squares in 128-bit integers); percentiles are exact up to
/// [`EXACT`] values, then read from logarithmic buckets (DDSketch, Masson et al., VLDB 2019) of
/// relative accuracy [`SKETCH_RELATIVE_ERROR`], clamped to the exact min and max.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    count: u64,
    sum: i128,
    squares: i128,
    min: i64,
    max: i64,
    /// The values, while there are at most [`EXACT`].
    exact: Option<Vec<i64>>,
    /// Bucket index to count, of positive values and of the magnitudes of negative ones; zeros.
    positive: Buckets,
    negative: Buckets,
    zeros: u64,
    /// A uniform random choice of the values, when asked for ([`Sample::with_reservoir`]).
    reservoir: Option<Box<Reservoir>>,
}

/// Values kept by a [`Sample`] with a reservoir: at most this many.
pub const RESERVOIR: usize = 10_000;

/// A uniform random choice of [`RESERVOIR`] values of a stream of values (Vitter's algorithm R),
/// by a generator of fixed seed: the same values give the same choice.
#[derive(Debug, Clone)]
struct Reservoir {
    values: Vec<i64>,
    seen: u64,
    state: u64,
}

impl Reservoir {
    /// The next number of the generator (splitmix64).
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n`.
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }

    fn add(&mut self, x: i64) {
        self.seen += 1;
        if self.seen == 1 {
            // Seeded by the first value too: two samples draw different indices.
            self.state ^= (x as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        if self.values.len() < RESERVOIR {
            if self.values.len() == EXACT {
                // (Room for the whole reservoir at once, not grown past it.)
                self.values.reserve_exact(RESERVOIR - EXACT);
            }
            self.values.push(x);
            return;
        }
        let j = self.below(self.seen) as usize;
        if j < RESERVOIR {
            self.values[j] = x;
        }
    }

    /// `other`'s values added: when both are too many, each keeps a uniform choice of its own
    /// in proportion to the values it saw.
    fn merge(&mut self, other: &Reservoir) {
        let total = self.seen + other.seen;
        if self.values.len() + other.values.len() <= RESERVOIR {
            self.values.extend_from_slice(&other.values);
        } else {
            let mine = ((RESERVOIR as u128 * self.seen as u128) / total.max(1) as u128) as usize;
            let mut theirs = other.values.clone();
            self.choose_in(&mut theirs, RESERVOIR - mine);
            let mut values = std::mem::take(&mut self.values);
            self.choose_in(&mut values, mine);
            values.append(&mut theirs);
            self.values = values;
        }
        self.seen = total;
    }

    /// `v` cut to a uniform choice of `k` of its values (a partial Fisher–Yates shuffle).
    fn choose_in(&mut self, v: &mut Vec<i64>, k: usize) {
        let k = k.min(v.len());
        for i in 0..k {
            let j = i + self.below((v.len() - i) as u64) as usize;
            v.swap(i, j);
        }
        v.truncate(k);
    }
}

/// log(gamma), gamma = (1 + a) / (1 - a).
fn log_gamma() -> f64 {
    ((1.0 + SKETCH_RELATIVE_ERROR) / (1.0 - SKETCH_RELATIVE_ERROR)).ln()
}

/// The bucket of magnitude `m` (> 0): ceil(log_gamma(m)), computed in floating point.
fn key_computed(m: u64) -> i32 {
    ((m as f64).ln() / log_gamma()).ceil() as i32
}

/// Per power of two, the magnitudes where [`key_computed`] steps up ([`steps_of`]), and where
/// to start looking among them for each 256th of the power of two: made the first time a
/// magnitude of that size is met.
static OCTAVES: [std::sync::OnceLock<Octave>; 64] = [const { std::sync::OnceLock::new() }; 64];

struct Octave {
    steps: Box<[(u64, i32)]>,
    /// For each 256th of the power of two, the last step at or before its start. (A bucket is
    /// 1 % wide, a 256th at most 0.4 %: at most one step lies within it.)
    start: [u8; 256],
}

/// Which 256th of the power of two `2^o` magnitude `m` lies in.
fn part(m: u64, o: usize) -> usize {
    let d = m - (1u64 << o);
    (if o >= 8 { d >> (o - 8) } else { d << (8 - o) }) as usize
}

impl Octave {
    fn new(o: usize) -> Octave {
        let steps = steps_of(o);
        let mut start = [0u8; 256];
        let mut i = 0;
        for (j, s) in start.iter_mut().enumerate() {
            let from = (1u64 << o) + if o >= 8 { (j as u64) << (o - 8) } else { (j as u64).div_ceil(1 << (8 - o)) };
            while i + 1 < steps.len() && steps[i + 1].0 <= from {
                i += 1;
            }
            *s = i as u8;
        }
        Octave { steps, start }
    }
}

/// The bucket of magnitude `m` (> 0), as [`key_computed`] gives it, without a logarithm: the
/// step of `m`'s 256th of its power of two, or the next one.
fn key(m: u64) -> i32 {
    let o = (u64::BITS - 1 - m.leading_zeros()) as usize;
    let oc = OCTAVES[o].get_or_init(|| Octave::new(o));
    let mut i = oc.start[part(m, o)] as usize;
    while i + 1 < oc.steps.len() && oc.steps[i + 1].0 <= m {
        i += 1;
    }
    oc.steps[i].1
}

/// The steps of the power of two `2^o`: for each bucket met from `2^o` to `2^(o+1) - 1`, its
/// smallest magnitude there, found by bisection on [`key_computed`] (which never decreases as
/// the magnitude grows).
fn steps_of(o: usize) -> Box<[(u64, i32)]> {
    let lo = 1u64 << o;
    let hi = if o == 63 { u64::MAX } else { (lo << 1) - 1 };
    let mut steps = vec![(lo, key_computed(lo))];
    let last = key_computed(hi);
    while let Some(&(from, k)) = steps.last() {
        if k >= last {
            break;
        }
        // The smallest magnitude in (from, hi] whose bucket is above k.
        let (mut a, mut b) = (from, hi);
        while b - a > 1 {
            let mid = a + (b - a) / 2;
            if key_computed(mid) > k {
                b = mid;
            } else {
                a = mid;
            }
        }
        steps.push((b, key_computed(b)));
    }
    steps.into_boxed_slice()
}

/// Counts by bucket, held from the lowest bucket that holds a value to the highest.
#[derive(Debug, Clone, Default)]
struct Buckets {
    first: i32,
    counts: Vec<u64>,
}

impl Buckets {
    fn add(&mut self, k: i32, n: u64) {
        if self.counts.is_empty() {
            self.first = k;
        }
        if k < self.first {
            let more = (self.first - k) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, more));
            self.first = k;
        }
        let i = (k - self.first) as usize;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += n;
    }

    /// The buckets that hold values and their counts, from the lowest.
    fn iter(&self) -> impl DoubleEndedIterator<Item = (i32, u64)> + '_ {
        let first = self.first;
        self.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(move |(i, &c)| (first + i as i32, c))
    }
}

impl Default for Sample {
    fn default() -> Sample {
        Sample {
            count: 0,
            sum: 0,
            squares: 0,
            min: 0,
            max: 0,
            exact: Some(Vec::new()),
            positive: Default::default(),
            negative: Default::default(),
            zeros: 0,
            reservoir: None,
        }
    }
}

impl Sample {
    /// An empty sample.
    pub(crate) fn new() -> Sample {
        Sample::default()
    }

    /// An empty sample that also keeps a uniform random choice of up to [`RESERVOIR`] of its
    /// values when `keep` ([`Sample::chosen`]).
    pub(crate) fn with_reservoir(keep: bool) -> Sample {
        let reservoir = keep.then(|| Box::new(Reservoir { values: Vec::new(), seen: 0, state: 0x5eed }));
        Sample { reservoir, ..Sample::default() }
    }

    /// How many values it has.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// `other`'s values added, as if they had been added one by one (but for the reservoir,
    /// which keeps a uniform choice of each one's in proportion to their counts).
    pub(crate) fn merge(&mut self, other: &Sample) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            (self.min, self.max) = (other.min, other.max);
        } else {
            (self.min, self.max) = (self.min.min(other.min), self.max.max(other.max));
        }
        self.count += other.count;
        self.sum += other.sum;
        self.squares = self.squares.saturating_add(other.squares);
        match (&mut self.exact, &other.exact) {
            (Some(v), Some(w)) if v.len() + w.len() <= EXACT => v.extend_from_slice(w),
            _ => {
                self.spill();
                match &other.exact {
                    Some(w) => w.iter().for_each(|&x| self.bucket(x, 1)),
                    None => {
                        for (k, n) in other.positive.iter() {
                            self.positive.add(k, n);
                        }
                        for (k, n) in other.negative.iter() {
                            self.negative.add(k, n);
                        }
                        self.zeros += other.zeros;
                    }
                }
            }
        }
        if let (Some(r), Some(o)) = (&mut self.reservoir, &other.reservoir) {
            r.merge(o);
        }
    }

    /// Its values when there are at most [`RESERVOIR`], else a uniform random choice of that
    /// many; `None` for a sample made without a reservoir.
    pub(crate) fn chosen(&self) -> Option<&[i64]> {
        self.reservoir.as_deref().map(|r| r.values.as_slice())
    }

    /// Adds a value.
    pub(crate) fn add(&mut self, x: i64) {
        if let Some(r) = &mut self.reservoir {
            r.add(x);
        }
        if self.count == 0 {
            (self.min, self.max) = (x, x);
        } else {
            (self.min, self.max) = (self.min.min(x), self.max.max(x));
        }
        self.count += 1;
        self.sum += x as i128;
        self.squares = self.squares.saturating_add((x as i128) * (x as i128));
        match &mut self.exact {
            Some(v) if v.len() < EXACT => v.push(x),
            _ => {
                self.spill();
                self.bucket(x, 1);
            }
        }
    }

    /// The exact values, if still kept, moved into buckets.
    fn spill(&mut self) {
        if let Some(v) = self.exact.take() {
            for x in v {
                self.bucket(x, 1);
            }
        }
    }

    fn bucket(&mut self, x: i64, n: u64) {
        match x.cmp(&0) {
            std::cmp::Ordering::Equal => self.zeros += n,
            std::cmp::Ordering::Greater => self.positive.add(key(x.unsigned_abs()), n),
            std::cmp::Ordering::Less => self.negative.add(key(x.unsigned_abs()), n),
        }
    }

    /// The statistics, as [`Stats::of`] computes them from every value (percentiles within
    /// [`SKETCH_RELATIVE_ERROR`] once there were more than [`EXACT`] values).
    pub(crate) fn stats(&self) -> Stats {
        if let Some(v) = &self.exact {
            return Stats::of(&mut v.clone());
        }
        if self.count == 0 {
            return Stats::default();
        }
        let n = self.count;
        let mean = self.sum as f64 / n as f64;
        // n * sum of squares - sum^2, over n^2; in integers while they hold it.
        let var = match (self.squares.checked_mul(n as i128), self.sum.checked_mul(self.sum)) {
            (Some(a), Some(b)) if self.squares != i128::MAX => (a - b) as f64 / (n as f64 * n as f64),
            _ => self.squares as f64 / n as f64 - mean * mean,
        };
        let gamma = log_gamma().exp();
        let value = |k: i32| 2.0 * gamma.powi(k) / (gamma + 1.0);
        let rank = |pct: u64| {
            let r = (pct * n).div_ceil(100).clamp(1, n);
            let mut seen = 0;
            // Negative values, the largest magnitude first; zeros; positive values.
            for (k, c) in self.negative.iter().rev() {
                seen += c;
                if seen >= r {
                    return (-value(k)).round() as i64;
                }
            }
            seen += self.zeros;
            if seen >= r {
                return 0;
            }
            for (k, c) in self.positive.iter() {
                seen += c;
                if seen >= r {
                    return value(k).round() as i64;
                }
            }
            self.max
        };
        let clamp = |x: i64| x.clamp(self.min, self.max);
        Stats {
            count: n,
            mean,
            std: var.max(0.0).sqrt(),
            min: self.min,
            p50: clamp(rank(50)),
            p90: clamp(rank(90)),
            p99: clamp(rank(99)),
            max: self.max,
            sum: self.sum,
        }
    }
}

/// Latencies as totals keep them: every value (an analysis in memory), or a [`Sample`] (a
/// streamed analysis, slice by slice).
pub(crate) trait Latencies: Default {
    fn add(&mut self, x: i64);
    fn merge(&mut self, other: Self);
    fn into_stats(self) -> Stats;
}

impl Latencies for Vec<i64> {
    fn add(&mut self, x: i64) {
        self.push(x);
    }
    fn merge(&mut self, other: Self) {
        self.extend(other);
    }
    fn into_stats(mut self) -> Stats {
        Stats::of(&mut self)
    }
}

impl Latencies for Sample {
    fn add(&mut self, x: i64) {
        Sample::add(self, x);
    }
    fn merge(&mut self, other: Self) {
        Sample::merge(self, &other);
    }
    fn into_stats(self) -> Stats {
        Sample::stats(&self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The buckets found by the steps are those the logarithm gives: every magnitude up to a
    /// million, both sides of every step of every power of two, and the extremes.
    #[test]
    fn buckets_without_a_logarithm_equal_those_with_one() {
        for m in 1..1_000_000u64 {
            assert_eq!(key(m), key_computed(m), "{m}");
        }
        for (o, octave) in OCTAVES.iter().enumerate() {
            let steps = &octave.get_or_init(|| Octave::new(o)).steps;
            assert!(steps.len() > 1 || o < 1, "{o}");
            assert!(steps.len() <= 256, "{o}");
            for &(from, k) in steps.iter() {
                for m in [from.saturating_sub(2), from - 1, from, from + 1, from.saturating_add(2)] {
                    if m > 0 {
                        assert_eq!(key(m), key_computed(m), "{m}");
                    }
                }
                assert_eq!(key(from), k);
            }
        }
        for m in [u64::MAX, 1 << 63, i64::MAX as u64, 3, 2] {
            assert_eq!(key(m), key_computed(m), "{m}");
        }
    }

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

    /// The reservoir keeps every value up to its size, then a uniform choice: each tenth of
    /// the values holds about a tenth of those chosen; the same values, the same choice.
    #[test]
    fn a_reservoir_is_a_uniform_choice() {
        let fill = |n: i64| {
            let mut s = Sample::with_reservoir(true);
            (0..n).for_each(|x| s.add(x));
            s
        };
        assert_eq!(fill(500).chosen(), Some(&(0..500).collect::<Vec<i64>>()[..]));
        let (a, b) = (fill(200_000), fill(200_000));
        let chosen = a.chosen().unwrap();
        assert_eq!((chosen.len(), Some(chosen)), (RESERVOIR, b.chosen()));
        for tenth in 0..10 {
            let n = chosen.iter().filter(|&&x| x / 20_000 == tenth).count();
            assert!((900..1100).contains(&n), "tenth {tenth}: {n} of {RESERVOIR}");
        }
        assert_eq!(Sample::new().chosen(), None);
        // Two merged: the statistics of both, and a choice in proportion to their counts.
        let mut m = fill(150_000);
        let mut late = Sample::with_reservoir(true);
        (150_000..200_000).for_each(|x| late.add(x));
        m.merge(&late);
        let whole = fill(200_000);
        let (ms, ws) = (m.stats(), whole.stats());
        assert_eq!(
            (ms.count, ms.sum, ms.min, ms.max, ms.p50, ms.p99),
            (ws.count, ws.sum, ws.min, ws.max, ws.p50, ws.p99)
        );
        let chosen = m.chosen().unwrap();
        assert_eq!(chosen.len(), RESERVOIR);
        assert_eq!(chosen.iter().filter(|&&x| x >= 150_000).count(), RESERVOIR / 4);
        let mut small = fill(300);
        small.merge(&fill(200));
        assert_eq!(small.stats(), Stats::of(&mut (0..300).chain(0..200).collect::<Vec<i64>>()));
        assert_eq!(small.chosen().map(<[i64]>::len), Some(500));
    }

    #[test]
    fn a_sample_is_exact_but_for_percentiles_within_its_accuracy() {
        // Exact while small: equal to Stats::of.
        let v: Vec<i64> = (0..900).map(|i| (i * 7919 % 1000) - 100).collect();
        let mut a = Sample::new();
        v.iter().for_each(|&x| a.add(x));
        assert_eq!(a.stats(), Stats::of(&mut v.clone()));
        // Large, with negative values and zeros: exact count, sum, min, max and mean; the
        // percentiles within the accuracy; the deviation up to rounding.
        let v: Vec<i64> = (0..200_000i64).map(|i| (i * 104_729 % 3_000_017) - 1000 * (i % 3)).collect();
        let mut whole = Sample::new();
        v.iter().for_each(|&x| whole.add(x));
        let exact = Stats::of(&mut v.clone());
        {
            let s = whole.stats();
            assert_eq!(
                (s.count, s.sum, s.min, s.max, s.mean),
                (exact.count, exact.sum, exact.min, exact.max, exact.mean)
            );
            assert!((s.std - exact.std).abs() <= 1e-9 * exact.std);
            for (x, e) in [(s.p50, exact.p50), (s.p90, exact.p90), (s.p99, exact.p99)] {
                assert!((x - e).abs() as f64 <= SKETCH_RELATIVE_ERROR * e.abs() as f64 + 1.0, "{x} vs {e}");
            }
        }
    }
}

//! Sim time: CARET's `ros2_caret:sim_time(stamp)` events (rostrace's `record --record-clock`,
//! CARET's clock_recorder) pair the system time of the event with the ROS time of `/clock`
//! (`stamp`). A least-squares line through them maps system time to sim time, as caret_analyze's
//! `ClockConverter` (`np.polyfit(system, sim, 1)`) does.

use crate::handler::{At, Context, Fields, Handler, Part, TraceInfo};
use rostrace_ctf::{Event, EventClass};
use serde::Serialize;

/// The handler: every `sim_time` sample, (system ns, sim ns), in time order.
#[derive(Debug, Clone, Default)]
pub struct SimTime {
    fields: Vec<Fields>,
    /// (system time of the event, its `stamp`), ns, in time order.
    pub samples: Vec<(i64, i64)>,
    /// The order of each sample's event (see [`Context::order`]).
    orders: Vec<u128>,
    /// The trace of each sample.
    traces: Vec<u32>,
    /// The time whose samples are kept, from (inclusive) to (exclusive): a slice's of a
    /// streamed analysis, which reads a margin around it (`None`: all).
    pub(crate) within: Option<(i64, i64)>,
}

impl SimTime {
    /// The handler of a streamed analysis's slice from `within.0` (inclusive) to `within.1`
    /// (exclusive), fed what the slice reads and keeping what is of its time.
    pub(crate) fn sliced(within: (i64, i64)) -> SimTime {
        SimTime { within: Some(within), ..Default::default() }
    }
}

impl Handler for SimTime {
    fn subscribe(&mut self, _trace: &TraceInfo<'_>, class: &EventClass) -> Option<u32> {
        if class.name != "ros2_caret:sim_time" {
            return None;
        }
        let f = Fields::of(class, &["stamp"]);
        if !f.all() {
            return None;
        }
        self.fields.push(f);
        Some(self.fields.len() as u32 - 1)
    }

    fn event(&mut self, token: u32, ev: &Event<'_>, at: &At, cx: &Context<'_>) {
        if self.within.is_some_and(|(a, b)| at.ts < a || b <= at.ts) {
            return;
        }
        if let Some(stamp) = self.fields[token as usize].int(ev, 0) {
            self.samples.push((at.ts, stamp));
            self.orders.push(cx.order());
            self.traces.push(at.trace);
        }
    }

    fn split(&self) -> Option<Box<dyn Handler + Send>> {
        // Its tables, without results.
        Some(Box::new(SimTime { fields: self.fields.clone(), within: self.within, ..Default::default() }))
    }

    fn merge(&mut self, part: Box<dyn std::any::Any>, _map: &Part<'_>) {
        if let Ok(p) = part.downcast::<Self>() {
            let mine: Vec<_> =
                std::mem::take(&mut self.samples).into_iter().zip(std::mem::take(&mut self.traces)).collect();
            let theirs: Vec<_> = p.samples.into_iter().zip(p.traces).collect();
            let (both, orders) =
                crate::handler::merge_in_order((mine, std::mem::take(&mut self.orders)), (theirs, p.orders));
            (self.samples, self.traces) = both.into_iter().unzip();
            self.orders = orders;
        }
    }

    fn shifts(&self) -> bool {
        true
    }

    /// The samples' system times moved (their stamps are ROS times), and put in time order
    /// again, as a pass on the aligned clocks meets them.
    fn shift(&mut self, by: &crate::ClockShift) {
        for (s, &t) in self.samples.iter_mut().zip(&self.traces) {
            s.0 = by.time(t, s.0);
        }
        // (Stable: samples of one time keep their order.)
        let mut order: Vec<usize> = (0..self.samples.len()).collect();
        order.sort_by_key(|&i| self.samples[i].0);
        self.samples = order.iter().map(|&i| self.samples[i]).collect();
        self.traces = order.iter().map(|&i| self.traces[i]).collect();
        self.orders = order.iter().filter_map(|&i| self.orders.get(i).copied()).collect();
    }
}

/// A linear map from system time to sim time: `sim = slope × system + intercept`, kept as a
/// reference point (the samples' means) so that converting a time since the epoch loses no
/// precision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SimClock {
    /// Sim seconds per system second (1: real time; 10: ten times faster).
    pub slope: f64,
    /// `sim = slope × system + intercept`, in ns (as caret_analyze's `ClockConverter`; large,
    /// hence rounded: convert with [`SimClock::to_sim`]).
    pub intercept_ns: f64,
    /// The reference point: the mean system time of the samples (ns since the epoch)...
    pub system_ref_ns: i64,
    /// ...and the sim time there (ns).
    pub sim_ref_ns: i64,
}

impl SimClock {
    /// The least-squares line through `samples` (system ns, sim ns); `None` with fewer than two
    /// samples or when all are at one system time.
    pub fn fit(samples: &[(i64, i64)]) -> Option<SimClock> {
        if samples.len() < 2 {
            return None;
        }
        let n = samples.len() as f64;
        // Centered on the first sample, in exact integers, then the means.
        let (x0, y0) = samples[0];
        let mx = samples.iter().map(|s| (s.0 - x0) as f64).sum::<f64>() / n;
        let my = samples.iter().map(|s| (s.1 - y0) as f64).sum::<f64>() / n;
        let (mut sxx, mut sxy) = (0.0f64, 0.0f64);
        for &(x, y) in samples {
            let dx = (x - x0) as f64 - mx;
            let dy = (y - y0) as f64 - my;
            sxx += dx * dx;
            sxy += dx * dy;
        }
        if sxx <= 0.0 {
            return None;
        }
        let slope = sxy / sxx;
        let system_ref_ns = x0 + mx.round() as i64;
        let sim_ref_ns = y0 + (my + slope * (mx.round() - mx)).round() as i64;
        let intercept_ns = sim_ref_ns as f64 - slope * system_ref_ns as f64;
        Some(SimClock { slope, intercept_ns, system_ref_ns, sim_ref_ns })
    }

    /// The sim time (ns) at system time `system_ns` (ns since the epoch).
    pub fn to_sim(&self, system_ns: i64) -> i64 {
        self.sim_ref_ns + (self.slope * (system_ns - self.system_ref_ns) as f64).round() as i64
    }
}

/// What the report says of sim time.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SimTimeReport {
    /// `sim_time` samples.
    pub samples: u64,
    /// The fit (at least two samples).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<SimClock>,
    /// Root mean square of the residuals (sim ns).
    pub residual_rms_ns: f64,
    /// Largest residual, absolute (sim ns).
    pub residual_max_ns: f64,
    /// The first and last samples: (system ns since the epoch, sim ns).
    pub first: (i64, i64),
    /// See `first`.
    pub last: (i64, i64),
    /// Samples where sim time went backwards (a restarted simulation or bag).
    pub backwards: u64,
}

impl SimTimeReport {
    /// The report of `samples` (in time order); `None` when there are none.
    pub fn of(samples: &[(i64, i64)]) -> Option<SimTimeReport> {
        let (&first, &last) = (samples.first()?, samples.last()?);
        let fit = SimClock::fit(samples);
        let (mut sq, mut max) = (0.0f64, 0.0f64);
        if let Some(f) = &fit {
            for &(x, y) in samples {
                let r = (y - f.to_sim(x)) as f64;
                sq += r * r;
                max = max.max(r.abs());
            }
        }
        Some(SimTimeReport {
            samples: samples.len() as u64,
            fit,
            residual_rms_ns: if fit.is_some() { (sq / samples.len() as f64).sqrt() } else { 0.0 },
            residual_max_ns: max,
            first,
            last,
            backwards: samples.windows(2).filter(|w| w[1].1 < w[0].1).count() as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_a_line_exactly() {
        let t0 = 1_764_000_000_000_000_000i64;
        let samples: Vec<(i64, i64)> = (0..10)
            .map(|k| (t0 + k * 1_000_000_000 + k * 37, 1_000_000_000_000 + 10 * (k * 1_000_000_000 + k * 37)))
            .collect();
        let f = SimClock::fit(&samples).unwrap();
        assert!((f.slope - 10.0).abs() < 1e-9, "{f:?}");
        for &(x, y) in &samples {
            assert!((f.to_sim(x) - y).abs() <= 1, "{} vs {y}", f.to_sim(x));
        }
        let r = SimTimeReport::of(&samples).unwrap();
        assert!(r.residual_max_ns <= 1.0 && r.samples == 10 && r.backwards == 0, "{r:?}");
    }

    #[test]
    fn least_squares_as_polyfit() {
        // np.polyfit([0, 1, 2, 3], [1, 3, 2, 5], 1) = [1.1, 1.1], in seconds.
        let g = 1_000_000_000;
        let s = [(0, g), (g, 3 * g), (2 * g, 2 * g), (3 * g, 5 * g)];
        let f = SimClock::fit(&s).unwrap();
        assert!((f.slope - 1.1).abs() < 1e-12 && (f.intercept_ns - 1.1e9).abs() <= 1.0, "{f:?}");
        assert!((f.to_sim(10 * g) - 12_100_000_000).abs() <= 1, "{}", f.to_sim(10 * g));
    }

    #[test]
    fn needs_two_samples() {
        assert!(SimClock::fit(&[]).is_none());
        assert!(SimClock::fit(&[(5, 6)]).is_none());
        assert!(SimClock::fit(&[(5, 6), (5, 7)]).is_none());
        let r = SimTimeReport::of(&[(5, 6)]).unwrap();
        assert!(r.fit.is_none() && r.samples == 1);
    }
}

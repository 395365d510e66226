//! Times moved to other clocks after the pass. An analysis of several hosts reads their
//! recordings once, on the clocks they recorded, matches the messages, estimates the hosts'
//! clocks from them ([`crate::hosts`]) and then moves what the pass made (the model, the linked
//! tables, the handlers' results: [`crate::Handler::shift`]) to the aligned clocks.

use rostrace_ctf::ClockCorrection;

/// How each trace's times move to the aligned clocks: a time recorded by a trace, as a reader
/// of its corrected clock reads it ([`rostrace_ctf::TraceSet::correct_clocks`]).
#[derive(Debug, Clone, Default)]
pub struct ClockShift {
    /// By trace index (the model's keys' first element); `None`: not moved.
    traces: Vec<Option<ClockCorrection>>,
}

impl ClockShift {
    /// The corrections of the traces, by trace index.
    pub(crate) fn new(traces: Vec<Option<ClockCorrection>>) -> ClockShift {
        ClockShift { traces }
    }

    /// Whether no trace moves.
    pub fn is_empty(&self) -> bool {
        self.traces.iter().all(Option::is_none)
    }

    /// Whether trace `trace`'s times move.
    #[inline]
    pub fn moves(&self, trace: u32) -> bool {
        matches!(self.traces.get(trace as usize), Some(Some(_)))
    }

    /// The aligned time of `ns`, a time trace `trace` recorded.
    #[inline]
    pub fn time(&self, trace: u32, ns: i64) -> i64 {
        match self.traces.get(trace as usize) {
            Some(Some(c)) => c.time(ns),
            _ => ns,
        }
    }

    /// The duration on the aligned clock of `d`, a duration trace `trace` recorded: changed
    /// only by a drift corrected.
    #[inline]
    pub fn duration(&self, trace: u32, d: i64) -> i64 {
        match self.traces.get(trace as usize) {
            Some(Some(c)) => c.duration(d),
            _ => d,
        }
    }
}

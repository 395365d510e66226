//! Executor phases per thread, from `rclcpp_executor_get_next_ready`, `_wait_for_work` and
//! `_execute`: a handler of its own.

use crate::collections::HashMap;
use crate::events::Kind;
use crate::handler::{At, Context, Handler, Part, TraceInfo};
use rostrace_ctf::{Event, EventClass};

/// Time a thread's executor spent in each phase.
#[derive(Debug, Clone, Default)]
pub struct ExecutorPhases {
    /// In `get_next_ready` (ns).
    pub get_next_ns: i64,
    /// In `wait_for_work` (ns).
    pub wait_ns: i64,
    /// In `execute` (ns).
    pub execute_ns: i64,
    /// `execute` events.
    pub executions: u64,
    /// Current phase (0 none, 1 get next, 2 wait, 3 execute) and since when.
    current: (u8, i64),
    /// The time of the thread's first executor event.
    first: Option<i64>,
}

impl ExecutorPhases {
    /// The phases of `next`, the thread's events that follow these, added: the phase these
    /// end in lasts until `next`'s first event.
    pub(crate) fn then(&mut self, next: &ExecutorPhases) {
        if let Some(first) = next.first {
            self.close(first);
            self.first = self.first.or(Some(first));
            self.current = next.current;
        }
        self.get_next_ns += next.get_next_ns;
        self.wait_ns += next.wait_ns;
        self.execute_ns += next.execute_ns;
        self.executions += next.executions;
    }

    /// Ends the current phase at `ts`.
    fn close(&mut self, ts: i64) {
        let d = ts - self.current.1;
        match self.current.0 {
            1 => self.get_next_ns += d,
            2 => self.wait_ns += d,
            3 => self.execute_ns += d,
            _ => {}
        }
    }
}

/// The phases of every executor thread, by (trace, vpid, vtid). A phase lasts from its event to
/// the thread's next executor event.
#[derive(Debug, Clone, Default)]
pub struct ExecutorHandler {
    /// Phases per thread.
    pub threads: HashMap<(u32, i64, i64), ExecutorPhases>,
    /// A slice of a streamed analysis: only its own time, from (inclusive) to (exclusive),
    /// counts; each thread's phases are then added to those of the slices before
    /// ([`ExecutorPhases::then`]).
    pub(crate) within: Option<(i64, i64)>,
}

impl Handler for ExecutorHandler {
    fn subscribe(&mut self, _trace: &TraceInfo<'_>, class: &EventClass) -> Option<u32> {
        match Kind::of(&class.name)? {
            Kind::ExecutorGetNextReady => Some(1),
            Kind::ExecutorWaitForWork => Some(2),
            Kind::ExecutorExecute => Some(3),
            _ => None,
        }
    }

    fn event(&mut self, phase: u32, _ev: &Event<'_>, at: &At, _cx: &Context<'_>) {
        if self.within.is_some_and(|(from, to)| at.ts < from || at.ts >= to) {
            return;
        }
        let ph = self.threads.entry((at.trace, at.vpid, at.vtid)).or_default();
        ph.close(at.ts);
        ph.first = ph.first.or(Some(at.ts));
        if phase == 3 {
            ph.executions += 1;
        }
        ph.current = (phase as u8, at.ts);
    }

    fn split(&self) -> Option<Box<dyn Handler + Send>> {
        Some(Box::new(ExecutorHandler { within: self.within, ..ExecutorHandler::default() }))
    }

    fn merge(&mut self, part: Box<dyn std::any::Any>, _map: &Part<'_>) {
        if let Ok(p) = part.downcast::<Self>() {
            self.threads.extend(p.threads);
        }
    }

    fn shifts(&self) -> bool {
        true
    }

    fn shift(&mut self, by: &crate::ClockShift) {
        for (k, p) in &mut self.threads {
            for d in [&mut p.get_next_ns, &mut p.wait_ns, &mut p.execute_ns] {
                *d = by.duration(k.0, *d);
            }
        }
    }
}

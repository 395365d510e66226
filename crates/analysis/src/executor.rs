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
}

/// The phases of every executor thread, by (trace, vpid, vtid). A phase lasts from its event to
/// the thread's next executor event.
#[derive(Debug, Clone, Default)]
pub struct ExecutorHandler {
    /// Phases per thread.
    pub threads: HashMap<(u32, i64, i64), ExecutorPhases>,
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
        let ph = self.threads.entry((at.trace, at.vpid, at.vtid)).or_default();
        let d = at.ts - ph.current.1;
        match ph.current.0 {
            1 => ph.get_next_ns += d,
            2 => ph.wait_ns += d,
            3 => ph.execute_ns += d,
            _ => {}
        }
        if phase == 3 {
            ph.executions += 1;
        }
        ph.current = (phase as u8, at.ts);
    }

    fn split(&self) -> Option<Box<dyn Handler + Send>> {
        Some(Box::new(ExecutorHandler::default()))
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

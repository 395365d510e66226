//! The system analyses whose state lasts as long as the recording (a thread on a CPU, an open
//! call, a live allocation, the run a thread is in), in a streamed analysis: kept from one slice
//! to the next and fed, in each slice's pass, the events of the slice's own time only (not the
//! margins it reads around it), so that they see every event once and in order, as in one pass
//! over the whole recording. The slices are then read one after another.

use super::cpu_time::CpuTime;
use super::memory::Memory;
use super::profile::Profile;
use super::scheduling::Scheduling;
use crate::collections::HashMap;
use crate::handler::{At, Context, Handler, Handlers, TraceInfo};
use crate::tables::Collected;
use rostrace_ctf::{Event, EventClass};

/// The handlers, subscribed once and fed the events of one slice's time after another's.
#[derive(Default)]
pub(crate) struct Carried {
    /// CPU time, scheduling, memory and the function profile.
    pub(crate) handlers: Handlers,
    /// Per token: the handlers that want the class, with their tokens.
    routes: Vec<Vec<(usize, u32)>>,
    /// The token of each (trace, class index, class name) subscribed to (each slice's pass
    /// subscribes again; the handlers only the first time).
    tokens: HashMap<(u32, usize, String), Option<u32>>,
    /// The slice being read: from (inclusive) to (exclusive).
    pub(crate) within: (i64, i64),
}

impl Carried {
    /// The handlers of a streamed `analyze` that carry state.
    pub(crate) fn standard() -> Carried {
        let mut handlers = Handlers::default();
        handlers.add(CpuTime::default());
        handlers.add(Scheduling::default());
        handlers.add(Memory::default());
        handlers.add(Profile::default());
        Carried { handlers, ..Default::default() }
    }

    /// Whether any of them subscribed to a class (the recording has their events).
    pub(crate) fn subscribed(&self) -> bool {
        !self.routes.is_empty()
    }

    /// After the last slice: what the handlers do at the end of a pass.
    pub(crate) fn finish(&mut self) {
        let c = Collected::default();
        let cx = Context::new(&c, 0);
        for h in &mut self.handlers.0 {
            h.finish(&cx);
        }
    }
}

impl Handler for Carried {
    fn subscribe(&mut self, trace: &TraceInfo<'_>, class: &EventClass) -> Option<u32> {
        let key = (trace.index, class.index, class.name.clone());
        if let Some(&token) = self.tokens.get(&key) {
            return token;
        }
        let route: Vec<(usize, u32)> = self
            .handlers
            .0
            .iter_mut()
            .enumerate()
            .filter_map(|(i, h)| h.subscribe(trace, class).map(|t| (i, t)))
            .collect();
        let token = (!route.is_empty()).then(|| {
            self.routes.push(route);
            self.routes.len() as u32 - 1
        });
        self.tokens.insert(key, token);
        token
    }

    fn event(&mut self, token: u32, ev: &Event<'_>, at: &At, cx: &Context<'_>) {
        let (from, to) = self.within;
        if at.ts < from || to <= at.ts {
            return;
        }
        for &(h, t) in &self.routes[token as usize] {
            self.handlers.0[h].event(t, ev, at, cx);
        }
    }
}

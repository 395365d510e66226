//! Message age: how old a message is when the callback that takes it starts, from CARET's
//! `dispatch_subscription_callback` (and `dispatch_intra_process_subscription_callback`), which
//! record the message's `message_timestamp` (its header stamp, as the publisher set it) just
//! before the callback runs on the same thread: age = `callback_start` time − that stamp.
//! Messages without a header stamp (`message_timestamp` 0) have no age.

use crate::collections::HashMap;
use crate::handler::{At, Context, Fields, Handler, Part, TraceInfo};
use rostrace_ctf::{Event, EventClass};

const DISPATCH: u8 = 0;
const START: u8 = 1;

/// The handler.
#[derive(Debug, Clone, Default)]
pub struct MessageAge {
    fields: Vec<Fields>,
    kinds: Vec<u8>,
    /// Per thread: the callback and stamp of the last dispatch not yet started.
    pending: HashMap<(u32, i64, i64), (u64, i64)>,
    /// Ages (ns) per callback (trace, vpid, callback address).
    pub ages: HashMap<(u32, i64, u64), Vec<i64>>,
    /// Dispatch events seen (with or without a stamp).
    pub dispatches: u64,
    /// The time whose callback starts are counted, from (inclusive) to (exclusive): a slice's
    /// of a streamed analysis, which reads a margin around it (`None`: all).
    pub(crate) within: Option<(i64, i64)>,
}

impl MessageAge {
    /// The handler of a streamed analysis's slice from `within.0` (inclusive) to `within.1`
    /// (exclusive), fed what the slice reads and keeping what is of its time.
    pub(crate) fn sliced(within: (i64, i64)) -> MessageAge {
        MessageAge { within: Some(within), ..Default::default() }
    }
}

impl Handler for MessageAge {
    fn subscribe(&mut self, trace: &TraceInfo<'_>, class: &EventClass) -> Option<u32> {
        use crate::events::Kind;
        let (kind, f) = match Kind::of(&class.name)? {
            Kind::DispatchSubscription | Kind::DispatchIntra => {
                let f = Fields::of(class, &["callback", "message_timestamp"]);
                if !f.all() {
                    return None;
                }
                (DISPATCH, f)
            }
            // Callback starts matter only in traces with stamped dispatches.
            Kind::CallbackStart
                if trace.schema.event_classes().any(|c| {
                    matches!(Kind::of(&c.name), Some(Kind::DispatchSubscription | Kind::DispatchIntra))
                        && c.field_index("message_timestamp").is_some()
                }) =>
            {
                (START, Fields::of(class, &["callback"]))
            }
            _ => return None,
        };
        self.fields.push(f);
        self.kinds.push(kind);
        Some(self.fields.len() as u32 - 1)
    }

    fn event(&mut self, token: u32, ev: &Event<'_>, at: &At, _cx: &Context<'_>) {
        let f = &self.fields[token as usize];
        let thread = (at.trace, at.vpid, at.vtid);
        let Some(callback) = f.uint(ev, 0) else { return };
        if self.kinds[token as usize] == DISPATCH {
            self.dispatches += 1;
            match f.int(ev, 1) {
                Some(stamp) if stamp > 0 => {
                    self.pending.insert(thread, (callback, stamp));
                }
                _ => {
                    self.pending.remove(&thread);
                }
            }
        } else if let Some((cb, stamp)) = self.pending.remove(&thread) {
            if cb == callback && self.within.is_none_or(|(a, b)| a <= at.ts && at.ts < b) {
                self.ages.entry((at.trace, at.vpid, callback)).or_default().push(at.ts - stamp);
            }
        }
    }

    fn split(&self) -> Option<Box<dyn Handler + Send>> {
        // Its tables, without results.
        Some(Box::new(MessageAge {
            fields: self.fields.clone(),
            kinds: self.kinds.clone(),
            within: self.within,
            ..Default::default()
        }))
    }

    fn merge(&mut self, part: Box<dyn std::any::Any>, _map: &Part<'_>) {
        if let Ok(p) = part.downcast::<Self>() {
            self.ages.extend(p.ages);
            self.pending.extend(p.pending);
            self.dispatches += p.dispatches;
        }
    }
}

//! Callback runs: `callback_start` opens a run on its thread, `callback_end` closes the
//! innermost open run of the same callback (runs nest: a callback may call another's
//! executor). What each thread runs now is in [`Collected::running`], for the handlers after it.
//! A run that ends on another thread than it started on (an rclpy coroutine callback resumed by
//! another thread of a MultiThreadedExecutor) is closed there: the oldest open run of the same
//! callback in the process.

use crate::collections::HashMap;
use crate::events::{ClassInfo, Kind, F};
use crate::handler::At;
use crate::model::Key;
use crate::tables::{Collected, Run};
use rostrace_ctf::Event;

/// The runs builder.
#[derive(Debug, Default)]
pub(crate) struct Callbacks {
    /// Each callback handle's index in [`Collected::slots`].
    slot_of: HashMap<Key, u32>,
}

impl Callbacks {
    /// Whether it handles events of `kind`.
    pub(crate) fn wants(kind: Kind) -> bool {
        matches!(kind, Kind::CallbackStart | Kind::CallbackEnd)
    }

    pub(crate) fn event(&mut self, c: &mut Collected, info: &ClassInfo, ev: &Event, at: &At) {
        let (t, vpid, vtid, ts) = (at.trace, at.vpid, at.vtid, at.ts);
        let cb = info.u(ev, F::Callback);
        if info.kind == Kind::CallbackStart {
            let intra = info.u(ev, F::IsIntraProcess) != 0;
            let n = c.slots.len() as u32;
            let slot = *self.slot_of.entry((t, vpid, cb)).or_insert(n);
            if slot == n {
                c.slots.push((t, vpid, cb));
            }
            let id = c.push_run(Run::new(slot, vtid as i32, intra, ts));
            c.open.entry((t, vpid, vtid)).or_default().push((cb, id));
        } else {
            let open = c.open.entry((t, vpid, vtid)).or_default();
            match open.iter().rposition(|(a, _)| *a == cb) {
                Some(k) => {
                    let (_, id) = open.remove(k);
                    c.runs[id as usize].end = ts;
                }
                None => match close_elsewhere(c, t, vpid, cb) {
                    Some(id) => c.runs[id as usize].end = ts,
                    None if c.counted.is_none_or(|(a, b)| a <= ts && ts < b) => {
                        *c.unmatched_ends.entry((t, vpid)).or_default() += 1;
                        if c.counted.is_some() {
                            c.ends_alone.push((t, vpid, vtid, cb, ts));
                        }
                    }
                    None => {}
                },
            }
        }
    }
}

/// Removes the oldest open run of callback `cb` on any thread of process (`t`, `vpid`), for a
/// `callback_end` that found none on its own thread; its id.
fn close_elsewhere(c: &mut Collected, t: u32, vpid: i64, cb: u64) -> Option<u32> {
    let (thread, k) = c
        .open
        .iter()
        .filter(|((tt, p, _), _)| *tt == t && *p == vpid)
        .filter_map(|(key, v)| v.iter().position(|(a, _)| *a == cb).map(|k| (v[k].1, *key, k)))
        .min()
        .map(|(_, key, k)| (key, k))?;
    Some(c.open.get_mut(&thread)?.remove(k).1)
}

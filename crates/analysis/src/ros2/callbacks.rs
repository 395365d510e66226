//! Callback runs: `callback_start` opens a run on its thread, `callback_end` closes the
//! innermost open run of the same callback (runs nest: a callback may call another's
//! executor). What each thread runs now is in [`Collected::running`], for the handlers after it.

use crate::events::{ClassInfo, Kind, F};
use crate::handler::At;
use crate::hash::HashMap;
use crate::model::Key;
use crate::tables::{Collected, Run};
use ctf::Event;

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
                None => *c.unmatched_ends.entry((t, vpid)).or_default() += 1,
            }
        }
    }
}

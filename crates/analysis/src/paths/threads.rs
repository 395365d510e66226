//! The callback runs of an analysis per thread, for what happened on a thread around a time:
//! the run a publication or a request was made in, what followed a service response.

use crate::collections::HashMap;
use crate::link::{LinkedRun, View};
use crate::model::{Key, Model};

/// The callback runs of an analysis per thread, in time order.
pub(crate) struct RunsOnThreads {
    on: HashMap<(u32, i64, i64), Vec<u32>>,
}

impl RunsOnThreads {
    /// The runs of `a`.
    pub(crate) fn new(a: &View<'_>) -> RunsOnThreads {
        // Each callback handle's threads (a few) with their lists, so that a run finds its list
        // without hashing.
        let mut threads_of: Vec<Vec<(i32, u32)>> = vec![Vec::new(); a.slots.len()];
        let mut lists: Vec<Vec<u32>> = Vec::new();
        let mut list_of: HashMap<(u32, i64, i64), u32> = HashMap::default();
        for (i, LinkedRun { run: r, .. }) in a.runs.iter().enumerate() {
            let Some(of_slot) = threads_of.get_mut(r.slot()) else { continue };
            let l = match of_slot.iter().find(|x| x.0 == r.vtid) {
                Some(x) => x.1,
                None => {
                    let k = a.slots[r.slot()];
                    let l = *list_of.entry((k.0, k.1, r.vtid as i64)).or_insert_with(|| {
                        lists.push(Vec::new());
                        lists.len() as u32 - 1
                    });
                    of_slot.push((r.vtid, l));
                    l
                }
            };
            lists[l as usize].push(i as u32);
        }
        let mut on: HashMap<(u32, i64, i64), Vec<u32>> = HashMap::default();
        for (k, l) in list_of {
            on.insert(k, std::mem::take(&mut lists[l as usize]));
        }
        // The pass records runs in time order: each list, in index order, is then in time order
        // already.
        if !a.runs.windows(2).all(|w| w[0].run.start <= w[1].run.start) {
            let start = |i: &u32| (a.runs[*i as usize].run.start, *i);
            for v in on.values_mut() {
                v.sort_by_key(start);
            }
        }
        RunsOnThreads { on }
    }

    /// The runs of `thread` (trace, process, thread), in time order.
    pub(crate) fn of(&self, thread: (u32, i64, i64)) -> &[u32] {
        self.on.get(&thread).map_or(&[], |v| v.as_slice())
    }

    /// The last run of `thread` started at or before `at`, if any (it may have ended).
    pub(crate) fn latest(&self, a: &View<'_>, thread: (u32, i64, i64), at: i64) -> Option<u32> {
        let v = self.of(thread);
        let i = v.partition_point(|&r| a.runs[r as usize].run.start <= at);
        v.get(i.checked_sub(1)?).copied()
    }

    /// The run of `thread` running at `at` among `a`'s runs, if any.
    pub(crate) fn during(&self, a: &View<'_>, thread: (u32, i64, i64), at: i64) -> Option<u32> {
        let r = self.latest(a, thread, at)?;
        let run = &a.runs[r as usize].run;
        run.end().is_none_or(|e| at <= e).then_some(r)
    }
}

/// Each client of `m` (its id in the model's clients) by the key of its rmw handle, as the
/// service events name it.
pub(crate) fn clients_by_rmw(m: &Model) -> HashMap<Key, u32> {
    m.clients.items.iter().enumerate().map(|(i, c)| ((c.key.0, c.key.1, c.rmw), i as u32)).collect()
}

/// The responses of `calls` taken on each thread, in time order: (time, client), for the
/// clients of `client_of` ([`clients_by_rmw`]).
pub(crate) fn responses_by_thread(
    calls: &crate::ServiceHandler,
    client_of: &HashMap<Key, u32>,
) -> HashMap<(u32, i64, i64), Vec<(i64, u32)>> {
    let mut taken: HashMap<(u32, i64, i64), Vec<(i64, u32)>> = HashMap::default();
    for c in &calls.client_calls {
        if let (Some((t, _)), Some(&client)) = (c.response, client_of.get(&c.client)) {
            taken.entry((c.client.0, c.client.1, c.response_vtid)).or_default().push((t, client));
        }
    }
    for v in taken.values_mut() {
        v.sort_unstable();
    }
    taken
}

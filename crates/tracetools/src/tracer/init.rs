//! Initialization events kept for replay: a session started (or a snapshot taken) after a
//! process created its nodes, publishers, timers... still describes them. Each content is kept
//! once, within half of the memory budget; what is not kept is counted as discarded by the
//! replays that miss it.

use super::budget;
use crate::clock;
use std::sync::{LazyLock, Mutex};

/// An initialization event kept for replay.
#[derive(Clone)]
pub(super) struct InitEvent {
    pub(super) id: u16,
    pub(super) ts: u64,
    pub(super) vtid: i32,
    pub(super) payload: Vec<u8>,
    written: bool,
}

/// What a kept initialization event takes besides its fields: its entry in the store (and the
/// room the store keeps to grow), its index entry, the allocator's header.
const INIT_EVENT_COST: usize = 2 * std::mem::size_of::<InitEvent>() + 32 + 16;

/// The initialization events kept for replay, within half of the memory budget.
#[derive(Default)]
struct InitStore {
    events: Vec<InitEvent>,
    /// The event of each hash of (id, payload) kept, to compare with; `more`: further events of
    /// a hash (rare).
    index: std::collections::HashMap<u64, u32>,
    more: std::collections::HashMap<u64, Vec<u32>>,
    /// Bytes taken (see [`INIT_EVENT_COST`]).
    bytes: usize,
    /// Events not kept for want of room (repeats included), those of them not recorded either
    /// (missing from the next replay), how many of those a replay counted, the last one's time.
    dropped: u64,
    dropped_unwritten: u64,
    dropped_reported: u64,
    dropped_last: u64,
}

impl InitStore {
    /// Whether an event of this content is kept (`h`: its [`init_hash`]).
    fn contains(&self, h: u64, id: u16, payload: &[u8]) -> bool {
        let same = |i: &u32| self.events[*i as usize].id == id && self.events[*i as usize].payload == payload;
        self.index.get(&h).is_some_and(same) || self.more.get(&h).is_some_and(|v| v.iter().any(same))
    }

    fn insert(&mut self, h: u64, e: InitEvent) {
        let i = self.events.len() as u32;
        match self.index.entry(h) {
            std::collections::hash_map::Entry::Occupied(_) => self.more.entry(h).or_default().push(i),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(i);
            }
        }
        self.events.push(e);
    }
}

fn init_hash(id: u16, payload: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    id.hash(&mut h);
    payload.hash(&mut h);
    h.finish()
}

static INIT_STORE: LazyLock<Mutex<InitStore>> = LazyLock::new(|| Mutex::new(InitStore::default()));

fn store() -> std::sync::MutexGuard<'static, InitStore> {
    INIT_STORE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps an initialization event, with the payload `encode` writes, for replay (once per
/// content: the store stays small when a program initializes the same thing again and again),
/// within the memory budget. `stamp` is the event's [`clock::stamp`]; the store keeps its time
/// in ns. Returns the payload when `recording` (the event is recorded too, every call).
pub(super) fn keep(id: u16, stamp: u64, recording: bool, encode: impl FnOnce(&mut Vec<u8>)) -> Option<Vec<u8>> {
    let ts = if clock::stamps_are_tsc() { clock::monotonic() } else { stamp };
    let mut payload = Vec::new();
    encode(&mut payload);
    crate::filter::observe(id, &payload);
    let mut warn = false;
    {
        let mut store = store();
        let h = init_hash(id, &payload);
        if !store.contains(h, id, &payload) {
            let cost = payload.len() + INIT_EVENT_COST;
            if budget::rings().is_some_and(|r| r.take_for_store(store.bytes, cost)) {
                store.bytes += cost;
                let kept = if recording { payload.clone() } else { std::mem::take(&mut payload) };
                store.insert(h, InitEvent { id, ts, vtid: budget::tid(), payload: kept, written: recording });
            } else {
                // Not kept: missing from the replays after it, which count it as discarded.
                warn = store.dropped == 0;
                store.dropped += 1;
                store.dropped_unwritten += !recording as u64;
                store.dropped_last = store.dropped_last.max(ts);
            }
        }
    }
    if warn {
        eprintln!(
            "rostrace: the initialization events this process keeps for replay reached half of \
             ROSTRACE_MEMORY_BUDGET: later ones are not kept (a session started or a snapshot taken after \
             them counts them as discarded)"
        );
    }
    recording.then_some(payload)
}

/// Marks every kept event as not written: a snapshot carries them all.
pub(super) fn unwrite_all() {
    for e in store().events.iter_mut() {
        e.written = false;
    }
}

/// What a replay writes: the kept events not written yet, in time order (marked written now);
/// how many events not kept it counts as discarded (for a `snapshot`, all of them; else those
/// not recorded either, since the last replay); and the time of the last of those.
pub(super) fn take_unwritten(snapshot: bool) -> (Vec<u32>, u64, u64) {
    let mut store = store();
    let mut order: Vec<u32> = (0..store.events.len() as u32).filter(|i| !store.events[*i as usize].written).collect();
    for i in &order {
        store.events[*i as usize].written = true;
    }
    order.sort_by_key(|i| store.events[*i as usize].ts);
    let lost = if snapshot { store.dropped } else { store.dropped_unwritten - store.dropped_reported };
    if !snapshot {
        store.dropped_reported = store.dropped_unwritten;
    }
    (order, lost, store.dropped_last)
}

/// Copies of the kept events `part` (indices that [`take_unwritten`] gave).
pub(super) fn copies(part: &[u32]) -> Vec<InitEvent> {
    let store = store();
    part.iter().map(|i| store.events[*i as usize].clone()).collect()
}

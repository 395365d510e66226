//! One pass's state over the events it is given: all of them, or a part's.

use super::plan::Plan;
use crate::handler::{At, Context, Handler};
use crate::model::Process;
use crate::ros2::{Core, OBJECTS};
use crate::tables::{Collected, Orders};
use crate::window::Window;
use rostrace_ctf::{Event, TraceSet};

/// One pass's state over the events it is given: all of them, or a part's.
pub(super) struct Pass<'p> {
    pub(super) plan: &'p Plan,
    pub(super) window: Window,
    pub(super) c: Collected,
    /// A part of a split pass: the model's objects are stamped with their events' orders.
    pub(super) part: bool,
    pub(super) core: Core,
    pub(super) unused: Vec<Vec<u64>>,
    pub(super) ctx_cache: CtxCache,
    pub(super) n: u64,
    /// Events taken (see [`Pass::handle_item`]).
    pub(super) read: u64,
    pub(super) bounds: Option<(i64, i64)>,
    /// An event after the window's end was met in a slice's pass ([`Plan::slice`]): the pass
    /// is over.
    pub(super) past_end: bool,
    /// The initialization events of traces in parts seen so far (see [`replayed`]).
    inits: crate::collections::HashSet<(u32, u64)>,
    /// The process of the last event, and what its events added since ([`flush_process`]).
    proc_run: Option<ProcessRun>,
    /// The time of which what the events before it declared is still to be kept
    /// ([`Plan::seed_at`]).
    seed_due: Option<i64>,
}

/// What the events of one process, one after another, add to its counts: added to the model
/// when another process's event comes, and at the end. (A process's events come in runs: its
/// entry is looked up once a run, not once an event.)
#[derive(Default)]
struct ProcessRun {
    key: (u32, i64),
    events: u64,
    ros_events: u64,
    kinds: u64,
    /// Its name is known.
    named: bool,
}

/// The counts of `run` added to its process in `c`'s model; none left.
fn flush_process(run: &mut Option<ProcessRun>, c: &mut Collected) {
    if let Some(r) = run.take() {
        if let Some(p) = c.model.processes.get_mut(&r.key) {
            p.events += r.events;
            p.ros_events += r.ros_events;
            p.kinds |= r.kinds;
        }
    }
}

/// What a part of a split pass collected.
pub(super) struct PartOut {
    pub(super) c: Collected,
    pub(super) unused: Vec<Vec<u64>>,
    pub(super) n: u64,
}

impl<'p> Pass<'p> {
    pub(super) fn new(plan: &'p Plan, window: Window, part: bool) -> Pass<'p> {
        let seed = plan.seed.as_deref();
        let c = Collected {
            model: seed.map(|s| s.model.clone()).unwrap_or_default(),
            counted: plan.slice,
            runs: Vec::with_capacity(plan.room[0]),
            pubs: Vec::with_capacity(plan.room[1]),
            takes: Vec::with_capacity(plan.room[2]),
            orders: part.then(Orders::default),
            ranges: vec![(i64::MAX, i64::MIN); plan.identity.len()],
            ..Default::default()
        };
        Pass {
            plan,
            window,
            c,
            part,
            core: Core::default(),
            unused: plan.infos.iter().map(|v| vec![0; v.len()]).collect(),
            ctx_cache: CtxCache::default(),
            n: 0,
            read: 0,
            bounds: None,
            past_end: false,
            inits: seed.map(|s| s.inits.clone()).unwrap_or_default(),
            proc_run: None,
            seed_due: plan.seed_at,
        }
    }

    /// What the events so far declared kept, as of time `at` ([`Plan::seed_at`]).
    #[cold]
    fn keep_seed(&mut self, at: i64) {
        self.seed_due = None;
        flush_process(&mut self.proc_run, &mut self.c);
        let mut model = self.c.model.clone();
        for p in model.processes.values_mut() {
            (p.events, p.ros_events) = (0, 0);
        }
        for l in &mut model.lifecycles.items {
            l.transitions.clear();
        }
        self.c.seed = Some(crate::tables::Seed { at, model, inits: self.inits.clone() });
    }

    /// An item of the events: an event (handled) or an error (kept); whether the progress
    /// is due (every 65,536 events).
    #[inline]
    pub(super) fn handle_item<H: Handler + ?Sized>(
        &mut self,
        r: &rostrace_ctf::Result<rostrace_ctf::Event<'_>>,
        order: u128,
        ids_read: Option<(i64, i64)>,
        handlers: &mut [Box<H>],
    ) -> bool {
        // (By reference: an event taken out of the result by value is copied, with a call to
        // `memcpy` per event, on the thread the other waits for: docs/benchmarks.md, "Design
        // measurements".)
        match r {
            Ok(ev) => {
                self.read += 1;
                self.event(ev, order, ids_read, handlers);
                self.read.is_multiple_of(65536)
            }
            Err(e) => {
                self.c.errors.push(e.into());
                false
            }
        }
    }

    /// One event, of `order` (see [`Context::order`]), and its process and thread ids when
    /// they were read already.
    #[inline]
    pub(super) fn event<H: Handler + ?Sized>(
        &mut self,
        ev: &rostrace_ctf::Event<'_>,
        order: u128,
        ids_read: Option<(i64, i64)>,
        handlers: &mut [Box<H>],
    ) {
        let plan = self.plan;
        let ti = ev.trace_index();
        let ts = ev.timestamp().unwrap_or(0);
        if let Some(at) = self.seed_due.filter(|&at| ts >= at) {
            self.keep_seed(at);
        }
        let (vpid, vtid) = ids_read.unwrap_or_else(|| ids(ev, &mut self.ctx_cache));
        let t = plan.identity[ti];
        let ci = ev.class().index;
        let info = plan.infos[ti][ci].as_ref();
        if let (Some(begin), Some((i, _))) = (plan.declarations, info) {
            if i.kind.is_init() {
                self.c.declarations.note(ev, ts, begin, plan.slice);
            }
        }
        if plan.replayed[ti].get(ci) == Some(&true) && replayed(&mut self.inits, t, vtid, ev) {
            return;
        }
        let route = &plan.routes[ti][ci];
        let window = self.window;
        let (lo, hi) = *self.bounds.get_or_insert_with(|| window.resolve(ts));
        let inside = lo <= ts && ts <= hi;
        // What is counted: the window's events, or a slice's (whose window runs around it).
        let counted = match plan.slice {
            None => inside,
            Some(_) if ts > hi => {
                self.past_end = true;
                return;
            }
            Some((a, b)) => a <= ts && ts < b,
        };
        // The processes' events: all of them, or a slice's.
        let counts_process = plan.slice.is_none() || counted;
        let c = &mut self.c;
        c.order = order;
        if counted {
            self.n += 1;
        }
        if inside {
            if let Some(r) = c.ranges.get_mut(t as usize) {
                (r.0, r.1) = (r.0.min(ts), r.1.max(ts));
            }
        }
        {
            let key = (t, vpid);
            if self.proc_run.as_ref().map(|r| r.key) != Some(key) {
                flush_process(&mut self.proc_run, c);
                let proc = c.model.processes.entry(key).or_insert_with(|| Process {
                    trace: t,
                    vpid,
                    host: plan.hosts[ti].clone(),
                    distro_assumed: plan.distro_assumed[ti],
                    ..Default::default()
                });
                self.proc_run = Some(ProcessRun { key, named: !proc.procname.is_empty(), ..Default::default() });
            }
            let run = self.proc_run.as_mut().expect("set above");
            run.events += u64::from(counts_process);
            if !run.named {
                if let Some(p) = ev.context_field("procname").and_then(|v| v.as_str()) {
                    if let Some(proc) = c.model.processes.get_mut(&key) {
                        proc.procname = p.into_owned();
                        run.named = !proc.procname.is_empty();
                    }
                }
            }
            match info {
                Some((info, _)) => {
                    run.kinds |= info.kind.bit();
                    run.ros_events += u64::from(counts_process);
                }
                None if route.is_empty() => self.unused[ti][ci] += u64::from(counts_process),
                None => {}
            }
        }
        let at = At { trace: t, vpid, vtid, ts, cpu: ev.cpu_id() };
        self.core.before(c, &at);
        if let Some((info, core_route)) = info {
            if inside || info.kind.is_init() {
                if counted {
                    c.ros_events += 1;
                }
                self.core.event(*core_route, c, info, ev, &at);
                if self.part && core_route & OBJECTS != 0 {
                    c.model.stamp(order);
                }
            }
        }
        if inside && !route.is_empty() {
            let cx = Context::new(c, order);
            for &(hi, token) in route {
                handlers[hi].event(token, ev, &at, &cx);
            }
        }
    }

    /// The whole pass's results.
    pub(super) fn finish(mut self, set: &TraceSet) -> Collected {
        if let Some(at) = self.seed_due {
            self.keep_seed(at);
        }
        flush_process(&mut self.proc_run, &mut self.c);
        self.c.events = self.n;
        self.c.range = crate::tables::range_of(&self.c.ranges, |_, ts| ts);
        if !self.window.is_all() {
            self.c.window = self.bounds;
        }
        self.c.unused_events = unused_names(set, self.plan, &self.unused);
        self.c
    }

    pub(super) fn into_part(mut self) -> PartOut {
        flush_process(&mut self.proc_run, &mut self.c);
        PartOut { c: self.c, unused: self.unused, n: self.n }
    }
}

/// Events nobody uses, by name (kernel events named `kernel:<name>`), from counts per trace and
/// class: what the notes tell about.
pub(super) fn unused_names(set: &TraceSet, plan: &Plan, unused: &[Vec<u64>]) -> Vec<(String, u64)> {
    let mut names: std::collections::BTreeMap<String, u64> = Default::default();
    for (ti, counts) in unused.iter().enumerate() {
        for ec in set.traces[ti].schema.event_classes() {
            let k = counts[ec.index];
            if k > 0 {
                let name = if plan.kernel[ti] && !ec.name.contains(':') {
                    format!("kernel:{}", ec.name)
                } else {
                    ec.name.clone()
                };
                *names.entry(name).or_default() += k;
            }
        }
    }
    names.into_iter().collect()
}

/// Positions of `vpid` and `vtid` in the stream event contexts, found once per context type of
/// each trace.
pub(crate) struct CtxCache(rostrace_ctf::TracePositions<2>);

impl Default for CtxCache {
    fn default() -> Self {
        CtxCache(rostrace_ctf::TracePositions::new(["vpid", "vtid"]))
    }
}

pub(crate) fn ids(ev: &Event, cache: &mut CtxCache) -> (i64, i64) {
    let Some(ctx) = ev.stream_context() else {
        let vpid = ev.context_field("vpid").and_then(|v| v.as_i64()).unwrap_or(0);
        let vtid = ev.context_field("vtid").and_then(|v| v.as_i64()).unwrap_or(vpid);
        return (vpid, vtid);
    };
    ids_of(cache.0.u64s(ev.trace_index(), &ctx))
}

/// The process and thread ids from the stream context's `vpid` and `vtid`, as read (0 without
/// a process id; the process id without a thread id).
#[inline]
pub(crate) fn ids_of([vpid, vtid]: rostrace_ctf::Ints) -> (i64, i64) {
    let vpid = vpid.map_or(0, |v| v as i64);
    (vpid, vtid.map_or(vpid, |v| v as i64))
}

/// Whether `ev`, an initialization event of a trace in parts (`t`), is one seen already in
/// another part: each chunk of a rotated recording starts with its process's
/// initialization events again (the same thread, event and payload), and read together
/// they are counted once. (Their times may differ: the tracer keeps its own copy.)
fn replayed(inits: &mut crate::collections::HashSet<(u32, u64)>, t: u32, vtid: i64, ev: &Event<'_>) -> bool {
    use std::hash::{Hash as _, Hasher as _};
    let mut h = std::hash::DefaultHasher::new();
    (vtid, ev.name()).hash(&mut h);
    if let Some(p) = ev.payload() {
        for (_, v) in p.iter() {
            hash_value(&v, &mut h);
        }
    }
    !inits.insert((t, h.finish()))
}

/// Hashes a decoded value (strings by their bytes, compounds member by member).
fn hash_value(v: &rostrace_ctf::FieldValue<'_>, h: &mut impl std::hash::Hasher) {
    use rostrace_ctf::FieldValue as V;
    use std::hash::Hash as _;
    match v {
        V::U64(x) => (0u8, x).hash(h),
        V::I64(x) => (1u8, x).hash(h),
        V::Enum { value, .. } => (2u8, value).hash(h),
        V::F64(x) => (3u8, x.to_bits()).hash(h),
        V::Str(s) => (4u8, s).hash(h),
        V::Struct(s) => {
            5u8.hash(h);
            for (_, m) in s.iter() {
                hash_value(&m, h);
            }
        }
        V::Array(a) => {
            (6u8, a.len()).hash(h);
            for m in a.iter() {
                hash_value(&m, h);
            }
        }
    }
}

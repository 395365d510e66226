//! The one pass: every event of the trace set, in time order, to the ROS 2 model and instances
//! ([`crate::pass`]) and to every registered [`Handler`].

use crate::events::ClassInfo;
use crate::handler::{as_any, as_any_mut, At, Context, Handler, Part, TraceInfo};
use crate::hash::HashMap;
use crate::model::{Key, Model, Process};
use crate::pass::{ids, ids_of, Collected, CtxCache, Orders, Publication, Take, Window};
use crate::report::Analysis;
use crate::ros2::{Core, OBJECTS};
use ctf::TraceSet;
use std::any::Any;

/// Runs the pass with handlers.
///
/// [`Processor::standard`] holds the handlers behind `rostrace analyze`'s report (executor phases,
/// CPU time, scheduling, memory, function profile, message age); [`Processor::new`] none. Add your
/// own with [`Processor::add`], run with [`Processor::analyze`] (the report) or
/// [`Processor::collect`] (the ROS 2 tables only), then read each handler's results with
/// [`Processor::get`].
#[derive(Default)]
pub struct Processor {
    handlers: Vec<Box<dyn Handler>>,
    jobs: usize,
}

impl Processor {
    /// A processor with no handler but the ROS 2 pass.
    pub fn new() -> Processor {
        Processor::default()
    }

    /// A processor with the handlers of `rostrace analyze`.
    pub fn standard() -> Processor {
        let mut p = Processor::new();
        p.add(crate::executor::ExecutorHandler::default());
        p.add(crate::services::ServiceHandler::default());
        crate::system::add_standard(&mut p);
        p
    }

    /// Threads (0, the default: one per core; 1: the calling thread only): for a set of several
    /// traces, the pass shared out by trace (see [`Processor::collect`]), and
    /// [`Processor::analyze_with`]'s side work while the report is made. The pass over one
    /// trace (or a set that cannot be shared out) reads, decodes and merges the events on a
    /// second thread, which hands them over merged, in batches, while the calling thread
    /// handles them ([`TraceSet::with_events_piped`]); the handlers stay on one thread. The
    /// results are the same whatever the number.
    pub fn set_jobs(&mut self, jobs: usize) -> &mut Processor {
        self.jobs = jobs;
        self
    }

    /// Registers `handler`; it gets its events in the next run.
    pub fn add<H: Handler>(&mut self, handler: H) -> &mut Processor {
        self.handlers.push(Box::new(handler));
        self
    }

    /// The first registered handler of type `H`.
    pub fn get<H: Handler>(&self) -> Option<&H> {
        self.handlers.iter().find_map(|h| as_any(h.as_ref()).downcast_ref::<H>())
    }

    /// The first registered handler of type `H`, mutable (e.g. to take its tables).
    pub fn get_mut<H: Handler>(&mut self) -> Option<&mut H> {
        self.handlers.iter_mut().find_map(|h| as_any_mut(h.as_mut()).downcast_mut::<H>())
    }

    /// One pass over `set` (runtime events inside `window`), then the report of the ROS 2 model
    /// and of the standard handlers that are registered. `progress(done, total)` is called now
    /// and then with bytes read.
    pub fn analyze(&mut self, set: &TraceSet, window: Window, progress: impl FnMut(u64, u64)) -> Analysis {
        let c = self.collect(set, window, progress);
        crate::report::analyze(c, self)
    }

    /// [`Processor::analyze`], and `side(&analysis)` (say, a path search) on a thread of its own
    /// while the report is made (in the calling thread when [`Processor::set_jobs`] asked for one
    /// thread): `side` sees the model and the linked tables (runs, publications, takes, flows),
    /// not the report, which is still empty then.
    pub fn analyze_with<T: Send>(
        &mut self,
        set: &TraceSet,
        window: Window,
        progress: impl FnMut(u64, u64),
        side: impl FnOnce(&Analysis) -> T + Send,
    ) -> (Analysis, T) {
        let c = self.collect(set, window, progress);
        let (mut an, rest) = crate::report::link(c, ctf::threads(self.jobs));
        let this = &*self;
        let (report, t) = if ctf::threads(self.jobs) > 1 {
            std::thread::scope(|s| {
                let h = ctf::spawn_off(s, 1, || side(&an));
                ctf::let_started_move();
                let report = crate::report::report(&an, rest, this);
                (report, h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            })
        } else {
            let t = side(&an);
            (crate::report::report(&an, rest, this), t)
        };
        an.report = report;
        (an, t)
    }

    /// [`analyze`](Self::analyze) with the report's ten longest paths (those `keep` accepts, see
    /// [`crate::paths::longest_of`]), searched while the report is made.
    pub fn analyze_with_paths(
        &mut self,
        set: &TraceSet,
        window: Window,
        progress: impl FnMut(u64, u64),
        keep: impl Fn(&crate::paths::PathSpec) -> bool + Send,
    ) -> Analysis {
        let jobs = self.jobs;
        let (mut an, lp) = self.analyze_with(set, window, progress, |an| crate::paths::longest_of(an, keep, jobs));
        an.report.longest_paths = Some(lp);
        an
    }

    /// One pass over `set`: the ROS 2 model and instances, and every handler fed.
    ///
    /// With several traces and several threads ([`Processor::set_jobs`]), the traces are
    /// shared out over the threads, each reading and handling its traces' events in time
    /// order; the parts are then merged in the order of one pass over the set. The result is
    /// the same. The handlers run on one thread when a handler that subscribed to an event
    /// class does not split (see [`Handler::split`]), or when a kernel trace is in the set (its
    /// events meet the processes of the other traces of its host), or with one trace; the
    /// reading is then on a second thread, when there is one.
    pub fn collect(&mut self, set: &TraceSet, window: Window, mut progress: impl FnMut(u64, u64)) -> Collected {
        let plan = Plan::new(set, &mut self.handlers);
        if let Some(c) = self.collect_split(set, window, &plan, &mut progress) {
            return c;
        }
        let mut pass = Pass::new(&plan, window, false);
        // Reading, decoding and merging on a second thread, when there is one, which also
        // reads each event's process and thread ids (as `ids` reads them) while the event is
        // in its core's cache; the handlers here. (One thread has a loop of its own, where the
        // ids are read here: the same loop over both took it 2 ms longer.)
        let handlers = &mut self.handlers;
        if ctf::threads(self.jobs) < 2 {
            set.with_events_piped(self.jobs, |events| {
                loop {
                    // (The event is handled where it was returned, not moved out of it: see
                    // `take`.)
                    let due = match events.next_ordered() {
                        None => break,
                        Some((order, ref r)) => pass.take(r, order, None, handlers),
                    };
                    if due {
                        let (d, total) = events.progress();
                        progress(d, total);
                    }
                }
                pass.c.losses_from(events.losses());
            });
        } else {
            set.with_events_piped_ints(self.jobs, ["vpid", "vtid"], |events| {
                loop {
                    let due = match events.next_ints() {
                        None => break,
                        Some((order, ints, ref r)) => pass.take(r, order, ints.map(ids_of), handlers),
                    };
                    if due {
                        let (d, total) = events.progress();
                        progress(d, total);
                    }
                }
                pass.c.losses_from(events.losses());
            });
        }
        let mut c = pass.finish(set);
        c.model.resolve_owners();
        self.finish(c)
    }

    fn finish(&mut self, mut c: Collected) -> Collected {
        c.runs.shrink_to_fit();
        c.pubs.shrink_to_fit();
        c.takes.shrink_to_fit();
        let cx = Context::new(&c, 0);
        for h in &mut self.handlers {
            h.finish(&cx);
        }
        c
    }

    /// The pass shared out by trace on the threads asked for, when it can be.
    fn collect_split(
        &mut self,
        set: &TraceSet,
        window: Window,
        plan: &Plan,
        progress: &mut impl FnMut(u64, u64),
    ) -> Option<Collected> {
        let threads = ctf::threads(self.jobs);
        if threads < 2 || set.traces.len() < 2 || plan.kernel.contains(&true) {
            return None;
        }
        let split = |hs: &[Box<dyn Handler>]| -> Option<Vec<Box<dyn Handler + Send>>> {
            let mut v: Vec<Box<dyn Handler + Send>> = Vec::new();
            for (hi, h) in hs.iter().enumerate() {
                match h.split() {
                    Some(c) => v.push(c),
                    None if !plan.subscribed[hi] => v.push(Box::new(Idle)),
                    None => return None,
                }
            }
            Some(v)
        };
        // The traces shared out, the largest first, each to the part with the fewest bytes.
        let parts = threads.min(set.traces.len());
        let mut sizes: Vec<(u64, usize)> = set.traces.iter().enumerate().map(|(ti, t)| (t.bytes(), ti)).collect();
        sizes.sort_by_key(|&(n, ti)| (std::cmp::Reverse(n), ti));
        let mut load = vec![0u64; parts];
        let mut traces: Vec<Vec<usize>> = vec![Vec::new(); parts];
        for (n, ti) in sizes {
            let p = (0..parts).min_by_key(|&p| (load[p], p)).unwrap_or(0);
            load[p] += n;
            traces[p].push(ti);
        }
        let mut copies = Vec::new();
        for _ in 0..parts {
            copies.push(split(&self.handlers)?);
        }
        // The window starts from the first event of the set.
        let bounds = set.first_time().map(|t| window.resolve(t.unwrap_or(0)));
        let done: Vec<std::sync::atomic::AtomicU64> = (0..parts).map(|_| Default::default()).collect();
        let total = set.total_bytes();
        let run = |me: usize, handlers: &mut Vec<Box<dyn Handler + Send>>, progress: &mut dyn FnMut(u64, u64)| {
            let mut events = set.events_of(&traces[me]);
            let mut pass = Pass::new(plan, window, true);
            pass.bounds = bounds;
            let mut read = 0u64;
            loop {
                // (The event handled where it was returned, not moved out of it: see `take`.)
                match events.next_ordered() {
                    None => break,
                    Some((order, Ok(ref ev))) => pass.event(ev, order, None, handlers),
                    Some((_, Err(_))) => continue,
                }
                read += 1;
                if read.is_multiple_of(65536) {
                    done[me].store(events.progress().0, std::sync::atomic::Ordering::Relaxed);
                    progress(done.iter().map(|d| d.load(std::sync::atomic::Ordering::Relaxed)).sum(), total);
                }
            }
            (pass.into_part(), events.placed_errors(), events.placed_losses())
        };
        let mut rest = copies.split_off(1);
        let mut mine = copies.pop()?;
        let outs = std::thread::scope(|s| {
            let hs: Vec<_> = rest
                .iter_mut()
                .enumerate()
                .map(|(k, hs)| {
                    let run = &run;
                    ctf::spawn_off(s, k + 1, move || run(k + 1, hs, &mut |_, _| {}))
                })
                .collect();
            ctf::let_started_move();
            let mut outs = vec![run(0, &mut mine, progress)];
            for h in hs {
                outs.push(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
            }
            outs
        });
        // Errors and losses in the order of one pass: by their places in the merge of the set.
        let mut parts_out = Vec::new();
        let (mut errors, mut losses) = (Vec::new(), Vec::new());
        for (part, e, l) in outs {
            parts_out.push(part);
            errors.extend(e);
            losses.extend(l);
        }
        errors.sort_by_key(|e| e.0);
        losses.sort_by_key(|l| l.0);
        let (mut c, maps, unused) = merge(parts_out);
        c.errors = errors.into_iter().map(|e| e.1.to_string()).collect();
        for (_, l) in &losses {
            c.add_loss(l);
        }
        if !window.is_all() {
            c.window = bounds;
        }
        c.unused_events = unused_names(set, plan, &unused);
        c.model.resolve_owners();
        for (p, hs) in std::iter::once(mine).chain(rest).enumerate() {
            for (hi, h) in hs.into_iter().enumerate() {
                if plan.subscribed[hi] {
                    let part: Box<dyn Any> = h;
                    self.handlers[hi].merge(part, &Part { runs: &maps[p] });
                }
            }
        }
        Some(self.finish(c))
    }
}

/// A handler that has nothing to do (in a part, for a registered handler with no events).
struct Idle;

impl Handler for Idle {
    fn subscribe(&mut self, _trace: &TraceInfo<'_>, _class: &ctf::EventClass) -> Option<u32> {
        None
    }
    fn event(&mut self, _token: u32, _ev: &ctf::Event<'_>, _at: &At, _cx: &Context<'_>) {}
}

/// What the pass needs of each trace and class, resolved once.
struct Plan {
    hosts: Vec<String>,
    kernel: Vec<bool>,
    /// Per trace and class: what the ROS 2 core makes of it, and which core handlers want it.
    infos: Vec<Vec<Option<(ClassInfo, u8)>>>,
    /// Per trace and class: the handlers that want it, with their tokens.
    routes: Vec<Vec<Vec<(usize, u32)>>>,
    /// Per handler: whether it subscribed to a class of the set.
    subscribed: Vec<bool>,
}

impl Plan {
    fn new(set: &TraceSet, handlers: &mut [Box<dyn Handler>]) -> Plan {
        let hosts: Vec<String> = set.traces.iter().map(|t| t.hostname()).collect();
        let kernel: Vec<bool> = set
            .traces
            .iter()
            .map(|t| matches!(t.schema.env("domain"), Some(ctf::EnvValue::Str(d)) if d == "kernel"))
            .collect();
        let infos: Vec<Vec<Option<(ClassInfo, u8)>>> = set
            .traces
            .iter()
            .map(|t| {
                t.schema.per_class(|ec| {
                    ClassInfo::of(ec).map(|i| {
                        let r = Core::route(i.kind);
                        (i, r)
                    })
                })
            })
            .collect();
        let mut kernel_hosts: Vec<String> =
            hosts.iter().zip(&kernel).filter(|(_, k)| **k).map(|(h, _)| h.clone()).collect();
        kernel_hosts.dedup();
        let mut subscribed = vec![false; handlers.len()];
        let routes: Vec<Vec<Vec<(usize, u32)>>> = set
            .traces
            .iter()
            .enumerate()
            .map(|(ti, t)| {
                let info = TraceInfo {
                    index: ti as u32,
                    kernel: kernel[ti],
                    hostname: &hosts[ti],
                    schema: &t.schema,
                    kernel_hosts: &kernel_hosts,
                };
                t.schema.per_class(|ec| {
                    let hs = handlers.iter_mut().enumerate();
                    let route: Vec<(usize, u32)> =
                        hs.filter_map(|(hi, h)| h.subscribe(&info, ec).map(|token| (hi, token))).collect();
                    for &(hi, _) in &route {
                        subscribed[hi] = true;
                    }
                    route
                })
            })
            .collect();
        Plan { hosts, kernel, infos, routes, subscribed }
    }
}

/// One pass's state over the events it is given: all of them, or a part's.
struct Pass<'p> {
    plan: &'p Plan,
    window: Window,
    c: Collected,
    /// A part of a split pass: the model's objects are stamped with their events' orders.
    part: bool,
    core: Core,
    unused: Vec<Vec<u64>>,
    ctx_cache: CtxCache,
    n: u64,
    /// Events taken (see [`Pass::take`]).
    read: u64,
    bounds: Option<(i64, i64)>,
}

/// What a part of a split pass collected.
struct PartOut {
    c: Collected,
    unused: Vec<Vec<u64>>,
    n: u64,
}

impl<'p> Pass<'p> {
    fn new(plan: &'p Plan, window: Window, part: bool) -> Pass<'p> {
        let c = Collected { orders: part.then(Orders::default), ..Default::default() };
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
        }
    }

    /// An item of the events: an event (handled) or an error (kept); whether the progress
    /// is due (every 65,536 events).
    #[inline]
    fn take<H: Handler + ?Sized>(
        &mut self,
        r: &ctf::Result<ctf::Event<'_>>,
        order: u128,
        ids_read: Option<(i64, i64)>,
        handlers: &mut [Box<H>],
    ) -> bool {
        // (By reference: an event taken out of the result by value was copied, 152 bytes,
        // with a call to `memcpy` per event; with the copies in the loops that call this,
        // `analyze -j 2` on tum-autoware-carla took 6 ms longer, on the thread waited for.)
        match r {
            Ok(ev) => {
                self.read += 1;
                self.event(ev, order, ids_read, handlers);
                self.read.is_multiple_of(65536)
            }
            Err(e) => {
                self.c.errors.push(e.to_string());
                false
            }
        }
    }

    /// One event, of `order` (see [`Context::order`]), and its process and thread ids when
    /// they were read already.
    #[inline]
    fn event<H: Handler + ?Sized>(
        &mut self,
        ev: &ctf::Event<'_>,
        order: u128,
        ids_read: Option<(i64, i64)>,
        handlers: &mut [Box<H>],
    ) {
        let plan = self.plan;
        let ti = ev.trace_index();
        let ts = ev.timestamp().unwrap_or(0);
        let window = self.window;
        let (lo, hi) = *self.bounds.get_or_insert_with(|| window.resolve(ts));
        let inside = lo <= ts && ts <= hi;
        let c = &mut self.c;
        c.order = order;
        if inside {
            self.n += 1;
            c.range = Some(match c.range {
                None => (ts, ts),
                Some((a, b)) => (a.min(ts), b.max(ts)),
            });
        }
        let (vpid, vtid) = ids_read.unwrap_or_else(|| ids(ev, &mut self.ctx_cache));
        let t = ti as u32;
        let ci = ev.class().index;
        let info = plan.infos[ti][ci].as_ref();
        let route = &plan.routes[ti][ci];
        {
            let proc = c.model.processes.entry((t, vpid)).or_insert_with(|| Process {
                trace: t,
                vpid,
                host: plan.hosts[ti].clone(),
                ..Default::default()
            });
            proc.events += 1;
            if proc.procname.is_empty() {
                if let Some(p) = ev.context_field("procname").and_then(|v| v.as_str()) {
                    proc.procname = p.into_owned();
                }
            }
            match info {
                Some((info, _)) => {
                    proc.kinds |= info.kind.bit();
                    proc.ros_events += 1;
                }
                None if route.is_empty() => self.unused[ti][ci] += 1,
                None => {}
            }
        }
        let at = At { trace: t, vpid, vtid, ts, cpu: ev.cpu_id() };
        self.core.before(c, &at);
        if let Some((info, core_route)) = info {
            if inside || info.kind.is_init() {
                if inside {
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
    fn finish(mut self, set: &TraceSet) -> Collected {
        self.c.events = self.n;
        if !self.window.is_all() {
            self.c.window = self.bounds;
        }
        self.c.unused_events = unused_names(set, self.plan, &self.unused);
        self.c
    }

    fn into_part(self) -> PartOut {
        PartOut { c: self.c, unused: self.unused, n: self.n }
    }
}

/// Events nobody uses, by name (kernel events named `kernel:<name>`), from counts per trace and
/// class: what the notes tell about.
fn unused_names(set: &TraceSet, plan: &Plan, unused: &[Vec<u64>]) -> Vec<(String, u64)> {
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

/// The parts' results as one pass's: runs, publications, takes and the model's objects in the
/// order of their events, their links mapped, callback handles' slots in the order of their
/// first runs, counts added up. Also each part's map from its run indices to the whole's, and
/// the unused events' counts.
#[allow(clippy::type_complexity)]
fn merge(mut parts: Vec<PartOut>) -> (Collected, Vec<Vec<u32>>, Vec<Vec<u64>>) {
    let mut c = Collected::default();
    let orders: Vec<Orders> = parts.iter_mut().map(|p| p.c.orders.take().unwrap_or_default()).collect();
    // Runs, and the slots in the order of their first runs.
    let of = |f: fn(&Orders) -> &Vec<u128>| orders.iter().map(|o| f(o).as_slice()).collect::<Vec<_>>();
    let mut runs: Vec<Vec<u32>> = parts.iter().map(|p| vec![0; p.c.runs.len()]).collect();
    let mut slot_of: HashMap<Key, u32> = HashMap::default();
    c.runs.reserve(parts.iter().map(|p| p.c.runs.len()).sum());
    crate::pass::interleave(&of(|o| &o.runs), |p, l| {
        runs[p][l] = c.runs.len() as u32;
        let r = parts[p].c.runs[l];
        let key = parts[p].c.slots[r.slot()];
        let n = c.slots.len() as u32;
        let slot = *slot_of.entry(key).or_insert(n);
        if slot == n {
            c.slots.push(key);
        }
        c.runs.push(r.with_slot(slot));
    });
    for part in parts.iter_mut() {
        part.c.runs = Vec::new();
    }
    // Publications (each part's given back once merged).
    let mut pubs: Vec<Vec<u32>> = parts.iter().map(|p| vec![0; p.c.pubs.len()]).collect();
    c.pubs.reserve(parts.iter().map(|p| p.c.pubs.len()).sum());
    let mut from: Vec<std::vec::IntoIter<Publication>> =
        parts.iter_mut().map(|p| std::mem::take(&mut p.c.pubs).into_iter()).collect();
    crate::pass::interleave(&of(|o| &o.pubs), |p, l| {
        if let Some(mut x) = from[p].next() {
            pubs[p][l] = c.pubs.len() as u32;
            x.in_run = x.in_run.map(|r| runs[p][r as usize]);
            c.pubs.push(x);
        }
    });
    drop(from);
    // Takes.
    c.takes.reserve(parts.iter().map(|p| p.c.takes.len()).sum());
    let mut from: Vec<std::vec::IntoIter<Take>> =
        parts.iter_mut().map(|p| std::mem::take(&mut p.c.takes).into_iter()).collect();
    crate::pass::interleave(&of(|o| &o.takes), |p, _| {
        if let Some(mut x) = from[p].next() {
            x.run = x.run.map(|r| runs[p][r as usize]);
            x.intra_pub = x.intra_pub.map(|q| pubs[p][q as usize]);
            c.takes.push(x);
        }
    });
    drop(from);
    let mut unused: Vec<Vec<u64>> = Vec::new();
    let mut models = Vec::new();
    for (p, part) in parts.iter_mut().enumerate() {
        for (k, v) in part.c.open.drain() {
            c.open.insert(k, v.into_iter().map(|(cb, r)| (cb, runs[p][r as usize])).collect());
        }
        for (k, n) in part.c.unmatched_ends.drain() {
            *c.unmatched_ends.entry(k).or_default() += n;
        }
        c.ros_events += part.c.ros_events;
        c.events += part.n;
        c.range = match (c.range, part.c.range) {
            (Some((a, b)), Some((x, y))) => Some((a.min(x), b.max(y))),
            (r, None) | (None, r) => r,
        };
        if unused.is_empty() {
            unused = std::mem::take(&mut part.unused);
        } else {
            for (u, v) in unused.iter_mut().zip(&part.unused) {
                for (a, b) in u.iter_mut().zip(v) {
                    *a += b;
                }
            }
        }
        models.push(std::mem::take(&mut part.c.model));
    }
    c.model = Model::merge(models);
    (c, runs, unused)
}

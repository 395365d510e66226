//! The one pass: every event of the trace set, in time order, to the ROS 2 model and instances
//! ([`crate::pass`]) and to every registered [`Handler`].

use crate::events::ClassInfo;
use crate::handler::{as_any, as_any_mut, At, Context, Handler, TraceInfo};
use crate::model::Process;
use crate::pass::{ids, Collected, CtxCache, Window};
use crate::report::Analysis;
use crate::ros2::Core;
use ctf::TraceSet;

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

    /// Threads for the work that runs beside the pass (0, the default: one per core; 1: the
    /// calling thread only): [`Processor::analyze_with`]'s side work while the report is made.
    /// The pass reads and decodes the traces in the calling thread: with the decoding on other
    /// threads, the pass took longer (8–15% on the 2-core development machine, for 30% more CPU
    /// time), its thread reading the decoded events out of another core's cache costing more
    /// than decoding them itself. The results are the same whatever the number.
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
        let (mut an, rest) = crate::report::link(c);
        let this = &*self;
        let (report, t) = if ctf::threads(self.jobs) > 1 {
            std::thread::scope(|s| {
                let h = s.spawn(|| side(&an));
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
    pub fn collect(&mut self, set: &TraceSet, window: Window, mut progress: impl FnMut(u64, u64)) -> Collected {
        let mut c = Collected::default();
        let mut core = Core::default();
        let hosts: Vec<String> = set.traces.iter().map(|t| t.hostname()).collect();
        let kernel: Vec<bool> = set
            .traces
            .iter()
            .map(|t| matches!(t.schema.env("domain"), Some(ctf::EnvValue::Str(d)) if d == "kernel"))
            .collect();
        // Per trace and class: what the ROS 2 core makes of it, and which core handlers want it.
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
        // Per trace and class: the handlers that want it, with their tokens.
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
                    let handlers = self.handlers.iter_mut().enumerate();
                    handlers.filter_map(|(hi, h)| h.subscribe(&info, ec).map(|token| (hi, token))).collect()
                })
            })
            .collect();
        // Events nobody uses, per trace and class: what the notes tell about.
        let mut unused: Vec<Vec<u64>> = infos.iter().map(|v| vec![0; v.len()]).collect();
        let mut ctx_cache = CtxCache::default();
        let mut n = 0u64;
        let mut read = 0u64;
        let mut bounds: Option<(i64, i64)> = None;
        set.with_events(1, |events| {
            while let Some(r) = events.next() {
                let ev = match r {
                    Ok(ev) => ev,
                    Err(e) => {
                        c.errors.push(e.to_string());
                        continue;
                    }
                };
                read += 1;
                let ti = ev.trace_index();
                let ts = ev.timestamp().unwrap_or(0);
                let (lo, hi) = *bounds.get_or_insert_with(|| window.resolve(ts));
                let inside = lo <= ts && ts <= hi;
                if inside {
                    n += 1;
                    c.range = Some(match c.range {
                        None => (ts, ts),
                        Some((a, b)) => (a.min(ts), b.max(ts)),
                    });
                }
                let (vpid, vtid) = ids(&ev, &mut ctx_cache);
                let t = ti as u32;
                let ci = ev.class().index;
                let info = infos[ti][ci].as_ref();
                let route = &routes[ti][ci];
                {
                    let proc = c.model.processes.entry((t, vpid)).or_insert_with(|| Process {
                        trace: t,
                        vpid,
                        host: hosts[ti].clone(),
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
                        None if route.is_empty() => unused[ti][ci] += 1,
                        None => {}
                    }
                }
                let at = At { trace: t, vpid, vtid, ts, cpu: ev.cpu_id() };
                core.before(&mut c, &at);
                if let Some((info, core_route)) = info {
                    if inside || info.kind.is_init() {
                        if inside {
                            c.ros_events += 1;
                        }
                        core.event(*core_route, &mut c, info, &ev, &at);
                    }
                }
                if inside && !route.is_empty() {
                    let cx = Context { ros2: &c };
                    for &(hi, token) in route {
                        self.handlers[hi].event(token, &ev, &at, &cx);
                    }
                }
                if read.is_multiple_of(65536) {
                    let (d, total) = events.progress();
                    progress(d, total);
                }
            }
            for l in events.losses() {
                if let ctf::LossKind::Events(k) = l.kind {
                    c.discarded += k;
                }
                c.losses.push(match l.kind {
                    ctf::LossKind::Events(k) => format!("{}: {k} events discarded", l.path.display()),
                    ctf::LossKind::Packets(k) => format!("{}: {k} packets lost", l.path.display()),
                });
            }
        });
        c.events = n;
        if !window.is_all() {
            c.window = bounds;
        }
        let mut names: std::collections::BTreeMap<String, u64> = Default::default();
        for (ti, counts) in unused.iter().enumerate() {
            for ec in set.traces[ti].schema.event_classes() {
                let k = counts[ec.index];
                if k > 0 {
                    let name = if kernel[ti] && !ec.name.contains(':') {
                        format!("kernel:{}", ec.name)
                    } else {
                        ec.name.clone()
                    };
                    *names.entry(name).or_default() += k;
                }
            }
        }
        c.unused_events = names.into_iter().collect();
        c.model.resolve_owners();
        c.runs.shrink_to_fit();
        c.pubs.shrink_to_fit();
        c.takes.shrink_to_fit();
        let cx = Context { ros2: &c };
        for h in &mut self.handlers {
            h.finish(&cx);
        }
        c
    }
}

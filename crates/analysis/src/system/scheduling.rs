//! Scheduling during callback runs, from kernel scheduling events beside the ROS 2 ones (a
//! kernel trace and userspace traces of the same host, read together): per run, time on CPU
//! and off CPU, how often its thread was switched out (preempted while runnable, or blocked),
//! and per thread the wake-up latency (`sched_waking`, else `sched_wakeup`, to the
//! `sched_switch` that puts the thread on a CPU).
//!
//! A thread is on a CPU when it records `callback_start` (it is running that code); from there,
//! `sched_switch` events with it as `prev_tid` take it off and as `next_tid` put it back. A
//! userspace thread is the kernel thread of the same id on the same host (no PID namespaces).

use crate::collections::HashMap;
use crate::handler::{At, Context, Fields, Handler, TraceInfo};
use rostrace_ctf::{Event, EventClass};

/// Scheduling of one callback run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSched {
    /// The run's callback handle: (trace, process, address).
    pub callback: crate::model::Key,
    /// Time on a CPU during the run (ns).
    pub on_cpu_ns: i64,
    /// Time off CPU during the run (ns): its duration less the time on a CPU.
    pub off_cpu_ns: i64,
    /// Times its thread was switched out while runnable (`prev_state` 0: preempted).
    pub preemptions: u64,
    /// Times its thread was switched out blocked (waiting: sleep, lock, I/O).
    pub blocked: u64,
}

#[derive(Debug, Default)]
struct ThreadSched {
    /// Since when it is on a CPU.
    on_since: Option<i64>,
    /// Time on CPU so far (ns).
    on_ns: i64,
    preemptions: u64,
    blocked: u64,
    /// When it was last woken, not yet on a CPU.
    woken: Option<i64>,
    /// Open callback runs: (callback handle, start, on_ns, preemptions, blocked at the start).
    open: Vec<(crate::model::Key, i64, i64, u64, u64)>,
}

impl ThreadSched {
    fn on_ns_at(&self, ts: i64) -> i64 {
        self.on_ns + self.on_since.map_or(0, |s| ts - s)
    }
}

const SWITCH: u8 = 0;
const WAKING: u8 = 1;
const WAKEUP: u8 = 2;
const START: u8 = 3;
const END: u8 = 4;

/// The handler.
#[derive(Debug, Default)]
pub struct Scheduling {
    fields: Vec<Fields>,
    kinds: Vec<u8>,
    /// Host names, and the host of each trace (an index in `host_names`).
    host_names: Vec<String>,
    trace_host: Vec<u32>,
    /// Hosts with `sched_switch`, and whether their traces have `sched_waking`.
    kernel_hosts: HashMap<u32, bool>,
    threads: HashMap<(u32, i64), ThreadSched>,
    /// Per run that ended.
    pub runs: Vec<RunSched>,
    /// Wake-up latencies (ns) per (host, tid) of the threads that ran callbacks.
    pub wakeups: HashMap<(String, i64), Vec<i64>>,
    callback_threads: crate::collections::HashSet<(u32, i64)>,
}

impl Scheduling {
    fn host(&self, trace: u32) -> u32 {
        self.trace_host.get(trace as usize).copied().unwrap_or(u32::MAX)
    }

    fn thread(&mut self, trace: u32, tid: i64) -> &mut ThreadSched {
        let host = self.host(trace);
        self.threads.entry((host, tid)).or_default()
    }

    /// The name of host `h`.
    fn host_name(&self, h: u32) -> String {
        self.host_names.get(h as usize).cloned().unwrap_or_default()
    }

    /// Whether a kernel trace with scheduling events was read.
    pub fn has_kernel(&self) -> bool {
        !self.kernel_hosts.is_empty()
    }
}

impl Handler for Scheduling {
    fn subscribe(&mut self, trace: &TraceInfo<'_>, class: &EventClass) -> Option<u32> {
        let h = match self.host_names.iter().position(|n| n == trace.hostname) {
            Some(h) => h as u32,
            None => {
                self.host_names.push(trace.hostname.to_string());
                self.host_names.len() as u32 - 1
            }
        };
        if self.trace_host.len() <= trace.index as usize {
            self.trace_host.resize(trace.index as usize + 1, u32::MAX);
        }
        self.trace_host[trace.index as usize] = h;
        let (kind, f) = if trace.kernel {
            match class.name.as_str() {
                "sched_switch" => (SWITCH, Fields::of(class, &["prev_tid", "prev_state", "next_tid"])),
                "sched_waking" => (WAKING, Fields::of(class, &["tid"])),
                "sched_wakeup" => (WAKEUP, Fields::of(class, &["tid"])),
                _ => return None,
            }
        } else {
            // Callback runs matter only where the kernel of their host was traced.
            if !trace.kernel_hosts.iter().any(|h| h == trace.hostname) {
                return None;
            }
            match crate::events::Kind::of(&class.name)? {
                crate::events::Kind::CallbackStart => (START, Fields::default()),
                crate::events::Kind::CallbackEnd => (END, Fields::default()),
                _ => return None,
            }
        };
        if kind == SWITCH {
            let w = self.kernel_hosts.entry(h).or_default();
            *w |= trace.schema.event_classes().any(|c| c.name == "sched_waking");
        }
        self.fields.push(f);
        self.kinds.push(kind);
        Some(self.fields.len() as u32 - 1)
    }

    fn event(&mut self, token: u32, ev: &Event<'_>, at: &At, cx: &Context<'_>) {
        let kind = self.kinds[token as usize];
        let f = &self.fields[token as usize];
        match kind {
            SWITCH => {
                let (prev, state, next) = (f.int(ev, 0), f.int(ev, 1), f.int(ev, 2));
                if let Some(prev) = prev.filter(|t| *t != 0) {
                    let t = self.thread(at.trace, prev);
                    if let Some(s) = t.on_since.take() {
                        t.on_ns += at.ts - s;
                    }
                    // TASK_RUNNING (0) switched out: preempted; anything else: it blocked.
                    if state == Some(0) {
                        t.preemptions += 1;
                    } else {
                        t.blocked += 1;
                    }
                }
                if let Some(next) = next.filter(|t| *t != 0) {
                    let key = (self.host(at.trace), next);
                    let watched = self.callback_threads.contains(&key);
                    let t = self.threads.entry(key).or_default();
                    t.on_since = Some(at.ts);
                    if let Some(w) = t.woken.take() {
                        if watched {
                            let name = self.host_name(key.0);
                            self.wakeups.entry((name, next)).or_default().push(at.ts - w);
                        }
                    }
                }
            }
            WAKING | WAKEUP => {
                let host = self.host(at.trace);
                // With sched_waking in the trace, sched_wakeup would count the same wake-up later.
                if kind == WAKEUP && self.kernel_hosts.get(&host).copied().unwrap_or(false) {
                    return;
                }
                if let Some(tid) = f.int(ev, 0) {
                    let t = self.threads.entry((host, tid)).or_default();
                    if t.on_since.is_none() && t.woken.is_none() {
                        t.woken = Some(at.ts);
                    }
                }
            }
            START => {
                let host = self.host(at.trace);
                if !self.kernel_hosts.contains_key(&host) {
                    return;
                }
                let Some(callback) = cx.running_callback(at) else { return };
                self.callback_threads.insert((host, at.vtid));
                let t = self.threads.entry((host, at.vtid)).or_default();
                // Recording this event, the thread is on a CPU.
                if t.on_since.is_none() {
                    t.on_since = Some(at.ts);
                    t.woken = None;
                }
                let snap = (callback, at.ts, t.on_ns_at(at.ts), t.preemptions, t.blocked);
                t.open.push(snap);
            }
            _ => {
                let host = self.host(at.trace);
                let Some(t) = self.threads.get_mut(&(host, at.vtid)) else { return };
                let Some((callback, start, on0, p0, b0)) = t.open.pop() else { return };
                let on_cpu_ns = t.on_ns_at(at.ts) - on0;
                self.runs.push(RunSched {
                    callback,
                    on_cpu_ns,
                    off_cpu_ns: (at.ts - start - on_cpu_ns).max(0),
                    preemptions: t.preemptions - p0,
                    blocked: t.blocked - b0,
                });
            }
        }
    }
}

//! CPU time per thread from kernel `sched_switch` events, as tracetools_analysis's
//! `CpuTimeHandler` computes it: on each CPU, the thread switched out (`prev_tid`) ran since the
//! previous switch on that CPU; the first switch of each CPU only starts the clock, and the thread
//! still running at the end of the trace is not counted.

use crate::collections::HashMap;
use crate::handler::{At, Context, Fields, Handler, TraceInfo};
use rostrace_ctf::{Event, EventClass};
use serde::Serialize;
use std::collections::BTreeMap;

/// CPU time of one thread.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ThreadCpu {
    /// Host of the kernel trace.
    pub host: String,
    /// Thread id.
    pub tid: i64,
    /// Process id, when the trace tells it (statedump, fork or a `pid` context).
    pub pid: Option<i64>,
    /// Command name (`prev_comm` of its last switch out).
    pub comm: String,
    /// Time on CPU (ns).
    pub cpu_ns: i64,
    /// Scheduling intervals counted.
    pub intervals: u64,
}

/// The handler.
#[derive(Debug, Default)]
pub struct CpuTime {
    /// Fields per token: 0 `sched_switch` (prev_tid, prev_comm, next_tid), 1 statedump/fork
    /// (tid, pid) classes after.
    fields: Vec<Fields>,
    kinds: Vec<u8>,
    hosts: HashMap<u32, String>,
    /// When the current thread of (trace, cpu) started.
    cpu_start: HashMap<(u32, u64), i64>,
    /// Per (trace, tid).
    threads: HashMap<(u32, i64), ThreadCpu>,
    pids: HashMap<(u32, i64), i64>,
    /// Kernel traces with `sched_switch`.
    pub traces: u32,
}

const SWITCH: u8 = 0;
const PROCESS: u8 = 1;

impl CpuTime {
    /// Per thread, most CPU time first.
    pub fn threads(&self) -> Vec<ThreadCpu> {
        let mut v: Vec<ThreadCpu> = self
            .threads
            .iter()
            .map(|(k, t)| ThreadCpu { pid: t.pid.or_else(|| self.pids.get(k).copied()), ..t.clone() })
            .collect();
        v.sort_by(|a, b| b.cpu_ns.cmp(&a.cpu_ns).then(a.host.cmp(&b.host)).then(a.tid.cmp(&b.tid)));
        v
    }

    /// Per process (threads whose process is known), most CPU time first: (host, pid, name of
    /// its main thread or first thread, ns, threads).
    pub fn processes(&self) -> Vec<(String, i64, String, i64, u64)> {
        let mut by: BTreeMap<(String, i64), (String, i64, u64)> = BTreeMap::new();
        for t in self.threads() {
            if let Some(pid) = t.pid {
                let e = by.entry((t.host.clone(), pid)).or_default();
                if e.0.is_empty() || t.tid == pid {
                    e.0 = t.comm.clone();
                }
                e.1 += t.cpu_ns;
                e.2 += 1;
            }
        }
        let mut v: Vec<_> = by.into_iter().map(|((h, p), (n, ns, k))| (h, p, n, ns, k)).collect();
        v.sort_by(|a, b| b.3.cmp(&a.3).then(a.1.cmp(&b.1)));
        v
    }
}

impl Handler for CpuTime {
    fn subscribe(&mut self, trace: &TraceInfo<'_>, class: &EventClass) -> Option<u32> {
        if !trace.kernel {
            return None;
        }
        self.hosts.insert(trace.index, trace.hostname.to_string());
        let (kind, f) = match class.name.as_str() {
            "sched_switch" => (SWITCH, Fields::of(class, &["prev_tid", "prev_comm", "next_tid"])),
            "lttng_statedump_process_state" => (PROCESS, Fields::of(class, &["tid", "pid"])),
            "sched_process_fork" => (PROCESS, Fields::of(class, &["child_tid", "child_pid"])),
            _ => return None,
        };
        if kind == SWITCH {
            if !f.all() {
                return None;
            }
            self.traces += 1;
        }
        self.fields.push(f);
        self.kinds.push(kind);
        Some(self.fields.len() as u32 - 1)
    }

    fn event(&mut self, token: u32, ev: &Event<'_>, at: &At, _cx: &Context<'_>) {
        let f = &self.fields[token as usize];
        if self.kinds[token as usize] == PROCESS {
            if let (Some(tid), Some(pid)) = (f.int(ev, 0), f.int(ev, 1)) {
                self.pids.insert((at.trace, tid), pid);
            }
            return;
        }
        let cpu = at.cpu.unwrap_or(0);
        if let Some(start) = self.cpu_start.insert((at.trace, cpu), at.ts) {
            let tid = f.int(ev, 0).unwrap_or(-1);
            let host = self.hosts.get(&at.trace).cloned().unwrap_or_default();
            let t =
                self.threads.entry((at.trace, tid)).or_insert_with(|| ThreadCpu { host, tid, ..Default::default() });
            t.cpu_ns += at.ts - start;
            t.intervals += 1;
            if let Some(comm) = f.str(ev, 1) {
                if t.comm != comm {
                    t.comm = comm;
                }
            }
        }
    }
}

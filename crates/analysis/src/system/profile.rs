//! Function profile from LTTng-UST's cyg-profile helper (`lttng_ust_cyg_profile:func_entry` /
//! `func_exit`, and the `_fast` variants; code built with `-finstrument-functions`, recorded
//! with `rostrace record --with-profile`), as tracetools_analysis's `ProfileHandler`: a call
//! stack per thread; at each exit, the call's duration (exit − entry) and its actual duration
//! (time its thread was on a CPU meanwhile, when a kernel trace of the host has `sched_switch`;
//! else the duration). Per thread and function: calls, total, actual and self time (total less
//! the total of the calls it made), and the caller → callee edges of the call tree. Functions
//! are named from the binaries the process had mapped ([`super::symbols`]) when the trace has
//! LTTng-UST's statedump and the binaries are at the same path here.

use super::symbols::{Mapping, Symbol, Symbolizer};
use crate::collections::HashMap;
use crate::handler::{At, Context, Fields, Handler, Part, TraceInfo};
use rostrace_ctf::{Event, EventClass};
use serde::Serialize;

/// A function of one thread.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FunctionProfile {
    /// Trace index.
    pub trace: u32,
    /// Process (0 when the trace has no vpid context).
    pub vpid: i64,
    /// Thread.
    pub tid: i64,
    /// Function address.
    pub address: u64,
    /// Function name (demangled), when the binary could be read; else empty.
    pub symbol: String,
    /// The binary the address is in (path on the traced machine), when the trace tells.
    pub binary: String,
    /// Completed calls.
    pub calls: u64,
    /// Sum of the calls' durations, entry to exit (ns).
    pub total_ns: i64,
    /// Sum of the time on a CPU during the calls (ns).
    pub actual_ns: i64,
    /// Total less the total of the calls it made (ns).
    pub self_ns: i64,
    /// Deepest stack depth it was called at (0: outermost).
    pub max_depth: u32,
}

#[derive(Debug, Clone)]
struct Frame {
    addr: u64,
    start: i64,
    /// When it last went on a CPU (`None`: off CPU now).
    last_start: Option<i64>,
    /// On-CPU time before `last_start` (ns).
    actual: i64,
    /// Total of the calls it made (ns).
    children: i64,
}

const ENTRY: u32 = 0;
const EXIT: u32 = 1;
const SWITCH: u32 = 2;
const BIN_INFO: u32 = 3;
const BUILD_ID: u32 = 4;

/// The handler.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    fields: Vec<(u32, Fields)>,
    /// Host names, and the host of each trace (an index in `host_names`).
    host_names: Vec<String>,
    trace_host: Vec<u32>,
    /// Call stacks per (trace, vpid, tid).
    stacks: HashMap<(u32, i64, i64), Vec<Frame>>,
    /// Stacks' keys per (host, tid), for the kernel's switches.
    by_host_tid: HashMap<(u32, i64), (u32, i64, i64)>,
    functions: HashMap<(u32, i64, i64, u64), FunctionProfile>,
    /// Caller → callee: calls, per (trace, vpid, tid, caller, callee).
    pub edges: HashMap<(u32, i64, i64, u64, u64), u64>,
    /// Exits without an entry on their thread's stack.
    pub unmatched_exits: u64,
    /// Binaries mapped per process (trace, vpid), in the order the trace tells.
    pub mappings: HashMap<(u32, i64), Vec<Mapping>>,
    /// Names of the functions' addresses, per (trace, vpid, address) (after the pass).
    pub symbols: HashMap<(u32, i64, u64), Symbol>,
}

impl Profile {
    /// Per thread and function, the highest total first.
    pub fn functions(&self) -> Vec<FunctionProfile> {
        let mut v: Vec<FunctionProfile> = self
            .functions
            .values()
            .map(|f| {
                let mut f = f.clone();
                if let Some(s) = self.symbols.get(&(f.trace, f.vpid, f.address)) {
                    f.symbol = s.name.clone();
                    f.binary = s.binary.clone();
                }
                f
            })
            .collect();
        v.sort_by(|a, b| {
            (b.total_ns.cmp(&a.total_ns).then(a.tid.cmp(&b.tid)).then(a.address.cmp(&b.address)))
                .then((a.trace, a.vpid).cmp(&(b.trace, b.vpid)))
        });
        v
    }

    /// Calls still on a stack at the end of the trace.
    pub fn unfinished(&self) -> u64 {
        self.stacks.values().map(|s| s.len() as u64).sum()
    }
}

impl Handler for Profile {
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
        let (kind, f) = match class.name.as_str() {
            "lttng_ust_cyg_profile:func_entry" | "lttng_ust_cyg_profile_fast:func_entry" if !trace.kernel => {
                (ENTRY, Fields::of(class, &["addr"]))
            }
            "lttng_ust_cyg_profile:func_exit" | "lttng_ust_cyg_profile_fast:func_exit" if !trace.kernel => {
                (EXIT, Fields::of(class, &["addr"]))
            }
            "sched_switch" if trace.kernel => (SWITCH, Fields::of(class, &["prev_tid", "next_tid"])),
            "lttng_ust_statedump:bin_info" | "lttng_ust_dl:dlopen" if !trace.kernel => {
                (BIN_INFO, Fields::of(class, &["baddr", "memsz", "path", "is_pic"]))
            }
            "lttng_ust_statedump:build_id" | "lttng_ust_dl:build_id" if !trace.kernel => {
                (BUILD_ID, Fields::of(class, &["baddr", "build_id"]))
            }
            _ => return None,
        };
        self.fields.push((kind, f));
        Some(self.fields.len() as u32 - 1)
    }

    fn event(&mut self, token: u32, ev: &Event<'_>, at: &At, _cx: &Context<'_>) {
        let (kind, f) = &self.fields[token as usize];
        let kind = *kind;
        let (a, b) = (f.int(ev, 0), f.int(ev, 1));
        let host = self.trace_host.get(at.trace as usize).copied().unwrap_or(u32::MAX);
        let key = (at.trace, at.vpid, at.vtid);
        match kind {
            ENTRY => {
                let addr = a.unwrap_or(0) as u64;
                self.by_host_tid.insert((host, at.vtid), key);
                self.stacks.entry(key).or_default().push(Frame {
                    addr,
                    start: at.ts,
                    last_start: Some(at.ts),
                    actual: 0,
                    children: 0,
                });
            }
            EXIT => {
                let Some(stack) = self.stacks.get_mut(&key) else {
                    self.unmatched_exits += 1;
                    return;
                };
                let Some(fr) = stack.pop() else {
                    self.unmatched_exits += 1;
                    return;
                };
                let depth = stack.len() as u32;
                let duration = at.ts - fr.start;
                let actual = fr.actual + fr.last_start.map_or(0, |s| at.ts - s);
                let parent = stack.last_mut().map(|p| {
                    p.children += duration;
                    p.addr
                });
                let e =
                    self.functions.entry((at.trace, at.vpid, at.vtid, fr.addr)).or_insert_with(|| FunctionProfile {
                        trace: at.trace,
                        vpid: at.vpid,
                        tid: at.vtid,
                        address: fr.addr,
                        ..Default::default()
                    });
                e.calls += 1;
                e.total_ns += duration;
                e.actual_ns += actual;
                e.self_ns += duration - fr.children;
                e.max_depth = e.max_depth.max(depth);
                if let Some(p) = parent {
                    *self.edges.entry((at.trace, at.vpid, at.vtid, p, fr.addr)).or_default() += 1;
                }
            }
            BIN_INFO => {
                let m = Mapping {
                    baddr: f.uint(ev, 0).unwrap_or(0),
                    memsz: f.uint(ev, 1).unwrap_or(0),
                    path: f.str(ev, 2).unwrap_or_default(),
                    // dlopen has no is_pic: a loaded library is position-independent.
                    is_pic: f.int(ev, 3).is_none_or(|p| p != 0),
                    build_id: None,
                };
                let maps = self.mappings.entry((at.trace, at.vpid)).or_default();
                if !maps.contains(&m) {
                    maps.push(m);
                }
            }
            BUILD_ID => {
                let baddr = f.uint(ev, 0).unwrap_or(0);
                let id = f.bytes(ev, 1);
                if let Some(m) = self
                    .mappings
                    .get_mut(&(at.trace, at.vpid))
                    .and_then(|ms| ms.iter_mut().rev().find(|m| m.baddr == baddr))
                {
                    m.build_id = id;
                }
            }
            _ => {
                if let Some(k) = a.and_then(|prev| self.by_host_tid.get(&(host, prev))) {
                    for fr in self.stacks.get_mut(k).into_iter().flatten() {
                        if let Some(s) = fr.last_start.take() {
                            fr.actual += at.ts - s;
                        }
                    }
                }
                if let Some(k) = b.and_then(|next| self.by_host_tid.get(&(host, next))) {
                    for fr in self.stacks.get_mut(k).into_iter().flatten() {
                        fr.last_start.get_or_insert(at.ts);
                    }
                }
            }
        }
    }

    fn split(&self) -> Option<Box<dyn Handler + Send>> {
        // Its tables, without results.
        Some(Box::new(Profile {
            fields: self.fields.clone(),
            host_names: self.host_names.clone(),
            trace_host: self.trace_host.clone(),
            ..Default::default()
        }))
    }

    fn merge(&mut self, part: Box<dyn std::any::Any>, _map: &Part<'_>) {
        if let Ok(p) = part.downcast::<Self>() {
            let p = *p;
            self.stacks.extend(p.stacks);
            self.by_host_tid.extend(p.by_host_tid);
            self.functions.extend(p.functions);
            self.edges.extend(p.edges);
            self.unmatched_exits += p.unmatched_exits;
            self.mappings.extend(p.mappings);
            self.symbols.extend(p.symbols);
        }
    }

    fn finish(&mut self, _cx: &Context<'_>) {
        if self.mappings.is_empty() {
            return;
        }
        let mut s = Symbolizer::default();
        let none = Vec::new();
        for &(t, vpid, _, addr) in self.functions.keys() {
            if let std::collections::hash_map::Entry::Vacant(e) = self.symbols.entry((t, vpid, addr)) {
                e.insert(s.lookup(self.mappings.get(&(t, vpid)).unwrap_or(&none), addr));
            }
        }
    }
}

//! The system analyses' sections of the text: sim time, CPU time, scheduling, memory, function
//! profile, message age.

use super::{bytes, middle, take};
use crate::format::name as esc;
use crate::format::{dur, stats_line};
use crate::text::count;
use rostrace_analysis::Report;
use std::fmt::Write as _;

/// The system analyses' sections, for the traces that have their events.
pub(super) fn system(o: &mut String, r: &Report, top: usize) {
    let span = match (r.begin_ns, r.end_ns) {
        (Some(a), Some(b)) if b > a => (b - a) as f64,
        _ => 1.0,
    };
    sim_time(o, r);
    cpu_time(o, r, top, span);
    scheduling(o, r, top, span);
    memory(o, r, top);
    profile(o, r, top);
    message_age(o, r, top);
}

/// Sim time: how /clock relates to system time.
fn sim_time(o: &mut String, r: &Report) {
    if let Some(st) = &r.system.sim_time {
        let _ = writeln!(o, "\nSim time (ros2_caret:sim_time: /clock sampled every second of wall time)");
        match &st.fit {
            Some(f) => {
                let _ = writeln!(
                    o,
                    "  {}: sim = {:.6} × system time; residual rms {}, max {}",
                    count(st.samples, "sample"),
                    f.slope,
                    dur(st.residual_rms_ns),
                    dur(st.residual_max_ns)
                );
                let _ = writeln!(
                    o,
                    "  sim {:.3} s at {}",
                    f.sim_ref_ns as f64 / 1e9,
                    crate::text::date_time(f.system_ref_ns)
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    "  {}: at least 2 are needed to map system time to sim time",
                    count(st.samples, "sample")
                );
            }
        }
        if st.backwards > 0 {
            let _ = writeln!(
                o,
                "  sim time went backwards {} (a restarted simulation or bag?)",
                count(st.backwards, "time")
            );
        }
    }
}

/// CPU time per thread and callback.
fn cpu_time(o: &mut String, r: &Report, top: usize, span: f64) {
    if let Some(c) = &r.system.cpu_time {
        let _ = writeln!(o, "\nCPU time per process (kernel sched_switch)");
        for p in take(&c.processes, top) {
            let _ = writeln!(
                o,
                "  {:>10}  {:5.1}% of a CPU  pid {} {} ({})",
                dur(p.cpu_ns as f64),
                100.0 * p.cpu_ns as f64 / span,
                p.pid,
                esc(&p.name),
                crate::text::count(p.threads, "thread")
            );
        }
        if c.processes.is_empty() {
            let _ = writeln!(o, "  (the trace does not tell which process each thread belongs to: no statedump)");
        }
        let _ = writeln!(o, "\nCPU time per thread (% of a CPU: of the trace's duration; above 100% on several CPUs)");
        for t in take(&c.threads, top) {
            let pid = t.pid.map(|p| format!("pid {p} ")).unwrap_or_default();
            let idle = if t.tid == 0 { " (idle, all CPUs)" } else { "" };
            let _ = writeln!(
                o,
                "  {:>10}  {:5.1}% of a CPU  {pid}tid {} {}{idle} ({})",
                dur(t.cpu_ns as f64),
                100.0 * t.cpu_ns as f64 / span,
                t.tid,
                esc(&t.comm),
                crate::text::count(t.intervals, "interval")
            );
        }
        if top > 0 && c.threads.len() > top {
            let _ = writeln!(o, "  ... {} more", c.threads.len() - top);
        }
    }
}

/// Scheduling: waits to run, preemptions.
fn scheduling(o: &mut String, r: &Report, top: usize, span: f64) {
    if let Some(s) = &r.system.scheduling {
        let _ =
            writeln!(o, "\nScheduling during callback runs (kernel events of the same host), most time off CPU first");
        if s.callbacks.is_empty() {
            let _ = writeln!(o, "  (no callback run while the kernel was traced)");
        }
        for c in take(&s.callbacks, top) {
            let _ = writeln!(
                o,
                "  {}\n      {} runs: on CPU mean {}, off CPU mean {} (max {}); {} preemptions, {} blocked; {} runs interrupted",
                name(&c.callback),
                c.runs,
                dur(c.on_cpu_ns.mean),
                dur(c.off_cpu_ns.mean),
                dur(c.off_cpu_ns.max as f64),
                c.preemptions,
                c.blocked,
                c.runs_interrupted
            );
        }
        if !s.nodes.is_empty() {
            let _ = writeln!(o, "  CPU time per node (its callbacks' runs), most first");
            for n in take(&s.nodes, top) {
                let node =
                    if n.node.is_empty() { format!("pid {} (no node)", n.vpid) } else { esc(&n.node).into_owned() };
                let _ = writeln!(
                    o,
                    "    {:>10}  {:5.1}% of a CPU  {node}: {}, {}, {} off CPU, {} preemptions",
                    dur(n.on_cpu_ns as f64),
                    100.0 * n.on_cpu_ns as f64 / span,
                    crate::text::count(n.callbacks, "callback"),
                    crate::text::count(n.runs, "run"),
                    dur(n.off_cpu_ns as f64),
                    n.preemptions
                );
            }
        }
        if !s.wakeup_latency.is_empty() {
            let _ = writeln!(o, "  wake-up latency of the callback threads (woken -> on a CPU)");
            for w in take(&s.wakeup_latency, top) {
                let _ = writeln!(o, "    tid {}: {}", w.tid, stats_line(&w.latency_ns));
            }
        }
    }
}

/// Memory per process.
fn memory(o: &mut String, r: &Report, top: usize) {
    if let Some(m) = &r.system.memory {
        let _ = writeln!(o, "\nMemory per process (changes traced: libc wrapper, kernel pages), highest peak first");
        for p in take(&m.processes, top) {
            let name = r
                .processes
                .iter()
                .find(|x| x.trace == p.trace && x.vpid == p.vpid)
                .map(|x| esc(&x.procname).into_owned())
                .unwrap_or_default();
            let _ = writeln!(
                o,
                "  pid {} {name} ({}): peak {} at +{}, at the end {} ({})",
                p.vpid,
                esc(p.kind),
                bytes(p.max_bytes),
                dur((p.max_at_ns - r.begin_ns.unwrap_or(p.max_at_ns)) as f64),
                bytes(p.final_bytes),
                crate::text::count(p.changes, "change")
            );
        }
        let _ = writeln!(o, "  per thread, highest peak first");
        for t in take(&m.threads, top) {
            let _ = writeln!(
                o,
                "    tid {} ({}): peak {}, at the end {} ({})",
                t.tid,
                esc(t.kind),
                bytes(t.max_bytes),
                bytes(t.final_bytes),
                crate::text::count(t.changes, "change")
            );
        }
    }
}

/// The function profile.
fn profile(o: &mut String, r: &Report, top: usize) {
    if let Some(p) = &r.system.profile {
        let _ = writeln!(o, "\nFunction profile (cyg-profile), highest total time first");
        for f in take(&p.functions, top) {
            let func = if f.symbol.is_empty() {
                format!("{:#x}", f.address)
            } else {
                let bin = esc(f.binary.rsplit('/').next().unwrap_or(""));
                format!("{} ({bin})", middle(&esc(&f.symbol), 70))
            };
            let _ = writeln!(
                o,
                "  tid {} {func}: {}, total {}, self {}, on CPU {}",
                f.tid,
                crate::text::count(f.calls, "call"),
                dur(f.total_ns as f64),
                dur(f.self_ns as f64),
                dur(f.actual_ns as f64)
            );
        }
        if p.unmatched_exits + p.unfinished > 0 {
            let _ = writeln!(
                o,
                "  {} exits without their entry, {} calls unfinished at the end",
                p.unmatched_exits, p.unfinished
            );
        }
    }
}

/// Message age at callback start.
fn message_age(o: &mut String, r: &Report, top: usize) {
    if !r.system.message_age.is_empty() {
        let _ = writeln!(o, "\nMessage age at callback start (callback start - the message's header stamp)");
        for m in take(&r.system.message_age, top) {
            let _ = writeln!(o, "  {}\n      {}", name(&m.callback), stats_line(&m.ns));
        }
    }
}

/// A callback as the system sections name it: its node (or process) and symbol.
fn name(c: &rostrace_analysis::system::CallbackId) -> String {
    let sym = if c.symbol.is_empty() { format!("{:#x}", c.address) } else { middle(&esc(&c.symbol), 60) };
    if c.node.is_empty() {
        format!("pid {} {sym}", c.vpid)
    } else {
        format!("{} {sym}", esc(&c.node))
    }
}

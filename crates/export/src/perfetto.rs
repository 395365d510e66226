//! The Perfetto trace format (protobuf `TracePacket`s, as `perfetto_trace.proto` defines them):
//! a track per process and thread, a slice per callback run, an instant per publication and
//! take, a flow publish → take → callback per matched message, and a counter track per topic
//! with each message's latency. Opens in ui.perfetto.dev and Perfetto's trace processor.
//!
//! Several hosts are Perfetto's machines: each host's tracks and events are on a packet
//! sequence of its own, with the host's machine id (`TracePacket.machine_id`; none for the
//! reference host, Perfetto's host machine) and a `SystemInfo` naming it. The times are the
//! aligned ones (`docs/multi-host.md`): no clock conversion is left to Perfetto.
//!
//! Field numbers are Perfetto's (`protos/perfetto/trace/perfetto_trace.proto`); the encoding is
//! written here (a few messages do not need a protobuf library).

use rostrace_analysis::{Analysis, LinkedPublication, LinkedRun, LinkedTake};
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

/// A protobuf message being encoded.
#[derive(Default)]
struct Pb(Vec<u8>);

impl Pb {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn tag(&mut self, field: u32, wire: u8) {
        self.varint(((field as u64) << 3) | wire as u64);
    }
    fn uint(&mut self, field: u32, v: u64) {
        self.tag(field, 0);
        self.varint(v);
    }
    fn int(&mut self, field: u32, v: i64) {
        self.tag(field, 0);
        self.varint(v as u64);
    }
    fn fixed64(&mut self, field: u32, v: u64) {
        self.tag(field, 1);
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.tag(field, 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn msg(&mut self, field: u32, build: impl FnOnce(&mut Pb)) {
        let mut m = Pb::default();
        build(&mut m);
        self.bytes(field, &m.0);
    }
}

// Field numbers.
const TRACE_PACKET: u32 = 1;
const PKT_TIMESTAMP: u32 = 8;
const PKT_SEQUENCE_ID: u32 = 10;
const PKT_TRACK_EVENT: u32 = 11;
const PKT_INTERNED_DATA: u32 = 12;
const PKT_SEQUENCE_FLAGS: u32 = 13;
const PKT_TRACK_DESCRIPTOR: u32 = 60;
const PKT_SYSTEM_INFO: u32 = 45;
const PKT_MACHINE_ID: u32 = 98;
const SI_MACHINE_NAME: u32 = 17;
const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;
const TD_UUID: u32 = 1;
const TD_NAME: u32 = 2;
const TD_PROCESS: u32 = 3;
const TD_THREAD: u32 = 4;
const TD_PARENT_UUID: u32 = 5;
const TD_COUNTER: u32 = 8;
const PD_PID: u32 = 1;
const PD_PROCESS_NAME: u32 = 6;
const THD_PID: u32 = 1;
const THD_TID: u32 = 2;
const THD_THREAD_NAME: u32 = 5;
const CD_UNIT: u32 = 3;
const UNIT_TIME_NS: u64 = 1;
const TE_DEBUG_ANNOTATIONS: u32 = 4;
const TE_TYPE: u32 = 9;
const TE_NAME_IID: u32 = 10;
const TE_TRACK_UUID: u32 = 11;
const TE_COUNTER_VALUE: u32 = 30;
const TE_FLOW_IDS: u32 = 47;
const TE_TERMINATING_FLOW_IDS: u32 = 48;
const TYPE_SLICE_BEGIN: u64 = 1;
const TYPE_SLICE_END: u64 = 2;
const TYPE_INSTANT: u64 = 3;
const TYPE_COUNTER: u64 = 4;
const DA_NAME_IID: u32 = 1;
const DA_BOOL: u32 = 2;
const DA_INT: u32 = 4;
const DA_POINTER: u32 = 7;
const DA_STRING_IID: u32 = 17;
const ID_EVENT_NAMES: u32 = 2;
const ID_ANNOTATION_NAMES: u32 = 3;
const ID_ANNOTATION_STRINGS: u32 = 29;
const INTERNED_IID: u32 = 1;
const INTERNED_NAME: u32 = 2;

/// What was written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PerfettoStats {
    /// Process tracks.
    pub processes: u64,
    /// Thread tracks.
    pub threads: u64,
    /// Slices (callback runs).
    pub slices: u64,
    /// Instants (publications and takes).
    pub instants: u64,
    /// Flows (matched messages).
    pub flows: u64,
    /// Counter values (message latencies).
    pub counter_values: u64,
    /// Machines (one per host).
    pub machines: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// Interned strings of one kind, the new ones waiting for the next packet.
#[derive(Default)]
struct Interner {
    ids: HashMap<String, u64>,
    new: Vec<(u64, String)>,
}

impl Interner {
    fn id(&mut self, s: &str) -> u64 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.ids.len() as u64 + 1;
        self.ids.insert(s.to_string(), i);
        self.new.push((i, s.to_string()));
        i
    }
}

/// A packet sequence's state (one per machine): its interned strings.
#[derive(Default)]
struct Sequence {
    started: bool,
    names: Interner,
    ann_names: Interner,
    ann_strings: Interner,
}

struct Writer<W: Write> {
    out: W,
    bytes: u64,
    /// By machine (0: the host machine, the reference host).
    seqs: Vec<Sequence>,
}

/// A debug annotation's value.
enum Ann<'a> {
    Str(&'a str),
    Pointer(u64),
    Int(i64),
    Bool(bool),
}

impl<W: Write> Writer<W> {
    /// A packet of `machine`'s sequence (its interned strings new since its last packet with it).
    fn packet(&mut self, machine: u32, ts: Option<i64>, build: impl FnOnce(&mut Pb, &mut Sequence)) -> io::Result<()> {
        let seq = &mut self.seqs[machine as usize];
        let mut p = Pb::default();
        build(&mut p, seq);
        if let Some(ts) = ts {
            p.uint(PKT_TIMESTAMP, ts.max(0) as u64);
        }
        p.uint(PKT_SEQUENCE_ID, machine as u64 + 1);
        if machine > 0 {
            p.uint(PKT_MACHINE_ID, machine as u64);
        }
        let interned = !(seq.names.new.is_empty() && seq.ann_names.new.is_empty() && seq.ann_strings.new.is_empty());
        if interned {
            p.msg(PKT_INTERNED_DATA, |d| {
                for (field, int) in [
                    (ID_EVENT_NAMES, &mut seq.names),
                    (ID_ANNOTATION_NAMES, &mut seq.ann_names),
                    (ID_ANNOTATION_STRINGS, &mut seq.ann_strings),
                ] {
                    for (i, s) in int.new.drain(..) {
                        d.msg(field, |e| {
                            e.uint(INTERNED_IID, i);
                            e.bytes(INTERNED_NAME, s.as_bytes());
                        });
                    }
                }
            });
        }
        if !seq.started {
            p.uint(PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE);
            seq.started = true;
        } else {
            p.uint(PKT_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
        }
        let mut outer = Pb::default();
        outer.bytes(TRACE_PACKET, &p.0);
        self.out.write_all(&outer.0)?;
        self.bytes += outer.0.len() as u64;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn event(
        &mut self,
        ts: i64,
        kind: u64,
        (track, machine): (u64, u32),
        name: Option<&str>,
        annotations: &[(&str, Ann)],
        flows: &[u64],
        terminating: &[u64],
        counter: Option<i64>,
    ) -> io::Result<()> {
        self.packet(machine, Some(ts), |p, w| {
            p.msg(PKT_TRACK_EVENT, |e| {
                e.uint(TE_TYPE, kind);
                e.uint(TE_TRACK_UUID, track);
                if let Some(n) = name {
                    e.uint(TE_NAME_IID, w.names.id(n));
                }
                for (k, v) in annotations {
                    e.msg(TE_DEBUG_ANNOTATIONS, |a| {
                        a.uint(DA_NAME_IID, w.ann_names.id(k));
                        match v {
                            Ann::Str(s) => a.uint(DA_STRING_IID, w.ann_strings.id(s)),
                            Ann::Pointer(x) => a.uint(DA_POINTER, *x),
                            Ann::Int(x) => a.int(DA_INT, *x),
                            Ann::Bool(x) => a.uint(DA_BOOL, *x as u64),
                        }
                    });
                }
                for f in flows {
                    e.fixed64(TE_FLOW_IDS, *f);
                }
                for f in terminating {
                    e.fixed64(TE_TERMINATING_FLOW_IDS, *f);
                }
                if let Some(c) = counter {
                    e.int(TE_COUNTER_VALUE, c);
                }
            });
        })
    }
}

/// Process and thread ids as Perfetto sees them: the traced ones, unless two traces (hosts)
/// use the same id; then the second gets a free id above Linux's largest (2^22).
#[derive(Default)]
struct Ids {
    map: HashMap<(u32, i64), i64>,
    used: HashSet<i64>,
    next: i64,
}

impl Ids {
    fn get(&mut self, trace: u32, id: i64) -> i64 {
        if let Some(&x) = self.map.get(&(trace, id)) {
            return x;
        }
        let x = if self.used.insert(id) {
            id
        } else {
            self.next = self.next.max(1 << 22) + 1;
            self.used.insert(self.next);
            self.next
        };
        self.map.insert((trace, id), x);
        x
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Item {
    End(u32),
    Begin(u32),
    Publish(u32),
    Take(u32),
    Latency(u32),
}

/// The tracks: a process track per process, a thread track per thread that ran, published or
/// took (each under its process's), and a counter track per topic with matched messages; their
/// uuids by thread and by topic.
#[allow(clippy::type_complexity)]
fn tracks<'a, W: Write>(
    a: &'a Analysis,
    w: &mut Writer<W>,
    machine_of: &[u32],
    ids: &mut Ids,
    stats: &mut PerfettoStats,
) -> io::Result<(HashMap<(u32, i64, i64), (u64, u32)>, HashMap<&'a str, (u64, u32)>)> {
    let machine = |trace: u32| machine_of.get(trace as usize).copied().unwrap_or(0);
    let m = &a.model;
    // Threads: every (trace, vpid, vtid) that ran, published or took.
    let mut threads: Vec<(u32, i64, i64)> = Vec::new();
    threads.extend(a.runs.iter().map(|LinkedRun { run: r, .. }| {
        let k = a.slots[r.slot()];
        (k.0, k.1, r.vtid as i64)
    }));
    threads.extend(a.pubs.iter().map(|LinkedPublication { publication: p, .. }| (p.trace, p.vpid, p.vtid)));
    threads.extend(a.takes.iter().map(|LinkedTake { take: t, .. }| (t.trace, t.vpid, t.vtid)));
    threads.sort_unstable();
    threads.dedup();
    let mut procs: Vec<(u32, i64)> = threads.iter().map(|t| (t.0, t.1)).collect();
    procs.dedup();
    // Process ids first, so that a main thread (tid = pid) gets its process's id.
    let pids: Vec<i64> = procs.iter().map(|&(t, p)| ids.get(t, p)).collect();
    let mut uuid = 0u64;
    let mut proc_uuid: HashMap<(u32, i64), u64> = HashMap::new();
    for (&(t, vpid), &pid) in procs.iter().zip(&pids) {
        uuid += 1;
        proc_uuid.insert((t, vpid), uuid);
        let p = m.processes.get(&(t, vpid));
        let name = match p {
            Some(p) if !p.host.is_empty() && a.model.processes.values().any(|q| q.host != p.host) => {
                format!("{} ({})", p.procname, p.host)
            }
            Some(p) => p.procname.clone(),
            None => String::new(),
        };
        w.packet(machine(t), None, |pk, _| {
            pk.msg(PKT_TRACK_DESCRIPTOR, |d| {
                d.uint(TD_UUID, uuid);
                d.msg(TD_PROCESS, |pd| {
                    pd.int(PD_PID, pid);
                    if !name.is_empty() {
                        pd.bytes(PD_PROCESS_NAME, name.as_bytes());
                    }
                });
            });
        })?;
        stats.processes += 1;
    }
    let mut thread_uuid: HashMap<(u32, i64, i64), (u64, u32)> = HashMap::new();
    for &(t, vpid, vtid) in &threads {
        uuid += 1;
        thread_uuid.insert((t, vpid, vtid), (uuid, machine(t)));
        let (pid, tid) = (ids.get(t, vpid), ids.get(t, vtid));
        let parent = proc_uuid[&(t, vpid)];
        let name = m.processes.get(&(t, vpid)).map(|p| p.procname.clone()).unwrap_or_default();
        w.packet(machine(t), None, |pk, _| {
            pk.msg(PKT_TRACK_DESCRIPTOR, |d| {
                d.uint(TD_UUID, uuid);
                d.uint(TD_PARENT_UUID, parent);
                d.msg(TD_THREAD, |td| {
                    td.int(THD_PID, pid);
                    td.int(THD_TID, tid);
                    if !name.is_empty() {
                        td.bytes(THD_THREAD_NAME, name.as_bytes());
                    }
                });
            });
        })?;
        stats.threads += 1;
    }
    // A counter track per topic with matched messages.
    let mut topic_uuid: HashMap<&str, (u64, u32)> = HashMap::new();
    let mut topics: Vec<&str> = a.flows.iter().map(|f| &*f.topic).collect();
    topics.sort_unstable();
    topics.dedup();
    for t in topics {
        uuid += 1;
        topic_uuid.insert(t, (uuid, 0));
        let name = format!("{t} latency");
        w.packet(0, None, |pk, _| {
            pk.msg(PKT_TRACK_DESCRIPTOR, |d| {
                d.uint(TD_UUID, uuid);
                d.bytes(TD_NAME, name.as_bytes());
                d.msg(TD_COUNTER, |c| c.uint(CD_UNIT, UNIT_TIME_NS));
            });
        })?;
    }
    Ok((thread_uuid, topic_uuid))
}

/// Everything in time order; at one time, ends before begins before instants.
fn items(a: &Analysis) -> Vec<(i64, Item)> {
    let mut items: Vec<(i64, Item)> =
        Vec::with_capacity(2 * a.runs.len() + a.pubs.len() + a.takes.len() + a.flows.len());
    for (i, LinkedRun { run: r, .. }) in a.runs.iter().enumerate() {
        items.push((r.start, Item::Begin(i as u32)));
        if let Some(e) = r.end() {
            items.push((e, Item::End(i as u32)));
        }
    }
    items.extend(a.pubs.iter().enumerate().map(|(i, p)| (p.publication.ts, Item::Publish(i as u32))));
    items.extend(a.takes.iter().enumerate().map(|(i, t)| (t.take.ts, Item::Take(i as u32))));
    for (i, f) in a.flows.iter().enumerate() {
        let k = &a.takes[f.take as usize].take;
        let at = k.run.map_or(k.ts, |r| a.runs[r as usize].run.start);
        items.push((at, Item::Latency(i as u32)));
    }
    items.sort_unstable();
    items
}

/// Writes the analysis as a Perfetto trace.
pub fn write(a: &Analysis, out: impl Write) -> io::Result<PerfettoStats> {
    let m = &a.model;
    let (machine_of, machines) = machines(a);
    let mut w = Writer { out, bytes: 0, seqs: (0..machines.len().max(1)).map(|_| Sequence::default()).collect() };
    let mut stats = PerfettoStats::default();
    let mut ids = Ids::default();
    // Several hosts: each machine named.
    if machines.len() > 1 {
        for (i, host) in machines.iter().enumerate() {
            w.packet(i as u32, None, |pk, _| pk.msg(PKT_SYSTEM_INFO, |si| si.bytes(SI_MACHINE_NAME, host.as_bytes())))?;
        }
    }
    stats.machines = machines.len().max(1) as u64;

    let (thread_uuid, topic_uuid) = tracks(a, &mut w, &machine_of, &mut ids, &mut stats)?;

    // Callbacks by key, for the slices' names.
    let by_key: HashMap<(u32, i64, u64), &rostrace_analysis::CallbackReport> =
        a.report.callbacks.iter().map(|c| ((c.trace, c.vpid, c.address), c)).collect();
    let slice_name = |run: u32| -> (String, Option<&rostrace_analysis::CallbackReport>, u64) {
        let k = a.slots[a.runs[run as usize].run.slot()];
        let c = by_key.get(&k).copied();
        let name = match c {
            Some(c) => {
                let owner = match (&c.topic, c.timer_period_ns) {
                    (Some(t), _) => format!("{} {t}", c.kind),
                    (None, Some(p)) => format!("timer {}", period(p)),
                    _ => c.kind.to_string(),
                };
                if c.node.is_empty() {
                    owner
                } else {
                    format!("{} {owner}", c.node)
                }
            }
            None => format!("callback {:#x}", k.2),
        };
        (name, c, k.2)
    };

    // Flows: ids from 1, on the publication, the take and the callback run.
    let mut pub_flows: HashMap<u32, Vec<u64>> = HashMap::new();
    let mut take_flow: HashMap<u32, u64> = HashMap::new();
    let mut run_flows: HashMap<u32, Vec<u64>> = HashMap::new();
    for (i, f) in a.flows.iter().enumerate() {
        let id = i as u64 + 1;
        pub_flows.entry(f.publication).or_default().push(id);
        take_flow.insert(f.take, id);
        if let Some(r) = a.takes[f.take as usize].take.run {
            run_flows.entry(r).or_default().push(id);
        }
    }
    stats.flows = a.flows.len() as u64;

    let items = items(a);

    let none: &[u64] = &[];
    for (ts, item) in items {
        match item {
            Item::Begin(i) => {
                let r = &a.runs[i as usize].run;
                let k = a.slots[r.slot()];
                let track = thread_uuid[&(k.0, k.1, r.vtid as i64)];
                let (name, c, address) = slice_name(i);
                let mut ann = vec![("callback", Ann::Pointer(address))];
                if let Some(c) = c {
                    if !c.symbol.is_empty() {
                        ann.push(("symbol", Ann::Str(&c.symbol)));
                    }
                }
                if r.intra() {
                    ann.push(("intra_process", Ann::Bool(true)));
                }
                let term = run_flows.get(&i).map_or(none, Vec::as_slice);
                w.event(ts, TYPE_SLICE_BEGIN, track, Some(&name), &ann, &[], term, None)?;
                stats.slices += 1;
            }
            Item::End(i) => {
                let r = &a.runs[i as usize].run;
                let k = a.slots[r.slot()];
                let track = thread_uuid[&(k.0, k.1, r.vtid as i64)];
                w.event(ts, TYPE_SLICE_END, track, None, &[], &[], &[], None)?;
            }
            Item::Publish(i) => {
                let LinkedPublication { publication: p, topic } = &a.pubs[i as usize];
                let track = thread_uuid[&(p.trace, p.vpid, p.vtid)];
                let name = format!("publish {}", topic.as_deref().unwrap_or("?"));
                let mut ann = vec![("message", Ann::Pointer(p.message))];
                if let Some(s) = p.source_ts() {
                    ann.push(("source_timestamp", Ann::Int(s)));
                }
                let flows = pub_flows.get(&i).map_or(none, Vec::as_slice);
                w.event(ts, TYPE_INSTANT, track, Some(&name), &ann, flows, &[], None)?;
                stats.instants += 1;
            }
            Item::Take(i) => {
                let LinkedTake { take: t, subscription: sub } = &a.takes[i as usize];
                let track = thread_uuid[&(t.trace, t.vpid, t.vtid)];
                let topic = sub.map(|s| m.subscriptions.get(s).topic.as_str()).unwrap_or("?");
                let name = format!("take {topic}");
                let mut ann = vec![("message", Ann::Pointer(t.message))];
                if t.source_ts != 0 {
                    ann.push(("source_timestamp", Ann::Int(t.source_ts)));
                }
                let f = take_flow.get(&i).copied();
                let (flows, term) = match (f, t.run) {
                    (Some(f), Some(_)) => (vec![f], vec![]),
                    (Some(f), None) => (vec![], vec![f]),
                    (None, _) => (vec![], vec![]),
                };
                w.event(ts, TYPE_INSTANT, track, Some(&name), &ann, &flows, &term, None)?;
                stats.instants += 1;
            }
            Item::Latency(i) => {
                let f = &a.flows[i as usize];
                let v = f.pub_to_callback_ns.unwrap_or(f.pub_to_take_ns);
                w.event(ts, TYPE_COUNTER, topic_uuid[&*f.topic], None, &[], &[], &[], Some(v))?;
                stats.counter_values += 1;
            }
        }
    }
    w.out.flush()?;
    stats.bytes = w.bytes;
    Ok(stats)
}

/// The machine of each trace (0: Perfetto's host machine) and each machine's host name: the
/// reference host of the clocks' alignment first (else the first host), the others in order.
fn machines(a: &Analysis) -> (Vec<u32>, Vec<String>) {
    let mut machines: Vec<String> = Vec::new();
    if let Some(r) = a.report.hosts.iter().find(|h| h.source == rostrace_analysis::hosts::ClockSource::Reference) {
        machines.push(r.host.clone());
    }
    let of = a
        .traces
        .iter()
        .map(|(_, h)| {
            // (The alignment names a host without a name so.)
            if h.is_empty() {
                rostrace_analysis::hosts::UNNAMED
            } else {
                h.as_str()
            }
        })
        .map(|h| match machines.iter().position(|m| m == h) {
            Some(i) => i as u32,
            None => {
                machines.push(h.to_string());
                machines.len() as u32 - 1
            }
        })
        .collect();
    (of, machines)
}

/// A timer period, readable: `100 ms`, `33.3 ms`, `1 s`.
fn period(ns: i64) -> String {
    if ns % 1_000_000_000 == 0 {
        format!("{} s", ns / 1_000_000_000)
    } else if ns % 1_000_000 == 0 {
        format!("{} ms", ns / 1_000_000)
    } else {
        format!("{:.1} ms", ns as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protobuf_encoding() {
        let mut p = Pb::default();
        p.uint(1, 150);
        assert_eq!(p.0, [0x08, 0x96, 0x01]);
        let mut p = Pb::default();
        p.int(4, -1);
        assert_eq!(p.0, [0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        let mut p = Pb::default();
        p.msg(2, |m| m.bytes(2, b"ab"));
        assert_eq!(p.0, [0x12, 0x04, 0x12, 0x02, b'a', b'b']);
        let mut p = Pb::default();
        p.fixed64(47, 1);
        assert_eq!(p.0, [0xf9, 0x02, 1, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn ids_stay_apart_across_traces() {
        let mut ids = Ids::default();
        assert_eq!(ids.get(0, 100), 100);
        assert_eq!(ids.get(0, 100), 100);
        let other = ids.get(1, 100);
        assert!(other > 1 << 22);
        assert_eq!(ids.get(1, 100), other);
        assert_eq!(ids.get(1, 101), 101);
    }
}

//! Messages: a publication followed across the layers of its thread (rclcpp, rcl, rmw, DDS:
//! one [`Publication`] whatever the layers the trace has), takes (rmw, CARET's dispatches,
//! intra-process ring buffers), each linked to the callback run it happens in or leads to.
//! Runs after [`super::callbacks`] on `callback_start`, whose run it links the pending take to.

use crate::collections::{HashMap, PerThread};
use crate::events::{ClassInfo, Kind, F};
use crate::handler::At;
use crate::model::Key;
use crate::tables::{Collected, Layer, Publication, Take};
use rostrace_ctf::Event;

/// What a thread is in the middle of.
#[derive(Debug, Default)]
struct Thread {
    /// Its last publication (the next layer's event completes it).
    last_pub: Option<u32>,
    /// A publication whose DDS write happens before the thread's next event.
    awaiting_next: Option<u32>,
    /// A take whose callback run has not started yet.
    pending_take: Option<u32>,
}

/// The publications and takes builder.
#[derive(Debug, Default)]
pub(crate) struct Messages {
    threads: PerThread<Thread>,
    /// Threads whose `awaiting_next` is set: none most of the time, when no thread is looked
    /// up before each event.
    awaiting: usize,
    intra_by_message: HashMap<Key, u32>,
    ring_slots: HashMap<(u32, i64, u64, u64), u32>,
}

impl Messages {
    /// Whether it handles events of `kind`.
    pub(crate) fn wants(kind: Kind) -> bool {
        use Kind::*;
        matches!(
            kind,
            CallbackStart
                | RclcppPublish
                | RclcppIntraPublish
                | RclPublish
                | RmwPublish
                | DdsWrite
                | DdsBindAddrToStamp
                | RmwTake
                | DispatchSubscription
                | DispatchIntra
                | RingEnqueue
                | RingDequeue
        )
    }

    /// Before any event of thread `(t, vpid, vtid)` at `ts`: the end of a DDS write's window.
    #[inline]
    pub(crate) fn before(&mut self, c: &mut Collected, t: u32, vpid: i64, vtid: i64, ts: i64) {
        if self.awaiting == 0 {
            return;
        }
        if let Some(p) = self.take_awaiting((t, vpid, vtid)) {
            c.pubs[p as usize].set(Layer::After, ts);
        }
    }

    /// The publication thread `key` awaits its next event for, no longer awaited.
    fn take_awaiting(&mut self, key: (u32, i64, i64)) -> Option<u32> {
        let p = self.threads.get(key).awaiting_next.take()?;
        self.awaiting -= 1;
        Some(p)
    }

    pub(crate) fn event(&mut self, c: &mut Collected, info: &ClassInfo, ev: &Event, at: &At) {
        let (t, vpid, vtid) = (at.trace, at.vpid, at.vtid);
        match info.kind {
            Kind::CallbackStart => {
                // The take this run handles (the callbacks handler has just opened the run).
                if let Some(tk) = self.threads.get((t, vpid, vtid)).pending_take.take() {
                    let cb = info.u(ev, F::Callback);
                    let run = c.running(t, vpid, vtid);
                    let take = &mut c.takes[tk as usize];
                    if take.callback == 0 || take.callback == cb {
                        take.run = run;
                    }
                }
            }
            Kind::RclcppPublish
            | Kind::RclcppIntraPublish
            | Kind::RclPublish
            | Kind::RmwPublish
            | Kind::DdsWrite
            | Kind::DdsBindAddrToStamp => self.publishing(c, info, ev, at),
            _ => self.receiving(c, info, ev, at),
        }
    }

    /// The publishing side: a message from rclcpp down to DDS.
    fn publishing(&mut self, c: &mut Collected, info: &ClassInfo, ev: &Event, at: &At) {
        let (t, vpid, vtid, ts) = (at.trace, at.vpid, at.vtid, at.ts);
        let key = |a: u64| (t, vpid, a);
        match info.kind {
            Kind::RclcppPublish | Kind::RclcppIntraPublish => {
                let intra = info.kind == Kind::RclcppIntraPublish;
                let mut p = Publication {
                    publisher: info.u(ev, F::PublisherHandle),
                    message: info.u(ev, F::Message),
                    intra,
                    ..new_pub(t, vpid, vtid, ts)
                };
                p.set(Layer::Rclcpp, ts);
                let id = self.push_pub(c, p);
                if intra {
                    self.intra_by_message.insert(key(info.u(ev, F::Message)), id);
                }
            }
            Kind::RclPublish => {
                let publisher = info.u(ev, F::PublisherHandle);
                let msg = info.u(ev, F::Message);
                match self.last_pub(c, t, vpid, vtid, |p| {
                    !p.has(Layer::Rcl) && !p.intra && !p.has(Layer::Rmw) && !p.has(Layer::Dds)
                }) {
                    Some(id) => {
                        let p = &mut c.pubs[id as usize];
                        p.set(Layer::Rcl, ts);
                        p.publisher = publisher;
                    }
                    None => {
                        let mut p = Publication { publisher, message: msg, ..new_pub(t, vpid, vtid, ts) };
                        p.set(Layer::Rcl, ts);
                        self.push_pub(c, p);
                    }
                }
            }
            Kind::RmwPublish => {
                let rmw = info.u(ev, F::RmwPublisherHandle);
                let source = info.i(ev, F::Timestamp);
                let id =
                    match self.last_pub(c, t, vpid, vtid, |p| !p.has(Layer::Rmw) && !p.intra && !p.has(Layer::Dds)) {
                        Some(id) => id,
                        None => self
                            .push_pub(c, Publication { message: info.u(ev, F::Message), ..new_pub(t, vpid, vtid, ts) }),
                    };
                let p = &mut c.pubs[id as usize];
                p.set(Layer::Rmw, ts);
                if rmw != 0 {
                    p.rmw_publisher = rmw;
                }
                if let Some(s) = source {
                    p.set(Layer::Source, s);
                }
                if self.threads.get((t, vpid, vtid)).awaiting_next.replace(id).is_none() {
                    self.awaiting += 1;
                }
            }
            Kind::DdsWrite => {
                // dds:write(writer, data, timestamp), CARET dds_write(message [, rmw_publisher_handle, timestamp]).
                let writer = info.u(ev, F::Writer);
                let source = info.i(ev, F::Timestamp);
                let id = match self.last_pub(c, t, vpid, vtid, |p| !p.has(Layer::Dds) && !p.intra) {
                    Some(id) => id,
                    None => self.push_pub(c, new_pub(t, vpid, vtid, ts)),
                };
                let p = &mut c.pubs[id as usize];
                p.set(Layer::Dds, ts);
                p.writer = writer;
                if info.has(F::Message) {
                    p.message = info.u(ev, F::Message);
                }
                let rmw = info.u(ev, F::RmwPublisherHandle);
                if rmw != 0 {
                    p.rmw_publisher = rmw;
                }
                if let Some(s) = source {
                    p.set(Layer::Source, s);
                }
                self.take_awaiting((t, vpid, vtid));
            }
            Kind::DdsBindAddrToStamp => {
                let addr = info.u(ev, F::Addr);
                let stamp = info.u(ev, F::SourceStamp) as i64;
                if let Some(id) = self.last_pub(c, t, vpid, vtid, |p| {
                    !p.has(Layer::Source) && (addr == 0 || p.message == addr || p.has(Layer::Dds))
                }) {
                    c.pubs[id as usize].set(Layer::Source, stamp);
                }
            }
            _ => {}
        }
    }

    /// The receiving side: takes, CARET's dispatch, the intra-process ring buffer.
    fn receiving(&mut self, c: &mut Collected, info: &ClassInfo, ev: &Event, at: &At) {
        let (t, vpid, vtid, ts) = (at.trace, at.vpid, at.vtid, at.ts);
        let key = |a: u64| (t, vpid, a);
        match info.kind {
            Kind::RmwTake => {
                let taken = info.u(ev, F::Taken) != 0;
                let take = Take {
                    trace: t,
                    vpid,
                    vtid,
                    rmw_subscription: info.u(ev, F::RmwSubscriptionHandle),
                    message: info.u(ev, F::Message),
                    ts,
                    source_ts: info.i(ev, F::SourceTimestamp).unwrap_or(0),
                    taken,
                    ..Default::default()
                };
                let id = c.push_take(take);
                if taken {
                    self.threads.get((t, vpid, vtid)).pending_take = Some(id);
                }
            }
            Kind::RclTake | Kind::RclcppTake => {}
            Kind::DispatchSubscription => {
                let take = Take {
                    trace: t,
                    vpid,
                    vtid,
                    callback: info.u(ev, F::Callback),
                    message: info.u(ev, F::Message),
                    ts,
                    source_ts: info.u(ev, F::SourceStamp) as i64,
                    taken: true,
                    ..Default::default()
                };
                let id = c.push_take(take);
                self.threads.get((t, vpid, vtid)).pending_take = Some(id);
            }
            Kind::DispatchIntra => {
                let msg = info.u(ev, F::Message);
                let take = Take {
                    trace: t,
                    vpid,
                    vtid,
                    callback: info.u(ev, F::Callback),
                    message: msg,
                    ts,
                    taken: true,
                    intra: true,
                    intra_pub: self.intra_by_message.get(&key(msg)).copied(),
                    ..Default::default()
                };
                let id = c.push_take(take);
                self.threads.get((t, vpid, vtid)).pending_take = Some(id);
            }
            Kind::RingEnqueue => {
                let (buf, idx) = (info.u(ev, F::Buffer), info.u(ev, F::Index));
                // One enqueue per subscription's buffer the message goes to (a shared_ptr for the
                // ones that share it, a copy for each that takes ownership): all are its.
                if let Some(id) = self.last_pub(c, t, vpid, vtid, |p| p.intra) {
                    c.pubs[id as usize].ring.get_or_insert((buf, idx));
                    self.ring_slots.insert((t, vpid, buf, idx), id);
                }
            }
            Kind::RingDequeue => {
                let (buf, idx) = (info.u(ev, F::Buffer), info.u(ev, F::Index));
                let pub_id = self.ring_slots.remove(&(t, vpid, buf, idx));
                let take = Take {
                    trace: t,
                    vpid,
                    vtid,
                    ts,
                    taken: true,
                    intra: true,
                    intra_pub: pub_id,
                    message: buf,
                    ..Default::default()
                };
                let id = c.push_take(take);
                self.threads.get((t, vpid, vtid)).pending_take = Some(id);
            }
            _ => {}
        }
    }

    fn push_pub(&mut self, c: &mut Collected, mut p: Publication) -> u32 {
        p.set_in_run(c.running(p.trace, p.vpid, p.vtid));
        let thread = (p.trace, p.vpid, p.vtid);
        let id = c.push_pub(p);
        self.threads.get(thread).last_pub = Some(id);
        id
    }

    fn last_pub(
        &mut self,
        c: &Collected,
        t: u32,
        vpid: i64,
        vtid: i64,
        ok: impl Fn(&Publication) -> bool,
    ) -> Option<u32> {
        let id = self.threads.get((t, vpid, vtid)).last_pub?;
        ok(&c.pubs[id as usize]).then_some(id)
    }
}

fn new_pub(t: u32, vpid: i64, vtid: i64, ts: i64) -> Publication {
    Publication { trace: t, vpid, vtid, ts, ..Default::default() }
}

//! The ROS 2 core of the pass: three handlers, each declaring the event kinds it handles, run
//! in this order on an event: [`objects`] (initialization events → the [`Model`](crate::model::Model)),
//! [`callbacks`] (callback runs, and what each thread runs now), [`messages`] (publications
//! across layers and takes, linked to the runs). They fill [`Collected`], which every other
//! [`Handler`](crate::Handler) reads through its [`Context`](crate::Context).

pub(crate) mod callbacks;
pub(crate) mod messages;
pub(crate) mod objects;

use crate::events::{ClassInfo, Kind};
use crate::handler::At;
use crate::tables::Collected;
use rostrace_ctf::Event;

pub(crate) const OBJECTS: u8 = 1;
const CALLBACKS: u8 = 2;
const MESSAGES: u8 = 4;

/// The core handlers.
#[derive(Debug, Default)]
pub(crate) struct Core {
    objects: objects::Objects,
    callbacks: callbacks::Callbacks,
    messages: messages::Messages,
}

impl Core {
    /// The core handlers that want events of `kind`, as a set of bits (resolved once per class).
    pub(crate) fn route(kind: Kind) -> u8 {
        let mut r = 0;
        if objects::Objects::wants(kind) {
            r |= OBJECTS;
        }
        if callbacks::Callbacks::wants(kind) {
            r |= CALLBACKS;
        }
        if messages::Messages::wants(kind) {
            r |= MESSAGES;
        }
        r
    }

    /// Before any event of a thread.
    #[inline]
    pub(crate) fn before(&mut self, c: &mut Collected, at: &At) {
        self.messages.before(c, at.trace, at.vpid, at.vtid, at.ts);
    }

    /// One event, to the core handlers in `route`.
    #[inline]
    pub(crate) fn event(&mut self, route: u8, c: &mut Collected, info: &ClassInfo, ev: &Event, at: &At) {
        if route & OBJECTS != 0 {
            self.objects.event(c, info, ev, at);
        }
        if route & CALLBACKS != 0 {
            self.callbacks.event(c, info, ev, at);
        }
        if route & MESSAGES != 0 {
            self.messages.event(c, info, ev, at);
        }
    }
}

//! What the pass needs of each trace and class, resolved once before it.

use crate::events::ClassInfo;
use crate::handler::{Handler, TraceInfo};
use crate::ros2::Core;
use rostrace_ctf::TraceSet;

/// What the pass needs of each trace and class, resolved once.
pub(crate) struct Plan {
    pub(super) hosts: Vec<String>,
    pub(super) kernel: Vec<bool>,
    /// Per trace: whether the tracer guessed its ROS 2 distribution (`ros_distro_assumed`).
    pub(super) distro_assumed: Vec<bool>,
    /// Per trace and class: what the ROS 2 core makes of it, and which core handlers want it.
    pub(super) infos: Vec<Vec<Option<(ClassInfo, u8)>>>,
    /// Per trace and class: the handlers that want it, with their tokens.
    pub(super) routes: Vec<Vec<Vec<(usize, u32)>>>,
    /// Per handler: whether it subscribed to a class of the set.
    pub(crate) subscribed: Vec<bool>,
    /// Per trace: the first trace of its UUID, whose part it is ([`TraceSet::identities`]): the
    /// processes, nodes and handles of the parts are one trace's.
    pub(super) identity: Vec<u32>,
    /// Per trace and class, for the traces in parts (empty for a trace of its own): whether the
    /// class is one of those the tracer writes again at the start of each part (see
    /// [`replayed_class`]).
    pub(super) replayed: Vec<Vec<bool>>,
    /// A slice of time of a streamed analysis ([`crate::stream`]), from (inclusive) to
    /// (exclusive): the events, the processes' events, the unmatched callback ends and the
    /// topics' counts are those of this time, the window around it read for what starts in it
    /// to end; the pass stops at the window's end.
    pub(crate) slice: Option<(i64, i64)>,
    /// The runs, publications and takes the pass is made room for at once (a slice's, as many
    /// as the slice before had): grown by doubling, each table would be copied on the way, and
    /// its pages cleared twice.
    pub(crate) room: [usize; 3],
    /// In a slice's pass, where the slice's reading starts: the pass notes the initialization
    /// events it meets ([`crate::tables::Declarations`]).
    pub(crate) declarations: Option<i64>,
    /// What the events before a time declared, which the pass starts from: it is given no event
    /// before that time.
    pub(crate) seed: Option<std::sync::Arc<crate::tables::Seed>>,
    /// The time of which the pass is to keep what the events before it declared
    /// ([`crate::tables::Collected::seed`]): taken before the first event at or after it, or
    /// at the end.
    pub(crate) seed_at: Option<i64>,
}

/// Whether events of the ROS 2 kind `info` are initialization events, which rostrace's tracer
/// writes again at the start of each chunk of a rotated recording: those the analysis builds its
/// model from, the message-link annotations among them.
fn replayed_class(info: Option<&ClassInfo>) -> bool {
    info.is_some_and(|i| i.kind.is_init())
}

impl Plan {
    pub(super) fn new(set: &TraceSet, handlers: &mut [Box<dyn Handler>]) -> Plan {
        let hosts: Vec<String> = set.hosts();
        let kernel: Vec<bool> = set
            .traces
            .iter()
            .map(|t| matches!(t.schema.env("domain"), Some(rostrace_ctf::EnvValue::Str(d)) if d == "kernel"))
            .collect();
        let identity: Vec<u32> = set.identities().into_iter().map(|i| i as u32).collect();
        let mut grouped = vec![false; identity.len()];
        for (ti, &id) in identity.iter().enumerate() {
            if id as usize != ti {
                grouped[ti] = true;
                grouped[id as usize] = true;
            }
        }
        let distro_assumed: Vec<bool> =
            set.traces.iter().map(|t| t.schema.env("ros_distro_assumed").is_some()).collect();
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
                    index: identity[ti],
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
        let replayed = set
            .traces
            .iter()
            .zip(&infos)
            .zip(&grouped)
            .map(|((t, infos), &g)| match g {
                true => t.schema.per_class(|ec| replayed_class(infos[ec.index].as_ref().map(|(i, _)| i))),
                false => Vec::new(),
            })
            .collect();
        Plan {
            hosts,
            kernel,
            distro_assumed,
            infos,
            routes,
            subscribed,
            identity,
            replayed,
            slice: None,
            room: [0; 3],
            declarations: None,
            seed: None,
            seed_at: None,
        }
    }
}

//! Members of structures found by name once per type, for the fields a reader reads on every
//! event (a process id, a thread id): the search is not repeated event by event.

use crate::types::StructType;
use crate::value::StructRef;

/// The positions of the members `names` in structure types, found by name once per type (by
/// its address: the types of one open trace set), for a field read on every event.
pub struct Positions<const N: usize> {
    names: [&'static str; N],
    known: Vec<(usize, [Option<usize>; N])>,
}

impl<const N: usize> Positions<N> {
    /// Positions of `names`, found as types come.
    pub fn new(names: [&'static str; N]) -> Self {
        Positions { names, known: Vec::new() }
    }

    /// Where each name is in `ty`.
    #[inline]
    pub fn of(&mut self, ty: &StructType) -> [Option<usize>; N] {
        let key = ty as *const StructType as usize;
        if let Some((_, at)) = self.known.iter().find(|(k, _)| *k == key) {
            return *at;
        }
        let at = self.names.map(|n| ty.index_of(n));
        self.known.push((key, at));
        at
    }
}

/// [`Positions`] per trace of a set (each trace has its own few types: a set of many traces is
/// not searched through on every event), and the integers at them.
pub struct TracePositions<const N: usize> {
    names: [&'static str; N],
    per_trace: Vec<Positions<N>>,
    /// The last trace and type asked about: a stream's events share one context type, read on
    /// every event.
    last: Option<Last<N>>,
}

/// [`TracePositions`]' last trace and type.
#[derive(Clone, Copy)]
struct Last<const N: usize> {
    trace: usize,
    /// The type, by address.
    ty: usize,
    /// Each name's member.
    at: [Option<usize>; N],
    /// Each name's node, when the type has a fixed layout and the member is an integer (else
    /// the member is read by [`StructRef::u64_at`]).
    node: [Option<usize>; N],
}

impl<const N: usize> TracePositions<N> {
    /// Positions of `names`, found as traces and types come.
    pub fn new(names: [&'static str; N]) -> Self {
        TracePositions { names, per_trace: Vec::new(), last: None }
    }

    /// Where each name is in `ty`, a type of trace `trace`.
    #[inline]
    pub fn of(&mut self, trace: usize, ty: &StructType) -> [Option<usize>; N] {
        if trace >= self.per_trace.len() {
            let names = self.names;
            self.per_trace.resize_with(trace + 1, || Positions::new(names));
        }
        self.per_trace[trace].of(ty)
    }

    /// Each named member of `s` (a structure of trace `trace`) that is an integer, as
    /// [`StructRef::u64_at`] reads it.
    #[inline]
    pub fn u64s(&mut self, trace: usize, s: &StructRef<'_>) -> [Option<u64>; N] {
        let ty = s.ty();
        let key = ty as *const StructType as usize;
        let last = match self.last {
            Some(l) if l.trace == trace && l.ty == key => l,
            _ => {
                let at = self.of(trace, ty);
                let node = at.map(|a| a.filter(|&i| ty.is_int(i)).and_then(|i| ty.fixed_node(i)));
                let l = Last { trace, ty: key, at, node };
                self.last = Some(l);
                l
            }
        };
        std::array::from_fn(|k| match (last.node[k], last.at[k]) {
            // (As `u64_at` reads it, when the structure's nodes are there.)
            (Some(n), _) if !s.nodes.is_empty() => s.nodes.get(n).map(|n| n.bits),
            (_, Some(i)) => s.u64_at(i),
            (_, None) => None,
        })
    }
}

//! The pass shared out by trace over several threads, when the handlers allow it.

use super::merge::merge;
use super::pass::{unused_names, Pass};
use super::plan::Plan;
use crate::handler::{At, Context, Handler, Handlers, Part, TraceInfo};
use crate::tables::Collected;
use crate::window::Window;
use rostrace_ctf::TraceSet;
use std::any::Any;

/// The pass shared out by trace on `jobs` threads, when it can be; the handlers' parts merged
/// into `handlers`.
pub(super) fn collect_split(
    handlers: &mut Handlers,
    jobs: usize,
    set: &TraceSet,
    window: Window,
    plan: &Plan,
    progress: &mut impl FnMut(u64, u64),
) -> Option<Collected> {
    let threads = rostrace_threads::threads(jobs);
    if threads < 2 || set.traces.len() < 2 || plan.kernel.contains(&true) || plan.slice.is_some() {
        return None;
    }
    let split = |hs: &[Box<dyn Handler>]| -> Option<Vec<Box<dyn Handler + Send>>> {
        let mut v: Vec<Box<dyn Handler + Send>> = Vec::new();
        for (hi, h) in hs.iter().enumerate() {
            match h.split() {
                Some(c) => v.push(c),
                None if !plan.subscribed[hi] => v.push(Box::new(Idle)),
                None => return None,
            }
        }
        Some(v)
    };
    // The traces shared out, the largest first, each to the part with the fewest bytes; the
    // parts of one trace (see `TraceSet::identities`) together.
    let mut groups: Vec<(u64, Vec<usize>)> = Vec::new();
    let mut group_of = crate::collections::HashMap::default();
    for (ti, t) in set.traces.iter().enumerate() {
        let g = *group_of.entry(plan.identity[ti]).or_insert_with(|| {
            groups.push((0, Vec::new()));
            groups.len() - 1
        });
        groups[g].0 += t.bytes();
        groups[g].1.push(ti);
    }
    if groups.len() < 2 {
        return None;
    }
    let parts = threads.min(groups.len());
    groups.sort_by_key(|(n, tis)| (std::cmp::Reverse(*n), tis[0]));
    let mut load = vec![0u64; parts];
    let mut traces: Vec<Vec<usize>> = vec![Vec::new(); parts];
    for (n, tis) in groups {
        let p = (0..parts).min_by_key(|&p| (load[p], p)).unwrap_or(0);
        load[p] += n;
        traces[p].extend(tis);
    }
    for t in &mut traces {
        t.sort_unstable();
    }
    let mut copies = Vec::new();
    for _ in 0..parts {
        copies.push(split(&handlers.0)?);
    }
    // The window starts from the first event of the set.
    let bounds = set.first_time().map(|t| window.resolve(t.unwrap_or(0)));
    let done: Vec<std::sync::atomic::AtomicU64> = (0..parts).map(|_| Default::default()).collect();
    let total = set.total_bytes();
    let run = |me: usize, handlers: &mut Vec<Box<dyn Handler + Send>>, progress: &mut dyn FnMut(u64, u64)| {
        set.read().traces(&traces[me]).run(|events| {
            let mut pass = Pass::new(plan, window, true);
            pass.bounds = bounds;
            let mut read = 0u64;
            loop {
                // (The event handled where it was returned, not moved out of it: see `Pass::handle_item`.)
                match events.next_ordered() {
                    None => break,
                    Some((order, Ok(ref ev))) => pass.event(ev, order, None, handlers),
                    Some((_, Err(_))) => continue,
                }
                read += 1;
                if read.is_multiple_of(65536) {
                    done[me].store(events.progress().0, std::sync::atomic::Ordering::Relaxed);
                    progress(done.iter().map(|d| d.load(std::sync::atomic::Ordering::Relaxed)).sum(), total);
                }
            }
            (pass.into_part(), events.placed_errors(), events.placed_losses())
        })
    };
    let mut rest = copies.split_off(1);
    let mut mine = copies.pop()?;
    let outs = std::thread::scope(|s| {
        let hs: Vec<_> = rest
            .iter_mut()
            .enumerate()
            .map(|(k, hs)| {
                let run = &run;
                rostrace_threads::spawn_off(s, k + 1, move || run(k + 1, hs, &mut |_, _| {}))
            })
            .collect();
        rostrace_threads::let_started_move();
        let mut outs = vec![run(0, &mut mine, progress)];
        for h in hs {
            outs.push(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        outs
    });
    // Errors and losses in the order of one pass: by their places in the merge of the set.
    let mut parts_out = Vec::new();
    let (mut errors, mut losses) = (Vec::new(), Vec::new());
    for (part, e, l) in outs {
        parts_out.push(part);
        errors.extend(e);
        losses.extend(l);
    }
    errors.sort_by_key(|e| e.0);
    losses.sort_by_key(|l| l.0);
    let (mut c, maps, unused) = merge(parts_out);
    c.errors = errors.iter().map(|e| (&e.1).into()).collect();
    for (_, l) in &losses {
        c.add_loss(l);
    }
    if !window.is_all() {
        c.window = bounds;
    }
    c.unused_events = unused_names(set, plan, &unused);
    c.model.resolve_owners();
    for (p, hs) in std::iter::once(mine).chain(rest).enumerate() {
        for (hi, h) in hs.into_iter().enumerate() {
            if plan.subscribed[hi] {
                let part: Box<dyn Any> = h;
                handlers.0[hi].merge(part, &Part { runs: &maps[p] });
            }
        }
    }
    Some(c)
}

/// A handler that has nothing to do (in a part, for a registered handler with no events).
struct Idle;

impl Handler for Idle {
    fn subscribe(&mut self, _trace: &TraceInfo<'_>, _class: &rostrace_ctf::EventClass) -> Option<u32> {
        None
    }
    fn event(&mut self, _token: u32, _ev: &rostrace_ctf::Event<'_>, _at: &At, _cx: &Context<'_>) {}
}

//! The parts of a split pass merged into one pass's results.

use super::pass::PartOut;
use crate::collections::HashMap;
use crate::model::{interleave, Key, Model};
use crate::tables::{Collected, Orders, Publication, Take};

/// The parts' results as one pass's: runs, publications, takes and the model's objects in the
/// order of their events, their links mapped, callback handles' slots in the order of their
/// first runs, counts added up. Also each part's map from its run indices to the whole's, and
/// the unused events' counts.
#[allow(clippy::type_complexity)]
pub(super) fn merge(mut parts: Vec<PartOut>) -> (Collected, Vec<Vec<u32>>, Vec<Vec<u64>>) {
    let mut c = Collected::default();
    let orders: Vec<Orders> = parts.iter_mut().map(|p| p.c.orders.take().unwrap_or_default()).collect();
    // Runs, and the slots in the order of their first runs.
    let of = |f: fn(&Orders) -> &Vec<u128>| orders.iter().map(|o| f(o).as_slice()).collect::<Vec<_>>();
    let mut runs: Vec<Vec<u32>> = parts.iter().map(|p| vec![0; p.c.runs.len()]).collect();
    let mut slot_of: HashMap<Key, u32> = HashMap::default();
    c.runs.reserve(parts.iter().map(|p| p.c.runs.len()).sum());
    interleave(&of(|o| &o.runs), |p, l| {
        runs[p][l] = c.runs.len() as u32;
        let r = parts[p].c.runs[l];
        let key = parts[p].c.slots[r.slot()];
        let n = c.slots.len() as u32;
        let slot = *slot_of.entry(key).or_insert(n);
        if slot == n {
            c.slots.push(key);
        }
        c.runs.push(r.with_slot(slot));
    });
    for part in parts.iter_mut() {
        part.c.runs = Vec::new();
    }
    // Publications (each part's given back once merged).
    let mut pubs: Vec<Vec<u32>> = parts.iter().map(|p| vec![0; p.c.pubs.len()]).collect();
    c.pubs.reserve(parts.iter().map(|p| p.c.pubs.len()).sum());
    let mut from: Vec<std::vec::IntoIter<Publication>> =
        parts.iter_mut().map(|p| std::mem::take(&mut p.c.pubs).into_iter()).collect();
    interleave(&of(|o| &o.pubs), |p, l| {
        if let Some(mut x) = from[p].next() {
            pubs[p][l] = c.pubs.len() as u32;
            x.set_in_run(x.in_run().map(|r| runs[p][r as usize]));
            c.pubs.push(x);
        }
    });
    drop(from);
    // Takes.
    c.takes.reserve(parts.iter().map(|p| p.c.takes.len()).sum());
    let mut from: Vec<std::vec::IntoIter<Take>> =
        parts.iter_mut().map(|p| std::mem::take(&mut p.c.takes).into_iter()).collect();
    interleave(&of(|o| &o.takes), |p, _| {
        if let Some(mut x) = from[p].next() {
            x.run = x.run.map(|r| runs[p][r as usize]);
            x.intra_pub = x.intra_pub.map(|q| pubs[p][q as usize]);
            c.takes.push(x);
        }
    });
    drop(from);
    let mut unused: Vec<Vec<u64>> = Vec::new();
    let mut models = Vec::new();
    for (p, part) in parts.iter_mut().enumerate() {
        for (k, v) in part.c.open.drain() {
            c.open.insert(k, v.into_iter().map(|(cb, r)| (cb, runs[p][r as usize])).collect());
        }
        for (k, n) in part.c.unmatched_ends.drain() {
            *c.unmatched_ends.entry(k).or_default() += n;
        }
        c.ros_events += part.c.ros_events;
        c.events += part.n;
        if c.ranges.is_empty() {
            c.ranges = std::mem::take(&mut part.c.ranges);
        } else {
            for (r, x) in c.ranges.iter_mut().zip(&part.c.ranges) {
                (r.0, r.1) = (r.0.min(x.0), r.1.max(x.1));
            }
        }
        if unused.is_empty() {
            unused = std::mem::take(&mut part.unused);
        } else {
            for (u, v) in unused.iter_mut().zip(&part.unused) {
                for (a, b) in u.iter_mut().zip(v) {
                    *a += b;
                }
            }
        }
        models.push(std::mem::take(&mut part.c.model));
    }
    c.model = Model::merge(models);
    c.range = crate::tables::range_of(&c.ranges, |_, ts| ts);
    (c, runs, unused)
}

//! Work spread over threads, results in order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f` of each item, on `jobs` threads (0: one per core), in the items' order.
pub(crate) fn map<T: Send, R: Send>(jobs: usize, items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = ctf::threads(jobs).min(items.len());
    if threads <= 1 {
        return items.into_iter().map(f).collect();
    }
    let slots: Vec<Mutex<(Option<T>, Option<R>)>> = items.into_iter().map(|t| Mutex::new((Some(t), None))).collect();
    let next = AtomicUsize::new(0);
    let run = || loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        let Some(slot) = slots.get(k) else { return };
        let item = slot.lock().ok().and_then(|mut s| s.0.take());
        if let Some(item) = item {
            let r = f(item);
            if let Ok(mut s) = slot.lock() {
                s.1 = Some(r);
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(run);
        }
        run();
    });
    slots.into_iter().filter_map(|m| m.into_inner().ok().and_then(|s| s.1)).collect()
}

//! The scoped threads rostrace's reader and analysis share: how many to use for `jobs`
//! ([`threads`]), threads started off the calling thread's core ([`spawn_off`],
//! [`let_started_move`], [`Origin`]), an ordered parallel map ([`map_in_order`]), and waiting
//! awake for another thread ([`awake`]).

#![deny(missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// How many threads to use when asked for `jobs` (0: all cores).
pub fn threads(jobs: usize) -> usize {
    // (The cores are counted once: each count reads the process's cgroup files.)
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    if jobs > 0 {
        jobs
    } else {
        *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

/// Spawns `f` on a new thread of the scope `s`, the `k`-th (from 1) of the threads the calling
/// thread starts together, so that it begins on another core than the calling thread; call
/// [`let_started_move`] once they are all spawned.
///
/// Linux often queues a new thread on the core of the thread that starts it, though another
/// core is idle: the new thread then waits behind its parent, or preempts it, until the idle
/// core takes one of them over at a load balancing, up to a scheduler tick later (measured:
/// docs/benchmarks.md, "Design measurements"). So a new thread that finds itself on the core
/// of the thread that started it moves to the `k`-th other core it may run on, and may then
/// run anywhere again (it is not pinned).
pub fn spawn_off<'scope, T: Send + 'scope>(
    s: &'scope std::thread::Scope<'scope, '_>,
    k: usize,
    f: impl FnOnce() -> T + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, T> {
    let from = Origin::here();
    s.spawn(move || {
        from.leave(k);
        f()
    })
}

/// Lets the threads just started by [`spawn_off`] that the system queued on this thread's core
/// run, so that they move off it, instead of waiting for this thread's time slice to end.
pub fn let_started_move() {
    #[cfg(target_os = "linux")]
    // SAFETY: sched_yield has no preconditions.
    unsafe {
        libc::sched_yield();
    }
}

/// The core a thread that starts others runs on (Linux; elsewhere nothing is known and nothing
/// moves): for threads started otherwise than by [`spawn_off`], which call
/// [`leave`](Self::leave) first.
#[derive(Clone, Copy)]
pub struct Origin(#[cfg_attr(not(target_os = "linux"), allow(dead_code))] Option<i32>);

impl Origin {
    /// The core the calling thread runs on.
    pub fn here() -> Origin {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: sched_getcpu has no preconditions.
            let c = unsafe { libc::sched_getcpu() };
            Origin((c >= 0).then_some(c))
        }
        #[cfg(not(target_os = "linux"))]
        Origin(None)
    }

    /// Called by the `k`-th (from 1) new thread: when it runs on this core, it moves to the
    /// `k`-th other core it may run on (counting on from this one), then may run on all of
    /// them again.
    pub fn leave(self, k: usize) {
        #[cfg(target_os = "linux")]
        {
            let Some(home) = self.0 else { return };
            if k == 0 || Origin::here().0 != Some(home) {
                return;
            }
            let size = std::mem::size_of::<libc::cpu_set_t>();
            // SAFETY: the sets are plain bit arrays of `size` bytes, read and written by the
            // calls below within it (bits below `8 * size`); the calls concern this thread only.
            unsafe {
                let mut allowed: libc::cpu_set_t = std::mem::zeroed();
                if libc::sched_getaffinity(0, size, &mut allowed) != 0 {
                    return;
                }
                let n = 8 * size;
                let others = (1..n).map(|j| (home as usize + j) % n).filter(|&c| libc::CPU_ISSET(c, &allowed));
                let count = others.clone().count();
                let Some(to) = others.clone().nth((k - 1) % count.max(1)) else { return };
                let mut one: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(to, &mut one);
                if libc::sched_setaffinity(0, size, &one) != 0 {
                    return;
                }
                // Free again; should the set allowed before no longer be accepted (cores
                // taken offline, a cpuset narrowed meanwhile), every core, which the system
                // narrows to those allowed: the thread is never left on one core.
                if libc::sched_setaffinity(0, size, &allowed) != 0 {
                    let mut all: libc::cpu_set_t = std::mem::zeroed();
                    for c in 0..n {
                        libc::CPU_SET(c, &mut all);
                    }
                    libc::sched_setaffinity(0, size, &all);
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = k;
    }
}

/// `f` of each item, on `jobs` threads (0: one per core) taking the items in turn, the results
/// in the items' order.
pub fn map_in_order<T: Send, R: Send>(jobs: usize, items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = threads(jobs).min(items.len());
    if threads <= 1 {
        return items.into_iter().map(f).collect();
    }
    let slots: Vec<Mutex<(Option<T>, Option<R>)>> = items.into_iter().map(|t| Mutex::new((Some(t), None))).collect();
    let next = AtomicUsize::new(0);
    let run = || {
        while let Some(slot) = slots.get(next.fetch_add(1, Ordering::Relaxed)) {
            let item = slot.lock().ok().and_then(|mut s| s.0.take());
            if let Some(item) = item {
                let r = f(item);
                if let Ok(mut s) = slot.lock() {
                    s.1 = Some(r);
                }
            }
        }
    };
    // The started threads still taking items.
    let busy = AtomicUsize::new(threads - 1);
    std::thread::scope(|s| {
        for k in 1..threads {
            spawn_off(s, k, || {
                // (Counted down even if `f` panics: the panic reaches the caller at the join.)
                let _done = CountDown(&busy);
                run();
            });
        }
        let_started_move();
        run();
        finish_awake(&busy);
    });
    slots.into_iter().filter_map(|m| m.into_inner().ok().and_then(|s| s.1)).collect()
}

/// Counts down `busy` when dropped.
struct CountDown<'a>(&'a AtomicUsize);

impl Drop for CountDown<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

/// Waits awake, for up to [`AWAKE`], until the threads counted by `busy` are done, before the
/// caller joins them: a thread that sleeps at the join wakes long after the last one ended,
/// compared with a read of a small trace (docs/benchmarks.md, "Design measurements").
fn finish_awake(busy: &AtomicUsize) {
    if awake(|| (busy.load(Ordering::Acquire) == 0).then_some(())).is_some() {
        // The threads end right after they count down: a few more turns find them ended.
        for _ in 0..256 {
            std::hint::spin_loop();
        }
    }
}

/// How long a thread waits awake for another before it sleeps: a sleeping thread takes long to
/// wake on virtual machines, and threads that hand work to each other often would each wait for
/// the other (docs/benchmarks.md, "Design measurements").
pub const AWAKE: std::time::Duration = std::time::Duration::from_micros(500);

/// `attempt` again and again, awake, until it gives a result or [`AWAKE`] has passed (`None`:
/// the caller then sleeps until there is one).
pub fn awake<R>(mut attempt: impl FnMut() -> Option<R>) -> Option<R> {
    let start = std::time::Instant::now();
    loop {
        if let Some(r) = attempt() {
            return Some(r);
        }
        if start.elapsed() > AWAKE {
            return None;
        }
        for _ in 0..64 {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cores a thread may run on.
    #[cfg(target_os = "linux")]
    fn allowed() -> Vec<usize> {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: a zeroed set of `size` bytes, filled by the call within its size.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(libc::sched_getaffinity(0, size, &mut set), 0);
            (0..8 * size).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
        }
    }

    /// Threads started by `spawn_off` may run on every core their parent may, whether they
    /// moved or not: none is left pinned. (Each is started many times, so that some start on
    /// their parent's core and move.)
    #[test]
    #[cfg(target_os = "linux")]
    fn started_threads_are_never_left_on_one_core() {
        let parent = allowed();
        for _ in 0..50 {
            let seen: Vec<Vec<usize>> = std::thread::scope(|s| {
                let hs: Vec<_> = (1..=3).map(|k| spawn_off(s, k, allowed)).collect();
                let_started_move();
                hs.into_iter().map(|h| h.join().expect("thread")).collect()
            });
            for cores in seen {
                assert_eq!(cores, parent);
            }
        }
        // A thread on the core of its origin (its own, just taken) moves off it, and may run
        // on every core again after. (It moved at least once in 20 tries: the scheduler may
        // move it between the calls.)
        let mut moved = false;
        for _ in 0..20 {
            let (m, cores) = std::thread::spawn(|| {
                let here = Origin::here();
                here.leave(1);
                (Origin::here().0 != here.0, allowed())
            })
            .join()
            .expect("thread");
            assert_eq!(cores, parent);
            moved |= m;
        }
        assert!(moved || parent.len() < 2, "a thread on its origin's core never moved");
    }

    #[test]
    fn map_in_order_keeps_the_items_order() {
        let items: Vec<u32> = (0..100).collect();
        for jobs in [1, 2, 3, 8] {
            assert_eq!(map_in_order(jobs, items.clone(), |x| x * 2), items.iter().map(|x| x * 2).collect::<Vec<_>>());
        }
    }

    #[test]
    fn map_in_order_passes_a_started_threads_panic_on() {
        // The calling thread waits awake for the others before it joins them: a panic of one
        // of them still reaches the caller (and the wait ends).
        for jobs in [2, 3] {
            let main = std::thread::current().id();
            let elsewhere = std::sync::atomic::AtomicBool::new(false);
            let r = std::panic::catch_unwind(|| {
                map_in_order(jobs, (0..64).collect::<Vec<u32>>(), |x| {
                    if std::thread::current().id() != main {
                        elsewhere.store(true, Ordering::Relaxed);
                        panic!("item {x}");
                    }
                    // (The calling thread holds its item until another thread has taken one.)
                    let start = std::time::Instant::now();
                    while !elsewhere.load(Ordering::Relaxed) && start.elapsed().as_secs() < 10 {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    x
                })
            });
            assert!(elsewhere.load(Ordering::Relaxed), "{jobs} jobs: no started thread took an item");
            assert!(r.is_err(), "{jobs} jobs: the panic of a started thread was lost");
        }
    }
}

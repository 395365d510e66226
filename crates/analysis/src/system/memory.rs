//! Memory use per thread and process over time, as tracetools_analysis's memory handlers count
//! it:
//!
//! - userspace, from LTTng-UST's libc wrapper (`lttng_ust_libc:malloc`, `calloc`, `realloc`,
//!   `memalign`, `posix_memalign`, `free`; `rostrace record --with-memory`): an allocation adds
//!   its size and remembers it by pointer; `free` (and the old pointer of `realloc`) subtracts
//!   the size remembered for the pointer, or nothing when its allocation was not traced;
//!   allocations that returned a null pointer are ignored. One deliberate difference:
//!   tracetools_analysis releases `realloc`'s new pointer and gives the size to the old one
//!   (`in_ptr`), and ignores `realloc(NULL, n)`; here the old block is released and the new one
//!   holds the size;
//! - kernel, from `kmem_mm_page_alloc` / `kmem_mm_page_free`: ± 4096 << `order` bytes.
//!
//! Each change is attributed to the thread that made it; sums per thread and process over time.

use crate::collections::HashMap;
use crate::handler::{At, Context, Fields, Handler, Part, TraceInfo};
use rostrace_ctf::{Event, EventClass};
use serde::Serialize;

/// Page size of the kernel's page allocation events.
pub const PAGE_SIZE: i64 = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ev {
    Malloc,
    Calloc,
    Realloc,
    Memalign,
    PosixMemalign,
    Free,
    PageAlloc,
    PageFree,
}

/// Memory changes of one thread.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ThreadMemory {
    /// Trace index.
    pub trace: u32,
    /// Process (0 when the trace has no vpid context).
    pub vpid: i64,
    /// Thread.
    pub tid: i64,
    /// `userspace` or `kernel`.
    pub kind: &'static str,
    /// Changes counted (tracetools_analysis's memory-difference rows).
    pub changes: u64,
    /// Usage at the end (bytes): the sum of the changes.
    pub final_bytes: i64,
    /// Highest usage (bytes) after any change.
    pub max_bytes: i64,
}

/// (trace, vpid, tid, kernel).
type ThreadKey = (u32, i64, i64, bool);

/// The handler.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    fields: Vec<(Ev, Fields)>,
    /// Size remembered per pointer, per (trace, vpid).
    sizes: HashMap<(u32, i64, u64), i64>,
    /// Per (trace, vpid, tid, kernel): (changes, current, max).
    threads: HashMap<ThreadKey, (u64, i64, i64)>,
    /// Changes per (trace, vpid, kernel) in time order: (ts, bytes).
    pub changes: HashMap<(u32, i64, bool), Vec<(i64, i64)>>,
}

impl Memory {
    fn change(&mut self, at: &At, kernel: bool, bytes: i64) {
        let t = self.threads.entry((at.trace, at.vpid, at.vtid, kernel)).or_insert((0, 0, i64::MIN));
        t.0 += 1;
        t.1 += bytes;
        t.2 = t.2.max(t.1);
        self.changes.entry((at.trace, at.vpid, kernel)).or_default().push((at.ts, bytes));
    }

    /// An allocation of `size` at `ptr` (ignored when `ptr` is null), or its release (`size` 0).
    fn user(&mut self, at: &At, ptr: u64, size: i64) {
        let key = (at.trace, at.vpid, ptr);
        let diff = if size != 0 {
            self.sizes.insert(key, size);
            size
        } else {
            self.sizes.get(&key).map_or(0, |s| -s)
        };
        self.change(at, false, diff);
    }

    /// Per thread, the threads with the highest peak first.
    pub fn threads(&self) -> Vec<ThreadMemory> {
        let mut v: Vec<ThreadMemory> = self
            .threads
            .iter()
            .map(|(&(trace, vpid, tid, kernel), &(changes, cur, max))| ThreadMemory {
                trace,
                vpid,
                tid,
                kind: if kernel { "kernel" } else { "userspace" },
                changes,
                final_bytes: cur,
                max_bytes: max,
            })
            .collect();
        v.sort_by(|a, b| {
            (b.max_bytes.cmp(&a.max_bytes).then(a.tid.cmp(&b.tid)).then(a.kind.cmp(b.kind)))
                .then((a.trace, a.vpid).cmp(&(b.trace, b.vpid)))
        });
        v
    }
}

impl Handler for Memory {
    fn subscribe(&mut self, trace: &TraceInfo<'_>, class: &EventClass) -> Option<u32> {
        let (ev, names): (Ev, &[&str]) = match (trace.kernel, class.name.as_str()) {
            (false, "lttng_ust_libc:malloc") => (Ev::Malloc, &["ptr", "size"]),
            (false, "lttng_ust_libc:calloc") => (Ev::Calloc, &["ptr", "nmemb", "size"]),
            (false, "lttng_ust_libc:realloc") => (Ev::Realloc, &["in_ptr", "ptr", "size"]),
            (false, "lttng_ust_libc:memalign") => (Ev::Memalign, &["ptr", "size"]),
            (false, "lttng_ust_libc:posix_memalign") => (Ev::PosixMemalign, &["out_ptr", "size", "result"]),
            (false, "lttng_ust_libc:free") => (Ev::Free, &["ptr"]),
            (true, "kmem_mm_page_alloc") => (Ev::PageAlloc, &["order"]),
            (true, "kmem_mm_page_free") => (Ev::PageFree, &["order"]),
            _ => return None,
        };
        let f = Fields::of(class, names);
        if !f.all() {
            return None;
        }
        self.fields.push((ev, f));
        Some(self.fields.len() as u32 - 1)
    }

    fn event(&mut self, token: u32, e: &Event<'_>, at: &At, _cx: &Context<'_>) {
        let (ev, f) = &self.fields[token as usize];
        let ev = *ev;
        let (u, i) = ([0, 1].map(|k| f.uint(e, k).unwrap_or(0)), [0, 1, 2].map(|k| f.int(e, k).unwrap_or(0)));
        let u = |k: usize| u[k];
        let i = |k: usize| i[k];
        match ev {
            Ev::Malloc | Ev::Memalign if u(0) != 0 => self.user(at, u(0), i(1)),
            Ev::Calloc if u(0) != 0 => self.user(at, u(0), i(1).saturating_mul(i(2))),
            // The old block (`in_ptr`) is released and the new one (`ptr`) holds `size`;
            // realloc(NULL, n) allocates, realloc(p, 0) releases.
            Ev::Realloc if u(1) != 0 => {
                if u(0) != 0 {
                    self.user(at, u(0), 0);
                }
                self.user(at, u(1), i(2));
            }
            Ev::Realloc if u(0) != 0 && i(2) == 0 => self.user(at, u(0), 0),
            Ev::PosixMemalign if u(0) != 0 && i(2) == 0 => self.user(at, u(0), i(1)),
            Ev::Free if u(0) != 0 => self.user(at, u(0), 0),
            Ev::PageAlloc => self.change(at, true, PAGE_SIZE << i(0).clamp(0, 40)),
            Ev::PageFree => self.change(at, true, -(PAGE_SIZE << i(0).clamp(0, 40))),
            _ => {}
        }
    }

    fn split(&self) -> Option<Box<dyn Handler + Send>> {
        // Its tables, without results.
        Some(Box::new(Memory { fields: self.fields.clone(), ..Default::default() }))
    }

    fn merge(&mut self, part: Box<dyn std::any::Any>, _map: &Part<'_>) {
        if let Ok(p) = part.downcast::<Self>() {
            self.sizes.extend(p.sizes);
            self.threads.extend(p.threads);
            self.changes.extend(p.changes);
        }
    }

    fn shifts(&self) -> bool {
        true
    }

    fn shift(&mut self, by: &crate::ClockShift) {
        for (k, v) in &mut self.changes {
            v.iter_mut().for_each(|c| c.0 = by.time(k.0, c.0));
        }
    }
}

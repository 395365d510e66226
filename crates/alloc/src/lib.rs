//! rostrace's allocator ([`Allocator`], installed by the `rostrace` binary): the system's for
//! small blocks; large blocks (from [`LARGE`] bytes) each mapped on their own, in sizes rounded to
//! a quarter of their power of two, and, while a [`Keeping`] lasts, kept when freed for the next
//! block of their size.
//!
//! Why: a streamed analysis makes each slice's tables (tens of megabytes in blocks of all sizes)
//! and gives them back, slice after slice. Mapped afresh each time, every page of every slice's
//! tables is faulted in and zeroed by the kernel again, a large share of the analysis's time
//! ([docs/streaming.md](../../../docs/streaming.md#how)). A block
//! kept is reused with its pages in place, and the sizes rounded so that the blocks of one slice
//! fit those of the next. Raising the system allocator's thresholds keeps freed blocks too, but in
//! per-thread heaps where they fragment, for good: the peak memory grew far more. Here what is kept is
//! bounded ([`keep_freed`]) and given back when the streamed analysis ends; an analysis in memory,
//! whose freed tables would only add to its peak, keeps nothing.
//!
//! Each large block being its own mapping, growing one moves its pages (`mremap`) rather than
//! copying them, and freeing one gives its memory back at once.

#![deny(missing_docs)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Blocks of this size or more are mapped on their own (glibc's default threshold for mapping
/// blocks apart).
pub const LARGE: usize = 128 << 10;
/// At most this many freed blocks are kept.
const KEPT_BLOCKS: usize = 256;
const PAGE: usize = 4096;

/// The allocator: `#[global_allocator] static A: rostrace_alloc::Allocator = rostrace_alloc::Allocator;`.
pub struct Allocator;

/// The freed blocks kept, oldest first: (mapped size, address); `bytes`: their sizes' sum.
struct Kept {
    blocks: [(usize, usize); KEPT_BLOCKS],
    n: usize,
    bytes: usize,
}

static KEPT: Mutex<Kept> = Mutex::new(Kept { blocks: [(0, 0); KEPT_BLOCKS], n: 0, bytes: 0 });
/// How many bytes of freed blocks may be kept: the sum of the [`Keeping`]s' (0: none kept).
static ROOM: AtomicUsize = AtomicUsize::new(0);

/// While the guard returned lives, large blocks freed are kept, up to `bytes` of them (added to
/// what other guards allow), for the next blocks of their size; when the last guard is dropped,
/// the blocks kept are given back. It has no effect unless [`Allocator`] is the global allocator.
pub fn keep_freed(bytes: usize) -> Keeping {
    ROOM.fetch_add(bytes, Ordering::Relaxed);
    Keeping { bytes }
}

/// See [`keep_freed`].
#[must_use = "freed blocks are kept only while it lives"]
pub struct Keeping {
    bytes: usize,
}

impl Drop for Keeping {
    fn drop(&mut self) {
        ROOM.fetch_sub(self.bytes, Ordering::Relaxed);
        let mut k = kept();
        let room = ROOM.load(Ordering::Relaxed);
        evict(&mut k, room, 0);
    }
}

/// The mapped size of a large block of `size` bytes: `size` rounded up to a quarter of its power
/// of two (a page at least).
fn class(size: usize) -> usize {
    let step = ((usize::BITS - 1 - size.leading_zeros()) as usize).saturating_sub(2);
    let q = (1usize << step).max(PAGE);
    size.div_ceil(q) * q
}

fn large(layout: &Layout) -> bool {
    layout.size() >= LARGE && layout.align() <= PAGE
}

fn kept() -> std::sync::MutexGuard<'static, Kept> {
    KEPT.lock().unwrap_or_else(|e| e.into_inner())
}

/// The oldest blocks kept given back until `room` holds `more` bytes besides them, and a block
/// slot is free.
fn evict(k: &mut Kept, room: usize, more: usize) {
    while k.n > 0 && (k.n == KEPT_BLOCKS || k.bytes + more > room) {
        let (size, at) = k.blocks[0];
        let n = k.n;
        k.blocks.copy_within(1..n, 0);
        k.n -= 1;
        k.bytes -= size;
        // SAFETY: a block kept is a mapping of `size` bytes at `at` that nothing refers to.
        unsafe { libc::munmap(at as *mut libc::c_void, size) };
    }
}

/// A block of `size` (a class's) kept, the newest first, if there is one.
fn take_kept(size: usize) -> Option<*mut u8> {
    if ROOM.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let mut k = kept();
    let n = k.n;
    let i = k.blocks[..n].iter().rposition(|b| b.0 == size)?;
    let (_, at) = k.blocks[i];
    k.blocks.copy_within(i + 1..n, i);
    k.n -= 1;
    k.bytes -= size;
    Some(at as *mut u8)
}

/// A block of `size` (a class's): one kept, else mapped; whether it is fresh (zeroed).
fn map(size: usize) -> (*mut u8, bool) {
    if let Some(p) = take_kept(size) {
        return (p, false);
    }
    // SAFETY: a new private anonymous mapping; no memory of the process is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        (std::ptr::null_mut(), true)
    } else {
        (p.cast(), true)
    }
}

/// The block at `p` of mapped `size` kept (the oldest ones given back to make room), or given
/// back when nothing is kept.
fn unmap(p: *mut u8, size: usize) {
    if size <= ROOM.load(Ordering::Relaxed) {
        let mut k = kept();
        // (Read again under the lock, which the last guard's drop takes to give the blocks back.)
        let room = ROOM.load(Ordering::Relaxed);
        if size <= room {
            evict(&mut k, room, size);
            let n = k.n;
            k.blocks[n] = (size, p as usize);
            k.n += 1;
            k.bytes += size;
            return;
        }
    }
    // SAFETY: the caller gives back the mapping of `size` bytes at `p`, which nothing refers to.
    unsafe { libc::munmap(p.cast(), size) };
}

// SAFETY: large blocks are page-aligned mappings (alignments above a page go to the system
// allocator) of at least the size asked for; each is given back with the size of its layout, from
// which its mapped size is computed again; a block kept is handed out to one caller only (under
// the lock).
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if large(&layout) {
            map(class(layout.size())).0
        } else {
            // SAFETY: the caller's layout, of non-zero size.
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if large(&layout) {
            let (p, fresh) = map(class(layout.size()));
            if !fresh && !p.is_null() {
                // SAFETY: `p` is a block of at least `layout.size()` bytes, handed out to us.
                unsafe { std::ptr::write_bytes(p, 0, layout.size()) };
            }
            p
        } else {
            // SAFETY: the caller's layout, of non-zero size.
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if large(&layout) {
            unmap(p, class(layout.size()));
        } else {
            // SAFETY: a block the system allocator gave for this layout.
            unsafe { System.dealloc(p, layout) }
        }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's alignment, and a new size that does not overflow with it.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (large(&layout), large(&new)) {
            // SAFETY: a block the system allocator gave for this layout.
            (false, false) => unsafe { System.realloc(p, layout, new_size) },
            (true, true) => {
                let (from, to) = (class(layout.size()), class(new_size));
                if from == to {
                    return p;
                }
                // Into a block kept, whose pages are there, rather than onto new pages.
                if let Some(q) = take_kept(to) {
                    // SAFETY: two distinct blocks, each of at least the bytes copied.
                    unsafe { std::ptr::copy_nonoverlapping(p, q, layout.size().min(new_size)) };
                    unmap(p, from);
                    return q;
                }
                // The pages move with the mapping: nothing is copied.
                // SAFETY: `p` is a mapping of `from` bytes, resized (and maybe moved) whole.
                let q = unsafe { libc::mremap(p.cast(), from, to, libc::MREMAP_MAYMOVE) };
                if q == libc::MAP_FAILED {
                    std::ptr::null_mut()
                } else {
                    q.cast()
                }
            }
            _ => {
                // SAFETY: the new layout, of non-zero size.
                let q = unsafe { self.alloc(new) };
                if !q.is_null() {
                    // SAFETY: two distinct blocks, each of at least the bytes copied; the old
                    // one given back with its layout.
                    unsafe {
                        std::ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                        self.dealloc(p, layout);
                    }
                }
                q
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_up_to_a_quarter_of_the_power_of_two() {
        assert_eq!(class(LARGE), LARGE);
        assert_eq!(class(LARGE + 1), LARGE + LARGE / 4);
        assert_eq!(class(3 << 20), 3 << 20);
        assert_eq!(class((3 << 20) + 1), (7 << 19));
        for s in [LARGE, 200_000, 1 << 20, 5_000_000, 123_456_789] {
            let c = class(s);
            assert!(c >= s && c - s <= s / 4 && c.is_multiple_of(PAGE), "{s} {c}");
        }
    }

    /// Blocks given back while a guard lives are kept and handed out again, their contents in
    /// place; past the room allowed, the oldest are given back; after the guard, none is kept.
    #[test]
    fn freed_blocks_are_kept_while_asked_and_bounded() {
        let a = Allocator;
        let layout = Layout::from_size_align(1 << 20, 8).expect("layout");
        let keeping = keep_freed(3 << 20);
        // SAFETY: blocks of this allocator, each given back once with its layout.
        unsafe {
            let p = a.alloc(layout);
            p.write(7);
            a.dealloc(p, layout);
            let q = a.alloc(layout);
            assert_eq!(q, p, "the block kept is handed out again");
            assert_eq!(q.read(), 7);
            let z = a.alloc_zeroed(layout);
            assert_eq!(z.read(), 0);
            let blocks: Vec<*mut u8> = (0..5).map(|_| a.alloc(layout)).collect();
            for b in blocks.iter().chain([q, z].iter()) {
                a.dealloc(*b, layout);
            }
            assert!(kept().bytes <= 3 << 20);
            // Grown into a kept block of the larger class, or moved: its contents follow.
            let r = a.alloc(layout);
            r.add(100).write(9);
            let r = a.realloc(r, layout, 3 << 20);
            assert_eq!(r.add(100).read(), 9);
            a.dealloc(r, Layout::from_size_align(3 << 20, 8).expect("layout"));
        }
        drop(keeping);
        assert_eq!(kept().n, 0);
    }
}

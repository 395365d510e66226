//! The analysis's collections: maps with a fast hasher, and vectors grown one item at a time
//! while short.
//!
//! The maps are keyed by integers (trace, vpid, tid, addresses): the std SipHash is built to
//! resist hash flooding by a network peer, which a trace read offline is not, and took a quarter
//! of the analysis's time. A multiply-rotate hash in the manner of rustc's FxHash, with a final
//! rotation so that pointer keys (low bits zero) still spread over the buckets.

use std::hash::{BuildHasherDefault, Hasher};

/// The hasher.
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHasher {
    hash: u64,
}

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = self.hash.wrapping_add(word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash.rotate_left(26)
    }
}

/// `HashMap` with [`FastHasher`].
pub type HashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<FastHasher>>;
/// `HashSet` with [`FastHasher`].
pub type HashSet<K> = std::collections::HashSet<K, BuildHasherDefault<FastHasher>>;

/// State per thread (trace, process id, thread id), made when first asked for. The last
/// thread's is found without hashing: a thread's events mostly come one after another.
#[derive(Debug)]
pub(crate) struct PerThread<T> {
    index: HashMap<(u32, i64, i64), u32>,
    items: Vec<T>,
    last: Option<((u32, i64, i64), u32)>,
}

impl<T> Default for PerThread<T> {
    fn default() -> Self {
        PerThread { index: HashMap::default(), items: Vec::new(), last: None }
    }
}

impl<T: Default> PerThread<T> {
    /// Thread `k`'s state (made now, as `T::default()`, when it has none yet).
    #[inline]
    pub(crate) fn get(&mut self, k: (u32, i64, i64)) -> &mut T {
        let i = match self.last {
            Some((lk, i)) if lk == k => i,
            _ => {
                let items = &mut self.items;
                let i = *self.index.entry(k).or_insert_with(|| {
                    items.push(T::default());
                    items.len() as u32 - 1
                });
                self.last = Some((k, i));
                i
            }
        };
        &mut self.items[i as usize]
    }
}

/// Pushes `x` onto `v`, growing it by one while it is short: a node has one or two of most
/// things (callbacks, publishers, runs of a callback object), and a system of very many nodes
/// would otherwise hold room for four of each per node.
pub(crate) fn push_small<T>(v: &mut Vec<T>, x: T) {
    if v.len() == v.capacity() && v.len() < 4 {
        v.reserve_exact(1);
    }
    v.push(x);
}

/// Each of `names`' distinct strings with its rank in their sorted order: sorting many items by
/// a name compares two integers then, not two strings (a long trace's publications and flows are
/// millions, of a few topics).
pub(crate) fn ranks<'a>(names: impl IntoIterator<Item = &'a str>) -> HashMap<&'a str, u32> {
    let mut distinct: Vec<&str> = names.into_iter().collect::<HashSet<_>>().into_iter().collect();
    distinct.sort_unstable();
    distinct.into_iter().enumerate().map(|(i, n)| (n, i as u32)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Aligned addresses spread over the low bits that pick a bucket.
    #[test]
    fn pointers_spread() {
        use std::hash::BuildHasher;
        let b = BuildHasherDefault::<FastHasher>::default();
        let mut buckets = [0u32; 256];
        for k in 0..65536u64 {
            buckets[(b.hash_one(0x5555_0000_0000u64 + k * 64) & 255) as usize] += 1;
        }
        assert!(buckets.iter().all(|&n| n > 128 && n < 384), "{buckets:?}");
    }

    #[test]
    fn ranks_follow_the_names_order() {
        let r = ranks(["/b", "/a", "/c", "/a"]);
        assert_eq!((r.len(), r["/a"], r["/b"], r["/c"]), (3, 0, 1, 2));
    }
}

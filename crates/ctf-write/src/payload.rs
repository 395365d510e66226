//! Event payloads: fields encoded as the metadata declares them.

use std::borrow::BorrowMut;

/// Appends payload fields to its bytes, with the encoding the metadata declares (all
/// byte-aligned, little-endian). The bytes are its own (`Payload::new()`), or a buffer it
/// appends to (`Payload::append_to`: the tracer's per-thread buffer, no allocation per event).
#[derive(Debug, Default, Clone)]
pub struct Payload<B = Vec<u8>> {
    /// The encoded bytes.
    pub bytes: B,
}

impl Payload {
    /// An empty payload.
    pub fn new() -> Payload {
        Payload { bytes: Vec::with_capacity(64) }
    }
}

impl<'a> Payload<&'a mut Vec<u8>> {
    /// Fields appended to `buf`.
    #[inline]
    pub fn append_to(buf: &'a mut Vec<u8>) -> Self {
        Payload { bytes: buf }
    }
}

/// An address as a payload records it: 64 bits (`const void *` fields and sequences).
pub trait Address: Copy {
    /// The address as 64 bits.
    fn to_u64(self) -> u64;
}

impl Address for u64 {
    #[inline]
    fn to_u64(self) -> u64 {
        self
    }
}

impl Address for usize {
    #[inline]
    fn to_u64(self) -> u64 {
        self as u64
    }
}

impl<B: BorrowMut<Vec<u8>>> Payload<B> {
    #[inline]
    fn buf(&mut self) -> &mut Vec<u8> {
        self.bytes.borrow_mut()
    }

    /// A pointer or `u64`.
    #[inline]
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.buf().extend_from_slice(&v.to_le_bytes());
        self
    }

    /// An `i64`.
    #[inline]
    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.buf().extend_from_slice(&v.to_le_bytes());
        self
    }

    /// An `int` (bools as 0/1).
    #[inline]
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.buf().extend_from_slice(&v.to_le_bytes());
        self
    }

    /// A string: bytes up to the first NUL (invalid UTF-8 is kept as bytes), then a NUL.
    #[inline]
    pub fn string(&mut self, s: &[u8]) -> &mut Self {
        let n = s.iter().position(|b| *b == 0).unwrap_or(s.len());
        let buf = self.buf();
        buf.extend_from_slice(&s[..n]);
        buf.push(0);
        self
    }

    /// A byte array of exactly `len` bytes (padded with zeros or cut).
    #[inline]
    pub fn u8_array(&mut self, v: &[u8], len: usize) -> &mut Self {
        let n = v.len().min(len);
        let buf = self.buf();
        buf.extend_from_slice(&v[..n]);
        buf.resize(buf.len() + len - n, 0);
        self
    }

    /// A sequence of pointers with its length.
    #[inline]
    pub fn pointer_sequence<A: Address>(&mut self, v: &[A]) -> &mut Self {
        self.u64(v.len() as u64);
        for x in v {
            self.u64(x.to_u64());
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A payload of its own and one appended to a buffer encode alike.
    #[test]
    fn owned_and_appended_payloads_encode_alike() {
        let mut owned = Payload::new();
        owned.u64(0x10).i64(-2).i32(1).string(b"ab\0cd").u8_array(&[1, 2, 3], 2).pointer_sequence(&[7u64, 8]);
        let mut buf = vec![0xEE];
        Payload::append_to(&mut buf)
            .u64(0x10)
            .i64(-2)
            .i32(1)
            .string(b"ab\0cd")
            .u8_array(&[1, 2, 3], 2)
            .pointer_sequence(&[7usize, 8]);
        assert_eq!(buf[0], 0xEE, "appended after what the buffer held");
        assert_eq!(&buf[1..], &owned.bytes[..]);
        let mut want = Vec::new();
        want.extend_from_slice(&0x10u64.to_le_bytes());
        want.extend_from_slice(&(-2i64).to_le_bytes());
        want.extend_from_slice(&1i32.to_le_bytes());
        want.extend_from_slice(b"ab\0");
        want.extend_from_slice(&[1, 2]);
        for v in [2u64, 7, 8] {
            want.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(owned.bytes, want);
        assert_eq!(Payload::new().u8_array(&[9], 3).bytes, [9, 0, 0], "padded with zeros");
    }
}

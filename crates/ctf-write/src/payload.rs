//! Event payloads: fields encoded as the metadata declares them.

/// Appends payload fields, with the encoding the metadata declares (all byte-aligned).
#[derive(Debug, Default, Clone)]
pub struct Payload {
    /// The encoded bytes.
    pub bytes: Vec<u8>,
}

impl Payload {
    /// An empty payload.
    pub fn new() -> Payload {
        Payload { bytes: Vec::with_capacity(64) }
    }
    /// A pointer or `u64`.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// An `i64`.
    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// An `int` (bools as 0/1).
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// A string: bytes up to the first NUL, then a NUL.
    pub fn string(&mut self, s: &[u8]) -> &mut Self {
        let n = s.iter().position(|b| *b == 0).unwrap_or(s.len());
        self.bytes.extend_from_slice(&s[..n]);
        self.bytes.push(0);
        self
    }
    /// A byte array of exactly `len` bytes (padded with zeros or cut).
    pub fn u8_array(&mut self, v: &[u8], len: usize) -> &mut Self {
        let n = v.len().min(len);
        self.bytes.extend_from_slice(&v[..n]);
        self.bytes.resize(self.bytes.len() + len - n, 0);
        self
    }
    /// A sequence of pointers with its length.
    pub fn pointer_sequence(&mut self, v: &[u64]) -> &mut Self {
        self.u64(v.len() as u64);
        for x in v {
            self.u64(*x);
        }
        self
    }
}

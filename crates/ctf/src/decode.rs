//! Decoding binary data with resolved types into a flat list of [`Node`]s.

use crate::types::*;

/// What a node holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum NodeKind {
    /// Unsigned integer (or enumeration over one): `bits` is the value.
    U,
    /// Signed integer (or enumeration over one): `bits` is the value as `i64`.
    I,
    /// Floating point: `bits` is the `f64` bits.
    F,
    /// Enumeration over an unsigned integer: `bits` is the value.
    EU,
    /// Enumeration over a signed integer: `bits` is the value as `i64`.
    EI,
    /// String: `bits` is the byte offset in the data, `aux` the length.
    Str,
    /// Structure: `bits` is the member count, `aux` the subtree's node count.
    Struct,
    /// Array or sequence: `bits` is the element count, `aux` the subtree's node count.
    Array,
    /// Variant: `bits` is the selected option, `aux` the subtree's node count.
    Variant,
}

/// One decoded value; compound values are followed by their members (pre-order).
#[derive(Debug, Clone, Copy)]
pub struct Node {
    /// The value (see [`NodeKind`]).
    pub bits: u64,
    /// Length or subtree size.
    pub aux: u32,
    /// What the node holds.
    pub kind: NodeKind,
}

impl Node {
    /// Number of nodes this value spans, itself included.
    #[inline]
    pub fn span(&self) -> usize {
        match self.kind {
            NodeKind::Struct | NodeKind::Array | NodeKind::Variant => self.aux as usize,
            _ => 1,
        }
    }
}

/// A decoding failure at a bit position relative to the packet start.
#[derive(Debug, Clone)]
pub struct DecodeError {
    /// Bit position from the packet start.
    pub bit: u64,
    /// What went wrong.
    pub message: String,
    /// Whether a value went past the end of the content read: damage, or a file that ends
    /// before its packet does (one still being written).
    pub past_end: bool,
}

fn err<T>(bit: u64, message: impl Into<String>) -> Result<T, DecodeError> {
    Err(DecodeError { bit, message: message.into(), past_end: false })
}

/// A value going past the end of the content read.
fn short<T>(bit: u64, message: impl Into<String>) -> Result<T, DecodeError> {
    Err(DecodeError { bit, message: message.into(), past_end: true })
}

/// Values carried from one field to later ones: lengths, tags, the clock, the event id.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Registers (see [`Ty::Int`]'s `reg`).
    pub regs: Vec<u64>,
    /// Current clock value (cycles) of the stream.
    pub clock: u64,
    /// Whether integers mapped to the clock update it.
    pub clock_updates: bool,
    /// Last event class id decoded in a header.
    pub event_id: Option<u64>,
}

impl State {
    /// Updates the clock with an `size`-bit value, assuming at most one wrap (CTF 1.8 §8).
    #[inline]
    pub fn update_clock(&mut self, v: u64, size: u32) {
        if size >= 64 {
            self.clock = v;
            return;
        }
        let mask = (1u64 << size) - 1;
        let mut c = (self.clock & !mask) | v;
        if v < self.clock & mask {
            c = c.wrapping_add(1u64 << size);
        }
        self.clock = c;
    }
}

/// Reading position within one packet of a data file.
pub struct Cursor<'a> {
    /// The whole file.
    pub data: &'a [u8],
    /// Byte offset of the packet start in `data`.
    pub base: usize,
    /// Position in bits from the packet start.
    pub pos: u64,
    /// End of the readable content in bits from the packet start.
    pub end: u64,
}

impl<'a> Cursor<'a> {
    /// Moves to the next multiple of `align` bits.
    #[inline]
    pub fn align(&mut self, align: u32) -> Result<(), DecodeError> {
        let a = align as u64;
        if a > 1 {
            let p = (self.pos + a - 1) & !(a - 1);
            if p > self.end {
                return short(self.pos, "alignment padding goes past the end of the packet content");
            }
            self.pos = p;
        }
        Ok(())
    }

    /// Reads an integer of `t` (aligned first); returns the raw value, sign-extended when signed.
    #[inline(always)]
    pub fn read_int(&mut self, t: &IntType) -> Result<u64, DecodeError> {
        self.align(t.align)?;
        let n = t.size as u64;
        if self.pos + n > self.end {
            return short(self.pos, format!("{n}-bit integer goes past the end of the packet content"));
        }
        let v = match t.read {
            IntRead::LeBytes(k) => {
                let i = self.base + (self.pos >> 3) as usize;
                match k {
                    1 => self.data[i] as u64,
                    2 => u16::from_le_bytes(self.bytes::<2>(i)) as u64,
                    4 => u32::from_le_bytes(self.bytes::<4>(i)) as u64,
                    _ => u64::from_le_bytes(self.bytes::<8>(i)),
                }
            }
            IntRead::BeBytes(k) => {
                let i = self.base + (self.pos >> 3) as usize;
                match k {
                    1 => self.data[i] as u64,
                    2 => u16::from_be_bytes(self.bytes::<2>(i)) as u64,
                    4 => u32::from_be_bytes(self.bytes::<4>(i)) as u64,
                    _ => u64::from_be_bytes(self.bytes::<8>(i)),
                }
            }
            IntRead::Bits => self.read_bits(t.size, t.byte_order),
        };
        self.pos += n;
        if t.signed && t.size < 64 {
            let s = 64 - t.size;
            return Ok((((v << s) as i64) >> s) as u64);
        }
        Ok(v)
    }

    /// `N` bytes at byte offset `i` of the data.
    #[inline(always)]
    fn bytes<const N: usize>(&self, i: usize) -> [u8; N] {
        match self.data.get(i..i + N) {
            Some(b) => b.try_into().unwrap_or([0; N]),
            None => [0; N],
        }
    }

    /// Reads `size` bits at the current position (bounds already checked), without moving.
    #[inline]
    pub fn read_bits(&self, size: u32, bo: ByteOrder) -> u64 {
        let start = self.base + (self.pos >> 3) as usize;
        let shift = (self.pos & 7) as u32;
        let nbytes = (shift + size).div_ceil(8) as usize;
        let bytes = &self.data[start..start + nbytes];
        let mask: u128 = if size >= 64 { u64::MAX as u128 } else { (1u128 << size) - 1 };
        match bo {
            ByteOrder::Little => {
                let mut x: u128 = 0;
                for (k, b) in bytes.iter().enumerate() {
                    x |= (*b as u128) << (8 * k);
                }
                ((x >> shift) & mask) as u64
            }
            ByteOrder::Big => {
                let mut x: u128 = 0;
                for b in bytes {
                    x = (x << 8) | *b as u128;
                }
                ((x >> (nbytes as u32 * 8 - shift - size)) & mask) as u64
            }
        }
    }
}

#[inline]
fn int_node(t: &IntType, v: u64) -> Node {
    Node { bits: v, aux: 0, kind: if t.signed { NodeKind::I } else { NodeKind::U } }
}

#[inline]
fn after_int(t: &IntType, v: u64, reg: u16, is_id: bool, st: &mut State) {
    if reg != NO_REG {
        st.regs[reg as usize] = v;
    }
    if is_id {
        st.event_id = Some(v);
    }
    if t.clock.is_some() && st.clock_updates {
        st.update_clock(if t.size < 64 { v & ((1u64 << t.size) - 1) } else { v }, t.size);
    }
}

/// Decodes one value of type `ty`, appending its nodes to `out`.
pub fn decode(ty: &Ty, c: &mut Cursor, st: &mut State, out: &mut Vec<Node>) -> Result<(), DecodeError> {
    match ty {
        Ty::Int { t, reg, is_id, .. } => {
            let v = c.read_int(t)?;
            after_int(t, v, *reg, *is_id, st);
            out.push(int_node(t, v));
        }
        Ty::Enum { t, reg, is_id, .. } => {
            let v = c.read_int(&t.int)?;
            after_int(&t.int, v, *reg, *is_id, st);
            out.push(Node { bits: v, aux: 0, kind: if t.int.signed { NodeKind::EI } else { NodeKind::EU } });
        }
        Ty::Float(f) => {
            let size = f.size();
            let it = IntType {
                size,
                align: f.align,
                signed: false,
                byte_order: f.byte_order,
                base: 10,
                encoding: Encoding::None,
                clock: None,
                read: IntRead::Bits,
            }
            .finish();
            let raw = c.read_int(&it)?;
            let v = if size == 32 { f32::from_bits(raw as u32) as f64 } else { f64::from_bits(raw) };
            out.push(Node { bits: v.to_bits(), aux: 0, kind: NodeKind::F });
        }
        Ty::String(_) => {
            c.align(8)?;
            let start = c.base + (c.pos >> 3) as usize;
            let limit = c.base + (c.end >> 3) as usize;
            let hay = &c.data[start..limit];
            match memchr::memchr(0, hay) {
                Some(n) => {
                    if n > u32::MAX as usize {
                        return err(c.pos, "string too long");
                    }
                    out.push(Node { bits: start as u64, aux: n as u32, kind: NodeKind::Str });
                    c.pos += (n as u64 + 1) * 8;
                }
                None => return short(c.pos, "string not terminated before the end of the packet content"),
            }
        }
        Ty::TextArray { len, align, .. } => text(c, *len, *align, out)?,
        Ty::TextSequence { len_reg, align, .. } => {
            let len = st.regs[*len_reg as usize];
            text(c, len, *align, out)?
        }
        Ty::Struct(s) if s.flat.is_some() => decode_flat(s.align, s.flat.as_ref().expect("checked"), c, out)?,
        Ty::Struct(s) => {
            c.align(s.align)?;
            let at = out.len();
            out.push(Node { bits: s.fields.len() as u64, aux: 0, kind: NodeKind::Struct });
            out.reserve(s.fields.len());
            for f in &s.fields {
                // Plain integers, the bulk of ROS 2 payloads, are read here without a call.
                if let Ty::Int { t, reg, is_id, .. } = &f.ty {
                    let v = c.read_int(t)?;
                    if *reg != NO_REG || *is_id || t.clock.is_some() {
                        after_int(t, v, *reg, *is_id, st);
                    }
                    out.push(int_node(t, v));
                } else {
                    decode(&f.ty, c, st, out)?;
                }
            }
            out[at].aux = (out.len() - at) as u32;
        }
        Ty::Variant(v) => {
            let raw = st.regs[v.tag_reg as usize];
            let tag: i128 = if v.tag_signed { raw as i64 as i128 } else { raw as i128 };
            let k = match v.select.iter().find(|(a, b, _)| *a <= tag && tag <= *b) {
                Some((_, _, k)) => *k,
                None => return err(c.pos, format!("variant tag value {tag} selects no option")),
            };
            let at = out.len();
            out.push(Node { bits: k as u64, aux: 0, kind: NodeKind::Variant });
            decode(&v.options[k].ty, c, st, out)?;
            out[at].aux = (out.len() - at) as u32;
        }
        Ty::Array { elem, len } => array(elem, *len, c, st, out)?,
        Ty::Sequence { elem, len_reg } => {
            let len = st.regs[*len_reg as usize];
            array(elem, len, c, st, out)?
        }
    }
    Ok(())
}

/// Position of the first NUL (or the length): short texts (LTTng's `procname[17]`) without a call.
#[inline(always)]
fn nul(t: &[u8]) -> usize {
    if t.len() <= 32 {
        // Eight bytes at a time: the lowest byte of a word that is zero.
        let mut i = 0;
        while i + 8 <= t.len() {
            let x = u64::from_le_bytes(t[i..i + 8].try_into().unwrap_or([0; 8]));
            let z = x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080;
            if z != 0 {
                return i + (z.trailing_zeros() / 8) as usize;
            }
            i += 8;
        }
        t[i..].iter().position(|b| *b == 0).map_or(t.len(), |k| i + k)
    } else {
        memchr::memchr(0, t).unwrap_or(t.len())
    }
}

/// Decodes a structure of fixed layout: one bounds check, members at fixed offsets.
#[inline(always)]
fn decode_flat(align: u32, fl: &FlatLayout, c: &mut Cursor, out: &mut Vec<Node>) -> Result<(), DecodeError> {
    c.align(align)?;
    let need = fl.size as u64 * 8;
    if c.pos + need > c.end {
        return short(c.pos, format!("structure of {} bytes goes past the end of the packet content", fl.size));
    }
    let start = c.base + (c.pos >> 3) as usize;
    let d = &c.data[start..start + fl.size as usize];
    out.reserve(fl.fields.len() + 1);
    out.push(Node { bits: fl.fields.len() as u64, aux: 1 + fl.fields.len() as u32, kind: NodeKind::Struct });
    for &(off, op) in &fl.fields {
        let o = off as usize;
        out.push(match op {
            FlatOp::Int { bytes, be, signed } => {
                let v = match (bytes, be) {
                    (1, _) => d[o] as u64,
                    (2, false) => u16::from_le_bytes([d[o], d[o + 1]]) as u64,
                    (2, true) => u16::from_be_bytes([d[o], d[o + 1]]) as u64,
                    (4, false) => u32::from_le_bytes([d[o], d[o + 1], d[o + 2], d[o + 3]]) as u64,
                    (4, true) => u32::from_be_bytes([d[o], d[o + 1], d[o + 2], d[o + 3]]) as u64,
                    (_, false) => u64::from_le_bytes(d[o..o + 8].try_into().unwrap_or([0; 8])),
                    (_, true) => u64::from_be_bytes(d[o..o + 8].try_into().unwrap_or([0; 8])),
                };
                if signed {
                    let sh = 64 - 8 * bytes as u32;
                    Node { bits: (((v << sh) as i64) >> sh) as u64, aux: 0, kind: NodeKind::I }
                } else {
                    Node { bits: v, aux: 0, kind: NodeKind::U }
                }
            }
            FlatOp::Text(len) => {
                let t = &d[o..o + len as usize];
                let n = nul(t);
                Node { bits: (start + o) as u64, aux: n as u32, kind: NodeKind::Str }
            }
        });
    }
    c.pos += need;
    Ok(())
}

/// Decodes a dynamic scope (a structure), taking the fixed-layout path when it can.
#[inline]
pub fn decode_scope(ty: &Ty, c: &mut Cursor, st: &mut State, out: &mut Vec<Node>) -> Result<(), DecodeError> {
    if let Ty::Struct(s) = ty {
        if let Some(fl) = &s.flat {
            return decode_flat(s.align, fl, c, out);
        }
    }
    decode(ty, c, st, out)
}

/// Passes over a dynamic scope (a structure) without making its values where its layout is
/// fixed; else decodes it into `scratch`, which it clears first.
#[inline]
pub fn skip_scope(ty: &Ty, c: &mut Cursor, st: &mut State, scratch: &mut Vec<Node>) -> Result<(), DecodeError> {
    if let Ty::Struct(s) = ty {
        if let Some(fl) = &s.flat {
            c.align(s.align)?;
            let need = fl.size as u64 * 8;
            if c.pos + need > c.end {
                return short(c.pos, format!("structure of {} bytes goes past the end of the packet content", fl.size));
            }
            c.pos += need;
            return Ok(());
        }
    }
    scratch.clear();
    decode(ty, c, st, scratch)
}

fn array(elem: &Ty, len: u64, c: &mut Cursor, st: &mut State, out: &mut Vec<Node>) -> Result<(), DecodeError> {
    c.align(elem.align())?;
    if len > (c.end - c.pos).max(1 << 16) {
        return short(c.pos, format!("array of {len} elements cannot fit in the packet content"));
    }
    let at = out.len();
    out.push(Node { bits: len, aux: 0, kind: NodeKind::Array });
    for _ in 0..len {
        decode(elem, c, st, out)?;
        if out.len() - at > u32::MAX as usize / 2 {
            return err(c.pos, "array too large");
        }
    }
    out[at].aux = (out.len() - at) as u32;
    Ok(())
}

fn text(c: &mut Cursor, len: u64, align: u32, out: &mut Vec<Node>) -> Result<(), DecodeError> {
    c.align(align.max(8))?;
    if len.saturating_mul(8) > c.end - c.pos {
        return short(c.pos, format!("text of {len} bytes goes past the end of the packet content"));
    }
    let start = c.base + (c.pos >> 3) as usize;
    let bytes = &c.data[start..start + len as usize];
    let n = memchr::memchr(0, bytes).unwrap_or(bytes.len());
    out.push(Node { bits: start as u64, aux: n as u32, kind: NodeKind::Str });
    c.pos += len * 8;
    Ok(())
}

/// LTTng's two event header layouts, decoded without the generic path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderFast {
    /// `event_header_large`: u16 id (65535 = extended: u32 id, u64 timestamp), else u32 timestamp.
    Large(ByteOrder),
    /// `event_header_compact`: 5-bit id (31 = extended: u32 id, u64 timestamp), else 27-bit timestamp.
    Compact(ByteOrder),
}

impl HeaderFast {
    /// Recognizes LTTng's header types exactly; anything else uses the generic path.
    pub fn detect(t: &Ty) -> Option<HeaderFast> {
        let s = t.as_struct()?;
        if s.fields.len() != 2 || s.fields[0].name != "id" || s.fields[1].name != "v" {
            return None;
        }
        let (e, tag_reg) = match &s.fields[0].ty {
            Ty::Enum { t, reg, is_id: true, .. } => (t, *reg),
            _ => return None,
        };
        let v = match &s.fields[1].ty {
            Ty::Variant(v) => v,
            _ => return None,
        };
        if v.tag_reg != tag_reg || v.options.len() != 2 {
            return None;
        }
        let bo = e.int.byte_order;
        let int_is = |t: &Ty, size: u32, align: u32, clock: bool, id: bool| match t {
            Ty::Int { t, is_id, .. } => {
                t.size == size
                    && t.align == align
                    && !t.signed
                    && t.byte_order == bo
                    && t.clock.is_some() == clock
                    && *is_id == id
            }
            _ => false,
        };
        let opt = |name: &str| v.options.iter().position(|o| o.name == name);
        let (ci, xi) = (opt("compact")?, opt("extended")?);
        let compact = v.options[ci].ty.as_struct()?;
        let ext = v.options[xi].ty.as_struct()?;
        let ext_ok = ext.fields.len() == 2
            && ext.align == 8
            && ext.fields[0].name == "id"
            && int_is(&ext.fields[0].ty, 32, 8, false, true)
            && ext.fields[1].name == "timestamp"
            && int_is(&ext.fields[1].ty, 64, 8, true, false);
        if !ext_ok || compact.fields.len() != 1 || compact.fields[0].name != "timestamp" {
            return None;
        }
        let (max, ts_size, ts_align) = match (e.int.size, e.int.align, e.int.signed) {
            (16, 8, false) => (65535i128, 32, 8),
            (5, 1, false) => (31, 27, 1),
            _ => return None,
        };
        if !int_is(&compact.fields[0].ty, ts_size, ts_align, true, false) || s.align != 8 {
            return None;
        }
        let sel_ok = v.select.len() == 2
            && v.select.iter().any(|&(a, b, k)| a == 0 && b == max - 1 && k == ci)
            && v.select.iter().any(|&(a, b, k)| a == max && b == max && k == xi);
        if !sel_ok {
            return None;
        }
        Some(if max == 31 { HeaderFast::Compact(bo) } else { HeaderFast::Large(bo) })
    }

    /// Decodes the header: returns the event class id, updating the clock.
    #[inline]
    pub fn decode(self, c: &mut Cursor, st: &mut State) -> Result<u64, DecodeError> {
        c.align(8)?;
        match self {
            HeaderFast::Large(bo) => {
                if c.pos + 48 <= c.end && bo == ByteOrder::Little {
                    let i = c.base + (c.pos >> 3) as usize;
                    let d = &c.data[i..i + 6];
                    let id = u16::from_le_bytes([d[0], d[1]]) as u64;
                    if id != 65535 {
                        let ts = u32::from_le_bytes([d[2], d[3], d[4], d[5]]) as u64;
                        st.update_clock(ts, 32);
                        c.pos += 48;
                        return Ok(id);
                    }
                }
                let id = c.read_int(&u(16, 8, bo))?;
                if id == 65535 {
                    let id = c.read_int(&u(32, 8, bo))?;
                    let ts = c.read_int(&u(64, 8, bo))?;
                    st.update_clock(ts, 64);
                    Ok(id)
                } else {
                    let ts = c.read_int(&u(32, 8, bo))?;
                    st.update_clock(ts, 32);
                    Ok(id)
                }
            }
            HeaderFast::Compact(bo) => {
                let id = c.read_int(&u(5, 1, bo))?;
                if id == 31 {
                    let id = c.read_int(&u(32, 8, bo))?;
                    let ts = c.read_int(&u(64, 8, bo))?;
                    st.update_clock(ts, 64);
                    Ok(id)
                } else {
                    let ts = c.read_int(&u(27, 1, bo))?;
                    st.update_clock(ts, 27);
                    Ok(id)
                }
            }
        }
    }
}

#[inline]
fn u(size: u32, align: u32, bo: ByteOrder) -> IntType {
    IntType {
        size,
        align,
        signed: false,
        byte_order: bo,
        base: 10,
        encoding: Encoding::None,
        clock: None,
        read: IntRead::Bits,
    }
    .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_reads_both_orders() {
        let data = [0b1010_1101u8, 0b0110_0011, 0xFF];
        let c = Cursor { data: &data, base: 0, pos: 3, end: 24 };
        // little-endian: bits 3..8 of byte 0 then bits 0..3 of byte 1
        assert_eq!(c.read_bits(8, ByteOrder::Little), (0b1010_1101 >> 3) | ((0b011) << 5));
        // big-endian: bits counted from the most significant bit
        assert_eq!(c.read_bits(8, ByteOrder::Big), 0b0110_1011);
    }

    #[test]
    fn signed_and_clock_wrap() {
        let data = [0xFEu8, 0xFF];
        let mut c = Cursor { data: &data, base: 0, pos: 0, end: 16 };
        let t = IntType {
            size: 16,
            align: 8,
            signed: true,
            byte_order: ByteOrder::Little,
            base: 10,
            encoding: Encoding::None,
            clock: None,
            read: IntRead::Bits,
        }
        .finish();
        assert_eq!(c.read_int(&t).unwrap() as i64, -2);
        let mut st = State { clock: 0x1_FFFF_FFF0, ..Default::default() };
        st.update_clock(0x10, 32);
        assert_eq!(st.clock, 0x2_0000_0010);
        st.update_clock(0x20, 32);
        assert_eq!(st.clock, 0x2_0000_0020);
    }

    #[test]
    fn first_nul() {
        for len in 0..40usize {
            for z in 0..=len {
                let mut t = vec![0x80u8 | 0x41; len];
                if z < len {
                    t[z] = 0;
                    if z + 1 < len {
                        t[z + 1] = 0;
                    }
                }
                assert_eq!(nul(&t), z.min(len), "len {len} zero at {z}");
            }
        }
        assert_eq!(nul(b"\x01\x00"), 1);
    }

    #[test]
    fn out_of_bounds_is_an_error() {
        let data = [1u8, 2, 3];
        let mut c = Cursor { data: &data, base: 0, pos: 0, end: 24 };
        let t = u(32, 8, ByteOrder::Little);
        assert!(c.read_int(&t).is_err());
    }
}

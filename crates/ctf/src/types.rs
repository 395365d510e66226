//! Resolved field types: what the decoder runs. Built once from the metadata.

/// Byte order of an integer or floating point number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// Little-endian.
    Little,
    /// Big-endian.
    Big,
}

/// Character encoding of an integer, string or text array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Not text.
    None,
    /// UTF-8 text.
    Utf8,
    /// ASCII text.
    Ascii,
}

/// Register index meaning "not stored".
pub const NO_REG: u16 = u16::MAX;

/// How an integer is read; picked once so the hot path is one match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntRead {
    /// Byte-aligned unsigned of 1, 2, 4 or 8 bytes, little-endian.
    LeBytes(u8),
    /// Byte-aligned unsigned of 1, 2, 4 or 8 bytes, big-endian.
    BeBytes(u8),
    /// Any other layout: bit-level read.
    Bits,
}

/// An integer type.
#[derive(Debug, Clone, PartialEq)]
pub struct IntType {
    /// Size in bits, 1 to 64.
    pub size: u32,
    /// Alignment in bits.
    pub align: u32,
    /// Two's complement signed.
    pub signed: bool,
    /// Byte order.
    pub byte_order: ByteOrder,
    /// Preferred display base (2, 8, 10, 16).
    pub base: u8,
    /// Text encoding (for chars).
    pub encoding: Encoding,
    /// Index of the clock this integer is mapped to, in the trace's clocks.
    pub clock: Option<usize>,
    /// How to read it.
    pub read: IntRead,
}

impl IntType {
    /// Picks the read strategy from size, alignment and byte order.
    pub fn finish(mut self) -> Self {
        let bytes = matches!(self.size, 8 | 16 | 32 | 64) && self.align.is_multiple_of(8);
        self.read = match (bytes, self.byte_order) {
            (true, ByteOrder::Little) => IntRead::LeBytes((self.size / 8) as u8),
            (true, ByteOrder::Big) => IntRead::BeBytes((self.size / 8) as u8),
            _ => IntRead::Bits,
        };
        self
    }
}

/// A floating point type (32 or 64 bits).
#[derive(Debug, Clone, PartialEq)]
pub struct FloatType {
    /// Exponent digits.
    pub exp_dig: u32,
    /// Mantissa digits (including the implicit bit).
    pub mant_dig: u32,
    /// Alignment in bits.
    pub align: u32,
    /// Byte order.
    pub byte_order: ByteOrder,
}

impl FloatType {
    /// Total size in bits.
    pub fn size(&self) -> u32 {
        self.exp_dig + self.mant_dig
    }
}

/// One mapping of an enumeration: a label for a closed range of values.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumMapping {
    /// The label as written.
    pub label: String,
    /// First value.
    pub start: i128,
    /// Last value (inclusive).
    pub end: i128,
}

/// An enumeration over an integer.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumType {
    /// The container integer.
    pub int: IntType,
    /// Mappings in declaration order.
    pub mappings: Vec<EnumMapping>,
}

impl EnumType {
    /// The first label whose range holds `v`.
    pub fn label(&self, v: i128) -> Option<&str> {
        self.mappings.iter().find(|m| m.start <= v && v <= m.end).map(|m| m.label.as_str())
    }

    /// Every label with a range holding `v`, each once, in order of first declaration.
    pub fn labels(&self, v: i128) -> Vec<&str> {
        let mut out: Vec<&str> =
            self.mappings.iter().filter(|m| m.start <= v && v <= m.end).map(|m| m.label.as_str()).collect();
        if out.len() > 1 {
            // A label declared again with another range sorts by its first declaration.
            out.sort_by_key(|l| self.mappings.iter().position(|m| m.label == *l));
            out.dedup();
        }
        out
    }
}

/// A named member of a structure or variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Name with one leading underscore removed (as babeltrace2 shows it).
    pub name: String,
    /// Name as written in the metadata.
    pub raw_name: String,
    /// Type.
    pub ty: Ty,
}

/// A structure.
#[derive(Debug, Clone, PartialEq)]
pub struct StructType {
    /// Members in order.
    pub fields: Vec<Field>,
    /// Alignment in bits (the largest of its own and its members').
    pub align: u32,
    /// Fixed layout, when every member is a byte-aligned integer or text array.
    pub flat: Option<FlatLayout>,
}

/// How to read one member of a fixed-layout structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlatOp {
    /// Integer of `bytes` bytes.
    Int {
        /// Size in bytes: 1, 2, 4 or 8.
        bytes: u8,
        /// Big-endian.
        be: bool,
        /// Sign-extend.
        signed: bool,
    },
    /// Text array of `len` bytes.
    Text(u32),
}

/// A structure whose members are at fixed byte offsets from its (aligned) start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatLayout {
    /// Byte offset and read of each member.
    pub fields: Vec<(u32, FlatOp)>,
    /// Size in bytes.
    pub size: u32,
}

impl FlatLayout {
    /// The layout of `s`, if it has one.
    pub fn of(s: &StructType) -> Option<FlatLayout> {
        if !s.align.is_multiple_of(8) {
            return None;
        }
        let mut cur: u64 = 0;
        let mut fields = Vec::with_capacity(s.fields.len());
        for f in &s.fields {
            let (align, size, op) = match &f.ty {
                Ty::Int { t, reg, is_id: false, .. } if *reg == NO_REG && t.clock.is_none() => match t.read {
                    IntRead::LeBytes(k) => (t.align, k as u64, FlatOp::Int { bytes: k, be: false, signed: t.signed }),
                    IntRead::BeBytes(k) => (t.align, k as u64, FlatOp::Int { bytes: k, be: true, signed: t.signed }),
                    IntRead::Bits => return None,
                },
                Ty::TextArray { len, align, .. } if align % 8 == 0 && *len < 1 << 20 => {
                    (*align, *len, FlatOp::Text(*len as u32))
                }
                _ => return None,
            };
            let a = (align / 8).max(1) as u64;
            cur = cur.div_ceil(a) * a;
            fields.push((cur as u32, op));
            cur += size;
        }
        if cur > u32::MAX as u64 / 8 {
            return None;
        }
        Some(FlatLayout { fields, size: cur as u32 })
    }
}

impl StructType {
    /// The node of member `i` in every decoded value of this structure, when it has a fixed
    /// layout (one node per member, after the structure's own).
    #[inline]
    pub fn fixed_node(&self, i: usize) -> Option<usize> {
        self.flat.as_ref().map(|_| 1 + i)
    }

    /// Whether member `i` is an integer or an enumeration (its node holds its bits).
    #[inline]
    pub fn is_int(&self, i: usize) -> bool {
        matches!(self.fields.get(i).map(|f| &f.ty), Some(Ty::Int { .. } | Ty::Enum { .. }))
    }

    /// Index of the member named `name` (stripped name, or as written).
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name).or_else(|| self.fields.iter().position(|f| f.raw_name == name))
    }
}

/// A variant: one of its options, chosen by an enumeration tag decoded earlier.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantType {
    /// Options.
    pub options: Vec<Field>,
    /// Register holding the tag value.
    pub tag_reg: u16,
    /// Whether the tag is signed.
    pub tag_signed: bool,
    /// For each tag range, the option it selects.
    pub select: Vec<(i128, i128, usize)>,
}

/// A resolved type.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// Integer; `reg` is where its value is kept when a later length or tag refers to it.
    Int {
        /// The integer.
        t: IntType,
        /// Register, or [`NO_REG`].
        reg: u16,
        /// Unique id while building.
        uid: u32,
        /// Decoded value is an event class id (event header `id`).
        is_id: bool,
    },
    /// Enumeration.
    Enum {
        /// The enumeration.
        t: Box<EnumType>,
        /// Register, or [`NO_REG`].
        reg: u16,
        /// Unique id while building.
        uid: u32,
        /// Decoded value is an event class id (event header `id`).
        is_id: bool,
    },
    /// Floating point number.
    Float(FloatType),
    /// NUL-terminated string.
    String(Encoding),
    /// Structure.
    Struct(Box<StructType>),
    /// Variant.
    Variant(Box<VariantType>),
    /// Fixed-length array.
    Array {
        /// Element type.
        elem: Box<Ty>,
        /// Length.
        len: u64,
    },
    /// Array whose length is an integer decoded earlier.
    Sequence {
        /// Element type.
        elem: Box<Ty>,
        /// Register holding the length.
        len_reg: u16,
    },
    /// Fixed-length array of 8-bit characters: a string of at most `len` bytes.
    TextArray {
        /// Length in bytes.
        len: u64,
        /// Encoding.
        enc: Encoding,
        /// Alignment in bits.
        align: u32,
    },
    /// Sequence of 8-bit characters: a string of `len_reg` bytes.
    TextSequence {
        /// Register holding the length.
        len_reg: u16,
        /// Encoding.
        enc: Encoding,
        /// Alignment in bits.
        align: u32,
    },
}

impl Ty {
    /// Alignment in bits.
    pub fn align(&self) -> u32 {
        match self {
            Ty::Int { t, .. } => t.align,
            Ty::Enum { t, .. } => t.int.align,
            Ty::Float(f) => f.align,
            Ty::String(_) => 8,
            Ty::Struct(s) => s.align,
            Ty::Variant(_) => 1,
            Ty::Array { elem, .. } | Ty::Sequence { elem, .. } => elem.align(),
            Ty::TextArray { align, .. } | Ty::TextSequence { align, .. } => *align,
        }
    }

    /// The structure inside, if this is one.
    pub fn as_struct(&self) -> Option<&StructType> {
        match self {
            Ty::Struct(s) => Some(s),
            _ => None,
        }
    }

    /// Computes the fixed layouts of every structure inside (after registers are known).
    pub fn compute_flat(&mut self) {
        match self {
            Ty::Struct(s) => {
                s.fields.iter_mut().for_each(|f| f.ty.compute_flat());
                s.flat = FlatLayout::of(s);
            }
            Ty::Variant(v) => v.options.iter_mut().for_each(|f| f.ty.compute_flat()),
            Ty::Array { elem, .. } | Ty::Sequence { elem, .. } => elem.compute_flat(),
            _ => {}
        }
    }

    /// Calls `f` on every integer and enumeration type inside, mutably.
    pub fn visit_ints_mut(&mut self, f: &mut dyn FnMut(u32, &mut u16)) {
        match self {
            Ty::Int { uid, reg, .. } | Ty::Enum { uid, reg, .. } => f(*uid, reg),
            Ty::Struct(s) => s.fields.iter_mut().for_each(|fl| fl.ty.visit_ints_mut(f)),
            Ty::Variant(v) => v.options.iter_mut().for_each(|fl| fl.ty.visit_ints_mut(f)),
            Ty::Array { elem, .. } | Ty::Sequence { elem, .. } => elem.visit_ints_mut(f),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_labels_each_once_in_order_of_first_declaration() {
        let m = |label: &str, start, end| EnumMapping { label: label.into(), start, end };
        let int = IntType {
            size: 8,
            align: 8,
            signed: false,
            byte_order: ByteOrder::Little,
            base: 10,
            encoding: Encoding::None,
            clock: None,
            read: IntRead::Bits,
        };
        let e = EnumType { int, mappings: vec![m("A", 0, 0), m("B", 1, 1), m("A", 1, 2), m("C", 1, 1), m("B", 2, 2)] };
        assert_eq!(e.labels(0), ["A"]);
        assert_eq!(e.labels(1), ["A", "B", "C"]);
        assert_eq!(e.labels(2), ["A", "B"]);
        assert!(e.labels(3).is_empty());
    }
}

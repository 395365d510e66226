//! Read-only views of decoded values: structures, arrays, scalars, borrowed from the trace data.

use crate::decode::{Node, NodeKind};
use crate::types::{StructType, Ty};

/// A decoded value.
#[derive(Debug, Clone, Copy)]
pub enum FieldValue<'a> {
    /// Unsigned integer.
    U64(u64),
    /// Signed integer.
    I64(i64),
    /// Enumeration: its integer value and its label, if a mapping holds it.
    Enum {
        /// The value.
        value: i128,
        /// The first matching label.
        label: Option<&'a str>,
    },
    /// Floating point number.
    F64(f64),
    /// String bytes (no terminating NUL), as in the trace: usually UTF-8.
    Str(&'a [u8]),
    /// Structure.
    Struct(StructRef<'a>),
    /// Array or sequence.
    Array(ArrayRef<'a>),
}

impl<'a> FieldValue<'a> {
    /// The value as an unsigned integer, if it is an integer or enumeration (signed values are cast).
    #[inline]
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            FieldValue::U64(v) => Some(v),
            FieldValue::I64(v) => Some(v as u64),
            FieldValue::Enum { value, .. } => Some(value as u64),
            _ => None,
        }
    }

    /// The value as a signed integer, if it is an integer or enumeration (unsigned values are cast).
    #[inline]
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            FieldValue::U64(v) => Some(v as i64),
            FieldValue::I64(v) => Some(v),
            FieldValue::Enum { value, .. } => Some(value as i64),
            _ => None,
        }
    }

    /// The value as a string, if it is one (invalid UTF-8 is replaced).
    pub fn as_str(&self) -> Option<std::borrow::Cow<'a, str>> {
        match *self {
            FieldValue::Str(b) => Some(String::from_utf8_lossy(b)),
            _ => None,
        }
    }

    /// The string bytes, if it is a string.
    #[inline]
    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        match *self {
            FieldValue::Str(b) => Some(b),
            _ => None,
        }
    }

    /// The array, if it is one.
    pub fn as_array(&self) -> Option<ArrayRef<'a>> {
        match *self {
            FieldValue::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// Builds the view of the value whose first node is `nodes[k]`.
#[inline]
pub(crate) fn value_at<'a>(ty: &'a Ty, nodes: &'a [Node], k: usize, data: &'a [u8]) -> FieldValue<'a> {
    let n = nodes[k];
    match ty {
        Ty::Int { .. } => match n.kind {
            NodeKind::I => FieldValue::I64(n.bits as i64),
            _ => FieldValue::U64(n.bits),
        },
        Ty::Enum { t, .. } => {
            let value = if t.int.signed { n.bits as i64 as i128 } else { n.bits as i128 };
            FieldValue::Enum { value, label: t.label(value) }
        }
        Ty::Float(_) => FieldValue::F64(f64::from_bits(n.bits)),
        Ty::String(_) | Ty::TextArray { .. } | Ty::TextSequence { .. } => {
            let s = n.bits as usize;
            FieldValue::Str(&data[s..s + n.aux as usize])
        }
        Ty::Struct(s) => FieldValue::Struct(StructRef { ty: s, nodes: &nodes[k..k + n.span()], data }),
        Ty::Array { elem, .. } | Ty::Sequence { elem, .. } => {
            FieldValue::Array(ArrayRef { elem, nodes: &nodes[k..k + n.span()], data })
        }
        Ty::Variant(v) => value_at(&v.options[n.bits as usize].ty, nodes, k + 1, data),
    }
}

/// The type of the value at `nodes[k]` with variants resolved, and how many variants were crossed
/// (the value's own node is that many nodes further).
#[inline]
fn selected<'a>(ty: &'a Ty, nodes: &[Node], k: usize) -> (&'a Ty, u32) {
    let (mut t, mut k, mut depth) = (ty, k, 0);
    while let Ty::Variant(v) = t {
        match (v.options.get(nodes[k].bits as usize), nodes.get(k + 1)) {
            (Some(o), Some(_)) => {
                t = &o.ty;
                k += 1;
                depth += 1;
            }
            _ => break,
        }
    }
    (t, depth)
}

/// A member of a decoded structure, or an element of an array, with its types.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    /// The member's name (empty for an array element).
    pub name: &'a str,
    /// The type as declared (a variant stays a variant).
    pub declared: &'a Ty,
    /// The type of the value: variants resolved to their selected option.
    pub ty: &'a Ty,
    /// How many variants enclose the value (0 unless `declared` is a variant).
    pub variants: u32,
    /// The value.
    pub value: FieldValue<'a>,
}

impl<'a> Member<'a> {
    /// The member `name` of type `declared` whose first node is `nodes[k]`.
    #[inline]
    fn at(name: &'a str, declared: &'a Ty, nodes: &'a [Node], k: usize, data: &'a [u8]) -> Self {
        let (ty, variants) = selected(declared, nodes, k);
        Member { name, declared, ty, variants, value: value_at(ty, nodes, k + variants as usize, data) }
    }
}

/// A decoded structure.
#[derive(Debug, Clone, Copy)]
pub struct StructRef<'a> {
    pub(crate) ty: &'a StructType,
    pub(crate) nodes: &'a [Node],
    pub(crate) data: &'a [u8],
}

impl<'a> StructRef<'a> {
    /// Builds a view over a structure's nodes (`nodes[0]` is the structure node).
    pub(crate) fn new(ty: &'a StructType, nodes: &'a [Node], data: &'a [u8]) -> Self {
        StructRef { ty, nodes, data }
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.ty.fields.len()
    }

    /// Whether it has no member.
    pub fn is_empty(&self) -> bool {
        self.ty.fields.is_empty()
    }

    /// The structure type.
    pub fn ty(&self) -> &'a StructType {
        self.ty
    }

    /// The member at position `i` (see `EventClass::field_index`).
    #[inline]
    pub fn field_at(&self, i: usize) -> Option<FieldValue<'a>> {
        if i >= self.ty.fields.len() || self.nodes.is_empty() {
            return None;
        }
        Some(value_at(&self.ty.fields[i].ty, self.nodes, self.node_of(i), self.data))
    }

    /// The node of member `i` (in range).
    #[inline]
    fn node_of(&self, i: usize) -> usize {
        if let Some(n) = self.ty.fixed_node(i) {
            return n;
        }
        let mut k = 1;
        for _ in 0..i {
            k += self.nodes[k].span();
        }
        k
    }

    /// The member at position `i` as an unsigned integer (as
    /// [`FieldValue::as_u64`] of [`field_at`](Self::field_at)), read from its node without
    /// making its value when it is an integer or enumeration of a fixed-layout structure.
    #[inline]
    pub fn u64_at(&self, i: usize) -> Option<u64> {
        match self.ty.fields.get(i)?.ty {
            Ty::Int { .. } | Ty::Enum { .. } if !self.nodes.is_empty() => Some(self.nodes[self.node_of(i)].bits),
            _ => self.field_at(i)?.as_u64(),
        }
    }

    /// The member named `name` (without leading underscore).
    pub fn field(&self, name: &str) -> Option<FieldValue<'a>> {
        self.field_at(self.ty.index_of(name)?)
    }

    /// Members with their names, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, FieldValue<'a>)> + '_ {
        let mut k = 1;
        self.ty.fields.iter().map(move |f| {
            let v = value_at(&f.ty, self.nodes, k, self.data);
            k += self.nodes[k].span();
            (f.name.as_str(), v)
        })
    }

    /// Members with their names and types (variants resolved to the selected option), in order.
    pub fn iter_typed(&self) -> impl Iterator<Item = (&'a str, &'a Ty, FieldValue<'a>)> + '_ {
        self.members().map(|m| (m.name, m.ty, m.value))
    }

    /// Members with their declared and selected types, in order.
    pub fn members(&self) -> impl Iterator<Item = Member<'a>> + '_ {
        let mut k = 1;
        self.ty.fields.iter().map(move |f| {
            let m = Member::at(&f.name, &f.ty, self.nodes, k, self.data);
            k += self.nodes[k].span();
            m
        })
    }
}

/// A decoded array or sequence.
#[derive(Debug, Clone, Copy)]
pub struct ArrayRef<'a> {
    elem: &'a Ty,
    nodes: &'a [Node],
    data: &'a [u8],
}

impl<'a> ArrayRef<'a> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.nodes[0].bits as usize
    }

    /// Whether it has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element type.
    pub fn elem_ty(&self) -> &'a Ty {
        self.elem
    }

    /// Elements in order.
    pub fn iter(&self) -> impl Iterator<Item = FieldValue<'a>> + '_ {
        let mut k = 1;
        (0..self.len()).map(move |_| {
            let v = value_at(self.elem, self.nodes, k, self.data);
            k += self.nodes[k].span();
            v
        })
    }

    /// Elements with their declared and selected types, in order (names are empty).
    pub fn members(&self) -> impl Iterator<Item = Member<'a>> + '_ {
        let mut k = 1;
        (0..self.len()).map(move |_| {
            let m = Member::at("", self.elem, self.nodes, k, self.data);
            k += self.nodes[k].span();
            m
        })
    }

    /// Elements as bytes, if they are unsigned integers (GIDs and the like).
    pub fn to_u64_vec(&self) -> Vec<u64> {
        self.iter().filter_map(|v| v.as_u64()).collect()
    }
}

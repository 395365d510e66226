//! Syntax tree of TSDL metadata, as parsed, before any name or type is resolved.

/// A type as written in the metadata.
#[derive(Debug, Clone)]
pub enum TypeSpec {
    /// `integer { ... }`
    Integer(Vec<Attr>),
    /// `floating_point { ... }`
    Float(Vec<Attr>),
    /// `string` or `string { encoding = ...; }`
    String(Vec<Attr>),
    /// `enum [name] [: base] [{ entries }]`
    Enum {
        /// Declared name, if any.
        name: Option<String>,
        /// Container integer type.
        base: Option<Box<TypeSpec>>,
        /// Mappings, when given here.
        entries: Option<Vec<EnumEntry>>,
    },
    /// `struct [name] [{ body }] [align(n)]`
    Struct {
        /// Declared name, if any.
        name: Option<String>,
        /// Members, when given here.
        body: Option<Vec<Stmt>>,
        /// Minimum alignment in bits.
        align: Option<u64>,
    },
    /// `variant [name] [<tag>] [{ body }]`
    Variant {
        /// Declared name, if any.
        name: Option<String>,
        /// Tag path, if given.
        tag: Option<String>,
        /// Options, when given here.
        body: Option<Vec<Stmt>>,
    },
    /// A reference to a type alias (possibly several words, as `unsigned long`).
    Named(String),
}

/// `key = value;` inside a block or a type.
#[derive(Debug, Clone)]
pub struct Attr {
    /// The key, dotted parts joined with `.`.
    pub key: String,
    /// The value.
    pub value: Value,
    /// Byte offset of the key in the metadata text.
    pub offset: usize,
}

/// The right-hand side of `=`.
#[derive(Debug, Clone)]
pub enum Value {
    /// An integer (possibly negative).
    Int(i128),
    /// A string literal.
    Str(String),
    /// An identifier or dotted path.
    Ident(String),
}

/// One mapping of an enumeration.
#[derive(Debug, Clone)]
pub struct EnumEntry {
    /// Label as written (no underscore removed).
    pub label: String,
    /// First value, if given.
    pub start: Option<i128>,
    /// Last value of a range, if given.
    pub end: Option<i128>,
}

/// Array or sequence length in a declarator.
#[derive(Debug, Clone)]
pub enum Subscript {
    /// A fixed length.
    Len(u64),
    /// The path of the length field.
    Path(String),
}

/// A declared name with its array/sequence subscripts.
#[derive(Debug, Clone)]
pub struct Declarator {
    /// The name as written.
    pub name: String,
    /// Subscripts, outermost first.
    pub subs: Vec<Subscript>,
    /// Byte offset in the metadata text.
    pub offset: usize,
}

/// Kinds of top-level blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// `trace { }`
    Trace,
    /// `env { }`
    Env,
    /// `clock { }`
    Clock,
    /// `stream { }`
    Stream,
    /// `event { }`
    Event,
    /// `callsite { }`
    Callsite,
}

/// A statement of a scope.
#[derive(Debug, Clone)]
pub enum Stmt {
    /// `typealias T := name;`
    Typealias {
        /// Aliased type.
        ty: TypeSpec,
        /// Subscripts of the abstract declarator, if any.
        subs: Vec<Subscript>,
        /// New name.
        name: String,
    },
    /// `typedef T a, b[2];`
    Typedef {
        /// Base type.
        ty: TypeSpec,
        /// New names.
        decls: Vec<Declarator>,
    },
    /// A field: `T a, b[len];`
    Field {
        /// Field type.
        ty: TypeSpec,
        /// Declared names.
        decls: Vec<Declarator>,
    },
    /// `struct foo { ... };` alone (declares a named type).
    TypeDecl(TypeSpec),
    /// `trace { ... };` and the like.
    Block {
        /// Which block.
        kind: BlockKind,
        /// Its statements.
        body: Vec<Stmt>,
        /// Offset in text.
        offset: usize,
    },
    /// `key = value;`
    Assign(Attr),
    /// `key := type;`
    TypeAssign {
        /// The dotted key.
        key: String,
        /// The type.
        ty: TypeSpec,
        /// Subscripts after the type, if any.
        subs: Vec<Subscript>,
        /// Offset in text.
        offset: usize,
    },
}

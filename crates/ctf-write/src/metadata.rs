//! TSDL metadata: the text of a trace's declarations, in LTTng-UST 2.13's layout, and its packets.

use std::fmt::Write as _;

/// The type of a payload field, as LTTng-UST's `ctf_*` macros declare it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldType {
    /// `ctf_integer_hex(const void *)`: 64-bit unsigned, shown in hex.
    Pointer,
    /// `ctf_integer(uint64_t | size_t)`.
    U64,
    /// `ctf_integer(int64_t)`.
    I64,
    /// `ctf_integer(int)`: 32-bit signed (C `bool` arguments are recorded as 0/1).
    I32,
    /// `ctf_string`: NUL-terminated UTF-8.
    String,
    /// `ctf_array(uint8_t, n)`.
    U8Array(u32),
    /// `ctf_sequence_hex(const void *, size_t)`: a `size_t` length then pointers.
    PointerSequence,
}

/// A payload field declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDecl {
    /// Name (without LTTng's leading underscore; it is added in the metadata).
    pub name: String,
    /// Type.
    pub ty: FieldType,
}

/// An event class declaration; its id is its index in [`TraceDecl::events`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventDecl {
    /// Full name, `provider:event`; empty: not declared (the id stays reserved).
    pub name: String,
    /// Payload fields in order.
    pub fields: Vec<FieldDecl>,
}

/// What the metadata of a written trace says besides its events.
#[derive(Debug, Clone)]
pub struct TraceDecl {
    /// Trace UUID.
    pub uuid: [u8; 16],
    /// Clock offset: ns from the Unix epoch at clock value 0 (realtime − monotonic).
    pub clock_offset_ns: i64,
    /// Clock UUID: the same for every trace of one host (LTTng uses the boot id), so that
    /// readers correlate the traces of several processes.
    pub clock_uuid: [u8; 16],
    /// Environment (`tracer_name`, `hostname`, ...).
    pub env: Vec<(String, String)>,
    /// Event classes; an event's id is its position.
    pub events: Vec<EventDecl>,
}

fn uuid_str(u: &[u8; 16]) -> String {
    let h: String = u.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

fn field_tsdl(f: &FieldDecl) -> String {
    let n = &f.name;
    match f.ty {
        FieldType::Pointer => {
            format!("\t\tinteger {{ size = 64; align = 8; signed = 0; encoding = none; base = 16; }} _{n};\n")
        }
        FieldType::U64 => {
            format!("\t\tinteger {{ size = 64; align = 8; signed = 0; encoding = none; base = 10; }} _{n};\n")
        }
        FieldType::I64 => {
            format!("\t\tinteger {{ size = 64; align = 8; signed = 1; encoding = none; base = 10; }} _{n};\n")
        }
        FieldType::I32 => {
            format!("\t\tinteger {{ size = 32; align = 8; signed = 1; encoding = none; base = 10; }} _{n};\n")
        }
        FieldType::String => format!("\t\tstring _{n};\n"),
        FieldType::U8Array(len) => {
            format!("\t\tinteger {{ size = 8; align = 8; signed = 0; encoding = none; base = 10; }} _{n}[{len}];\n")
        }
        FieldType::PointerSequence => format!(
            "\t\tinteger {{ size = 64; align = 8; signed = 0; encoding = none; base = 10; }} __{n}_length;\n\
             \t\tinteger {{ size = 64; align = 8; signed = 0; encoding = none; base = 16; }} _{n}[ __{n}_length ];\n"
        ),
    }
}

/// The TSDL text of a trace: LTTng-UST 2.13's layout.
pub fn metadata_text(t: &TraceDecl) -> String {
    let mut s = String::with_capacity(8192);
    s.push_str("/* CTF 1.8 */\n\n");
    for (size, name) in [(8, "uint8_t"), (16, "uint16_t"), (32, "uint32_t"), (64, "uint64_t"), (64, "unsigned long")] {
        let _ = writeln!(s, "typealias integer {{ size = {size}; align = 8; signed = false; }} := {name};");
    }
    s.push_str("typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n");
    s.push_str("typealias integer { size = 27; align = 1; signed = false; } := uint27_t;\n\n");
    let _ = write!(
        s,
        "trace {{\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"{}\";\n\tbyte_order = le;\n\tpacket.header := struct {{\n\
         \t\tuint32_t magic;\n\t\tuint8_t  uuid[16];\n\t\tuint32_t stream_id;\n\t\tuint64_t stream_instance_id;\n\t}};\n}};\n\n",
        uuid_str(&t.uuid)
    );
    s.push_str("env {\n");
    for (k, v) in &t.env {
        match v.parse::<i64>() {
            Ok(i) => {
                let _ = writeln!(s, "\t{k} = {i};");
            }
            Err(_) => {
                let _ = writeln!(s, "\t{k} = \"{}\";", v.replace('\\', "\\\\").replace('"', "\\\""));
            }
        }
    }
    s.push_str("};\n\n");
    let _ = write!(
        s,
        "clock {{\n\tname = \"monotonic\";\n\tuuid = \"{}\";\n\tdescription = \"Monotonic Clock\";\n\
         \tfreq = 1000000000; /* Frequency, in Hz */\n\t/* clock value offset from Epoch is: offset * (1/freq) */\n\
         \toffset = {};\n}};\n\n",
        uuid_str(&t.clock_uuid),
        t.clock_offset_ns
    );
    s.push_str(
        "typealias integer {\n\tsize = 27; align = 1; signed = false;\n\tmap = clock.monotonic.value;\n} := uint27_clock_monotonic_t;\n\n\
         typealias integer {\n\tsize = 32; align = 8; signed = false;\n\tmap = clock.monotonic.value;\n} := uint32_clock_monotonic_t;\n\n\
         typealias integer {\n\tsize = 64; align = 8; signed = false;\n\tmap = clock.monotonic.value;\n} := uint64_clock_monotonic_t;\n\n\
         struct packet_context {\n\tuint64_clock_monotonic_t timestamp_begin;\n\tuint64_clock_monotonic_t timestamp_end;\n\
         \tuint64_t content_size;\n\tuint64_t packet_size;\n\tuint64_t packet_seq_num;\n\tunsigned long events_discarded;\n\
         \tuint32_t cpu_id;\n};\n\n\
         struct event_header_compact {\n\tenum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n\tvariant <id> {\n\
         \t\tstruct {\n\t\t\tuint27_clock_monotonic_t timestamp;\n\t\t} compact;\n\t\tstruct {\n\t\t\tuint32_t id;\n\
         \t\t\tuint64_clock_monotonic_t timestamp;\n\t\t} extended;\n\t} v;\n} align(8);\n\n\
         struct event_header_large {\n\tenum : uint16_t { compact = 0 ... 65534, extended = 65535 } id;\n\tvariant <id> {\n\
         \t\tstruct {\n\t\t\tuint32_clock_monotonic_t timestamp;\n\t\t} compact;\n\t\tstruct {\n\t\t\tuint32_t id;\n\
         \t\t\tuint64_clock_monotonic_t timestamp;\n\t\t} extended;\n\t} v;\n} align(8);\n\n\
         stream {\n\tid = 0;\n\tevent.header := struct event_header_large;\n\tpacket.context := struct packet_context;\n\
         \tevent.context := struct {\n\
         \t\tinteger { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vpid;\n\
         \t\tinteger { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vtid;\n\
         \t\tinteger { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; } _procname[17];\n\t};\n};\n\n",
    );
    for (id, e) in t.events.iter().enumerate().filter(|(_, e)| !e.name.is_empty()) {
        let _ = write!(
            s,
            "event {{\n\tname = \"{}\";\n\tid = {id};\n\tstream_id = 0;\n\tloglevel = 13;\n\tfields := struct {{\n",
            e.name
        );
        for f in &e.fields {
            s.push_str(&field_tsdl(f));
        }
        s.push_str("\t};\n};\n\n");
    }
    s
}

/// The metadata as LTTng writes it: packets of 4 KiB with a 37-byte header.
pub fn packetize_metadata(text: &str, uuid: &[u8; 16]) -> Vec<u8> {
    const PACKET: usize = 4096;
    const HEADER: usize = 37;
    let mut out = Vec::with_capacity(text.len() + text.len() / 16 + PACKET);
    for chunk in text.as_bytes().chunks(PACKET - HEADER) {
        let content = HEADER + chunk.len();
        out.extend_from_slice(&0x75D1_1D57u32.to_le_bytes());
        out.extend_from_slice(uuid);
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&((content * 8) as u32).to_le_bytes());
        out.extend_from_slice(&((PACKET * 8) as u32).to_le_bytes());
        out.extend_from_slice(&[0, 0, 0, 1, 8]);
        out.extend_from_slice(chunk);
        out.resize(out.len() + PACKET - content, 0);
    }
    out
}

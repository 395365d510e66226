//! Metadata: reading the `metadata` file (plain text or packetized) and turning its TSDL into a [`Schema`].

mod ast;
mod lexer;
mod parser;
mod resolve;

use crate::error::{Error, MetadataError, Result};
use crate::schema::Schema;
use std::path::Path;

/// Magic number of a metadata packet.
pub const METADATA_MAGIC: u32 = 0x75D1_1D57;
const PACKET_HEADER_LEN: usize = 37;

/// The TSDL text of a metadata file, with where each part of it came from.
#[derive(Debug, Clone)]
pub struct MetadataText {
    /// The TSDL text.
    pub text: String,
    /// For packetized metadata: (text offset, file offset) where each packet's text starts.
    pub packets: Vec<(usize, u64)>,
    /// UUID from the metadata packet headers, if packetized.
    pub uuid: Option<[u8; 16]>,
}

impl MetadataText {
    /// Maps a byte offset of the text to a byte offset of the file.
    pub fn file_offset(&self, text_offset: usize) -> u64 {
        if self.packets.is_empty() {
            return text_offset as u64;
        }
        let k = self.packets.partition_point(|(t, _)| *t <= text_offset).saturating_sub(1);
        let (t, f) = self.packets[k];
        f + (text_offset - t) as u64
    }
}

/// Whether `bytes` start like a CTF metadata file (a packet magic or `/* CTF 1.`).
pub fn looks_like_metadata(bytes: &[u8]) -> bool {
    if bytes.len() >= 4 {
        let m = [bytes[0], bytes[1], bytes[2], bytes[3]];
        if u32::from_le_bytes(m) == METADATA_MAGIC || u32::from_be_bytes(m) == METADATA_MAGIC {
            return true;
        }
    }
    let head = &bytes[..bytes.len().min(64)];
    let s = String::from_utf8_lossy(head);
    s.trim_start().starts_with("/* CTF") || s.contains("CTF 1.")
}

/// Why the first bytes of a `metadata` file are not CTF metadata (what they are instead), or
/// `None` when they look like metadata (see [`looks_like_metadata`]).
pub fn not_metadata(head: &[u8]) -> Option<String> {
    if looks_like_metadata(head) {
        return None;
    }
    if head.is_empty() {
        return Some("the file is empty".into());
    }
    let shown = &head[..head.len().min(8)];
    let hex: Vec<String> = shown.iter().map(|b| format!("{b:02x}")).collect();
    let text: String = shown.iter().map(|&b| if b.is_ascii_graphic() || b == b' ' { b as char } else { '.' }).collect();
    Some(format!(
        "starts with {} ({text:?}), neither a metadata packet (magic {METADATA_MAGIC:#010x}) nor TSDL text (`/* CTF 1.8`)",
        hex.join(" ")
    ))
}

/// Extracts the TSDL text from metadata file bytes (either form).
pub fn metadata_text(bytes: &[u8]) -> std::result::Result<MetadataText, (u64, String)> {
    if bytes.len() >= 4 {
        let m = [bytes[0], bytes[1], bytes[2], bytes[3]];
        let le = u32::from_le_bytes(m) == METADATA_MAGIC;
        let be = u32::from_be_bytes(m) == METADATA_MAGIC;
        if le || be {
            return packetized(bytes, le);
        }
    }
    Ok(MetadataText { text: String::from_utf8_lossy(bytes).into_owned(), packets: Vec::new(), uuid: None })
}

fn packetized(bytes: &[u8], le: bool) -> std::result::Result<MetadataText, (u64, String)> {
    let rd32 = |b: &[u8]| {
        let a = [b[0], b[1], b[2], b[3]];
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let mut text = Vec::with_capacity(bytes.len());
    let mut packets = Vec::new();
    let mut pos = 0usize;
    let mut uuid = None;
    while pos < bytes.len() {
        let off = pos as u64;
        if bytes.len() - pos < PACKET_HEADER_LEN {
            return Err((off, "truncated metadata packet header".into()));
        }
        let h = &bytes[pos..];
        if rd32(h) != METADATA_MAGIC {
            return Err((off, format!("bad metadata packet magic {:#010x}", rd32(h))));
        }
        let mut u = [0u8; 16];
        u.copy_from_slice(&h[4..20]);
        match uuid {
            None => uuid = Some(u),
            Some(prev) if prev != u => return Err((off, "metadata packets with different UUIDs".into())),
            _ => {}
        }
        let content_bits = rd32(&h[24..]) as usize;
        let packet_bits = rd32(&h[28..]) as usize;
        let (compression, encryption, checksum) = (h[32], h[33], h[34]);
        if compression != 0 || encryption != 0 || checksum != 0 {
            return Err((off, "compressed, encrypted or checksummed metadata is not supported".into()));
        }
        if !packet_bits.is_multiple_of(8)
            || !content_bits.is_multiple_of(8)
            || content_bits > packet_bits
            || content_bits / 8 < PACKET_HEADER_LEN
        {
            return Err((
                off,
                format!("invalid metadata packet sizes (content {content_bits} bits, packet {packet_bits} bits)"),
            ));
        }
        let content = content_bits / 8;
        let packet = packet_bits / 8;
        if content > bytes.len() - pos {
            return Err((off, format!("metadata packet of {content} bytes, file has only {} left", bytes.len() - pos)));
        }
        packets.push((text.len(), off + PACKET_HEADER_LEN as u64));
        text.extend_from_slice(&h[PACKET_HEADER_LEN..content]);
        pos += packet.max(content);
    }
    Ok(MetadataText { text: String::from_utf8_lossy(&text).into_owned(), packets, uuid })
}

/// Parses TSDL text into a schema; errors carry offsets into the text.
pub fn parse_schema(text: &str) -> std::result::Result<Schema, MetadataError> {
    let stmts = parser::parse(text)?;
    resolve::resolve(&stmts)
}

/// Reads and parses a metadata file.
pub fn read_metadata(path: &Path) -> Result<(Schema, MetadataText)> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    let mt = metadata_text(&bytes).map_err(|(offset, message)| Error::Metadata {
        path: path.to_path_buf(),
        offset,
        message,
    })?;
    let schema = parse_schema(&mt.text).map_err(|e| Error::Metadata {
        path: path.to_path_buf(),
        offset: mt.file_offset(e.offset),
        message: e.message,
    })?;
    Ok((schema, mt))
}

//! A part of a trace set written out as traces of its own: the metadata of each trace and the
//! packets a filter keeps, copied byte for byte (a recording's last seconds, with the packets
//! that declare what they use). Their sequence numbers and discarded-event counters are
//! rewritten so that a reader of the part sees no packet lost where packets were left out, and
//! only the events discarded in the packets kept.

use crate::index::PacketFilter;
use crate::packet::LossKind;
use crate::set::TraceSet;
use crate::types::{ByteOrder, Ty};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// What [`TraceSet::extract`] wrote.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Extracted {
    /// Traces written (a metadata file each).
    pub traces: usize,
    /// Packets written.
    pub packets: u64,
    /// Bytes of the packets written.
    pub bytes: u64,
}

/// Where an unsigned integer member is in a packet: byte offset, size in bytes, big-endian.
#[derive(Clone, Copy, Debug)]
struct At {
    offset: usize,
    bytes: usize,
    be: bool,
}

impl At {
    fn read(&self, p: &[u8]) -> Option<u64> {
        let b = p.get(self.offset..self.offset + self.bytes)?;
        let mut v = 0u64;
        for i in 0..self.bytes {
            let byte = if self.be { b[i] } else { b[self.bytes - 1 - i] };
            v = v << 8 | byte as u64;
        }
        Some(v)
    }

    fn write(&self, p: &mut [u8], v: u64) {
        let Some(b) = p.get_mut(self.offset..self.offset + self.bytes) else { return };
        for (i, x) in b.iter_mut().enumerate() {
            let shift = 8 * if self.be { self.bytes - 1 - i } else { i };
            *x = (v >> shift) as u8;
        }
    }
}

/// The byte offsets of the members `names` of a packet's header and context laid out one after
/// the other, as far as the members before them have fixed byte sizes (LTTng's do).
fn members(header: Option<&Ty>, context: Option<&Ty>, names: [&str; 2]) -> [Option<At>; 2] {
    let mut out = [None, None];
    let mut bits = 0u64;
    let align = |bits: u64, a: u32| bits.div_ceil(a.max(1) as u64) * a.max(1) as u64;
    for s in [header, context].into_iter().flatten() {
        let Some(s) = s.as_struct() else { return out };
        bits = align(bits, s.align);
        for f in &s.fields {
            let (a, size, int) = match &f.ty {
                Ty::Int { t, .. } => (t.align, t.size as u64, Some((t.size, t.byte_order))),
                Ty::Enum { t, .. } => (t.int.align, t.int.size as u64, None),
                Ty::Array { elem, len } => match elem.as_ref() {
                    Ty::Int { t, .. } if t.size.is_multiple_of(8) => (t.align, t.size as u64 * len, None),
                    _ => return out,
                },
                Ty::TextArray { len, align, .. } => (*align, 8 * len, None),
                _ => return out,
            };
            bits = align(bits, a);
            if let Some(i) = names.iter().position(|n| *n == f.name) {
                out[i] =
                    int.filter(|(size, _)| bits.is_multiple_of(8) && size.is_multiple_of(8)).map(|(size, order)| At {
                        offset: (bits / 8) as usize,
                        bytes: (size / 8) as usize,
                        be: order == ByteOrder::Big,
                    });
            }
            bits += size;
        }
    }
    out
}

impl TraceSet {
    /// Writes the traces of the set below `dest`, each at its place relative to `base` (a trace
    /// not below `base`: at its directory's name), with the packets of each stream file that
    /// `keep` keeps (called as a packet filter is: the file, the packet's offset and end time),
    /// in their order, in a file of the same name. Only the packets indexed are seen: call
    /// [`refresh`](Self::refresh) first. Packet sequence numbers are renumbered from the
    /// first packet kept, and `events_discarded` counts only what was discarded in the packets
    /// kept, where those members have fixed places (LTTng's layout).
    pub fn extract(&self, base: &Path, dest: &Path, keep: &PacketFilter) -> std::io::Result<Extracted> {
        let mut done = Extracted::default();
        for t in &self.traces {
            let rel: PathBuf = match t.dir.strip_prefix(base) {
                Ok(r) if !r.as_os_str().is_empty() => r.to_path_buf(),
                _ => t.dir.file_name().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("trace")),
            };
            let out_dir = dest.join(rel);
            std::fs::create_dir_all(&out_dir)?;
            std::fs::copy(t.dir.join("metadata"), out_dir.join("metadata"))?;
            done.traces += 1;
            let places: Vec<[Option<At>; 2]> = t
                .schema
                .streams
                .iter()
                .map(|sc| {
                    members(
                        t.schema.packet_header.as_ref(),
                        sc.packet_context.as_ref(),
                        ["packet_seq_num", "events_discarded"],
                    )
                })
                .collect();
            for s in &t.streams {
                let data = s.data();
                let mut out: Option<std::io::BufWriter<std::fs::File>> = None;
                let (mut seq, mut left_out) = (0u64, 0u64);
                for p in &s.index {
                    let Some(bytes) = data.get(p.offset as usize..p.next as usize) else { continue };
                    if !keep(&s.path, p.offset, p.end_ns) {
                        left_out += p
                            .losses
                            .iter()
                            .map(|l| match l.kind {
                                LossKind::Events(n) => n,
                                LossKind::Packets(_) => 0,
                            })
                            .sum::<u64>();
                        continue;
                    }
                    let mut packet = bytes.to_vec();
                    if let Some([seq_at, discarded_at]) = places.get(p.stream_class as usize) {
                        if let Some(at) = seq_at {
                            at.write(&mut packet, seq);
                        }
                        if let Some(at) = discarded_at {
                            let n = at.read(&packet).unwrap_or(0);
                            at.write(&mut packet, n.saturating_sub(left_out));
                        }
                    }
                    seq += 1;
                    let w = match &mut out {
                        Some(w) => w,
                        None => {
                            let name = s.path.file_name().unwrap_or_default();
                            out.insert(std::io::BufWriter::new(std::fs::File::create(out_dir.join(name))?))
                        }
                    };
                    w.write_all(&packet)?;
                    done.packets += 1;
                    done.bytes += packet.len() as u64;
                }
                if let Some(mut w) = out {
                    w.flush()?;
                }
            }
        }
        Ok(done)
    }

    /// The packet filter set on the set, if any (see [`skip_packets`](Self::skip_packets)):
    /// `true` for a packet passed over.
    pub fn packet_filter(&self) -> Option<std::sync::Arc<PacketFilter>> {
        self.skip.clone()
    }
}

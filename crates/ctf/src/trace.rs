//! One CTF trace: its metadata and the data stream files beside it, memory-mapped; which files
//! are streams (copies and damaged files told apart), and keeping up with a trace being written.

use crate::error::{Error, Result};
use crate::index::{Indexed, Resume};
use crate::metadata::{read_metadata, MetadataText};
use crate::packet::{PacketInfo, PACKET_MAGIC};
use crate::schema::Schema;
use crate::stream::StreamReader;
use crate::types::ByteOrder;
use memmap2::Mmap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How much of a stream file the indexer reads before it gives the pages back.
const INDEX_RELEASE_STEP: u64 = 16 << 20;

/// Bytes left to index from which the packet headers are read from the file rather than through
/// its mapping ([`crate::headers`]).
const HEADERS_FROM_FILE: u64 = 1 << 20;

/// One data stream file of a trace.
pub struct StreamFile {
    /// Its path.
    pub path: PathBuf,
    pub(crate) map: Option<Mmap>,
    /// Its whole packets indexed so far ([`TraceSet::refresh`](crate::TraceSet::refresh)), and
    /// where the indexing goes on.
    pub(crate) index: Vec<Indexed>,
    resume: Option<Resume>,
    /// The file's size when it was last indexed.
    indexed_len: u64,
    /// Its first packet's header and context, as read when it was opened (when they could be).
    pub(crate) first: Option<PacketInfo>,
    /// Which file is mapped.
    pub(crate) id: Option<crate::headers::FileId>,
}

impl StreamFile {
    /// The file's bytes.
    pub fn data(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}

/// One CTF trace: a metadata file and the data stream files beside it.
pub struct Trace {
    /// The directory holding the trace.
    pub dir: PathBuf,
    /// What the metadata declares.
    pub schema: Arc<Schema>,
    /// The metadata text.
    pub metadata: MetadataText,
    /// Data stream files, sorted by name.
    pub streams: Vec<StreamFile>,
    /// Files that are copies of a stream file, not read (see [`Error::Duplicate`]), sorted.
    copies: Vec<PathBuf>,
    /// The clocks refused (see [`refuse_clocks`]), by name.
    refused: Vec<String>,
    /// The size of the metadata file read.
    metadata_len: u64,
}

impl Trace {
    /// Size of its data stream files.
    pub fn bytes(&self) -> u64 {
        self.streams.iter().map(|s| s.data().len() as u64).sum()
    }

    /// The `hostname` of the trace's environment (empty when it has none).
    pub fn hostname(&self) -> String {
        match self.schema.env("hostname") {
            Some(crate::EnvValue::Str(s)) => s.clone(),
            Some(crate::EnvValue::Int(i)) => i.to_string(),
            None => String::new(),
        }
    }

    /// Opens the trace in `dir`: parses its metadata and maps its data stream files (those that
    /// are streams: a copy of another is left out, a damaged one is read for its errors); with
    /// the errors of the files left out (a copy of another, a file that cannot be read) and of
    /// the clocks refused (those that cannot give times in ns in a signed 64-bit integer).
    pub fn open(dir: &Path) -> Result<(Trace, Vec<Error>)> {
        let metadata_len = file_len(&dir.join("metadata"));
        let (mut schema, metadata) = read_metadata(&dir.join("metadata"))?;
        let mut errors = Vec::new();
        let mut heads = Vec::new();
        for path in stream_names(dir)? {
            match head_of(&path, &schema) {
                Ok(h) => heads.push((path, h)),
                Err(e) => errors.push(e),
            }
        }
        let firsts = heads.iter().filter_map(|(p, h)| match h {
            Head::Stream { first: Some(f), .. } => Some((p.as_path(), *f)),
            _ => None,
        });
        let (refused, e) = refuse_clocks(&mut schema, &metadata, &dir.join("metadata"), firsts, &[]);
        errors.extend(e);
        let mut t = Trace {
            dir: dir.to_path_buf(),
            schema: Arc::new(schema),
            metadata,
            streams: Vec::new(),
            copies: Vec::new(),
            refused,
            metadata_len,
        };
        t.admit(heads, &mut errors);
        Ok((t, errors))
    }

    /// Maps the files of `heads` that are data streams among the trace's: those that start with
    /// the packet magic, except a copy of another (its first packet's header and context the
    /// same, with a `packet_seq_num` or a `timestamp_begin`: the longer of the two is read,
    /// the first by name of two of one size, and the other is an [`Error::Duplicate`]); and
    /// the damaged ones, read for the reader to tell where: those whose first 4 bytes are 1 or
    /// 2 bits away from the magic (in either byte order), and those named as the streams are,
    /// a number after an `_` (`chan_7`, `ros2_3`, `chan_0_2`), with a name that the trace's
    /// streams have before their numbers. Other files (notes, caches) are left out quietly.
    fn admit(&mut self, heads: Vec<(PathBuf, Head)>, errors: &mut Vec<Error>) {
        let firsts: Vec<(&Path, PacketInfo)> =
            self.streams.iter().filter_map(|s| Some((s.path.as_path(), s.first?))).collect();
        let mut stems: Vec<String> = self.streams.iter().filter_map(|s| stem_of(&s.path)).collect();
        stems.extend(heads.iter().filter(|h| matches!(h.1, Head::Stream { .. })).filter_map(|h| stem_of(&h.0)));
        let mut keep = Vec::new();
        for (i, (path, head)) in heads.iter().enumerate() {
            let of = match head {
                Head::Stream { first, len } => first.and_then(|f| {
                    let k = same_packet_key(&f)?;
                    // A file already read, else the longest file of the same first packet.
                    let old = firsts.iter().find(|o| same_packet_key(&o.1) == Some(k)).map(|o| o.0.to_path_buf());
                    old.or_else(|| {
                        let rank = |j: usize| match &heads[j].1 {
                            Head::Stream { len, .. } => (*len, std::cmp::Reverse(j)),
                            _ => (0, std::cmp::Reverse(j)),
                        };
                        let same = |j: &usize| match &heads[*j].1 {
                            Head::Stream { first: Some(g), .. } => same_packet_key(g) == Some(k),
                            _ => false,
                        };
                        let best = (0..heads.len()).filter(same).max_by_key(|&j| rank(j))?;
                        (best != i).then(|| heads[best].0.clone())
                    })
                    .map(|of| (of, f, *len))
                }),
                _ => None,
            };
            if let Some((of, f, bytes)) = of {
                errors.push(Error::Duplicate { path: path.clone(), of, bytes, message: describe_first(&f) });
                if let Err(k) = self.copies.binary_search(path) {
                    self.copies.insert(k, path.clone());
                }
                continue;
            }
            let read = match head {
                Head::Stream { .. } | Head::NearMagic => true,
                Head::Other => stem_of(path).is_some_and(|s| stems.contains(&s)),
                Head::Unknown | Head::Skip => false,
            };
            if read {
                keep.push(i);
            }
        }
        for (i, (path, head)) in heads.into_iter().enumerate() {
            if !keep.contains(&i) {
                continue;
            }
            let first = match head {
                Head::Stream { first, .. } => first,
                _ => None,
            };
            match StreamFile::map(path, first) {
                Ok(Some(s)) => match self.streams.binary_search_by(|x| x.path.cmp(&s.path)) {
                    Ok(_) => {}
                    Err(k) => self.streams.insert(k, s),
                },
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        }
    }

    /// Reads the metadata again when it grew (LTTng appends to it as classes are declared),
    /// maps the stream files that grew again and adds those that appeared.
    pub(crate) fn refresh(&mut self, errors: &mut Vec<Error>) {
        let path = self.dir.join("metadata");
        let len = file_len(&path);
        if len != self.metadata_len {
            match read_metadata(&path) {
                Ok((mut schema, metadata)) => {
                    let firsts = self.streams.iter().filter_map(|s| Some((s.path.as_path(), s.first?)));
                    let (refused, e) = refuse_clocks(&mut schema, &metadata, &path, firsts, &self.refused);
                    errors.extend(e);
                    self.refused = refused;
                    (self.schema, self.metadata, self.metadata_len) = (Arc::new(schema), metadata, len);
                }
                // (Read again at the next refresh: it may be being written.)
                Err(e) => errors.push(e),
            }
        }
        let names = match stream_names(&self.dir) {
            Ok(n) => n,
            Err(e) => return errors.push(e),
        };
        let mut heads = Vec::new();
        for path in names {
            match self.streams.binary_search_by(|s| s.path.cmp(&path)) {
                Ok(i) => {
                    if let Err(e) = self.streams[i].remap() {
                        errors.push(e);
                    }
                }
                // (A copy is reported once.)
                Err(_) if self.copies.binary_search(&path).is_ok() => {}
                Err(_) => match head_of(&path, &self.schema) {
                    Ok(h) => heads.push((path, h)),
                    Err(e) => errors.push(e),
                },
            }
        }
        self.admit(heads, errors);
    }
}

/// The size of the file at `path` (0 when it cannot be known).
fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Refuses the clocks of `schema` that cannot give times in ns from the origin in a signed
/// 64-bit integer (up to 2262-04-11T23:47:16Z): whose offset is past that range, or past which
/// the first packet of a stream file (`firsts`: path, first packet) begins or ends. Their
/// freq or offset is wrong, and every time would be the last one (babeltrace2 refuses such a
/// trace): their stream classes are left without a clock, so that their events are read
/// without a time; an error names each, at its declaration in the metadata file `path`,
/// unless it is in `before` (refused by an earlier reading of the metadata). Returns the names
/// of the clocks refused.
fn refuse_clocks<'p>(
    schema: &mut Schema,
    metadata: &MetadataText,
    path: &Path,
    firsts: impl Iterator<Item = (&'p Path, PacketInfo)>,
    before: &[String],
) -> (Vec<String>, Vec<Error>) {
    let firsts: Vec<_> = firsts.collect();
    let mut refused = Vec::new();
    let mut errors = Vec::new();
    for (ci, clock) in schema.clocks.iter().enumerate() {
        let ns = clock.offset_s as i128 * 1_000_000_000 + clock.cycles_to_ns(clock.offset_cycles) as i128;
        let why = if ns > i64::MAX as i128 || ns < i64::MIN as i128 {
            Some(format!("its offset of {} s from the origin is out of that range", clock.offset_s))
        } else {
            let max = clock.max_cycles();
            firsts.iter().find_map(|(p, f)| {
                let sc = stream_class_of(schema, f)?;
                let past = [("begins", "timestamp_begin", f.ts_begin), ("ends", "timestamp_end", f.ts_end)]
                    .into_iter()
                    .find_map(|(verb, name, v)| v.filter(|&v| v > max).map(|v| (verb, name, v)));
                let (verb, name, v) = past.filter(|_| sc.clock == Some(ci))?;
                let file = p.file_name().unwrap_or_default().to_string_lossy();
                Some(format!(
                    "the first packet of {file} {verb} past that ({name} {v} cycles, where the last in range is {max})"
                ))
            })
        };
        let Some(why) = why else { continue };
        refused.push(clock.name.clone());
        if !before.contains(&clock.name) {
            let message = format!(
                "clock `{}` (freq {} Hz, offset {} s + {} cycles) cannot give times in ns from the origin in a signed \
                 64-bit integer (up to 2262-04-11T23:47:16Z): {why}; its freq or offset is wrong: the events of \
                 its streams are read without a time",
                clock.name, clock.freq, clock.offset_s, clock.offset_cycles
            );
            let offset = metadata.file_offset(clock.declared_at);
            errors.push(Error::Metadata { path: path.to_path_buf(), offset, message });
        }
    }
    for sc in &mut schema.streams {
        if sc.clock.is_some_and(|c| refused.contains(&schema.clocks[c].name)) {
            sc.clock = None;
        }
    }
    (refused, errors)
}

/// The stream class of a packet, as the reader finds it.
fn stream_class_of<'s>(schema: &'s Schema, p: &PacketInfo) -> Option<&'s crate::StreamClass> {
    match schema.stream(p.stream_id) {
        Some(sc) => Some(sc),
        None if schema.streams.len() == 1 && schema.packet_header.is_none() => Some(&schema.streams[0]),
        None => None,
    }
}

/// What the first bytes of a file beside a trace's metadata tell of it.
enum Head {
    /// Empty, or too short to tell: a file being written, looked at again by a refresh.
    Unknown,
    /// A data stream: it starts with the packet magic (or, when packets have none, it is not
    /// named as known other files are); its first packet, when its header and context can be
    /// read, and its size.
    Stream { first: Option<PacketInfo>, len: u64 },
    /// Its first 4 bytes are 1 or 2 bits away from the packet magic: a damaged data stream.
    NearMagic,
    /// Something else, unless its name is that of the trace's stream files.
    Other,
    /// Not a data stream, whatever its name (packets have no magic to tell).
    Skip,
}

/// Bytes of a file read to know what it is: its first packet's header and context fit in them.
const HEAD_BYTES: u64 = 4096;

/// What the file at `path` of a trace with `schema` is, from its first bytes (read from the
/// file, not a mapping: touching a mapping would map its first pages on this thread, before
/// the reading threads start).
fn head_of(path: &Path, schema: &Schema) -> Result<Head> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let has_magic =
        schema.packet_header.as_ref().and_then(|t| t.as_struct()).is_some_and(|s| s.index_of("magic") == Some(0));
    if len == 0 || (has_magic && len < 4) {
        return Ok(Head::Unknown);
    }
    if !has_magic && !looks_binary_stream(path) {
        return Ok(Head::Skip);
    }
    let mut head = vec![0u8; len.min(HEAD_BYTES) as usize];
    first_bytes(&file, &mut head).map_err(io)?;
    if has_magic {
        let m = [head[0], head[1], head[2], head[3]];
        let (v, swapped) = match schema.byte_order {
            ByteOrder::Little => (u32::from_le_bytes(m), u32::from_be_bytes(m)),
            ByteOrder::Big => (u32::from_be_bytes(m), u32::from_le_bytes(m)),
        };
        let magic = PACKET_MAGIC as u32;
        if v != magic {
            let near = [v, swapped].iter().any(|x| (x ^ magic).count_ones() <= 2);
            return Ok(if near { Head::NearMagic } else { Head::Other });
        }
    }
    let first = StreamReader::new(path, &head, schema, 0).first_packet();
    Ok(Head::Stream { first, len })
}

/// The name of the file at `path` without the numbers after `_` that end it (`chan_0_3`:
/// `chan`), when it has some.
fn stem_of(path: &Path) -> Option<String> {
    let mut s = path.file_name()?.to_str()?;
    let mut cut = false;
    while let Some((a, b)) = s.rsplit_once('_') {
        if b.is_empty() || !b.bytes().all(|c| c.is_ascii_digit()) {
            break;
        }
        (s, cut) = (a, true);
    }
    (cut && !s.is_empty()).then(|| s.to_string())
}

/// What tells a packet from the others of the trace: its stream class and instance, number,
/// begin and end time, and CPU; `None` without a number or a begin time (the packets of two
/// streams may then be alike).
type PacketKey = (u64, Option<u64>, Option<u64>, Option<u64>, Option<u64>, Option<u64>);

pub(crate) fn same_packet_key(p: &PacketInfo) -> Option<PacketKey> {
    (p.seq_num.is_some() || p.ts_begin.is_some()).then_some((
        p.stream_id,
        p.stream_instance_id,
        p.seq_num,
        p.ts_begin,
        p.ts_end,
        p.cpu_id,
    ))
}

/// The values of a first packet that make it that of a copy, for [`Error::Duplicate`].
fn describe_first(p: &PacketInfo) -> String {
    let mut v = vec![format!("stream class {}", p.stream_id)];
    let named = [
        ("stream_instance_id", p.stream_instance_id),
        ("packet_seq_num", p.seq_num),
        ("timestamp_begin", p.ts_begin),
        ("timestamp_end", p.ts_end),
        ("cpu_id", p.cpu_id),
    ];
    v.extend(named.iter().filter_map(|(n, x)| x.map(|x| format!("{n} {x}"))));
    v.join(", ")
}

/// The files of `dir` that may be data streams, sorted.
fn stream_names(dir: &Path) -> Result<Vec<PathBuf>> {
    let rd = std::fs::read_dir(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
    let mut names: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false) || e.path().is_file())
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n != "metadata" && !n.starts_with('.') && !n.ends_with(".idx")
        })
        .collect();
    names.sort();
    Ok(names)
}

/// Maps `len` bytes of `file`.
fn map_file(file: &std::fs::File, path: &Path, len: u64) -> Result<Mmap> {
    // (A file larger than the address space is refused, as memmap2 refuses it.)
    usize::try_from(len)
        .map_err(|_| std::io::Error::other("memory map length overflows usize"))
        // SAFETY: the file is only read, and only up to `len`: a recording being written only
        // appends to its files.
        .and_then(|len| unsafe { memmap2::MmapOptions::new().len(len).map(file) })
        .map_err(|source| Error::Io { path: path.to_path_buf(), source })
}

impl StreamFile {
    /// Maps the data stream file at `path`, whose first packet is `first` (`None`: it is empty).
    fn map(path: PathBuf, first: Option<PacketInfo>) -> Result<Option<StreamFile>> {
        let file = std::fs::File::open(&path).map_err(|source| Error::Io { path: path.clone(), source })?;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if len == 0 {
            return Ok(None);
        }
        let map = map_file(&file, &path, len)?;
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        let id = crate::headers::file_id(&file);
        Ok(Some(StreamFile { path, map: Some(map), index: Vec::new(), resume: None, indexed_len: 0, first, id }))
    }

    /// Maps the file again when its size changed; a file that shrank is indexed again.
    fn remap(&mut self) -> Result<()> {
        let old = self.data().len() as u64;
        if file_len(&self.path) == old {
            return Ok(());
        }
        let file = std::fs::File::open(&self.path).map_err(|source| Error::Io { path: self.path.clone(), source })?;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if len < old {
            self.index.clear();
            self.resume = None;
            self.indexed_len = 0;
        }
        self.map = if len == 0 { None } else { Some(map_file(&file, &self.path, len)?) };
        self.id = crate::headers::file_id(&file);
        Ok(())
    }

    /// Indexes the packets written since the last indexing; returns how many packet headers
    /// it read.
    pub(crate) fn index(&mut self, schema: &Schema) -> u64 {
        self.index_until(schema, None)
    }

    /// [`index`](Self::index), stopping after the first packet that ends after `until` (ns)
    /// when given: the next indexing goes on from there.
    pub(crate) fn index_until(&mut self, schema: &Schema, until: Option<i64>) -> u64 {
        let data = self.map.as_deref().unwrap_or(&[]);
        if data.len() as u64 == self.indexed_len {
            return 0;
        }
        let mut r = StreamReader::new(&self.path, data, schema, 0);
        // (What is left of a small file is read through the mapping: no file to open.)
        let from = self.resume.map_or(0, |r| r.next_packet);
        if (data.len() as u64).saturating_sub(from) >= HEADERS_FROM_FILE {
            r.read_headers_from_file(self.id);
        }
        if self.map.is_some() {
            // The pages of the headers read are given back as the indexer goes: reading one
            // header maps the pages around it too (the kernel's fault-around), so an index of
            // a large file would otherwise leave the whole file resident.
            // SAFETY: a read-only mapping of the file; what is being appended to it is after
            // the packets read.
            unsafe { r.set_mapped(INDEX_RELEASE_STEP) };
        }
        if let Some(at) = &self.resume {
            r.resume(at);
        }
        let n = r.index_packets(&mut self.index, until);
        self.resume = Some(r.resume_point());
        // (Stopped by `until`: the packets after are still to index.)
        let stopped = until.is_some_and(|u| self.index.last().and_then(|p| p.end_ns).is_some_and(|e| e > u));
        if !stopped {
            self.indexed_len = data.len() as u64;
        }
        n
    }
}

/// The first bytes of `file`, into `buf`.
fn first_bytes(file: &std::fs::File, buf: &mut [u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, 0)
    }
    #[cfg(not(unix))]
    {
        use std::io::Read as _;
        (&*file).read_exact(buf)
    }
}

/// Without a packet magic, files with names of known non-trace files are skipped.
fn looks_binary_stream(path: &Path) -> bool {
    let n = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    !(n == "converted" || n.ends_with(".txt") || n.ends_with(".md") || n.ends_with(".json") || n.ends_with(".yaml"))
}

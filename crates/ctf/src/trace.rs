//! Finding CTF traces below paths, opening them (memory-mapped), and reading them as one
//! time-ordered stream of events.

use crate::error::{Error, Result};
use crate::metadata::{not_metadata, read_metadata, MetadataText};
use crate::parallel::{FileRef, ParStreams, Piped};
use crate::schema::Schema;
use crate::stream::{Event, Indexed, Loss, PacketFilter, PacketInfo, Resume, StreamReader, PACKET_MAGIC};
use crate::types::ByteOrder;
use memmap2::Mmap;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// One data stream file of a trace.
pub struct StreamFile {
    /// Its path.
    pub path: PathBuf,
    map: Option<Mmap>,
    /// Its whole packets indexed so far ([`TraceSet::refresh`]), and where the indexing goes on.
    index: Vec<Indexed>,
    resume: Option<Resume>,
    /// The file's size when it was last indexed.
    indexed_len: u64,
    /// Its first packet's header and context, as read when it was opened (when they could be).
    first: Option<PacketInfo>,
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

/// A set of traces read together.
pub struct TraceSet {
    /// The traces, sorted by directory.
    pub traces: Vec<Trace>,
    /// Mapped data kept resident while read (see [`RESIDENT_BUDGET`]).
    budget: u64,
    /// Packets whose events every reader of the set passes over.
    skip: Option<std::sync::Arc<PacketFilter>>,
    /// The paths the set was opened on, where [`refresh`](Self::refresh) looks for new traces.
    roots: Vec<PathBuf>,
    /// Packet headers read by the set's readers, and by its indexing.
    packets_read: AtomicU64,
    packets_indexed: u64,
}

/// Finds every directory holding a CTF `metadata` file at or below `path`, sorted. When there is
/// none, the error says why: a `metadata` file that is not CTF metadata, or no `metadata` file.
pub fn find_traces(path: &Path) -> Result<Vec<PathBuf>> {
    let (dirs, mut errors) = find_traces_all(path);
    if dirs.is_empty() {
        // find_traces_all gives at least one error when it finds no trace.
        return Err(errors.swap_remove(0));
    }
    Ok(dirs)
}

/// Finds every directory holding a CTF `metadata` file at or below `path`, sorted, and an error
/// for each file named `metadata` that is not CTF metadata (or for `path` itself, when it cannot
/// be read or holds no trace at all).
pub fn find_traces_all(path: &Path) -> (Vec<PathBuf>, Vec<Error>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(source) => return (out, vec![Error::Io { path: path.to_path_buf(), source }]),
    };
    if meta.is_file() {
        if path.file_name().is_some_and(|n| n == "metadata") {
            match check_metadata_file(path) {
                Ok(()) => out.push(path.parent().unwrap_or(Path::new(".")).to_path_buf()),
                Err(e) => errors.push(e),
            }
        }
    } else {
        walk(path, &mut out, &mut errors, 0);
    }
    out.sort();
    out.dedup();
    if out.is_empty() && errors.is_empty() {
        errors.push(Error::NoTrace { path: path.to_path_buf() });
    }
    (out, errors)
}

/// Whether the file at `path` starts like CTF metadata; if not, an error naming it (at byte 0:
/// what the file starts with).
fn check_metadata_file(path: &Path) -> Result<()> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let mut head = Vec::with_capacity(64);
    std::fs::File::open(path).and_then(|f| f.take(64).read_to_end(&mut head)).map_err(io)?;
    match not_metadata(&head) {
        None => Ok(()),
        Some(message) => Err(Error::NotMetadata { path: path.to_path_buf(), offset: 0, message }),
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, errors: &mut Vec<Error>, depth: usize) {
    if depth > 32 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() || (ft.is_symlink() && p.is_dir()) {
            walk(&p, out, errors, depth + 1);
        } else if e.file_name() == "metadata" {
            match check_metadata_file(&p) {
                Ok(()) => out.push(dir.to_path_buf()),
                Err(err) => errors.push(err),
            }
        }
    }
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

    /// Opens the trace in `dir`: parses its metadata and maps its data stream files (see
    /// [`Trace::admit`]); with the errors of the files left out (a copy of another, a file
    /// that cannot be read) and of the clocks refused (see [`refuse_clocks`]).
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
    fn refresh(&mut self, errors: &mut Vec<Error>) {
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

fn same_packet_key(p: &PacketInfo) -> Option<PacketKey> {
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
        Ok(Some(StreamFile { path, map: Some(map), index: Vec::new(), resume: None, indexed_len: 0, first }))
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
        Ok(())
    }

    /// Indexes the packets written since the last indexing; returns how many packet headers
    /// it read.
    fn index(&mut self, schema: &Schema) -> u64 {
        let data = self.map.as_deref().unwrap_or(&[]);
        if data.len() as u64 == self.indexed_len {
            return 0;
        }
        self.indexed_len = data.len() as u64;
        let mut r = StreamReader::new(&self.path, data, schema, 0);
        if let Some(at) = &self.resume {
            r.resume(at);
        }
        let n = r.index_packets(&mut self.index);
        self.resume = Some(r.resume_point());
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
        (&*file).read_exact(buf)
    }
}

/// [`TraceSet::map_streams`] cuts no file into parts smaller than this.
const PART_MIN: u64 = 1 << 20;

/// Mapped trace data up to this size stays resident while it is read; beyond it, the readers
/// give back the pages they have gone past.
pub const RESIDENT_BUDGET: u64 = 128 << 20;

/// How readers of stream files of `total` bytes in all give back pages when `at_once` of them
/// are read at the same time (all of them in a merge, one per thread when each thread reads
/// files or parts of files whole): not at all when the files fit the `budget` (giving back
/// costs every other core running the process's threads an interrupt); else in steps that
/// keep the files being read within it, never smaller than 256 KiB.
fn release_step(total: u64, at_once: u64, budget: u64) -> Option<u64> {
    (total > budget).then(|| (budget / at_once.max(1)).max(256 << 10))
}

/// Without a packet magic, files with names of known non-trace files are skipped.
fn looks_binary_stream(path: &Path) -> bool {
    let n = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    !(n == "converted" || n.ends_with(".txt") || n.ends_with(".md") || n.ends_with(".json") || n.ends_with(".yaml"))
}

impl TraceSet {
    /// Opens every trace found at or below `paths`. Traces that fail to open are returned as errors
    /// beside the set of those that opened.
    pub fn open<P: AsRef<Path>>(paths: &[P]) -> (TraceSet, Vec<Error>) {
        TraceSet::open_jobs(paths, 1)
    }

    /// [`open`](Self::open) on `jobs` threads (0: one per core), the traces' metadata parsed
    /// at the same time; the same set and errors, in the same order.
    pub fn open_jobs<P: AsRef<Path>>(paths: &[P], jobs: usize) -> (TraceSet, Vec<Error>) {
        let mut dirs = Vec::new();
        let mut errors = Vec::new();
        for p in paths {
            let (d, e) = find_traces_all(p.as_ref());
            dirs.extend(d);
            errors.extend(e);
        }
        dirs.sort();
        dirs.dedup();
        let mut traces = Vec::new();
        for r in rostrace_threads::map_in_order(jobs, dirs, |d| Trace::open(&d)) {
            match r {
                Ok((t, e)) => {
                    traces.push(t);
                    errors.extend(e);
                }
                Err(e) => errors.push(e),
            }
        }
        let roots = paths.iter().map(|p| p.as_ref().to_path_buf()).collect();
        let set = TraceSet {
            traces,
            budget: RESIDENT_BUDGET,
            skip: None,
            roots,
            packets_read: AtomicU64::new(0),
            packets_indexed: 0,
        };
        (set, errors)
    }

    /// Brings the set up to date with its traces being written: finds the traces that
    /// appeared under the paths it was opened on, reads metadata that grew again, maps the
    /// stream files that grew again, adds those that appeared, and indexes the packets written
    /// since the last refresh (the first refresh indexes them all; the last packet of a file,
    /// still being written, is examined again by the next one). Readings of the set then step
    /// over the indexed packets that the packet filter passes over without reading them again,
    /// so that a reader of the recent packets of a growing recording reads those, whatever
    /// its length. Returns the errors met (a trace that cannot be opened, metadata being
    /// written).
    pub fn refresh(&mut self) -> Vec<Error> {
        let mut errors = Vec::new();
        let mut dirs = Vec::new();
        for root in &self.roots {
            // (Finding no trace is not an error here: the set may be waiting for its first one.)
            let (d, e) = find_traces_all(root);
            dirs.extend(d);
            errors.extend(e.into_iter().filter(|e| !matches!(e, Error::NoTrace { .. })));
        }
        for t in &mut self.traces {
            t.refresh(&mut errors);
        }
        for d in dirs {
            if let Err(i) = self.traces.binary_search_by(|t| t.dir.cmp(&d)) {
                match Trace::open(&d) {
                    Ok((t, e)) => {
                        self.traces.insert(i, t);
                        errors.extend(e);
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
        for t in &mut self.traces {
            for s in &mut t.streams {
                self.packets_indexed += s.index(&t.schema);
            }
        }
        errors
    }

    /// Joins, in each stream file's index, each run of packets that the packet filter passes
    /// over into one entry, which readings then step over at once: for a reader of a moving
    /// window of a recording being followed, whose index would otherwise keep an entry per
    /// packet and be walked entry by entry at each reading. Right only when every later filter
    /// passes over what this one does (a window that moves on). Returns how many entries are gone.
    pub fn join_passed_over(&mut self) -> usize {
        let Some(f) = self.skip.clone() else { return 0 };
        let mut gone = 0;
        for s in self.traces.iter_mut().flat_map(|t| &mut t.streams) {
            let path = s.path.clone();
            gone += crate::stream::join_runs(&mut s.index, |p| p.passed_over(&path, &*f));
        }
        gone
    }

    /// Entries in the stream files' indexes (see [`join_passed_over`](Self::join_passed_over)).
    pub fn index_entries(&self) -> usize {
        self.traces.iter().flat_map(|t| &t.streams).map(|s| s.index.len()).sum()
    }

    /// Packet headers read by the readings of the set so far (not by its indexing).
    pub fn packets_read(&self) -> u64 {
        self.packets_read.load(Ordering::Relaxed)
    }

    /// Packet headers read by [`refresh`](Self::refresh) so far.
    pub fn packets_indexed(&self) -> u64 {
        self.packets_indexed
    }

    /// Gives back the pages of the stream files' mappings that are resident (a reading that
    /// comes after reads them from the files again): for a reader done with a pass, so that the
    /// data it went over does not stay in its memory while it works on what it kept.
    pub fn release_pages(&self) {
        for s in self.traces.iter().flat_map(|t| &t.streams) {
            if let Some(m) = &s.map {
                // SAFETY: a read-only shared mapping of a file: a page given back is read from
                // the file again when next touched, with the same bytes.
                let _ = unsafe { m.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
            }
        }
    }

    /// Total size of the data stream files.
    pub fn total_bytes(&self) -> u64 {
        self.traces.iter().map(Trace::bytes).sum()
    }

    /// Sets how much mapped data stays resident while read (default [`RESIDENT_BUDGET`]). For
    /// tests.
    #[doc(hidden)]
    pub fn set_resident_budget(&mut self, bytes: u64) {
        self.budget = bytes;
    }

    /// Passes over the events of the packets `f` names, in every reading of the set: for a
    /// reader that wants only some of the time (a window) and knows which packets before it
    /// hold nothing it needs. Their losses are still counted.
    pub fn skip_packets(&mut self, f: impl Fn(&Path, u64, Option<i64>) -> bool + Send + Sync + 'static) {
        self.skip = Some(std::sync::Arc::new(f));
    }

    /// Reads every packet's events again.
    pub fn clear_packet_filter(&mut self) {
        self.skip = None;
    }

    /// A reader of each stream file, `at_once` of them being read at the same time (all of
    /// them when `None`).
    fn readers(&self, at_once: Option<usize>) -> (Vec<StreamReader<'_>>, Vec<FileRef<'_>>) {
        let mut readers = Vec::new();
        let mut files = Vec::new();
        let n: usize = self.traces.iter().map(|t| t.streams.len()).sum();
        let step = release_step(self.total_bytes(), at_once.unwrap_or(n) as u64, self.budget);
        for (ti, t) in self.traces.iter().enumerate() {
            for s in &t.streams {
                let mut r = StreamReader::new(&s.path, s.data(), &t.schema, ti);
                r.set_packet_filter(self.skip.as_deref());
                r.set_index(&s.index, Some(&self.packets_read));
                if let (Some(step), Some(_)) = (step, &s.map) {
                    // SAFETY: a read-only mapping of the file (traces are not written while read).
                    unsafe { r.set_mapped(step) };
                }
                readers.push(r);
                files.push((s.path.as_path(), s.data(), ti));
            }
        }
        (readers, files)
    }

    /// Runs `f` on a reader of each data stream file, on `jobs` threads (0: as many as there are
    /// cores), the largest first; the results in stream order (traces in order, each trace's
    /// files by name). For what needs no time order across streams (counts, ranges).
    ///
    /// With several threads, a file of at least a quarter of a thread's share of the data (and
    /// 2 MiB) is cut at packet boundaries (found from the packet headers, in this thread) into
    /// parts of an eighth of a share, read at the same time, each on a reader that first reads
    /// the packets before its part back to the last one with events (to start where a reader
    /// of the whole file would be); `merge` adds the results of a file's parts up, in file
    /// order. The results are those of one reader per file: a part whose start state differs
    /// from where the part before it left off is read again by that part's reader going on,
    /// and the parts after one whose reader stopped (an error that ends the file, or `f`
    /// stopping early) are dropped. A file with a damaged packet context (counters or begin
    /// time) is read whole: the parts after the damage would mostly be read again.
    pub fn map_streams<R: Send>(
        &self,
        jobs: usize,
        f: impl Fn(&mut StreamReader<'_>) -> R + Sync,
        merge: impl Fn(R, R) -> R,
    ) -> Vec<R> {
        let every = match rostrace_threads::threads(jobs) {
            1 => u64::MAX,
            n => (self.total_bytes() / (n as u64 * 8)).max(PART_MIN),
        };
        self.map_streams_in_parts(jobs, every, false, f, merge).0
    }

    /// [`map_streams`](Self::map_streams) with files of at least twice `every` bytes cut into
    /// parts of about `every` bytes, whatever the threads, files with damaged packets too when
    /// `damaged_too`; also returns how many parts were read again by the reader of the part
    /// before them. For tests.
    #[doc(hidden)]
    pub fn map_streams_in_parts<R: Send>(
        &self,
        jobs: usize,
        every: u64,
        damaged_too: bool,
        f: impl Fn(&mut StreamReader<'_>) -> R + Sync,
        merge: impl Fn(R, R) -> R,
    ) -> (Vec<R>, usize) {
        let threads = rostrace_threads::threads(jobs);
        let (readers, _) = self.readers(Some(threads));
        let mut again = 0;
        // (file, part, its size, its reader)
        let mut items: Vec<(usize, usize, u64, StreamReader<'_>)> = Vec::new();
        // Whether a file is read in parts.
        let mut parted = Vec::new();
        for (i, mut r) in readers.into_iter().enumerate() {
            let size = r.bytes_total();
            let cuts = if size >= every.saturating_mul(2) { r.cuts(every, damaged_too) } else { Vec::new() };
            parted.push(!cuts.is_empty());
            let ends: Vec<u64> = cuts.iter().map(|c| c.1).chain([size]).collect();
            for (k, &(warm, start)) in cuts.iter().enumerate() {
                items.push((i, k + 1, ends[k + 1] - start, r.part(warm, start, ends[k + 1])));
            }
            if let Some(&(_, first_end)) = cuts.first() {
                r.set_limit(first_end);
            }
            items.push((i, 0, ends[0], r));
        }
        items.sort_by_key(|&(i, k, size, _)| (std::cmp::Reverse(size), i, k));
        // Each part's reader warms up on its thread; a reader is kept for what follows only
        // when its file has other parts (else it is dropped on the thread that made its buffers).
        let mut done = rostrace_threads::map_in_order(jobs, items, |(i, k, _, mut r)| {
            let carry = r.warm_up();
            let out = f(&mut r);
            (i, k, parted[i].then_some(r), carry, out)
        });
        done.sort_by_key(|(i, k, ..)| (*i, *k));
        let mut out: Vec<R> = Vec::new();
        let mut parts = done.into_iter().peekable();
        while let Some((i, _, prev, _, mut acc)) = parts.next() {
            // The file's other parts, in order (a file read in parts has each part's reader).
            let Some(mut prev) = prev else {
                out.push(acc);
                continue;
            };
            let mut stopped = false;
            while let Some((_, _, r, carry, res)) = parts.next_if(|p| p.0 == i) {
                let (false, Some(r)) = (stopped, r) else { continue };
                let end = r.limit();
                match prev.carry_at_limit() {
                    None => stopped = true,
                    Some(c) if Some(c) == carry => {
                        acc = merge(acc, res);
                        prev = r;
                    }
                    Some(_) => {
                        prev.extend(end);
                        acc = merge(acc, f(&mut prev));
                        again += 1;
                    }
                }
            }
            out.push(acc);
        }
        (out, again)
    }

    /// All events of all traces, merged in time order (ties: trace, then stream file order),
    /// decoded in this thread.
    pub fn events(&self) -> Events<'_, '_> {
        let (readers, _) = self.readers(None);
        Events::new(Streams::Seq(readers))
    }

    /// A reading of the events with options ([`Read`]): on several threads, of some traces, with
    /// two integers of each event's stream context; then [`Read::run`].
    pub fn read(&self) -> Read<'_> {
        Read { set: self, jobs: 1, how: How::Here, traces: None }
    }

    /// The events of the traces `traces` (see [`Read::traces`]).
    fn events_of(&self, traces: &[usize]) -> Events<'_, '_> {
        let (all, _) = self.readers(None);
        let mut ids = Vec::new();
        let mut readers = Vec::new();
        for (i, mut r) in all.into_iter().enumerate() {
            if traces.contains(&r.trace_index) {
                r.placed = true;
                ids.push(i);
                readers.push(r);
            }
        }
        let mut e = Events::new(Streams::Seq(readers));
        e.placed = Some(Placed { ids, errors: Vec::new(), losses: Vec::new() });
        e
    }

    /// The time of the first event that [`events`](Self::events) returns (after its errors):
    /// `Some(None)` when it has no time, `None` when the set has no event. Reads up to each
    /// stream file's first event.
    pub fn first_time(&self) -> Option<Option<i64>> {
        let (readers, _) = self.readers(None);
        let mut first: Option<(u128, Option<i64>)> = None;
        for (i, mut r) in readers.into_iter().enumerate() {
            loop {
                match r.advance() {
                    Ok(true) => {
                        let k = order_of(r.timestamp(), i, 0);
                        if first.is_none_or(|f| k < f.0) {
                            first = Some((k, r.timestamp()));
                        }
                        break;
                    }
                    Ok(false) => break,
                    Err(_) => {}
                }
            }
        }
        first.map(|f| f.1)
    }

    /// The events decoded ahead on `jobs` threads (see [`Read::decode_ahead`]).
    fn with_events<R>(&self, jobs: usize, f: impl FnOnce(&mut Events<'_, '_>) -> R) -> R {
        let (readers, files) = self.readers(None);
        let workers = rostrace_threads::threads(jobs).saturating_sub(1).min(readers.len().saturating_sub(1));
        if workers == 0 {
            return f(&mut Events::new(Streams::Seq(readers)));
        }
        let shared = crate::parallel::Shared::new(readers);
        std::thread::scope(|s| {
            for k in 1..=workers {
                rostrace_threads::spawn_off(s, k, || shared.work());
            }
            rostrace_threads::let_started_move();
            // The workers stop however `f` ends.
            struct Stop<'x, 'a>(&'x crate::parallel::Shared<'a>);
            impl Drop for Stop<'_, '_> {
                fn drop(&mut self) {
                    self.0.stop();
                }
            }
            let _stop = Stop(&shared);
            f(&mut Events::new(Streams::Par(ParStreams::new(&shared, files))))
        })
    }

    /// The events read on another thread (see [`Read::piped`]).
    fn piped<R>(&self, jobs: usize, ints: Option<[&'static str; 2]>, f: impl FnOnce(&mut Events<'_, '_>) -> R) -> R {
        let (readers, files) = self.readers(None);
        if rostrace_threads::threads(jobs) < 2 {
            return f(&mut Events::new(Streams::Seq(readers)));
        }
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel(crate::parallel::PIPED_DEPTH);
        let (free_tx, free_rx) = std::sync::mpsc::channel();
        let n = files.len();
        std::thread::scope(|s| {
            let read = move || {
                // The readers, written at every event, in this thread's memory (see
                // `spawn_off`'s reasons, and `StreamReader::read_packet`'s).
                let mut mine = Vec::with_capacity(readers.len());
                mine.extend(readers);
                crate::parallel::pipe(&mut Events::new(Streams::Seq(mine)), n, full_tx, free_rx, ints)
            };
            rostrace_threads::spawn_off(s, 1, read);
            rostrace_threads::let_started_move();
            f(&mut Events::new(Streams::Piped(Piped::new(full_rx, free_tx, files))))
        })
    }
}

/// The events of a [`TraceSet`], merged in time order as [`TraceSet::events`] gives them (the
/// same events, errors and losses in the same order), read as asked:
///
/// ```no_run
/// # let (set, _) = rostrace_ctf::TraceSet::open(&["trace"]);
/// let n = set.read().jobs(0).decode_ahead().run(|events| {
///     let mut n = 0;
///     while let Some(Ok(_)) = events.next() {
///         n += 1;
///     }
///     n
/// });
/// # let _ = n;
/// ```
#[must_use = "a reading does nothing until `run`"]
pub struct Read<'s> {
    set: &'s TraceSet,
    jobs: usize,
    how: How,
    traces: Option<Vec<usize>>,
}

/// Where the events are read and decoded.
enum How {
    Here,
    Ahead,
    Piped(Option<[&'static str; 2]>),
}

impl Read<'_> {
    /// Threads (0: as many as there are cores; 1, the default: this one only).
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs;
        self
    }

    /// With several threads: the others decode ahead, this one merges. For a consumer that
    /// does little per event.
    pub fn decode_ahead(mut self) -> Self {
        self.how = How::Ahead;
        self
    }

    /// With several threads: another thread reads, decodes and merges, so that this one only
    /// takes the events, in batches small enough to stay in the cores' caches. For a consumer
    /// whose own work per event is about that of reading it (an analysis pass).
    /// [`Events::losses`] grows at the same steps as with one thread. A panic of the reading
    /// thread is passed on (its events are not ended early quietly).
    pub fn piped(mut self) -> Self {
        self.how = How::Piped(None);
        self
    }

    /// [`piped`](Self::piped), and the integer members `names` of each event's stream context
    /// read on the thread that reads, while the event is in its core's cache, and given with the
    /// event by [`Events::next_ints`]: what a taker reads of every event (a process id, a thread
    /// id), moved to the other thread.
    pub fn with_ints(mut self, names: [&'static str; 2]) -> Self {
        self.how = How::Piped(Some(names));
        self
    }

    /// Only the traces `traces` (indices in the set), read on this thread. Their errors and
    /// losses are not returned between the events but kept with their places in the merge of
    /// the whole set ([`Events::placed_errors`], [`Events::placed_losses`]), and each event's
    /// [`Events::order`] is its order in that merge: readers of disjoint parts of a set, on
    /// several threads, give results that can be put in the order of one reader of the set.
    pub fn traces(mut self, traces: &[usize]) -> Self {
        self.traces = Some(traces.to_vec());
        self
    }

    /// Runs `f` with the events.
    pub fn run<R>(self, f: impl FnOnce(&mut Events<'_, '_>) -> R) -> R {
        let set = self.set;
        if let Some(t) = &self.traces {
            return f(&mut set.events_of(t));
        }
        match self.how {
            How::Here => f(&mut set.events()),
            How::Ahead => set.with_events(self.jobs, f),
            How::Piped(ints) => set.piped(self.jobs, ints, f),
        }
    }
}

/// Two integers of an event's stream context, as [`Events::next_ints`] gives them.
pub type Ints = [Option<u64>; 2];

/// The streams being merged: read here, or decoded ahead by workers; or merged already by
/// another thread. (One per `Events`, never moved while read: the piped variant's batch is
/// kept inline, not boxed, as it is read at every event.)
#[allow(clippy::large_enum_variant)]
enum Streams<'a, 's> {
    Seq(Vec<StreamReader<'a>>),
    Par(ParStreams<'a, 's>),
    Piped(Piped<'a>),
}

/// Where the reader of stream `i` is, as a [`Place`].
fn place(at: Option<(Option<i64>, u64)>, i: usize) -> Place {
    match at {
        None => (false, i as u128),
        Some((ts, off)) => (true, order_of(ts, i, off)),
    }
}

/// Time-ordered events of a [`TraceSet`]; a lending iterator (each event borrows it until the next call).
pub struct Events<'a, 's> {
    streams: Streams<'a, 's>,
    heap: BinaryHeap<Reverse<u128>>,
    current: Option<usize>,
    started: bool,
    delivered: bool,
    errors: VecDeque<Error>,
    losses: Vec<Loss>,
    /// For [`Read::traces`]: the streams' indices in the set, errors and losses placed.
    placed: Option<Placed>,
}

/// Where an error or a loss comes in the merge of all events: after the event of this order
/// (see [`Events::order`]), or, before any event of its stream, first, by stream.
pub type Place = (bool, u128);

/// What [`Read::traces`] keeps: each stream's index among all streams of the set, and
/// the errors and losses with their places.
struct Placed {
    ids: Vec<usize>,
    errors: Vec<(Place, Error)>,
    losses: Vec<(Place, Loss)>,
}

/// The order of an event in the merge: time, then the stream's index, then the byte offset.
#[inline]
fn order_of(ts: Option<i64>, stream: usize, offset: u64) -> u128 {
    let t = ts.unwrap_or(i64::MIN);
    (((t as u64) ^ (1 << 63)) as u128) << 64 | ((stream as u128 & 0xFF_FFFF) << 40) | (offset as u128 & ((1 << 40) - 1))
}

impl<'a, 's> Events<'a, 's> {
    fn new(streams: Streams<'a, 's>) -> Self {
        Events {
            streams,
            heap: BinaryHeap::new(),
            current: None,
            started: false,
            delivered: false,
            errors: VecDeque::new(),
            losses: Vec::new(),
            placed: None,
        }
    }

    fn len(&self) -> usize {
        match &self.streams {
            Streams::Seq(r) => r.len(),
            Streams::Par(p) => p.len(),
            Streams::Piped(_) => 0,
        }
    }

    /// Merge key: time (order-preserving as unsigned), then reader index.
    #[inline]
    fn key(&self, i: usize) -> u128 {
        let t = match &self.streams {
            Streams::Seq(r) => r[i].timestamp(),
            Streams::Par(p) => p.timestamp(i),
            Streams::Piped(_) => None,
        };
        let t = t.unwrap_or(i64::MIN);
        (((t as u64) ^ (1 << 63)) as u128) << 64 | i as u128
    }

    /// Advances stream `i` to its next event; returns whether it has one. Errors are queued.
    fn step(&mut self, i: usize) -> bool {
        match &mut self.streams {
            Streams::Seq(readers) => loop {
                let r = readers[i].advance();
                let reader = &mut readers[i];
                if !reader.losses.is_empty() {
                    match &mut self.placed {
                        Some(p) => {
                            let places = reader.loss_places.drain(..);
                            for (at, l) in places.zip(reader.losses.drain(..)) {
                                p.losses.push((place(at, p.ids[i]), l));
                            }
                        }
                        None => self.losses.append(&mut reader.losses),
                    }
                }
                match r {
                    Ok(has) => return has,
                    Err(e) => match &mut self.placed {
                        Some(p) => p.errors.push((place(reader.place(), p.ids[i]), e)),
                        None => self.errors.push_back(e),
                    },
                }
            },
            Streams::Par(p) => p.step(i, &mut self.errors, &mut self.losses),
            Streams::Piped(_) => false,
        }
    }

    /// The next event in time order, or an error of one stream (the others go on).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Result<Event<'_>>> {
        self.next_ordered().map(|x| x.1)
    }

    /// [`next`](Self::next), with the event's [`order`](Self::order) (0 with an error).
    #[inline]
    pub fn next_ordered(&mut self) -> Option<(u128, Result<Event<'_>>)> {
        if matches!(self.streams, Streams::Piped(_)) {
            return self.next_piped().map(|(o, _, r)| (o, r));
        }
        self.next_merged()
    }

    /// [`next_ordered`](Self::next_ordered), with the integers of the event's stream context
    /// read by the reading thread under [`Read::with_ints`] on two threads
    /// (each `Some` when the member is there and an integer, as [`StructRef::u64_at`] reads
    /// it); `None` when they were not read there (one thread, or no stream context): the
    /// taker reads what it needs itself.
    #[inline]
    pub fn next_ints(&mut self) -> Option<(u128, Option<Ints>, Result<Event<'_>>)> {
        if matches!(self.streams, Streams::Piped(_)) {
            return self.next_piped();
        }
        self.next_merged().map(|(o, r)| (o, None, r))
    }

    /// [`next_ordered`](Self::next_ordered) from the merge in this thread.
    #[inline(never)]
    fn next_merged(&mut self) -> Option<(u128, Result<Event<'_>>)> {
        let order = match self.advance()? {
            Ok(order) => order,
            Err(e) => return Some((0, Err(e))),
        };
        let i = self.current?;
        let ev = match &self.streams {
            Streams::Seq(r) => r[i].event(),
            Streams::Par(p) => p.event(i),
            Streams::Piped(_) => None,
        }?;
        Some((order, Ok(ev)))
    }

    #[inline]
    fn next_piped(&mut self) -> Option<(u128, Option<Ints>, Result<Event<'_>>)> {
        let Streams::Piped(p) = &mut self.streams else { return None };
        match p.step(&mut self.losses) {
            Ok(false) => None,
            Err(e) => Some((0, None, Err(e))),
            Ok(true) => {
                let p = &*p;
                let e = p.event()?;
                Some((p.order(), p.ints(), Ok(e)))
            }
        }
    }

    /// Moves the merge on to its next item: the current event (its order), or an error;
    /// `None` at the end.
    pub(crate) fn advance(&mut self) -> Option<Result<u128>> {
        if !self.started {
            self.start();
        } else if let (true, Some(i)) = (self.delivered, self.current) {
            self.delivered = false;
            if self.step(i) {
                let k = self.key(i);
                if let Some(mut top) = self.heap.peek_mut() {
                    if top.0 < k {
                        // Swap with the earliest other stream: one sift instead of a push and a pop.
                        let next = std::mem::replace(&mut *top, Reverse(k));
                        self.current = Some(next.0 as u64 as usize);
                    }
                }
            } else {
                self.current = self.heap.pop().map(|Reverse(k)| k as u64 as usize);
            }
        }
        if let Some(e) = self.errors.pop_front() {
            return Some(Err(e));
        }
        self.current?;
        self.delivered = true;
        Some(Ok(self.order()))
    }

    /// Reads each stream's first event.
    fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        for i in 0..self.len() {
            if self.step(i) {
                let k = self.key(i);
                self.heap.push(Reverse(k));
            }
        }
        self.current = self.heap.pop().map(|Reverse(k)| k as u64 as usize);
    }

    /// The order of the current event in the merge of all events of the set (see
    /// [`Read::traces`]): time, then stream, then byte offset in the stream file,
    /// compared as numbers. (With decoding threads, [`Read::decode_ahead`], the offset is
    /// left out.)
    pub fn order(&self) -> u128 {
        if let Streams::Piped(p) = &self.streams {
            return p.order();
        }
        let Some(i) = self.current else { return 0 };
        match &self.streams {
            Streams::Seq(r) => {
                let g = self.placed.as_ref().map_or(i, |p| p.ids[i]);
                order_of(r[i].timestamp(), g, r[i].event_offset().unwrap_or(0))
            }
            Streams::Par(p) => order_of(p.timestamp(i), i, 0),
            Streams::Piped(_) => 0,
        }
    }

    /// With [`Read::traces`]: the errors met so far, each with its place in the merge
    /// of all events (sorting by place, a stable sort, gives the order in which
    /// [`TraceSet::events`] returns them).
    pub fn placed_errors(&mut self) -> Vec<(Place, Error)> {
        self.placed.as_mut().map(|p| std::mem::take(&mut p.errors)).unwrap_or_default()
    }

    /// With [`Read::traces`]: the losses met so far, each with its place (see
    /// [`placed_errors`](Self::placed_errors)).
    pub fn placed_losses(&mut self) -> Vec<(Place, Loss)> {
        self.placed.as_mut().map(|p| std::mem::take(&mut p.losses)).unwrap_or_default()
    }

    /// Losses (discarded events, lost packets) seen so far.
    pub fn losses(&self) -> &[Loss] {
        &self.losses
    }

    /// Events discarded so far, in all.
    pub fn discarded_events(&self) -> u64 {
        self.losses
            .iter()
            .map(|l| match l.kind {
                crate::LossKind::Events(n) => n,
                _ => 0,
            })
            .sum()
    }

    /// Bytes of data read so far and in all.
    pub fn progress(&self) -> (u64, u64) {
        match &self.streams {
            Streams::Seq(r) => r.iter().fold((0, 0), |(d, t), r| (d + r.bytes_done(), t + r.bytes_total())),
            Streams::Par(p) => p.progress(),
            Streams::Piped(p) => p.progress(),
        }
    }

    /// Read here ([`TraceSet::events`]): the index of the stream file of the current event
    /// among all of the set, and the event, its class and stream class borrowed for as long
    /// as the schema lives.
    pub(crate) fn current_read_here(&self) -> Option<(usize, crate::stream::Current<'a, '_>)> {
        match &self.streams {
            Streams::Seq(r) => {
                let i = self.current?;
                Some((i, r[i].current()?))
            }
            _ => None,
        }
    }
}

impl<'a> crate::parallel::Merged<'a> for Events<'a, '_> {
    fn advance(&mut self) -> Option<Result<u128>> {
        Events::advance(self)
    }
    fn losses(&self) -> &[Loss] {
        Events::losses(self)
    }
    fn current_read_here(&self) -> Option<(usize, crate::stream::Current<'a, '_>)> {
        Events::current_read_here(self)
    }
    fn progress(&self) -> (u64, u64) {
        Events::progress(self)
    }
}

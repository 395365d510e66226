//! The session's writer: a process's trace directory and metadata, opened at its first event;
//! the writer thread that drains the threads' rings into stream files every period, replays
//! the initialization events when recording starts, writes the flight recorder's snapshots,
//! follows the session's control file, and starts a new chunk of the recording when the
//! session rotates; and the end of the trace.

use super::{budget, emit, init};
use crate::clock;
use crate::ring::Ring;
use crate::storage::{self, LossFile, TraceFile};
use rostrace_ctf_write::{metadata_text, packetize_metadata, StreamWriter};
use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The embedded session of this process.
struct Session {
    root: PathBuf,
    snapshot_budget: usize,
    /// The trace could not be opened whole (a full disk): it only counts the process's events
    /// as discarded, in its loss file (see [`open_trace`]).
    lost: bool,
    chunk: AtomicU64,
    /// The name of the process's trace directory (the same in every chunk of a rotating session).
    leaf: String,
    /// Whether the session rotates (it had a [`ROTATE_FILE`] when the process started).
    rotating: bool,
    /// The trace's metadata, and its metadata without event classes (see [`open_trace`]), for
    /// each chunk of a rotating session (empty otherwise).
    metadata: Vec<u8>,
    counting: Vec<u8>,
    uuid: [u8; 16],
    vpid: i32,
    procname: Vec<u8>,
    writer: Mutex<Writer>,
    stop: AtomicBool,
}

static SESSION: OnceLock<Session> = OnceLock::new();

struct Stream {
    ring: Arc<Ring>,
    out: Option<StreamWriter<TraceFile>>,
    /// Its file could not be created (a full disk): its events are counted in the loss file,
    /// until the chunk ends.
    dead: bool,
    reported: u64,
    kept: VecDeque<(u16, u64, Vec<u8>)>,
    kept_bytes: usize,
}

#[derive(Default)]
struct Writer {
    /// The directory of the process's trace (in a rotating session, in the chunk written now).
    dir: PathBuf,
    /// The chunk written now, in a rotating session.
    chunk_name: Option<String>,
    streams: Vec<Stream>,
    unbuffered_reported: u64,
    finished: bool,
    replays: u32,
    state: Option<Control>,
    snapshots: u64,
    write_failed: bool,
    /// The rings' stamps to ns.
    clock: clock::StampClock,
    /// Counts what no stream reports (none when not even it could be created).
    loss: Option<LossFile>,
}

/// The stream file of ring `index` in chunk `chunk` (the files of a session stopped and started
/// again).
fn ring_path(dir: &std::path::Path, index: u32, chunk: u64) -> PathBuf {
    if chunk == 0 {
        dir.join(format!("channel0_{index}"))
    } else {
        dir.join(format!("channel0_{index}_{chunk}"))
    }
}

/// Created in a process's trace directory when a stream could not be written (a full disk),
/// named `.rostrace-write-failed-ERRNO` and holding the stream and error when it can: the stream
/// ends at its last whole packet, and its last packet counts the events written no more.
pub const WRITE_FAILED_FILE: &str = ".rostrace-write-failed";

/// Notes in `dir` that `path` could not be written (see [`WRITE_FAILED_FILE`]).
fn note_failure(dir: &std::path::Path, path: &std::path::Path, e: &std::io::Error) {
    let file = dir.join(format!("{WRITE_FAILED_FILE}-{}", e.raw_os_error().unwrap_or(0)));
    let _ = std::fs::write(file, format!("{}: {e}", path.display()));
}

/// The same error, for a second owner.
fn copy_error(e: &std::io::Error) -> std::io::Error {
    match e.raw_os_error() {
        Some(n) => std::io::Error::from_raw_os_error(n),
        None => std::io::Error::new(e.kind(), e.to_string()),
    }
}

/// Opens a process's trace: its directory, its metadata (written whole or not at all) and its
/// loss file, with room for its packet. When that cannot be written (a full disk), a slot of
/// the session's reserve is freed for a trace that only counts: the metadata without event
/// classes (`counting`) and the loss file, where every event of the process is counted as
/// discarded. Returns the loss file (none when not even that could be made: the events of the
/// process are then counted nowhere, and the failure is noted in the session directory), and
/// whether the trace only counts.
fn open_trace(
    root: &std::path::Path,
    dir: &std::path::Path,
    metadata: &[u8],
    counting: impl FnOnce() -> Vec<u8>,
    uuid: [u8; 16],
) -> (Option<LossFile>, bool) {
    let open = |metadata: &[u8]| {
        std::fs::create_dir_all(dir)?;
        storage::write_whole(&dir.join("metadata"), metadata)?;
        LossFile::create(&dir.join(storage::LOSS_FILE), uuid).inspect_err(|_| {
            let _ = std::fs::remove_file(dir.join("metadata"));
        })
    };
    let e = match open(metadata) {
        Ok(loss) => {
            storage::reserve(root, false);
            return (Some(loss), false);
        }
        Err(e) => e,
    };
    let mut loss = None;
    if storage::is_full(&e) {
        let counting = counting();
        while loss.is_none() && storage::claim(root) {
            loss = open(&counting).ok();
        }
    }
    if loss.is_none() {
        let _ = std::fs::remove_dir(dir);
        eprintln!("rostrace: cannot write the trace {}: {e}: this process's events are not recorded", dir.display());
    }
    note_failure(if dir.is_dir() { dir } else { root }, &dir.join("metadata"), &e);
    (loss, true)
}

fn random_uuid() -> [u8; 16] {
    let mut u = [0u8; 16];
    if let Ok(mut f) = File::open("/dev/urandom") {
        let _ = std::io::Read::read_exact(&mut f, &mut u);
    } else {
        let t = clock::realtime() as u64 ^ (std::process::id() as u64) << 32;
        u[..8].copy_from_slice(&t.to_le_bytes());
    }
    u[6] = (u[6] & 0x0f) | 0x40;
    u[8] = (u[8] & 0x3f) | 0x80;
    u
}

/// The host's boot id: the monotonic clock's UUID, shared by all processes of this boot.
fn boot_id() -> [u8; 16] {
    let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let hex: Vec<u8> = text.bytes().filter(|c| c.is_ascii_hexdigit()).collect();
    let mut u = [0u8; 16];
    if hex.len() == 32 {
        for (i, b) in u.iter_mut().enumerate() {
            *b = u8::from_str_radix(std::str::from_utf8(&hex[2 * i..2 * i + 2]).unwrap_or("0"), 16).unwrap_or(0);
        }
    }
    u
}

/// The name of this process (`prctl(PR_GET_NAME)`), at most 16 bytes.
pub(super) fn procname() -> Vec<u8> {
    let mut buf = [0u8; 17];
    // SAFETY: PR_GET_NAME writes at most 16 bytes and a NUL into `buf`.
    unsafe { libc::prctl(libc::PR_GET_NAME, buf.as_mut_ptr()) };
    let n = buf.iter().position(|c| *c == 0).unwrap_or(16);
    buf[..n].to_vec()
}

/// The name of a process's trace directory, `<procname>-<pid>-<YYYYMMDD-HHMMSS>` as LTTng names
/// it, with the process name (which the process sets itself, `prctl(PR_SET_NAME)`) made one
/// harmless path component: `/` (a name like `../../x` would write outside the session) and
/// control characters become `_`, and so does a leading `.` (a hidden directory, which readers
/// skip). Ordinary names are kept as they are.
fn trace_dir_name(procname: &[u8], vpid: i32, now: i64) -> String {
    let mut name: String =
        String::from_utf8_lossy(procname).chars().map(|c| if c == '/' || c.is_control() { '_' } else { c }).collect();
    if name.starts_with('.') {
        name.replace_range(..1, "_");
    }
    format!("{name}-{vpid}-{}", datetime(now))
}

/// `YYYYMMDD-HHMMSS` (UTC) of ns since the epoch.
fn datetime(ns: i64) -> String {
    let t = rostrace_ctf_write::time::utc(ns);
    format!("{:04}{:02}{:02}-{:02}{:02}{:02}", t.year, t.month, t.day, t.hour, t.minute, t.second)
}

/// Starts the session of this process in the session directory `root`: its trace directory,
/// metadata and loss file, the rings' budget, the writer thread.
pub(super) fn start(root: PathBuf) -> Result<(), String> {
    Session::start(root)
}

/// The session directory, once the session started.
pub(super) fn root() -> Option<&'static Path> {
    SESSION.get().map(|s| s.root.as_path())
}

/// The directory of this process's trace, once the session started.
pub(super) fn dir() -> Option<PathBuf> {
    SESSION.get().map(|s| s.writer.lock().unwrap_or_else(|e| e.into_inner()).dir.clone())
}

/// Whether the trace only counts the process's events (it could not be opened whole).
pub(super) fn only_counts() -> bool {
    SESSION.get().is_none_or(|s| s.lost)
}

/// Whether a session started.
pub(super) fn started() -> bool {
    SESSION.get().is_some()
}

/// Writes everything and closes the trace unless the writer thread holds it now (then `false`:
/// try again); for a fatal signal's handler, which must not block. A panic is contained.
pub(super) fn try_end() -> bool {
    let Some(s) = SESSION.get() else { return true };
    let got = match s.writer.try_lock() {
        Ok(w) => Some(w),
        Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    };
    let Some(mut w) = got else { return false };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.end(&mut w)));
    true
}

impl Session {
    fn start(root: PathBuf) -> Result<(), String> {
        let vpid = std::process::id() as i32;
        let procname = procname();
        clock::use_tsc();
        let offset = clock::offset();
        let now = clock::realtime();
        let leaf = trace_dir_name(&procname, vpid, now);
        // A rotating session: the trace goes to the chunk written now.
        let chunk_name = current_chunk(&root);
        let dir = chunk_dir(&root, chunk_name.as_deref(), &leaf);
        std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
        let uuid = random_uuid();
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_string();
        let mut env = vec![
            ("hostname".to_string(), host),
            ("domain".to_string(), "ust".to_string()),
            ("tracer_name".to_string(), "rostrace".to_string()),
            ("tracer_major".to_string(), env!("CARGO_PKG_VERSION_MAJOR").to_string()),
            ("tracer_minor".to_string(), env!("CARGO_PKG_VERSION_MINOR").to_string()),
            ("tracer_buffering_scheme".to_string(), "pid".to_string()),
            ("tracer_buffering_id".to_string(), vpid.to_string()),
            ("architecture_bit_width".to_string(), "64".to_string()),
            ("trace_name".to_string(), root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()),
            ("trace_creation_datetime".to_string(), datetime(now)),
            ("vpid".to_string(), vpid.to_string()),
            ("procname".to_string(), String::from_utf8_lossy(&procname).into_owned()),
        ];
        // Which machine and which boot: two hosts of one name, or one host rebooted, told apart.
        let machine = std::fs::read_to_string("/etc/machine-id").unwrap_or_default().trim().to_string();
        if !machine.is_empty() && machine.bytes().all(|c| c.is_ascii_hexdigit()) {
            env.push(("machine_id".to_string(), machine));
        }
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default().trim().to_string();
        if !boot.is_empty() {
            env.push(("boot_id".to_string(), boot));
        }
        if crate::distro::assumed() {
            env.push(("ros_distro_assumed".to_string(), crate::distro::current().name.to_string()));
        }
        let mut decl = crate::distro::trace_decl(crate::distro::current(), uuid, boot_id(), offset, env);
        let metadata = packetize_metadata(&metadata_text(&decl), &uuid);
        // The trace directory, metadata and loss file now, at the process's first event, rather
        // than at the writer's first flush: a process killed soon after its first events keeps
        // them. On a full disk, a trace that counts them.
        decl.events.clear();
        let counting = packetize_metadata(&metadata_text(&decl), &uuid);
        let (loss, lost) = open_trace(&root, &dir, &metadata, || counting.clone(), uuid);
        let s = Session {
            snapshot_budget: std::env::var(crate::env::SNAPSHOT).ok().and_then(|v| budget::parse_size(&v)).unwrap_or(0),
            root: root.clone(),
            lost,
            chunk: AtomicU64::new(0),
            leaf,
            rotating: chunk_name.is_some(),
            // Kept for the next chunks only when there are any.
            metadata: if chunk_name.is_some() { metadata } else { Vec::new() },
            counting: if chunk_name.is_some() { counting } else { Vec::new() },
            uuid,
            vpid,
            procname,
            writer: Mutex::new(Writer { loss, dir, chunk_name, ..Writer::default() }),
            stop: AtomicBool::new(false),
        };
        budget::set_up(lost);
        if SESSION.set(s).is_err() {
            return Err("session already started".into());
        }
        std::thread::Builder::new()
            .name("rostrace-writer".into())
            .spawn(writer_loop)
            .map_err(|e| format!("cannot start the writer thread: {e}"))?;
        Ok(())
    }

    /// Moves every ring's records to its stream file; with `finish`, closes the files.
    fn drain(&self, w: &mut Writer, finish: bool) {
        if w.finished {
            return;
        }
        let rings: Vec<Arc<Ring>> = budget::rings().map(|r| r.all()).unwrap_or_default();
        for r in rings.iter().skip(w.streams.len()) {
            w.streams.push(Stream {
                ring: r.clone(),
                out: None,
                dead: false,
                reported: 0,
                kept: VecDeque::new(),
                kept_bytes: 0,
            });
        }
        if self.snapshot_budget > 0 && !finish {
            // Flight recorder: keep the newest events in memory, the oldest go first.
            let per_stream = (self.snapshot_budget / w.streams.len().max(1)).max(4096);
            let clock = &mut w.clock;
            for st in &mut w.streams {
                st.ring.drain(|id, ts, p| {
                    // Initialization events are kept apart (never evicted) and written with each snapshot.
                    if !emit::is_init(id) {
                        st.kept_bytes += p.len() + 16;
                        st.kept.push_back((id, clock.ns(ts), p.to_vec()));
                    }
                });
                while st.kept_bytes > per_stream {
                    match st.kept.pop_front() {
                        Some((_, _, p)) => st.kept_bytes -= p.len() + 16,
                        None => break,
                    }
                }
            }
            return;
        }
        let clock = &mut w.clock;
        // Events of this drain that no stream reports: for the loss file.
        let mut lost = 0;
        let mut failure = None;
        // Every discard counted below happened before this time.
        let counted_at = clock::monotonic();
        for st in w.streams.iter_mut() {
            let ring = &st.ring;
            let discarded = ring.discarded.load(Ordering::Relaxed);
            if ring.is_empty() && st.kept.is_empty() && discarded == st.reported && st.out.is_none() {
                continue;
            }
            if st.out.is_none() && !st.dead {
                let chunk = self.chunk.load(Ordering::Relaxed);
                let path = ring_path(&w.dir, ring.index, chunk);
                match TraceFile::create(&path) {
                    Ok(f) => {
                        st.out = Some(StreamWriter::new(
                            f,
                            self.uuid,
                            ring.index as u64 | chunk << 32,
                            ring.cpu.load(Ordering::Relaxed),
                            1 << 16,
                        ))
                    }
                    Err(e) => {
                        // No room for even the packet that would say so (a thread that started
                        // after the disk filled): its events are counted in the loss file.
                        failure.get_or_insert((path, e));
                        st.dead = true;
                    }
                }
            }
            if st.dead {
                lost += st.kept.len() as u64 + ring.drain(|_, _, _| {}) as u64 + discarded - st.reported;
                st.reported = discarded;
                st.kept.clear();
                st.kept_bytes = 0;
                continue;
            }
            let out = st.out.as_mut().expect("just created");
            let (vpid, vtid, name) = (self.vpid, ring.vtid, &self.procname);
            // A write that fails (a full disk) ends the stream at its last whole packet; the
            // writer counts every later event as discarded (see StreamWriter).
            for (id, ts, p) in st.kept.drain(..) {
                let _ = out.event(id as u32, ts, vpid, vtid, name, &p);
            }
            st.kept_bytes = 0;
            ring.drain(|id, ts, p| {
                let _ = out.event(id as u32, clock.ns(ts), vpid, vtid, name, p);
            });
            // The ring discarded events when it was full, after those it held: counted after
            // them, in a packet that ends after the discards (CTF places them there).
            if discarded > st.reported {
                out.discard(discarded - st.reported, counted_at);
                st.reported = discarded;
            }
            if !finish {
                // Every period, what was drained goes to the file as a packet of its own: a
                // process killed later (SIGKILL) loses at most the last period.
                let _ = out.switch_packet();
            }
            if let Some(e) = out.failure() {
                let chunk = self.chunk.load(Ordering::Relaxed);
                failure.get_or_insert((ring_path(&w.dir, ring.index, chunk), copy_error(e)));
            }
        }
        let u = emit::unbuffered();
        lost += u - w.unbuffered_reported;
        w.unbuffered_reported = u;
        if let Some(loss) = &mut w.loss {
            loss.add(lost, counted_at);
            if let Err(e) = loss.write() {
                failure.get_or_insert((w.dir.join(storage::LOSS_FILE), e));
            }
        }
        if let Some((path, e)) = failure {
            self.note_failure(w, &path, &e);
        }
        if finish {
            self.close(w);
            w.finished = true;
        }
    }

    /// Notes, once, that a file could not be written, for `rostrace record` to report: the error
    /// number in a file's name (creating a file takes no room on a full disk), the file and the
    /// error in it when that can be written.
    fn note_failure(&self, w: &mut Writer, path: &std::path::Path, e: &std::io::Error) {
        if std::mem::replace(&mut w.write_failed, true) {
            return;
        }
        note_failure(if w.dir.is_dir() { &w.dir } else { &self.root }, path, e);
    }

    /// Writes everything and closes the trace, for good (at exit, on a fatal signal): the loss
    /// file too, removed when it counted nothing. (A snapshot drains with `finish` and goes on.)
    fn end(&self, w: &mut Writer) {
        self.drain(w, true);
        if let Some(loss) = w.loss.take() {
            loss.close();
        }
    }

    /// Closes every stream file (a stopped session leaves a complete trace); writing again opens new ones.
    fn close(&self, w: &mut Writer) {
        let mut any = false;
        for st in &mut w.streams {
            if let Some(out) = st.out.take() {
                let _ = out.finish();
                any = true;
            }
            // The next chunk tries again.
            st.dead = false;
        }
        if any {
            self.chunk.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Ends the chunk written now and goes on in chunk `name` of the rotating session: the
    /// streams written out and closed (with the loss file: a complete trace), the process's
    /// trace opened again in the new chunk, with the same metadata, and all the initialization
    /// events kept written first, so that the chunk is a recording that can be analysed alone.
    /// They carry the time the chunk begins: the chunk spans its own time, and its events
    /// follow them.
    fn rotate(&self, w: &mut Writer, name: String) {
        let begins = clock::monotonic();
        self.drain(w, true);
        w.finished = false;
        if let Some(loss) = w.loss.take() {
            loss.close();
        }
        let dir = chunk_dir(&self.root, Some(&name), &self.leaf);
        let (loss, _) = open_trace(&self.root, &dir, &self.metadata, || self.counting.clone(), self.uuid);
        (w.loss, w.dir, w.chunk_name) = (loss, dir, Some(name));
        init::unwrite_all();
        self.replay(w, true, Some(begins));
    }

    /// Flight recorder: every snapshot carries all initialization events.
    fn snapshot_init(&self, w: &mut Writer) {
        if self.snapshot_budget == 0 {
            return;
        }
        init::unwrite_all();
        self.replay(w, true, None);
    }

    /// Writes the initialization events kept while not recording, with their original times
    /// (or time `at`), all of them for a `snapshot`, and counts as discarded those the store
    /// could not keep.
    fn replay(&self, w: &mut Writer, snapshot: bool, at: Option<u64>) {
        let (order, lost, lost_at) = init::take_unwritten(snapshot);
        if order.is_empty() && lost == 0 {
            return;
        }
        let chunk = self.chunk.load(Ordering::Relaxed);
        w.replays += 1;
        let path = w.dir.join(format!("channel0_init_{chunk}_{}", w.replays));
        let f = match TraceFile::create(&path) {
            Ok(f) => f,
            Err(e) => {
                // Counted where the process counts what it cannot write.
                if let Some(loss) = &mut w.loss {
                    loss.add(order.len() as u64 + lost, clock::monotonic());
                    let _ = loss.write();
                }
                self.note_failure(w, &path, &e);
                return;
            }
        };
        let mut out = StreamWriter::new(f, self.uuid, 1_000_000 + w.replays as u64, 0, 1 << 16);
        // Copied a part at a time: no second copy of the whole store.
        for part in order.chunks(4096) {
            for e in &init::copies(part) {
                let _ = out.event(e.id as u32, at.unwrap_or(e.ts), self.vpid, e.vtid, &self.procname, &e.payload);
            }
        }
        out.discard(lost, lost_at);
        if let Some(e) = out.failure().map(copy_error) {
            self.note_failure(w, &path, &e);
        }
        let _ = out.finish();
    }
}

/// What the session's control file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Record.
    Recording,
    /// Keep the trace open, record nothing.
    Paused,
    /// Close the trace files; record nothing.
    Stopped,
}

/// Name of the file whose number `rostrace snapshot` increments (flight-recorder sessions).
pub const SNAPSHOT_FILE: &str = ".rostrace-snapshot";

/// Name of the control file in a session directory.
pub const CONTROL_FILE: &str = ".rostrace-control";

/// Name of the file of a rotating session (`rostrace record --rotate`) that names the chunk
/// written now: a directory of the session, which holds the traces of that chunk. The traced
/// processes follow it: when it names another chunk, each closes its trace and opens it again
/// in the new one.
pub const ROTATE_FILE: &str = ".rostrace-rotate";

/// The chunk that `root`'s rotation file names, when it has one and the name is a plain
/// directory name (letters, digits, `-` and `_`, not hidden).
pub fn current_chunk(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join(ROTATE_FILE)).ok()?;
    let name = text.split_whitespace().next()?;
    let plain = name.len() <= 128
        && !name.starts_with(['-', '_'])
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_');
    plain.then(|| name.to_string())
}

/// The trace directory `leaf` of a process in chunk `chunk` of the session in `root` (no chunk:
/// a session that does not rotate).
fn chunk_dir(root: &Path, chunk: Option<&str>, leaf: &str) -> PathBuf {
    let base = match chunk {
        Some(c) => root.join(c),
        None => root.to_path_buf(),
    };
    base.join("ust").join("pid").join(leaf)
}

/// The state in `root`'s control file; no file means recording.
pub fn control_state(root: Option<&std::path::Path>) -> Control {
    let Some(root) = root else { return Control::Recording };
    match std::fs::read_to_string(root.join(CONTROL_FILE)).as_deref().map(str::trim) {
        Ok("paused") => Control::Paused,
        Ok("stopped") | Ok("created") => Control::Stopped,
        _ => Control::Recording,
    }
}

/// How often the writer flushes the rings.
const FLUSH_PERIOD: Duration = Duration::from_millis(20);
/// How often it flushes for a while after a thread recorded its first event ([`FAST_WINDOW`]),
/// so that a burst at a thread's start is written within about a millisecond, not a period.
const FAST_PERIOD: Duration = Duration::from_millis(1);
const FAST_WINDOW: Duration = Duration::from_millis(25);

/// The writer thread: every period, follows the control file and the snapshot requests, and
/// drains the rings.
fn writer_loop() {
    let (Some(s), Some(rings)) = (SESSION.get(), budget::rings()) else { return };
    let mut fast_until: Option<std::time::Instant> = None;
    while !s.stop.load(Ordering::Relaxed) {
        let fast = fast_until.is_some_and(|t| std::time::Instant::now() < t);
        if rings.wait(if fast { FAST_PERIOD } else { FLUSH_PERIOD }) {
            fast_until = Some(std::time::Instant::now() + FAST_WINDOW);
        }
        let mut w = s.writer.lock().unwrap_or_else(|e| e.into_inner());
        // A calibration point every period keeps the TSC map's segments short.
        w.clock.sample();
        let state = control_state(Some(&s.root));
        if s.snapshot_budget > 0 {
            let req = std::fs::read_to_string(s.root.join(SNAPSHOT_FILE))
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
                .unwrap_or(0);
            if req != w.snapshots {
                // Write what the flight recorder holds, as complete files of their own.
                w.snapshots = req;
                s.snapshot_init(&mut w);
                s.drain(&mut w, true);
                w.finished = false;
                s.close(&mut w);
            }
        }
        if s.rotating {
            if let Some(next) = current_chunk(&s.root).filter(|c| w.chunk_name.as_ref() != Some(c)) {
                s.rotate(&mut w, next);
            }
        }
        if w.state != Some(state) {
            match state {
                Control::Recording => {
                    // Initialization events first, with their original times, then live events.
                    s.replay(&mut w, false, None);
                    emit::set_recording(true);
                }
                Control::Paused => {
                    emit::set_recording(false);
                    s.drain(&mut w, false);
                }
                Control::Stopped => {
                    emit::set_recording(false);
                    s.drain(&mut w, false);
                    s.close(&mut w);
                }
            }
            w.state = Some(state);
        }
        s.drain(&mut w, false);
    }
}

/// Writes everything recorded so far and closes the trace (at exit; may be called earlier).
pub fn flush() {
    if let Some(s) = SESSION.get() {
        emit::set_recording(false);
        s.stop.store(true, Ordering::Relaxed);
        let mut w = s.writer.lock().unwrap_or_else(|e| e.into_inner());
        if !w.finished {
            s.snapshot_init(&mut w);
        }
        s.end(&mut w);
    }
}

//! The embedded tracer: which backend is on, per-thread rings, the writer thread that turns
//! them into an LTTng-layout CTF trace, and flushing at exit and on fatal signals.
//!
//! Configuration, from the environment of the traced process:
//! - `ROSTRACE_SESSION_DIR`: where to write (turns the embedded tracer on);
//! - `ROSTRACE_BACKEND`: `embedded` (default) or `lttng`;
//! - `ROSTRACE_EVENTS`: comma-separated `*` patterns of events to record (default: all);
//! - `ROSTRACE_BUFFER_SIZE`: bytes of each thread's ring (default 1 MiB);
//! - `ROSTRACE_MEMORY_BUDGET`: bytes of all rings together and of the initialization events kept
//!   for replay (at most half of it; default 256 MiB); threads beyond it record nothing and their
//!   events are counted as discarded, and initialization events beyond it are not kept (a replay
//!   counts them as discarded);
//! - `ROSTRACE_CLOCK=monotonic`: read CLOCK_MONOTONIC at each event, never the TSC (see `clock`);
//! - `TRACETOOLS_RUNTIME_DISABLE=1`: no tracing at all.

use crate::catalog::{self, TRACEPOINTS};
use crate::clock;
use crate::ring::Ring;
use crate::storage::{self, LossFile, TraceFile};
use rostrace_ctf_write::{metadata_text, packetize_metadata, Payload, StreamWriter};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Where events go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Nowhere.
    Off,
    /// The embedded tracer.
    Embedded,
    /// LTTng-UST.
    Lttng,
}

const UNINIT: u8 = 0;
const OFF: u8 = 1;
const EMBEDDED: u8 = 2;
const LTTNG: u8 = 3;

static MODE: AtomicU8 = AtomicU8::new(UNINIT);

/// Read by the header's macros before calling in: 0 once tracing is known to be off.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static ros_trace_maybe_active: AtomicU8 = AtomicU8::new(1);
static RECORDING: AtomicBool = AtomicBool::new(false);
static MASK: [AtomicU64; 4] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
static INIT: Mutex<()> = Mutex::new(());

/// The backend of this process (set up on first use).
#[inline]
pub fn mode() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        EMBEDDED => Mode::Embedded,
        LTTNG => Mode::Lttng,
        OFF => Mode::Off,
        _ => init(),
    }
}

/// Whether tracing is known to be off in this process: the one check of the disabled path.
#[inline(always)]
pub fn is_off() -> bool {
    MODE.load(Ordering::Relaxed) == OFF
}

/// Whether event `id` is recorded now (embedded tracer).
#[inline]
pub fn event_on(id: u16) -> bool {
    RECORDING.load(Ordering::Relaxed) && MASK[(id / 64) as usize & 3].load(Ordering::Relaxed) & (1 << (id % 64)) != 0
}

/// Starts or stops recording (the session stays set up).
pub fn set_recording(on: bool) {
    RECORDING.store(on, Ordering::Relaxed);
}

/// Whether the embedded tracer records now.
pub fn recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

/// Records only the events whose name matches one of `patterns` (and that the process's
/// distribution has).
pub fn set_events(patterns: &[&str]) {
    let abi = crate::distro::current();
    let ids = catalog::matching(patterns).into_iter().filter(|id| abi.has(&TRACEPOINTS[*id as usize]));
    for m in &MASK {
        m.store(0, Ordering::Relaxed);
    }
    for id in ids {
        MASK[(id / 64) as usize].fetch_or(1 << (id % 64), Ordering::Relaxed);
    }
}

fn env_size(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| parse_size(&v)).unwrap_or(default)
}

/// `1048576`, `512K`, `4M`, `1G`.
pub fn parse_size(v: &str) -> Option<usize> {
    let v = v.trim();
    let (num, mult) = match v.chars().last()? {
        'k' | 'K' => (&v[..v.len() - 1], 1 << 10),
        'm' | 'M' => (&v[..v.len() - 1], 1 << 20),
        'g' | 'G' => (&v[..v.len() - 1], 1 << 30),
        _ => (v, 1),
    };
    num.trim().parse::<usize>().ok().map(|n| n * mult)
}

#[cold]
fn init() -> Mode {
    let _g = INIT.lock().unwrap_or_else(|e| e.into_inner());
    match MODE.load(Ordering::Acquire) {
        EMBEDDED => return Mode::Embedded,
        LTTNG => return Mode::Lttng,
        OFF => return Mode::Off,
        _ => {}
    }
    let m = choose();
    if m == Mode::Off {
        ros_trace_maybe_active.store(0, Ordering::Relaxed);
    }
    MODE.store(
        match m {
            Mode::Off => OFF,
            Mode::Embedded => EMBEDDED,
            Mode::Lttng => LTTNG,
        },
        Ordering::Release,
    );
    m
}

fn choose() -> Mode {
    if std::env::var("TRACETOOLS_RUNTIME_DISABLE").is_ok_and(|v| v == "1") {
        if std::env::var("TRACETOOLS_VERBOSE").is_ok_and(|v| v == "1") {
            eprintln!("ROS 2 tracing disabled");
        }
        return Mode::Off;
    }
    if let Err(e) = crate::distro::from_env() {
        eprintln!("rostrace: {e}: not tracing (set ROSTRACE_DISTRO to one of them)");
        return Mode::Off;
    }
    let patterns = std::env::var(crate::env::EVENTS).unwrap_or_else(|_| "*".into());
    set_events(&patterns.split(',').collect::<Vec<_>>());
    match std::env::var(crate::env::BACKEND).as_deref() {
        Ok(crate::env::BACKEND_LTTNG) => match crate::lttng::load() {
            Ok(()) => Mode::Lttng,
            Err(e) => {
                eprintln!("rostrace: LTTng backend unavailable, not tracing: {e}");
                Mode::Off
            }
        },
        _ => match std::env::var_os(crate::env::SESSION_DIR) {
            Some(_) if !crate::filter::setup(&String::from_utf8_lossy(&procname())) => Mode::Off,
            Some(dir) => match Session::start(PathBuf::from(dir)) {
                Ok(()) => {
                    let on = control_state(SESSION.get().map(|s| s.root.as_path())) == Control::Recording;
                    // (A process whose trace only counts has nothing to replay.)
                    KEEP_INIT.store(SESSION.get().is_some_and(|s| !s.lost), Ordering::Relaxed);
                    RECORDING.store(on, Ordering::Relaxed);
                    Mode::Embedded
                }
                Err(e) => {
                    eprintln!("rostrace: cannot trace: {e}");
                    Mode::Off
                }
            },
            None => Mode::Off,
        },
    }
}

struct Local {
    ring: Option<Arc<Ring>>,
    scratch: Vec<u8>,
    count: u32,
    registered: bool,
}

impl Drop for Local {
    fn drop(&mut self) {
        if let Some(r) = &self.ring {
            r.alive.store(false, Ordering::Release);
        }
    }
}

thread_local! {
    static LOCAL: RefCell<Local> = const { RefCell::new(Local { ring: None, scratch: Vec::new(), count: 0, registered: false }) };
}

/// Events dropped because their thread could not get a ring within the memory budget (or the
/// process's trace only counts): counted in the process's loss file.
static UNBUFFERED: AtomicU64 = AtomicU64::new(0);

fn tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

fn cpu() -> u32 {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    c.max(0) as u32
}

/// Records an event: takes the time, encodes the payload with `f`, appends to this thread's ring.
#[inline]
pub fn emit(id: u16, f: impl FnOnce(&mut Payload<&mut Vec<u8>>)) {
    let ts = clock::stamp();
    if KEEP_INIT.load(Ordering::Relaxed) && is_init(id) {
        keep_init(id, ts, event_on(id), f);
        return;
    }
    push_local(id, ts, |buf| f(&mut Payload::append_to(buf)));
}

/// Appends one event to the calling thread's ring (registered on first use), with the payload
/// `encode` writes. Events of threads without a ring are counted as discarded.
#[inline]
fn push_local(id: u16, ts: u64, encode: impl FnOnce(&mut Vec<u8>)) {
    let _ = LOCAL.try_with(|l| {
        // A tracepoint reached from inside the tracer (allocator hooks...) is dropped.
        let Ok(mut l) = l.try_borrow_mut() else { return };
        if !l.registered {
            l.registered = true;
            l.ring = SESSION.get().and_then(|s| s.register());
        }
        let l = &mut *l;
        let Some(ring) = &l.ring else {
            UNBUFFERED.fetch_add(1, Ordering::Relaxed);
            return;
        };
        if l.count & 255 == 0 {
            ring.cpu.store(cpu(), Ordering::Relaxed);
        }
        l.count = l.count.wrapping_add(1);
        l.scratch.clear();
        encode(&mut l.scratch);
        ring.push(id, ts, &l.scratch);
    });
}

/// Keeps an initialization event for replay (once per content: the store stays small when a
/// program initializes the same thing again and again), within the memory budget, and records
/// it, every call, if recording. `stamp` is the event's [`clock::stamp`]; the store keeps its
/// time in ns.
#[cold]
fn keep_init(id: u16, stamp: u64, recording: bool, f: impl FnOnce(&mut Payload<&mut Vec<u8>>)) {
    let ts = if clock::stamps_are_tsc() { clock::monotonic() } else { stamp };
    let mut payload = Vec::new();
    f(&mut Payload::append_to(&mut payload));
    crate::filter::observe(id, &payload);
    let mut warn = false;
    {
        let mut store = INIT_STORE.lock().unwrap_or_else(|e| e.into_inner());
        let h = init_hash(id, &payload);
        if !store.contains(h, id, &payload) {
            let cost = payload.len() + INIT_EVENT_COST;
            if SESSION.get().is_some_and(|s| s.take_for_store(store.bytes, cost)) {
                store.bytes += cost;
                let kept = if recording { payload.clone() } else { std::mem::take(&mut payload) };
                store.insert(h, InitEvent { id, ts, vtid: tid(), payload: kept, written: recording });
            } else {
                // Not kept: missing from the replays after it, which count it as discarded.
                warn = store.dropped == 0;
                store.dropped += 1;
                store.dropped_unwritten += !recording as u64;
                store.dropped_last = store.dropped_last.max(ts);
            }
        }
    }
    if warn {
        eprintln!(
            "rostrace: the initialization events this process keeps for replay reached half of \
             ROSTRACE_MEMORY_BUDGET: later ones are not kept (a session started or a snapshot taken after \
             them counts them as discarded)"
        );
    }
    if recording {
        push_local(id, stamp, |buf| buf.extend_from_slice(&payload));
    }
}

/// The embedded session of this process.
struct Session {
    root: PathBuf,
    snapshot_budget: usize,
    /// The trace could not be opened whole (a full disk): it only counts the process's events
    /// as discarded, in its loss file (see [`open_trace`]).
    lost: bool,
    chunk: AtomicU64,
    dir: PathBuf,
    uuid: [u8; 16],
    vpid: i32,
    procname: Vec<u8>,
    ring_size: usize,
    budget: usize,
    allocated: AtomicUsize,
    rings: Mutex<Vec<Arc<Ring>>>,
    writer: Mutex<Writer>,
    stop: AtomicBool,
    /// Set, with the condition notified, when a thread records its first event: the writer
    /// wakes at once and flushes often for a while (see [`writer_loop`]).
    wake: (Mutex<bool>, std::sync::Condvar),
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

fn procname() -> Vec<u8> {
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

impl Session {
    fn start(root: PathBuf) -> Result<(), String> {
        let vpid = std::process::id() as i32;
        let procname = procname();
        clock::use_tsc();
        let offset = clock::offset();
        let now = clock::realtime();
        let dir = root.join("ust").join("pid").join(trace_dir_name(&procname, vpid, now));
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
        if crate::distro::assumed() {
            env.push(("ros_distro_assumed".to_string(), crate::distro::current().name.to_string()));
        }
        let mut decl = crate::distro::trace_decl(crate::distro::current(), uuid, boot_id(), offset, env);
        let metadata = packetize_metadata(&metadata_text(&decl), &uuid);
        // The trace directory, metadata and loss file now, at the process's first event, rather
        // than at the writer's first flush: a process killed soon after its first events keeps
        // them. On a full disk, a trace that counts them.
        decl.events.clear();
        let counting = || packetize_metadata(&metadata_text(&decl), &uuid);
        let (loss, lost) = open_trace(&root, &dir, &metadata, counting, uuid);
        let s = Session {
            snapshot_budget: std::env::var(crate::env::SNAPSHOT).ok().and_then(|v| parse_size(&v)).unwrap_or(0),
            root: root.clone(),
            lost,
            chunk: AtomicU64::new(0),
            dir,
            uuid,
            vpid,
            procname,
            ring_size: env_size(crate::env::BUFFER_SIZE, 1 << 20),
            budget: env_size(crate::env::MEMORY_BUDGET, 256 << 20),
            allocated: AtomicUsize::new(0),
            rings: Mutex::new(Vec::new()),
            writer: Mutex::new(Writer { loss, ..Writer::default() }),
            stop: AtomicBool::new(false),
            wake: (Mutex::new(false), std::sync::Condvar::new()),
        };
        if SESSION.set(s).is_err() {
            return Err("session already started".into());
        }
        std::thread::Builder::new()
            .name("rostrace-writer".into())
            .spawn(writer_loop)
            .map_err(|e| format!("cannot start the writer thread: {e}"))?;
        // SAFETY: registering plain extern "C" functions.
        unsafe {
            libc::atexit(at_exit);
            libc::pthread_atfork(None, None, Some(in_child));
        }
        install_signal_handlers();
        Ok(())
    }

    /// Wakes the writer thread (a thread recorded its first event).
    fn wake_writer(&self) {
        *self.wake.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.wake.1.notify_one();
    }

    /// Waits `period`, or less when woken; whether it was woken.
    fn wait(&self, period: Duration) -> bool {
        let mut woken = self.wake.0.lock().unwrap_or_else(|e| e.into_inner());
        if !*woken {
            woken = self.wake.1.wait_timeout(woken, period).unwrap_or_else(|e| e.into_inner()).0;
        }
        std::mem::take(&mut *woken)
    }

    /// Whether the store of initialization events, `store` bytes now, may take `cost` bytes more
    /// (counted in the budget): it takes at most half of the budget.
    fn take_for_store(&self, store: usize, cost: usize) -> bool {
        if store + cost > self.budget / 2 {
            return false;
        }
        if self.allocated.fetch_add(cost, Ordering::Relaxed) + cost > self.budget {
            self.allocated.fetch_sub(cost, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// A ring for the calling thread, within the memory budget.
    fn register(&self) -> Option<Arc<Ring>> {
        if self.lost {
            return None;
        }
        let size = self.ring_size.max(4096).next_power_of_two();
        if self.allocated.fetch_add(size, Ordering::Relaxed) + size > self.budget {
            self.allocated.fetch_sub(size, Ordering::Relaxed);
            return None;
        }
        let mut rings = self.rings.lock().unwrap_or_else(|e| e.into_inner());
        let ring = Arc::new(Ring::new(size, tid(), rings.len() as u32));
        rings.push(ring.clone());
        drop(rings);
        self.wake_writer();
        Some(ring)
    }

    /// Moves every ring's records to its stream file; with `finish`, closes the files.
    fn drain(&self, w: &mut Writer, finish: bool) {
        if w.finished {
            return;
        }
        let rings: Vec<Arc<Ring>> = self.rings.lock().unwrap_or_else(|e| e.into_inner()).clone();
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
                    if !is_init(id) {
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
                let path = ring_path(&self.dir, ring.index, chunk);
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
                failure.get_or_insert((ring_path(&self.dir, ring.index, chunk), copy_error(e)));
            }
        }
        let u = UNBUFFERED.load(Ordering::Relaxed);
        lost += u - w.unbuffered_reported;
        w.unbuffered_reported = u;
        if let Some(loss) = &mut w.loss {
            loss.add(lost, counted_at);
            if let Err(e) = loss.write() {
                failure.get_or_insert((self.dir.join(storage::LOSS_FILE), e));
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
        note_failure(if self.dir.is_dir() { &self.dir } else { &self.root }, path, e);
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

    /// Flight recorder: every snapshot carries all initialization events.
    fn snapshot_init(&self, w: &mut Writer) {
        if self.snapshot_budget == 0 {
            return;
        }
        for e in INIT_STORE.lock().unwrap_or_else(|e| e.into_inner()).events.iter_mut() {
            e.written = false;
        }
        self.replay(w, true);
    }

    /// Writes the initialization events kept while not recording, with their original times
    /// (all of them for a `snapshot`), and counts as discarded those the store could not keep.
    fn replay(&self, w: &mut Writer, snapshot: bool) {
        let (order, lost, lost_at) = {
            let mut store = INIT_STORE.lock().unwrap_or_else(|e| e.into_inner());
            let mut order: Vec<u32> =
                (0..store.events.len() as u32).filter(|i| !store.events[*i as usize].written).collect();
            for i in &order {
                store.events[*i as usize].written = true;
            }
            order.sort_by_key(|i| store.events[*i as usize].ts);
            let lost = if snapshot { store.dropped } else { store.dropped_unwritten - store.dropped_reported };
            if !snapshot {
                store.dropped_reported = store.dropped_unwritten;
            }
            (order, lost, store.dropped_last)
        };
        if order.is_empty() && lost == 0 {
            return;
        }
        let chunk = self.chunk.load(Ordering::Relaxed);
        w.replays += 1;
        let path = self.dir.join(format!("channel0_init_{chunk}_{}", w.replays));
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
            let events: Vec<InitEvent> = {
                let store = INIT_STORE.lock().unwrap_or_else(|e| e.into_inner());
                part.iter().map(|i| store.events[*i as usize].clone()).collect()
            };
            for e in &events {
                let _ = out.event(e.id as u32, e.ts, self.vpid, e.vtid, &self.procname, &e.payload);
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

/// The state in `root`'s control file; no file means recording.
pub fn control_state(root: Option<&std::path::Path>) -> Control {
    let Some(root) = root else { return Control::Recording };
    match std::fs::read_to_string(root.join(CONTROL_FILE)).as_deref().map(str::trim) {
        Ok("paused") => Control::Paused,
        Ok("stopped") | Ok("created") => Control::Stopped,
        _ => Control::Recording,
    }
}

/// An initialization event kept for replay.
#[derive(Clone)]
struct InitEvent {
    id: u16,
    ts: u64,
    vtid: i32,
    payload: Vec<u8>,
    written: bool,
}

/// What a kept initialization event takes besides its fields: its entry in the store (and the
/// room the store keeps to grow), its index entry, the allocator's header.
const INIT_EVENT_COST: usize = 2 * std::mem::size_of::<InitEvent>() + 32 + 16;

/// The initialization events kept for replay, within half of the memory budget.
#[derive(Default)]
struct InitStore {
    events: Vec<InitEvent>,
    /// The event of each hash of (id, payload) kept, to compare with; `more`: further events of
    /// a hash (rare).
    index: std::collections::HashMap<u64, u32>,
    more: std::collections::HashMap<u64, Vec<u32>>,
    /// Bytes taken (see [`INIT_EVENT_COST`]).
    bytes: usize,
    /// Events not kept for want of room (repeats included), those of them not recorded either
    /// (missing from the next replay), how many of those a replay counted, the last one's time.
    dropped: u64,
    dropped_unwritten: u64,
    dropped_reported: u64,
    dropped_last: u64,
}

impl InitStore {
    /// Whether an event of this content is kept (`h`: its [`init_hash`]).
    fn contains(&self, h: u64, id: u16, payload: &[u8]) -> bool {
        let same = |i: &u32| self.events[*i as usize].id == id && self.events[*i as usize].payload == payload;
        self.index.get(&h).is_some_and(same) || self.more.get(&h).is_some_and(|v| v.iter().any(same))
    }

    fn insert(&mut self, h: u64, e: InitEvent) {
        let i = self.events.len() as u32;
        match self.index.entry(h) {
            std::collections::hash_map::Entry::Occupied(_) => self.more.entry(h).or_default().push(i),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(i);
            }
        }
        self.events.push(e);
    }
}

fn init_hash(id: u16, payload: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    id.hash(&mut h);
    payload.hash(&mut h);
    h.finish()
}

static INIT_STORE: std::sync::LazyLock<Mutex<InitStore>> =
    std::sync::LazyLock::new(|| Mutex::new(InitStore::default()));
static KEEP_INIT: AtomicBool = AtomicBool::new(false);

fn is_init(id: u16) -> bool {
    TRACEPOINTS.get(id as usize).is_some_and(|t| t.init)
}

/// Whether `id` must reach [`emit`]: recorded now, or an initialization event kept for later.
#[inline]
pub fn wanted(id: u16) -> bool {
    event_on(id)
        || (KEEP_INIT.load(Ordering::Relaxed)
            && MASK[(id / 64) as usize & 3].load(Ordering::Relaxed) & (1 << (id % 64)) != 0
            && is_init(id))
}

/// How often the writer flushes the rings.
const FLUSH_PERIOD: Duration = Duration::from_millis(20);
/// How often it flushes for a while after a thread recorded its first event ([`FAST_WINDOW`]),
/// so that a burst at a thread's start is written within about a millisecond, not a period.
const FAST_PERIOD: Duration = Duration::from_millis(1);
const FAST_WINDOW: Duration = Duration::from_millis(25);

fn writer_loop() {
    let Some(s) = SESSION.get() else { return };
    let mut fast_until: Option<std::time::Instant> = None;
    while !s.stop.load(Ordering::Relaxed) {
        let fast = fast_until.is_some_and(|t| std::time::Instant::now() < t);
        if s.wait(if fast { FAST_PERIOD } else { FLUSH_PERIOD }) {
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
        if w.state != Some(state) {
            match state {
                Control::Recording => {
                    // Initialization events first, with their original times, then live events.
                    s.replay(&mut w, false);
                    RECORDING.store(true, Ordering::Relaxed);
                }
                Control::Paused => {
                    RECORDING.store(false, Ordering::Relaxed);
                    s.drain(&mut w, false);
                }
                Control::Stopped => {
                    RECORDING.store(false, Ordering::Relaxed);
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
        RECORDING.store(false, Ordering::Relaxed);
        s.stop.store(true, Ordering::Relaxed);
        let mut w = s.writer.lock().unwrap_or_else(|e| e.into_inner());
        if !w.finished {
            s.snapshot_init(&mut w);
        }
        s.end(&mut w);
    }
}

/// The directory this process's trace is written to, when the embedded tracer is on.
pub fn trace_dir() -> Option<PathBuf> {
    let _ = mode();
    SESSION.get().map(|s| s.dir.clone())
}

extern "C" fn at_exit() {
    crate::ffi::guard(flush);
}

extern "C" fn in_child() {
    // A child forked without exec does not trace: the writer thread did not survive the fork.
    MODE.store(OFF, Ordering::Relaxed);
    ros_trace_maybe_active.store(0, Ordering::Relaxed);
    RECORDING.store(false, Ordering::Relaxed);
}

const FATAL: [libc::c_int; 7] =
    [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE, libc::SIGABRT, libc::SIGTERM, libc::SIGINT];
static mut PREVIOUS: [std::mem::MaybeUninit<libc::sigaction>; 7] = [std::mem::MaybeUninit::uninit(); 7];

/// SIGTERM and SIGINT stop a program that does not handle them; one that does (rclcpp) shuts
/// down cleanly and writes everything at exit.
fn stops_politely(sig: libc::c_int) -> bool {
    sig == libc::SIGTERM || sig == libc::SIGINT
}
static HANDLING: AtomicBool = AtomicBool::new(false);
/// How long a fatal signal's handler waits for the writer, at most (ms).
const FATAL_WAIT_MS: u32 = 2000;

fn install_signal_handlers() {
    for (k, sig) in FATAL.iter().enumerate() {
        // SAFETY: reading and setting signal dispositions; PREVIOUS is written before the handler can run.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(*sig, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            // Leave signals the application handles or ignores itself (SIGTERM, SIGINT) alone.
            if stops_politely(*sig) && old.sa_sigaction != libc::SIG_DFL {
                continue;
            }
            (*std::ptr::addr_of_mut!(PREVIOUS))[k] = std::mem::MaybeUninit::new(old);
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_fatal as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESETHAND;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(*sig, &sa, std::ptr::null_mut());
        }
    }
}

extern "C" fn on_fatal(sig: libc::c_int, _info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // Installed with SA_RESETHAND, this handler finds the default disposition when the signal
    // reached it directly. Otherwise the application installed its own handler later (rclcpp
    // does, after rcl_init) and calls this one as the previous handler: SIGTERM and SIGINT are
    // then its to handle (a clean shutdown writes everything at exit), nothing is done here.
    if stops_politely(sig) {
        // SAFETY: reading the current disposition.
        let current = unsafe {
            let mut cur: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut cur);
            cur.sa_sigaction
        };
        if current != libc::SIG_DFL {
            return;
        }
    }
    // Write what the rings hold, then let the signal act. The writer thread may be writing (it
    // holds the lock for a moment, longer when the CPU is busy): wait for it, bounded (the
    // crash may have happened in the writer itself).
    if !HANDLING.swap(true, Ordering::SeqCst) {
        if let Some(s) = SESSION.get() {
            RECORDING.store(false, Ordering::Relaxed);
            for _ in 0..FATAL_WAIT_MS {
                let got = match s.writer.try_lock() {
                    Ok(w) => Some(w),
                    Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
                    Err(std::sync::TryLockError::WouldBlock) => None,
                };
                if let Some(mut w) = got {
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.end(&mut w)));
                    break;
                }
                let ms = libc::timespec { tv_sec: 0, tv_nsec: 1_000_000 };
                // SAFETY: nanosleep is async-signal-safe.
                unsafe { libc::nanosleep(&ms, std::ptr::null_mut()) };
            }
        }
    }
    if let Some(k) = FATAL.iter().position(|x| *x == sig) {
        // SAFETY: restoring the disposition saved at install time, then re-raising.
        unsafe {
            let prev = (*std::ptr::addr_of!(PREVIOUS))[k].assume_init();
            libc::sigaction(sig, &prev, std::ptr::null_mut());
            libc::raise(sig);
        }
    }
}

/// Tracepoints of the catalog that are enabled now (embedded tracer), by name.
pub fn enabled_events() -> Vec<String> {
    TRACEPOINTS.iter().enumerate().filter(|(i, _)| event_on(*i as u16)).map(|(_, t)| t.full_name()).collect()
}

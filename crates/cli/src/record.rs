//! `rostrace record` and session control (`create`, `start`, `stop`, `pause`, `resume`, `list`):
//! tracing ROS 2 processes with the embedded tracer (no daemon) or LTTng.

use crate::info::count;
use crate::out::{fail, outln};
use rostrace_ctf::TraceSet;
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use tracetools::tracer::{control_state, Control, CONTROL_FILE, SNAPSHOT_FILE};

/// Tracing backends.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Backend {
    /// rostrace's tracer in each process: no daemon.
    Embedded,
    /// LTTng-UST (and the kernel tracer), through an LTTng session.
    Lttng,
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Embedded => "embedded",
            Backend::Lttng => "LTTng",
        })
    }
}

/// The exit code of a command stopped by Ctrl-C (128 + SIGINT), for `record` and `demo` alike.
pub const INTERRUPTED_EXIT: u8 = 130;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// From now on Ctrl-C does not stop rostrace: it reaches the traced processes (same process
/// group), rostrace waits for them, finishes the trace and exits with [`INTERRUPTED_EXIT`].
pub fn catch_ctrl_c() {
    // SAFETY: the handler only stores an atomic; `signal` on glibc restarts interrupted waits.
    unsafe { libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t) };
}

/// Whether Ctrl-C was pressed since [`catch_ctrl_c`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// The exit code of `record` stopped by SIGTERM (128 + SIGTERM).
pub const TERMINATED_EXIT: u8 = 143;

/// SIGINTs and SIGTERMs received since [`catch_stop_signals`].
static SIGINTS: AtomicU32 = AtomicU32::new(0);
static SIGTERMS: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_stop_signal(sig: libc::c_int) {
    if sig == libc::SIGTERM {
        SIGTERMS.fetch_add(1, Ordering::Relaxed);
    } else {
        SIGINTS.fetch_add(1, Ordering::Relaxed);
        INTERRUPTED.store(true, Ordering::Relaxed);
    }
}

/// From now on neither Ctrl-C nor SIGTERM stops rostrace: [`wait_passing_signals`] passes them on
/// to the traced command and waits for it, so that the trace is finished.
fn catch_stop_signals() {
    // SAFETY: the handler only updates atomics.
    unsafe {
        libc::signal(libc::SIGINT, on_stop_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_stop_signal as *const () as libc::sighandler_t);
    }
}

/// How long a command stopped with SIGTERM by a second Ctrl-C has before SIGKILL.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Waits for the traced command, passing on the signals that stop rostrace, each one a step
/// further: a first Ctrl-C reaches the command through the terminal (same process group) and
/// is left to it; a first SIGTERM (a supervisor, `docker stop`) is sent on to it; the next one
/// (a second Ctrl-C, or SIGTERM after either) sends it SIGTERM, and SIGKILL [`STOP_GRACE`]
/// later if it still runs; the one after that sends SIGKILL at once.
fn wait_passing_signals(child: &mut std::process::Child) -> std::io::Result<ExitStatus> {
    let pid = child.id() as libc::pid_t;
    let send = |sig| {
        // SAFETY: kill(2) to our own child, not yet reaped (try_wait said it runs).
        unsafe { libc::kill(pid, sig) };
    };
    let (mut ints, mut terms, mut step) = (0, 0, 0);
    let mut kill_at = None;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        let (i, t) = (SIGINTS.load(Ordering::Relaxed), SIGTERMS.load(Ordering::Relaxed));
        while ints < i || terms < t {
            let term = terms < t;
            if term {
                terms += 1;
            } else {
                ints += 1;
            }
            step += 1;
            match step {
                1 if term => {
                    send(libc::SIGTERM);
                    eprintln!(
                        "rostrace: SIGTERM: sent on to the command; the trace is finished when it ends (SIGTERM or \
                         Ctrl-C again stops it harder)"
                    );
                }
                1 => {}
                2 => {
                    send(libc::SIGTERM);
                    kill_at = Some(std::time::Instant::now() + STOP_GRACE);
                    eprintln!(
                        "rostrace: stopping the command: SIGTERM sent to it, SIGKILL in {} s if it still runs \
                         (Ctrl-C again: at once)",
                        STOP_GRACE.as_secs()
                    );
                }
                _ => {
                    send(libc::SIGKILL);
                    kill_at = None;
                    eprintln!("rostrace: SIGKILL sent to the command");
                }
            }
        }
        if kill_at.is_some_and(|t| std::time::Instant::now() >= t) {
            send(libc::SIGKILL);
            kill_at = None;
            eprintln!("rostrace: the command still ran {} s after SIGTERM: SIGKILL sent to it", STOP_GRACE.as_secs());
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The exit code that tells how a command ended: its own code, or 128 + N when signal N killed it.
pub fn exit_code_of(status: ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(c), _) => (c & 0xff) as u8,
        (None, Some(sig)) => (128 + sig).clamp(0, 255) as u8,
        _ => 1,
    }
}

/// Where sessions live and what they are called.
#[derive(clap::Args, Clone)]
pub struct SessionArgs {
    /// Session name (default: session-YYYYMMDDHHMMSS; demo-YYYYMMDDHHMMSS for `rostrace demo`).
    #[arg(short = 's', long = "session-name")]
    pub name: Option<String>,
    /// Directory of sessions (default: $ROS_TRACE_DIR, else $ROS_HOME/tracing, else ~/.ros/tracing).
    #[arg(short = 'p', long)]
    pub path: Option<PathBuf>,
}

/// Options of a recording.
#[derive(clap::Args, Clone)]
pub struct RecordOptions {
    #[command(flatten)]
    session: SessionArgs,
    /// Userspace events to record (`*` wildcards).
    #[arg(short = 'u', long = "ust", num_args = 1.., default_values_t = ["ros2:*".to_string(), "ros2_caret:*".to_string()])]
    ust: Vec<String>,
    /// Kernel events to record (LTTng backend only).
    #[arg(short = 'k', long = "kernel", num_args = 1..)]
    kernel: Vec<String>,
    /// Record all system calls (LTTng backend only).
    #[arg(long)]
    syscall: bool,
    /// Context fields (the embedded tracer always records procname, vpid, vtid).
    #[arg(short = 'c', long = "context", num_args = 1.., default_values_t = ["procname".to_string(), "vpid".to_string(), "vtid".to_string()])]
    context: Vec<String>,
    /// Tracing backend.
    #[arg(long, value_enum, default_value = "embedded")]
    backend: Backend,
    /// Write into an existing session directory.
    #[arg(long)]
    append: bool,
    /// Buffer per thread (embedded) or sub-buffer size (LTTng), e.g. 1M.
    #[arg(long, value_name = "SIZE")]
    buffer_size: Option<String>,
    /// Number of sub-buffers per buffer (LTTng).
    #[arg(long, value_name = "N")]
    num_subbuf: Option<u32>,
    /// Flight recorder: keep only the last events in memory (see --snapshot-size) and write them
    /// on `rostrace snapshot NAME` and at exit.
    #[arg(long)]
    snapshot_mode: bool,
    /// Memory of the flight recorder per process (embedded backend).
    #[arg(long, value_name = "SIZE", default_value = "64M")]
    snapshot_size: String,
    /// Record only these nodes (colon-separated regular expressions, partial match; wins over --ignore-nodes).
    #[arg(long, value_name = "REGEXES")]
    select_nodes: Option<String>,
    /// Do not record these nodes' callbacks, publications and takes.
    #[arg(long, value_name = "REGEXES")]
    ignore_nodes: Option<String>,
    /// Record only these topics (wins over --ignore-topics).
    #[arg(long, value_name = "REGEXES")]
    select_topics: Option<String>,
    /// Do not record these topics' publications, takes and subscription callbacks.
    #[arg(long, value_name = "REGEXES")]
    ignore_topics: Option<String>,
    /// Do not record these processes at all (by process name).
    #[arg(long, value_name = "REGEXES")]
    ignore_processes: Option<String>,
    /// The ROS 2 distribution whose tracetools ABI the traced processes use (humble, iron,
    /// jazzy, kilted, rolling; default: their $ROS_DISTRO, else rolling).
    #[arg(long, value_name = "DISTRO", value_parser = parse_distro)]
    distro: Option<&'static tracetools::distro::Abi>,
    /// Also record the kernel's scheduling events (CPU time, scheduling during callbacks,
    /// wake-up latency) and page allocations: the LTTng backend with its kernel tracer.
    #[arg(long)]
    with_kernel: bool,
    /// Also record userspace memory: LTTng-UST's libc wrapper (malloc, free, ...) preloaded into
    /// the command (LTTng backend).
    #[arg(long)]
    with_memory: bool,
    /// Also record function entries and exits of code built with -finstrument-functions:
    /// LTTng-UST's cyg-profile helper preloaded into the command (LTTng backend).
    #[arg(long)]
    with_profile: bool,
    /// Record CARET's light event list (`ros2 caret record --light`): callbacks, dispatch, takes,
    /// rclcpp and rmw events, executors and callback groups, initialization, caret_init and
    /// sim_time (and rcl_publish from Iron on) instead of all `ros2:*` and `ros2_caret:*`.
    #[arg(long, conflicts_with = "ust")]
    light: bool,
    /// Also record sim time (`ros2_caret:sim_time`, as CARET's clock_recorder): a process of its
    /// own follows `/clock` on the traced programs' DDS domain and records the ROS time every
    /// second of wall time, from the start of the recording to its end (`rostrace analyze --time sim`).
    #[arg(long)]
    record_clock: bool,
}

/// CARET's `--light` event list (ros2caret/verb/record.py), without Iron's `ros2:rcl_publish`
/// (added for the distributions that have it).
pub const LIGHT_EVENTS: [&str; 18] = [
    "ros2:*callback*",
    "ros2_caret:*callback*",
    "ros2:dispatch*",
    "ros2_caret:dispatch*",
    "ros2:rclcpp*",
    "ros2_caret:rclcpp*",
    "ros2_caret:rmw*",
    "ros2:rmw_take",
    "*callback_group*",
    "ros2_caret:*executor",
    "ros2_caret:dds_bind*",
    "ros2:rcl_*init",
    "ros2_caret:rcl_*init",
    "ros2_caret:caret_init",
    "ros2_caret:sim_time",
    "ros2:message_construct",
    "agnocast:agnocast*",
    "ros2_caret:agnocast*",
];

/// The kernel events of `--with-kernel`: what the CPU time, scheduling and kernel memory
/// analyses read (statedump: which process each thread belongs to).
pub const KERNEL_PRESET: [&str; 9] = [
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_process_fork",
    "sched_process_exit",
    "lttng_statedump_*",
    "kmem_mm_page_alloc",
    "kmem_mm_page_free",
];

/// What `--with-memory` and `--with-profile` add: the LTTng-UST helper library preloaded, and its events.
const HELPERS: [(&str, &str, &[&str]); 2] = [
    ("--with-memory", "liblttng-ust-libc-wrapper.so", &["lttng_ust_libc:*"]),
    (
        "--with-profile",
        "liblttng-ust-cyg-profile.so",
        &["lttng_ust_cyg_profile:*", "lttng_ust_cyg_profile_fast:*", "lttng_ust_statedump:*", "lttng_ust_dl:*"],
    ),
];

/// An LTTng-UST helper library: in LD_LIBRARY_PATH, then the system's library directories.
fn find_helper(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("LD_LIBRARY_PATH").map(|v| std::env::split_paths(&v).collect()).unwrap_or_default();
    for d in
        ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/lib", "/usr/lib", "/usr/lib64", "/lib"]
    {
        dirs.push(PathBuf::from(d));
    }
    dirs.into_iter().flat_map(|d| [d.join(format!("{name}.1")), d.join(name)]).find(|p| p.exists())
}

impl RecordOptions {
    /// The helper libraries to preload and the userspace events to add, per `--with-*` option.
    fn helpers(&self) -> Result<(Vec<PathBuf>, Vec<String>), String> {
        let mut libs = Vec::new();
        let mut events = Vec::new();
        for (i, (opt, lib, evs)) in HELPERS.iter().enumerate() {
            if [self.with_memory, self.with_profile][i] {
                let path = find_helper(lib).ok_or_else(|| {
                    format!("{opt}: {lib} not found (LTTng-UST's helper libraries: Debian's liblttng-ust-dev or liblttng-ust1)")
                })?;
                libs.push(path);
                events.extend(evs.iter().map(|e| e.to_string()));
            }
        }
        Ok((libs, events))
    }
}

impl RecordOptions {
    /// The userspace events to record: `--ust`'s, or CARET's light list with `--light`.
    fn ust_events(&self) -> Vec<String> {
        if !self.light {
            return self.ust.clone();
        }
        let mut v: Vec<String> = LIGHT_EVENTS.iter().map(|e| e.to_string()).collect();
        // As ros2caret: rcl_publish from Iron on (Humble's rclcpp publishes through its own events).
        if !distro_of(self).is_ok_and(|abi| abi.name == "humble") {
            v.push("ros2:rcl_publish".into());
        }
        v
    }

    fn filters(&self) -> Vec<(&'static str, &String)> {
        [
            (tracetools::env::SELECT_NODES, &self.select_nodes),
            (tracetools::env::IGNORE_NODES, &self.ignore_nodes),
            (tracetools::env::SELECT_TOPICS, &self.select_topics),
            (tracetools::env::IGNORE_TOPICS, &self.ignore_topics),
            (tracetools::env::IGNORE_PROCESSES, &self.ignore_processes),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| (k, v)))
        .collect()
    }
}

/// Arguments of `rostrace record`.
#[derive(clap::Args)]
pub struct RecordArgs {
    #[command(flatten)]
    opts: RecordOptions,
    /// The command to trace, and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// Arguments of `rostrace create` and `rostrace start`.
#[derive(clap::Args)]
pub struct StartArgs {
    /// Session name.
    name: String,
    #[command(flatten)]
    opts: RecordOptions,
}

/// Arguments of `stop`, `pause`, `resume`.
#[derive(clap::Args)]
pub struct NameArgs {
    /// Session name.
    name: String,
    /// Directory of sessions.
    #[arg(short = 'p', long)]
    path: Option<PathBuf>,
}

/// Arguments of `rostrace list`.
#[derive(clap::Args)]
pub struct ListArgs {
    /// Directory of sessions.
    #[arg(short = 'p', long)]
    path: Option<PathBuf>,
}

/// Arguments of `rostrace lib`.
#[derive(clap::Args)]
pub struct LibArgs {
    /// The LTTng-UST provider of the distribution (see --distro of record) instead.
    #[arg(long)]
    provider: bool,
    /// The distribution whose provider to print (default: $ROSTRACE_DISTRO, $ROS_DISTRO, rolling).
    #[arg(long, value_parser = parse_distro)]
    distro: Option<&'static tracetools::distro::Abi>,
}

/// `rostrace lib`: where the library is, for `LD_PRELOAD=$(rostrace lib)`.
pub fn lib(a: LibArgs) -> std::io::Result<ExitCode> {
    let abi = match distro_or_env(a.distro) {
        Ok(abi) => abi,
        Err(e) => return fail(e),
    };
    let found = if a.provider {
        lttng_provider_dir(abi).map(|d| d.join(tracetools::lttng_provider_name(abi)))
    } else {
        find_library()
    };
    match found {
        Some(p) => {
            outln!("{}", p.display())?;
            Ok(ExitCode::SUCCESS)
        }
        None if a.provider => fail(lttng_provider_check(abi).err().unwrap_or_default()),
        None => fail("libtracetools.so not found beside rostrace, and this rostrace embeds none (set ROSTRACE_LIB)"),
    }
}

/// The default directory of sessions, as ros2_tracing picks it.
pub fn default_path() -> PathBuf {
    if let Some(d) = std::env::var_os("ROS_TRACE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(h) = std::env::var_os("ROS_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(h).join("tracing");
    }
    PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| ".".into())).join(".ros/tracing")
}

/// `PREFIX-YYYYMMDDHHMMSS` of the current UTC time.
pub fn timestamped(prefix: &str) -> String {
    let t = rostrace_ctf::time::utc(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as i64).unwrap_or(0),
    );
    format!("{prefix}-{:04}{:02}{:02}{:02}{:02}{:02}", t.year, t.month, t.day, t.hour, t.minute, t.second)
}

/// `$ROSTRACE_LIB`, or libtracetools.so beside this program (target/<profile>, or its deps/), or
/// the copy embedded in this program (written into the user's cache directory).
pub fn find_library() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ROSTRACE_LIB") {
        return Some(PathBuf::from(p));
    }
    let beside = std::env::current_exe().ok().and_then(|exe| {
        let dir = exe.parent()?.to_path_buf();
        // deps/ first: every build of the workspace refreshes it, target/<profile>/ only a build
        // of the library's own package.
        [dir.join("deps/libtracetools.so"), dir.join("libtracetools.so"), dir.join("../lib/libtracetools.so")]
            .into_iter()
            .find(|p| p.exists())
    });
    beside.or_else(crate::embedded::library)
}

/// Writes the state of an embedded session's control file (see [`write_session_file`]).
/// Returns whether the disk was full.
pub fn write_control(dir: &Path, state: &str) -> Result<bool, String> {
    write_session_file(dir, CONTROL_FILE, state)
}

/// Writes one word into a file of a session that traced processes poll: atomically (a new file
/// renamed over it), or, when that cannot be written (a full disk), in place: the word padded
/// with spaces to the file's length, in one write over bytes the file already has, so that no
/// space is needed. Readers take the first word. Returns whether the disk was full.
fn write_session_file(dir: &Path, file: &str, state: &str) -> Result<bool, String> {
    let path = dir.join(file);
    let tmp = dir.join(format!("{file}.tmp"));
    let atomic = std::fs::write(&tmp, format!("{state}\n")).and_then(|_| std::fs::rename(&tmp, &path));
    let Err(first) = atomic else { return Ok(false) };
    let _ = std::fs::remove_file(&tmp);
    let in_place = || -> std::io::Result<()> {
        use std::io::Write as _;
        let len = std::fs::metadata(&path)?.len() as usize;
        if len < state.len() + 1 {
            return Err(std::io::Error::other("the file is too short to be rewritten in place"));
        }
        let mut f = std::fs::OpenOptions::new().write(true).open(&path)?;
        f.write_all(format!("{state:<w$}\n", w = len - 1).as_bytes())
    };
    match in_place() {
        Ok(()) => Ok(true),
        Err(e) => Err(format!("cannot write {}: {first} (in place: {e})", path.display())),
    }
}

/// The environment that makes processes trace into `dir` with the embedded tracer; `lib` is the
/// libtracetools.so to preload into programs that do not link rostrace's tracer themselves.
fn embedded_env(dir: &Path, o: &RecordOptions, lib: Option<&Path>) -> Vec<(String, OsString)> {
    let mut env = vec![
        (tracetools::env::SESSION_DIR.to_string(), dir.as_os_str().to_owned()),
        (tracetools::env::EVENTS.to_string(), o.ust_events().join(",").into()),
    ];
    if let Some(abi) = o.distro {
        env.push((tracetools::env::DISTRO.to_string(), abi.name.into()));
    }
    if let Some(lib) = lib {
        let mut preload = OsString::from(lib);
        if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
            preload.push(":");
            preload.push(old);
        }
        let mut libpath = OsString::from(lib.parent().unwrap_or(Path::new(".")));
        if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|v| !v.is_empty()) {
            libpath.push(":");
            libpath.push(old);
        }
        env.push(("LD_PRELOAD".to_string(), preload));
        env.push(("LD_LIBRARY_PATH".to_string(), libpath));
    }
    if let Some(b) = &o.buffer_size {
        env.push((tracetools::env::BUFFER_SIZE.to_string(), b.into()));
    }
    for (k, v) in o.filters() {
        env.push((k.to_string(), v.into()));
    }
    if o.snapshot_mode {
        env.push((tracetools::env::SNAPSHOT.to_string(), o.snapshot_size.clone().into()));
    }
    env
}

fn check_options(o: &RecordOptions) -> Result<(), String> {
    distro_of(o).map_err(|e| format!("{e}: give the distribution with --distro"))?;
    if o.ust_events().is_empty() && o.kernel.is_empty() && !o.syscall {
        return Err("no events enabled".into());
    }
    if o.record_clock && !o.ust_events().iter().any(|p| tracetools::catalog::glob(p, "ros2_caret:sim_time")) {
        return Err(
            "--record-clock records ros2_caret:sim_time, which the -u/--ust events leave out: add -u ros2_caret:sim_time"
                .into(),
        );
    }
    if let Some(b) = &o.buffer_size {
        if tracetools::tracer::parse_size(b).is_none() {
            return Err(format!("invalid --buffer-size {b:?}"));
        }
    }
    if tracetools::tracer::parse_size(&o.snapshot_size).is_none_or(|n| n == 0) {
        return Err(format!("invalid --snapshot-size {:?}", o.snapshot_size));
    }
    for (_, v) in o.filters() {
        for p in v.split(':').filter(|p| !p.is_empty()) {
            regex_check(p)?;
        }
    }
    if o.backend == Backend::Lttng && !o.filters().is_empty() {
        return Err("node, topic and process filters are applied by the embedded tracer: use --backend embedded".into());
    }
    if o.backend == Backend::Embedded {
        if !o.kernel.is_empty() || o.syscall || o.with_kernel {
            return Err("kernel events need the LTTng kernel tracer: use --backend lttng".into());
        }
        if o.with_memory || o.with_profile {
            let opt = if o.with_memory { "--with-memory" } else { "--with-profile" };
            return Err(format!(
                "{opt} records LTTng-UST's own helper events, which only an LTTng session receives: use --backend lttng"
            ));
        }
        if let Some(c) = o.context.iter().find(|c| !["procname", "vpid", "vtid"].contains(&c.as_str())) {
            return Err(format!(
                "the embedded tracer records the procname, vpid and vtid context, not {c:?}: use --backend lttng"
            ));
        }
    }
    Ok(())
}

/// Marks an LTTng session directory; holds the LTTng session name.
const LTTNG_MARK: &str = ".rostrace-lttng";

fn regex_check(p: &str) -> Result<(), String> {
    regex::Regex::new(p).map(|_| ()).map_err(|e| {
        let why = e.to_string().lines().last().unwrap_or("").trim_start_matches("error: ").to_string();
        format!("invalid filter {p:?}: {why}")
    })
}

/// Creates the session directory (an existing one only with `--append`).
fn make_dir(o: &RecordOptions, name: &str) -> Result<PathBuf, String> {
    let dir = o.session.path.clone().unwrap_or_else(default_path).join(name);
    if dir.exists() && !o.append {
        return Err(format!("trace directory {} already exists: use --append, or another session name", dir.display()));
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

fn lttng(args: &[&str]) -> Result<String, String> {
    let out = Command::new("lttng").args(args).output().map_err(|e| format!("cannot run lttng: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().find(|l| l.contains("Error")).unwrap_or(err.trim());
        let first = if first.is_empty() { format!("failed ({})", out.status) } else { first.to_string() };
        Err(format!("lttng {}: {first}", args.join(" ")))
    }
}

/// Creates and starts an LTTng session writing to `dir`.
fn lttng_setup(name: &str, dir: &Path, o: &RecordOptions) -> Result<(), String> {
    if Command::new("lttng").arg("--version").output().is_err() {
        return Err("LTTng is not installed (lttng-tools): use --backend embedded".into());
    }
    let alive = Command::new("pgrep").args(["-x", "lttng-sessiond"]).output().is_ok_and(|o| o.status.success());
    if !alive {
        let st = Command::new("lttng-sessiond")
            .arg("--daemonize")
            .status()
            .map_err(|e| format!("cannot start lttng-sessiond: {e}"))?;
        if !st.success() {
            return Err("cannot start lttng-sessiond".into());
        }
    }
    if o.snapshot_mode {
        lttng(&["create", name, "--snapshot", &format!("--output={}", dir.display())])?;
    } else {
        lttng(&["create", name, &format!("--output={}", dir.display())])?;
    }
    let r = (|| {
        let mut chan = vec!["enable-channel", "-u", "-s", name];
        let sub = o.buffer_size.clone().unwrap_or_else(|| "8M".into());
        let num = o.num_subbuf.unwrap_or(2).to_string();
        chan.extend(["--subbuf-size", &sub, "--num-subbuf", &num, "rostrace"]);
        let (_, helper_events) = o.helpers()?;
        let ust = o.ust_events();
        if !ust.is_empty() || !helper_events.is_empty() {
            lttng(&chan)?;
            for e in ust.iter().chain(&helper_events) {
                lttng(&["enable-event", "-u", "-s", name, "-c", "rostrace", e])?;
            }
            let mut ctx = vec!["add-context", "-u", "-s", name, "-c", "rostrace"];
            for c in &o.context {
                ctx.extend(["-t", c]);
            }
            lttng(&ctx)?;
        }
        let preset = if o.with_kernel { &KERNEL_PRESET[..] } else { &[] };
        for e in o.kernel.iter().map(String::as_str).chain(preset.iter().copied()) {
            lttng(&["enable-event", "-k", "-s", name, e]).map_err(|e| {
                format!("{e} (is the LTTng kernel tracer available? it needs the lttng-modules kernel modules, and root or the tracing group)")
            })?;
        }
        if o.syscall {
            lttng(&["enable-event", "-k", "--syscall", "-a", "-s", name])
                .map_err(|e| format!("{e} (is the LTTng kernel tracer available?)"))?;
        }
        lttng(&["start", name])?;
        Ok(())
    })();
    if r.is_err() {
        let _ = lttng(&["destroy", name]);
    }
    r
}

/// Prints where a trace is and what it holds (or that nothing was recorded there); an error is
/// standard output's.
pub fn summary(dir: &Path) -> std::io::Result<()> {
    if rostrace_ctf::find_traces(dir).is_err() {
        outln!("  nothing was recorded in {}", dir.display())?;
        return Ok(());
    }
    let (set, errors) = TraceSet::open(&[dir]);
    for e in &errors {
        eprintln!("rostrace: warning: {e}");
    }
    let info = crate::info::collect(&set, Vec::new(), 0);
    outln!("trace written to {}", dir.display())?;
    outln!(
        "  {}, {}, {} discarded, {} lost",
        count(info.event_count, "event"),
        count(info.processes.len() as u64, "process"),
        count(info.discarded_events, "event"),
        count(info.lost_packets, "packet"),
    )?;
    let failed = write_failures(dir, 0);
    if let Some(first) = failed.first() {
        // Once for the recording, however many streams and processes it hit.
        let more =
            if failed.len() > 1 { format!(" (and in {} more processes)", failed.len() - 1) } else { String::new() };
        eprintln!(
            "rostrace: error: the trace could not be written whole: {first}{more}; each stream ends at its last whole packet, and the events after it are counted as discarded"
        );
    } else if info.discarded_events > 0 {
        outln!("  (events were discarded: give the tracer more buffer with --buffer-size)")?;
    }
    Ok(())
}

/// What the tracers said of the stream files they could not write, below `dir`.
fn write_failures(dir: &Path, depth: usize) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(errno) = name.strip_prefix(tracetools::tracer::WRITE_FAILED_FILE).and_then(|n| n.strip_prefix('-'))
        {
            let said = std::fs::read_to_string(&p).unwrap_or_default();
            out.push(if said.trim().is_empty() {
                let error = std::io::Error::from_raw_os_error(errno.parse().unwrap_or(0));
                format!("{}: {error}", dir.display())
            } else {
                said.trim().to_string()
            });
        } else if depth < 8 && e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(write_failures(&p, depth + 1));
        }
    }
    out
}

/// Each recorder of an embedded session (`record`, `demo`; several with `--append`) marks itself
/// with a file `.rostrace-recorder-<pid>-<start time>` (empty: it takes no room on a full disk);
/// the session stops when the last live one ends.
const RECORDER_FILE: &str = ".rostrace-recorder";

/// When process `pid` started (clock ticks since boot), to tell it from a later process of the
/// same number.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name, which may hold spaces and parentheses: field 22 is the 20th.
    stat[stat.rfind(')')? + 1..].split_whitespace().nth(19)?.parse().ok()
}

/// Holds an exclusive lock on the session directory while its recorders come and go (the lock
/// goes with the file).
fn lock_session(dir: &Path) -> Option<std::fs::File> {
    use std::os::fd::AsRawFd as _;
    let f = std::fs::File::open(dir).ok()?;
    // SAFETY: flock on a descriptor we own.
    while unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return None;
        }
    }
    Some(f)
}

/// This process's recorder file in `dir`.
fn recorder_file(dir: &Path) -> PathBuf {
    let pid = std::process::id();
    dir.join(format!("{RECORDER_FILE}-{pid}-{}", start_time(pid).unwrap_or(0)))
}

/// The other recorders of the session that still run (the files of those that ended without
/// saying so, killed, are removed).
fn other_recorders(dir: &Path) -> usize {
    let mine = recorder_file(dir);
    let Ok(rd) = std::fs::read_dir(dir) else { return 0 };
    let mut n = 0;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(RECORDER_FILE).and_then(|r| r.strip_prefix('-')) else { continue };
        if e.path() == mine {
            continue;
        }
        let alive = rest
            .split_once('-')
            .and_then(|(pid, start)| Some((pid.parse::<u32>().ok()?, start.parse::<u64>().ok()?)))
            .is_some_and(|(pid, start)| start_time(pid) == Some(start));
        if alive {
            n += 1;
        } else {
            let _ = std::fs::remove_file(e.path());
        }
    }
    n
}

/// A recording in progress: the session directory and backend are set up, the traced processes
/// get their environment from [`Recording::env`], and [`Recording::finish`] stops it.
pub struct Recording {
    name: String,
    dir: PathBuf,
    backend: Backend,
    snapshot_mode: bool,
    remove_on_abort: bool,
    filtered: bool,
    env: Vec<(String, OsString)>,
    record_clock: bool,
    /// The clock recorder (`--record-clock`), while it runs.
    clock: Option<std::process::Child>,
}

impl Recording {
    /// Checks the options, creates the session directory (`dir`, or the session's under `-p`) and
    /// starts the backend. `lib` is the libtracetools.so to preload (none for programs that link
    /// rostrace's tracer themselves).
    pub fn begin(
        o: &RecordOptions,
        prefix: &str,
        dir: Option<PathBuf>,
        lib: Option<&Path>,
    ) -> Result<Recording, String> {
        check_options(o)?;
        let (name, dir) = match dir {
            Some(d) => {
                let name =
                    d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| timestamped(prefix));
                if d.exists() && !o.append && std::fs::read_dir(&d).map(|mut e| e.next().is_some()).unwrap_or(true) {
                    return Err(format!("trace directory {} already exists and is not empty", d.display()));
                }
                std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
                (name, d)
            }
            None => {
                let name = o.session.name.clone().unwrap_or_else(|| timestamped(prefix));
                let d = make_dir(o, &name)?;
                (name, d)
            }
        };
        let mut r = Recording {
            name,
            dir,
            backend: o.backend,
            snapshot_mode: o.snapshot_mode,
            remove_on_abort: !o.append,
            filtered: !o.filters().is_empty() || tracetools::filter::configured_in_env(),
            env: Vec::new(),
            record_clock: o.record_clock,
            clock: None,
        };
        match o.backend {
            Backend::Embedded => {
                // Marked as one of the session's recorders, and recording, at once for the others.
                let lock = lock_session(&r.dir);
                if let Err(e) = std::fs::File::create(recorder_file(&r.dir)) {
                    let e = format!("{}: {e}", r.dir.display());
                    drop(lock);
                    r.abort();
                    return Err(e);
                }
                if let Err(e) = write_control(&r.dir, "recording") {
                    drop(lock);
                    r.abort();
                    return Err(e);
                }
                drop(lock);
                // Room for the processes that would start once the disk is full.
                tracetools::storage::reserve(&r.dir, true);
                r.env = embedded_env(&r.dir, o, lib);
            }
            Backend::Lttng => {
                // Known: check_options accepted it.
                let abi = distro_of(o)?;
                let provider = match lttng_provider_dir(abi).ok_or_else(|| lttng_missing(abi)) {
                    Ok(dir) => lttng_setup(&r.name, &r.dir, o).map(|_| dir),
                    Err(e) => Err(e),
                };
                let provider = match provider {
                    Ok(dir) => dir,
                    Err(e) => {
                        if r.remove_on_abort {
                            let _ = std::fs::remove_dir_all(&r.dir);
                        }
                        return Err(e);
                    }
                };
                r.env.push((tracetools::env::BACKEND.into(), "lttng".into()));
                if let Some(abi) = o.distro {
                    r.env.push((tracetools::env::DISTRO.into(), abi.name.into()));
                }
                r.env.push((tracetools::env::LTTNG_PROVIDER.into(), provider.into()));
                // Known: lttng_setup found them.
                let (helpers, _) = o.helpers().unwrap_or_default();
                let preload: Vec<&Path> = lib.into_iter().chain(helpers.iter().map(PathBuf::as_path)).collect();
                if !preload.is_empty() {
                    let mut v = OsString::new();
                    for (i, p) in preload.iter().enumerate() {
                        if i > 0 {
                            v.push(":");
                        }
                        v.push(p);
                    }
                    r.env.push(("LD_PRELOAD".into(), v));
                }
            }
        }
        // Python programs among the traced ones load the rclpy instrumentation (either backend).
        crate::rclpy::add_to_env(&mut r.env);
        Ok(r)
    }

    /// The environment of the traced processes.
    pub fn env(&self) -> &[(String, OsString)] {
        &self.env
    }

    /// The session directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The session name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The backend.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// With `--record-clock`, starts the clock recorder (`rostrace clock-recorder`, traced in the
    /// session like the demo's processes) on `domain` (see [`ros_domain`]). It runs until
    /// [`Recording::finish`].
    pub fn start_clock(&mut self, domain: u16) -> Result<(), String> {
        if !self.record_clock {
            return Ok(());
        }
        let exe = std::env::current_exe().map_err(|e| format!("--record-clock: {e}"))?;
        let mut cmd = Command::new(exe);
        cmd.arg("clock-recorder").stdin(std::process::Stdio::null()).env_remove(tracetools::env::BACKEND);
        cmd.args(["--domain", &domain.to_string()]);
        // It links rostrace's tracer: no preload.
        for (k, v) in self.env.iter().filter(|(k, _)| k != "LD_PRELOAD" && k != "LD_LIBRARY_PATH") {
            cmd.env(k, v);
        }
        let child = cmd.spawn().map_err(|e| format!("--record-clock: cannot start the clock recorder: {e}"))?;
        self.clock = Some(child);
        Ok(())
    }

    /// Stops the clock recorder (SIGTERM; it writes its trace and exits), if it runs.
    fn stop_clock(&mut self) {
        let Some(mut c) = self.clock.take() else { return };
        if matches!(c.try_wait(), Ok(None)) {
            // SAFETY: kill(2) with our own child's pid.
            unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while matches!(c.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            if matches!(c.try_wait(), Ok(None)) {
                eprintln!("rostrace: error: the clock recorder did not stop 10 s after SIGTERM: killed");
                let _ = c.kill();
            }
        }
        match c.wait() {
            Ok(s) if !s.success() => eprintln!("rostrace: error: the clock recorder ended with {s}"),
            Err(e) => eprintln!("rostrace: error: the clock recorder: {e}"),
            _ => {}
        }
    }

    /// Undoes [`Recording::begin`] when the traced processes could not start.
    pub fn abort(mut self) {
        self.stop_clock();
        let lock = lock_session(&self.dir);
        let _ = std::fs::remove_file(recorder_file(&self.dir));
        let others = other_recorders(&self.dir);
        drop(lock);
        if self.backend == Backend::Lttng {
            let _ = lttng(&["destroy", &self.name]);
        }
        if self.remove_on_abort {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else if others == 0 {
            tracetools::storage::release(&self.dir);
        }
    }

    /// Stops the recording once the traced processes ended (LTTng: snapshot if asked, stop, destroy).
    /// An error is reported on stderr, once. Returns whether something was recorded; when
    /// nothing was, says why and removes the session directory it created.
    pub fn finish(mut self, command: &str) -> bool {
        self.stop_clock();
        let mut others = 0;
        if self.backend == Backend::Lttng {
            if self.snapshot_mode {
                let _ = lttng(&["snapshot", "record", "-s", &self.name]);
            }
            let _ = lttng(&["stop", &self.name]);
            let _ = lttng(&["destroy", &self.name]);
        } else {
            // The last recorder of the session stops it; the others leave it recording.
            let lock = lock_session(&self.dir);
            let _ = std::fs::remove_file(recorder_file(&self.dir));
            others = other_recorders(&self.dir);
            if others == 0 {
                if let Err(e) = write_control(&self.dir, "stopped") {
                    eprintln!("rostrace: error: {e}");
                }
                tracetools::storage::release(&self.dir);
            }
            drop(lock);
            if others > 0 {
                eprintln!(
                    "rostrace: session {} goes on recording: {others} other recorder{} still record{} into it, and the last one stops it",
                    self.name,
                    if others > 1 { "s" } else { "" },
                    if others > 1 { "" } else { "s" }
                );
            }
        }
        if rostrace_ctf::find_traces(&self.dir).is_err() {
            eprintln!(
                "rostrace: error: nothing was recorded: no process of `{command}` emitted a ROS 2 event \
                 (no ros_trace_* call into libtracetools.so). Trace a ROS 2 program: its rcl, rclcpp and \
                 rmw call libtracetools; a program of your own calls it through tracetools/tracetools.h{}",
                if self.filtered { "; or the node, topic and process filters excluded everything" } else { "" }
            );
            if others > 0 {
                // The others may still record: the session stays.
            } else if self.remove_on_abort {
                let _ = std::fs::remove_dir_all(&self.dir);
            } else {
                let _ = std::fs::remove_file(self.dir.join(CONTROL_FILE));
            }
            return false;
        }
        true
    }
}

/// `rostrace record`.
pub fn record(a: RecordArgs) -> std::io::Result<ExitCode> {
    // The clock recorder's domain, checked before anything is recorded.
    let clock_domain = match a.opts.record_clock.then(|| ros_domain(None)).transpose() {
        Ok(d) => d.unwrap_or(0),
        Err(e) => return fail(format!("--record-clock: {e}")),
    };
    let lib = match find_library() {
        Some(l) => l,
        None => return fail("libtracetools.so not found beside rostrace, and this rostrace embeds none (build it: cargo build --release, and set ROSTRACE_LIB)"),
    };
    let rec = match Recording::begin(&a.opts, "session", None, Some(&lib)) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if a.opts.distro.is_none()
        && [tracetools::env::DISTRO, "ROS_DISTRO"].iter().all(|v| std::env::var_os(v).is_none_or(|x| x.is_empty()))
    {
        eprintln!(
            "rostrace: note: ROS_DISTRO is not set (no ROS 2 setup script sourced, e.g. a pip virtualenv): the traced \
             processes use {}'s tracetools ABI; give --distro for another distribution",
            tracetools::distro::DEFAULT
        );
    }
    let mut rec = rec;
    if let Err(e) = rec.start_clock(clock_domain) {
        rec.abort();
        return fail(e);
    }
    let mut cmd = Command::new(&a.command[0]);
    cmd.args(&a.command[1..]);
    for (k, v) in rec.env() {
        cmd.env(k, v);
    }
    // Ctrl-C reaches the traced command (same process group), SIGTERM is passed on to it; rostrace
    // waits for it to finish (caught before it starts: no window in which they would stop rostrace
    // alone; the command starts with their default actions).
    catch_stop_signals();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            rec.abort();
            return fail(format!("cannot run {:?}: {e}", a.command[0]));
        }
    };
    eprintln!(
        "rostrace: recording session {} into {} ({} backend); Ctrl-C stops",
        rec.name(),
        rec.dir().display(),
        rec.backend()
    );
    let status = match wait_passing_signals(&mut child) {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("rostrace: error: waiting for {:?}: {e}", a.command[0]);
            None
        }
    };
    let command = a.command.iter().map(|c| c.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let dir = rec.dir().to_path_buf();
    let recorded = rec.finish(&command);
    // The summary on standard output comes after the command and its trace: when it cannot be
    // written, the exit code stays the command's; on a closed pipe nothing is said, any other
    // error is, and a command that succeeded then ends in 1.
    let printed = if recorded { summary(&dir) } else { Ok(()) };
    let unprinted = match printed {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("rostrace: {e}");
            true
        }
        _ => false,
    };
    // How the command ended decides, then SIGTERM, then Ctrl-C, then whether anything was recorded.
    let code = status.map_or(1, exit_code_of);
    Ok(ExitCode::from(if code != 0 {
        code
    } else if SIGTERMS.load(Ordering::Relaxed) > 0 {
        TERMINATED_EXIT
    } else if interrupted() {
        INTERRUPTED_EXIT
    } else if !recorded || unprinted {
        1
    } else {
        0
    }))
}

/// The LTTng backend needs rostrace's LTTng-UST provider of the distribution, built with
/// rostrace when a C compiler and LTTng-UST's headers were there.
pub fn lttng_provider_check(abi: &tracetools::distro::Abi) -> Result<(), String> {
    match lttng_provider_dir(abi) {
        Some(_) => Ok(()),
        None => Err(lttng_missing(abi)),
    }
}

/// Why the LTTng backend is not available.
fn lttng_missing(abi: &tracetools::distro::Abi) -> String {
    format!(
        "the LTTng backend is not available: rostrace's LTTng-UST provider ({}) was not built \
         (it needs a C compiler and liblttng-ust-dev when rostrace is built; expected in {}): install them and \
         rebuild rostrace, or use --backend embedded",
        tracetools::lttng_provider_name(abi),
        tracetools::LTTNG_PROVIDER_DIR
    )
}

/// The directory holding the distribution's provider: beside libtracetools.so or this program,
/// or where it was built.
fn lttng_provider_dir(abi: &tracetools::distro::Abi) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = find_library().and_then(|l| l.parent().map(Path::to_path_buf)).into_iter().collect();
    dirs.extend(std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)));
    dirs.push(PathBuf::from(tracetools::LTTNG_PROVIDER_DIR));
    let name = tracetools::lttng_provider_name(abi);
    dirs.into_iter().find(|d| d.join(&name).exists())
}

/// A distribution name of `--distro`.
fn parse_distro(s: &str) -> Result<&'static tracetools::distro::Abi, String> {
    tracetools::distro::by_name(s)
}

/// The distribution given with `--distro`, else the environment's (which the traced processes
/// inherit).
fn distro_or_env(given: Option<&'static tracetools::distro::Abi>) -> Result<&'static tracetools::distro::Abi, String> {
    given.map(Ok).unwrap_or_else(tracetools::distro::from_env)
}

/// The distribution the traced processes use.
fn distro_of(o: &RecordOptions) -> Result<&'static tracetools::distro::Abi, String> {
    distro_or_env(o.distro)
}

/// `rostrace create`: a session processes can be launched under, recording nothing until `start`.
pub fn create(a: StartArgs, recording: bool) -> std::io::Result<ExitCode> {
    let o = &a.opts;
    if let Err(e) = check_options(o) {
        return fail(e);
    }
    if o.record_clock {
        return fail(
            "--record-clock runs the clock recorder for as long as rostrace runs: use it with `rostrace record` \
             (or run `rostrace clock-recorder` yourself with the session's environment)",
        );
    }
    if o.backend == Backend::Lttng {
        if let Err(e) = distro_of(o).and_then(lttng_provider_check) {
            return fail(e);
        }
        let dir = match make_dir(o, &a.name) {
            Ok(d) => d,
            Err(e) => return fail(e),
        };
        if let Err(e) = lttng_setup(&a.name, &dir, o) {
            return fail(e);
        }
        if !recording {
            let _ = lttng(&["stop", &a.name]);
        }
        std::fs::write(dir.join(LTTNG_MARK), &a.name)?;
        if let Err(e) = write_control(&dir, if recording { "recording" } else { "created" }) {
            return fail(e);
        }
        outln!("LTTng session {} {} in {}", a.name, if recording { "recording" } else { "created" }, dir.display())?;
        outln!("launch the processes to trace with:")?;
        if let Some(lib) = find_library() {
            let helpers: String =
                o.helpers().unwrap_or_default().0.iter().map(|h| format!(":{}", h.display())).collect();
            outln!("  export ROSTRACE_BACKEND=lttng LD_PRELOAD={}{helpers}", lib.display())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let lib = find_library();
    let dir = match make_dir(o, &a.name) {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    if let Err(e) = write_control(&dir, if recording { "recording" } else { "created" }) {
        return fail(e);
    }
    // Room for the processes that would start once the disk is full.
    tracetools::storage::reserve(&dir, true);
    outln!(
        "session {} {} in {}",
        a.name,
        if recording { "recording" } else { "created (not recording)" },
        dir.display()
    )?;
    outln!("launch the processes to trace with:")?;
    match lib {
        Some(lib) => {
            for (k, v) in embedded_env(&dir, o, Some(&lib)) {
                outln!("  export {k}={}", v.to_string_lossy())?;
            }
        }
        None => {
            outln!("  export ROSTRACE_SESSION_DIR={}", dir.display())?;
            outln!(
                "  and LD_PRELOAD=<path of rostrace's libtracetools.so> (not found beside rostrace: set ROSTRACE_LIB)"
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn session_dir(path: &Option<PathBuf>, name: &str) -> Result<PathBuf, String> {
    let dir = path.clone().unwrap_or_else(default_path).join(name);
    if !dir.join(CONTROL_FILE).exists() {
        return Err(format!("unknown session {name:?} (no {} in {})", CONTROL_FILE, dir.display()));
    }
    Ok(dir)
}

/// `start`, `stop`, `pause`, `resume` on an existing session.
pub fn control(a: NameArgs, verb: &str) -> std::io::Result<ExitCode> {
    let dir = match session_dir(&a.path, &a.name) {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    let state = control_state(Some(&dir));
    let raw = std::fs::read_to_string(dir.join(CONTROL_FILE)).unwrap_or_default();
    let (next, ok) = match verb {
        "start" => ("recording", state != Control::Recording),
        "resume" => ("recording", state == Control::Paused),
        "pause" => ("paused", state == Control::Recording),
        _ => ("stopped", state != Control::Stopped || raw.trim() == "created"),
    };
    if !ok {
        return fail(format!("session {} is already {}", a.name, raw.trim()));
    }
    if let Ok(lname) = std::fs::read_to_string(dir.join(LTTNG_MARK)) {
        // An LTTng session: the same verbs, through lttng.
        let r = match next {
            "recording" => lttng(&["start", &lname]),
            "paused" => lttng(&["stop", &lname]),
            _ => lttng(&["stop", &lname]).or(Ok(String::new())).and_then(|_| lttng(&["destroy", &lname])),
        };
        if let Err(e) = r {
            return fail(e);
        }
    }
    let full = match write_control(&dir, next) {
        Ok(full) => full,
        Err(e) => return fail(e),
    };
    let embedded = !dir.join(LTTNG_MARK).exists();
    match next {
        "recording" if embedded => tracetools::storage::reserve(&dir, true),
        "stopped" => tracetools::storage::release(&dir),
        _ => {}
    }
    // Traced processes poll every 20 ms.
    std::thread::sleep(std::time::Duration::from_millis(60));
    outln!("session {}: {next}", a.name)?;
    if full {
        eprintln!(
            "rostrace: warning: the file system of {} is full: the session is {next}, but traced processes \
             could not write all their events (they count what they drop as discarded)",
            dir.display()
        );
    }
    if next == "stopped" {
        summary(&dir)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `rostrace start NAME`: starts an existing session, or creates one recording.
pub fn start(a: StartArgs) -> std::io::Result<ExitCode> {
    let dir = a.opts.session.path.clone().unwrap_or_else(default_path).join(&a.name);
    if dir.join(CONTROL_FILE).exists() && !a.opts.append {
        return control(NameArgs { name: a.name, path: a.opts.session.path.clone() }, "start");
    }
    create(a, true)
}

/// `rostrace snapshot NAME`: flight-recorder sessions write what they hold.
pub fn snapshot(a: NameArgs) -> std::io::Result<ExitCode> {
    let dir = match session_dir(&a.path, &a.name) {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    let n =
        std::fs::read_to_string(dir.join(SNAPSHOT_FILE)).ok().and_then(|t| t.trim().parse::<u64>().ok()).unwrap_or(0)
            + 1;
    if let Err(e) = write_session_file(&dir, SNAPSHOT_FILE, &n.to_string()) {
        return fail(e);
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    outln!("session {}: snapshot {n} written", a.name)?;
    summary(&dir)?;
    Ok(ExitCode::SUCCESS)
}

/// `rostrace list`.
pub fn list(a: ListArgs) -> std::io::Result<ExitCode> {
    let root = a.path.unwrap_or_else(default_path);
    let mut rows = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&root) {
        for e in rd.flatten() {
            let p = e.path();
            if let Ok(s) = std::fs::read_to_string(p.join(CONTROL_FILE)) {
                rows.push((e.file_name().to_string_lossy().into_owned(), s.trim().to_string(), p));
            }
        }
    }
    rows.sort();
    if rows.is_empty() {
        outln!("no sessions in {}", root.display())?;
    }
    for (name, state, p) in rows {
        outln!("{name:<32} {state:<10} {}", p.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `rostrace clock-recorder` (hidden: `record --record-clock` runs it).
#[derive(clap::Args)]
pub struct ClockArgs {
    /// DDS domain (default: $ROS_DOMAIN_ID, else 0).
    #[arg(long, value_name = "ID")]
    domain: Option<u16>,
    /// Wall time between two sim_time samples, in seconds (CARET: 1).
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    period: f64,
}

/// The DDS domain: `given` (`--domain`), else `ROS_DOMAIN_ID`'s (else 0), as the ROS 2 programs read it.
pub(crate) fn ros_domain(given: Option<u16>) -> Result<u16, String> {
    match given {
        Some(d) if d > rostrace_ros2::MAX_DOMAIN_ID => {
            Err(format!("invalid --domain {d}: DDS domains are 0 to {}", rostrace_ros2::MAX_DOMAIN_ID))
        }
        Some(d) => Ok(d),
        None => rostrace_ros2::env_domain(),
    }
}

static CLOCK_STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_clock_stop(_: libc::c_int) {
    CLOCK_STOP.store(true, Ordering::Relaxed);
}

/// `rostrace clock-recorder`: CARET's clock_recorder (node `clock_recorder`, `/clock` → a
/// `ros2_caret:sim_time` event every second of wall time), traced in the session of its
/// environment, until SIGTERM (or its parent's end). Ctrl-C is left to the traced command:
/// `record` stops the recorder once the command has ended.
pub fn clock_recorder(a: ClockArgs) -> std::io::Result<ExitCode> {
    if !(a.period > 0.0 && a.period <= 3600.0) {
        return fail(format!("invalid --period {}", a.period));
    }
    let domain = match ros_domain(a.domain) {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    // SAFETY: PR_SET_NAME reads a NUL-terminated string; PR_SET_PDEATHSIG takes a signal number;
    // the handler only stores an atomic.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, c"clock_recorder".as_ptr());
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        libc::signal(libc::SIGTERM, on_clock_stop as *const () as libc::sighandler_t);
        libc::signal(libc::SIGHUP, on_clock_stop as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
    }
    match rostrace_ros2::run_clock_recorder(domain, std::time::Duration::from_secs_f64(a.period), &CLOCK_STOP) {
        Ok(s) => {
            eprintln!(
                "rostrace: clock recorder: {} sim_time samples recorded ({} /clock messages received on domain {domain})",
                s.recorded, s.received
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => fail(format!("clock recorder: {e}")),
    }
}

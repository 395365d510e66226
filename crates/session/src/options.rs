//! What a recording records and how: the options of `rostrace record`, `create`, `start` and
//! `demo` as plain values, their checks, and what they make of the traced processes' environment.

use std::path::PathBuf;
use std::time::Duration;
use tracetools::distro::Abi;

/// Tracing backends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
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

/// The options of a recording (the defaults are `rostrace record`'s).
#[derive(Clone, Debug)]
pub struct Options {
    /// Session name (default: PREFIX-YYYYMMDDHHMMSS).
    pub name: Option<String>,
    /// Directory of sessions (default: [`crate::default_path`]).
    pub path: Option<PathBuf>,
    /// Userspace events to record (`*` wildcards).
    pub ust: Vec<String>,
    /// Kernel events to record (LTTng backend only).
    pub kernel: Vec<String>,
    /// Record all system calls (LTTng backend only).
    pub syscall: bool,
    /// Context fields (the embedded tracer always records procname, vpid, vtid).
    pub context: Vec<String>,
    /// Tracing backend.
    pub backend: Backend,
    /// Write into an existing session directory.
    pub append: bool,
    /// Buffer per thread (embedded) or sub-buffer size (LTTng), e.g. `1M`.
    pub buffer_size: Option<String>,
    /// Number of sub-buffers per buffer (LTTng).
    pub num_subbuf: Option<u32>,
    /// How often LTTng writes its sub-buffers out, however full (the channel's switch timer), so
    /// that a reader following the recording sees each event within about this long; `None`:
    /// when a sub-buffer is full (LTTng's default). The embedded tracer writes its buffers every
    /// 20 ms whatever this says.
    pub flush_interval: Option<std::time::Duration>,
    /// Flight recorder: keep only the last events in memory, written on a snapshot and at exit.
    pub snapshot_mode: bool,
    /// Memory of the flight recorder per process (embedded backend).
    pub snapshot_size: String,
    /// Record only these nodes (colon-separated regular expressions).
    pub select_nodes: Option<String>,
    /// Do not record these nodes' callbacks, publications and takes.
    pub ignore_nodes: Option<String>,
    /// Record only these topics.
    pub select_topics: Option<String>,
    /// Do not record these topics' publications, takes and subscription callbacks.
    pub ignore_topics: Option<String>,
    /// Do not record these processes at all (by process name).
    pub ignore_processes: Option<String>,
    /// The distribution whose tracetools ABI the traced processes use (default: the environment's).
    pub distro: Option<&'static Abi>,
    /// Also record the kernel's scheduling events and page allocations (LTTng backend).
    pub with_kernel: bool,
    /// Also record userspace memory through LTTng-UST's libc wrapper (LTTng backend).
    pub with_memory: bool,
    /// Also record function entries and exits through LTTng-UST's cyg-profile helper (LTTng backend).
    pub with_profile: bool,
    /// Record CARET's light event list instead of `ust`.
    pub light: bool,
    /// Also record sim time (`ros2_caret:sim_time`) with a clock recorder process.
    pub record_clock: bool,
    /// Load rostrace's rclpy instrumentation into the traced Pythons (either backend), so that
    /// Python nodes trace their callbacks: a `sitecustomize.py` first on their `PYTHONPATH`.
    /// `ROSTRACE_RCLPY=0` in the environment turns it off whatever this says.
    pub rclpy: bool,
    /// Write the recording in chunks, a new one when the last reached this size or age
    /// (embedded backend, `record`).
    pub rotate: Option<Rotate>,
    /// Keep only the newest chunks, this many (with `rotate`).
    pub keep: Option<usize>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            name: None,
            path: None,
            ust: vec!["ros2:*".into(), "ros2_caret:*".into()],
            kernel: Vec::new(),
            syscall: false,
            context: vec!["procname".into(), "vpid".into(), "vtid".into()],
            backend: Backend::Embedded,
            append: false,
            buffer_size: None,
            num_subbuf: None,
            flush_interval: None,
            snapshot_mode: false,
            snapshot_size: "64M".into(),
            select_nodes: None,
            ignore_nodes: None,
            select_topics: None,
            ignore_topics: None,
            ignore_processes: None,
            distro: None,
            with_kernel: false,
            with_memory: false,
            with_profile: false,
            light: false,
            record_clock: false,
            rclpy: true,
            rotate: None,
            keep: None,
        }
    }
}

/// When a chunk ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rotate {
    /// When the chunk's files reach this many bytes.
    Size(u64),
    /// When the chunk has been written this long.
    Every(Duration),
}

impl Rotate {
    /// Parses `--rotate`: a size (`500K`, `100M`, `2G`, bytes without a suffix) or a duration
    /// with its unit (`30s`, `10min`, `2h`, `1d`). `10m` is refused: megabytes or minutes.
    pub fn parse(v: &str) -> Result<Rotate, String> {
        let t = v.trim();
        let bad = |why: &str| Err(format!("invalid --rotate {v:?}: {why}"));
        let digits = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
        let (num, unit) = t.split_at(digits);
        let Ok(n) = num.parse::<f64>() else {
            return bad("give a size (100M, 2G) or a duration (30s, 10min, 1h)");
        };
        if !(n.is_finite() && n > 0.0) {
            return bad("give a size or duration above 0");
        }
        let seconds = match unit {
            "s" | "sec" => Some(1.0),
            "min" => Some(60.0),
            "h" => Some(3600.0),
            "d" => Some(86400.0),
            "m" => return bad("10M is a size (MiB), 10min a duration: say which"),
            _ => None,
        };
        if let Some(s) = seconds {
            let d = n * s;
            if d < 1.0 {
                return bad("a chunk lasts at least 1 s");
            }
            return Ok(Rotate::Every(Duration::from_secs_f64(d.min(365.0 * 86400.0))));
        }
        let mult: u64 = match unit {
            "" => 1,
            "k" | "K" => 1 << 10,
            "M" => 1 << 20,
            "g" | "G" => 1 << 30,
            _ => return bad("sizes end in K, M or G; durations in s, min, h or d"),
        };
        let bytes = (n * mult as f64) as u64;
        if bytes < 64 << 10 {
            return bad("a chunk holds at least 64K");
        }
        Ok(Rotate::Size(bytes))
    }
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

/// The distribution given, else the environment's (which the traced processes inherit).
pub fn distro_or_env(given: Option<&'static Abi>) -> Result<&'static Abi, String> {
    given.map(Ok).unwrap_or_else(tracetools::distro::from_env)
}

impl Options {
    /// The helper libraries to preload and the userspace events to add, per `--with-*` option.
    pub fn helpers(&self) -> Result<(Vec<PathBuf>, Vec<String>), String> {
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

    /// The distribution the traced processes use.
    pub fn distro(&self) -> Result<&'static Abi, String> {
        distro_or_env(self.distro)
    }

    /// The userspace events to record: `ust`, or CARET's light list with `light`.
    pub fn ust_events(&self) -> Vec<String> {
        if !self.light {
            return self.ust.clone();
        }
        let mut v: Vec<String> = LIGHT_EVENTS.iter().map(|e| e.to_string()).collect();
        // As ros2caret: rcl_publish from Iron on (Humble's rclcpp publishes through its own events).
        if !self.distro().is_ok_and(|abi| abi.name == "humble") {
            v.push("ros2:rcl_publish".into());
        }
        v
    }

    /// The filters given, each with the variable of the tracer that takes it.
    pub fn filters(&self) -> Vec<(&'static str, &String)> {
        use tracetools::env;
        [
            (env::SELECT_NODES, &self.select_nodes),
            (env::IGNORE_NODES, &self.ignore_nodes),
            (env::SELECT_TOPICS, &self.select_topics),
            (env::IGNORE_TOPICS, &self.ignore_topics),
            (env::IGNORE_PROCESSES, &self.ignore_processes),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| (k, v)))
        .collect()
    }

    /// Checks that the options go together and that the backend can record them.
    pub fn check(&self) -> Result<(), String> {
        self.distro().map_err(|e| format!("{e}: give the distribution with --distro"))?;
        if self.ust_events().is_empty() && self.kernel.is_empty() && !self.syscall {
            return Err("no events enabled".into());
        }
        if self.record_clock && !self.ust_events().iter().any(|p| tracetools::catalog::glob(p, "ros2_caret:sim_time")) {
            return Err(
                "--record-clock records ros2_caret:sim_time, which the -u/--ust events leave out: add -u ros2_caret:sim_time"
                    .into(),
            );
        }
        if let Some(b) = &self.buffer_size {
            if tracetools::tracer::parse_size(b).is_none() {
                return Err(format!("invalid --buffer-size {b:?}"));
            }
        }
        if tracetools::tracer::parse_size(&self.snapshot_size).is_none_or(|n| n == 0) {
            return Err(format!("invalid --snapshot-size {:?}", self.snapshot_size));
        }
        for (_, v) in self.filters() {
            for p in v.split(':').filter(|p| !p.is_empty()) {
                regex_check(p)?;
            }
        }
        if self.backend == Backend::Lttng && !self.filters().is_empty() {
            return Err(
                "node, topic and process filters are applied by the embedded tracer: use --backend embedded".into()
            );
        }
        if let Some(f) = self.flush_interval {
            if f.is_zero() || f.as_micros() > u32::MAX as u128 {
                return Err(format!("invalid --flush-interval {} s: give seconds, above 0", f.as_secs_f64()));
            }
        }
        if self.backend == Backend::Embedded {
            self.check_embedded()?;
        }
        self.check_rotation()
    }

    /// What rotation goes with.
    fn check_rotation(&self) -> Result<(), String> {
        match (self.rotate, self.keep) {
            (None, Some(_)) => return Err("--keep keeps the newest chunks of --rotate: give --rotate too".into()),
            (_, Some(0)) => return Err("--keep 0 would keep nothing: keep at least 1 chunk".into()),
            (None, None) => return Ok(()),
            _ => {}
        }
        if self.backend == Backend::Lttng {
            return Err(
                "--rotate writes chunks that each start with the initialization events, which only the embedded \
                 tracer can replay: use --backend embedded (LTTng's own rotation, `lttng enable-rotation`, writes \
                 chunks that lack them: docs/recording.md)"
                    .into(),
            );
        }
        if self.snapshot_mode {
            return Err(
                "--rotate writes everything in chunks; --snapshot-mode keeps the last events in memory: choose one"
                    .into(),
            );
        }
        Ok(())
    }

    /// What the embedded tracer cannot record.
    fn check_embedded(&self) -> Result<(), String> {
        if self.flush_interval.is_some() {
            return Err(
                "--flush-interval sets LTTng's switch timer (the embedded tracer writes its buffers every 20 ms): use --backend lttng"
                    .into(),
            );
        }
        if !self.kernel.is_empty() || self.syscall || self.with_kernel {
            return Err("kernel events need the LTTng kernel tracer: use --backend lttng".into());
        }
        if self.with_memory || self.with_profile {
            let opt = if self.with_memory { "--with-memory" } else { "--with-profile" };
            return Err(format!(
                "{opt} records LTTng-UST's own helper events, which only an LTTng session receives: use --backend lttng"
            ));
        }
        if let Some(c) = self.context.iter().find(|c| !["procname", "vpid", "vtid"].contains(&c.as_str())) {
            return Err(format!(
                "the embedded tracer records the procname, vpid and vtid context, not {c:?}: use --backend lttng"
            ));
        }
        Ok(())
    }
}

/// Whether the tracer accepts filter `p` (it compiles the filters: its syntax is the one).
fn regex_check(p: &str) -> Result<(), String> {
    tracetools::tracer::check_filter(p).map_err(|why| format!("invalid filter {p:?}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jazzy() -> Options {
        Options { distro: Some(tracetools::distro::by_name("jazzy").unwrap()), ..Default::default() }
    }

    #[test]
    fn defaults_go_together() {
        assert_eq!(jazzy().check(), Ok(()));
        assert_eq!(jazzy().ust_events(), ["ros2:*", "ros2_caret:*"]);
    }

    #[test]
    fn each_misfit_is_named() {
        let bad = |o: Options, says: &str| {
            let e = o.check().unwrap_err();
            assert!(e.contains(says), "{e:?} should say {says:?}");
        };
        bad(Options { buffer_size: Some("lots".into()), ..jazzy() }, "--buffer-size \"lots\"");
        bad(Options { snapshot_size: "0".into(), ..jazzy() }, "--snapshot-size");
        bad(Options { select_nodes: Some("/a:(".into()), ..jazzy() }, "invalid filter \"(\"");
        // Refused as the tracer would refuse it (it compiles the filters), not started and ignored.
        bad(Options { ignore_topics: Some("[a-z&&[^x]]".into()), ..jazzy() }, "invalid filter \"[a-z&&[^x]]\"");
        bad(Options { with_kernel: true, ..jazzy() }, "--backend lttng");
        bad(Options { context: vec!["perf:cpu:cycles".into()], ..jazzy() }, "perf:cpu:cycles");
        bad(
            Options { backend: Backend::Lttng, ignore_topics: Some("/rosout".into()), ..jazzy() },
            "--backend embedded",
        );
        bad(Options { record_clock: true, ust: vec!["ros2:*".into()], ..jazzy() }, "ros2_caret:sim_time");
        bad(Options { ust: Vec::new(), ..jazzy() }, "no events");
    }

    #[test]
    fn light_follows_caret_per_distribution() {
        let humble = Options { distro: Some(tracetools::distro::by_name("humble").unwrap()), light: true, ..jazzy() };
        let jazzy = Options { light: true, ..jazzy() };
        assert!(!humble.ust_events().iter().any(|e| e == "ros2:rcl_publish"));
        assert!(jazzy.ust_events().iter().any(|e| e == "ros2:rcl_publish"));
        assert_eq!(jazzy.ust_events().len(), LIGHT_EVENTS.len() + 1);
    }

    #[test]
    fn filters_go_to_the_tracer_variables() {
        let o = Options { select_nodes: Some("/a".into()), ignore_processes: Some("x".into()), ..jazzy() };
        let f: Vec<(&str, &str)> = o.filters().into_iter().map(|(k, v)| (k, v.as_str())).collect();
        assert_eq!(f, [(tracetools::env::SELECT_NODES, "/a"), (tracetools::env::IGNORE_PROCESSES, "x")]);
    }

    #[test]
    fn sizes_and_durations_are_told_apart() {
        assert_eq!(Rotate::parse("100M"), Ok(Rotate::Size(100 << 20)));
        assert_eq!(Rotate::parse("2G"), Ok(Rotate::Size(2 << 30)));
        assert_eq!(Rotate::parse("512k"), Ok(Rotate::Size(512 << 10)));
        assert_eq!(Rotate::parse("30s"), Ok(Rotate::Every(Duration::from_secs(30))));
        assert_eq!(Rotate::parse("10min"), Ok(Rotate::Every(Duration::from_secs(600))));
        assert_eq!(Rotate::parse("1.5h"), Ok(Rotate::Every(Duration::from_secs(5400))));
        for bad in ["10m", "", "0s", "M", "5x", "1K", "0.5s", "-3s"] {
            assert!(Rotate::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(Rotate::parse("10m").unwrap_err().contains("10min"));
    }
}

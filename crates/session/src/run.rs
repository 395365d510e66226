//! Recording a command: the session set up, the command run in its environment and waited
//! for, the session finished.

use crate::options::Options;
use crate::recording::{Message, Recording};
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// What the front end running [`record`] does along the way.
pub trait Observer {
    /// Shows a message.
    fn say(&mut self, m: Message);
    /// The command is about to start (the CLI catches the signals that would stop it here).
    fn spawning(&mut self) {}
    /// The command runs, recorded.
    fn started(&mut self, _rec: &Recording) {}
    /// Waits for the command (default: until it ends, whatever signals come).
    fn wait(&mut self, child: &mut Child) -> std::io::Result<ExitStatus> {
        child.wait()
    }
}

/// An [`Observer`] that says nothing and waits.
pub struct Quiet;

impl Observer for Quiet {
    fn say(&mut self, _: Message) {}
}

/// A recorded command.
#[derive(Debug)]
pub struct Recorded {
    /// The session directory.
    pub dir: PathBuf,
    /// How the command ended (none when it could not be waited for).
    pub status: Option<ExitStatus>,
    /// Whether anything was recorded (when nothing was, the directory is removed, unless it
    /// existed before or other recorders write into it).
    pub recorded: bool,
}

/// Records `command` (a program and its arguments) with `lib` (libtracetools.so) preloaded,
/// until it ends: the session is made from the options (in `dir` when given, else the session
/// named by the options in their directory of sessions), the command runs in its environment,
/// the session is finished. With `record_clock`, `clock` is the clock recorder's program (the
/// `rostrace` binary) and DDS domain. An error is returned when nothing could be started (the
/// session is then undone); what happens afterwards is told to `obs`.
pub fn record(
    o: &Options,
    dir: Option<PathBuf>,
    command: &[OsString],
    lib: &Path,
    clock: Option<(&Path, u16)>,
    obs: &mut dyn Observer,
) -> Result<Recorded, String> {
    let Some(program) = command.first() else { return Err("no command to record".into()) };
    if o.record_clock && clock.is_none() {
        return Err("--record-clock: no clock recorder program given".into());
    }
    let mut rec = Recording::begin(o, "session", dir, Some(lib))?;
    rec.take_messages().into_iter().for_each(|m| obs.say(m));
    if o.distro.is_none()
        && [tracetools::env::DISTRO, tracetools::env::ROS_DISTRO]
            .iter()
            .all(|v| std::env::var_os(v).is_none_or(|x| x.is_empty()))
    {
        obs.say(Message::Note(format!(
            "ROS_DISTRO is not set (no ROS 2 setup script sourced, e.g. a pip virtualenv): the traced \
             processes use {}'s tracetools ABI; give --distro for another distribution",
            tracetools::distro::DEFAULT
        )));
    }
    if let Some((exe, domain)) = clock {
        if let Err(e) = rec.start_clock(exe, domain) {
            rec.abort().into_iter().for_each(|m| obs.say(m));
            return Err(e);
        }
    }
    let mut cmd = Command::new(program);
    cmd.args(&command[1..]);
    for (k, v) in rec.env() {
        cmd.env(k, v);
    }
    obs.spawning();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            rec.abort().into_iter().for_each(|m| obs.say(m));
            return Err(format!("cannot run {program:?}: {e}"));
        }
    };
    obs.started(&rec);
    let status = match obs.wait(&mut child) {
        Ok(s) => Some(s),
        Err(e) => {
            obs.say(Message::Error(format!("waiting for {program:?}: {e}")));
            None
        }
    };
    let line = command.iter().map(|c| c.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let dir = rec.dir().to_path_buf();
    let (recorded, said) = rec.finish(&line);
    said.into_iter().for_each(|m| obs.say(m));
    Ok(Recorded { dir, status, recorded })
}

/// How long a command stopped with SIGTERM by a second Ctrl-C has before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// The signals that stop a recorder, received so far (counted by the front end's handlers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Received {
    /// SIGINTs (Ctrl-C).
    pub ints: u32,
    /// SIGTERMs, SIGHUPs and SIGQUITs: signals that ask the recorder to end, sent on to the
    /// command.
    pub terms: u32,
    /// The first of those (its number), which is the one sent on.
    pub first_term: i32,
}

/// Passes on to a traced command the signals that stop its recorder, each one a step further:
/// a first Ctrl-C reaches the command through the terminal (same process group) and is left
/// to it; a first SIGTERM, SIGHUP or SIGQUIT (a supervisor, `docker stop`, a closed terminal) is
/// sent on to it as it came; the next one (a second Ctrl-C, or any after either) sends it
/// SIGTERM, and SIGKILL [`STOP_GRACE`] later if it still runs; the one after that sends SIGKILL
/// at once.
#[derive(Debug)]
pub struct Passing {
    pid: libc::pid_t,
    ints: u32,
    terms: u32,
    step: u32,
    kill_at: Option<Instant>,
}

impl Passing {
    /// Signals passed on to `child`, none received yet.
    pub fn new(child: &Child) -> Passing {
        Passing { pid: child.id() as libc::pid_t, ints: 0, terms: 0, step: 0, kill_at: None }
    }

    /// Acts on the signals received since the last call (`r`: every one so far), and on the
    /// grace time running out. Call it often while the child runs, never after it was reaped.
    pub fn pass(&mut self, r: Received, say: &mut dyn FnMut(Message)) {
        let pid = self.pid;
        let send = |sig| {
            // SAFETY: kill(2) to our own child, not yet reaped (the caller says it runs).
            unsafe { libc::kill(pid, sig) };
        };
        while self.ints < r.ints || self.terms < r.terms {
            let term = self.terms < r.terms;
            if term {
                self.terms += 1;
            } else {
                self.ints += 1;
            }
            self.step += 1;
            match self.step {
                1 if term => {
                    let sig = if r.first_term > 0 { r.first_term } else { libc::SIGTERM };
                    send(sig);
                    say(Message::Info(format!(
                        "{}: sent on to the command; the trace is finished when it ends (SIGTERM or Ctrl-C \
                         again stops it harder)",
                        signal_name(sig)
                    )));
                }
                1 => {}
                2 => {
                    send(libc::SIGTERM);
                    self.kill_at = Some(Instant::now() + STOP_GRACE);
                    say(Message::Info(format!(
                        "stopping the command: SIGTERM sent to it, SIGKILL in {} s if it still runs \
                         (Ctrl-C again: at once)",
                        STOP_GRACE.as_secs()
                    )));
                }
                _ => {
                    send(libc::SIGKILL);
                    self.kill_at = None;
                    say(Message::Info("SIGKILL sent to the command".into()));
                }
            }
        }
        if self.kill_at.is_some_and(|t| Instant::now() >= t) {
            send(libc::SIGKILL);
            self.kill_at = None;
            say(Message::Info(format!(
                "the command still ran {} s after SIGTERM: SIGKILL sent to it",
                STOP_GRACE.as_secs()
            )));
        }
    }
}

/// The usual name of the stop signal `sig`.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGQUIT => "SIGQUIT",
        _ => "a signal",
    }
}

/// Waits for the traced command, passing on the signals that stop the recorder ([`Passing`]);
/// `received` tells which came so far.
pub fn wait_passing_signals(
    child: &mut Child,
    mut received: impl FnMut() -> Received,
    say: &mut dyn FnMut(Message),
) -> std::io::Result<ExitStatus> {
    let mut passing = Passing::new(child);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        passing.pass(received(), say);
        std::thread::sleep(Duration::from_millis(10));
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

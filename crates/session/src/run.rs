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

/// Waits for the traced command, passing on the signals that stop the recorder, each one a step
/// further. `stops` counts the SIGINTs and SIGTERMs received so far (by the front end's
/// handlers). A first Ctrl-C reaches the command through the terminal (same process group) and
/// is left to it; a first SIGTERM (a supervisor, `docker stop`) is sent on to it; the next one
/// (a second Ctrl-C, or SIGTERM after either) sends it SIGTERM, and SIGKILL [`STOP_GRACE`]
/// later if it still runs; the one after that sends SIGKILL at once.
pub fn wait_passing_signals(
    child: &mut Child,
    mut stops: impl FnMut() -> (u32, u32),
    say: &mut dyn FnMut(Message),
) -> std::io::Result<ExitStatus> {
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
        let (i, t) = stops();
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
                    say(Message::Info(
                        "SIGTERM: sent on to the command; the trace is finished when it ends (SIGTERM or \
                         Ctrl-C again stops it harder)"
                            .into(),
                    ));
                }
                1 => {}
                2 => {
                    send(libc::SIGTERM);
                    kill_at = Some(Instant::now() + STOP_GRACE);
                    say(Message::Info(format!(
                        "stopping the command: SIGTERM sent to it, SIGKILL in {} s if it still runs \
                         (Ctrl-C again: at once)",
                        STOP_GRACE.as_secs()
                    )));
                }
                _ => {
                    send(libc::SIGKILL);
                    kill_at = None;
                    say(Message::Info("SIGKILL sent to the command".into()));
                }
            }
        }
        if kill_at.is_some_and(|t| Instant::now() >= t) {
            send(libc::SIGKILL);
            kill_at = None;
            say(Message::Info(format!(
                "the command still ran {} s after SIGTERM: SIGKILL sent to it",
                STOP_GRACE.as_secs()
            )));
        }
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

//! Standard output of the subcommands, written through [`stdout`] (or the [`out!`] and
//! [`outln!`] macros over it), whose errors are returned, not panicked on as `print!` does: a
//! subcommand passes them up (`?`), and `main` ends quietly with 0 on a closed pipe (`| head`)
//! and with one line naming the error and 1 on any other (`> /dev/full`).
//!
//! What is written goes to file descriptor 1 at once, unbuffered (the macros make each call one
//! write): nothing is left in a buffer that a failed write would keep for the next one, or that
//! the exit would flush with its error unseen.

use std::io::{self, Write};
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;
use std::process::ExitCode;

/// Standard output, for as long as it is held (the standard library's handle locked, so that
/// what it writes elsewhere does not come between); its errors say they are standard output's
/// and keep their kind (`main` tells a closed pipe by it).
pub struct Stdout {
    fd: ManuallyDrop<std::fs::File>,
    _lock: io::StdoutLock<'static>,
}

/// Standard output (see [`Stdout`]).
pub fn stdout() -> Stdout {
    let lock = io::stdout().lock();
    // SAFETY: descriptor 1 stays open for the process's life; ManuallyDrop never closes it.
    Stdout { fd: ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(1) }), _lock: lock }
}

fn named(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("writing to standard output: {e}"))
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.fd.write(buf).map_err(named)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.fd.write_all(buf).map_err(named)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `print!` to standard output in one write, returning the `io::Result` instead of panicking;
/// the text made safe for a terminal ([`crate::format::terminal`]).
macro_rules! out {
    ($($arg:tt)*) => {
        ::std::io::Write::write_all(
            &mut $crate::out::stdout(),
            $crate::format::terminal(&format!($($arg)*)).as_bytes(),
        )
    };
}

/// `println!` to standard output in one write, returning the `io::Result` instead of panicking;
/// the text made safe for a terminal ([`crate::format::terminal`]).
macro_rules! outln {
    () => {
        ::std::io::Write::write_all(&mut $crate::out::stdout(), b"\n")
    };
    ($($arg:tt)*) => {
        ::std::io::Write::write_all(
            &mut $crate::out::stdout(),
            $crate::format::terminal(&format!("{}\n", format_args!($($arg)*))).as_bytes(),
        )
    };
}

/// `crate::out::errln!`, the text made safe for a terminal ([`crate::format::terminal`]): every message
/// of rostrace's on standard error goes through it.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::out::stderr_line(&format!($($arg)*))
    };
}

pub(crate) use {errln, out, outln};

/// Writes `line` and a line feed to standard error in one write, made safe for a terminal;
/// an error writing it is ignored (there is nowhere left to say it).
pub fn stderr_line(line: &str) {
    let mut s = crate::format::terminal(line).into_owned();
    s.push('\n');
    let _ = io::stderr().lock().write_all(s.as_bytes());
}

/// Prints `rostrace: error: MSG` and gives exit code 1.
pub fn fail(msg: impl std::fmt::Display) -> std::io::Result<ExitCode> {
    errln!("rostrace: error: {msg}");
    Ok(ExitCode::from(1))
}

/// Whether an output path (`-o`, `--output`, `--json`) means standard output: `-`. A file or
/// directory of that name is `./-`.
pub fn is_stdout(p: &std::path::Path) -> bool {
    p.as_os_str() == "-"
}

/// An output path as messages name it: `standard output` for `-`.
pub fn shown(p: &std::path::Path) -> String {
    if is_stdout(p) {
        "standard output".into()
    } else {
        p.display().to_string()
    }
}

/// The error of `ARG -` where what is written is a directory (`what` go to one), which
/// standard output cannot hold.
pub fn stdout_is_not_a_directory(arg: &str, what: &str) -> std::io::Result<ExitCode> {
    fail(format!(
        "{arg} -: {what} go to a directory, not to standard output: give a directory (`./-` for one named `-`)"
    ))
}

/// Writes `value` as JSON to `json` (`-`: standard output, instead of the text), then the
/// text to standard output, then where the JSON went. An error writing the `--json` file is the
/// inner one, naming its path; standard output's is the outer one.
pub fn emit<T: serde::Serialize>(
    json: Option<&std::path::Path>,
    value: &T,
    text: impl FnOnce() -> String,
) -> std::io::Result<Result<(), String>> {
    let Some(p) = json else {
        crate::out::stdout().write_all(text().as_bytes())?;
        return Ok(Ok(()));
    };
    if is_stdout(p) {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, crate::out::stdout());
        // serde_json's error of a write is the writer's own.
        serde_json::to_writer_pretty(&mut w, value).map_err(std::io::Error::from)?;
        w.write_all(b"\n")?;
        w.flush()?;
        return Ok(Ok(()));
    }
    let written = std::fs::File::create(p).and_then(|f| {
        let mut w = std::io::BufWriter::new(f);
        serde_json::to_writer_pretty(&mut w, value).map_err(std::io::Error::other)?;
        w.flush()
    });
    if let Err(e) = written {
        return Ok(Err(format!("--json {}: {e}", p.display())));
    }
    crate::out::stdout().write_all(text().as_bytes())?;
    errln!("JSON written to {}", p.display());
    Ok(Ok(()))
}

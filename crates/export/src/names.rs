//! File names for the names a trace brings: an event table's directory (`events/<event>`) and a
//! recording's file (`<recording>.parquet`). A trace's names are anyone's (an event class's
//! name in the CTF metadata can be `..`, empty, hold `/` or NUL, or run to 300 bytes), and each
//! must become a file name of its own, below the output directory and within the 255 bytes a
//! file name may have. A name that is a safe file name is kept; any other is renamed: escaped,
//! cut to fit, then `~` and a hash of the whole name. A kept name never holds `~`, so it is
//! never a renamed one; two renamed names meet only when their hashes do, and [`Taken`] draws
//! another hash then. The hash is FNV-1a, the same in every build, so that a name gets the same
//! file name in every export into one directory.

use std::collections::HashSet;
use std::fmt::{self, Write as _};
use std::io;

/// The longest file name, in bytes (Linux's NAME_MAX).
pub const NAME_MAX: usize = 255;

/// Hex digits of the hash ending a renamed name.
const HASH_DIGITS: usize = 16;

/// Why a name is not its own file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Renamed {
    /// Not a safe file name (empty, `.` or `..`, starting with `.` or `-`, or holding a
    /// character other than a letter, digit, `.`, `_` or `-`; `:` too for an event): escaped.
    Unsafe,
    /// Longer than a file name may be: shortened.
    TooLong,
}

impl fmt::Display for Renamed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Renamed::Unsafe => "not a safe file name: escaped",
            Renamed::TooLong => "too long for a file name: shortened",
        })
    }
}

/// FNV-1a 64 of `name`, then of `salt` after a 0xff byte (which UTF-8 never holds) when not 0.
fn hash(name: &str, salt: u32) -> u64 {
    let tail = if salt == 0 { Vec::new() } else { [&[0xff][..], &salt.to_le_bytes()].concat() };
    name.as_bytes()
        .iter()
        .chain(&tail)
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// `name` escaped (letters, digits, `_` kept; `.` and `-` kept but first; `:` made `.` but
/// first; any other byte as `%XX`), cut where the next piece would not fit in `room` bytes with
/// the `~` and hash that follow; `_` when nothing of it is left.
fn renamed(name: &str, room: usize, salt: u32) -> String {
    let keep = room.saturating_sub(1 + HASH_DIGITS);
    let mut s = String::with_capacity(room);
    for (i, &b) in name.as_bytes().iter().enumerate() {
        let piece = match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
            b'.' | b'-' if i > 0 => (b as char).to_string(),
            b':' if i > 0 => ".".to_string(),
            _ => format!("%{b:02X}"),
        };
        if s.len() + piece.len() > keep {
            break;
        }
        s.push_str(&piece);
    }
    if s.is_empty() {
        s.push('_');
    }
    let _ = write!(s, "~{:0w$x}", hash(name, salt), w = HASH_DIGITS);
    s
}

/// Whether `name` is kept as it is where each byte must pass `ok` and `ext` follows it.
fn why(name: &str, ext: &str, ok: impl Fn(u8) -> bool) -> Option<Renamed> {
    let b = name.as_bytes();
    if b.is_empty() || !(b[0].is_ascii_alphanumeric() || b[0] == b'_') || !b.iter().all(|&c| ok(c)) {
        Some(Renamed::Unsafe)
    } else if b.len() + ext.len() > NAME_MAX {
        Some(Renamed::TooLong)
    } else {
        None
    }
}

/// The file name of `name` followed by `ext` (`.parquet`): `name` itself when it is a safe
/// file name (letters, digits, `.`, `_`, `-`, starting with a letter, digit or `_`) and fits,
/// else a renamed one (`..` → `%2E.~<hash>`), with why.
pub fn file_name(name: &str, ext: &str) -> (String, Option<Renamed>) {
    match why(name, ext, |c| c.is_ascii_alphanumeric() || b"._-".contains(&c)) {
        None => (format!("{name}{ext}"), None),
        Some(w) => (renamed(name, NAME_MAX.saturating_sub(ext.len()), 0) + ext, Some(w)),
    }
}

fn event_dir_salted(event: &str, salt: u32) -> (String, Option<Renamed>) {
    match why(event, "", |c| c.is_ascii_alphanumeric() || b"_-:".contains(&c)) {
        None => (event.replace(':', "."), None),
        Some(w) => (renamed(event, NAME_MAX, salt), Some(w)),
    }
}

/// The directory name of an event's table: `ros2:callback_start` → `ros2.callback_start`
/// (letters, digits, `_`, `-` and `:`, starting with a letter, digit or `_`, each `:` made
/// `.`), else a renamed one with why: `ros2.callback_start`, whose `.` is its own, becomes
/// `ros2.callback_start~<hash>`, `..` becomes `%2E.~<hash>`.
pub fn event_dir(event: &str) -> (String, Option<Renamed>) {
    event_dir_salted(event, 0)
}

/// The file names given out in one directory, each to one name.
#[derive(Debug, Default)]
pub struct Taken(HashSet<String>);

impl Taken {
    /// [`event_dir`] of `event`, with another hash while a renamed name's is taken (`event`s
    /// are distinct: a kept name is never taken, see the module's doc).
    pub fn event_dir(&mut self, event: &str) -> (String, Option<Renamed>) {
        let mut salt = 0;
        loop {
            let (dir, why) = event_dir_salted(event, salt);
            if self.0.insert(dir.clone()) {
                return (dir, why);
            }
            salt += 1;
        }
    }
}

/// Checks that a table name (`callbacks`, `events/ros2.callback_start`) is a path of file names
/// below the output directory: no part empty (nor a leading `/`), `.`, `..` or starting with
/// `.`, none longer than [`NAME_MAX`], no NUL.
pub fn check_table(name: &str) -> io::Result<()> {
    for part in name.split('/') {
        if part.is_empty() || part.starts_with('.') || part.len() > NAME_MAX || part.contains('\0') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("table name {name:?}: {part:?} is not a file name below the output directory"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names no file system takes as they are, or takes as something else.
    fn hostile() -> Vec<String> {
        let mut v: Vec<String> = ["", ".", "..", "...", ".hidden", "a/b", "../../etc", "/", "a\0b", "-rf", "~", "%2E"]
            .map(String::from)
            .into();
        v.extend(["x".repeat(300), "é".repeat(200), format!("{}/", "a".repeat(254)), "a".repeat(255)]);
        v
    }

    #[test]
    fn safe_names_are_kept() {
        assert_eq!(event_dir("ros2:callback_start"), ("ros2.callback_start".into(), None));
        assert_eq!(event_dir("sched_switch"), ("sched_switch".into(), None));
        assert_eq!(file_name("robot1-2026.11.25", ".parquet"), ("robot1-2026.11.25.parquet".into(), None));
        assert_eq!(file_name("_x", ".csv"), ("_x.csv".into(), None));
    }

    /// A file name that is one part of a path, not hidden, not an option, printable, and fits.
    fn check(name: &str, f: &str, ext: &str) {
        assert!(f.len() <= NAME_MAX, "{name:?}: {} bytes", f.len());
        assert!(f.len() > ext.len() && !f.starts_with(['.', '-', '~']), "{name:?} → {f:?}");
        assert!(f.bytes().all(|c| c.is_ascii_graphic() && c != b'/'), "{name:?} → {f:?}");
        assert!(check_table(f).is_ok(), "{name:?} → {f:?}");
    }

    #[test]
    fn every_name_gets_a_file_name_of_its_own() {
        let mut names = hostile();
        names.extend(["ros2:callback_start", "ros2.callback_start", "a.b", "a:b", "a", "_"].map(String::from));
        names.push(format!("{}y", "x".repeat(300)));
        for ext in [".csv", ".parquet"] {
            let mut seen = HashSet::new();
            for n in &names {
                let f = file_name(n, ext).0;
                check(n, &f, ext);
                assert!(seen.insert(f.clone()), "{n:?} → {f:?}, another name's");
            }
        }
        let mut seen = HashSet::new();
        for n in &names {
            let f = event_dir(n).0;
            check(n, &f, "");
            assert!(seen.insert(f.clone()), "{n:?} → {f:?}, another event's");
        }
    }

    #[test]
    fn renamed_names_say_why_and_keep_what_they_can() {
        let (d, w) = event_dir("..");
        assert_eq!(w, Some(Renamed::Unsafe));
        assert!(d.starts_with("%2E.~"), "{d}");
        let (d, w) = event_dir("ros2.callback_start");
        assert_eq!(w, Some(Renamed::Unsafe));
        assert!(d.starts_with("ros2.callback_start~"), "{d}");
        let long = format!("ros2:{}", "x".repeat(300));
        let (d, w) = event_dir(&long);
        assert_eq!(w, Some(Renamed::TooLong));
        assert_eq!(d.len(), NAME_MAX);
        assert!(d.starts_with("ros2.xxx"), "{d}");
        let (f, w) = file_name(&"r".repeat(250), ".parquet");
        assert_eq!(w, Some(Renamed::TooLong));
        assert_eq!(f.len(), NAME_MAX);
        assert!(f.starts_with("rrr") && f.ends_with(".parquet"), "{f}");
        // The same name, the same file name, in every export.
        assert_eq!(event_dir(&long), (d, w));
        assert_eq!(event_dir("").0, format!("_~{:016x}", 0xcbf2_9ce4_8422_2325u64));
    }

    #[test]
    fn taken_names_draw_another_hash() {
        let mut t = Taken::default();
        let first = t.event_dir("..");
        let again = t.event_dir("..");
        assert_ne!(first.0, again.0);
        assert!(again.0.starts_with("%2E.~"), "{}", again.0);
        assert_eq!(t.event_dir("ros2:x").0, "ros2.x");
    }

    #[test]
    fn table_names_stay_below_the_directory() {
        for bad in ["..", "events/..", "events/.", "events/", "/etc", "events/.x", "a\0b"] {
            assert_eq!(check_table(bad).unwrap_err().kind(), io::ErrorKind::InvalidInput, "{bad:?}");
        }
        assert!(check_table("events/ros2.callback_start").is_ok());
        assert!(check_table(&"x".repeat(256)).is_err());
    }
}

//! rostrace's cache directory, where an installed binary writes the libtracetools.so it
//! preloads and the rclpy instrumentation Python imports: never one another user made or can
//! write (with `HOME` unset it lies in the shared temporary directory), never a path that
//! `LD_PRELOAD` or `PYTHONPATH` would split, and a failure to write it said as it is.

mod common;

use common::*;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The other local user of the tests: a uid and gid no account of the machine needs.
const OTHER: u32 = 48_611;

/// The binary alone in `dir/bin`, as `cargo install` leaves it (no library beside it: what it
/// preloads is the copy embedded in it, written into the cache directory).
fn installed(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("rostrace");
    std::fs::copy(env!("CARGO_BIN_EXE_rostrace"), &exe).unwrap();
    // A child another test thread forked while the copy was open for writing holds it busy
    // until that child's exec.
    for _ in 0..100 {
        match Command::new(&exe).arg("--version").output() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => std::thread::sleep(Duration::from_millis(20)),
            r => {
                r.unwrap();
                break;
            }
        }
    }
    exe
}

/// The installed binary run as a root service or a container runs it: no `HOME`, no XDG
/// directories, the temporary directory `tmp`.
fn homeless(exe: &Path, tmp: &Path) -> Command {
    let mut c = Command::new(exe);
    c.env_remove("HOME").env_remove("XDG_CACHE_HOME").env_remove("XDG_RUNTIME_DIR").env_remove("ROSTRACE_LIB");
    c.env("TMPDIR", tmp);
    c
}

/// A shared temporary directory, as /tmp is: everyone may create in it (sticky).
fn shared_tmp(at: PathBuf) -> PathBuf {
    std::fs::create_dir_all(&at).unwrap();
    std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o1777)).unwrap();
    at
}

/// Runs `sh -c script` as the other user.
fn as_other(script: &str) {
    let out = Command::new("sh").args(["-c", script]).uid(OTHER).gid(OTHER).output().unwrap();
    assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Another user makes rostrace's cache directory in the shared temporary directory before
/// root's rostrace does (`HOME` unset), and plants there, at the names rostrace writes and of
/// their lengths, a `sitecustomize.py` that every traced Python would import and a library that
/// every traced program would preload. rostrace refuses the directory, says why, and runs none
/// of it; a link in its place is refused too; `$XDG_RUNTIME_DIR` is used where set. (Before, the
/// other user's code ran as root.)
#[test]
fn a_cache_directory_another_user_made_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if !require(unsafe { libc::geteuid() } == 0, "root (the test acts as a second user)") {
        return;
    }
    let dir = TempDir::new("cache-planted");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = installed(dir.path());
    // Where rostrace writes its files, and their lengths, learnt from a run of its own.
    let learn = shared_tmp(dir.join("learn"));
    let lib = homeless(&exe, &learn).arg("lib").output().unwrap();
    assert!(lib.status.success(), "{}", String::from_utf8_lossy(&lib.stderr));
    let lib = PathBuf::from(String::from_utf8_lossy(&lib.stdout).trim());
    let created = homeless(&exe, &learn).args(["create", "learnt", "-p"]).arg(dir.join("sessions")).output().unwrap();
    let created = String::from_utf8_lossy(&created.stdout).into_owned();
    let python_path =
        created.lines().find_map(|l| l.trim().strip_prefix("export PYTHONPATH=")).expect(&created).split(':').next();
    let rclpy = PathBuf::from(python_path.unwrap().trim_matches('\''));
    let own = learn.join("rostrace-0");
    assert!(lib.starts_with(&own) && rclpy.starts_with(&own), "{} {}", lib.display(), rclpy.display());
    let relative = |p: &Path| p.strip_prefix(&own).unwrap().to_path_buf();
    let (lib_rel, rclpy_rel) = (relative(&lib), relative(&rclpy));
    let site_len = std::fs::metadata(rclpy.join("sitecustomize.py")).unwrap().len() as usize;
    let lib_len = std::fs::metadata(&lib).unwrap().len();

    // The other user's directory, made first, open to all, with their files of the same lengths.
    let tmp = shared_tmp(dir.join("tmp"));
    let theirs = tmp.join("rostrace-0");
    let marker = dir.join("planted-code-ran");
    let mut site = format!("open({:?}, 'w').write('ran')\n", marker.to_str().unwrap());
    site.push_str(&"#".repeat(site_len - site.len() - 1));
    site.push('\n');
    let source = dir.join("site.py");
    std::fs::write(&source, &site).unwrap();
    as_other(&format!(
        "mkdir -m 777 -p {rclpy} {libdir} && chmod 777 {root} && cp {source} {rclpy}/sitecustomize.py && \
         head -c {lib_len} /dev/zero > {lib}",
        source = source.display(),
        root = theirs.display(),
        rclpy = theirs.join(&rclpy_rel).display(),
        libdir = theirs.join(&lib_rel).parent().unwrap().display(),
        lib = theirs.join(&lib_rel).display(),
    ));
    let rec = homeless(&exe, &tmp)
        .args(["record", "-s", "s", "-p"])
        .arg(dir.join("sessions"))
        .args(["--", "python3", "-c", "print('traced')"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&rec.stderr);
    assert!(!marker.exists(), "the other user's sitecustomize.py ran as root: {err}");
    assert_eq!(rec.status.code(), Some(1), "{err}");
    assert!(err.contains("refusing the cache directory") && err.contains(&format!("uid {OTHER}")), "{err}");
    let lib_out = homeless(&exe, &tmp).arg("lib").output().unwrap();
    assert_eq!(lib_out.status.code(), Some(1), "{}", String::from_utf8_lossy(&lib_out.stdout));

    // A link to a directory of the other user's, in rostrace's place: refused too.
    std::fs::remove_dir_all(&theirs).unwrap();
    let elsewhere = tmp.join("elsewhere");
    as_other(&format!("mkdir -m 700 {0} && ln -s {0} {1}", elsewhere.display(), theirs.display()));
    let out = homeless(&exe, &tmp).arg("lib").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(1) && err.contains("symbolic link"), "{err}");

    // With $XDG_RUNTIME_DIR (a login's private directory), the cache lies there, private.
    let run = dir.join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = homeless(&exe, &tmp).env("XDG_RUNTIME_DIR", &run).arg("lib").output().unwrap();
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(out.status.success() && path.starts_with(run.join("rostrace")), "{}", String::from_utf8_lossy(&out.stderr));
    let mode = std::fs::metadata(run.join("rostrace")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

/// A file of the cache that is not the one rostrace carries (same length, other bytes: damaged,
/// or replaced) is written again before it is preloaded or imported. (Before, any file of the
/// right length was used.)
#[test]
fn a_cached_file_of_other_bytes_is_replaced() {
    let dir = TempDir::new("cache-bytes");
    let exe = installed(dir.path());
    let cache = dir.join("cache");
    let lib = Command::new(&exe).env("XDG_CACHE_HOME", &cache).env_remove("ROSTRACE_LIB").arg("lib").output().unwrap();
    let lib = PathBuf::from(String::from_utf8_lossy(&lib.stdout).trim());
    let good = std::fs::read(&lib).unwrap();
    std::fs::write(&lib, vec![0u8; good.len()]).unwrap();
    let again =
        Command::new(&exe).env("XDG_CACHE_HOME", &cache).env_remove("ROSTRACE_LIB").arg("lib").output().unwrap();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    assert!(std::fs::read(&lib).unwrap() == good, "the damaged copy was kept");
}

/// `XDG_CACHE_HOME` with a `:` (it would split `PYTHONPATH` and `LD_PRELOAD`) or relative (it
/// would be looked up from the traced program's directory) is refused with a message naming
/// it; a cache that cannot be written says what failed, not that the binary embeds nothing.
#[test]
fn unusable_cache_paths_are_refused_with_the_reason() {
    let dir = TempDir::new("cache-paths");
    let exe = installed(dir.path());
    let lib = |cache: &std::ffi::OsStr| {
        let out = Command::new(&exe)
            .env("XDG_CACHE_HOME", cache)
            .env_remove("ROSTRACE_LIB")
            .arg("lib")
            .current_dir(dir.path())
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let colon = dir.join("a:b");
    let (code, err) = lib(colon.as_os_str());
    assert!(code == Some(1) && err.contains("XDG_CACHE_HOME") && err.contains("splits"), "{err}");
    let (code, err) = lib("relative/cache".as_ref());
    assert!(code == Some(1) && err.contains("XDG_CACHE_HOME") && err.contains("not an absolute path"), "{err}");
    assert!(!dir.join("relative").exists());
    // A cache that cannot be written: under a file, where no directory can be made.
    let file = dir.join("file");
    std::fs::write(&file, "").unwrap();
    let (code, err) = lib(file.join("cache").as_os_str());
    assert!(code == Some(1) && !err.contains("embeds none") && err.contains("Not a directory"), "{err}");
}

//! The environment of the traced processes: what makes them trace into a session (the
//! tracer's variables, the library preloaded) and load the rclpy instrumentation.

use crate::options::Options;
use std::ffi::OsString;
use std::path::Path;
use tracetools::env;

/// The environment that makes processes trace into `dir` with the embedded tracer; `lib` is the
/// libtracetools.so to preload into programs that do not link rostrace's tracer themselves.
pub(crate) fn embedded_env(dir: &Path, o: &Options, lib: Option<&Path>) -> Vec<(String, OsString)> {
    let mut vars = vec![
        (env::SESSION_DIR.to_string(), dir.as_os_str().to_owned()),
        (env::EVENTS.to_string(), o.ust_events().join(",").into()),
    ];
    if let Some(abi) = o.distro {
        vars.push((env::DISTRO.to_string(), abi.name.into()));
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
        vars.push(("LD_PRELOAD".to_string(), preload));
        vars.push(("LD_LIBRARY_PATH".to_string(), libpath));
    }
    if let Some(b) = &o.buffer_size {
        vars.push((env::BUFFER_SIZE.to_string(), b.into()));
    }
    for (k, v) in o.filters() {
        vars.push((k.to_string(), v.into()));
    }
    if o.snapshot_mode {
        vars.push((env::SNAPSHOT.to_string(), o.snapshot_size.clone().into()));
    }
    vars
}

/// Puts `dir` first on the `PYTHONPATH` of `vars` (before one already there, else before this
/// process's).
fn prepend_python_path(vars: &mut Vec<(String, OsString)>, dir: &Path) {
    let old = vars
        .iter()
        .rposition(|(k, _)| k == "PYTHONPATH")
        .map(|i| vars.remove(i).1)
        .or_else(|| std::env::var_os("PYTHONPATH"))
        .filter(|v| !v.is_empty());
    let mut path = OsString::from(dir);
    if let Some(old) = old {
        path.push(":");
        path.push(old);
    }
    vars.push(("PYTHONPATH".to_string(), path));
}

/// The environment that makes a process trace into the session directory `dir` with the
/// embedded tracer, `lib` preloaded, and (with `o.rclpy`) the rclpy instrumentation loaded:
/// what `rostrace create` prints, for processes started by a program of one's own (a test).
pub fn traced_env(dir: &Path, o: &Options, lib: &Path) -> Result<Vec<(String, OsString)>, String> {
    o.check()?;
    let mut vars = embedded_env(dir, o, Some(lib));
    if o.rclpy {
        add_rclpy(&mut vars)?;
    }
    Ok(vars)
}

/// Puts the rclpy instrumentation's directory first on the `PYTHONPATH` of `vars`, unless
/// `ROSTRACE_RCLPY=0`; why not, when it cannot be written.
pub(crate) fn add_rclpy(vars: &mut Vec<(String, OsString)>) -> Result<(), String> {
    if !crate::rclpy::enabled() {
        return Ok(());
    }
    let dir = crate::rclpy::directory().map_err(|e| format!("rclpy callbacks will not be traced: {e}"))?;
    prepend_python_path(vars, &dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value<'a>(vars: &'a [(String, OsString)], k: &str) -> Option<&'a str> {
        vars.iter().rfind(|(n, _)| n == k).and_then(|(_, v)| v.to_str())
    }

    #[test]
    fn python_path_goes_first_once() {
        let mut vars = vec![("PYTHONPATH".to_string(), OsString::from("/theirs"))];
        prepend_python_path(&mut vars, Path::new("/ours"));
        assert_eq!(vars.iter().filter(|(k, _)| k == "PYTHONPATH").count(), 1);
        assert_eq!(value(&vars, "PYTHONPATH"), Some("/ours:/theirs"));
    }

    #[test]
    fn embedded_environment_names_the_session_and_the_options() {
        let o = Options {
            distro: Some(tracetools::distro::by_name("kilted").unwrap()),
            buffer_size: Some("4M".into()),
            ignore_topics: Some("/rosout".into()),
            ..Default::default()
        };
        let vars = embedded_env(Path::new("/tmp/s"), &o, Some(Path::new("/opt/lib/libtracetools.so")));
        assert_eq!(value(&vars, env::SESSION_DIR), Some("/tmp/s"));
        assert_eq!(value(&vars, env::EVENTS), Some("ros2:*,ros2_caret:*"));
        assert_eq!(value(&vars, env::DISTRO), Some("kilted"));
        assert_eq!(value(&vars, env::BUFFER_SIZE), Some("4M"));
        assert_eq!(value(&vars, env::IGNORE_TOPICS), Some("/rosout"));
        assert!(value(&vars, "LD_PRELOAD").unwrap().starts_with("/opt/lib/libtracetools.so"));
        assert!(value(&vars, "LD_LIBRARY_PATH").unwrap().starts_with("/opt/lib"));
        // Programs that link the tracer themselves get no preload.
        let own = embedded_env(Path::new("/tmp/s"), &o, None);
        assert_eq!(value(&own, "LD_PRELOAD"), None);
    }
}

//! LTTng sessions, through the `lttng` command, and rostrace's LTTng-UST providers.

use crate::options::Options;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `lttng ARGS`; an error has the first line of its complaint.
pub(crate) fn lttng(args: &[&str]) -> Result<String, String> {
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

/// Starts `lttng-sessiond` when none runs.
fn ensure_sessiond() -> Result<(), String> {
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
    Ok(())
}

/// Creates and starts an LTTng session writing to `dir`.
pub(crate) fn setup(name: &str, dir: &Path, o: &Options) -> Result<(), String> {
    ensure_sessiond()?;
    if o.snapshot_mode {
        lttng(&["create", name, "--snapshot", &format!("--output={}", dir.display())])?;
    } else {
        lttng(&["create", name, &format!("--output={}", dir.display())])?;
    }
    let r = enable(name, o).and_then(|_| lttng(&["start", name]).map(|_| ()));
    if r.is_err() {
        let _ = lttng(&["destroy", name]);
    }
    r
}

/// Enables the channel, events and contexts of the options in LTTng session `name`.
fn enable(name: &str, o: &Options) -> Result<(), String> {
    let mut chan = vec!["enable-channel", "-u", "-s", name];
    let sub = o.buffer_size.clone().unwrap_or_else(|| "8M".into());
    let num = o.num_subbuf.unwrap_or(2).to_string();
    chan.extend(["--subbuf-size", &sub, "--num-subbuf", &num]);
    let switch = o.flush_interval.map(|f| f.as_micros().max(1).to_string());
    if let Some(us) = &switch {
        chan.extend(["--switch-timer", us]);
    }
    chan.push("rostrace");
    let (_, helper_events) = o.helpers()?;
    let ust = o.ust_events();
    if !ust.is_empty() || !helper_events.is_empty() {
        if let Some(us) = &switch {
            // The metadata has a channel of its own, written when full too: without it, a
            // reader following the data would not know its events until the end.
            lttng(&["enable-channel", "-u", "-s", name, "--switch-timer", us, "metadata"])?;
        }
        lttng(&chan)?;
        for e in ust.iter().chain(&helper_events) {
            lttng(&["enable-event", "-u", "-s", name, "-c", "rostrace", e])?;
        }
        // No context fields asked for (ros2_tracing's `-c` with none): none added.
        if !o.context.is_empty() {
            let mut ctx = vec!["add-context", "-u", "-s", name, "-c", "rostrace"];
            for c in &o.context {
                ctx.extend(["-t", c]);
            }
            lttng(&ctx)?;
        }
    }
    let preset = if o.with_kernel { &crate::KERNEL_PRESET[..] } else { &[] };
    for e in o.kernel.iter().map(String::as_str).chain(preset.iter().copied()) {
        lttng(&["enable-event", "-k", "-s", name, e]).map_err(|e| {
            format!("{e} (is the LTTng kernel tracer available? it needs the lttng-modules kernel modules, and root or the tracing group)")
        })?;
    }
    if o.syscall {
        lttng(&["enable-event", "-k", "--syscall", "-a", "-s", name])
            .map_err(|e| format!("{e} (is the LTTng kernel tracer available?)"))?;
    }
    Ok(())
}

/// The LTTng backend needs rostrace's LTTng-UST provider of the distribution, built with
/// rostrace when a C compiler and LTTng-UST's headers were there.
pub fn lttng_provider_check(abi: &tracetools::distro::Abi) -> Result<(), String> {
    match lttng_provider_dir(abi) {
        Some(_) => Ok(()),
        None => Err(missing(abi)),
    }
}

/// Why the LTTng backend is not available.
pub(crate) fn missing(abi: &tracetools::distro::Abi) -> String {
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
pub fn lttng_provider_dir(abi: &tracetools::distro::Abi) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        crate::find_library().ok().and_then(|l| l.parent().map(Path::to_path_buf)).into_iter().collect();
    dirs.extend(std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)));
    dirs.push(PathBuf::from(tracetools::LTTNG_PROVIDER_DIR));
    let name = tracetools::lttng_provider_name(abi);
    dirs.into_iter().find(|d| d.join(&name).exists())
}

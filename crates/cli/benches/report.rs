//! The HTML report at Autoware's size: what `rostrace report` costs (wall time and peak memory
//! of the whole process), the file's size, and how long the page takes to open in headless
//! Chromium: the page's own measures (from navigation to drawn, and its script alone), and the
//! whole browser process that opens it and takes a screenshot against the same for an empty
//! page. Targets (the report's issue): under 10 MB, under 2 s to render.
//!
//! With `ROSTRACE_CARET_PEER=DIR` (caret_analyze installed by the recipe of
//! `../shared/reference/caret/README.md`, its virtualenv in `DIR/venv`), the same run also
//! compares with what a CARET user runs to see a trace (`caret_plots.py`: caret_analyze's bokeh
//! plots of callbacks and of a path, saved offline) on caret-demos-e2e-jazzy.
//!
//! `cargo bench -p rostrace --bench report` (default trace: ../shared/traces/tum-autoware-carla),
//! `-- TRACE` for another.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Headless Chromium on `page`, with `args`: (wall time in s, standard output).
fn chromium(page: &Path, profile: &Path, args: &[&str]) -> (f64, String) {
    let t = Instant::now();
    let out = Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output();
    let secs = t.elapsed().as_secs_f64();
    match out {
        Ok(o) if o.status.success() => (secs, String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(o) => panic!("chromium failed: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => panic!("chromium (Debian's `chromium`) is needed: {e}"),
    }
}

fn body_attr(dom: &str, name: &str) -> Option<String> {
    let tag = &dom[dom.find("<body")?..];
    let tag = &tag[..tag.find('>')?];
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    Some(tag[i..i + tag[i..].find('"')?].to_string())
}

/// Peak RSS of the largest child waited for so far.
fn children_peak_mb() -> f64 {
    // SAFETY: rusage is plain integers, for which all zeros is a value.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    u.ru_maxrss as f64 / 1024.0
}

/// Runs `rostrace report TRACE -o HTML`; its wall time (s).
fn report(trace: &Path, html: &Path) -> f64 {
    let t = Instant::now();
    let out =
        Command::new(env!("CARGO_BIN_EXE_rostrace")).arg("report").arg(trace).arg("-o").arg(html).output().unwrap();
    let secs = t.elapsed().as_secs_f64();
    assert!(out.status.success(), "rostrace report: {}", String::from_utf8_lossy(&out.stderr));
    secs
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let trace =
        std::env::args().skip(1).find(|a| !a.starts_with("--")).map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/tum-autoware-carla")
        });
    let dir = std::env::temp_dir().join(format!("rostrace-report-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("report.html");
    let runs = 3;

    // The report first: the peak RSS of the children is then rostrace's.
    let write: Vec<f64> = (0..runs).map(|_| report(&trace, &html)).collect();
    let peak = children_peak_mb();
    let size = std::fs::metadata(&html).unwrap().len() as f64 / 1e6;

    let blank = dir.join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let profile = dir.join("profile");
    let png = dir.join("shot.png");
    let shot = format!("--screenshot={}", png.display());
    let shot = [shot.as_str(), "--window-size=1400,1000"];
    chromium(&blank, &profile, &shot); // a first start fills the profile
    let (mut page, mut empty, mut open, mut script) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let (_, dom) = chromium(&html, &profile, &["--dump-dom"]);
        assert_eq!(body_attr(&dom, "data-rendered").as_deref(), Some("ok"), "the report did not render");
        let ms = |k| body_attr(&dom, k).and_then(|m| m.parse::<f64>().ok()).unwrap_or(f64::NAN);
        open.push(ms("data-open-ms"));
        script.push(ms("data-render-ms"));
        page.push(chromium(&html, &profile, &shot).0);
        empty.push(chromium(&blank, &profile, &shot).0);
    }
    let (page, empty) = (median(page), median(empty));
    println!("trace: {}", trace.display());
    println!("rostrace report (whole process, median of {runs}): {:.2} s, peak RSS {peak:.0} MB", median(write));
    println!("report size: {size:.1} MB (target: under 10 MB)");
    println!(
        "headless Chromium (medians of {runs}): drawn {:.0} ms after navigation began (its script {:.0} ms; target: \
         under 2 s); a browser process opening it and taking a screenshot {page:.2} s, an empty page {empty:.2} s: \
         the report adds {:.2} s",
        median(open),
        median(script),
        page - empty
    );
    if let Some(peer) = std::env::var_os("ROSTRACE_CARET_PEER") {
        caret(Path::new(&peer), &dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `rostrace report` against caret_analyze's plots, on caret-demos-e2e-jazzy (whole processes).
fn caret(peer: &Path, dir: &Path) {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    let trace = shared.join("traces/caret-demos-e2e-jazzy");
    let yaml = shared.join("reference/caret/end_to_end_sample.architecture.yaml");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/caret_plots.py");
    let html = dir.join("e2e.html");
    let (mut ours, mut theirs, mut out) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        ours.push(report(&trace, &html));
        let t = Instant::now();
        // caret_analyze writes caret.log where it runs.
        let o = Command::new(peer.join("venv/bin/python"))
            .current_dir(dir)
            .arg(&script)
            .arg(&trace)
            .arg(&yaml)
            .arg("target")
            .arg(dir.join("caret"))
            .output()
            .unwrap();
        theirs.push(t.elapsed().as_secs_f64());
        assert!(o.status.success(), "caret_plots.py: {}", String::from_utf8_lossy(&o.stderr));
        out = o.stdout;
    }
    // caret_analyze prints on stdout too: the figures are the last line.
    let last = String::from_utf8_lossy(&out).lines().last().unwrap_or_default().to_string();
    let peer: serde_json::Value = serde_json::from_str(&last).expect("caret_plots.py ends with a JSON line");
    let field = |k: &str| peer[k].as_f64().unwrap_or(f64::NAN);
    let (ours, theirs) = (median(ours), median(theirs));
    let size = std::fs::metadata(&html).unwrap().len() as f64 / 1e6;
    println!("caret-demos-e2e-jazzy, same run (medians of 3, whole processes):");
    println!("  rostrace report: {ours:.3} s, one file of {size:.2} MB (every section)");
    println!(
        "  caret_analyze {} bokeh plots: {theirs:.2} s, {:.1} MB in all, peak RSS {:.0} MB",
        field("plots"),
        field("bytes") / 1e6,
        field("peak_mb")
    );
    println!("  rostrace {:.0}x faster, {:.0}x smaller", theirs / ours, field("bytes") / 1e6 / size);
}

//! A recording as another host would have written it: its host name, and a clock ahead of this
//! one's, or running fast. What the multi-host tests and benchmark make their hosts' recordings
//! with (one machine has one clock).

use std::path::Path;

/// A copy of the recording `src` in `dst` made on host `host` (the trace's `hostname`; `None`:
/// as it is) with a clock `shift_ns` ahead that runs `drift` fast (a fraction): each trace's
/// metadata written as text with its clock's offset moved and its frequency lowered (each cycle
/// then counts for more ns).
pub fn as_host(src: &Path, dst: &Path, host: Option<&str>, shift_ns: i64, drift: f64) {
    rostrace_testkit::copy_writable(src, dst);
    for t in rostrace_ctf::find_traces(dst).unwrap() {
        let (_, text) = rostrace_ctf::metadata::read_metadata(&t.join("metadata")).unwrap();
        let mut out = String::new();
        let mut in_clock = false;
        let mut offset_s = 0i64;
        for line in text.text.lines() {
            let l = line.trim();
            in_clock = (in_clock || l.starts_with("clock {")) && !l.starts_with("};");
            let value = |key: &str| l[key.len()..].split(';').next().unwrap().trim().to_string();
            if let (Some(h), true) = (host, l.starts_with("hostname = ")) {
                out.push_str(&format!("\thostname = \"{h}\";\n"));
                continue;
            }
            if in_clock && l.starts_with("freq = ") && drift != 0.0 {
                let freq: f64 = value("freq = ").parse().unwrap();
                out.push_str(&format!("\tfreq = {};\n", (freq / (1.0 + drift)).round() as u64));
                continue;
            }
            if in_clock && l.starts_with("offset_s = ") {
                offset_s = value("offset_s = ").parse().unwrap();
                continue;
            }
            if in_clock && l.starts_with("offset = ") {
                let offset: i64 = value("offset = ").parse().unwrap();
                let total = offset_s as i128 * 1_000_000_000 + offset as i128 + shift_ns as i128;
                out.push_str(&format!(
                    "\toffset_s = {};\n\toffset = {};\n",
                    total.div_euclid(1_000_000_000),
                    total.rem_euclid(1_000_000_000)
                ));
                continue;
            }
            out.push_str(line);
            out.push('\n');
        }
        assert!(out.contains("offset_s = "), "no clock offset in {}", t.display());
        assert!(host.is_none() || out.contains("hostname = "), "no hostname in {}", t.display());
        std::fs::write(t.join("metadata"), out).unwrap();
    }
}

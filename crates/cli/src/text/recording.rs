//! The text of recordings: what the session library says, and the summary of a recording at
//! its end (`record`, `demo`, session control).

use crate::out::outln;
use crate::text::count;
use rostrace_session::Message;
use std::path::Path;

/// Shows what the session library has to say, on stderr.
pub fn say(messages: impl IntoIterator<Item = Message>) {
    for m in messages {
        crate::out::errln!("rostrace: {m}");
    }
}

/// Prints where a trace is and what it holds (or that nothing was recorded there); an error is
/// standard output's.
pub fn summary(dir: &Path) -> std::io::Result<()> {
    let bar = std::sync::OnceLock::new();
    let s = rostrace_session::summary::summarize(dir, &|total, done| {
        bar.get_or_init(|| crate::progress::Progress::new(total, "reading")).set(done)
    });
    if let Some(b) = bar.get() {
        b.finish();
    }
    if !s.recorded {
        outln!("  nothing was recorded in {}", dir.display())?;
        return Ok(());
    }
    for e in &s.warnings {
        crate::out::errln!("rostrace: warning: {e}");
    }
    outln!("trace written to {}", dir.display())?;
    outln!(
        "  {}, {}, {} discarded, {} lost",
        count(s.events, "event"),
        count(s.processes, "process"),
        count(s.discarded_events, "event"),
        count(s.lost_packets, "packet"),
    )?;
    if let Some(first) = s.write_failures.first() {
        // Once for the recording, however many streams and processes it hit.
        let n = s.write_failures.len();
        let more = if n > 1 { format!(" (and in {} more processes)", n - 1) } else { String::new() };
        crate::out::errln!(
            "rostrace: error: the trace could not be written whole: {first}{more}; each stream ends at its last whole packet, and the events after it are counted as discarded"
        );
    } else if s.discarded_events > 0 {
        outln!("  (events were discarded: give the tracer more buffer with --buffer-size)")?;
    }
    Ok(())
}

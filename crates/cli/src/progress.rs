//! A progress bar over bytes read, shown only on a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Progress of a long read; silent when stderr is not a terminal.
pub struct Progress {
    bar: Option<ProgressBar>,
    tick: u32,
}

impl Progress {
    /// A bar for `total` bytes, or nothing when stderr is not a terminal or the work is small.
    pub fn new(total: u64, what: &str) -> Progress {
        let show = std::io::stderr().is_terminal() && total > 32 << 20;
        let bar = show.then(|| {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(5));
            b.set_style(
                ProgressStyle::with_template("{msg} [{bar:40}] {bytes}/{total_bytes} ({eta})")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            b.set_message(what.to_string());
            b
        });
        Progress { bar, tick: 0 }
    }

    /// Call once per event; `pos` is asked for only now and then.
    #[inline]
    pub fn tick(&mut self, pos: impl FnOnce() -> u64) {
        if let Some(b) = &self.bar {
            self.tick = self.tick.wrapping_add(1);
            if self.tick.is_multiple_of(65536) {
                b.set_position(pos());
            }
        }
    }

    /// Sets the position, in bytes.
    pub fn set(&self, pos: u64) {
        if let Some(b) = &self.bar {
            b.set_position(pos);
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

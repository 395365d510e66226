//! A progress bar over bytes read, shown only on a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Progress of a long read; silent when stderr is not a terminal.
pub struct Progress {
    bar: Option<ProgressBar>,
    tick: u32,
    /// What follows the reading, shown with a spinner once all is read (see [`Progress::then`]).
    then: Option<String>,
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
        Progress { bar, tick: 0, then: None }
    }

    /// Once all is read, the bar gives way to a spinner and `what`: the work that follows the
    /// reading (a whole analysis spends a good part of its time after its pass).
    pub fn then(mut self, what: &str) -> Progress {
        self.then = Some(what.to_string());
        self
    }

    /// `done` of `total` bytes read, from a reader that reports now and then (it chooses how
    /// often: this sets the position each time).
    pub fn at(&mut self, done: u64, total: u64) {
        self.set(done);
        let Some(b) = &self.bar else { return };
        if done >= total {
            if let Some(what) = self.then.take() {
                b.set_style(
                    ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                b.set_message(what);
                b.enable_steady_tick(std::time::Duration::from_millis(200));
            }
        }
    }

    /// Call once per event; `pos` is asked for only now and then (for a reader that reports
    /// only now and then itself, [`Progress::at`]).
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

#[cfg(test)]
mod tests {
    use super::*;

    fn hidden(total: u64) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        Progress { bar: Some(bar), tick: 0, then: None }
    }

    #[test]
    fn each_report_of_a_pass_moves_the_bar_and_the_end_of_reading_says_what_follows() {
        let mut p = hidden(100).then("linking");
        p.at(10, 100);
        let bar = p.bar.clone().unwrap();
        assert_eq!((bar.position(), bar.message()), (10, String::new()));
        p.at(60, 100);
        assert_eq!(bar.position(), 60);
        p.at(100, 100);
        assert_eq!((bar.position(), bar.message()), (100, "linking".to_string()));
        p.finish();
    }
}

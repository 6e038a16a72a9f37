//! Writing results to stdout (deliberately: the workspace warns on `print!`) and progress to
//! stderr.

use std::io::Write;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use memfs::history::Progress;

/// Writes `bytes` to stdout and flushes.
pub(crate) fn stdout(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

/// A progress bar on stderr; draws nothing when stderr is not a terminal.
pub(crate) struct Bar(ProgressBar);

impl Bar {
    pub(crate) fn new() -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{msg:>11} [{bar:30}] {pos}/{len}") {
            bar.set_style(style.progress_chars("=> "));
        }
        Bar(bar)
    }
}

impl Progress for Bar {
    fn phase(&self, name: &'static str, total: Option<u64>) {
        self.0.set_position(0);
        self.0.set_length(total.unwrap_or(0));
        self.0.set_message(name);
    }

    fn extend(&self, n: u64) {
        self.0.inc_length(n);
    }

    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

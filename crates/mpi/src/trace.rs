//! Recording a distributed run as SimGrid time-independent traces (the dPerf paper's workflow):
//! per rank, the computation between two communications (as flops at the calibrated
//! speed of a core, so that a platform written by `calibrate network` replays it in the
//! time it took) and every message with its peer, tag and bytes. `perfcompose simulate`
//! and SimGrid's `smpirun -replay` read the files: one per rank plus an index.

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};

use perfcompose_sim::trace::{write_action, Action};

/// The actions of one rank as it runs.
#[derive(Clone, Debug)]
pub struct Recorder {
    flops_per_s: f64,
    /// `mpi::time()` when the last action ended.
    last: f64,
    actions: Vec<Action>,
}

impl Recorder {
    /// Start recording now; computation is stated at `flops_per_s`.
    pub fn start(flops_per_s: f64) -> Recorder {
        Recorder {
            flops_per_s,
            last: mpi::time(),
            actions: vec![Action::Init],
        }
    }

    /// Close the computation that ran since the last action (call right before a
    /// communication).
    pub fn compute(&mut self) {
        let now = mpi::time();
        let seconds = now - self.last;
        if seconds > 0.0 {
            self.actions.push(Action::Compute {
                flops: seconds * self.flops_per_s,
            });
        }
        self.last = now;
    }

    /// A communication that just ended.
    pub fn communicated(&mut self, action: Action) {
        self.actions.push(action);
        self.last = mpi::time();
    }

    /// End the recording: the last computation and `finalize`.
    pub fn finish(mut self) -> Vec<Action> {
        self.compute();
        self.actions.push(Action::Finalize);
        self.actions
    }
}

/// A design's trace while it runs: nothing until [`Recording::start`], then a
/// [`Recorder`] that the design tells about each communication.
#[derive(Debug, Default)]
pub struct Recording(RefCell<Option<Recorder>>);

impl Recording {
    /// Record from now on, computation at `flops_per_s`.
    pub fn start(&self, flops_per_s: f64) {
        *self.0.borrow_mut() = Some(Recorder::start(flops_per_s));
    }

    /// Stop recording: the actions since [`Recording::start`].
    pub fn take(&self) -> Option<Vec<Action>> {
        self.0.borrow_mut().take().map(Recorder::finish)
    }

    /// Right before a communication: close the computation since the last one.
    pub fn before(&self) {
        if let Some(r) = self.0.borrow_mut().as_mut() {
            r.compute();
        }
    }

    /// Right after a communication.
    pub fn after(&self, action: Action) {
        if let Some(r) = self.0.borrow_mut().as_mut() {
            r.communicated(action);
        }
    }
}

/// Write rank `rank`'s actions as `dir/STEM_RANK.txt`; rank 0 also writes the index
/// `dir/STEM.txt` of all `ranks` files, and returns its path.
pub fn write_rank(
    dir: &Path,
    stem: &str,
    rank: usize,
    ranks: usize,
    actions: &[Action],
) -> std::io::Result<Option<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut w = std::io::BufWriter::new(std::fs::File::create(
        dir.join(format!("{stem}_{rank}.txt")),
    )?);
    for a in actions {
        write_action(&mut w, rank as u32, a)?;
    }
    w.flush()?;
    if rank != 0 {
        return Ok(None);
    }
    let index = dir.join(format!("{stem}.txt"));
    let mut w = std::io::BufWriter::new(std::fs::File::create(&index)?);
    for r in 0..ranks {
        writeln!(w, "{stem}_{r}.txt")?;
    }
    w.flush()?;
    Ok(Some(index))
}

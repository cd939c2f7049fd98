//! How a unit test measures its block ([`Conditions`]): where the input is when the call
//! starts ([`InputState`]), how many other threads run the same block meanwhile, and
//! which blocks run around it — the other stages of a pipeline ([`Stage`]) or the other
//! blocks of the `seq` a task pool's workers run ([`Replica`]).
//!
//! A block measured under some conditions is saved under its registry name followed by
//! the conditions' suffix ([`Conditions::suffix`], `inc_warm_par2`): that printed name is
//! the measurement files' format.

/// Where a kernel's input is when its call starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InputState {
    /// In memory, not in a cache: a stream element, or what a queue hands over.
    #[default]
    Cold,
    /// In this core's cache: the input was just written by the block before it on the same
    /// thread (the second block of a `seq`). Timed on copies made right before the calls,
    /// with the batch bounded to half the level-2 cache. A per-key reduction is timed as a
    /// MapReduce job runs it, on the values its thread gathers, key after key, from `x` map
    /// outputs into one reused vector (`bench/gather.rs`).
    Warm,
    /// Just written by another thread: the stage before it in a `pipe` wrote it on another
    /// core and handed it over through a queue. Timed over a stream made like a cold
    /// one, which a helper thread writes (one word per cache line,
    /// [`Data::touch`](crate::data::Data::touch)) and
    /// hands over through a queue of the runtime's default capacity, running ahead as the
    /// stage before a slower one does; the calls are timed in groups of what is waiting.
    Remote,
}

impl InputState {
    /// Suffix of the component key of a kernel measured in this state (`inc_warm`).
    pub fn suffix(self) -> &'static str {
        match self {
            InputState::Cold => "",
            InputState::Warm => "_warm",
            InputState::Remote => "_remote",
        }
    }
}

/// How a unit test times its block: where the input is, how many other threads run the
/// same block meanwhile, and, for a stage of a pipeline, which blocks run next to it.
///
/// `siblings` > 0 is the block as a worker of a task pool (or a MapReduce) runs it: the
/// other workers run the same block at the same time, and share the caches, the memory
/// bus and, on a virtual machine, whatever the host puts behind the cores. Cold, one
/// stream is made for all and put in one queue that every thread takes from, as a pool's
/// workers take the elements of one stream; a sibling that runs out, and every sibling of
/// a warm or handed-over test, goes on with fresh copies of its own until the timed calls
/// end. Each call is timed on its own (the queue operations are the pattern's overhead,
/// calibrated on their own). Cold, the calls of every thread on the shared stream count,
/// pooled (their summed time over their number): the threads take elements as they get
/// free, so a thread on a slower core takes fewer, and the pooled mean is the time per
/// call at which the threads together get through the stream — what a task pool's
/// throughput is made of. Otherwise only the timed thread's calls count. With streams of
/// their own the siblings did not slow `inc` down, while each worker of `tpool(2, inc)`
/// ran 2.5× slower than `inc` alone at x = 1,024; dealt out in turn (element i to thread
/// i mod N) the test saw most of it, but the threads drift apart, and neighbouring
/// elements are then seldom worked on at the same time as in the pool: at x = 1,024 the
/// pool's calls took 3–15% longer than dealt ones, as long as queued ones
/// (docs/runtime.md, "Loaded unit tests").
///
/// `stage` is the block as one stage of a pipeline runs it ([`Stage`]): the other stages
/// run on threads of their own, on the same stream, at the pace the pipeline sets.
///
/// `replica` is the block as one of a pool's `seq` runs it ([`Replica`]): the timed thread
/// and its siblings all run the whole `seq` on the elements of one cold stream.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Conditions {
    pub input: InputState,
    /// Other threads running the block meanwhile.
    pub siblings: usize,
    /// The pipeline the block is a stage of, if it is timed as one.
    pub stage: Option<Stage>,
    /// The `seq` a task pool's workers run that the block is part of, if it is timed as
    /// one of its blocks (with `siblings` > 0).
    pub replica: Option<Replica>,
}

/// A block timed as a stage of a pipeline whose stages are single blocks (`pipe(qsort,
/// inc)`, `pipe(pipe(qsort, inc), nop)`): each of the other stages runs on a thread of its
/// own, connected by queues of the runtime's default capacity, and the stream flows
/// through all of them as through the program — the stages before it write the element
/// and hand it over, the stages after it take what it returns. Every stage takes one
/// element at a time and hands it on as soon as its call returns, waiting on its queues
/// as a pinned program's workers do. Only the calls of the timed stage are counted,
/// without the queue operations (those are the pattern's overhead, calibrated on their
/// own). A stage of a pipeline runs next to its neighbours at the pace of the slowest:
/// measured alone, `inc` does not show what a busy neighbour core costs it, which
/// changed from 0 to 60% within minutes on the development host (docs/validation.md).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stage {
    /// Position of the timed block among the stages, from 0.
    pub index: usize,
    /// Registry names of the stages' blocks, in order, the timed one included.
    pub kernels: Vec<String>,
}

impl Stage {
    /// `_stageI_of_A_then_B…` (I from 1).
    pub fn suffix(&self) -> String {
        format!(
            "_stage{}_of_{}",
            self.index + 1,
            self.kernels.join("_then_")
        )
    }
}

/// A block of the `seq` a task pool's workers run (`tpool(2, seq(inc, inc))`), timed as
/// the pool runs it: every thread, the timed one and its siblings, takes elements of one
/// cold stream and runs the whole `seq` on each, block after block on the same thread;
/// only the calls of the timed block are counted, on every thread, pooled as a cold
/// `_parN` test pools them ([`Conditions`]). Timed next to siblings running the block
/// alone (`_parN`), the first `inc` of `tpool(2, seq(inc, inc))` ran 9–18% faster at
/// x = 2,048 than next to siblings running the replica, and the second one (warm)
/// 10–13% faster (docs/runtime.md, "Replica tests").
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Replica {
    /// Position of the timed block in the `seq`, from 0.
    pub index: usize,
    /// Registry names of the blocks of the `seq`, in order, the timed one included.
    pub kernels: Vec<String>,
}

impl Replica {
    /// `_seqI_of_A_then_B…` (I from 1).
    pub fn suffix(&self) -> String {
        format!("_seq{}_of_{}", self.index + 1, self.kernels.join("_then_"))
    }
}

impl Conditions {
    /// Suffix of the component key of a kernel measured this way: the input state's,
    /// then `_parN` when N threads (the timed one and its siblings) run it (`inc_warm_par2`),
    /// then `_stageI_of_A_then_B…` when it is the I-th stage of `pipe(A, B, …)`
    /// (`inc_remote_stage2_of_qsort_then_inc`) or `_seqI_of_A_then_B…` when it is the I-th
    /// block of the `seq(A, B, …)` a pool's workers run (`inc_warm_par2_seq2_of_inc_then_inc`).
    pub fn suffix(&self) -> String {
        let mut s = self.input.suffix().to_string();
        if self.siblings > 0 {
            s += &format!("_par{}", self.siblings + 1);
        }
        if let Some(stage) = &self.stage {
            s += &stage.suffix();
        }
        if let Some(replica) = &self.replica {
            s += &replica.suffix();
        }
        s
    }

    /// The same conditions without the load: no siblings, no neighbouring stages, no
    /// replica (the block timed alone, with its input where it was).
    pub fn alone(&self) -> Conditions {
        Conditions::from(self.input)
    }
}

impl From<InputState> for Conditions {
    fn from(input: InputState) -> Conditions {
        Conditions {
            input,
            ..Conditions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage_of(index: usize, kernels: &[&str]) -> Conditions {
        Conditions {
            stage: Some(Stage {
                index,
                kernels: kernels.iter().map(|k| k.to_string()).collect(),
            }),
            ..Conditions::default()
        }
    }

    fn block_of(index: usize, kernels: &[&str], siblings: usize) -> Conditions {
        Conditions {
            siblings,
            replica: Some(Replica {
                index,
                kernels: kernels.iter().map(|k| k.to_string()).collect(),
            }),
            ..Conditions::default()
        }
    }

    #[test]
    fn stage_conditions_name_the_pipeline() {
        let how = Conditions {
            input: InputState::Remote,
            ..stage_of(1, &["qsort", "inc"])
        };
        assert_eq!(how.suffix(), "_remote_stage2_of_qsort_then_inc");
        assert_eq!(how.alone(), Conditions::from(InputState::Remote));
    }

    #[test]
    fn replica_conditions_name_the_seq() {
        let how = Conditions {
            input: InputState::Warm,
            ..block_of(1, &["inc", "inc"], 1)
        };
        assert_eq!(how.suffix(), "_warm_par2_seq2_of_inc_then_inc");
    }
}

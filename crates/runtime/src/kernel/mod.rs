//! Kernels: the sequential building blocks that terms name, and the open registry the
//! term-driven path looks them up in.
//!
//! A [`Kernel`] says what it does to data ([`Op`]: a block, a map, or one of the two
//! reductions), and how to make a deterministic input of size `x` for its unit
//! performance test. The built-in kernels are the paper's (`nop`, `inc`, `qsort`, `map`,
//! `reduce_pairwise`, `reduce_per_key`); a user adds more with [`Registry::register`] or
//! [`Registry::register_block`].

mod builtin;
pub mod qsort;

use std::collections::BTreeMap;
use std::sync::Arc;

use perfcompose_core::diag::Diagnostic;
use perfcompose_core::term::{closest, NodeKind, Term};

use crate::data::{Data, DataKind, ImageSize};
use crate::error::{BuildError, KernelError};

pub use builtin::{histogram, Inc, Map, Nop, QSort, ReducePairwise, ReducePerKey, HISTOGRAM_KEYS};

/// A block: one element in, one element out.
pub type BlockFn = Arc<dyn Fn(Data) -> Data + Send + Sync>;
/// A map: one input → a dense keyed collection.
pub type MapFn = Arc<dyn Fn(&Data) -> Vec<u64> + Send + Sync>;
/// A pairwise reduction: add the second collection into the first.
pub type PairwiseFn = Arc<dyn Fn(&mut [u64], &[u64]) + Send + Sync>;
/// A per-key reduction: fold all values of one key.
pub type PerKeyFn = Arc<dyn Fn(usize, &[u64]) -> u64 + Send + Sync>;

/// What a kernel does, which decides where it may appear in a term.
#[derive(Clone)]
pub enum Op {
    /// A sequential block (`seq`, `pipe` stages, `tpool` tasks).
    Block {
        input: DataKind,
        output: DataKind,
        f: BlockFn,
    },
    /// The map of a MapReduce: one input element → one value per key.
    Map { input: DataKind, f: MapFn },
    /// A GrPPI-style reduction of two whole collections.
    ReducePairwise(PairwiseFn),
    /// A Phoenix/Hadoop-style reduction of all values of one key.
    ReducePerKey(PerKeyFn),
}

impl Op {
    /// Human name of the role, for error messages.
    pub fn role(&self) -> &'static str {
        match self {
            Op::Block { .. } => "block",
            Op::Map { .. } => "map",
            Op::ReducePairwise(_) => "pairwise reduce",
            Op::ReducePerKey(_) => "per-key reduce",
        }
    }
}

/// Knobs of the synthetic inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    /// Image resolution of the MapReduce kernels.
    pub image: ImageSize,
    /// Which of several distinct deterministic inputs of the same size (0 = the default).
    /// Benchmarks cycle through several: sorting the very same array again and again
    /// lets the branch predictor learn it (qsort of 2,048 ints ran 10x faster than on
    /// fresh data on this machine), which no real program sees.
    pub variant: u64,
}

impl Inputs {
    pub fn with_image(image: ImageSize) -> Inputs {
        Inputs { image, variant: 0 }
    }

    pub fn variant(self, variant: u64) -> Inputs {
        Inputs { variant, ..self }
    }
}

/// The paper's grid: x from 1,024 to 262,144 in steps of 1,024.
pub fn full_sizes() -> Vec<usize> {
    (1..=256).map(|i| i * 1024).collect()
}

/// Fast grid: powers of two from 1,024 to 262,144 (9 points).
pub fn quick_sizes() -> Vec<usize> {
    (10..=18).map(|e| 1usize << e).collect()
}

/// Distinct inputs a benchmark cycles through for size `x`: enough that a branch
/// predictor cannot learn them for small `x`; fewer for large `x`, where one input alone
/// exceeds what a predictor holds and generating them costs time and memory.
pub fn input_pool_size(x: usize) -> usize {
    match x {
        0..=16_384 => 64,
        16_385..=131_072 => 16,
        _ => 4,
    }
}

/// A sequential building block.
pub trait Kernel: Send + Sync {
    fn name(&self) -> &str;
    /// One line for `perfcompose bench kernels --list`.
    fn summary(&self) -> &str;
    fn op(&self) -> Op;
    /// What the size parameter `x` means for this kernel (e.g. "array length").
    fn size_meaning(&self) -> &str;
    /// A deterministic input of size `x`: what the unit performance test times, and (for
    /// the first kernel of a program) one element of the whole-program stream.
    fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError>;
    /// Bytes one input of size `x` occupies, checked before anything is allocated.
    fn input_bytes(&self, x: usize, inputs: &Inputs) -> u128;
    /// Whether the kernel writes its element: its output is then modified in the cache of
    /// the core that ran it, and a block reading it next on the same thread finds it warm,
    /// one on another thread (the next stage of a `pipe`) has to fetch it from that
    /// core. `nop` passes its element on untouched.
    fn writes(&self) -> bool {
        true
    }
    /// The sweep of sizes `perfcompose bench` uses by default (`full`: the paper's grid).
    fn default_sizes(&self, full: bool) -> Vec<usize> {
        if full {
            full_sizes()
        } else {
            quick_sizes()
        }
    }
}

/// Kernels by name. Open: users register their own next to the built-in ones.
#[derive(Clone)]
pub struct Registry {
    kernels: BTreeMap<String, Arc<dyn Kernel>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.kernels.keys()).finish()
    }
}

impl Default for Registry {
    fn default() -> Registry {
        Registry::builtin()
    }
}

impl Registry {
    /// No kernels at all.
    pub fn empty() -> Registry {
        Registry {
            kernels: BTreeMap::new(),
        }
    }

    /// The paper's kernels.
    pub fn builtin() -> Registry {
        let mut r = Registry::empty();
        r.register(Arc::new(Nop));
        r.register(Arc::new(Inc));
        r.register(Arc::new(QSort));
        r.register(Arc::new(Map));
        r.register(Arc::new(ReducePairwise));
        r.register(Arc::new(ReducePerKey));
        r
    }

    /// Add (or replace) a kernel.
    pub fn register(&mut self, kernel: Arc<dyn Kernel>) {
        self.kernels.insert(kernel.name().to_string(), kernel);
    }

    /// Add a block on integer arrays from a closure; its unit-test input of size `x` is a
    /// deterministic random array of length `x`.
    ///
    /// ```
    /// use perfcompose_runtime::{Data, Registry};
    /// let mut reg = Registry::builtin();
    /// reg.register_block("negate", "negate every element", |d| match d {
    ///     Data::Ints(mut v) => { v.iter_mut().for_each(|e| *e = -*e); Data::Ints(v) }
    ///     other => other,
    /// });
    /// assert!(reg.get("negate").is_ok());
    /// ```
    pub fn register_block(
        &mut self,
        name: &str,
        summary: &str,
        f: impl Fn(Data) -> Data + Send + Sync + 'static,
    ) {
        self.register(Arc::new(builtin::IntsBlock {
            name: name.to_string(),
            summary: summary.to_string(),
            f: Arc::new(f),
        }));
    }

    pub fn get(&self, name: &str) -> Result<&Arc<dyn Kernel>, BuildError> {
        self.kernels
            .get(name)
            .ok_or_else(|| BuildError::UnknownKernel {
                name: name.to_string(),
                known: self.names(),
            })
    }

    pub fn names(&self) -> Vec<String> {
        self.kernels.keys().cloned().collect()
    }

    /// Every block `term` names is a registered kernel: its components (stages, a
    /// MapReduce's map and reduce, a dc's divide, combine and leaf, a matmul's block
    /// product), not the communication components (`shuffle=`, `exchange=`,
    /// `message=`), which are models. A name that is not is located in the term, with
    /// the nearest registered name.
    pub fn check_term(&self, term: &Term) -> Result<(), Diagnostic> {
        let mut stack = vec![&term.root];
        while let Some(node) = stack.pop() {
            if let NodeKind::Component(name) = &node.kind {
                if !self.kernels.contains_key(name) {
                    let names = self.names();
                    let list = names.join(", ");
                    let hint = match closest(name, names.iter().map(String::as_str)) {
                        Some(c) => format!("did you mean `{c}`? registered kernels: {list}"),
                        None => format!("registered kernels: {list}"),
                    };
                    return Err(Diagnostic::new(
                        &term.origin,
                        &term.source,
                        node.span,
                        format!("unknown kernel `{name}`"),
                    )
                    .with_hint(hint));
                }
            }
            stack.extend(node.children().into_iter().rev());
        }
        Ok(())
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Kernel>> {
        self.kernels.values()
    }
}

/// The call a unit performance test times for `kernel` on `input` (made by
/// [`Kernel::input`]): a block on its element; a map over each image of its batch; a
/// pairwise reduce of the two collections of its batch; a per-key reduce of one key's
/// values. Returns the output so the caller can drop it outside the timed region.
pub fn unit_call(op: &Op, input: Data) -> Data {
    match op {
        Op::Block { f, .. } => f(input),
        Op::Map { f, .. } => match input {
            Data::Batch(items) => Data::Batch(
                items
                    .iter()
                    .map(|i| Data::Counts(std::hint::black_box(f(i))))
                    .collect(),
            ),
            other => Data::Counts(f(&other)),
        },
        Op::ReducePairwise(f) => match input {
            Data::Batch(mut pair) if pair.len() == 2 => {
                let b = pair.pop();
                let a = pair.pop();
                match (a, b) {
                    (Some(Data::Counts(mut a)), Some(Data::Counts(b))) => {
                        f(&mut a, &b);
                        Data::Counts(a)
                    }
                    _ => panic!("a pairwise reduce test needs two keyed collections"),
                }
            }
            other => panic!(
                "a pairwise reduce test needs a batch of two keyed collections, got {}",
                other.kind()
            ),
        },
        Op::ReducePerKey(f) => match input {
            // The result goes into the input's vector: nothing is allocated or freed
            // inside the timed call.
            Data::Counts(mut values) => {
                let v = f(0, &values);
                values.clear();
                values.push(v);
                Data::Counts(values)
            }
            other => panic!(
                "a per-key reduce test needs one key's values, got {}",
                other.kind()
            ),
        },
    }
}

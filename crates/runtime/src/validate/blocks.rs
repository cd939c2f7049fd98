//! Which unit test stands for each block of a design.
//!
//! The pattern-composition paper (§4) times its blocks as the program invokes them; this is where the
//! invocations differ. [`place`] follows a stream element through the design and gives
//! every block a [`BlockKey`]: the kernel, the image a map runs on, and the
//! [`Conditions`] its unit test recreates —
//!
//! - where its input is when its call starts: the first block to touch an element finds
//!   it in memory (cold); a block after another one on the same thread (the blocks of a
//!   `seq`) finds what that one wrote in its own cache (warm); a block on another thread
//!   than the last one that wrote the element (the next stage of a `pipe`, a `tpool`
//!   after a stage) fetches it from that core's cache (handed over). A kernel that does
//!   not write (`nop`) leaves the element where it was. After a phase boundary of a
//!   `seq` of parallel parts the whole stream has gone through, and the input is cold
//!   again;
//! - how many threads run it side by side: the workers of a task pool or a MapReduce,
//!   capped at the cores (`_parN`: timed while N − 1 siblings run it too);
//! - for a stage of a pipeline of single blocks outside any task pool, the other stages
//!   running next to it on the same stream (`_stageI_of_A_then_B…`);
//! - for a block of the `seq` of single blocks a task pool's workers run, the whole `seq`
//!   running on every worker (`_seqI_of_A_then_B…`).
//!
//! A MapReduce's map is measured per image, its reduction warm (it runs on what the same
//! thread just gathered or produced), both next to the job's other threads. The printed
//! key (`inc_remote_stage2_of_qsort_then_inc`, `map@small_par2`) names the measurement in
//! saved files; it is never parsed back.

use std::collections::BTreeMap;
use std::fmt;

use crate::bench::{Conditions, InputState, Replica, Stage};
use crate::data::ImageSize;
use crate::kernel::{Op, Registry};
use crate::plan::Plan;
use perfcompose_core::term::{Node, NodeKind, Term};

/// The identity of a block measurement: which kernel, on which image (a map's model
/// depends on it), under which conditions.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlockKey {
    pub kernel: String,
    /// The image a map kernel is measured on; `None` for every other kernel.
    pub image: Option<ImageSize>,
    pub conditions: Conditions,
}

impl fmt::Display for BlockKey {
    /// `KERNEL[@IMAGE]SUFFIX`: the name saved files give the measurement.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kernel)?;
        if let Some(image) = self.image {
            write!(f, "@{}", image.name())?;
        }
        write!(f, "{}", self.conditions.suffix())
    }
}

/// A design with every block placed ([`place`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// The design as composed: each block renamed to its component (the printed
    /// [`BlockKey`], made unique where two keys print alike); MapReduce nodes as written.
    pub composed: Plan,
    /// Every component of `composed`, with the measurement that stands for it.
    pub blocks: BTreeMap<String, BlockKey>,
    /// The component names of `composed`'s kernel leaves, in leaf order.
    pub leaves: Vec<String>,
}

impl Placement {
    /// The distinct measurements the design needs, in key order.
    pub fn needs(&self) -> Vec<BlockKey> {
        let mut out: Vec<BlockKey> = Vec::new();
        for k in self.blocks.values() {
            if !out.contains(k) {
                out.push(k.clone());
            }
        }
        out.sort_by_key(|k| k.to_string());
        out
    }

    /// `term` (the design `composed` was placed from) with its kernel leaves renamed as
    /// in `composed`: the term the prediction composes, its spans still pointing into
    /// the design as written. A MapReduce's blocks keep their names.
    pub fn composed_term(&self, term: &Term) -> Term {
        fn go(node: &Node, names: &[String], next: &mut usize) -> Node {
            let kind = match &node.kind {
                NodeKind::Component(old) => {
                    let name = names.get(*next).cloned().unwrap_or_else(|| old.clone());
                    *next += 1;
                    NodeKind::Component(name)
                }
                NodeKind::Seq(ps) => NodeKind::Seq(ps.iter().map(|q| go(q, names, next)).collect()),
                NodeKind::Pipe(ps) => {
                    NodeKind::Pipe(ps.iter().map(|q| go(q, names, next)).collect())
                }
                NodeKind::Tpool { threads, body } => NodeKind::Tpool {
                    threads: threads.clone(),
                    body: Box::new(go(body, names, next)),
                },
                other => other.clone(),
            };
            Node {
                kind,
                span: node.span,
            }
        }
        Term {
            root: go(&term.root, &self.leaves, &mut 0),
            ..term.clone()
        }
    }
}

/// Place every block of `plan` (module docs) for a run on `cores` cores, MapReduce maps
/// on `image`.
pub fn place(plan: &Plan, registry: &Registry, cores: usize, image: ImageSize) -> Placement {
    let mut walk = Walk {
        threads: 0,
        cores: cores.max(1),
        registry,
        leaves: Vec::new(),
    };
    walk.go(plan, 0, None, 1);
    let mut leaves = walk.leaves;
    if cores >= 2 {
        staged(plan, registry, &mut leaves, &mut 0);
        replicated(plan, registry, &mut leaves, &mut 0);
    }
    let mut blocks = BTreeMap::new();
    let mut names: Vec<String> = Vec::with_capacity(leaves.len());
    for key in leaves {
        let printed = key.to_string();
        let mut name = printed.clone();
        let mut n = 1;
        while blocks.get(&name).is_some_and(|k| *k != key) {
            n += 1;
            name = format!("{printed}__{n}");
        }
        blocks.insert(name.clone(), key);
        names.push(name);
    }
    let composed = rename(plan, &names, &mut 0);
    let leaves = names;
    for (map, reduce, threads) in mapreduces(plan) {
        let siblings = threads.clamp(1, cores.max(1)) - 1;
        blocks.insert(
            map.to_string(),
            BlockKey {
                kernel: map.to_string(),
                image: Some(image),
                conditions: Conditions {
                    siblings,
                    ..Conditions::default()
                },
            },
        );
        blocks.insert(
            reduce.to_string(),
            BlockKey {
                kernel: reduce.to_string(),
                image: None,
                conditions: Conditions {
                    input: InputState::Warm,
                    siblings,
                    ..Conditions::default()
                },
            },
        );
    }
    Placement {
        composed,
        blocks,
        leaves,
    }
}

/// The first pass: input states and siblings of every kernel leaf, left to right.
struct Walk<'a> {
    /// Threads handed out so far (0 is the caller's).
    threads: usize,
    cores: usize,
    registry: &'a Registry,
    leaves: Vec<BlockKey>,
}

impl Walk<'_> {
    fn fresh(&mut self) -> usize {
        self.threads += 1;
        self.threads
    }

    /// `thread`: the thread running `p`; `writer`: the thread that last wrote the
    /// element (`None`: nobody since the stream made it); `par`: workers running `p`
    /// side by side. Returns the last writer of `p`'s output.
    fn go(&mut self, p: &Plan, thread: usize, writer: Option<usize>, par: usize) -> Option<usize> {
        match p {
            Plan::Kernel(k) => {
                let input = match writer {
                    None => InputState::Cold,
                    Some(t) if t == thread => InputState::Warm,
                    Some(_) => InputState::Remote,
                };
                self.leaves.push(BlockKey {
                    kernel: k.clone(),
                    image: None,
                    conditions: Conditions {
                        input,
                        siblings: par - 1,
                        ..Conditions::default()
                    },
                });
                let writes = self.registry.get(k).map_or(true, |k| k.writes());
                if writes {
                    Some(thread)
                } else {
                    writer
                }
            }
            // The parts of a seq run on this thread, each stage of a pipe on its own. A
            // part of a phased seq after a phase boundary runs on threads of its own once
            // the whole (sub)stream has gone through the parts before it: it finds its
            // input cold.
            Plan::Seq(parts) | Plan::Pipe(parts) => {
                let pipe = matches!(p, Plan::Pipe(_));
                let mut last = writer;
                let mut seq_thread = thread;
                for (i, q) in parts.iter().enumerate() {
                    if !pipe && Plan::phase_boundary(parts, i) {
                        seq_thread = self.fresh();
                        last = None;
                    }
                    let on = if pipe { self.fresh() } else { seq_thread };
                    last = self.go(q, on, last, par);
                }
                last
            }
            Plan::TPool(n, inner) => {
                let worker = self.fresh();
                let par = (par * n).clamp(1, self.cores);
                self.go(inner, worker, writer, par)
            }
            // A MapReduce job writes its output on a thread of its own.
            Plan::MapReduce { .. } | Plan::Unsupported { .. } => Some(self.fresh()),
        }
    }
}

/// The leaves (positions among the kernel leaves, counted from `next`) of a `seq`
/// (`pipe` false) or a `pipe` (`pipe` true) of single blocks, nested ones of the same kind
/// flattened; `None` if a part is anything else. Advances `next` past `p`'s leaves.
fn flat_leaves(p: &Plan, pipe: bool, next: &mut usize) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    let mut ok = true;
    flat_into(p, pipe, next, &mut out, &mut ok);
    ok.then_some(out)
}

fn flat_into(p: &Plan, pipe: bool, next: &mut usize, out: &mut Vec<usize>, ok: &mut bool) {
    match p {
        Plan::Seq(ps) if !pipe => ps.iter().for_each(|q| flat_into(q, pipe, next, out, ok)),
        Plan::Pipe(ps) if pipe => ps.iter().for_each(|q| flat_into(q, pipe, next, out, ok)),
        Plan::Kernel(_) => {
            out.push(*next);
            *next += 1;
        }
        other => {
            *ok = false;
            *next += leaf_count(other);
        }
    }
}

/// How many kernel leaves `p` has ([`Walk`] counts them; MapReduce nodes have none).
fn leaf_count(p: &Plan) -> usize {
    match p {
        Plan::Kernel(_) => 1,
        Plan::Seq(ps) | Plan::Pipe(ps) => ps.iter().map(leaf_count).sum(),
        Plan::TPool(_, t) => leaf_count(t),
        Plan::MapReduce { .. } | Plan::Unsupported { .. } => 0,
    }
}

/// Whether the kernel named by leaf `key` is a sequential block of `registry`.
fn is_block(registry: &Registry, key: &BlockKey) -> bool {
    registry
        .get(&key.kernel)
        .is_ok_and(|k| matches!(k.op(), Op::Block { .. }))
}

/// Mark the stages of every pipeline of single blocks outside task pools
/// ([`Conditions::stage`]).
fn staged(plan: &Plan, registry: &Registry, leaves: &mut [BlockKey], next: &mut usize) {
    match plan {
        Plan::Pipe(_) => {
            let start = *next;
            match flat_leaves(plan, true, next) {
                Some(ids)
                    if ids.len() >= 2 && ids.iter().all(|&i| is_block(registry, &leaves[i])) =>
                {
                    let kernels: Vec<String> =
                        ids.iter().map(|&i| leaves[i].kernel.clone()).collect();
                    for (index, &i) in ids.iter().enumerate() {
                        leaves[i].conditions.stage = Some(Stage {
                            index,
                            kernels: kernels.clone(),
                        });
                    }
                }
                _ => *next = start + leaf_count(plan),
            }
        }
        Plan::Seq(parts) => parts.iter().for_each(|q| staged(q, registry, leaves, next)),
        other => *next += leaf_count(other),
    }
}

/// Mark the blocks of every task pool whose workers run a `seq` of single blocks on
/// stream elements ([`Conditions::replica`]).
fn replicated(plan: &Plan, registry: &Registry, leaves: &mut [BlockKey], next: &mut usize) {
    match plan {
        Plan::TPool(_, inner) => {
            let start = *next;
            let ids = matches!(**inner, Plan::Seq(_))
                .then(|| flat_leaves(inner, false, next))
                .flatten()
                .filter(|ids| {
                    ids.len() >= 2
                        && leaves[ids[0]].conditions.input == InputState::Cold
                        && ids.iter().all(|&i| {
                            leaves[i].conditions.siblings > 0 && is_block(registry, &leaves[i])
                        })
                });
            match ids {
                Some(ids) => {
                    let kernels: Vec<String> =
                        ids.iter().map(|&i| leaves[i].kernel.clone()).collect();
                    for (index, &i) in ids.iter().enumerate() {
                        leaves[i].conditions.replica = Some(Replica {
                            index,
                            kernels: kernels.clone(),
                        });
                    }
                }
                None => {
                    *next = start;
                    replicated(inner, registry, leaves, next);
                }
            }
        }
        Plan::Seq(ps) | Plan::Pipe(ps) => ps
            .iter()
            .for_each(|q| replicated(q, registry, leaves, next)),
        other => *next += leaf_count(other),
    }
}

/// `plan` with its kernel leaves renamed to `names`, in leaf order.
fn rename(plan: &Plan, names: &[String], next: &mut usize) -> Plan {
    match plan {
        Plan::Kernel(_) => {
            let name = names[*next].clone();
            *next += 1;
            Plan::Kernel(name)
        }
        Plan::Seq(ps) => Plan::Seq(ps.iter().map(|q| rename(q, names, next)).collect()),
        Plan::Pipe(ps) => Plan::Pipe(ps.iter().map(|q| rename(q, names, next)).collect()),
        Plan::TPool(n, t) => Plan::TPool(*n, Box::new(rename(t, names, next))),
        other => other.clone(),
    }
}

/// The MapReduce nodes of `plan`: map, reduction and threads.
fn mapreduces(plan: &Plan) -> Vec<(&str, &str, usize)> {
    match plan {
        Plan::MapReduce {
            map,
            reduce,
            threads,
            ..
        } => vec![(map.as_str(), reduce.as_str(), *threads)],
        Plan::Seq(ps) | Plan::Pipe(ps) => ps.iter().flat_map(mapreduces).collect(),
        Plan::TPool(_, t) => mapreduces(t),
        Plan::Kernel(_) | Plan::Unsupported { .. } => Vec::new(),
    }
}

/// The reduction kernels of the MapReduce nodes of `plan`.
pub fn reductions(plan: &Plan) -> Vec<&str> {
    mapreduces(plan).into_iter().map(|(_, r, _)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::parse_plan;

    fn composed(term: &str, cores: usize) -> String {
        let (_, plan) = parse_plan("<term>", term).unwrap();
        place(&plan, &Registry::builtin(), cores, ImageSize::Small)
            .composed
            .to_string()
    }

    #[test]
    fn input_states_follow_the_element_through_the_design() {
        let states = |t: &str| composed(t, 2);
        // In a seq, a kernel runs on what the one before it wrote on the same thread.
        assert_eq!(states("seq(inc, inc)"), "seq(inc, inc_warm)");
        assert_eq!(
            states("seq(seq(qsort, inc), nop)"),
            "seq(seq(qsort, inc_warm), nop_warm)"
        );
        assert_eq!(
            states("seq(qsort, seq(inc, nop))"),
            "seq(qsort, seq(inc_warm, nop_warm))"
        );
        // `nop` does not write: what follows it finds the element where it was.
        assert_eq!(states("seq(nop, inc)"), "seq(nop, inc)");
        assert_eq!(states("seq(inc, nop, inc)"), "seq(inc, nop_warm, inc_warm)");
        // A stage after a writing stage fetches its input from the other core (on one
        // core, where stages are not timed next to each other).
        let one_core = |t: &str| composed(t, 1);
        assert_eq!(one_core("pipe(qsort, inc)"), "pipe(qsort, inc_remote)");
        assert_eq!(one_core("pipe(nop, inc)"), "pipe(nop, inc)");
        assert_eq!(
            one_core("pipe(inc, pipe(nop, qsort))"),
            "pipe(inc, pipe(nop_remote, qsort_remote))"
        );
        // On more cores, the stages of a pipeline of single blocks are timed as stages,
        // nested pipes flattened, wherever the pipeline sits outside a task pool.
        assert_eq!(
            states("pipe(qsort, inc)"),
            "pipe(qsort_stage1_of_qsort_then_inc, inc_remote_stage2_of_qsort_then_inc)"
        );
        assert_eq!(
            states("pipe(inc, pipe(nop, qsort))"),
            "pipe(inc_stage1_of_inc_then_nop_then_qsort, \
             pipe(nop_remote_stage2_of_inc_then_nop_then_qsort, \
             qsort_remote_stage3_of_inc_then_nop_then_qsort))"
        );
        // A seq with a pipeline in it runs in phases: the block after a phase boundary
        // finds its input cold (the whole stream passed in between), and the blocks of
        // its phase after it warm.
        assert_eq!(
            states("seq(pipe(nop, inc), qsort)"),
            "seq(pipe(nop_stage1_of_nop_then_inc, inc_stage2_of_nop_then_inc), qsort)"
        );
        assert_eq!(
            states("seq(pipe(inc, nop), inc, qsort)"),
            "seq(pipe(inc_stage1_of_inc_then_nop, nop_remote_stage2_of_inc_then_nop), \
             inc, qsort_warm)"
        );
        assert_eq!(
            states("seq(qsort, inc, pipe(inc, nop))"),
            "seq(qsort, inc_warm, \
             pipe(inc_stage1_of_inc_then_nop, nop_remote_stage2_of_inc_then_nop))"
        );
        assert_eq!(
            states("pipe(seq(tpool(2, inc), nop), inc)"),
            "pipe(seq(tpool(2, inc_par2), nop), inc)"
        );
        assert_eq!(
            states("pipe(qsort, seq(tpool(2, inc), inc))"),
            "pipe(qsort, seq(tpool(2, inc_remote_par2), inc))"
        );
        // Not inside a task pool (its workers run the whole pipeline), nor in a pipeline
        // with a pattern as a stage.
        assert_eq!(
            states("tpool(2, pipe(qsort, inc))"),
            "tpool(2, pipe(qsort_par2, inc_remote_par2))"
        );
        assert_eq!(
            states("pipe(tpool(1, qsort), tpool(1, inc))"),
            "pipe(tpool(1, qsort), tpool(1, inc_remote))"
        );
        // Task pool workers take stream elements: cold, and run side by side (as many as
        // there are cores); the blocks of a pool's seq are timed in that seq, next to
        // siblings running all of it.
        assert_eq!(
            states("tpool(2, seq(inc, qsort))"),
            "tpool(2, seq(inc_par2_seq1_of_inc_then_qsort, qsort_warm_par2_seq2_of_inc_then_qsort))"
        );
        assert_eq!(
            states("tpool(2, seq(seq(nop, inc), inc))"),
            "tpool(2, seq(seq(nop_par2_seq1_of_nop_then_inc_then_inc, \
             inc_par2_seq2_of_nop_then_inc_then_inc), \
             inc_warm_par2_seq3_of_nop_then_inc_then_inc))"
        );
        // Not a seq with a pattern in it (which runs in phases: the pipeline's first
        // block finds its input cold).
        assert_eq!(
            states("tpool(2, seq(inc, pipe(inc, nop)))"),
            "tpool(2, seq(inc_par2, pipe(inc_par2, nop_remote_par2)))"
        );
        assert_eq!(states("tpool(8, qsort)"), "tpool(8, qsort_par2)");
        assert_eq!(states("tpool(1, qsort)"), "tpool(1, qsort)");
        assert_eq!(
            composed("tpool(2, seq(inc, qsort))", 1),
            "tpool(2, seq(inc, qsort_warm))"
        );
        assert_eq!(
            states("tpool(1, seq(inc, qsort))"),
            "tpool(1, seq(inc, qsort_warm))"
        );
        assert_eq!(
            composed("tpool(2, tpool(2, inc))", 8),
            "tpool(2, tpool(2, inc_par4))"
        );
        // A pool that takes handed-over elements: its seq's first block does not start on
        // a stream element, and its blocks keep the names of blocks timed side by side.
        assert_eq!(
            states("pipe(seq(qsort, inc), tpool(2, seq(nop, inc)))"),
            "pipe(seq(qsort, inc_warm), tpool(2, seq(nop_remote_par2, inc_remote_par2)))"
        );
        // After a phase boundary, a pool takes elements from memory, as at the start of
        // a stream.
        assert_eq!(
            states("seq(qsort, tpool(2, seq(inc, nop)))"),
            "seq(qsort, tpool(2, seq(inc_par2_seq1_of_inc_then_nop, \
             nop_warm_par2_seq2_of_inc_then_nop)))"
        );
    }

    #[test]
    fn a_mapreduce_keeps_its_names_and_measures_its_map_per_image_and_its_reduction_warm() {
        let (_, plan) = parse_plan(
            "<term>",
            "mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)",
        )
        .unwrap();
        let p = place(&plan, &Registry::builtin(), 2, ImageSize::Large);
        assert_eq!(p.composed, plan);
        assert_eq!(p.blocks["map"].to_string(), "map@large_par2");
        assert_eq!(
            p.blocks["reduce_per_key"].to_string(),
            "reduce_per_key_warm_par2"
        );
        assert_eq!(reductions(&plan), ["reduce_per_key"]);
    }

    #[test]
    fn a_kernel_whose_name_looks_like_a_condition_is_not_misread() {
        let mut r = Registry::builtin();
        r.register_block("inc_par2", "an inc with a confusing name", |d| d);
        let (_, plan) = parse_plan("<term>", "tpool(2, inc_par2)").unwrap();
        let p = place(&plan, &r, 2, ImageSize::Small);
        let key = &p.blocks["inc_par2_par2"];
        assert_eq!(key.kernel, "inc_par2");
        assert_eq!(key.conditions.siblings, 1);
        assert_eq!(key.to_string(), "inc_par2_par2");
    }
}

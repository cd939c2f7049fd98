//! A distributed design as the validation runs it: a MapReduce ([`crate::mapreduce`]), a
//! hypercube divide and conquer ([`crate::dc`]) or a matrix multiplication
//! ([`crate::matmul`]), each with its inputs, its run, the blocks whose unit tests stand
//! for it and the communication component composed from the network calibration.

use std::sync::Arc;

use perfcompose_core::model::Expr;
use perfcompose_core::term::{Name, NodeKind, Term};
use perfcompose_core::{Diagnostic, Span};
use perfcompose_runtime::bench::{Conditions, PARAMETER};
use perfcompose_runtime::data::{Image, ImageSize};
use perfcompose_runtime::kernel::Inputs;
use perfcompose_runtime::plan::parse_plan;
use perfcompose_runtime::validate::{place, BlockKey};
use perfcompose_runtime::{Config, Data, Plan, Registry};
use perfcompose_sim::trace::Action;

use crate::communication::{
    exchange_note, exchange_ns, matmul_note, message_ns, network_note, shuffle_model,
    SHUFFLE_COMPONENT,
};
use crate::dc::DistributedDc;
use crate::error::{DesignError, Error};
use crate::job::Job;
use crate::mapreduce::{image_jobs, DistributedMapReduce};
use crate::matmul::DistributedMatmul;
use crate::network::NetworkCalibration;

/// A design built for the processes of a job.
pub enum Design {
    MapReduce {
        design: DistributedMapReduce,
        image: Arc<Image>,
    },
    Dc {
        design: DistributedDc,
        /// The exchange component's name in the term (`exchange=NAME`).
        exchange: String,
        /// The term's `size=`: the words exchanged per level, and the size the combine
        /// block works on.
        size: Expr,
    },
    Matmul {
        design: DistributedMatmul,
        /// The message component's name in the term (`message=NAME`).
        message: String,
    },
}

impl Design {
    /// Parse `term` and build its design for `job`: `nodes=`/`procs=` must be the job's
    /// processes.
    pub fn build(
        job: &Job,
        term_text: &str,
        image: ImageSize,
        registry: &Registry,
        config: &Config,
    ) -> Result<(Term, Design), Error> {
        let (term, plan) = parse_plan("<term>", term_text)?;
        registry.check_term(&term)?;
        if let NodeKind::Matmul(mm) = &term.root.kind {
            let NodeKind::Component(multiply) = &mm.multiply.kind else {
                return Err(at(
                    &term,
                    mm.multiply.span,
                    "the block product of a matmul must be a kernel name to run on MPI",
                ));
            };
            job_processes(job, &term, &mm.procs)?;
            if let Some(b) = &mm.bytes {
                if b.expr != perfcompose_core::skeleton::double_block_bytes() {
                    return Err(at(
                        &term,
                        b.span,
                        format!(
                            "the MPI runtime multiplies blocks of doubles (bytes=8 * x^2), not bytes={}",
                            b.expr
                        ),
                    ));
                }
            }
            let segments = match &mm.segments {
                None => 1,
                Some(k) => match k.expr.as_constant() {
                    Some(v) if v >= 1.0 && v.fract() == 0.0 && v <= 1e6 => v as usize,
                    _ => {
                        return Err(at(
                            &term,
                            k.span,
                            format!(
                            "segments= must be a whole number of at least 1 to run on MPI, not {}",
                            k.expr
                        ),
                        ))
                    }
                },
            };
            let design = DistributedMatmul::new(job, registry, multiply, mm.bcast.value, segments)?;
            return Ok((
                term.clone(),
                Design::Matmul {
                    design,
                    message: mm.message.name.clone(),
                },
            ));
        }
        if let NodeKind::Dc(dc) = &term.root.kind {
            let name = |n: &perfcompose_core::term::Node, role: &str| match &n.kind {
                NodeKind::Component(c) => Ok(c.clone()),
                _ => Err(at(
                    &term,
                    n.span,
                    format!("the {role} of a dc must be a kernel name to run on MPI"),
                )),
            };
            job_processes(job, &term, &dc.procs)?;
            let design = DistributedDc::new(
                job,
                registry,
                &name(&dc.divide, "divide")?,
                &name(&dc.combine, "combine")?,
                &name(&dc.leaf, "leaf")?,
            )?;
            let size = dc
                .size
                .as_ref()
                .map_or_else(|| Expr::param(PARAMETER), |s| s.expr.clone());
            return Ok((
                term.clone(),
                Design::Dc {
                    design,
                    exchange: dc.exchange.name.clone(),
                    size,
                },
            ));
        }
        let Plan::MapReduce {
            map,
            reduce,
            nodes,
            threads,
            reduction,
        } = &plan
        else {
            return Err(at(
                &term,
                term.root.span,
                "only mapreduce(..., nodes=P, ...), dc(..., procs=P, ...) and matmul(..., procs=P, ...) run on MPI",
            ));
        };
        if *nodes != job.size() {
            return Err(Error::Nodes {
                nodes: *nodes,
                processes: job.size(),
            });
        }
        let design = DistributedMapReduce::new(
            job,
            registry,
            map,
            reduce,
            *threads,
            *reduction,
            config.clone(),
        )?;
        Ok((
            term,
            Design::MapReduce {
                design,
                image: image.image(),
            },
        ))
    }

    /// The design as a term, for messages.
    pub fn name(&self) -> &str {
        match self {
            Design::MapReduce { design, .. } => design.name(),
            Design::Dc { design, .. } => design.name(),
            Design::Matmul { design, .. } => design.name(),
        }
    }

    /// Threads per process.
    pub fn threads(&self) -> usize {
        match self {
            Design::MapReduce { design, .. } => design.threads(),
            Design::Dc { .. } | Design::Matmul { .. } => 1,
        }
    }

    /// This process's inputs of `jobs` jobs of size `x`.
    pub fn inputs(
        &self,
        registry: &Registry,
        x: usize,
        jobs: u64,
        job: &Job,
    ) -> Result<Vec<Data>, Error> {
        match self {
            Design::MapReduce { image, .. } => {
                Ok(image_jobs(image, x, jobs as usize, job.rank(), job.size()))
            }
            Design::Dc { design, .. } => {
                // Every process makes the whole problem (the first kernel's unit-test
                // input), distinct per job.
                let kernel = registry
                    .get(&design.kernels()[0])
                    .map_err(DesignError::from)?;
                (0..jobs)
                    .map(|j| {
                        kernel
                            .input(x, &Inputs::default().variant(j))
                            .map_err(|e| Error::Runtime(e.into()))
                    })
                    .collect()
            }
            Design::Matmul { design, .. } => design.inputs(x, jobs),
        }
    }

    /// Run `inputs` on every process; rank 0 gets the number of results.
    pub fn run(&self, job: &Job, inputs: Vec<Data>) -> Result<Option<usize>, Error> {
        Ok(match self {
            Design::MapReduce { design, .. } => design.run(job, inputs)?.map(|r| r.len()),
            Design::Dc { design, .. } => design.run(job, inputs)?.map(|r| r.len()),
            Design::Matmul { design, .. } => design.run(job, inputs)?.map(|r| r.len()),
        })
    }

    /// Record the runs from now on as a trace.
    pub fn record(&self, flops_per_s: f64) {
        match self {
            Design::MapReduce { design, .. } => design.record(flops_per_s),
            Design::Dc { design, .. } => design.record(flops_per_s),
            Design::Matmul { design, .. } => design.record(flops_per_s),
        }
    }

    /// Stop recording.
    pub fn take_recording(&self) -> Option<Vec<Action>> {
        match self {
            Design::MapReduce { design, .. } => design.take_recording(),
            Design::Dc { design, .. } => design.take_recording(),
            Design::Matmul { design, .. } => design.take_recording(),
        }
    }

    /// The blocks whose unit tests stand for the design's, by component name in the term:
    /// a MapReduce's as the thread runtime places them with as many threads as run on
    /// this host at once (`here` processes here), a dc's three blocks and a matmul's block
    /// product timed next to siblings running them too, as the processes of this host do
    /// (one per other process here, within the `cores`: oversubscription is the model's
    /// cores cap, [`Design::cores_cap`]).
    pub fn blocks(
        &self,
        registry: &Registry,
        cores: usize,
        image: ImageSize,
        here: usize,
    ) -> Vec<(String, BlockKey)> {
        match self {
            Design::MapReduce { design, .. } => {
                place(&design.local_plan(here), registry, cores, image)
                    .blocks
                    .into_iter()
                    .collect()
            }
            Design::Dc { design, .. } => design
                .kernels()
                .iter()
                .map(|k| beside_siblings(k, here, cores))
                .collect(),
            Design::Matmul { design, .. } => vec![beside_siblings(design.kernel(), here, cores)],
        }
    }

    /// The basis the blocks are fitted over when it is known (the divide-and-conquer paper fits its block
    /// costs over `1, x`; the matrix-multiplication paper's block product is `2m³` flops), or `None` to search
    /// for a model.
    pub fn basis(&self) -> Option<&'static str> {
        match self {
            Design::MapReduce { .. } => None,
            Design::Dc { .. } => Some("1, x"),
            Design::Matmul { .. } => Some("1, x^3"),
        }
    }

    /// How much slower every block runs when `here` processes of `threads` each share
    /// `cores` cores: `here·threads/cores` when that exceeds 1 (each thread gets that
    /// share of a core), else 1.
    pub fn cores_cap(&self, here: usize, cores: usize) -> f64 {
        let threads = here.max(1) * self.threads();
        (threads as f64 / cores.max(1) as f64).max(1.0)
    }

    /// The component models to compose `term` with: `fitted` (component name → model of
    /// its block) completed with the communication composed from `net`. Returns the
    /// components and the term to compose.
    pub fn components(
        &self,
        term: &Term,
        fitted: Vec<(String, BlockKey, Expr)>,
        net: &NetworkCalibration,
        keys: usize,
    ) -> Result<(Vec<(String, Expr)>, Term), Error> {
        match self {
            Design::MapReduce { design, .. } => {
                let model_of = |kernel: &str| {
                    fitted
                        .iter()
                        .find(|(_, key, _)| key.kernel == kernel)
                        .map(|(name, _, model)| (name.clone(), model.clone()))
                        .ok_or_else(|| {
                            Error::Runtime(perfcompose_runtime::Error::NoModel {
                                block: kernel.to_string(),
                            })
                        })
                };
                let (map_name, _) = model_of(design.map_kernel())?;
                let (reduce_name, reduce_model) = model_of(design.reduce_kernel())?;
                let shuffle = shuffle_model(
                    design.reduction(),
                    design.processes(),
                    keys,
                    net,
                    &reduce_model,
                );
                let mut comps: Vec<(String, Expr)> = fitted
                    .into_iter()
                    .map(|(name, _, model)| (name, model))
                    .collect();
                comps.push((SHUFFLE_COMPONENT.to_string(), shuffle));
                Ok((comps, with_blocks(term, &map_name, &reduce_name)))
            }
            Design::Dc {
                design,
                exchange,
                size,
            } => {
                let combine = &design.kernels()[1];
                let comps = fitted
                    .into_iter()
                    .map(|(name, _, model)| {
                        if &name == combine {
                            // The combine block merges results of `size=` words.
                            let m = model.subst(PARAMETER, size);
                            (name, m)
                        } else {
                            (name, model)
                        }
                    })
                    .chain(std::iter::once((exchange.clone(), exchange_ns(net))))
                    .collect();
                Ok((comps, term.clone()))
            }
            Design::Matmul { message, .. } => {
                let comps = fitted
                    .into_iter()
                    .map(|(name, _, model)| (name, model))
                    .chain(std::iter::once((
                        message.clone(),
                        message_ns(net, Expr::param(PARAMETER)),
                    )))
                    .collect();
                Ok((comps, term.clone()))
            }
        }
    }

    /// The row's note on the communication.
    pub fn network_note(&self, net: &NetworkCalibration, keys: usize) -> String {
        match self {
            Design::MapReduce { design, .. } => {
                network_note(design.reduction(), design.processes(), keys, net)
            }
            Design::Dc { design, .. } => exchange_note(design.processes(), net),
            Design::Matmul { design, .. } => matmul_note(design.side(), net),
        }
    }

    /// The keys of a MapReduce's map output (0 for the others).
    pub fn keys(&self) -> usize {
        match self {
            Design::MapReduce { design, image } => design.map_keys(&Data::Image(Arc::clone(image))),
            Design::Dc { .. } | Design::Matmul { .. } => 0,
        }
    }
}

/// A mistake at `span` of `term`, located for its caret.
fn at(term: &Term, span: Span, message: impl Into<String>) -> Error {
    Diagnostic::new(term.origin.as_str(), term.source.as_str(), span, message).into()
}

/// Check `term`'s `procs=` against the job: a number, the job's processes.
fn job_processes(
    job: &Job,
    term: &Term,
    procs: &perfcompose_core::term::Count,
) -> Result<(), Error> {
    let procs = procs
        .as_int()
        .ok_or_else(|| at(term, procs.span, "procs= must be a number to run on MPI"))?
        as usize;
    if procs != job.size() {
        return Err(Error::Nodes {
            nodes: procs,
            processes: job.size(),
        });
    }
    Ok(())
}

/// Block `kernel` timed next to one sibling per other process of this host, within the
/// cores.
fn beside_siblings(kernel: &str, here: usize, cores: usize) -> (String, BlockKey) {
    (
        kernel.to_string(),
        BlockKey {
            kernel: kernel.to_string(),
            image: None,
            conditions: Conditions {
                siblings: here.min(cores).saturating_sub(1),
                ..Conditions::default()
            },
        },
    )
}

/// `term` with its map and reduce renamed to the placed components and the calibrated
/// shuffle in.
fn with_blocks(term: &Term, map: &str, reduce: &str) -> Term {
    let mut t = term.clone();
    if let NodeKind::MapReduce(mr) = &mut t.root.kind {
        mr.map.kind = NodeKind::Component(map.to_string());
        mr.reduce.kind = NodeKind::Component(reduce.to_string());
        mr.shuffle = Some(Name {
            name: SHUFFLE_COMPONENT.to_string(),
            span: t.root.span,
        });
    }
    t
}

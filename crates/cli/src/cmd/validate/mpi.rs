//! `mpirun -np P perfcompose validate` for distributed designs (builds with the `mpi`
//! feature): glue over `perfcompose_mpi::validate`. Every rank runs the configurations
//! together; rank 0 prints the report in the thread runtime's format (and `--json`
//! schema). An error is printed once, by rank 0.

use std::collections::BTreeMap;

use anyhow::{bail, Context};
use perfcompose_mpi::network::NetworkCalibration;
use perfcompose_mpi::validate::{build_case, mpi_suite, validate_case, Case, Setup};
use perfcompose_mpi::Job;
use perfcompose_runtime::bench::Sampling;
use perfcompose_runtime::data::ImageSize;
use perfcompose_runtime::validate::{Options, Report, Rule};
use perfcompose_runtime::Registry;

use super::args::Args;
use super::print::print;
use crate::cmd::runtime_args::bar;
use crate::report::ReportedElsewhere;

pub fn validate(args: &Args, registry: &Registry) -> anyhow::Result<()> {
    // The divide-and-conquer paper's connected-components blocks and the matrix-multiplication paper's block product, for the
    // divide and conquer and the matrix multiplication of the mpi suite.
    let mut registry = registry.clone();
    perfcompose_mpi::graph::register(&mut registry);
    perfcompose_mpi::matrix::register(&mut registry);
    let registry = &registry;
    let job = Job::start(args.time_limit).map_err(crate::report::once_per_job)?;
    let root = job.is_root();
    let result = run(&job, args, registry);
    drop(job);
    match result {
        Err(_) if !root => Err(ReportedElsewhere.into()),
        r => r,
    }
}

/// The configurations to run; `root` says the notes about them (once for the job).
fn cases(args: &Args, processes: usize, root: bool) -> anyhow::Result<Vec<Case>> {
    if args.save.is_some() {
        bail!("--save is not supported for distributed runs yet; use --json and keep its output");
    }
    if let Some(term) = &args.term {
        let sizes = match &args.term_sizes()? {
            Some(s) => s.checked(root)?,
            // Images per job for a MapReduce; a divide and conquer's problem sizes
            // (edges, for the connected components of the suite); a matmul's orders.
            None => {
                use perfcompose_core::term::NodeKind;
                match perfcompose_core::term::parse_term("<term>", term).map(|t| t.root.kind) {
                    Ok(NodeKind::Dc(_)) => (16..=19).map(|e| 1usize << e).collect(),
                    Ok(NodeKind::Matmul(_)) => {
                        let side = (processes as f64).sqrt().round() as usize;
                        perfcompose_mpi::validate::matmul_sizes(side)
                    }
                    _ => vec![2, 4, 8, 16],
                }
            }
        };
        return Ok(vec![Case {
            group: "--term".into(),
            term: term.clone(),
            image: ImageSize::from(args.image),
            sizes,
        }]);
    }
    let all = mpi_suite(processes);
    if args.only.is_empty() {
        return Ok(all);
    }
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    let mut picked = Vec::new();
    for want in &args.only {
        let matching: Vec<&Case> = all
            .iter()
            .filter(|c| squash(&c.term) == squash(want))
            .collect();
        if matching.is_empty() {
            bail!(
                "--only `{want}` is not a configuration of the mpi suite on {processes} processes; it has: {}",
                all.iter()
                    .map(|c| c.term.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
        picked.extend(matching.into_iter().cloned());
    }
    Ok(picked)
}

fn network(args: &Args) -> anyhow::Result<NetworkCalibration> {
    let path = match &args.network {
        Some(p) => p.clone(),
        None => NetworkCalibration::default_path()
            .context("cannot find a configuration directory; pass --network FILE")?,
    };
    if args.network.is_none() && !path.exists() {
        bail!(
            "no network calibration for this machine at {}: run `mpirun -np 2 perfcompose calibrate network` first, or pass --network FILE",
            path.display()
        );
    }
    Ok(NetworkCalibration::load(&path)?)
}

fn run(job: &Job, args: &Args, registry: &Registry) -> anyhow::Result<()> {
    // The suite is made for the job's processes: alone it would be MapReduces over one
    // node with nothing to send. A --term states its processes (nodes=, procs=), which
    // the design checks against the job's.
    if args.term.is_none() {
        job.require("validate --suite mpi", 2)?;
    }
    let cases = cases(args, job.size(), job.is_root())?;
    let config = args.runtime.config();
    // Every configuration checked on every process before anything runs.
    for case in &cases {
        build_case(job, case, registry, &config)?;
    }
    let network = network(args)?;
    let validate = Options {
        // The host's cores: `mpirun` binds each process to its own.
        cores: args.cores.unwrap_or_else(perfcompose_mpi::job::host_cores),
        overhead: None,
        config,
        memory_limit: args.runtime.memory_limit()?,
        measure: args.measure.into(),
        modeler: args.modeler.clone(),
        caches: perfcompose_runtime::host::cache_sizes(),
        level: args.level,
    };
    let setup = Setup {
        registry,
        sampling: Sampling::quick(),
        validate: validate.clone(),
        network: &network,
        trace: args.trace.clone(),
    };
    let bar = bar(cases.len() as u64, args.json || !job.is_root());
    let mut rows = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        bar.set_position(i as u64);
        let row = validate_case(job, case, &setup, &mut |label, _, _| {
            bar.set_message(label.to_string());
        });
        match row {
            Ok(row) => rows.extend(row),
            // The other processes have gone on to the next configuration: end them too.
            Err(e) => {
                bar.finish_and_clear();
                job.fail(&format!("{}: {}", case.term, e.with_causes()))
            }
        }
    }
    bar.finish_and_clear();
    if !job.is_root() {
        return Ok(());
    }
    if let Some(dir) = args.trace.as_deref().filter(|d| d.is_dir()) {
        crate::version::record(dir)?;
    }
    let mut components = BTreeMap::new();
    for r in &rows {
        components.extend(r.components.clone());
    }
    let report = Report {
        suite: match &args.term {
            Some(t) => t.clone(),
            None => "mpi".into(),
        },
        cores: validate.cores,
        overhead_calibrated: false,
        components,
        rows,
        load: None,
        host_check: None,
        measure: validate.measure,
        rule: Rule::MPI,
    };
    print(args, &report)
}

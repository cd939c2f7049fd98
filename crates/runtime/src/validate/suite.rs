//! Suites: the configurations a validation runs, their sweeps, and how hard to measure
//! them. Two are built in (`quick`, CI-sized; `paper`, the pattern-composition paper's tables over its range
//! of `x`); a user writes their own as a TOML file ([`Suite::parse`]).
//!
//! ```toml
//! name = "mine"                        # optional; the file's stem otherwise
//! host_check = true                    # optional; see Suite::host_check
//!
//! [budget]                             # optional: rounds per configuration (Suite::budget)
//! rounds = 12
//! seconds = 120
//!
//! [sampling]                           # optional; the quick suite's otherwise
//! warmup = 1
//! min_reps = 5
//! max_reps = 15
//! target = 0.02                        # CI of the median within 2%; omit for a fixed count
//! min_sample_us = 500
//! max_point_ms = 350
//!
//! [kernel_sizes]                       # optional: the unit tests' sweeps, per kernel
//! map = [1, 2, 4, 8]
//!
//! [[case]]
//! term = "pipe(qsort, inc)"
//! sizes = [4096, 16384, 65536]
//! group = "pipelines"                  # optional
//! image = "small"                      # optional: MapReduce image resolution
//!
//! [[program]]                          # optional: a design of your own program
//! term = "pipe(read, work)"            # over the blocks of `components`
//! command = "./app pipe {x}"           # run through sh -c
//! components = "blocks.toml"           # relative to the suite file
//! sizes = [1000, 2000, 4000]
//! time_from = "([0-9.]+) (ns) per item"  # optional, as --time-from
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use perfcompose_core::diag::{Diagnostic, Span};
use serde::Deserialize;
use toml::Spanned;

use super::designs::ProgramDesign;
use super::verdict::{Budget, MIN_ROUNDS};
use crate::bench::Sampling;
use crate::data::ImageSize;
use crate::error::{Error, FileAction};
use crate::host::states;
use crate::plan::{parse_plan, Plan};
use perfcompose_core::skeleton::StandardLibrary;
use perfcompose_core::term::parse_term_with;

/// One configuration of a suite.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// The table or topic it belongs to (`Table 2, sequential`, ...).
    pub group: String,
    /// The term, as written.
    pub term: String,
    /// Sizes `x` of the whole-program sweep.
    pub sizes: Vec<usize>,
    /// Image resolution (MapReduce).
    pub image: ImageSize,
}

impl Case {
    /// How a configuration's measurements are named in saved files (the callpath of its
    /// program, the prefix `ID->` of its blocks): the term as written, and for a
    /// MapReduce the image too (`TERM@small`), since a suite may run one term on several.
    pub fn id(&self, plan: &Plan) -> String {
        if plan.has_mapreduce() {
            format!("{}@{}", self.term, self.image.name())
        } else {
            self.term.clone()
        }
    }
}

/// A set of configurations and how hard to measure them.
#[derive(Clone, Debug, PartialEq)]
pub struct Suite {
    pub name: String,
    pub cases: Vec<Case>,
    /// Sweep of each kernel's unit performance test where it is not the program's
    /// (kernels not listed are measured at their program's sizes; a MapReduce's map over
    /// images, its reduction over values per key).
    pub kernel_sizes: BTreeMap<String, Vec<usize>>,
    pub sampling: Sampling,
    /// How long each configuration may be measured in rounds
    /// ([`super::verdict::Budget`]); the same for every row.
    pub budget: Budget,
    /// Designs of the user's own program (`[[program]]`), judged as alternatives of one
    /// another ([`super::designs`]).
    pub programs: Vec<ProgramDesign>,
    /// Check the host right before and right after each configuration within the cores
    /// ([`crate::host::neighbour`] and the cores' speed states), to explain misses.
    pub host_check: bool,
    /// Length of the cores' speed-state sample at each end of a configuration.
    pub state_sample: Duration,
}

/// The quick suite's budget: ten rounds or a minute per configuration (its eleven
/// configurations in at most about 12 minutes on two cores).
pub const QUICK_BUDGET: Budget = Budget {
    rounds: 10,
    seconds: 60.0,
};
/// The budget of `--term` and of suite files that state none.
pub const DEFAULT_BUDGET: Budget = Budget {
    rounds: 12,
    seconds: 120.0,
};
/// The paper suite's budget.
pub const PAPER_BUDGET: Budget = Budget {
    rounds: 12,
    seconds: 180.0,
};

/// The configurations of `suite` whose term is one of `terms` (compared as parsed, so
/// spacing does not matter; a MapReduce keeps every image the suite runs it on), in the
/// suite's order: re-running the rows of a long suite that missed. A term that does not
/// parse is a located error; one the suite does not have is an error that lists the
/// suite's terms.
pub fn select(mut suite: Suite, terms: &[String]) -> Result<Suite, Error> {
    let canonical = |origin: &str, t: &str| -> Result<String, Error> {
        Ok(parse_plan(origin, t)?.1.to_string())
    };
    let wanted: Vec<String> = terms
        .iter()
        .map(|t| canonical("--only", t))
        .collect::<Result<_, _>>()?;
    let mut keys = Vec::with_capacity(suite.cases.len());
    for c in &suite.cases {
        keys.push(canonical("<suite>", &c.term)?);
    }
    if let Some((t, _)) = terms.iter().zip(&wanted).find(|(_, w)| !keys.contains(w)) {
        let mut known: Vec<&str> = Vec::new();
        for c in &suite.cases {
            if !known.contains(&c.term.as_str()) {
                known.push(&c.term);
            }
        }
        return Err(Error::Input(Box::new(
            Diagnostic::new(
                "--only",
                t.as_str(),
                Span::new(0, t.len()),
                format!("suite `{}` has no configuration `{t}`", suite.name),
            )
            .with_hint(format!("its configurations: {}", known.join("; "))),
        )));
    }
    let mut keep = keys.iter().map(|k| wanted.contains(k));
    suite.cases.retain(|_| keep.next().unwrap_or(false));
    Ok(suite)
}

fn case(group: &str, term: &str, sizes: &[usize]) -> Case {
    Case {
        group: group.into(),
        term: term.into(),
        sizes: sizes.to_vec(),
        image: ImageSize::Small,
    }
}

fn mapreduce_cases(threads: &[usize], images: &[ImageSize], sizes: &[usize]) -> Vec<Case> {
    let mut out = Vec::new();
    for &image in images {
        for &n in threads {
            for (style, keys, per_key) in [
                ("reduce_pairwise", "x", "768"),
                ("reduce_per_key", "768", "x"),
            ] {
                out.push(Case {
                    group: format!("MapReduce, {} image", image.name()),
                    term: format!(
                        "mapreduce(map, {style}, nodes=1, threads={n}, keys={keys}, per_key={per_key})"
                    ),
                    sizes: sizes.to_vec(),
                    image,
                });
            }
        }
    }
    out
}

impl Suite {
    /// A CI-sized suite (at most about 12 minutes on a 2-core machine under
    /// [`QUICK_BUDGET`], host checks included): one or two configurations of each of the paper's tables, on a short
    /// grid.
    pub fn quick() -> Suite {
        let grid = [2048, 4096, 8192, 16384, 32768, 65536];
        let mut cases = vec![
            case("Table 2, sequential", "seq(qsort, inc)", &grid),
            case("Table 2, sequential", "seq(inc, nop)", &grid),
            case("Table 2, task pool", "tpool(2, qsort)", &grid),
            case("Table 2, task pool", "tpool(4, qsort)", &grid),
            case("Table 2, pipeline", "pipe(qsort, inc)", &grid),
            case("Table 2, pipeline", "pipe(inc, nop)", &grid),
            case(
                "Table 4, associativity",
                "pipe(pipe(qsort, inc), nop)",
                &grid,
            ),
            case("Table 6, layering", "tpool(2, pipe(qsort, inc))", &grid),
            case("Table 7, pipe vs tpool", "tpool(2, seq(inc, qsort))", &grid),
        ];
        cases.extend(mapreduce_cases(
            &[2],
            &[ImageSize::Small],
            &[8, 16, 24, 32, 48, 64],
        ));
        Suite {
            name: "quick".into(),
            cases,
            kernel_sizes: kernel_grid(&[1, 2, 3, 4, 6, 8]),
            sampling: quick_sampling(),
            // Half-second speed-state samples.
            budget: QUICK_BUDGET,
            programs: Vec::new(),
            host_check: true,
            state_sample: states::QUICK_LENGTH,
        }
    }

    /// The paper's configurations (Tables 2, 4, 6, 7 and the single-node MapReduce with
    /// both reductions and all three image sizes) over the paper's range of `x`.
    pub fn paper() -> Suite {
        let grid: Vec<usize> = [1, 2, 4, 8, 16, 32, 64, 96, 128, 160, 192, 224, 256]
            .iter()
            .map(|k| k * 1024)
            .collect();
        let g = &grid[..];
        let seqs = [
            "seq(qsort, nop)",
            "seq(qsort, inc)",
            "seq(inc, qsort)",
            "seq(inc, inc)",
            "seq(inc, nop)",
        ];
        let mut cases = Vec::new();
        for t in seqs {
            cases.push(case("Table 2, sequential", t, g));
        }
        for n in [1, 2, 4, 8, 12, 24] {
            cases.push(case("Table 2, task pool", &format!("tpool({n}, qsort)"), g));
        }
        for t in [
            "pipe(qsort, nop)",
            "pipe(qsort, inc)",
            "pipe(inc, qsort)",
            "pipe(inc, inc)",
            "pipe(inc, nop)",
        ] {
            cases.push(case("Table 2, pipeline", t, g));
        }
        for t in [
            "pipe(pipe(qsort, inc), nop)",
            "pipe(qsort, pipe(inc, nop))",
            "pipe(pipe(qsort, nop), inc)",
            "pipe(qsort, pipe(nop, inc))",
            "pipe(pipe(inc, qsort), nop)",
            "pipe(inc, pipe(qsort, nop))",
            "pipe(pipe(inc, nop), qsort)",
            "pipe(inc, pipe(nop, qsort))",
        ] {
            cases.push(case("Table 4, associativity/commutativity", t, g));
        }
        for n in [1, 2, 4, 8] {
            cases.push(case(
                "Table 6, layering",
                &format!("pipe(tpool({n}, qsort), tpool({n}, inc))"),
                g,
            ));
            cases.push(case(
                "Table 6, layering",
                &format!("tpool({n}, pipe(qsort, inc))"),
                g,
            ));
        }
        for t in seqs {
            cases.push(case("Table 7, pipe vs tpool", &format!("tpool(2, {t})"), g));
        }
        cases.extend(mapreduce_cases(
            &[1, 2, 4],
            &ImageSize::ALL,
            &[4, 8, 16, 32, 48, 64],
        ));
        Suite {
            name: "paper".into(),
            cases,
            kernel_sizes: kernel_grid(&[1, 2, 4, 8, 16]),
            sampling: Sampling {
                warmup: 2,
                min_reps: 9,
                max_reps: 41,
                target: Some(0.01),
                min_sample: Duration::from_millis(1),
                max_point_time: Duration::from_secs(4),
            },
            budget: PAPER_BUDGET,
            programs: Vec::new(),
            host_check: true,
            state_sample: states::VALIDATE_LENGTH,
        }
    }

    /// A one-configuration suite for `validate --term`, sampled as the quick suite.
    pub fn of_term(term: &str, sizes: Vec<usize>, image: ImageSize) -> Suite {
        Suite {
            name: "term".into(),
            kernel_sizes: kernel_grid(&[1, 2, 4, 8]),
            cases: vec![Case {
                group: "user design".into(),
                term: term.into(),
                sizes,
                image,
            }],
            sampling: quick_sampling(),
            budget: DEFAULT_BUDGET,
            programs: Vec::new(),
            host_check: true,
            state_sample: states::VALIDATE_LENGTH,
        }
    }

    /// A built-in suite by name (`quick`, `paper`).
    pub fn builtin(name: &str) -> Option<Suite> {
        match name {
            "quick" => Some(Suite::quick()),
            "paper" => Some(Suite::paper()),
            _ => None,
        }
    }

    /// Read a suite file (module docs); errors name the file, line and column.
    pub fn load(path: &Path) -> Result<Suite, Error> {
        let origin = path.display().to_string();
        let source = std::fs::read_to_string(path).map_err(Error::file(FileAction::Read, path))?;
        let stem = path
            .file_stem()
            .map_or_else(|| "suite".to_string(), |s| s.to_string_lossy().into_owned());
        let mut suite = Suite::parse(&origin, &source, &stem)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        suite.programs = suite
            .programs
            .into_iter()
            .map(|p| p.relative_to(dir))
            .collect();
        Ok(suite)
    }

    /// Parse the text of a suite file named `origin`; `default_name` names a suite
    /// without `name`.
    pub fn parse(origin: &str, source: &str, default_name: &str) -> Result<Suite, Error> {
        let located = |span: std::ops::Range<usize>, msg: String| {
            Error::Input(Box::new(Diagnostic::new(
                origin,
                source,
                Span::new(span.start, span.end),
                msg,
            )))
        };
        let raw: RawSuite = toml::from_str(source).map_err(|e| {
            let span = e.span().unwrap_or(0..source.len().min(1));
            let mut msg = e.message().trim().replace('\n', "; ");
            if let Some(first) = msg.get(0..1) {
                msg = first.to_lowercase() + &msg[1..];
            }
            located(span, msg)
        })?;
        let quick = quick_sampling();
        let sampling = match raw.sampling {
            None => quick,
            Some(s) => {
                let span = s.span();
                let s = s.into_inner();
                let sampling = Sampling {
                    warmup: s.warmup.unwrap_or(quick.warmup),
                    min_reps: s.min_reps.unwrap_or(quick.min_reps),
                    max_reps: s.max_reps.unwrap_or(quick.max_reps),
                    target: s.target,
                    min_sample: s
                        .min_sample_us
                        .map_or(quick.min_sample, Duration::from_micros),
                    max_point_time: s
                        .max_point_ms
                        .map_or(quick.max_point_time, Duration::from_millis),
                };
                if sampling.min_reps == 0 || sampling.max_reps < sampling.min_reps {
                    return Err(located(
                        span,
                        "sampling needs 1 <= min_reps <= max_reps".into(),
                    ));
                }
                if sampling.target.is_some_and(|t| !(t > 0.0 && t < 1.0)) {
                    return Err(located(
                        span,
                        "sampling target is a fraction between 0 and 1".into(),
                    ));
                }
                sampling
            }
        };
        let budget = match raw.budget {
            None => DEFAULT_BUDGET,
            Some(b) => {
                let span = b.span();
                let b = b.into_inner();
                let budget = Budget {
                    rounds: b.rounds.unwrap_or(DEFAULT_BUDGET.rounds),
                    seconds: b.seconds.unwrap_or(DEFAULT_BUDGET.seconds),
                };
                if budget.rounds < MIN_ROUNDS
                    || !(budget.seconds > 0.0 && budget.seconds.is_finite())
                {
                    return Err(located(
                        span,
                        format!("a budget needs rounds >= {MIN_ROUNDS} (the fewest that decide a row at 95%) and seconds > 0"),
                    ));
                }
                budget
            }
        };
        let mut cases = Vec::with_capacity(raw.case.len());
        for c in raw.case {
            let term_span = c.term.span();
            // Parsed here so that a typo fails before anything runs, located in the file.
            if let Err(d) = parse_plan("<term>", c.term.get_ref()) {
                let Error::Input(d) = d else {
                    return Err(d);
                };
                // Point into the file: the term's string starts one byte after its quote.
                let start = term_span.start + 1 + d.span.start;
                let end = term_span.start + 1 + d.span.end;
                return Err(located(start..end.max(start + 1), d.message));
            }
            let image = match &c.image {
                None => ImageSize::default(),
                Some(i) => ImageSize::parse(i.get_ref()).ok_or_else(|| {
                    located(
                        i.span(),
                        format!(
                            "unknown image `{}` (expected small, medium or large)",
                            i.get_ref()
                        ),
                    )
                })?,
            };
            let sizes = c.sizes.into_inner();
            if sizes.is_empty() || sizes.contains(&0) {
                return Err(located(
                    term_span,
                    "a case needs sizes, each at least 1".into(),
                ));
            }
            cases.push(Case {
                group: c.group.unwrap_or_else(|| "user suite".into()),
                term: c.term.into_inner(),
                sizes,
                image,
            });
        }
        let mut programs = Vec::with_capacity(raw.program.len());
        for p in raw.program {
            let span = p.term.span();
            if let Err(d) = parse_term_with("<term>", p.term.get_ref(), &StandardLibrary) {
                let start = span.start + 1 + d.span.start;
                let end = span.start + 1 + d.span.end;
                return Err(located(start..end.max(start + 1), d.message));
            }
            if p.sizes.is_empty() || p.sizes.contains(&0) {
                return Err(located(
                    span,
                    "a program needs sizes, each at least 1".into(),
                ));
            }
            programs.push(ProgramDesign {
                term: p.term.into_inner(),
                command: p.command,
                components: PathBuf::from(p.components),
                sizes: p.sizes,
                time_from: p.time_from,
            });
        }
        if cases.is_empty() && programs.is_empty() {
            return Err(located(
                0..source.len().min(1),
                "a suite needs at least one [[case]] with a term and sizes (or a [[program]])"
                    .into(),
            ));
        }
        let mut kernel_sizes = kernel_grid(&[1, 2, 4, 8]);
        kernel_sizes.extend(raw.kernel_sizes.unwrap_or_default());
        Ok(Suite {
            name: raw.name.unwrap_or_else(|| default_name.to_string()),
            cases,
            kernel_sizes,
            sampling,
            budget,
            programs,
            host_check: raw.host_check.unwrap_or(true),
            state_sample: states::VALIDATE_LENGTH,
        })
    }
}

/// The quick suite's sampling (also `--term`'s and a suite file's default).
fn quick_sampling() -> Sampling {
    Sampling {
        warmup: 1,
        min_reps: 5,
        max_reps: 15,
        target: Some(0.02),
        min_sample: Duration::from_micros(500),
        max_point_time: Duration::from_millis(350),
    }
}

/// The unit tests' sweeps of the blocks measured at other sizes than their program: the
/// map of a MapReduce over `images` images, and the reductions over values per key.
fn kernel_grid(images: &[usize]) -> BTreeMap<String, Vec<usize>> {
    let mut m = BTreeMap::new();
    m.insert("map".into(), images.to_vec());
    m.insert(
        "reduce_pairwise".into(),
        vec![256, 512, 768, 1024, 1536, 2048],
    );
    // Per key, the reduction runs on `per_key = x` values: the suites' jobs of 4 to 64
    // images. Its sweep starts below them, so the model is interpolated there, not
    // extrapolated (a sweep from 128 fitted a model negative at x = 4).
    m.insert(
        "reduce_per_key".into(),
        (2..=13).map(|e| 1usize << e).collect(),
    );
    m
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    name: Option<String>,
    host_check: Option<bool>,
    budget: Option<Spanned<RawBudget>>,
    sampling: Option<Spanned<RawSampling>>,
    kernel_sizes: Option<BTreeMap<String, Vec<usize>>>,
    #[serde(default)]
    case: Vec<RawCase>,
    #[serde(default)]
    program: Vec<RawProgram>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProgram {
    term: Spanned<String>,
    command: String,
    components: String,
    sizes: Vec<u64>,
    time_from: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSampling {
    warmup: Option<u32>,
    min_reps: Option<u32>,
    max_reps: Option<u32>,
    target: Option<f64>,
    min_sample_us: Option<u64>,
    max_point_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBudget {
    rounds: Option<usize>,
    seconds: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    term: Spanned<String>,
    sizes: Spanned<Vec<usize>>,
    group: Option<String>,
    image: Option<Spanned<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_can_be_cut_down_to_some_of_its_configurations() {
        let s = select(
            Suite::paper(),
            &["pipe( inc,inc )".into(), "tpool(2, qsort)".into()],
        )
        .unwrap();
        let terms: Vec<&str> = s.cases.iter().map(|c| c.term.as_str()).collect();
        assert_eq!(terms, ["tpool(2, qsort)", "pipe(inc, inc)"]);
        let mr = select(
            Suite::paper(),
            &["mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)".into()],
        )
        .unwrap();
        assert_eq!(mr.cases.len(), 3, "one per image");
    }

    #[test]
    fn an_unknown_or_malformed_term_in_only_is_a_located_error() {
        let Err(Error::Input(d)) = select(Suite::quick(), &["pipe(inc, inc)".into()]) else {
            panic!("expected a located error");
        };
        assert_eq!(d.origin, "--only");
        assert!(d.message.contains("has no configuration `pipe(inc, inc)`"));
        assert!(d.hint.unwrap().contains("seq(qsort, inc)"));
        let Err(Error::Input(d)) = select(Suite::quick(), &["pipe(inc, ".into()]) else {
            panic!("expected a located error");
        };
        assert_eq!(d.origin, "--only");
        assert_eq!(d.source, "pipe(inc, ");
    }

    #[test]
    fn a_suite_file_reads_its_cases_sampling_and_settings() {
        let s = Suite::parse(
            "s.toml",
            r#"
host_check = false
[budget]
rounds = 7
[sampling]
warmup = 0
min_reps = 3
max_reps = 3
[kernel_sizes]
map = [1, 2, 3]
[[case]]
term = "seq(inc, nop)"
sizes = [1024, 2048]
[[case]]
term = "mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)"
sizes = [2, 4]
image = "medium"
group = "mr"
"#,
            "s",
        )
        .unwrap();
        assert_eq!(s.name, "s");
        assert_eq!(s.cases.len(), 2);
        assert_eq!(s.cases[1].image, ImageSize::Medium);
        assert_eq!(s.cases[1].group, "mr");
        assert_eq!(s.sampling.min_reps, 3);
        assert_eq!(s.sampling.target, None);
        assert_eq!(
            s.budget,
            Budget {
                rounds: 7,
                seconds: DEFAULT_BUDGET.seconds
            }
        );
        assert!(!s.host_check);
        assert_eq!(s.kernel_sizes["map"], [1, 2, 3]);
        assert!(s.kernel_sizes.contains_key("reduce_per_key"));
    }

    #[test]
    fn a_bad_suite_file_is_an_error_at_its_line_and_column() {
        let text = "[[case]]\nterm = \"pipe(inc, nop\"\nsizes = [1024]\n";
        let Err(Error::Input(d)) = Suite::parse("s.toml", text, "s") else {
            panic!("expected a located error");
        };
        assert_eq!(d.origin, "s.toml");
        assert_eq!(d.line_col().0, 2, "{d:?}");
        let text = "[[case]]\nterm = \"inc\"\nsizes = [1024]\nimage = \"huge\"\n";
        let Err(Error::Input(d)) = Suite::parse("s.toml", text, "s") else {
            panic!("expected a located error");
        };
        assert_eq!(d.line_col().0, 4);
        assert!(d.message.contains("unknown image `huge`"));
        let Err(Error::Input(d)) = Suite::parse("s.toml", "colour = 3\n", "s") else {
            panic!("expected a located error");
        };
        assert!(d.message.contains("unknown field"), "{}", d.message);
        let Err(Error::Input(d)) = Suite::parse("s.toml", "name = \"x\"\n", "s") else {
            panic!("expected a located error");
        };
        assert!(d.message.contains("at least one [[case]]"));
        // A design of your own program: its term located, its budget checked.
        let text = "[[program]]\nterm = \"pipe(a,\"\ncommand = \"x\"\ncomponents = \"c.toml\"\nsizes = [1]\n";
        let Err(Error::Input(d)) = Suite::parse("s.toml", text, "s") else {
            panic!("expected a located error");
        };
        assert_eq!(d.line_col().0, 2, "{d:?}");
        let text = "[budget]\nrounds = 5\n[[program]]\nterm = \"a\"\ncommand = \"x\"\ncomponents = \"c.toml\"\nsizes = [1]\n";
        let Err(Error::Input(d)) = Suite::parse("s.toml", text, "s") else {
            panic!("expected a located error");
        };
        assert!(d.message.contains("rounds >= 6"), "{}", d.message);
        let text = "[[program]]\nterm = \"seq(a, b)\"\ncommand = \"./app {x}\"\ncomponents = \"c.toml\"\nsizes = [1, 2]\n";
        let s = Suite::parse("s.toml", text, "s").unwrap();
        assert!(s.cases.is_empty());
        let p = s.programs[0].clone().relative_to(Path::new("dir"));
        assert_eq!(p.components, Path::new("dir/c.toml"));
    }
}

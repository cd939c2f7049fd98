//! Whole-program measurement: a program built from a plan, timed on a stream of
//! elements at one size ([`ProgramSampler`]), reporting total time over elements — the
//! seed's metric.

use super::sampling::{sample_point, Repeated, Sampling};
use super::series::PointStats;
use super::stream::{evict_unless_cold, tail_floor, MAX_ELEMENTS, MIN_ELEMENTS, MIN_RUN};
use crate::error::Error;
use crate::host::available_cores;
use crate::kernel::{Inputs, Registry};
use crate::plan::{stream_inputs, Built};

/// Time a whole program at one size: average time per element over a stream.
pub fn time_program(
    built: &Built,
    registry: &Registry,
    x: usize,
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
) -> Result<PointStats, Error> {
    sample_point(
        spec,
        &mut ProgramSampler::new(built, registry, x, inputs, memory_limit)?,
    )
}

/// A whole-program measurement at one size, ready to repeat: the stream length sized from
/// a probe so that one repetition streams for at least [`MIN_RUN`].
pub struct ProgramSampler<'a> {
    built: &'a Built,
    registry: &'a Registry,
    inputs: &'a Inputs,
    x: usize,
    count: usize,
    memory_limit: u128,
}

impl<'a> ProgramSampler<'a> {
    pub fn new(
        built: &'a Built,
        registry: &'a Registry,
        x: usize,
        inputs: &'a Inputs,
        memory_limit: u128,
    ) -> Result<ProgramSampler<'a>, Error> {
        let threads = built.program.pattern().threads();
        let tail = tail_floor(built.program.pattern().in_flight(), available_cores());
        let mut s = ProgramSampler {
            built,
            registry,
            inputs,
            x,
            count: MIN_ELEMENTS.max(4 * threads),
            memory_limit,
        };
        // Probe with a short stream to size the stream of a repetition, then again with a
        // quarter of that: the first probe's few elements carry the whole run's fixed
        // costs (waking the workers, the end of the stream), which made the streams of
        // fast designs a quarter to half as long as meant (1,000–3,000 `tpool(2, inc)`
        // elements at x = 1,024 instead of 4,096), and those costs then weighed more
        // on every element of the repetitions. A design with several elements in flight
        // streams at least its tail floor (see `tail_floor`).
        let per_input = registry
            .get(&built.source_kernel)?
            .input_bytes(x, inputs)
            .max(1);
        let by_memory = (memory_limit / per_input).max(1) as usize;
        let shortest = s.count;
        let wanted =
            |per_element: f64| (MIN_RUN.as_nanos() as f64 / per_element.max(1.0)).ceil() as usize;
        let first = wanted(s.one()?);
        // (`min` then `max`, not `clamp`: a design of more than 1,024 threads has a
        // shortest stream above the cap.)
        s.count = (first / 4)
            .min(MAX_ELEMENTS / 4)
            .max(shortest)
            .min(by_memory);
        let second = wanted(s.one()?);
        s.count = second
            .min(MAX_ELEMENTS)
            .max(shortest)
            .max(tail)
            .min(by_memory);
        Ok(s)
    }
}

impl Repeated for ProgramSampler<'_> {
    fn x(&self) -> usize {
        self.x
    }

    fn batch(&self) -> u64 {
        self.count as u64
    }

    fn one(&mut self) -> Result<f64, Error> {
        let stream = stream_inputs(
            self.registry,
            &self.built.source_kernel,
            self.x,
            self.count,
            self.inputs,
            self.memory_limit,
        )?;
        evict_unless_cold(&stream);
        let n = stream.len();
        let m = self.built.program.run_stream(stream)?;
        Ok(m.elapsed.as_nanos() as f64 / n as f64)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn program_streams_of_slow_parallel_designs_are_at_least_the_tail_floor() {
        use crate::plan::Plan;
        let mut reg = crate::kernel::Registry::builtin();
        // 2 ms per element: 20 ms of a two-worker pool is 20 elements.
        reg.register_block("slow", "sleeps 2 ms", |d| {
            std::thread::sleep(Duration::from_millis(2));
            d
        });
        let k = |n: &str| Plan::Kernel(n.into());
        let inputs = Inputs::default();
        let count = |plan: Plan, memory: u128| {
            let built = plan.build(&reg, crate::Config::default()).unwrap();
            ProgramSampler::new(&built, &reg, 64, &inputs, memory)
                .unwrap()
                .count
        };
        let cores = available_cores();
        let pool = Plan::TPool(2, Box::new(Plan::Seq(vec![k("inc"), k("slow")])));
        assert_eq!(
            count(pool.clone(), u128::MAX),
            MIN_ELEMENTS.max(tail_floor(2, cores))
        );
        // One element at a time: no floor beyond the shortest stream.
        assert_eq!(
            count(Plan::Seq(vec![k("inc"), k("slow")]), u128::MAX),
            MIN_ELEMENTS
        );
        // The memory limit still caps the stream (64 ints of 4 bytes each, 20 inputs).
        assert_eq!(count(pool, 20 * 256), 20);
    }
}

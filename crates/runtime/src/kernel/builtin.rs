//! The paper's building blocks (the pattern-composition paper, §4.1).
//!
//! `std::hint::black_box` sits wherever the optimiser could otherwise see through the
//! work: the ten increments of `inc` would fold into one `+10`, and a kernel whose result
//! is unused could be deleted.

use std::hint::black_box;
use std::sync::Arc;

use crate::data::{random_ints, Data, DataKind, Image};
use crate::error::KernelError;
use crate::kernel::qsort::quicksort;
use crate::kernel::{BlockFn, Inputs, Kernel, Op};

/// Keys of the histogram: 256 values for each of red, green, blue.
pub const HISTOGRAM_KEYS: usize = 768;

/// Seed of the deterministic integer inputs (any fixed value works; fixed so that runs
/// and machines compare).
const INPUT_SEED: u64 = 0x5EED_0000;

fn ints_input(x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
    random_ints(
        x,
        INPUT_SEED ^ inputs.variant.wrapping_mul(0xA076_1D64_78BD_642F),
    )
    .map(Data::Ints)
}

fn expect_ints(kernel: &str, d: Data) -> Vec<i32> {
    match d {
        Data::Ints(v) => v,
        other => panic!(
            "kernel `{kernel}` expects an integer array, got {}",
            other.kind()
        ),
    }
}

/// `nop`: returns its element unchanged.
pub struct Nop;

impl Kernel for Nop {
    fn name(&self) -> &str {
        "nop"
    }
    fn summary(&self) -> &str {
        "no operation: returns the element unchanged (measures pure overhead)"
    }
    fn writes(&self) -> bool {
        false
    }
    fn op(&self) -> Op {
        Op::Block {
            input: DataKind::Any,
            output: DataKind::Any,
            f: Arc::new(black_box),
        }
    }
    fn size_meaning(&self) -> &str {
        "array length (ignored)"
    }
    fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
        ints_input(x, inputs)
    }
    fn input_bytes(&self, x: usize, _: &Inputs) -> u128 {
        4 * x as u128
    }
}

/// `inc`: adds 1 to every element, ten times (the seed repeats it to lift it above noise).
pub struct Inc;

/// Passes of `inc` over the array.
pub const INC_REPEAT: usize = 10;

pub(crate) fn inc(mut v: Vec<i32>) -> Vec<i32> {
    for _ in 0..INC_REPEAT {
        for e in v.iter_mut() {
            *e = e.wrapping_add(1);
        }
        // Without this the ten passes fuse into one `+10` pass.
        v = black_box(v);
    }
    v
}

impl Kernel for Inc {
    fn name(&self) -> &str {
        "inc"
    }
    fn summary(&self) -> &str {
        "increment every element of an integer array, ten times"
    }
    fn op(&self) -> Op {
        Op::Block {
            input: DataKind::Ints,
            output: DataKind::Ints,
            f: Arc::new(|d| Data::Ints(inc(expect_ints("inc", d)))),
        }
    }
    fn size_meaning(&self) -> &str {
        "array length"
    }
    fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
        ints_input(x, inputs)
    }
    fn input_bytes(&self, x: usize, _: &Inputs) -> u128 {
        4 * x as u128
    }
}

/// `qsort`: quicksort of an integer array.
pub struct QSort;

impl Kernel for QSort {
    fn name(&self) -> &str {
        "qsort"
    }
    fn summary(&self) -> &str {
        "quicksort of an integer array (median of three, Hoare partition)"
    }
    fn op(&self) -> Op {
        Op::Block {
            input: DataKind::Ints,
            output: DataKind::Ints,
            f: Arc::new(|d| {
                let mut v = expect_ints("qsort", d);
                quicksort(&mut v);
                Data::Ints(black_box(v))
            }),
        }
    }
    fn size_meaning(&self) -> &str {
        "array length"
    }
    fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
        ints_input(x, inputs)
    }
    fn input_bytes(&self, x: usize, _: &Inputs) -> u128 {
        4 * x as u128
    }
}

/// The RGB histogram of an image: key `c·256 + v` counts channel `c`'s value `v`.
pub fn histogram(img: &Image) -> Vec<u64> {
    let mut h = vec![0u64; HISTOGRAM_KEYS];
    let (r, rest) = h.split_at_mut(256);
    let (g, b) = rest.split_at_mut(256);
    for px in img.rgb.chunks_exact(3) {
        r[px[0] as usize] += 1;
        g[px[1] as usize] += 1;
        b[px[2] as usize] += 1;
    }
    h
}

/// `map`: the per-image RGB histogram (768 keys).
pub struct Map;

impl Kernel for Map {
    fn name(&self) -> &str {
        "map"
    }
    fn summary(&self) -> &str {
        "MapReduce map: RGB histogram (768 keys) of one synthetic image"
    }
    fn op(&self) -> Op {
        Op::Map {
            input: DataKind::Image,
            f: Arc::new(|d| match d {
                Data::Image(img) => histogram(img),
                other => panic!("kernel `map` expects an image, got {}", other.kind()),
            }),
        }
    }
    fn size_meaning(&self) -> &str {
        "number of images mapped one after the other"
    }
    fn default_sizes(&self, full: bool) -> Vec<usize> {
        if full {
            (1..=16).collect()
        } else {
            vec![1, 2, 4, 8]
        }
    }
    fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
        let img = inputs.image.image();
        let mut batch = Vec::new();
        batch
            .try_reserve_exact(x)
            .map_err(|_| KernelError::OutOfMemory {
                what: format!("a batch of {x} images"),
                bytes: 48 * x as u128,
            })?;
        batch.extend((0..x).map(|_| Data::Image(Arc::clone(&img))));
        Ok(Data::Batch(batch))
    }
    fn input_bytes(&self, x: usize, inputs: &Inputs) -> u128 {
        let (w, h) = inputs.image.dimensions();
        48 * x as u128 + 3 * (w * h) as u128
    }
}

fn counts_input(x: usize, seed: u64) -> Result<Vec<u64>, KernelError> {
    random_ints(x, seed).map(|v| v.into_iter().map(|e| (e & 0xFFFF) as u64).collect())
}

/// `reduce_pairwise`: add one keyed collection into another (GrPPI style).
pub struct ReducePairwise;

pub(crate) fn add_into(acc: &mut [u64], other: &[u64]) {
    for (a, b) in acc.iter_mut().zip(other) {
        *a += b;
    }
}

impl Kernel for ReducePairwise {
    fn name(&self) -> &str {
        "reduce_pairwise"
    }
    fn summary(&self) -> &str {
        "MapReduce reduce, GrPPI style: add two histograms key by key"
    }
    fn op(&self) -> Op {
        Op::ReducePairwise(Arc::new(add_into))
    }
    fn size_meaning(&self) -> &str {
        "keys per collection"
    }
    fn default_sizes(&self, full: bool) -> Vec<usize> {
        if full {
            (1..=32).map(|i| i * 256).collect()
        } else {
            vec![256, 512, 768, 1024, 2048, 4096, 8192]
        }
    }
    fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
        let seed = INPUT_SEED + 2 * inputs.variant;
        Ok(Data::Batch(vec![
            Data::Counts(counts_input(x, seed)?),
            Data::Counts(counts_input(x, seed + 1)?),
        ]))
    }
    fn input_bytes(&self, x: usize, _: &Inputs) -> u128 {
        16 * x as u128
    }
}

/// `reduce_per_key`: sum all values of one key (Phoenix/Hadoop style).
pub struct ReducePerKey;

impl Kernel for ReducePerKey {
    fn name(&self) -> &str {
        "reduce_per_key"
    }
    fn summary(&self) -> &str {
        "MapReduce reduce, Phoenix/Hadoop style: sum the values of one key"
    }
    fn op(&self) -> Op {
        Op::ReducePerKey(Arc::new(|_key, values| values.iter().sum()))
    }
    fn size_meaning(&self) -> &str {
        "values of the key"
    }
    fn default_sizes(&self, full: bool) -> Vec<usize> {
        // The seed: 128 to 8,192 values.
        if full {
            (1..=64).map(|i| i * 128).collect()
        } else {
            (7..=13).map(|e| 1usize << e).collect()
        }
    }
    fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
        counts_input(x, INPUT_SEED + inputs.variant).map(Data::Counts)
    }
    fn input_bytes(&self, x: usize, _: &Inputs) -> u128 {
        8 * x as u128
    }
}

/// A user block on integer arrays (see [`crate::Registry::register_block`]).
pub(crate) struct IntsBlock {
    pub(crate) name: String,
    pub(crate) summary: String,
    pub(crate) f: BlockFn,
}

impl Kernel for IntsBlock {
    fn name(&self) -> &str {
        &self.name
    }
    fn summary(&self) -> &str {
        &self.summary
    }
    fn op(&self) -> Op {
        Op::Block {
            input: DataKind::Ints,
            output: DataKind::Ints,
            f: Arc::clone(&self.f),
        }
    }
    fn size_meaning(&self) -> &str {
        "array length"
    }
    fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
        ints_input(x, inputs)
    }
    fn input_bytes(&self, x: usize, _: &Inputs) -> u128 {
        4 * x as u128
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ImageSize;
    use crate::kernel::{unit_call, Registry};

    fn ints(d: Data) -> Vec<i32> {
        match d {
            Data::Ints(v) => v,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn inc_adds_ten() {
        assert_eq!(inc(vec![0, 5, -3]), vec![10, 15, 7]);
    }

    #[test]
    fn kernels_compute_what_they_claim() {
        let reg = Registry::builtin();
        let cfg = Inputs::default();
        let run = |name: &str, x| {
            let k = reg.get(name).unwrap();
            unit_call(&k.op(), k.input(x, &cfg).unwrap())
        };
        let input = ints(reg.get("qsort").unwrap().input(1000, &cfg).unwrap());
        let mut sorted = input.clone();
        sorted.sort();
        assert_eq!(ints(run("qsort", 1000)), sorted);
        assert_eq!(ints(run("nop", 1000)), input);
        let incd: Vec<i32> = input.iter().map(|v| v + 10).collect();
        assert_eq!(ints(run("inc", 1000)), incd);
    }

    #[test]
    fn histogram_counts_every_channel_of_every_pixel() {
        let img = ImageSize::Small.image();
        let h = histogram(&img);
        assert_eq!(h.len(), HISTOGRAM_KEYS);
        let px = (img.width * img.height) as u64;
        for c in 0..3 {
            assert_eq!(h[c * 256..(c + 1) * 256].iter().sum::<u64>(), px);
        }
        // Uneven, like a photo: many distinct values are used.
        assert!(h.iter().filter(|&&v| v > 0).count() > 300);
        // Against a direct count of one key.
        let reds_at_100 = img.rgb.chunks_exact(3).filter(|p| p[0] == 100).count() as u64;
        assert_eq!(h[100], reds_at_100);
    }

    #[test]
    fn reductions() {
        let mut a = vec![1, 2, 3];
        add_into(&mut a, &[10, 20, 30]);
        assert_eq!(a, vec![11, 22, 33]);
        let Op::ReducePerKey(f) = ReducePerKey.op() else {
            panic!()
        };
        assert_eq!(f(3, &[1, 2, 3, 4]), 10);
    }

    #[test]
    fn map_unit_input_is_a_batch_of_shared_images() {
        let d = Map.input(3, &Inputs::default()).unwrap();
        let Data::Batch(b) = &d else { panic!() };
        assert_eq!(b.len(), 3);
        let out = unit_call(&Map.op(), d);
        let Data::Batch(hs) = out else { panic!() };
        assert_eq!(hs.len(), 3);
    }
}

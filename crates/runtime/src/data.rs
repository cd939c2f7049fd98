//! [`Data`]: the element type of programs built from terms, and the synthetic inputs of
//! the built-in kernels (integer arrays, RGB images).
//!
//! The typed API ([`crate::pattern`]) is generic over element types; the term-driven path
//! instantiates it with `Data`, so both share one implementation. Kernels declare which
//! [`DataKind`] they take and produce, which lets a plan reject `pipe(map, inc)` before
//! running it.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, OnceLock};

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::KernelError;

/// Bytes of a cache line (x86-64 and most of AArch64), the spare room after a copied
/// array (see [`Data::try_clone`]).
pub const CACHE_LINE: usize = 64;

/// One element flowing through a term-driven program.
pub enum Data {
    /// An integer array (the input of `nop`, `inc`, `qsort`).
    Ints(Vec<i32>),
    /// A floating-point array (a block of a matrix, row by row).
    Floats(Vec<f64>),
    /// An RGB image, shared (a job replicates one image by pointer, as the paper does).
    Image(Arc<Image>),
    /// A list of elements: one MapReduce job, or the operands of a reduction.
    Batch(Vec<Data>),
    /// A dense keyed collection: value of key `k` at index `k` (a histogram).
    Counts(Vec<u64>),
    /// Anything a user kernel needs.
    Other(Box<dyn Any + Send + Sync>),
}

/// The shape of a [`Data`], for checking that stages fit together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataKind {
    Ints,
    Floats,
    Image,
    Batch,
    Counts,
    Other,
    /// Accepts or produces any kind (e.g. `nop`).
    Any,
}

impl DataKind {
    /// Whether a producer of `self` may feed a consumer of `into`.
    pub fn fits(self, into: DataKind) -> bool {
        self == into || self == DataKind::Any || into == DataKind::Any
    }
}

impl fmt::Display for DataKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DataKind::Ints => "an integer array",
            DataKind::Floats => "a floating-point array",
            DataKind::Image => "an image",
            DataKind::Batch => "a batch of elements",
            DataKind::Counts => "a keyed collection",
            DataKind::Other => "a custom value",
            DataKind::Any => "any element",
        })
    }
}

impl Data {
    pub fn kind(&self) -> DataKind {
        match self {
            Data::Ints(_) => DataKind::Ints,
            Data::Floats(_) => DataKind::Floats,
            Data::Image(_) => DataKind::Image,
            Data::Batch(_) => DataKind::Batch,
            Data::Counts(_) => DataKind::Counts,
            Data::Other(_) => DataKind::Other,
        }
    }

    /// Deep copy, where the data can be copied (`Other` cannot; images are shared).
    ///
    /// Arrays are copied with a cache line of spare capacity after their end. Copies made
    /// one after the other (a stream's elements, a unit test's inputs) then never share a
    /// cache line, so two threads working on consecutive elements do not write the same
    /// line. (This did not remove the slowdown of `tpool(2, seq(inc, ·))` on small arrays
    /// it was aimed at: that is measured over gaps of kilobytes too, most likely the
    /// prefetchers reaching into the neighbouring array — docs/runtime.md, "Pitfalls found while measuring".)
    pub fn try_clone(&self) -> Option<Data> {
        fn padded<T: Copy>(v: &[T]) -> Vec<T> {
            let spare = CACHE_LINE.div_ceil(std::mem::size_of::<T>().max(1));
            let mut c = Vec::with_capacity(v.len() + spare);
            c.extend_from_slice(v);
            c
        }
        Some(match self {
            Data::Ints(v) => Data::Ints(padded(v)),
            Data::Floats(v) => Data::Floats(padded(v)),
            Data::Image(i) => Data::Image(Arc::clone(i)),
            Data::Batch(b) => Data::Batch(b.iter().map(Data::try_clone).collect::<Option<_>>()?),
            Data::Counts(c) => Data::Counts(padded(c)),
            Data::Other(_) => return None,
        })
    }

    /// Write one word in every cache line of the element (its value unchanged), so that
    /// the lines are modified in the cache of the core running this thread: the state a
    /// block leaves its output in, and the one the next stage of a `pipe` finds it in on
    /// another core. Shared images and custom values are left alone.
    pub fn touch(&mut self) {
        fn lines<T: Copy>(v: &mut [T]) {
            let step = (CACHE_LINE / std::mem::size_of::<T>().max(1)).max(1);
            for e in v.iter_mut().step_by(step) {
                // The value read, written back through an opaque identity: a store the
                // compiler keeps, the value unchanged.
                *e = std::hint::black_box(*e);
            }
        }
        match self {
            Data::Ints(v) => lines(v),
            Data::Floats(v) => lines(v),
            Data::Counts(c) => lines(c),
            Data::Batch(b) => b.iter_mut().for_each(Data::touch),
            Data::Image(_) | Data::Other(_) => {}
        }
    }

    /// Bytes held by this element, counting a shared image once per reference (an
    /// estimate for memory checks, not an allocator statistic).
    pub fn bytes(&self) -> u64 {
        match self {
            Data::Ints(v) => 4 * v.len() as u64,
            Data::Floats(v) => 8 * v.len() as u64,
            Data::Image(_) => 16,
            Data::Batch(b) => b.iter().map(Data::bytes).sum::<u64>() + 8,
            Data::Counts(c) => 8 * c.len() as u64,
            Data::Other(_) => 0,
        }
    }
}

impl fmt::Debug for Data {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Data::Ints(v) => write!(f, "Ints(len {})", v.len()),
            Data::Floats(v) => write!(f, "Floats(len {})", v.len()),
            Data::Image(i) => write!(f, "Image({}x{})", i.width, i.height),
            Data::Batch(b) => write!(f, "Batch(len {})", b.len()),
            Data::Counts(c) => write!(f, "Counts(len {})", c.len()),
            Data::Other(_) => write!(f, "Other(..)"),
        }
    }
}

/// Deterministic pseudo-random integers in `0..2^30` for an array of length `len`: the
/// same `(len, seed)` always gives the same array. Fails cleanly when memory cannot be
/// reserved.
pub fn random_ints(len: usize, seed: u64) -> Result<Vec<i32>, KernelError> {
    let mut v: Vec<i32> = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| KernelError::OutOfMemory {
            what: format!("an integer array of {len} elements"),
            bytes: 4 * len as u128,
        })?;
    let mut rng =
        ChaCha8Rng::seed_from_u64(seed ^ (len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    v.extend((0..len).map(|_| (rng.next_u32() >> 2) as i32));
    Ok(v)
}

/// An RGB image, 8 bits per channel, row-major, channels interleaved.
pub struct Image {
    pub width: usize,
    pub height: usize,
    pub rgb: Vec<u8>,
}

/// The three resolutions of the paper's test picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum ImageSize {
    /// 341 × 227
    #[default]
    Small,
    /// 1024 × 681
    Medium,
    /// 3072 × 2048
    Large,
}

impl ImageSize {
    pub const ALL: [ImageSize; 3] = [ImageSize::Small, ImageSize::Medium, ImageSize::Large];

    pub fn dimensions(self) -> (usize, usize) {
        match self {
            ImageSize::Small => (341, 227),
            ImageSize::Medium => (1024, 681),
            ImageSize::Large => (3072, 2048),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ImageSize::Small => "small",
            ImageSize::Medium => "medium",
            ImageSize::Large => "large",
        }
    }

    pub fn parse(s: &str) -> Option<ImageSize> {
        ImageSize::ALL.into_iter().find(|i| i.name() == s)
    }

    /// The synthetic image of this size, generated once per process and shared.
    pub fn image(self) -> Arc<Image> {
        static CACHE: [OnceLock<Arc<Image>>; 3] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let slot = &CACHE[self as usize];
        Arc::clone(slot.get_or_init(|| {
            let (w, h) = self.dimensions();
            Arc::new(Image::synthetic(w, h, 15))
        }))
    }
}

impl Image {
    /// A deterministic photo-like test image: smooth colour gradients and blobs (so the
    /// histogram is uneven, like a real picture's) plus a little noise.
    pub fn synthetic(width: usize, height: usize, seed: u64) -> Image {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut noise = vec![0u8; width * height * 3];
        rng.fill_bytes(&mut noise);
        let mut rgb = Vec::with_capacity(width * height * 3);
        let (fw, fh) = (width.max(1) as f32, height.max(1) as f32);
        for y in 0..height {
            let v = y as f32 / fh;
            for x in 0..width {
                let u = x as f32 / fw;
                let d = ((u - 0.6) * (u - 0.6) + (v - 0.4) * (v - 0.4)).sqrt();
                let blob = (1.0 - (d * 3.0).min(1.0)) * 120.0;
                let i = 3 * (y * width + x);
                let n = |c: usize| (noise[i + c] % 24) as f32;
                rgb.push((60.0 + 100.0 * u + blob + n(0)).min(255.0) as u8);
                rgb.push((30.0 + 150.0 * v * (1.0 - u) + n(1)).min(255.0) as u8);
                rgb.push((200.0 - 120.0 * v + blob * 0.5 + n(2)).min(255.0) as u8);
            }
        }
        Image { width, height, rgb }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_leave_a_cache_line_after_the_array() {
        let d = Data::Ints(vec![1, 2, 3]);
        let Some(Data::Ints(c)) = d.try_clone() else {
            panic!("not copied")
        };
        assert_eq!(c, vec![1, 2, 3]);
        assert!(c.capacity() * 4 >= 3 * 4 + CACHE_LINE, "{}", c.capacity());
        let Some(Data::Counts(c)) = Data::Counts(vec![7; 5]).try_clone() else {
            panic!("not copied")
        };
        assert_eq!(c, vec![7; 5]);
        assert!(c.capacity() * 8 >= 5 * 8 + CACHE_LINE, "{}", c.capacity());
    }

    #[test]
    fn touching_writes_nothing_new() {
        let ints: Vec<i32> = (0..1000).collect();
        let mut d = Data::Batch(vec![
            Data::Ints(ints.clone()),
            Data::Counts(vec![3; 100]),
            Data::Image(ImageSize::Small.image()),
        ]);
        d.touch();
        let Data::Batch(b) = d else { panic!() };
        assert!(matches!(&b[0], Data::Ints(v) if *v == ints));
        assert!(matches!(&b[1], Data::Counts(c) if *c == vec![3; 100]));
    }

    #[test]
    fn random_ints_are_deterministic_and_sized() {
        let a = random_ints(1000, 7).unwrap();
        assert_eq!(a, random_ints(1000, 7).unwrap());
        assert_eq!(a.len(), 1000);
        assert_ne!(a, random_ints(1000, 8).unwrap());
        assert!(a.iter().all(|&v| v >= 0));
    }

    #[test]
    fn absurd_sizes_fail_cleanly() {
        assert!(matches!(
            random_ints(usize::MAX / 2, 0),
            Err(KernelError::OutOfMemory { .. })
        ));
    }

    #[test]
    fn images_have_the_seed_resolutions() {
        let img = ImageSize::Small.image();
        assert_eq!((img.width, img.height), (341, 227));
        assert_eq!(img.rgb.len(), 341 * 227 * 3);
        assert!(Arc::ptr_eq(&img, &ImageSize::Small.image()));
        assert_eq!(ImageSize::parse("medium"), Some(ImageSize::Medium));
    }
}

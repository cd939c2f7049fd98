//! How traces are read: the bound on actions buffered from a shared trace, and how dPerf's
//! compute amounts are taken.

/// How compute amounts of dPerf's older form are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LegacyCompute {
    /// As SimGrid MSG's action replay reads them: flops, divided by the host speed.
    #[default]
    Flops,
    /// As dPerf measured them: nanoseconds of the reference machine, whatever the host.
    Nanoseconds,
}

/// Options of trace reading.
#[derive(Clone, Copy, Debug)]
pub struct ReaderOptions {
    /// Most actions buffered for ranks that are behind when reading a shared trace.
    pub window: usize,
    pub legacy_compute: LegacyCompute,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            window: DEFAULT_WINDOW,
            legacy_compute: LegacyCompute::Flops,
        }
    }
}

/// Default bound on actions buffered ahead from a shared trace file.
pub const DEFAULT_WINDOW: usize = 1 << 20;

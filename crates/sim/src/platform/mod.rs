//! Platform descriptions: hosts, links and routes, read from SimGrid's platform XML.
//!
//! We read the subset of SimGrid 3.32's `<platform version="4.1">` format that describes one
//! network zone, so that `perfcompose simulate` and `smpirun -replay` can be run on the same
//! file:
//!
//! - `<zone routing="Full">` (or its old name `<AS>`) with `<host id speed [core]>`,
//!   `<link id bandwidth [latency] [sharing_policy]>` (`SHARED`, `FATPIPE`, `SPLITDUPLEX`,
//!   and the deprecated `FULLDUPLEX` as SimGrid maps it) and
//!   `<route src dst [symmetrical]>` of `<link_ctn id [direction]>`;
//! - `<cluster id prefix radical suffix speed [core] bw lat [sharing_policy] [bb_bw]
//!   [bb_lat] [bb_sharing_policy] [limiter_link] [loopback_bw] [loopback_lat]>`, built the
//!   way SimGrid builds a flat cluster: a private link per host (split into `_UP`/`_DOWN`
//!   for `SPLITDUPLEX`, the default), an optional backbone, routes up from the source and
//!   down to the destination, each link counted once;
//! - `<prop>` and `<config>` elements are ignored, each with a note the caller can show.
//!
//! Anything else (hierarchical zones, `zoneRoute`, other routings, torus/fat-tree
//! clusters, availability profiles) is an error naming the element and its position,
//! never a silent approximation.
//!
//! Routing follows SimGrid: a Full zone gives a host without a route to itself the model's
//! loopback link (`__loopback__`, 10 GBps, no latency, FATPIPE); routes are symmetrical by
//! default, the reverse route runs the links backwards and swaps `UP`/`DOWN` of split-duplex
//! links.
//!
//! The files, each importing only those above it in this list:
//!
//! - `model`: the platform as the simulator sees it ([`Platform`], [`Host`], [`Link`]) and
//!   its routing.
//! - `hostfile`: which host each rank runs on ([`read_hostfile`]).
//! - `xml`: the XML reader: checks and units of attributes, the top level, and
//!   [`Platform::parse`].
//! - `zone`, `cluster`: the reader's methods for a Full zone (hosts, links, routes) and for
//!   a flat cluster.

mod cluster;
mod hostfile;
mod model;
mod xml;
mod zone;

pub use hostfile::read_hostfile;
pub use model::{
    Host, HostId, Link, LinkId, Platform, Route, Sharing, LOOPBACK_BANDWIDTH, LOOPBACK_LATENCY,
};

#[cfg(test)]
mod tests;

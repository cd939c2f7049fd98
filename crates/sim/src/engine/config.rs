//! Replay options: the network model and SMPI's thresholds, with SimGrid's defaults.

use crate::coll::Selection;
use crate::trace::ReaderOptions;

/// SMPI's `smpi/send-is-detached-thresh` default (bytes).
pub const DETACHED_THRESHOLD: f64 = 65536.0;
/// SMPI adds this envelope (tag, destination, communicator) to every message's size.
pub const ENVELOPE_BYTES: f64 = 16.0;
/// SMPI's `smpi/test` default: simulated time injected by each `MPI_Test`.
pub const TEST_SLEEP: f64 = 1e-4;

/// How the network shares bandwidth (serialized by its [`NetworkModel::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
pub enum NetworkModel {
    /// Each message alone on its route: latency + size / narrowest bandwidth.
    #[serde(rename = "latency-bandwidth")]
    LatencyBandwidth,
    /// Flow-level weighted max-min sharing, as SimGrid's CM02 model.
    #[default]
    #[serde(rename = "maxmin")]
    MaxMin,
}

impl NetworkModel {
    pub fn name(self) -> &'static str {
        match self {
            NetworkModel::LatencyBandwidth => "latency-bandwidth",
            NetworkModel::MaxMin => "maxmin",
        }
    }
}

/// Simulation options. `Default` is SimGrid 3.32's CM02 with `TCP-gamma` 0 and no cross
/// traffic, and SMPI's default thresholds and collectives.
#[derive(Clone, Debug)]
pub struct Config {
    pub network: NetworkModel,
    /// `smpi/send-is-detached-thresh` (bytes).
    pub detached_threshold: f64,
    /// `network/latency-factor` (CM02: 1).
    pub latency_factor: f64,
    /// `network/bandwidth-factor` (CM02: 1).
    pub bandwidth_factor: f64,
    /// `network/TCP-gamma` (bytes); 0 disables the window bound.
    pub tcp_gamma: f64,
    pub envelope_bytes: f64,
    pub coll: Selection,
    pub reader: ReaderOptions,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            network: NetworkModel::MaxMin,
            detached_threshold: DETACHED_THRESHOLD,
            latency_factor: 1.0,
            bandwidth_factor: 1.0,
            tcp_gamma: 0.0,
            envelope_bytes: ENVELOPE_BYTES,
            coll: Selection::default(),
            reader: ReaderOptions::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::NetworkModel;

    #[test]
    fn network_models_serialize_by_their_names() {
        for m in [NetworkModel::LatencyBandwidth, NetworkModel::MaxMin] {
            assert_eq!(serde_json::to_value(m).unwrap(), m.name());
        }
    }
}

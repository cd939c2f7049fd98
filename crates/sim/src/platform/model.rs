//! The platform as the simulator sees it: hosts, links (split-duplex ones expanded), and
//! the routing that gives the links between two hosts.

use std::collections::HashMap;

/// Index of a host in [`Platform::hosts`].
pub type HostId = u32;
/// Index of a link in [`Platform::links`].
pub type LinkId = u32;

/// Bandwidth of SimGrid's implicit loopback link (`network/loopback-bw`, 10 GBps).
pub const LOOPBACK_BANDWIDTH: f64 = 10e9;
/// Latency of SimGrid's implicit loopback link (`network/loopback-lat`).
pub const LOOPBACK_LATENCY: f64 = 0.0;

/// A compute node.
#[derive(Clone, Debug, PartialEq)]
pub struct Host {
    pub name: String,
    /// flop/s of one core (the first power state when several are listed).
    pub speed: f64,
    pub cores: u32,
}

/// How concurrent flows share a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Sharing {
    /// The flows' rates add up to at most the bandwidth.
    Shared,
    /// Each flow alone is limited by the bandwidth; flows do not interfere.
    Fatpipe,
}

/// A network link after expansion (a split-duplex link is two of these).
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub name: String,
    /// byte/s.
    pub bandwidth: f64,
    /// seconds.
    pub latency: f64,
    pub sharing: Sharing,
}

/// How routes between hosts are found.
#[derive(Clone, Debug)]
pub(super) enum Routing {
    /// Explicit routes per ordered pair (a Full zone).
    Full(HashMap<(HostId, HostId), Box<[LinkId]>>),
    /// A flat cluster: up links from the source, down links to the destination.
    Star {
        up: Vec<Box<[LinkId]>>,
        down: Vec<Box<[LinkId]>>,
        loopback: Vec<Option<LinkId>>,
    },
}

/// A platform: hosts, links and routes. Immutable once read.
#[derive(Clone, Debug)]
pub struct Platform {
    pub(super) origin: String,
    pub(super) hosts: Vec<Host>,
    pub(super) host_index: HashMap<String, HostId>,
    pub(super) links: Vec<Link>,
    pub(super) routing: Routing,
    pub(super) notes: Vec<String>,
}

/// A route from one host to another.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    pub links: Vec<LinkId>,
    /// Sum of the links' latencies (seconds).
    pub latency: f64,
}

impl Platform {
    /// The input's name (file path).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    pub fn links(&self) -> &[Link] {
        &self.links
    }

    pub fn host(&self, id: HostId) -> &Host {
        &self.hosts[id as usize]
    }

    pub fn link(&self, id: LinkId) -> &Link {
        &self.links[id as usize]
    }

    pub fn host_by_name(&self, name: &str) -> Option<HostId> {
        self.host_index.get(name).copied()
    }

    /// The same platform with every host `factor` times as fast (dPerf's what-if "cores
    /// `factor`× faster"); `factor` must be positive and finite.
    pub fn with_speeds_scaled(mut self, factor: f64) -> Platform {
        for h in &mut self.hosts {
            h.speed *= factor;
        }
        self
    }

    /// Things in the file that were read but have no effect here (properties, configs).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Hosts in SimGrid's default deployment order (lexicographic by name), used when no
    /// hostfile is given.
    pub fn hosts_sorted_by_name(&self) -> Vec<HostId> {
        let mut ids: Vec<HostId> = (0..self.hosts.len() as HostId).collect();
        ids.sort_by(|a, b| {
            self.hosts[*a as usize]
                .name
                .cmp(&self.hosts[*b as usize].name)
        });
        ids
    }

    /// The route from `src` to `dst`, written into `out` (cleared first); returns the
    /// route's latency, or None when the platform has no route between them.
    pub fn route_into(&self, src: HostId, dst: HostId, out: &mut Vec<LinkId>) -> Option<f64> {
        out.clear();
        match &self.routing {
            Routing::Full(table) => {
                let r = table.get(&(src, dst))?;
                out.extend_from_slice(r);
            }
            Routing::Star { up, down, loopback } => {
                if src == dst {
                    if let Some(l) = loopback[src as usize] {
                        out.push(l);
                        return Some(self.links[l as usize].latency);
                    }
                }
                for &l in up[src as usize].iter().chain(down[dst as usize].iter()) {
                    if !out.contains(&l) {
                        out.push(l);
                    }
                }
            }
        }
        Some(out.iter().map(|&l| self.links[l as usize].latency).sum())
    }

    /// The route from `src` to `dst`, or None.
    pub fn route(&self, src: HostId, dst: HostId) -> Option<Route> {
        let mut links = Vec::new();
        let latency = self.route_into(src, dst, &mut links)?;
        Some(Route { links, latency })
    }
}

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

use std::collections::HashMap;

use perfcompose_core::diag::{Diagnostic, Span};

use crate::trace::MAX_RANKS;
use crate::units::{parse_quantity, Quantity};

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
enum Routing {
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
    origin: String,
    hosts: Vec<Host>,
    host_index: HashMap<String, HostId>,
    links: Vec<Link>,
    routing: Routing,
    notes: Vec<String>,
}

/// A route from one host to another.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    pub links: Vec<LinkId>,
    /// Sum of the links' latencies (seconds).
    pub latency: f64,
}

impl Platform {
    /// Read a platform file.
    pub fn from_file(path: &std::path::Path) -> Result<Platform, Diagnostic> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            Diagnostic::whole(origin.clone(), format!("cannot read platform file: {e}"))
        })?;
        Platform::parse(&origin, &text)
    }

    /// Parse platform XML; `origin` names the input in errors.
    pub fn parse(origin: &str, text: &str) -> Result<Platform, Diagnostic> {
        Parser::new(origin, text).parse()
    }

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

/// Reads a hostfile: one host name per line, or `name:count` for `count` consecutive
/// ranks (as `smpirun` unrolls it); blank lines are skipped. Returns the host of each
/// slot; rank `r` runs on slot `r % len`, so at most [`MAX_RANKS`] slots are useful and
/// more are an error.
pub fn read_hostfile(
    origin: &str,
    text: &str,
    platform: &Platform,
) -> Result<Vec<HostId>, Diagnostic> {
    let mut hosts = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let trimmed = content.trim();
        let lead = content.len() - content.trim_start().len();
        let start = offset + lead;
        offset += line.len();
        if trimmed.is_empty() {
            continue;
        }
        let (name, count, count_span) = match trimmed.rsplit_once(':') {
            Some((n, c)) => {
                let c_off = start + n.len() + 1;
                let count: usize = c.trim().parse().map_err(|_| {
                    Diagnostic::new(
                        origin,
                        text,
                        Span::new(c_off, c_off + c.len()),
                        format!("bad process count '{c}' in hostfile"),
                    )
                    .with_hint("write `host` or `host:count` with a whole number")
                })?;
                (n.trim(), count, Span::new(c_off, c_off + c.len()))
            }
            None => (trimmed, 1, Span::new(start, start + trimmed.len())),
        };
        let id = platform.host_by_name(name).ok_or_else(|| {
            Diagnostic::new(
                origin,
                text,
                Span::new(start, start + name.len()),
                format!("host '{name}' is not in the platform {}", platform.origin()),
            )
            .with_hint(host_hint(platform))
        })?;
        if count > MAX_RANKS as usize - hosts.len() {
            return Err(Diagnostic::new(
                origin,
                text,
                count_span,
                format!("the hostfile lists more than {MAX_RANKS} process slots"),
            )
            .with_hint(
                "a trace has at most that many ranks; the extra slots would never be used",
            ));
        }
        hosts.resize(hosts.len() + count, id);
    }
    if hosts.is_empty() {
        return Err(Diagnostic::whole(origin, "the hostfile lists no host"));
    }
    Ok(hosts)
}

fn host_hint(platform: &Platform) -> String {
    let names: Vec<&str> = platform
        .hosts_sorted_by_name()
        .iter()
        .take(5)
        .map(|&h| platform.host(h).name.as_str())
        .collect();
    format!(
        "the platform has {} hosts, e.g. {}",
        platform.hosts().len(),
        names.join(", ")
    )
}

/// A link as declared, before split-duplex expansion.
enum Declared {
    Single(LinkId),
    Split { up: LinkId, down: LinkId },
}

struct Parser<'a> {
    origin: &'a str,
    text: &'a str,
    hosts: Vec<Host>,
    host_index: HashMap<String, HostId>,
    links: Vec<Link>,
    declared: HashMap<String, Declared>,
    notes: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Up,
    Down,
    None,
}

impl<'a> Parser<'a> {
    fn new(origin: &'a str, text: &'a str) -> Parser<'a> {
        Parser {
            origin,
            text,
            hosts: Vec::new(),
            host_index: HashMap::new(),
            links: Vec::new(),
            declared: HashMap::new(),
            notes: Vec::new(),
        }
    }

    fn err(&self, span: std::ops::Range<usize>, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.origin, self.text, Span::new(span.start, span.end), msg)
    }

    /// Span of an element's start tag name (for "unsupported element" errors).
    fn tag_span(&self, node: roxmltree::Node) -> std::ops::Range<usize> {
        let r = node.range();
        let name_len = node.tag_name().name().len();
        // `<` then the name
        (r.start + 1)..(r.start + 1 + name_len).min(self.text.len())
    }

    fn attr_span(&self, node: roxmltree::Node, name: &str) -> std::ops::Range<usize> {
        node.attributes()
            .find(|a| a.name() == name)
            .map(|a| a.range_value())
            .unwrap_or_else(|| self.tag_span(node))
    }

    fn required<'n>(
        &self,
        node: roxmltree::Node<'n, 'n>,
        name: &str,
    ) -> Result<&'n str, Diagnostic> {
        node.attribute(name).ok_or_else(|| {
            self.err(
                self.tag_span(node),
                format!(
                    "<{}> lacks the required attribute '{}'",
                    node.tag_name().name(),
                    name
                ),
            )
        })
    }

    fn check_attrs(&self, node: roxmltree::Node, allowed: &[&str]) -> Result<(), Diagnostic> {
        for a in node.attributes() {
            if !allowed.contains(&a.name()) {
                return Err(self
                    .err(
                        a.range(),
                        format!(
                            "unsupported attribute '{}' on <{}>",
                            a.name(),
                            node.tag_name().name()
                        ),
                    )
                    .with_hint(format!("supported here: {}", allowed.join(", "))));
            }
        }
        Ok(())
    }

    fn quantity(&self, node: roxmltree::Node, name: &str, q: Quantity) -> Result<f64, Diagnostic> {
        let value = self.required(node, name)?;
        self.quantity_of(node, name, value, q)
    }

    fn quantity_of(
        &self,
        node: roxmltree::Node,
        name: &str,
        value: &str,
        q: Quantity,
    ) -> Result<f64, Diagnostic> {
        let span = self.attr_span(node, name);
        match parse_quantity(value, q) {
            Ok(v) if v >= 0.0 => Ok(v),
            Ok(_) => Err(self.err(span, format!("{name} must not be negative"))),
            Err(e) => {
                let start = (span.start + e.offset).min(span.end);
                let mut d = self.err(start..span.end, e.message);
                if let Some(h) = e.hint {
                    d = d.with_hint(h);
                }
                Err(d)
            }
        }
    }

    /// The first power state of a comma-separated speed list.
    fn speed(&mut self, node: roxmltree::Node) -> Result<f64, Diagnostic> {
        let value = self.required(node, "speed")?;
        let first = value.split(',').next().unwrap_or("");
        let v = self.quantity_of(node, "speed", first, Quantity::Speed)?;
        if v <= 0.0 {
            return Err(self.err(self.attr_span(node, "speed"), "speed must be positive"));
        }
        if value.contains(',') {
            let pos = self.pos(node);
            self.notes.push(format!(
                "{pos}: several power states listed; the first ({v} flop/s) is used"
            ));
        }
        Ok(v)
    }

    fn cores(&self, node: roxmltree::Node) -> Result<u32, Diagnostic> {
        match node.attribute("core") {
            None => Ok(1),
            Some(c) => c
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&c| c > 0)
                .ok_or_else(|| {
                    self.err(
                        self.attr_span(node, "core"),
                        format!("core count '{c}' is not a positive whole number"),
                    )
                }),
        }
    }

    fn pos(&self, node: roxmltree::Node) -> String {
        let (l, c) = perfcompose_core::diag::line_col(self.text, node.range().start);
        format!("{}:{}:{}", self.origin, l, c)
    }

    fn add_host(
        &mut self,
        node: roxmltree::Node,
        name: String,
        speed: f64,
        cores: u32,
    ) -> Result<HostId, Diagnostic> {
        if self.host_index.contains_key(&name) {
            return Err(self.err(
                self.tag_span(node),
                format!("host '{name}' is declared twice"),
            ));
        }
        let id = self.hosts.len() as HostId;
        self.host_index.insert(name.clone(), id);
        self.hosts.push(Host { name, speed, cores });
        Ok(id)
    }

    fn add_link(&mut self, name: String, bandwidth: f64, latency: f64, sharing: Sharing) -> LinkId {
        let id = self.links.len() as LinkId;
        self.links.push(Link {
            name,
            bandwidth,
            latency,
            sharing,
        });
        id
    }

    fn declare(
        &mut self,
        node: roxmltree::Node,
        name: &str,
        d: Declared,
    ) -> Result<(), Diagnostic> {
        if self.declared.contains_key(name) {
            return Err(self.err(
                self.tag_span(node),
                format!("link '{name}' is declared twice"),
            ));
        }
        self.declared.insert(name.to_string(), d);
        Ok(())
    }

    fn unsupported(&self, node: roxmltree::Node, context: &str) -> Diagnostic {
        let name = node.tag_name().name();
        let hint = match name {
            "zoneRoute" | "ASroute" | "bypassZoneRoute" | "bypassASroute" => {
                "hierarchical platforms (several zones joined by zoneRoute) are not supported; describe one Full zone or one cluster"
            }
            "router" => "routers are not supported; list the links of each route between hosts",
            "bypassRoute" => "bypass routes are not supported",
            "trace" | "trace_connect" => "availability and state profiles are not supported",
            "actor" | "process" => "deployment belongs in a hostfile, not in the platform",
            "disk" | "storage" | "mount" | "storage_type" => "disks and storage are not simulated",
            "peer" | "cabinet" | "host_link" | "backbone" => "use <cluster> or a Full zone",
            "include" => "inline the included file",
            _ => "supported elements: platform, zone (routing=\"Full\"), host, link, route, link_ctn, cluster, prop, config",
        };
        self.err(
            self.tag_span(node),
            format!("unsupported element <{name}> in {context}"),
        )
        .with_hint(hint)
    }

    fn parse(mut self) -> Result<Platform, Diagnostic> {
        let opts = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        let doc = roxmltree::Document::parse_with_options(self.text, opts).map_err(|e| {
            let p = e.pos();
            let off = (perfcompose_core::diag::line_offset(self.text, p.row as usize)
                + (p.col as usize).saturating_sub(1))
            .min(self.text.len());
            Diagnostic::new(
                self.origin,
                self.text,
                Span::at(off),
                format!("malformed XML: {e}"),
            )
        })?;
        let root = doc.root_element();
        if root.tag_name().name() != "platform" {
            return Err(self.err(
                self.tag_span(root),
                format!("expected <platform>, found <{}>", root.tag_name().name()),
            ));
        }
        self.check_attrs(root, &["version"])?;
        let version = root.attribute("version").unwrap_or("0.0");
        let major: f64 = version.trim().parse().unwrap_or(0.0);
        if major < 4.0 {
            return Err(self
                .err(
                    self.attr_span(root, "version"),
                    format!("platform version '{version}' is not supported"),
                )
                .with_hint("write <platform version=\"4.1\"> (SimGrid's current format; older versions had unit-less values)"));
        }
        let mut zone: Option<roxmltree::Node> = None;
        for child in root.children().filter(|n| n.is_element()) {
            match child.tag_name().name() {
                "config" => self.config(child)?,
                "zone" | "AS" | "cluster" => {
                    if let Some(first) = zone {
                        return Err(self
                            .err(
                                self.tag_span(child),
                                format!(
                                    "a second top-level <{}> (the first is at {})",
                                    child.tag_name().name(),
                                    self.pos(first)
                                ),
                            )
                            .with_hint("several zones need zoneRoute, which is not supported; describe one zone"));
                    }
                    zone = Some(child);
                }
                _ => return Err(self.unsupported(child, "<platform>")),
            }
        }
        let zone = zone.ok_or_else(|| {
            self.err(
                self.tag_span(root),
                "the platform declares no zone and no cluster",
            )
        })?;
        let routing = if zone.tag_name().name() == "cluster" {
            self.cluster(zone)?
        } else {
            self.zone(zone)?
        };
        if self.hosts.is_empty() {
            return Err(self.err(self.tag_span(zone), "the platform declares no host"));
        }
        Ok(Platform {
            origin: self.origin.to_string(),
            hosts: self.hosts,
            host_index: self.host_index,
            links: self.links,
            routing,
            notes: self.notes,
        })
    }

    fn config(&mut self, node: roxmltree::Node) -> Result<(), Diagnostic> {
        for p in node.children().filter(|n| n.is_element()) {
            if p.tag_name().name() != "prop" {
                return Err(self.unsupported(p, "<config>"));
            }
            let id = p.attribute("id").unwrap_or("?");
            let value = p.attribute("value").unwrap_or("?");
            let pos = self.pos(p);
            self.notes.push(format!(
                "{pos}: <config> property {id}={value} ignored; pass simulator options on the command line"
            ));
        }
        Ok(())
    }

    fn props(&mut self, node: roxmltree::Node) {
        let n = node
            .children()
            .filter(|c| c.is_element() && c.tag_name().name() == "prop")
            .count();
        if n > 0 {
            let pos = self.pos(node);
            self.notes.push(format!(
                "{pos}: {n} <prop> of <{}> ignored (properties do not change the simulation)",
                node.tag_name().name()
            ));
        }
    }

    fn zone(&mut self, zone: roxmltree::Node) -> Result<Routing, Diagnostic> {
        self.check_attrs(zone, &["id", "routing"])?;
        let elements: Vec<roxmltree::Node> = zone.children().filter(|n| n.is_element()).collect();
        // A zone whose only content is a cluster is that cluster (a common way to write it).
        let non_prop: Vec<&roxmltree::Node> = elements
            .iter()
            .filter(|n| n.tag_name().name() != "prop")
            .collect();
        if non_prop.len() == 1 && non_prop[0].tag_name().name() == "cluster" {
            self.props(zone);
            return self.cluster(*non_prop[0]);
        }
        let routing = self.required(zone, "routing")?;
        if routing != "Full" {
            return Err(self
                .err(
                    self.attr_span(zone, "routing"),
                    format!("zone routing '{routing}' is not supported"),
                )
                .with_hint("use routing=\"Full\" with explicit routes, or a <cluster>"));
        }
        self.props(zone);
        let mut routes: Vec<roxmltree::Node> = Vec::new();
        for child in &elements {
            let child = *child;
            match child.tag_name().name() {
                "prop" => {}
                "host" => {
                    self.check_attrs(child, &["id", "speed", "core", "coordinates", "pstate"])?;
                    let id = self.required(child, "id")?.to_string();
                    let speed = self.speed(child)?;
                    let cores = self.cores(child)?;
                    for c in child.children().filter(|n| n.is_element()) {
                        if c.tag_name().name() != "prop" {
                            return Err(self.unsupported(c, "<host>"));
                        }
                    }
                    self.props(child);
                    self.add_host(child, id, speed, cores)?;
                }
                "link" => {
                    self.check_attrs(child, &["id", "bandwidth", "latency", "sharing_policy"])?;
                    let id = self.required(child, "id")?.to_string();
                    let bw = self.quantity(child, "bandwidth", Quantity::Bandwidth)?;
                    if bw <= 0.0 {
                        return Err(self.err(self.attr_span(child, "bandwidth"), "bandwidth must be positive"));
                    }
                    let lat = match child.attribute("latency") {
                        Some(v) => self.quantity_of(child, "latency", v, Quantity::Time)?,
                        None => 0.0,
                    };
                    for c in child.children().filter(|n| n.is_element()) {
                        if c.tag_name().name() != "prop" {
                            return Err(self.unsupported(c, "<link>"));
                        }
                    }
                    self.props(child);
                    let policy = child.attribute("sharing_policy").unwrap_or("SHARED");
                    match policy {
                        "SHARED" | "FATPIPE" => {
                            let s = if policy == "SHARED" { Sharing::Shared } else { Sharing::Fatpipe };
                            let l = self.add_link(id.clone(), bw, lat, s);
                            self.declare(child, &id, Declared::Single(l))?;
                        }
                        "SPLITDUPLEX" | "FULLDUPLEX" => {
                            if policy == "FULLDUPLEX" {
                                let pos = self.pos(child);
                                self.notes.push(format!("{pos}: FULLDUPLEX is deprecated; read as SPLITDUPLEX (as SimGrid does)"));
                            }
                            let up = self.add_link(format!("{id}_UP"), bw, lat, Sharing::Shared);
                            let down = self.add_link(format!("{id}_DOWN"), bw, lat, Sharing::Shared);
                            self.declare(child, &id, Declared::Split { up, down })?;
                        }
                        other => {
                            return Err(self
                                .err(
                                    self.attr_span(child, "sharing_policy"),
                                    format!("sharing policy '{other}' is not supported"),
                                )
                                .with_hint("use SHARED, FATPIPE or SPLITDUPLEX"))
                        }
                    }
                }
                "route" => routes.push(child),
                "cluster" => {
                    return Err(self
                        .err(self.tag_span(child), "a <cluster> next to other elements of a zone is not supported")
                        .with_hint("joining a cluster to other hosts needs zoneRoute; put the cluster alone in the platform"))
                }
                _ => return Err(self.unsupported(child, "a Full zone")),
            }
        }
        let mut table: HashMap<(HostId, HostId), Box<[LinkId]>> = HashMap::new();
        for r in routes {
            self.route(r, &mut table)?;
        }
        // SimGrid's Full zone gives every host without an explicit self-route the model's
        // loopback link.
        let mut loopback: Option<LinkId> = None;
        for h in 0..self.hosts.len() as HostId {
            if let std::collections::hash_map::Entry::Vacant(e) = table.entry((h, h)) {
                let l = *loopback.get_or_insert_with(|| {
                    let id = self.links.len() as LinkId;
                    self.links.push(Link {
                        name: "__loopback__".into(),
                        bandwidth: LOOPBACK_BANDWIDTH,
                        latency: LOOPBACK_LATENCY,
                        sharing: Sharing::Fatpipe,
                    });
                    id
                });
                e.insert(vec![l].into_boxed_slice());
            }
        }
        Ok(Routing::Full(table))
    }

    fn route(
        &mut self,
        r: roxmltree::Node,
        table: &mut HashMap<(HostId, HostId), Box<[LinkId]>>,
    ) -> Result<(), Diagnostic> {
        self.check_attrs(r, &["src", "dst", "symmetrical"])?;
        let src_name = self.required(r, "src")?;
        let dst_name = self.required(r, "dst")?;
        let src = self.host_index.get(src_name).copied().ok_or_else(|| {
            self.err(
                self.attr_span(r, "src"),
                format!("route source '{src_name}' is not a declared host"),
            )
        })?;
        let dst = self.host_index.get(dst_name).copied().ok_or_else(|| {
            self.err(
                self.attr_span(r, "dst"),
                format!("route destination '{dst_name}' is not a declared host"),
            )
        })?;
        let symmetrical = match r.attribute("symmetrical").unwrap_or("YES") {
            "YES" | "yes" => true,
            "NO" | "no" => false,
            other => {
                return Err(self.err(
                    self.attr_span(r, "symmetrical"),
                    format!("symmetrical must be YES or NO, not '{other}'"),
                ))
            }
        };
        let mut forward = Vec::new();
        let mut backward = Vec::new();
        for c in r.children().filter(|n| n.is_element()) {
            if c.tag_name().name() != "link_ctn" {
                return Err(self.unsupported(c, "<route>"));
            }
            self.check_attrs(c, &["id", "direction"])?;
            let id = self.required(c, "id")?;
            let dir = match c.attribute("direction").unwrap_or("NONE") {
                "UP" => Direction::Up,
                "DOWN" => Direction::Down,
                "NONE" => Direction::None,
                other => {
                    return Err(self.err(
                        self.attr_span(c, "direction"),
                        format!("direction must be UP, DOWN or NONE, not '{other}'"),
                    ))
                }
            };
            let declared = self.declared.get(id).ok_or_else(|| {
                self.err(
                    self.attr_span(c, "id"),
                    format!("link '{id}' is not declared"),
                )
                .with_hint("declare <link id=...> before the routes that use it")
            })?;
            match (declared, dir) {
                (Declared::Single(l), _) => {
                    forward.push(*l);
                    backward.push(*l);
                }
                (Declared::Split { up, down }, Direction::Up) => {
                    forward.push(*up);
                    backward.push(*down);
                }
                (Declared::Split { up, down }, Direction::Down) => {
                    forward.push(*down);
                    backward.push(*up);
                }
                (Declared::Split { .. }, Direction::None) => {
                    return Err(self
                        .err(
                            self.tag_span(c),
                            format!("split-duplex link '{id}' used without a direction"),
                        )
                        .with_hint("add direction=\"UP\" or direction=\"DOWN\""))
                }
            }
        }
        if forward.is_empty() {
            return Err(self.err(
                self.tag_span(r),
                format!("route from '{src_name}' to '{dst_name}' has no link"),
            ));
        }
        backward.reverse();
        if table.contains_key(&(src, dst)) {
            return Err(self
                .err(self.tag_span(r), format!("the route from '{src_name}' to '{dst_name}' already exists"))
                .with_hint("routes are symmetrical by default; do not declare the reverse route too, or set symmetrical=\"NO\""));
        }
        table.insert((src, dst), forward.into_boxed_slice());
        if symmetrical && src != dst {
            if table.contains_key(&(dst, src)) {
                return Err(self
                    .err(self.tag_span(r), format!("the route from '{dst_name}' to '{src_name}' already exists"))
                    .with_hint("routes are symmetrical by default; set symmetrical=\"NO\" on both directions"));
            }
            table.insert((dst, src), backward.into_boxed_slice());
        }
        Ok(())
    }

    fn cluster(&mut self, c: roxmltree::Node) -> Result<Routing, Diagnostic> {
        self.check_attrs(
            c,
            &[
                "id",
                "prefix",
                "suffix",
                "radical",
                "speed",
                "core",
                "bw",
                "lat",
                "sharing_policy",
                "topology",
                "topo_parameters",
                "bb_bw",
                "bb_lat",
                "bb_sharing_policy",
                "router_id",
                "limiter_link",
                "loopback_bw",
                "loopback_lat",
            ],
        )?;
        for ch in c.children().filter(|n| n.is_element()) {
            if ch.tag_name().name() != "prop" {
                return Err(self.unsupported(ch, "<cluster>"));
            }
        }
        self.props(c);
        if let Some(t) = c.attribute("topology") {
            if t != "FLAT" {
                return Err(self
                    .err(
                        self.attr_span(c, "topology"),
                        format!("cluster topology '{t}' is not supported"),
                    )
                    .with_hint(
                        "only flat clusters (a private link per host and a backbone) are supported",
                    ));
            }
        }
        let id = self.required(c, "id")?.to_string();
        let prefix = self.required(c, "prefix")?.to_string();
        let suffix = self.required(c, "suffix")?.to_string();
        let radical = self.required(c, "radical")?;
        let radicals = self.radicals(c, radical)?;
        let speed = self.speed(c)?;
        let cores = self.cores(c)?;
        let bw = self.quantity(c, "bw", Quantity::Bandwidth)?;
        if bw <= 0.0 {
            return Err(self.err(self.attr_span(c, "bw"), "bw must be positive"));
        }
        let lat = self.quantity(c, "lat", Quantity::Time)?;
        let opt = |p: &Self, name: &str, q: Quantity| -> Result<f64, Diagnostic> {
            match c.attribute(name) {
                Some(v) if !v.trim().is_empty() => p.quantity_of(c, name, v, q),
                _ => Ok(0.0),
            }
        };
        let bb_bw = opt(self, "bb_bw", Quantity::Bandwidth)?;
        let bb_lat = opt(self, "bb_lat", Quantity::Time)?;
        let limiter = opt(self, "limiter_link", Quantity::Bandwidth)?;
        let loop_bw = opt(self, "loopback_bw", Quantity::Bandwidth)?;
        let loop_lat = opt(self, "loopback_lat", Quantity::Time)?;
        let policy = c.attribute("sharing_policy").unwrap_or("SPLITDUPLEX");
        let split = match policy {
            "SPLITDUPLEX" => true,
            "FULLDUPLEX" => {
                let pos = self.pos(c);
                self.notes.push(format!(
                    "{pos}: FULLDUPLEX is deprecated; read as SPLITDUPLEX (as SimGrid does)"
                ));
                true
            }
            "SHARED" => false,
            "FATPIPE" => {
                // SimGrid 3.32 builds a flat cluster's private links without applying a
                // FATPIPE policy (sg_platf_new_cluster_flat only special-cases SPLITDUPLEX),
                // so they end up SHARED; we do the same to predict what smpirun predicts.
                let pos = self.pos(c);
                self.notes.push(format!(
                    "{pos}: SimGrid 3.32 builds FATPIPE private links of a flat cluster as SHARED; so do we"
                ));
                false
            }
            other => {
                return Err(self
                    .err(
                        self.attr_span(c, "sharing_policy"),
                        format!("sharing policy '{other}' is not supported"),
                    )
                    .with_hint("use SHARED, SPLITDUPLEX or FATPIPE"))
            }
        };
        let bb_sharing = match c.attribute("bb_sharing_policy").unwrap_or("SHARED") {
            "SHARED" => Sharing::Shared,
            "FATPIPE" => Sharing::Fatpipe,
            other => {
                return Err(self
                    .err(
                        self.attr_span(c, "bb_sharing_policy"),
                        format!("backbone sharing policy '{other}' is not supported"),
                    )
                    .with_hint("use SHARED or FATPIPE"))
            }
        };
        let backbone = if bb_bw > 0.0 || bb_lat > 0.0 {
            if bb_bw <= 0.0 {
                return Err(self.err(
                    self.tag_span(c),
                    "a backbone with a latency needs a positive bb_bw",
                ));
            }
            Some(self.add_link(format!("{id}_backbone"), bb_bw, bb_lat, bb_sharing))
        } else {
            None
        };
        let mut up = Vec::with_capacity(radicals.len());
        let mut down = Vec::with_capacity(radicals.len());
        let mut loopback = Vec::with_capacity(radicals.len());
        for &i in &radicals {
            let host = format!("{prefix}{i}{suffix}");
            self.add_host(c, host, speed, cores)?;
            let link_id = format!("{id}_link_{i}");
            loopback.push(if loop_bw > 0.0 || loop_lat > 0.0 {
                Some(self.add_link(
                    format!("{link_id}_loopback"),
                    loop_bw,
                    loop_lat,
                    Sharing::Fatpipe,
                ))
            } else {
                None
            });
            let lim = if limiter > 0.0 {
                Some(self.add_link(format!("{link_id}_limiter"), limiter, 0.0, Sharing::Shared))
            } else {
                None
            };
            let (l_up, l_down) = if split {
                let u = self.add_link(format!("{link_id}_UP"), bw, lat, Sharing::Shared);
                let d = self.add_link(format!("{link_id}_DOWN"), bw, lat, Sharing::Shared);
                (u, d)
            } else {
                let l = self.add_link(link_id, bw, lat, Sharing::Shared);
                (l, l)
            };
            // Up: limiter, private link (UP), backbone. Down is the symmetrical reverse.
            let mut u = Vec::new();
            let mut d = Vec::new();
            u.extend(lim);
            u.push(l_up);
            u.extend(backbone);
            d.extend(backbone);
            d.push(l_down);
            d.extend(lim);
            up.push(u.into_boxed_slice());
            down.push(d.into_boxed_slice());
        }
        Ok(Routing::Star { up, down, loopback })
    }

    /// `radical="0-255"` or `"0-3,8,10-11"`.
    fn radicals(&self, c: roxmltree::Node, text: &str) -> Result<Vec<i64>, Diagnostic> {
        const MAX_HOSTS: i64 = 1 << 20;
        let span = self.attr_span(c, "radical");
        let bad = |part: &str| {
            self.err(span.clone(), format!("bad radical '{part}'"))
                .with_hint("write ranges like \"0-255\" or \"0-3,8,10-11\"")
        };
        let mut out = Vec::new();
        for part in text.split(',') {
            let part_t = part.trim();
            let (a, b) = match part_t.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part_t, part_t),
            };
            let a: i64 = a.parse().map_err(|_| bad(part_t))?;
            let b: i64 = b.parse().map_err(|_| bad(part_t))?;
            if b < a || b - a >= MAX_HOSTS || out.len() as i64 + (b - a) >= MAX_HOSTS {
                return Err(bad(part_t));
            }
            out.extend(a..=b);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPS: f64 = 1e-12;

    const FULL: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="a" speed="1Gf"/>
    <host id="b" speed="2Gf" core="2"><prop id="x" value="y"/></host>
    <link id="l1" bandwidth="125MBps" latency="50us"/>
    <link id="l2" bandwidth="1GBps" latency="10us" sharing_policy="FATPIPE"/>
    <link id="sd" bandwidth="1Gbps" latency="1ms" sharing_policy="SPLITDUPLEX"/>
    <route src="a" dst="b"><link_ctn id="l1"/><link_ctn id="sd" direction="UP"/><link_ctn id="l2"/></route>
  </zone>
</platform>"#;

    #[test]
    fn full_zone() {
        let p = Platform::parse("t.xml", FULL).unwrap();
        assert_eq!(p.hosts().len(), 2);
        assert!((p.host(1).speed - 2e9).abs() < EPS);
        assert_eq!(p.host(1).cores, 2);
        let r = p.route(0, 1).unwrap();
        let names: Vec<&str> = r.links.iter().map(|&l| p.link(l).name.as_str()).collect();
        assert_eq!(names, ["l1", "sd_UP", "l2"]);
        assert!((r.latency - (50e-6 + 1e-3 + 10e-6)).abs() < EPS);
        let back = p.route(1, 0).unwrap();
        let names: Vec<&str> = back
            .links
            .iter()
            .map(|&l| p.link(l).name.as_str())
            .collect();
        assert_eq!(names, ["l2", "sd_DOWN", "l1"]);
        let lo = p.route(0, 0).unwrap();
        assert_eq!(p.link(lo.links[0]).name, "__loopback__");
        assert_eq!(p.link(lo.links[0]).sharing, Sharing::Fatpipe);
        assert!(p.notes().iter().any(|n| n.contains("<prop>")));
    }

    #[test]
    fn cluster_routes() {
        let x = r#"<platform version="4.1"><cluster id="c" prefix="n-" suffix=".x" radical="0-3"
            speed="1Gf" bw="125MBps" lat="50us" bb_bw="2.25GBps" bb_lat="500us"/></platform>"#;
        let p = Platform::parse("c.xml", x).unwrap();
        assert_eq!(p.hosts().len(), 4);
        assert_eq!(p.host(2).name, "n-2.x");
        let r = p.route(0, 3).unwrap();
        let names: Vec<&str> = r.links.iter().map(|&l| p.link(l).name.as_str()).collect();
        assert_eq!(names, ["c_link_0_UP", "c_backbone", "c_link_3_DOWN"]);
        assert!((r.latency - 600e-6).abs() < EPS);
        // same host without loopback: up then down through the backbone once
        let s = p.route(1, 1).unwrap();
        let names: Vec<&str> = s.links.iter().map(|&l| p.link(l).name.as_str()).collect();
        assert_eq!(names, ["c_link_1_UP", "c_backbone", "c_link_1_DOWN"]);
    }

    #[test]
    fn shared_cluster_self_route_counts_link_once() {
        let x = r#"<platform version="4.1"><zone id="z" routing="Full"><cluster id="c" prefix="h" suffix="" radical="0-1"
            speed="1Gf" bw="1GBps" lat="1us" sharing_policy="SHARED"/></zone></platform>"#;
        let p = Platform::parse("c.xml", x).unwrap();
        assert_eq!(p.route(0, 0).unwrap().links.len(), 1);
        assert_eq!(p.route(0, 1).unwrap().links.len(), 2);
    }

    fn err(x: &str) -> Diagnostic {
        Platform::parse("bad.xml", x).unwrap_err()
    }

    #[test]
    fn errors_name_element_and_position() {
        let d = err("<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n  <router id=\"r\"/>\n</zone></platform>");
        assert!(
            d.message.contains("unsupported element <router>"),
            "{}",
            d.message
        );
        assert_eq!(d.line_col(), (3, 4));
        let d =
            err("<platform version=\"4.1\"><zone id=\"z\" routing=\"Floyd\"></zone></platform>");
        assert!(d.message.contains("routing 'Floyd'"));
        let d = err("<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\"><host id=\"a\" speed=\"1Gz\"/></zone></platform>");
        assert!(
            d.message.contains("unknown speed unit 'Gz'"),
            "{}",
            d.message
        );
        let d = err("<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\"><host id=\"a\" speed=\"1Gf\"/><route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route></zone></platform>");
        assert!(d.message.contains("'b' is not a declared host"));
        let d = err("<platform version=\"4.1\"><zone");
        assert!(d.message.contains("malformed XML"));
        let d = err("<platform version=\"3\"></platform>");
        assert!(d.message.contains("version"));
    }

    #[test]
    fn hostfile() {
        let p = Platform::parse("t.xml", FULL).unwrap();
        let h = read_hostfile("h", "a\n\nb:2\n", &p).unwrap();
        assert_eq!(h, vec![0, 1, 1]);
        let e = read_hostfile("h", "a\nzz\n", &p).unwrap_err();
        assert_eq!(e.line_col(), (2, 1));
        assert!(e.message.contains("'zz'"));
    }

    #[test]
    fn hostfile_slots_beyond_max_ranks_are_an_error_not_an_allocation() {
        // Found by fuzzing: `b:444444444` unrolled into 444 million slots.
        let p = Platform::parse("t.xml", FULL).unwrap();
        let e = read_hostfile("h", "a\nb:444444444\n", &p).unwrap_err();
        assert_eq!(e.line_col(), (2, 3));
        assert!(e.message.contains("process slots"), "{}", e.message);
        let full = format!("a:{MAX_RANKS}\n");
        assert_eq!(
            read_hostfile("h", &full, &p).unwrap().len(),
            MAX_RANKS as usize
        );
        let e = read_hostfile("h", &format!("{full}b\n"), &p).unwrap_err();
        assert_eq!(e.line_col(), (2, 1));
    }

    proptest::proptest! {
        #[test]
        fn parser_never_panics(s in "\\PC{0,200}") {
            let _ = Platform::parse("fuzz.xml", &s);
            let x = format!("<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">{s}</zone></platform>");
            let _ = Platform::parse("fuzz.xml", &x);
        }
    }
}

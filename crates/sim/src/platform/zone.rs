//! A Full zone: its hosts, links (split-duplex expanded) and explicit routes, and the
//! loopback link of hosts without a route to themselves.

use std::collections::HashMap;

use perfcompose_core::diag::Diagnostic;

use super::model::{HostId, Link, LinkId, Routing, Sharing, LOOPBACK_BANDWIDTH, LOOPBACK_LATENCY};
use super::xml::{Declared, Parser};
use crate::units::Quantity;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Up,
    Down,
    None,
}

impl Parser<'_> {
    pub(super) fn zone(&mut self, zone: roxmltree::Node) -> Result<Routing, Diagnostic> {
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
}

//! Reading SimGrid's platform XML: the reader's state, attribute checks and units, the
//! top-level `<platform>`, and [`Platform::parse`]. A Full zone's elements are read in
//! `zone.rs`, a cluster in `cluster.rs`.

use std::collections::HashMap;

use perfcompose_core::diag::{Diagnostic, Span};

use super::model::{Host, HostId, Link, LinkId, Platform, Sharing};
use crate::units::{parse_quantity, Quantity};

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
}

/// A link as declared, before split-duplex expansion.
pub(super) enum Declared {
    Single(LinkId),
    Split { up: LinkId, down: LinkId },
}

pub(super) struct Parser<'a> {
    pub(super) origin: &'a str,
    pub(super) text: &'a str,
    pub(super) hosts: Vec<Host>,
    pub(super) host_index: HashMap<String, HostId>,
    pub(super) links: Vec<Link>,
    pub(super) declared: HashMap<String, Declared>,
    pub(super) notes: Vec<String>,
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

    pub(super) fn err(&self, span: std::ops::Range<usize>, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.origin, self.text, Span::new(span.start, span.end), msg)
    }

    /// Span of an element's start tag name (for "unsupported element" errors).
    pub(super) fn tag_span(&self, node: roxmltree::Node) -> std::ops::Range<usize> {
        let r = node.range();
        let name_len = node.tag_name().name().len();
        // `<` then the name
        (r.start + 1)..(r.start + 1 + name_len).min(self.text.len())
    }

    pub(super) fn attr_span(&self, node: roxmltree::Node, name: &str) -> std::ops::Range<usize> {
        node.attributes()
            .find(|a| a.name() == name)
            .map(|a| a.range_value())
            .unwrap_or_else(|| self.tag_span(node))
    }

    pub(super) fn required<'n>(
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

    pub(super) fn check_attrs(
        &self,
        node: roxmltree::Node,
        allowed: &[&str],
    ) -> Result<(), Diagnostic> {
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

    pub(super) fn quantity(
        &self,
        node: roxmltree::Node,
        name: &str,
        q: Quantity,
    ) -> Result<f64, Diagnostic> {
        let value = self.required(node, name)?;
        self.quantity_of(node, name, value, q)
    }

    pub(super) fn quantity_of(
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
    pub(super) fn speed(&mut self, node: roxmltree::Node) -> Result<f64, Diagnostic> {
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

    pub(super) fn cores(&self, node: roxmltree::Node) -> Result<u32, Diagnostic> {
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

    pub(super) fn pos(&self, node: roxmltree::Node) -> String {
        let (l, c) = perfcompose_core::diag::line_col(self.text, node.range().start);
        format!("{}:{}:{}", self.origin, l, c)
    }

    pub(super) fn add_host(
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

    pub(super) fn add_link(
        &mut self,
        name: String,
        bandwidth: f64,
        latency: f64,
        sharing: Sharing,
    ) -> LinkId {
        let id = self.links.len() as LinkId;
        self.links.push(Link {
            name,
            bandwidth,
            latency,
            sharing,
        });
        id
    }

    pub(super) fn declare(
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

    pub(super) fn unsupported(&self, node: roxmltree::Node, context: &str) -> Diagnostic {
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

    pub(super) fn props(&mut self, node: roxmltree::Node) {
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
}

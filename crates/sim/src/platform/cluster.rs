//! A flat cluster, built as SimGrid builds it: a private link per host (split into
//! `_UP`/`_DOWN` for split-duplex), an optional backbone, limiter and loopback links, and
//! routes up from the source and down to the destination.

use perfcompose_core::diag::Diagnostic;

use super::model::{Routing, Sharing};
use super::xml::Parser;
use crate::units::Quantity;

impl Parser<'_> {
    pub(super) fn cluster(&mut self, c: roxmltree::Node) -> Result<Routing, Diagnostic> {
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

//! Synthetic traces and platforms for tests and the SimGrid comparison benchmark.
//!
//! Each [`Scenario`] writes a platform XML, a hostfile and one trace per rank (SimGrid's
//! current form) into a folder, deterministically: the same name and parameters give the
//! same files, so golden tests can regenerate what `scripts/bench-simgrid` fed to
//! `smpirun -replay` and compare with the simulated times it recorded.
//!
//! Patterns: ping-pong across the detached threshold, ring and 2-D halo exchanges with
//! load imbalance, all-to-all bursts through a narrow shared backbone, a heterogeneous
//! two-site Full zone (flows with different RTTs share the WAN link unequally under CM02),
//! and sequences of collectives.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::trace::{Action, TraceWriter};

/// A generated case, ready to replay.
#[derive(Clone, Debug)]
pub struct Generated {
    pub platform: PathBuf,
    pub hostfile: PathBuf,
    pub index: PathBuf,
    pub ranks: u32,
    /// Trace actions written (all ranks).
    pub actions: u64,
}

/// What to generate.
#[derive(Clone, Debug, PartialEq)]
pub enum Scenario {
    /// Two hosts exchanging messages of sizes around the detached threshold.
    PingPong,
    /// `ranks` in a ring: compute, isend right, irecv left, waitall; `iters` times. The
    /// cluster's backbone is narrower than the private links' sum (1 GBps), or, with
    /// `fat`, wide enough (20 GBps) that it never limits.
    Ring {
        ranks: u32,
        iters: u32,
        bytes: f64,
        fat: bool,
    },
    /// A periodic 2-D halo exchange on a `side × side` grid.
    Halo { side: u32, iters: u32, bytes: f64 },
    /// Everyone sends to everyone with isend/irecv, through a narrow backbone.
    AllToAllBurst { ranks: u32, iters: u32, bytes: f64 },
    /// Two sites joined by a WAN link in a Full zone; cross-site and local pairs exchange.
    Hetero {
        per_site: u32,
        iters: u32,
        bytes: f64,
    },
    /// Blocking send/recv, sendRecv, sleep and test in one trace.
    Blocking { ranks: u32, iters: u32 },
    /// A sequence of every supported collective.
    Collectives { ranks: u32, iters: u32, bytes: f64 },
}

impl Scenario {
    /// Parse `name` like `ring:64:100:1e6` (see [`Scenario::describe`]).
    pub fn parse(spec: &str) -> Result<Scenario, String> {
        let parts: Vec<&str> = spec.split(':').collect();
        let num = |i: usize, default: f64| -> Result<f64, String> {
            match parts.get(i) {
                None => Ok(default),
                Some(t) => t
                    .parse::<f64>()
                    .map_err(|_| format!("'{t}' is not a number in '{spec}'")),
            }
        };
        let int =
            |i: usize, default: u32| -> Result<u32, String> { Ok(num(i, default as f64)? as u32) };
        Ok(match parts[0] {
            "pingpong" => Scenario::PingPong,
            "ring" | "ringfat" => Scenario::Ring {
                ranks: int(1, 16)?,
                iters: int(2, 10)?,
                bytes: num(3, 1e6)?,
                fat: parts[0] == "ringfat",
            },
            "halo" => Scenario::Halo {
                side: int(1, 4)?,
                iters: int(2, 10)?,
                bytes: num(3, 2e5)?,
            },
            "a2a" => Scenario::AllToAllBurst {
                ranks: int(1, 16)?,
                iters: int(2, 3)?,
                bytes: num(3, 1e5)?,
            },
            "hetero" => Scenario::Hetero {
                per_site: int(1, 4)?,
                iters: int(2, 5)?,
                bytes: num(3, 1e6)?,
            },
            "blocking" => Scenario::Blocking {
                ranks: int(1, 4)?,
                iters: int(2, 5)?,
            },
            "coll" => Scenario::Collectives {
                ranks: int(1, 8)?,
                iters: int(2, 2)?,
                bytes: num(3, 1e5)?,
            },
            other => {
                return Err(format!(
                    "unknown scenario '{other}'; one of {}",
                    Scenario::describe()
                ))
            }
        })
    }

    pub fn describe() -> &'static str {
        "pingpong, ring:RANKS:ITERS:BYTES, ringfat:RANKS:ITERS:BYTES, halo:SIDE:ITERS:BYTES, a2a:RANKS:ITERS:BYTES, \
         hetero:PER_SITE:ITERS:BYTES, blocking:RANKS:ITERS, coll:RANKS:ITERS:BYTES"
    }

    pub fn ranks(&self) -> u32 {
        match *self {
            Scenario::PingPong => 2,
            Scenario::Ring { ranks, .. }
            | Scenario::AllToAllBurst { ranks, .. }
            | Scenario::Blocking { ranks, .. }
            | Scenario::Collectives { ranks, .. } => ranks,
            Scenario::Halo { side, .. } => side * side,
            Scenario::Hetero { per_site, .. } => 2 * per_site,
        }
    }

    /// Write the case into `dir`.
    pub fn write(&self, dir: &Path) -> io::Result<Generated> {
        std::fs::create_dir_all(dir)?;
        let n = self.ranks();
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a scenario needs at least one rank",
            ));
        }
        let (platform_xml, hosts) = self.platform();
        let platform = dir.join("platform.xml");
        std::fs::write(&platform, platform_xml)?;
        let hostfile = dir.join("hostfile");
        let mut hf = String::new();
        for h in &hosts {
            let _ = writeln!(hf, "{h}");
        }
        std::fs::write(&hostfile, hf)?;
        let mut w = TraceWriter::create(dir, "trace", n)?;
        let mut actions = 0u64;
        for r in 0..n {
            for a in self.program(r) {
                w.write(r, &a)?;
                actions += 1;
            }
        }
        let index = w.finish()?;
        Ok(Generated {
            platform,
            hostfile,
            index,
            ranks: n,
            actions,
        })
    }

    fn platform(&self) -> (String, Vec<String>) {
        let head = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n";
        let n = self.ranks();
        let cluster = |bb: &str, policy: &str| {
            let x = format!(
                "{head}  <cluster id=\"c\" prefix=\"node-\" radical=\"0-{}\" suffix=\"\" speed=\"1Gf\" bw=\"125MBps\" lat=\"50us\" bb_bw=\"{bb}\" bb_lat=\"500us\" sharing_policy=\"{policy}\"/>\n</platform>\n",
                n - 1
            );
            let hosts = (0..n).map(|i| format!("node-{i}")).collect();
            (x, hosts)
        };
        match self {
            Scenario::PingPong => {
                let x = format!(
                    "{head}  <zone id=\"AS0\" routing=\"Full\">\n    <host id=\"alpha\" speed=\"2Gf\"/>\n    <host id=\"beta\" speed=\"1Gf\"/>\n    <link id=\"nic\" bandwidth=\"1Gbps\" latency=\"20us\"/>\n    <link id=\"wire\" bandwidth=\"10Gbps\" latency=\"5us\" sharing_policy=\"FATPIPE\"/>\n    <route src=\"alpha\" dst=\"beta\"><link_ctn id=\"nic\"/><link_ctn id=\"wire\"/></route>\n  </zone>\n</platform>\n"
                );
                (x, vec!["alpha".into(), "beta".into()])
            }
            // A backbone narrower than the sum of the private links: concurrent flows contend.
            Scenario::Ring { fat: true, .. } => cluster("20GBps", "SPLITDUPLEX"),
            Scenario::Ring { .. } | Scenario::Halo { .. } | Scenario::Blocking { .. } => {
                cluster("1GBps", "SPLITDUPLEX")
            }
            Scenario::AllToAllBurst { .. } => cluster("250MBps", "SPLITDUPLEX"),
            Scenario::Collectives { .. } => cluster("2.25GBps", "SHARED"),
            Scenario::Hetero { per_site, .. } => {
                let mut x = format!("{head}  <zone id=\"AS0\" routing=\"Full\">\n");
                let mut hosts = Vec::new();
                for s in 0..2 {
                    for i in 0..*per_site {
                        let speed = if s == 0 { "1Gf" } else { "2.5Gf" };
                        let _ = writeln!(x, "    <host id=\"s{s}h{i}\" speed=\"{speed}\"/>");
                        hosts.push(format!("s{s}h{i}"));
                    }
                }
                for s in 0..2 {
                    for i in 0..*per_site {
                        let lat = 10 + 5 * i;
                        let _ = writeln!(
                            x,
                            "    <link id=\"s{s}l{i}\" bandwidth=\"125MBps\" latency=\"{lat}us\" sharing_policy=\"SPLITDUPLEX\"/>"
                        );
                    }
                    let _ = writeln!(x, "    <link id=\"sw{s}\" bandwidth=\"1GBps\" latency=\"2us\" sharing_policy=\"FATPIPE\"/>");
                }
                x.push_str("    <link id=\"wan\" bandwidth=\"100Mbps\" latency=\"5ms\"/>\n");
                let host = |k: u32| (k / per_site, k % per_site);
                for a in 0..2 * per_site {
                    for b in (a + 1)..2 * per_site {
                        let (sa, ia) = host(a);
                        let (sb, ib) = host(b);
                        let _ = write!(
                            x,
                            "    <route src=\"s{sa}h{ia}\" dst=\"s{sb}h{ib}\"><link_ctn id=\"s{sa}l{ia}\" direction=\"UP\"/><link_ctn id=\"sw{sa}\"/>"
                        );
                        if sa != sb {
                            let _ = write!(x, "<link_ctn id=\"wan\"/><link_ctn id=\"sw{sb}\"/>");
                        }
                        let _ = writeln!(
                            x,
                            "<link_ctn id=\"s{sb}l{ib}\" direction=\"DOWN\"/></route>"
                        );
                    }
                }
                x.push_str("  </zone>\n</platform>\n");
                (x, hosts)
            }
        }
    }

    /// Rank `r`'s actions.
    fn program(&self, r: u32) -> Vec<Action> {
        let n = self.ranks();
        let mut v = vec![Action::Init];
        // Imbalance that differs by rank and iteration, so waiting shows up.
        let work =
            |r: u32, it: u32, base: f64| base * (1.0 + ((r * 7 + it * 13) % 5) as f64 / 10.0);
        match *self {
            Scenario::PingPong => {
                let sizes = [0.0, 1000.0, 65535.0, 65536.0, 1e6, 1e7];
                for (k, &s) in sizes.iter().enumerate() {
                    let tag = k as i32;
                    if r == 0 {
                        v.push(Action::Compute { flops: 1e6 });
                        v.push(Action::Send {
                            dst: 1,
                            tag,
                            bytes: s,
                        });
                        v.push(Action::Recv {
                            src: 1,
                            tag,
                            bytes: s,
                        });
                    } else {
                        v.push(Action::Compute { flops: 3e6 });
                        v.push(Action::Recv {
                            src: 0,
                            tag,
                            bytes: s,
                        });
                        v.push(Action::Send {
                            dst: 0,
                            tag,
                            bytes: s,
                        });
                    }
                }
                // a late receiver: rank 1 computes before posting, rank 0's small send is detached
                if r == 0 {
                    v.push(Action::Send {
                        dst: 1,
                        tag: 9,
                        bytes: 100.0,
                    });
                    v.push(Action::Compute { flops: 1e6 });
                } else {
                    v.push(Action::Compute { flops: 5e7 });
                    v.push(Action::Recv {
                        src: 0,
                        tag: 9,
                        bytes: 100.0,
                    });
                }
            }
            Scenario::Ring { iters, bytes, .. } => {
                for it in 0..iters {
                    v.push(Action::Compute {
                        flops: work(r, it, 2e6),
                    });
                    v.push(Action::Isend {
                        dst: (r + 1) % n,
                        tag: 0,
                        bytes,
                    });
                    v.push(Action::Irecv {
                        src: (r + n - 1) % n,
                        tag: 0,
                        bytes,
                    });
                    v.push(Action::WaitAll);
                }
            }
            Scenario::Halo { side, iters, bytes } => {
                let (x, y) = (r % side, r / side);
                let at = |x: u32, y: u32| (y % side) * side + (x % side);
                let nbrs = [
                    at(x + 1, y),
                    at(x + side - 1, y),
                    at(x, y + 1),
                    at(x, y + side - 1),
                ];
                for it in 0..iters {
                    v.push(Action::Compute {
                        flops: work(r, it, 5e6),
                    });
                    // small and large faces: vertical faces below the detached threshold
                    for (k, &p) in nbrs.iter().enumerate() {
                        let b = if k < 2 { bytes } else { bytes / 8.0 };
                        v.push(Action::Irecv {
                            src: p,
                            tag: k as i32 ^ 1,
                            bytes: b,
                        });
                    }
                    for (k, &p) in nbrs.iter().enumerate() {
                        let b = if k < 2 { bytes } else { bytes / 8.0 };
                        v.push(Action::Isend {
                            dst: p,
                            tag: k as i32,
                            bytes: b,
                        });
                    }
                    v.push(Action::WaitAll);
                }
            }
            Scenario::AllToAllBurst { iters, bytes, .. } => {
                for it in 0..iters {
                    v.push(Action::Compute {
                        flops: work(r, it, 1e6),
                    });
                    for k in 1..n {
                        v.push(Action::Irecv {
                            src: (r + n - k) % n,
                            tag: it as i32,
                            bytes,
                        });
                    }
                    for k in 1..n {
                        v.push(Action::Isend {
                            dst: (r + k) % n,
                            tag: it as i32,
                            bytes,
                        });
                    }
                    v.push(Action::WaitAll);
                }
            }
            Scenario::Hetero {
                per_site,
                iters,
                bytes,
            } => {
                // pair r with the rank at the same position on the other site, and with its
                // local neighbour: WAN flows with different RTTs share the WAN link.
                let other = (r + per_site) % n;
                let local = (r / per_site) * per_site + (r % per_site + 1) % per_site;
                for it in 0..iters {
                    v.push(Action::Compute {
                        flops: work(r, it, 1e7),
                    });
                    let from_other = bytes * (1.0 + (other % 3) as f64);
                    v.push(Action::Irecv {
                        src: other,
                        tag: 1,
                        bytes: from_other,
                    });
                    v.push(Action::Isend {
                        dst: other,
                        tag: 1,
                        bytes: bytes * (1.0 + (r % 3) as f64),
                    });
                    if per_site > 1 {
                        let from =
                            (r / per_site) * per_site + (r % per_site + per_site - 1) % per_site;
                        v.push(Action::Irecv {
                            src: from,
                            tag: 2,
                            bytes: bytes / 4.0,
                        });
                        v.push(Action::Isend {
                            dst: local,
                            tag: 2,
                            bytes: bytes / 4.0,
                        });
                    }
                    v.push(Action::WaitAll);
                }
            }
            Scenario::Blocking { iters, .. } => {
                for it in 0..iters {
                    v.push(Action::Compute {
                        flops: work(r, it, 3e6),
                    });
                    let right = (r + 1) % n;
                    let left = (r + n - 1) % n;
                    // even ranks send first (blocking, rendezvous size), odd ranks receive first
                    let big = 2e5;
                    if r % 2 == 0 {
                        v.push(Action::Send {
                            dst: right,
                            tag: 5,
                            bytes: big,
                        });
                        v.push(Action::Recv {
                            src: left,
                            tag: 5,
                            bytes: big,
                        });
                    } else {
                        v.push(Action::Recv {
                            src: left,
                            tag: 5,
                            bytes: big,
                        });
                        v.push(Action::Send {
                            dst: right,
                            tag: 5,
                            bytes: big,
                        });
                    }
                    v.push(Action::SendRecv {
                        send_bytes: 3000.0,
                        dst: left,
                        recv_bytes: 3000.0,
                        src: right,
                    });
                    v.push(Action::Sleep {
                        seconds: 1e-3 * (r % 2) as f64,
                    });
                    v.push(Action::Isend {
                        dst: right,
                        tag: 6,
                        bytes: 5e5,
                    });
                    v.push(Action::Irecv {
                        src: left,
                        tag: 6,
                        bytes: 5e5,
                    });
                    v.push(Action::Wait {
                        src: left,
                        dst: r,
                        tag: 6,
                    });
                    v.push(Action::Wait {
                        src: r,
                        dst: right,
                        tag: 6,
                    });
                }
            }
            Scenario::Collectives { iters, bytes, .. } => {
                for it in 0..iters {
                    v.push(Action::Compute {
                        flops: work(r, it, 2e6),
                    });
                    v.push(Action::Bcast {
                        bytes,
                        root: it % n,
                    });
                    v.push(Action::Compute {
                        flops: work(r, it + 1, 1e6),
                    });
                    v.push(Action::Reduce {
                        bytes: bytes / 2.0,
                        flops: 1e5,
                        root: 0,
                        dt: 8.0,
                    });
                    v.push(Action::AllReduce {
                        bytes: 8.0 * (n as f64 * 3.0 + 1.0),
                        flops: 1e5,
                        dt: 8.0,
                    });
                    v.push(Action::Barrier);
                    v.push(Action::AllToAll {
                        send_bytes: bytes / n as f64,
                        recv_bytes: bytes / n as f64,
                    });
                    v.push(Action::Gather {
                        send_bytes: 1000.0,
                        recv_bytes: 1000.0,
                        root: 0,
                    });
                    v.push(Action::AllGather {
                        send_bytes: 2000.0,
                        recv_bytes: 2000.0,
                    });
                    v.push(Action::Scatter {
                        send_bytes: 1500.0,
                        recv_bytes: 1500.0,
                        root: n - 1,
                    });
                    v.push(Action::AllReduce {
                        bytes: bytes * 2.0,
                        flops: 0.0,
                        dt: 8.0,
                    });
                }
            }
        }
        v.push(Action::Finalize);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_parse_and_write() {
        let dir = std::env::temp_dir().join(format!("pc-gen-{}", std::process::id()));
        for spec in [
            "pingpong",
            "ring:4:2:1e5",
            "halo:2:1:1e5",
            "a2a:3:1:1e4",
            "hetero:2:1:1e5",
            "blocking:4:1",
            "coll:4:1:1e4",
        ] {
            let s = Scenario::parse(spec).unwrap();
            let g = s.write(&dir.join(spec.replace(':', "_"))).unwrap();
            assert_eq!(g.ranks, s.ranks());
            let p = crate::Platform::from_file(&g.platform).unwrap();
            assert!(p.hosts().len() as u32 >= g.ranks);
        }
        assert!(Scenario::parse("nope").is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}

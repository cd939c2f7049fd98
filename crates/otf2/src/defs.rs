//! An archive's global definitions as read, and what the conversion needs from them: the
//! MPI ranks (the locations of the `COMM_LOCATIONS` group of the MPI paradigm, in rank
//! order) and every communicator's members as world ranks.
#![forbid(unsafe_code)]

use std::collections::{HashMap, HashSet};

use crate::error::DefError;
use crate::sys;

/// `OTF2_PARADIGM_MPI`.
pub const PARADIGM_MPI: u8 = sys::OTF2_Paradigm_enum_OTF2_PARADIGM_MPI as u8;
const GROUP_COMM_LOCATIONS: u8 = sys::OTF2_GroupType_enum_OTF2_GROUP_TYPE_COMM_LOCATIONS as u8;
const GROUP_COMM_GROUP: u8 = sys::OTF2_GroupType_enum_OTF2_GROUP_TYPE_COMM_GROUP as u8;
const GROUP_COMM_SELF: u8 = sys::OTF2_GroupType_enum_OTF2_GROUP_TYPE_COMM_SELF as u8;
const GROUP_FLAG_GLOBAL_MEMBERS: u32 = sys::OTF2_GroupFlag_enum_OTF2_GROUP_FLAG_GLOBAL_MEMBERS;

/// The archive's clock (`ClockProperties`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    /// Ticks per second.
    pub resolution: u64,
    pub offset: u64,
    pub length: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    pub name: u32,
    pub canonical_name: u32,
    pub role: u8,
    pub paradigm: u8,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Location {
    pub name: u32,
    pub kind: u8,
    pub events: u64,
    pub group: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub name: u32,
    pub kind: u8,
    pub paradigm: u8,
    pub flags: u32,
    pub members: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Comm {
    pub name: u32,
    pub group: u32,
    pub parent: u32,
}

/// The global definitions the conversion reads, by reference.
#[derive(Clone, Debug, Default)]
pub struct Definitions {
    pub clock: Option<Clock>,
    pub strings: HashMap<u32, String>,
    pub regions: HashMap<u32, Region>,
    pub locations: HashMap<u64, Location>,
    pub groups: HashMap<u32, Group>,
    pub comms: HashMap<u32, Comm>,
    /// Intercommunicators: named so that a record using one gets a clear error.
    pub inter_comms: HashSet<u32>,
}

impl Definitions {
    /// A string by reference, or a placeholder naming the reference.
    pub fn string(&self, r: u32) -> String {
        self.strings
            .get(&r)
            .cloned()
            .unwrap_or_else(|| format!("<string {r}>"))
    }
}

/// A communicator as the conversion sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct CommInfo {
    pub name: String,
    /// World ranks of the members, in the communicator's rank order (empty for a
    /// `COMM_SELF` communicator: each rank alone).
    pub members: Vec<u32>,
    /// `MPI_COMM_SELF` and friends: every rank is its only member.
    pub is_self: bool,
    /// Ranks in records are world ranks (OTF2's `GLOBAL_MEMBERS` flag).
    pub global_ranks: bool,
    /// Holds every world rank (in any order).
    pub whole_world: bool,
    /// Each member's index in `members`, by world rank.
    index: HashMap<u32, usize>,
}

impl CommInfo {
    fn new(
        name: String,
        members: Vec<u32>,
        is_self: bool,
        global_ranks: bool,
        ranks: usize,
    ) -> Self {
        let index = members.iter().enumerate().map(|(i, &m)| (m, i)).collect();
        CommInfo {
            name,
            whole_world: if is_self {
                ranks == 1
            } else {
                members.len() == ranks
            },
            members,
            is_self,
            global_ranks,
            index,
        }
    }

    /// World rank `me`'s index among the members, if it is one.
    pub fn index_of(&self, me: u32) -> Option<usize> {
        if self.is_self {
            Some(0)
        } else {
            self.index.get(&me).copied()
        }
    }

    /// The world rank a record names as `r` (seen from `me`), if it is a member.
    pub fn world_rank(&self, r: u32, me: u32) -> Option<u32> {
        if self.is_self {
            return (r == 0 || (self.global_ranks && r == me)).then_some(me);
        }
        if self.global_ranks {
            self.index.contains_key(&r).then_some(r)
        } else {
            self.members.get(r as usize).copied()
        }
    }

    /// The member index a record names as root `r` (seen from `me`).
    pub fn member_index(&self, r: u32, me: u32) -> Option<usize> {
        let w = self.world_rank(r, me)?;
        self.index_of(w)
    }

    /// The size of the communicator.
    pub fn size(&self) -> usize {
        if self.is_self {
            1
        } else {
            self.members.len()
        }
    }
}

/// The MPI ranks and communicators of an archive.
#[derive(Clone, Debug)]
pub struct World {
    /// The location of each world rank.
    pub ranks: Vec<u64>,
    pub comms: HashMap<u32, CommInfo>,
    /// Locations that are not MPI ranks (other threads): not read.
    pub other_locations: usize,
    /// Seconds per tick.
    pub tick: f64,
}

impl World {
    /// Check the definitions and derive the ranks and communicators.
    pub fn from_definitions(defs: &Definitions) -> Result<World, DefError> {
        let clock = defs.clock.ok_or(DefError::NoClock)?;
        if clock.resolution == 0 {
            return Err(DefError::NoClock);
        }
        let mut comm_locations = defs
            .groups
            .iter()
            .filter(|(_, g)| g.kind == GROUP_COMM_LOCATIONS && g.paradigm == PARADIGM_MPI);
        let (&loc_group, g) = comm_locations.next().ok_or(DefError::NoMpiRanks)?;
        if let Some((&other, _)) = comm_locations.next() {
            return Err(DefError::TwoRankLists(
                loc_group.min(other),
                loc_group.max(other),
            ));
        }
        if g.members.is_empty() {
            return Err(DefError::NoMpiRanks);
        }
        let n = g.members.len();
        if n > perfcompose_sim::trace::MAX_RANKS as usize {
            return Err(DefError::TooManyRanks(n));
        }
        for (rank, loc) in g.members.iter().enumerate() {
            if !defs.locations.contains_key(loc) {
                return Err(DefError::UndefinedLocation {
                    rank: rank as u32,
                    location: *loc,
                });
            }
        }
        if let Some((rank, loc)) = first_repeat(&g.members) {
            return Err(DefError::RepeatedLocation {
                rank: rank as u32,
                location: loc,
            });
        }
        let mut comms = HashMap::new();
        for (&id, c) in &defs.comms {
            let name = defs.string(c.name);
            let group = defs.groups.get(&c.group).ok_or(DefError::UndefinedGroup {
                comm: id,
                name: name.clone(),
                group: c.group,
            })?;
            let info = if group.kind == GROUP_COMM_SELF {
                CommInfo::new(name, Vec::new(), true, false, n)
            } else if group.kind == GROUP_COMM_GROUP {
                let mut members = Vec::with_capacity(group.members.len());
                for &m in &group.members {
                    let r = u32::try_from(m).ok().filter(|&r| (r as usize) < n).ok_or(
                        DefError::MemberOutOfRange {
                            comm: id,
                            name: name.clone(),
                            member: m,
                            ranks: n,
                        },
                    )?;
                    members.push(r);
                }
                if let Some((_, r)) = first_repeat(&members) {
                    return Err(DefError::RepeatedMember {
                        comm: id,
                        name,
                        rank: r,
                    });
                }
                let global_ranks = group.flags & GROUP_FLAG_GLOBAL_MEMBERS != 0;
                CommInfo::new(name, members, false, global_ranks, n)
            } else {
                return Err(DefError::NotACommGroup {
                    comm: id,
                    name,
                    group: c.group,
                    kind: group.kind,
                });
            };
            comms.insert(id, info);
        }
        let other_locations = defs.locations.len().saturating_sub(n);
        Ok(World {
            ranks: g.members.clone(),
            comms,
            other_locations,
            tick: 1.0 / clock.resolution as f64,
        })
    }
}

/// The first value seen twice, with its second position.
fn first_repeat<T: Copy + Eq + std::hash::Hash>(v: &[T]) -> Option<(usize, T)> {
    let mut seen = HashSet::with_capacity(v.len());
    v.iter()
        .enumerate()
        .find(|(_, x)| !seen.insert(**x))
        .map(|(i, x)| (i, *x))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defs(n: u64) -> Definitions {
        let mut d = Definitions {
            clock: Some(Clock {
                resolution: 1_000_000_000,
                offset: 0,
                length: 0,
            }),
            ..Default::default()
        };
        d.strings.insert(0, "MPI_COMM_WORLD".into());
        d.strings.insert(1, "half".into());
        for l in 0..n {
            d.locations.insert(
                l,
                Location {
                    name: 0,
                    kind: 1,
                    events: 0,
                    group: l as u32,
                },
            );
        }
        d.groups.insert(
            0,
            Group {
                name: 0,
                kind: GROUP_COMM_LOCATIONS,
                paradigm: PARADIGM_MPI,
                flags: 0,
                members: (0..n).collect(),
            },
        );
        d.groups.insert(
            1,
            Group {
                name: 0,
                kind: GROUP_COMM_GROUP,
                paradigm: PARADIGM_MPI,
                flags: 0,
                members: (0..n).collect(),
            },
        );
        d.comms.insert(
            0,
            Comm {
                name: 0,
                group: 1,
                parent: UNDEFINED,
            },
        );
        d
    }
    const UNDEFINED: u32 = crate::event::UNDEFINED_U32;

    #[test]
    fn ranks_and_communicators_from_definitions() {
        let mut d = defs(4);
        d.groups.insert(
            2,
            Group {
                name: 0,
                kind: GROUP_COMM_GROUP,
                paradigm: PARADIGM_MPI,
                flags: GROUP_FLAG_GLOBAL_MEMBERS,
                members: vec![3, 1],
            },
        );
        d.comms.insert(
            5,
            Comm {
                name: 1,
                group: 2,
                parent: 0,
            },
        );
        let w = World::from_definitions(&d).unwrap();
        assert_eq!(w.ranks, vec![0, 1, 2, 3]);
        assert!(w.comms[&0].whole_world);
        let half = &w.comms[&5];
        assert!(!half.whole_world && half.global_ranks);
        // Records name world ranks in a GLOBAL_MEMBERS communicator.
        assert_eq!(half.world_rank(3, 1), Some(3));
        assert_eq!(half.world_rank(0, 1), None);
        assert_eq!(half.member_index(1, 3), Some(1));
        assert_eq!(w.comms[&0].world_rank(2, 0), Some(2));
        assert_eq!(w.comms[&0].world_rank(4, 0), None);
    }

    #[test]
    fn missing_or_inconsistent_definitions_are_errors() {
        let mut d = defs(2);
        d.comms.get_mut(&0).unwrap().group = 9;
        assert!(matches!(
            World::from_definitions(&d),
            Err(DefError::UndefinedGroup { group: 9, .. })
        ));
        let mut d = defs(2);
        d.groups.get_mut(&1).unwrap().members = vec![0, 7];
        assert!(matches!(
            World::from_definitions(&d),
            Err(DefError::MemberOutOfRange { member: 7, .. })
        ));
        let mut d = defs(2);
        d.groups.remove(&0);
        assert!(matches!(
            World::from_definitions(&d),
            Err(DefError::NoMpiRanks)
        ));
        let mut d = defs(2);
        d.locations.remove(&1);
        assert!(matches!(
            World::from_definitions(&d),
            Err(DefError::UndefinedLocation { rank: 1, .. })
        ));
        let mut d = defs(2);
        d.clock = None;
        assert!(matches!(
            World::from_definitions(&d),
            Err(DefError::NoClock)
        ));
    }
}

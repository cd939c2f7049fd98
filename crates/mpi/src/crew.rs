//! Rank 0 leads a measurement, the other ranks follow: rank 0 decides what to run next
//! (how many repetitions, which size, when to measure blocks on its own) and sends each
//! follower a [`Command`]; a follower waits for the next one without spinning, so that
//! while rank 0 times a block alone the followers leave the cores to it.

use std::time::Duration;

use mpi::traits::*;

use crate::job::Job;

/// Message tag of commands.
const TAG_COMMAND: i32 = 21;
/// How often a waiting follower looks for its next command.
const POLL: Duration = Duration::from_micros(100);

/// What rank 0 asks of the followers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Run `jobs` jobs of size `x` together with rank 0.
    Run { x: u64, jobs: u64 },
    /// The same, recorded as a trace.
    Record { x: u64, jobs: u64 },
    /// The measurement is over.
    Stop,
}

impl Command {
    fn encode(self) -> [u64; 3] {
        match self {
            Command::Run { x, jobs } => [1, x, jobs],
            Command::Record { x, jobs } => [2, x, jobs],
            Command::Stop => [0, 0, 0],
        }
    }

    fn decode(words: [u64; 3]) -> Option<Command> {
        match words {
            [1, x, jobs] => Some(Command::Run { x, jobs }),
            [2, x, jobs] => Some(Command::Record { x, jobs }),
            [0, _, _] => Some(Command::Stop),
            _ => None,
        }
    }
}

/// Rank 0: send `cmd` to every other rank.
pub fn lead(job: &Job, cmd: Command) {
    let words = cmd.encode();
    for r in 1..job.size() {
        job.world()
            .process_at_rank(r as i32)
            .send_with_tag(&words[..], TAG_COMMAND);
    }
}

/// A follower: wait for rank 0's next command, sleeping between looks.
pub fn follow(job: &Job) -> Command {
    let mut words = [0u64; 3];
    mpi::request::scope(|scope| {
        let mut req = job
            .world()
            .process_at_rank(0)
            .immediate_receive_into_with_tag(scope, &mut words[..], TAG_COMMAND);
        loop {
            match req.test() {
                Ok(_) => break,
                Err(r) => {
                    req = r;
                    std::thread::sleep(POLL);
                }
            }
        }
    });
    // Only rank 0 sends commands, and only well-formed ones.
    Command::decode(words).unwrap_or(Command::Stop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_round_trip() {
        for c in [
            Command::Run { x: 16, jobs: 3 },
            Command::Record { x: 2, jobs: 1 },
            Command::Stop,
        ] {
            assert_eq!(Command::decode(c.encode()), Some(c));
        }
        assert_eq!(Command::decode([7, 0, 0]), None);
    }
}

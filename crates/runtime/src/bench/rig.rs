//! The blocks around a unit test timed among others ([`Rig`]): the stages of a pipeline
//! (`stage.rs`) or the blocks of the `seq` a task pool's workers run (`replica.rs`).

use std::sync::Arc;

use super::stream::templates;
use crate::data::Data;
use crate::error::{BuildError, Error, UnitTestError};
use crate::kernel::{unit_call, Inputs, Kernel, Op, Registry};

/// The blocks around a unit test timed among others (a pipeline's stages, a pool's `seq`):
/// every block, which one is timed, and the inputs of the first block, which the stream is
/// made of.
pub(super) struct Rig {
    pub(super) index: usize,
    pub(super) names: Vec<String>,
    pub(super) ops: Vec<Op>,
    pub(super) first: Arc<Vec<Data>>,
}

impl Rig {
    /// The rig of the unit test of block `index` of `blocks` (named `names`, their
    /// operations `ops`), whose own inputs are `own`: the first block's inputs are `own`
    /// when the timed block is the first.
    pub(super) fn new(
        own: &Arc<Vec<Data>>,
        blocks: &[&dyn Kernel],
        (index, names, ops): (usize, Vec<String>, Vec<Op>),
        (x, inputs, memory_limit): (usize, &Inputs, u128),
    ) -> Result<Rig, Error> {
        let first = if index == 0 {
            Arc::clone(own)
        } else {
            templates(blocks[0], x, inputs, memory_limit)?
        };
        Ok(Rig {
            index,
            names,
            ops,
            first,
        })
    }

    /// The registry name of the timed block.
    pub(super) fn timed_name(&self) -> &str {
        &self.names[self.index]
    }
}

/// The blocks named `kernels` in `registry` and their operations, for the unit test of the
/// `index`-th of them as one `part` of a `whole` (`("stage", "pipeline")`): every one a
/// sequential block, `index` one of them.
pub(super) fn sequential_blocks<'r>(
    registry: &'r Registry,
    index: usize,
    kernels: &[String],
    (part, whole): (&'static str, &'static str),
) -> Result<(Vec<&'r dyn Kernel>, Vec<Op>), Error> {
    if index >= kernels.len() {
        return Err(UnitTestError::NoSuchPart {
            part,
            whole,
            index,
            count: kernels.len(),
        }
        .into());
    }
    let blocks = kernels
        .iter()
        .map(|k| registry.get(k).map(|k| k.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    let ops: Vec<Op> = blocks.iter().map(|k| k.op()).collect();
    if let Some(k) = blocks
        .iter()
        .zip(&ops)
        .find_map(|(k, op)| (!matches!(op, Op::Block { .. })).then_some(k))
    {
        return Err(BuildError::WrongRole {
            name: k.name().to_string(),
            role: k.op().role().to_string(),
            used_as: format!("a {part} of a {whole}"),
        }
        .into());
    }
    Ok((blocks, ops))
}

/// Call `op`, the block named `name`, on `input`; a panic becomes an error naming it.
pub(super) fn call(op: &Op, name: &str, input: Data) -> Result<Data, Error> {
    crate::unwind::catch(|| unit_call(op, input)).map_err(|message| Error::Panicked {
        kernel: name.to_string(),
        message,
    })
}

//! Composition operators: turn a term and component models into a whole-program model.

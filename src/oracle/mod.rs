//! The concrete oracle: what the interpreter (`crate::interp`) says of a member, beside
//! the verifier. `replay` runs a failing member on a counterexample's inputs to confirm
//! it; `testing` (`idf-verify test`) runs members on random input states.
//!
//! Architecture invariant: beside the pipeline, below it (the scheduler calls `replay`);
//! it imports `interp`, `source`, `syntax` and the verifier's result types, never the
//! pipeline.

pub mod replay;
pub mod testing;

//! The concrete oracle: what the interpreter (`crate::interp`) says of a member, beside
//! the verifier. `replay` runs a failing member on a counterexample's inputs to confirm
//! it; `testing` (`idf-verify test`) runs members on random input states, or with
//! `paths` on inputs solved from the symbolic executor's path conditions; `save`
//! writes a concrete failure as a regression test.
//!
//! Architecture invariant: beside the pipeline, below it (the scheduler calls `replay`);
//! it imports `interp`, `source`, `syntax` and the verifier (its result types and path
//! exploration), never the pipeline.

pub mod paths;
pub mod replay;
pub mod save;
pub mod testing;

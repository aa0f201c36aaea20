//! idf-verify: a verifier for `.jv` programs by symbolic execution for implicit
//! dynamic frames (Smans, Jacobs, Piessens). Modules in reading order.
pub mod cache;
pub mod check;
pub mod console;
pub mod decider;
pub mod driver;
pub mod interp;
pub mod lsp;
pub mod merge;
pub mod replay;
pub mod report;
pub mod rng;
pub mod rules;
pub mod schedule;
pub mod shard;
pub mod state;
pub mod syntax;
pub mod testing;
pub mod verify;

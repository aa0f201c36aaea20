//! idf-verify: a verifier for `.jv` programs by symbolic execution for implicit
//! dynamic frames (Smans, Jacobs, Piessens). Modules in reading order.
pub mod check;
pub mod console;
pub mod decider;
pub mod guard;
pub mod interp;
pub mod lsp;
pub mod oracle;
pub mod pipeline;
pub mod report;
pub mod rng;
pub mod rules;
pub mod source;
pub mod state;
pub mod syntax;
pub mod verify;

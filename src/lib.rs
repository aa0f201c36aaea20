//! idf-verify: a verifier for `.jv` programs by symbolic execution for implicit
//! dynamic frames (Smans, Jacobs, Piessens). Modules in reading order.
pub mod syntax;
pub mod check;
pub mod state;
pub mod decider;
pub mod rules;
pub mod verify;
pub mod report;
pub mod driver;

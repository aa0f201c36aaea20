//! The symbolic heap: a multiset of chunks (the paper's H and G).
//!
//! Architecture invariant: the heap only stores and finds chunks by kind; deciding
//! which candidate's receiver equals a term is the rules' job (syntax first, then the
//! decider), so this module never asks the solver.

use crate::state::chunk::{Chunk, ChunkKind};
use std::fmt;

#[derive(Clone, Debug, Default)]
pub struct Heap {
    chunks: Vec<Chunk>,
}

impl Heap {
    pub fn new() -> Heap {
        Heap::default()
    }
    pub fn len(&self) -> usize {
        self.chunks.len()
    }
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }
    pub fn add(&mut self, c: Chunk) {
        self.chunks.push(c);
    }
    pub fn remove(&mut self, index: usize) -> Chunk {
        self.chunks.remove(index)
    }
    pub fn get(&self, index: usize) -> &Chunk {
        &self.chunks[index]
    }
    pub fn set_value(&mut self, index: usize, value: crate::state::term::Term) {
        self.chunks[index].value = value;
    }
    pub fn iter(&self) -> impl Iterator<Item = &Chunk> {
        self.chunks.iter()
    }
    /// Indices of the chunks of one kind, most recently added first (recent chunks are
    /// the likeliest matches).
    pub fn candidates(&self, kind: &ChunkKind) -> Vec<usize> {
        (0..self.chunks.len()).rev().filter(|&i| &self.chunks[i].kind == kind).collect()
    }
}

impl fmt::Display for Heap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{")?;
        for (i, c) in self.chunks.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{c}")?;
        }
        write!(f, "}}")
    }
}

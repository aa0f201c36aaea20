//! Heap chunks (the paper's Definition 1): field chunks `t.f ↦ v`, predicate chunks
//! `t.q[s](args)`, and array chunks `acc(a[*]) ↦ contents`, each held at an amount
//! `# π` (LANGUAGE.md section 11), a `perm` term: `write` unless fractions are used,
//! and an exact rational constant whenever the program's amounts are constants, so
//! that amounts are compared and summed without the solver in the common cases.
//!
//! Architecture invariant: a chunk is immutable data over hash-consed terms; cloning
//! one is a few reference-count increments. A chunk's amount is never provably `none`
//! when it is added (the rules drop such chunks); it may be a symbol that is.

use crate::state::term::Term;
use crate::syntax::ast::MemberRef;
use std::fmt;
use std::rc::Rc;

/// What a chunk grants access to.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChunkKind {
    /// A field, named `Class.field` after its declaring class.
    Field(Rc<str>),
    /// A predicate instance; `name` is `Class.q` for printing.
    Pred(MemberRef, Rc<str>),
    /// All elements of an array.
    Array,
}

#[derive(Clone, Debug)]
pub struct Chunk {
    pub kind: ChunkKind,
    /// The receiver (object, array), or `None` for a static predicate.
    pub recv: Option<Term>,
    /// Predicate arguments (empty for fields and arrays).
    pub args: Rc<[Term]>,
    /// Field value, predicate snapshot, or array contents.
    pub value: Term,
    /// The amount held (a `Sort::Perm` term; `write` by default).
    pub perm: Term,
    /// Array chunks only (LANGUAGE.md section 12): the indices held, a condition over
    /// [`Chunk::index`]; `None` is every index of the array (`acc(a[*])`).
    pub cond: Option<Term>,
}

impl Chunk {
    pub fn field(name: Rc<str>, recv: Term, value: Term) -> Chunk {
        Chunk {
            kind: ChunkKind::Field(name),
            recv: Some(recv),
            args: Rc::from(vec![]),
            value,
            perm: Term::write(),
            cond: None,
        }
    }
    pub fn array(recv: Term, value: Term) -> Chunk {
        Chunk {
            kind: ChunkKind::Array,
            recv: Some(recv),
            args: Rc::from(vec![]),
            value,
            perm: Term::write(),
            cond: None,
        }
    }
    /// The index symbol array chunks' conditions are stated over.
    pub fn index() -> Term {
        Term::var("i#", crate::state::term::Sort::Int)
    }
    /// The chunk's condition at index `e` (every index in bounds for `acc(a[*])`).
    pub fn covers(&self, e: &Term) -> Term {
        match (&self.cond, &self.recv) {
            (Some(c), _) => {
                let mut map = crate::state::term::TermMap::default();
                map.insert(Chunk::index(), e.clone());
                c.substitute(&map)
            }
            (None, Some(r)) => Term::and(
                Term::le(Term::int(0), e.clone()),
                Term::lt(e.clone(), Term::len(r.clone())),
            ),
            (None, None) => Term::ff(),
        }
    }
    /// The same chunk at amount `perm`.
    pub fn at(self, perm: Term) -> Chunk {
        Chunk { perm, ..self }
    }
    /// Held at exactly `write`, syntactically?
    pub fn is_write(&self) -> bool {
        self.perm.as_rat() == Some(crate::state::term::Rat::ONE)
    }
    pub fn pred(
        p: MemberRef,
        name: Rc<str>,
        recv: Option<Term>,
        args: Vec<Term>,
        snap: Term,
    ) -> Chunk {
        Chunk {
            kind: ChunkKind::Pred(p, name),
            recv,
            args: args.into(),
            value: snap,
            perm: Term::write(),
            cond: None,
        }
    }
}

impl fmt::Display for Chunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let recv = |f: &mut fmt::Formatter<'_>| match &self.recv {
            Some(r) => write!(f, "{r}."),
            None => Ok(()),
        };
        match &self.kind {
            ChunkKind::Field(name) => {
                let short = name.rsplit('.').next().unwrap_or(name);
                recv(f)?;
                write!(f, "{short} ↦ {}", self.value)
            }
            ChunkKind::Array => match &self.cond {
                None => {
                    recv(f)?;
                    write!(f, "[*] ↦ {}", self.value)
                }
                Some(c) => {
                    if let Some(r) = &self.recv {
                        write!(f, "{r}")?;
                    }
                    write!(f, "[i# | {c}] ↦ {}", self.value)
                }
            },
            ChunkKind::Pred(_, name) => {
                let short = if self.recv.is_some() {
                    name.rsplit('.').next().unwrap_or(name)
                } else {
                    name
                };
                recv(f)?;
                write!(f, "{short}[{}](", self.value)?;
                for (i, a) in self.args.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{a}")?;
                }
                write!(f, ")")
            }
        }?;
        if !self.is_write() {
            write!(f, " # {}", self.perm)?;
        }
        Ok(())
    }
}

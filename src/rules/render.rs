//! Symbolic terms back in source syntax, for messages: `toInt(s@3) + 2` reads
//! `old(this.n) + 2`, `Account.get(unit, this)` reads `this.get()`.
//!
//! A term is rendered through the bindings the state holds: the member's entry
//! symbols (`this`, the parameters), the values of the fields on entry (`old(x.f)`),
//! the store's variables and the current heap's fields. A term with a part no binding
//! names (a loop's or a call's fresh symbol, a snapshot) is not rendered at all: the
//! caller then says less rather than show solver symbols.
//!
//! Architecture invariant: read-only, and it never asks the solver.

use crate::state::State;
use crate::state::chunk::ChunkKind;
use crate::state::term::{Op, Sort, Term};
use crate::syntax::ast::{MemberKind, Program};
use std::collections::HashMap;

/// The names the state gives to terms.
pub struct Names<'a> {
    prog: &'a Program,
    /// Bindings to the entry state only (parameters, `this`, `old(x.f)`).
    entry: HashMap<Term, String>,
    /// Bindings to the current state (variables, `x.f` in the current heap).
    current: HashMap<Term, String>,
    /// Field values and predicate snapshots held now, and held on entry.
    now_values: std::collections::HashSet<Term>,
    old_values: std::collections::HashSet<Term>,
}

impl<'a> Names<'a> {
    /// The bindings of `state`; `entry` are the names of the member's entry symbols
    /// (`this` and its parameters).
    pub fn new(prog: &'a Program, state: &State, entry: &[String]) -> Names<'a> {
        let mut n = Names {
            prog,
            entry: HashMap::new(),
            current: HashMap::new(),
            now_values: Default::default(),
            old_values: Default::default(),
        };
        for x in entry {
            for sort in [Sort::Ref, Sort::Int, Sort::Bool, Sort::Perm] {
                n.entry.insert(Term::var(x, sort), x.clone());
            }
        }
        // Store variables: a short name for every value a variable holds now.
        let mut vars: Vec<(String, Term)> =
            state.store.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        for (k, v) in &vars {
            // A literal reads as itself: a variable holding `0` does not rename
            // every other `0` in a message (`find(0, s)` is not `find(result, s)`).
            if matches!(v.op(), Op::Int(_) | Op::BigInt(_) | Op::Rat(..) | Op::Bool(_) | Op::Null) {
                continue;
            }
            // `result` names only a value nothing else names, and never a compound
            // (`k + i` says more than `result` in a message about `result`).
            if k == "result" && (n.current.contains_key(v) || !v.args().is_empty()) {
                continue;
            }
            n.current.entry(v.clone()).or_insert_with(|| k.clone());
        }
        // Fields on entry, then fields now (receivers named through earlier bindings;
        // a few rounds reach `x.next.val`).
        for _ in 0..3 {
            n.name_fields(&state.old, true);
            n.name_fields(&state.heap, false);
        }
        n
    }

    /// Name the values of `heap`'s field chunks after their locations (`old(x.f)` for
    /// the entry heap, `x.f` for the current one) where the receiver has a name.
    fn name_fields(&mut self, heap: &crate::state::heap::Heap, old: bool) {
        for c in heap.iter() {
            self.values_of(c, old);
            let named = if old { &self.entry } else { &self.current };
            if let (ChunkKind::Field(f), Some(r)) = (&c.kind, &c.recv)
                && !named.contains_key(&c.value)
                && let Some(rs) = self.render_in(r, old)
            {
                let text = if old {
                    format!("old({rs}.{})", short(f))
                } else {
                    format!("{rs}.{}", short(f))
                };
                let named = if old { &mut self.entry } else { &mut self.current };
                named.insert(c.value.clone(), text);
            }
        }
    }

    fn values_of(&mut self, c: &crate::state::chunk::Chunk, old: bool) {
        let set = if old { &mut self.old_values } else { &mut self.now_values };
        set.insert(c.value.clone());
    }

    /// `t` in terms of the entry state (`this`, the parameters, `old(x.f)`): what the
    /// member computed from its inputs; `None` when some part has no such name.
    pub fn render(&self, t: &Term) -> Option<String> {
        self.render_in(t, true)
    }

    /// `t` in terms of the current state as well (variables, `x.f` now): for naming
    /// a receiver or a value; `None` when some part has no name.
    pub fn render_now(&self, t: &Term) -> Option<String> {
        self.render_in(t, true).filter(|s| !s.contains("old(")).or_else(|| self.render_in(t, false))
    }

    /// `t` in terms of the entry state where it can be, and of the variables and
    /// fields of the current state elsewhere (`old(this.n) + i` for a loop's `i`):
    /// what a check reads at the point where it fails.
    pub fn render_here(&self, t: &Term) -> Option<String> {
        self.render_in(t, false)
    }

    /// `t` rendered with the entry bindings only (`entry`), or with every binding.
    fn render_in(&self, t: &Term, entry: bool) -> Option<String> {
        let mut out = String::new();
        self.write(t, entry, 0, &mut out, 0).then_some(out)
    }

    fn lookup(&self, t: &Term, entry: bool) -> Option<&String> {
        if let Some(s) = self.entry.get(t) {
            // `old(x.f)` when the field has not changed reads `x.f`.
            if !entry
                && let Some(cur) = self.current.get(t)
                && s.starts_with("old(")
            {
                return Some(cur);
            }
            return Some(s);
        }
        if entry { None } else { self.current.get(t) }
    }

    fn write(&self, t: &Term, entry: bool, outer: u8, out: &mut String, depth: u32) -> bool {
        if depth > 40 || out.len() > 400 {
            return false;
        }
        if let Some(s) = self.lookup(t, entry) {
            out.push_str(s);
            return true;
        }
        let a = t.args();
        let bin = |op: &str, p: u8, out: &mut String| -> bool {
            if p < outer {
                out.push('(');
            }
            let ok = self.write(&a[0], entry, p, out, depth + 1) && {
                out.push_str(&format!(" {op} "));
                self.write(&a[1], entry, p + 1, out, depth + 1)
            };
            if p < outer {
                out.push(')');
            }
            ok
        };
        match t.op() {
            Op::Int(n) => out.push_str(&n.to_string()),
            Op::BigInt(n) => out.push_str(n),
            Op::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Op::Null => out.push_str("null"),
            Op::Rat(n, d) if *d == 1 => out.push_str(&n.to_string()),
            Op::Rat(n, d) => out.push_str(&format!("{n}/{d}")),
            Op::ToPerm => return self.write(&a[0], entry, outer, out, depth + 1),
            Op::Add => return bin("+", 7, out),
            Op::Sub => return bin("-", 7, out),
            Op::Mul => return bin("*", 8, out),
            Op::Div | Op::PDiv => return bin("/", 8, out),
            Op::Mod => return bin("%", 8, out),
            Op::Lt => return bin("<", 6, out),
            Op::Le => return bin("<=", 6, out),
            Op::Eq => return bin("==", 5, out),
            Op::And if a.len() == 2 => return bin("&&", 4, out),
            Op::Or if a.len() == 2 => return bin("||", 3, out),
            Op::Implies => return bin("==>", 2, out),
            Op::Not => {
                // `!(a == b)` reads `a != b`, `!(a < b)` reads `a >= b`.
                let x = &a[0];
                let (sym, flip) = match x.op() {
                    Op::Eq => ("!=", false),
                    Op::Lt => (">=", false),
                    Op::Le => (">", false),
                    _ => ("", true),
                };
                if flip {
                    out.push('!');
                    return self.write(x, entry, 9, out, depth + 1);
                }
                let xa = x.args();
                if 6 < outer {
                    out.push('(');
                }
                let ok = self.write(&xa[0], entry, 6, out, depth + 1) && {
                    out.push_str(&format!(" {sym} "));
                    self.write(&xa[1], entry, 7, out, depth + 1)
                };
                if 6 < outer {
                    out.push(')');
                }
                return ok;
            }
            Op::Neg => {
                out.push('-');
                return self.write(&a[0], entry, 9, out, depth + 1);
            }
            Op::Ite => {
                if 1 < outer {
                    out.push('(');
                }
                let ok = self.write(&a[0], entry, 2, out, depth + 1)
                    && {
                        out.push_str(" ? ");
                        self.write(&a[1], entry, 2, out, depth + 1)
                    }
                    && {
                        out.push_str(" : ");
                        self.write(&a[2], entry, 1, out, depth + 1)
                    };
                if 1 < outer {
                    out.push(')');
                }
                return ok;
            }
            Op::Len => {
                if !self.write(&a[0], entry, 10, out, depth + 1) {
                    return false;
                }
                out.push_str(".length");
            }
            Op::App(f) => return self.write_app(&f.name, a, entry, out, depth),
            _ => return false,
        }
        true
    }

    /// A pure call `C.m(snapshot, recv, args)` as `recv.m(args)` (or `C.m(args)`),
    /// inside `old(..)` when its snapshot is made of the entry heap's values only.
    fn write_app(&self, name: &str, a: &[Term], entry: bool, out: &mut String, depth: u32) -> bool {
        let Some((class, member)) = name.split_once('.') else { return false };
        let Some(m) = self
            .prog
            .classes
            .iter()
            .find(|c| c.name.name == class)
            .and_then(|c| c.members.iter().find(|m| m.name.name == member))
        else {
            return false;
        };
        if m.kind != MemberKind::Pure || a.is_empty() {
            return false;
        }
        let (now, old) = self.snapshot_age(&a[0]);
        let wrap_old = match (now, old) {
            (true, _) => false,
            (false, true) => true,
            (false, false) => return false,
        };
        if wrap_old && !entry {
            // Render with entry names: `old(..)` of a current-state name is wrong.
            return false;
        }
        if wrap_old {
            out.push_str("old(");
        }
        let mut rest = &a[1..];
        if m.is_static {
            out.push_str(&format!("{class}."));
        } else {
            let Some((r, tail)) = rest.split_first() else { return false };
            if !self.write(r, entry, 10, out, depth + 1) {
                return false;
            }
            out.push('.');
            rest = tail;
        }
        out.push_str(member);
        out.push('(');
        for (i, x) in rest.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            if !self.write(x, entry, 0, out, depth + 1) {
                return false;
            }
        }
        out.push(')');
        if wrap_old {
            out.push(')');
        }
        true
    }

    /// Is the snapshot `s` made of values held now, and of values held on entry?
    fn snapshot_age(&self, s: &Term) -> (bool, bool) {
        let mut leaves = vec![];
        leaves_of(s, &mut leaves);
        let now = leaves.iter().all(|l| self.now_values.contains(l));
        let old = leaves.iter().all(|l| self.old_values.contains(l));
        (now, old)
    }
}

/// The parts of a snapshot below `combine`, `first`, `second` and the wrappers.
fn leaves_of(s: &Term, out: &mut Vec<Term>) {
    match s.op() {
        Op::Unit => {}
        Op::Combine | Op::First | Op::Second | Op::Wrap(_) => {
            for a in s.args() {
                leaves_of(a, out);
            }
        }
        _ => out.push(s.clone()),
    }
}

fn short(f: &str) -> &str {
    f.rsplit('.').next().unwrap_or(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::chunk::Chunk;

    #[test]
    fn entry_names_come_first_and_unnamed_symbols_are_not_shown() {
        let prog = Program { classes: vec![], memo: Default::default() };
        let this = Term::var("this", Sort::Ref);
        let v0 = Term::var("s@3", Sort::Int);
        let mut old = crate::state::heap::Heap::default();
        old.add(Chunk::field("C.n".into(), this.clone(), v0.clone()));
        let now = Term::add(v0.clone(), Term::int(2));
        let mut s = State::default();
        s.heap.add(Chunk::field("C.n".into(), this.clone(), now.clone()));
        s.old = std::rc::Rc::new(old);
        s.set("this", this.clone());
        let names = Names::new(&prog, &s, &["this".to_string()]);
        let goal = Term::eq(Term::add(v0.clone(), Term::int(1)), now.clone());
        let shown = names.render(&goal).unwrap();
        assert!(shown.contains("old(this.n) + 1") && shown.contains("old(this.n) + 2"), "{shown}");
        assert_eq!(names.render_now(&now).as_deref(), Some("this.n"));
        assert_eq!(names.render(&Term::var("i@1", Sort::Int)), None);
        assert_eq!(names.render_now(&Term::var("i@1", Sort::Int)), None);
        // A loop's fresh value is named by the variable that holds it now.
        let i1 = Term::var("i@1", Sort::Int);
        s.set("i", i1.clone());
        let names = Names::new(&prog, &s, &["this".to_string()]);
        let goal = Term::eq(Term::add(v0.clone(), i1.clone()), now.clone());
        assert_eq!(names.render(&goal), None);
        assert_eq!(names.render_here(&goal).as_deref(), Some("this.n == old(this.n) + i"));
    }
}

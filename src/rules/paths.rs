//! Inputs solved from path conditions (whitebox testing, `idf-verify test --paths`):
//! when a path of the member ends (completed, failed, or stopped by the time budget),
//! the decider is asked for a few distinct models of its path condition, read at the
//! member's entry state: `this` and the parameters, and the fields, array lengths and
//! array elements of the heap the path started from (the old heap). The oracle turns
//! each into a concrete input state and runs it.
//!
//! Architecture invariant: recording is off (`Verifier::path_inputs == 0`) unless a
//! tester asked for it, and it only reads the path: it never assumes, branches or
//! ends a path (the ledger is counted where the path ends, as before).

use crate::rules::Verifier;
use crate::rules::result::{EntryModel, ModelValue};
use crate::rules::sort_of;
use crate::state::State;
use crate::state::chunk::{Chunk, ChunkKind};
use crate::state::heap::Heap;
use crate::state::term::{Op, Sort, Term};
use crate::syntax::ast::{BinOp, CallRecv, Expr, ExprKind, MemberRef, Span};

/// How a path ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathEndKind {
    /// It reached the end of what was checked (the postcondition consumed).
    Completed,
    /// It failed with this id at this position.
    Failed { id: &'static str, span: Span },
    /// The member's time budget ran out on it.
    OutOfBudget,
}

/// One input state solved from a path condition: the entry model (as a replayed
/// counterexample has it) and the elements of the arrays it gives a length.
#[derive(Clone, Debug, Default)]
pub struct PathInput {
    pub entry: EntryModel,
    /// Per array chunk of the entry heap: the array and its elements by index (`None`
    /// where the chunk does not cover the index or the model gives no value).
    pub elements: Vec<(ModelValue, Vec<Option<ModelValue>>)>,
    /// Sequence parameters: the name and the elements (`None` where the model gives
    /// no value).
    pub seqs: Vec<(String, Vec<Option<ModelValue>>)>,
    /// Amount parameters: the name and the rational, as `n` or `n/d`.
    pub perms: Vec<(String, String)>,
}

/// One path's end and the inputs solved from its path condition.
#[derive(Clone, Debug)]
pub struct PathEnd {
    pub how: PathEndKind,
    pub inputs: Vec<PathInput>,
}

/// At most this many path ends are recorded per member (the rest are counted only).
pub const MAX_PATH_ENDS: usize = 256;
/// Elements read per array (an array longer than this has the rest at their default).
pub const MAX_ELEMENTS: usize = 64;
/// Arrays and sequences of at most this many elements are preferred (then at most
/// `MAX_ELEMENTS`).
pub const SHORT: usize = 8;
/// Integer inputs are preferred within `-SMALL ..= SMALL`.
pub const SMALL: i64 = 1000;

/// The model value of a printed Z3 value of sort `sort`.
fn model_value(sort: Sort, raw: &str) -> ModelValue {
    match sort {
        Sort::Bool => ModelValue::Bool(raw == "true"),
        Sort::Int => {
            ModelValue::Int(match raw.strip_prefix("(- ").and_then(|x| x.strip_suffix(')')) {
                Some(n) => format!("-{n}"),
                None => raw.to_string(),
            })
        }
        _ if raw == "null" => ModelValue::Null,
        _ => ModelValue::Ref(raw.to_string()),
    }
}

fn readable(sort: Sort) -> bool {
    matches!(sort, Sort::Int | Sort::Bool | Sort::Ref)
}

/// A printed Z3 real (`3.0`, `(/ 1.0 2.0)`, `(- 1.0)`) as `n` or `n/d`.
fn rational(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let int = |x: &str| -> Option<String> {
        let x = x.trim();
        let x = x.strip_suffix(".0").unwrap_or(x);
        x.parse::<i128>().ok().map(|n| n.to_string())
    };
    if let Some(inner) = raw.strip_prefix("(- ").and_then(|x| x.strip_suffix(')')) {
        return rational(inner).map(|r| format!("-{r}"));
    }
    if let Some(inner) = raw.strip_prefix("(/ ").and_then(|x| x.strip_suffix(')')) {
        let (n, d) = inner.split_once(' ')?;
        return Some(format!("{}/{}", int(n)?, int(d)?));
    }
    int(raw)
}

/// At most this many predicate openings are remembered per member for reading the
/// values folded inside the entry state's instances.
pub const MAX_OPENED: usize = 4096;

/// How deep instances nested in unopened instances are read (a list of this many nodes).
const FOLDED_DEPTH: usize = 12;
/// At most this many chunks are read from unopened instances per path end (a tree's
/// instances double at each level).
const MAX_FOLDED: usize = 64;

impl<'p> Verifier<'p> {
    /// The chunks producing the body of predicate `p` for `recv.p(args)` with snapshot
    /// `snap` would add, as `produce` splits snapshots (an impure conjunction `a && b`
    /// gives `first`/`second`; a conditional part gives both branches the snapshot),
    /// for the bodies whose receivers are `this`, a parameter, or a field the body
    /// itself holds; nested instances to `depth`. The values are candidates read from a
    /// model: the interpreter decides whether an input built from them is accepted.
    fn folded(
        &self,
        p: MemberRef,
        recv: Option<Term>,
        args: &[Term],
        snap: &Term,
        depth: usize,
        out: &mut Vec<Chunk>,
    ) {
        if depth == 0 || out.len() >= MAX_FOLDED || self.info.in_interface(p) {
            return;
        }
        let Some(body) = self.body_of(p) else { return };
        let m = &self.prog.classes[p.class].members[p.member];
        let mut env: Vec<(String, Term)> =
            m.params.iter().map(|x| x.name.name.clone()).zip(args.iter().cloned()).collect();
        if let Some(r) = recv {
            env.push(("this".into(), r));
        }
        self.folded_in(body, snap.clone(), &mut env, depth, out);
    }

    fn folded_in(
        &self,
        a: &'p Expr,
        snap: Term,
        env: &mut Vec<(String, Term)>,
        depth: usize,
        out: &mut Vec<Chunk>,
    ) {
        // A term for an expression of the body: `this`, a parameter, a field of an
        // object whose chunk the body gave.
        fn value(e: &Expr, env: &[(String, Term)], out: &[Chunk]) -> Option<Term> {
            match &e.kind {
                ExprKind::This => env.iter().find(|(x, _)| x == "this").map(|(_, t)| t.clone()),
                ExprKind::Local(x) => env.iter().find(|(y, _)| y == x).map(|(_, t)| t.clone()),
                ExprKind::Field { recv, field, .. } => {
                    let r = value(recv, env, out)?;
                    out.iter()
                        .find(|c| {
                            c.recv.as_ref() == Some(&r)
                                && matches!(&c.kind, ChunkKind::Field(n)
                                    if n.rsplit_once('.').map(|(_, f)| f) == Some(field.name.as_str()))
                        })
                        .map(|c| c.value.clone())
                }
                _ => None,
            }
        }
        if !self.impure(a) {
            return;
        }
        match &a.kind {
            ExprKind::Binary { op: BinOp::And, l, r } => {
                let (sl, sr) = match (self.impure(l), self.impure(r)) {
                    (true, true) => (Term::first(snap.clone()), Term::second(snap)),
                    (true, false) => (snap, Term::unit()),
                    _ => (Term::unit(), snap),
                };
                self.folded_in(l, sl, env, depth, out);
                self.folded_in(r, sr, env, depth, out);
            }
            ExprKind::Binary { op: BinOp::Implies, r, .. } => {
                self.folded_in(r, snap, env, depth, out)
            }
            ExprKind::Cond { a: x, b: y, .. } => {
                self.folded_in(x, snap.clone(), env, depth, out);
                self.folded_in(y, snap, env, depth, out);
            }
            ExprKind::Frac { acc, .. } => self.folded_in(acc, snap, env, depth, out),
            ExprKind::Acc(f) => {
                if let ExprKind::Field { recv, field, class } = &f.kind
                    && let Some(r) = value(recv, env, out)
                {
                    let name = self.info.field(class.unwrap_or(0), &field.name);
                    let v = Term::unwrap(snap, sort_of(&f.ty));
                    out.push(Chunk::field(name, r, v));
                }
            }
            ExprKind::AccArray(arr) => {
                if let Some(r) = value(arr, env, out) {
                    let v = Term::unwrap(snap, Sort::Arr(crate::rules::elem_of(&arr.ty)));
                    out.push(Chunk::array(r, v));
                }
            }
            ExprKind::Call { recv, args, target: Some(q), .. } => {
                let r = match recv {
                    CallRecv::Expr(e) => match value(e, env, out) {
                        Some(r) => Some(r),
                        None => return,
                    },
                    CallRecv::Static(_) => None,
                    CallRecv::Implicit => {
                        env.iter().find(|(x, _)| x == "this").map(|(_, t)| t.clone())
                    }
                };
                let Some(targs) =
                    args.iter().map(|e| value(e, env, out)).collect::<Option<Vec<Term>>>()
                else {
                    return;
                };
                self.folded(*q, r, &targs, &snap, depth - 1, out);
            }
            _ => {}
        }
    }

    /// A path ended (`how`) in `state` (`None` when the ending site has no state: the
    /// time budget): record it with up to `path_inputs` distinct models of its path
    /// condition. Does nothing unless a tester asked for path inputs.
    pub fn end_path(&mut self, state: Option<&State>, how: PathEndKind) {
        if self.path_inputs == 0 || self.axioms.translating {
            return;
        }
        if self.path_ends.len() >= MAX_PATH_ENDS {
            self.path_ends_dropped += 1;
            return;
        }
        let inputs = match how {
            // Past the budget the solver is not asked (the oracle falls back to
            // random inputs for these paths).
            PathEndKind::OutOfBudget => vec![],
            _ => self.solve_inputs(state),
        };
        self.path_ends.push(PathEnd { how, inputs });
    }

    fn solve_inputs(&mut self, state: Option<&State>) -> Vec<PathInput> {
        let Some(r) = self.member else { return vec![] };
        let m = &self.prog.classes[r.class].members[r.member];
        // The terms read, then (for blocking only) whether each reference is null.
        let mut terms: Vec<Term> = vec![];
        let mut store: Vec<String> = vec![];
        if !m.is_static {
            store.push("this".into());
            terms.push(Term::var("this", Sort::Ref));
        }
        // Sequence parameters (of integers, booleans or references): the index of
        // their length among `terms`; amount parameters likewise.
        let mut seqs: Vec<(String, usize, Term)> = vec![];
        let mut perms: Vec<(String, usize)> = vec![];
        for p in &m.params {
            let sort = crate::rules::sort_of(&p.ty);
            if readable(sort) {
                store.push(p.name.name.clone());
                terms.push(Term::var(&p.name.name, sort));
            }
        }
        for p in &m.params {
            let sort = crate::rules::sort_of(&p.ty);
            let x = Term::var(&p.name.name, sort);
            match sort {
                Sort::Seq(_, 1) if readable(sort.seq_elem()) => {
                    seqs.push((p.name.name.clone(), terms.len(), x.clone()));
                    terms.push(Term::seq_len(x));
                }
                Sort::Perm => {
                    perms.push((p.name.name.clone(), terms.len()));
                    terms.push(x);
                }
                _ => {}
            }
        }
        let empty = Heap::new();
        let heap: &Heap = match state {
            Some(s) if !s.old.is_empty() => &s.old,
            Some(s) => &s.heap,
            None => &empty,
        };
        // The chunks of the entry heap, and those the bodies of its predicate instances
        // gave when the member opened them (transitively: an instance inside an
        // opened body that was opened too).
        let mut preds: Vec<Chunk> =
            heap.iter().filter(|c| matches!(c.kind, ChunkKind::Pred(..))).cloned().collect();
        let mut known: Vec<Term> = preds.iter().map(|c| c.value.clone()).collect();
        let mut inside: Vec<Chunk> = vec![];
        let mut used = vec![false; self.opened.len()];
        loop {
            let mut grew = false;
            for (k, (snap, chunks)) in self.opened.iter().enumerate() {
                if !used[k] && known.contains(snap) {
                    used[k] = true;
                    grew = true;
                    for c in chunks {
                        if matches!(c.kind, ChunkKind::Pred(..)) {
                            known.push(c.value.clone());
                            preds.push(c.clone());
                        } else {
                            inside.push(c.clone());
                        }
                    }
                }
            }
            if !grew {
                break;
            }
        }
        // The instances (of the entry heap, or inside opened ones) the member never
        // opened: their bodies' chunks as producing the body would make them from the
        // snapshot.
        for c in &preds {
            if let ChunkKind::Pred(f, _) = &c.kind
                && !self.opened.iter().any(|(snap, _)| *snap == c.value)
            {
                self.folded(*f, c.recv.clone(), &c.args, &c.value, FOLDED_DEPTH, &mut inside);
            }
        }
        let mut fields: Vec<(usize, String)> = vec![];
        let mut arrays: Vec<(usize, Term, Option<Term>)> = vec![];
        for c in heap.iter().chain(&inside) {
            match (&c.kind, &c.recv) {
                (ChunkKind::Field(name), Some(recv)) if readable(c.value.sort()) => {
                    fields.push((terms.len(), name.to_string()));
                    terms.push(recv.clone());
                    terms.push(c.value.clone());
                }
                (ChunkKind::Array, Some(recv)) => {
                    arrays.push((terms.len(), c.value.clone(), c.cond.clone()));
                    terms.push(recv.clone());
                    terms.push(Term::len(recv.clone()));
                }
                _ => {}
            }
        }
        let nulls: Vec<Term> = terms
            .iter()
            .filter(|t| t.sort() == Sort::Ref)
            .map(|t| Term::eq(t.clone(), Term::null()))
            .collect();
        terms.extend(nulls);
        // `null` is an element of the model's universe like any other: a reference is
        // null when its value is null's.
        let null_at = terms.len();
        terms.push(Term::null());
        // Once the lengths are known: each array chunk's elements (and, for a
        // segment, whether it covers the index).
        let lengths = |values: &[Option<String>]| -> Vec<usize> {
            arrays
                .iter()
                .map(|(i, _, _)| {
                    values
                        .get(i + 1)
                        .cloned()
                        .flatten()
                        .and_then(|n| n.parse::<usize>().ok())
                        .unwrap_or(0)
                        .min(MAX_ELEMENTS)
                })
                .collect()
        };
        let more = |values: &[Option<String>]| -> Vec<Term> {
            let mut out = vec![];
            for ((_, map, cond), n) in arrays.iter().zip(lengths(values)) {
                for i in 0..n {
                    let at = Term::int(i as i64);
                    out.push(Term::select(map.clone(), at.clone()));
                    if let Some(c) = cond {
                        let mut sub = crate::state::term::TermMap::default();
                        sub.insert(crate::state::chunk::Chunk::index(), at);
                        out.push(c.substitute(&sub));
                    }
                }
            }
            for (_, i, x) in &seqs {
                let n = seq_length(values, *i);
                for j in 0..n {
                    out.push(Term::seq_at(x.clone(), Term::int(j as i64)));
                }
            }
            out
        };
        // A failed check: the inputs violate its goal.
        let violated = self.failing_goal.clone().map(Term::not);
        // Small values preferred: integers within SMALL, lengths within `short` (a run
        // over a short array is fast, and its failure is easy to read).
        let prefer = |short: i64| -> Vec<Term> {
            terms
                .iter()
                .filter(|t| t.sort() == Sort::Int)
                .flat_map(|t| {
                    let hi = if matches!(t.op(), Op::Len | Op::SeqLen) { short } else { SMALL };
                    [Term::le(Term::int(-SMALL), t.clone()), Term::le(t.clone(), Term::int(hi))]
                })
                .collect()
        };
        let (short, small) = (prefer(SHORT as i64), prefer(MAX_ELEMENTS as i64));
        // Preferred first: the loops' states equal to their entry states (a run
        // reaches them), with short arrays and sequences; then short ones alone; then
        // longer ones.
        let mut tiers = vec![];
        if !self.loop_links.is_empty() {
            tiers.push(self.loop_links.iter().cloned().chain(short.iter().cloned()).collect());
        }
        if terms.iter().any(|t| matches!(t.op(), Op::Len | Op::SeqLen)) {
            tiers.push(short);
        }
        tiers.push(small);
        let models = self.dec.path_models(violated, &tiers, &terms, &more, self.path_inputs);
        let mut out = vec![];
        for (values, extra) in models {
            let null = values.get(null_at).cloned().flatten();
            let value = |sort: Sort, raw: &str| match sort {
                Sort::Ref if null.as_deref() == Some(raw) => ModelValue::Null,
                _ => model_value(sort, raw),
            };
            let at = |i: usize| -> Option<ModelValue> {
                let raw = values.get(i)?.as_ref()?;
                Some(value(terms[i].sort(), raw))
            };
            let mut entry = EntryModel::default();
            for (k, x) in store.iter().enumerate() {
                if let Some(v) = at(k) {
                    entry.store.push((x.clone(), v));
                }
            }
            for (i, name) in &fields {
                if let (Some(r), Some(v)) = (at(*i), at(i + 1)) {
                    entry.fields.push((r, name.clone(), v));
                }
            }
            let mut elements = vec![];
            let mut e = extra.iter();
            for ((i, map, cond), n) in arrays.iter().zip(lengths(&values)) {
                let (Some(a), Some(len)) = (at(*i), at(i + 1)) else {
                    // Still step over this chunk's element reads.
                    for _ in 0..n * (1 + usize::from(cond.is_some())) {
                        e.next();
                    }
                    continue;
                };
                entry.lengths.push((a.clone(), len));
                let sort = Term::select(map.clone(), Term::int(0)).sort();
                let mut elems = vec![];
                for _ in 0..n {
                    let v = e.next().cloned().flatten();
                    let covered = match cond {
                        Some(_) => e.next().cloned().flatten().is_some_and(|b| b == "true"),
                        None => true,
                    };
                    elems.push(v.filter(|_| covered).map(|raw| value(sort, &raw)));
                }
                elements.push((a, elems));
            }
            let mut seq_values = vec![];
            for (name, i, x) in &seqs {
                let n = seq_length(&values, *i);
                let sort = x.sort().seq_elem();
                let elems: Vec<Option<ModelValue>> = (0..n)
                    .map(|_| e.next().cloned().flatten().map(|raw| value(sort, &raw)))
                    .collect();
                seq_values.push((name.clone(), elems));
            }
            let perm_values = perms
                .iter()
                .filter_map(|(name, i)| {
                    let raw = values.get(*i)?.as_ref()?;
                    Some((name.clone(), rational(raw)?))
                })
                .collect();
            out.push(PathInput { entry, elements, seqs: seq_values, perms: perm_values });
        }
        out
    }
}

/// The length the model gives a sequence at `values[i]`, at most `MAX_ELEMENTS`.
fn seq_length(values: &[Option<String>], i: usize) -> usize {
    values
        .get(i)
        .cloned()
        .flatten()
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_ELEMENTS)
}

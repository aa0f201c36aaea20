//! Symbolic terms (the paper's section 3.2): hash-consed, sorted, built by smart
//! constructors that fold constants and the snapshot laws, printed in the paper's
//! notation.
//!
//! Architecture invariant: terms are interned per thread, so two structurally equal
//! terms are the same pointer: `==` is syntactic equality in O(1). Nothing here knows
//! Z3; `crate::decider::z3` translates terms, keyed by `Term::id`.

use std::cell::RefCell;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::rc::Rc;

/// Value sorts that an array can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Elem {
    Int,
    Bool,
    Ref,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sort {
    Int,
    Bool,
    Ref,
    Snap,
    /// The contents of an array: a map from Int to the element sort.
    Arr(Elem),
    /// Permission amounts: the rationals (Z3's Real).
    Perm,
    /// A finite sequence (LANGUAGE.md section 14) nested `depth` >= 1 times over the
    /// base sort: `seq<int>` is `Seq(Int, 1)`, `seq<seq<Node>>` is `Seq(Ref, 2)`.
    Seq(Elem, u8),
}

impl Sort {
    pub fn of_elem(e: Elem) -> Sort {
        match e {
            Elem::Int => Sort::Int,
            Elem::Bool => Sort::Bool,
            Elem::Ref => Sort::Ref,
        }
    }

    /// The sort of a sequence's elements (`self` must be a sequence sort).
    pub fn seq_elem(self) -> Sort {
        match self {
            Sort::Seq(e, d) if d > 1 => Sort::Seq(e, d - 1),
            Sort::Seq(e, _) => Sort::of_elem(e),
            other => other,
        }
    }

    /// The sort of sequences of `self` (`None` for snapshots and arrays).
    pub fn seq_of(self) -> Option<Sort> {
        Some(match self {
            Sort::Int => Sort::Seq(Elem::Int, 1),
            Sort::Bool => Sort::Seq(Elem::Bool, 1),
            Sort::Ref => Sort::Seq(Elem::Ref, 1),
            Sort::Seq(e, d) => Sort::Seq(e, d.checked_add(1)?),
            Sort::Snap | Sort::Arr(_) | Sort::Perm => return None,
        })
    }
}

/// The shape of a quantifier term: its arguments are the bound variables (`Var`
/// terms, fresh symbols of the member), then the trigger groups' terms one group
/// after another (`groups` gives their sizes), then the body. Keeping them all as
/// arguments lets substitution and re-interning treat quantifiers like any term.
/// No trigger group: nothing may instantiate it (LANGUAGE.md section 13), and the
/// solver is given a pattern no term matches rather than left to pick its own.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Binding {
    pub forall: bool,
    pub nvars: u32,
    pub groups: Rc<[u32]>,
    /// What the quantifier stands for, in the user's terms (a quantifier of the
    /// program, a law of sequences): the solver's quantifier id, so that its
    /// instances are counted under this name (`--stats`, a timeout's message).
    pub name: Option<Rc<str>>,
}

/// A function symbol of the program: a pure method `C.p` with its domain
/// (snapshot, receiver when an instance member, parameters) and range.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Func {
    pub name: Rc<str>,
    pub domain: Rc<[Sort]>,
    pub range: Sort,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// A symbol (fresh variable) of a sort; the name is unique within a member.
    Var(Rc<str>, Sort),
    Int(i64),
    /// A rational permission amount `n/d`, normalized (`d > 0`, `gcd(n, d) = 1`).
    Rat(i64, i64),
    /// An integer as a permission amount.
    ToPerm,
    /// Exact division of permission amounts.
    PDiv,
    /// An integer beyond `i64`, in decimal.
    BigInt(Rc<str>),
    Bool(bool),
    /// The class with this index in the program (the value of `class#(o)` for its
    /// objects: `rules/dispatch.rs`), printed by name; distinct classes differ.
    Class(u32, Rc<str>),
    Null,
    Unit,
    Add,
    Sub,
    Mul,
    /// Java division and remainder (truncating); the decider encodes them.
    Div,
    Mod,
    Neg,
    Lt,
    Le,
    Eq,
    Not,
    And,
    Or,
    Implies,
    Ite,
    Combine,
    First,
    Second,
    /// From a value sort into Snap (the paper's `fromRef`).
    Wrap(Sort),
    /// From Snap into a value sort (the paper's `toRef`).
    Unwrap(Sort),
    /// A pure method applied to (snapshot, receiver?, args).
    App(Func),
    /// The immutable length of an array reference.
    Len,
    /// `select(arr, i)`
    Select,
    /// `store(arr, i, v)`
    Store,
    /// The array holding one value everywhere (default contents of `new T[n]`).
    ConstArr(Elem),
    /// `∀`/`∃` over `Binding::vars`, with its triggers; the one argument is the body.
    Quant(Binding),
    /// The empty sequence of a sequence sort.
    SeqEmpty(Sort),
    /// The sequence of one element.
    SeqUnit,
    /// Concatenation of two sequences.
    SeqConcat,
    /// The length of a sequence.
    SeqLen,
    /// `s[i]` (defined when `0 ≤ i < |s|`; the rules check that).
    SeqAt,
    /// `extract(s, offset, length)`: the slice `s[offset .. offset + length]`.
    SeqExtract,
    /// `contains(s, t)`: `t` is a subsequence of `s` (membership with `t` a unit).
    SeqContains,
}

pub struct Node {
    pub id: u64,
    /// A hash of the term's structure (operator, sort, arguments' shapes): unlike the
    /// id, the same for the same term whatever was interned before it, so orders built
    /// on it (`Term::eq`'s argument order, `Ord`) never depend on a thread's history.
    pub shape: u64,
    /// Nodes in the term's tree (saturating): smaller terms order first, so an
    /// equation reads `x = f(x)`, not `f(x) = x`.
    pub size: u32,
    pub sort: Sort,
    pub op: Op,
    pub args: Box<[Term]>,
    /// The interner's hash of the operator and the arguments' ids (kept, so a growing
    /// table rehashes without recomputing it).
    key: u64,
}

/// Dropping a deep term must not recurse as deep as the term (a long straight-line
/// program builds terms hundreds of thousands deep): children whose last reference
/// this is are taken apart on a heap-allocated stack.
impl Drop for Node {
    fn drop(&mut self) {
        let mut stack: Vec<Term> = std::mem::take(&mut self.args).into_vec();
        while let Some(t) = stack.pop() {
            if let Ok(mut node) = Rc::try_unwrap(t.0) {
                stack.extend(std::mem::take(&mut node.args).into_vec());
            }
        }
    }
}

/// A hash-consed term: cheap to clone, compared by pointer.
#[derive(Clone)]
pub struct Term(Rc<Node>);

impl PartialEq for Term {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for Term {}
impl Hash for Term {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.id.hash(state)
    }
}
impl PartialOrd for Term {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
/// By size, then shape, then (for the rare collision of two shapes) by id: output
/// sorted by terms is the same whatever the thread interned before.
impl Ord for Term {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let key = |t: &Term| (t.0.size, t.0.shape, t.0.id);
        key(self).cmp(&key(other))
    }
}

/// A hasher for keys that are already unique numbers (term ids): the identity, which
/// spares SipHash where terms are looked up per chunk.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        // Spread the bits a little (ids are consecutive).
        self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A set of terms hashed by id.
pub type TermSet = std::collections::HashSet<Term, std::hash::BuildHasherDefault<IdHasher>>;
/// A map keyed by terms (or ids, or pairs with them), hashed by id.
pub type TermMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;

/// The hash-consing table of one thread: every term, found by its operator and its
/// arguments' ids. The entries are the terms themselves (no separate key).
#[derive(Default)]
struct Interner {
    table: hashbrown::HashTable<Term>,
    hasher: hashbrown::DefaultHashBuilder,
    next_id: u64,
    generation: u64,
}

impl Interner {
    fn hash(&self, op: &Op, args: &[Term]) -> u64 {
        let mut h = self.hasher.build_hasher();
        op.hash(&mut h);
        for a in args {
            h.write_u64(a.0.id);
        }
        h.finish()
    }
}

thread_local! {
    static INTERNER: RefCell<Interner> = RefCell::new(Interner::default());
    /// The number of the next renamed bound variable (`i@1'7`) on this thread.
    static BOUND: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Forget every interned term of this thread (between members). Terms still alive
/// stay valid but will no longer be shared with new ones (see `generation`). Bound
/// variables are numbered afresh too: a name orders terms (`a == b` puts the smaller
/// first), so a member's terms, and what the solver answers about them, must not
/// depend on how many quantifiers the thread renamed before.
pub fn reset_interner() {
    INTERNER.with(|i| {
        let mut i = i.borrow_mut();
        i.table = hashbrown::HashTable::new();
        i.generation += 1;
    });
    BOUND.with(|n| n.set(0));
}

/// A number for a renamed bound variable, unique on this thread since the last
/// `reset_interner` (the terms of one member).
pub fn next_bound_number() -> u64 {
    BOUND.with(|n| {
        let k = n.get();
        n.set(k + 1);
        k
    })
}

/// How many times this thread's interner was reset: a term kept across a reset
/// (a cached definition) must be rebuilt (`Term::reintern`) to be shared again.
pub fn generation() -> u64 {
    INTERNER.with(|i| i.borrow().generation)
}

fn mk(op: Op, sort: Sort, args: Vec<Term>) -> Term {
    INTERNER.with(|cell| {
        let mut i = cell.borrow_mut();
        let hash = i.hash(&op, &args);
        let same = |t: &Term| {
            t.0.op == op
                && t.0.args.len() == args.len()
                && t.0.args.iter().zip(&args).all(|(a, b)| a.0.id == b.0.id)
        };
        if let Some(t) = i.table.find(hash, same) {
            return t.clone();
        }
        i.next_id += 1;
        let mut h = std::hash::DefaultHasher::new();
        op.hash(&mut h);
        sort.hash(&mut h);
        for a in &args {
            a.0.shape.hash(&mut h);
        }
        let shape = h.finish();
        let size = args.iter().fold(1u32, |n, a| n.saturating_add(a.0.size));
        let t = Term(Rc::new(Node {
            id: i.next_id,
            shape,
            size,
            sort,
            op,
            args: args.into(),
            key: hash,
        }));
        i.table.insert_unique(hash, t.clone(), |t| t.0.key);
        t
    })
}

// Smart constructors named after the operations they build (`Term::add(a, b)`), not
// operator-trait implementations: they fold constants and need no receiver.
#[allow(clippy::should_implement_trait)]
impl Term {
    pub fn id(&self) -> u64 {
        self.0.id
    }
    pub fn sort(&self) -> Sort {
        self.0.sort
    }
    pub fn op(&self) -> &Op {
        &self.0.op
    }
    pub fn args(&self) -> &[Term] {
        &self.0.args
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self.op() {
            Op::Bool(b) => Some(*b),
            _ => None,
        }
    }
    /// Is `self` a fact true in every state by the theory alone: an array's length or
    /// a sequence's is not negative (`0 ≤ len(a)`, `0 ≤ |s|`)?
    pub fn is_valid_fact(&self) -> bool {
        *self.op() == Op::Le
            && self.args()[0].as_int() == Some(0)
            && matches!(self.args()[1].op(), Op::Len | Op::SeqLen)
    }
    pub fn as_int(&self) -> Option<i64> {
        match self.op() {
            Op::Int(n) => Some(*n),
            _ => None,
        }
    }
    /// The exact value of a constant amount (`Rat`, or an integer read as an amount).
    pub fn as_rat(&self) -> Option<Rat> {
        match self.op() {
            Op::Rat(n, d) => Some(Rat::new(*n, *d)),
            _ => None,
        }
    }
    pub fn is_true(&self) -> bool {
        self.as_bool() == Some(true)
    }
    pub fn is_false(&self) -> bool {
        self.as_bool() == Some(false)
    }

    // ----- leaves -----
    pub fn var(name: &str, sort: Sort) -> Term {
        mk(Op::Var(name.into(), sort), sort, vec![])
    }
    pub fn int(n: i64) -> Term {
        mk(Op::Int(n), Sort::Int, vec![])
    }
    pub fn big_int(digits: &str) -> Term {
        mk(Op::BigInt(digits.into()), Sort::Int, vec![])
    }
    /// The amount `r`.
    pub fn rat(r: Rat) -> Term {
        mk(Op::Rat(r.n, r.d), Sort::Perm, vec![])
    }
    /// `write` (1) and `none` (0).
    pub fn write() -> Term {
        Term::rat(Rat::ONE)
    }
    pub fn none() -> Term {
        Term::rat(Rat::ZERO)
    }
    /// An integer term as an amount (amounts stay as they are).
    pub fn to_perm(t: Term) -> Term {
        if t.sort() != Sort::Int {
            return t;
        }
        if let Some(n) = t.as_int() {
            return Term::rat(Rat::new(n, 1));
        }
        mk(Op::ToPerm, Sort::Perm, vec![t])
    }
    /// `a / b`, exact (amounts).
    pub fn pdiv(a: Term, b: Term) -> Term {
        let (a, b) = (Term::to_perm(a), Term::to_perm(b));
        if let (Some(x), Some(y)) = (a.as_rat(), b.as_rat())
            && let Some(q) = x.checked_div(y)
        {
            return Term::rat(q);
        }
        if b.as_rat() == Some(Rat::ONE) {
            return a;
        }
        mk(Op::PDiv, Sort::Perm, vec![a, b])
    }
    /// Both operands as amounts when either is one.
    fn perm_pair(a: Term, b: Term) -> (Term, Term, bool) {
        if a.sort() == Sort::Perm || b.sort() == Sort::Perm {
            (Term::to_perm(a), Term::to_perm(b), true)
        } else {
            (a, b, false)
        }
    }
    pub fn bool(b: bool) -> Term {
        mk(Op::Bool(b), Sort::Bool, vec![])
    }
    pub fn tt() -> Term {
        Term::bool(true)
    }
    pub fn ff() -> Term {
        Term::bool(false)
    }
    /// The constant of class `index`, named `name`.
    pub fn class(index: u32, name: &str) -> Term {
        mk(Op::Class(index, name.into()), Sort::Int, vec![])
    }
    pub fn null() -> Term {
        mk(Op::Null, Sort::Ref, vec![])
    }
    pub fn unit() -> Term {
        mk(Op::Unit, Sort::Snap, vec![])
    }
    /// The default value of a sort (`0`, `false`, `null`).
    pub fn default_of(sort: Sort) -> Term {
        match sort {
            Sort::Int => Term::int(0),
            Sort::Bool => Term::ff(),
            Sort::Ref => Term::null(),
            Sort::Snap => Term::unit(),
            Sort::Arr(e) => Term::const_arr(e, Term::default_of(Sort::of_elem(e))),
            Sort::Perm => Term::none(),
            Sort::Seq(..) => Term::seq_empty(sort),
        }
    }

    // ----- arithmetic -----
    pub fn add(a: Term, b: Term) -> Term {
        let (a, b, perm) = Term::perm_pair(a, b);
        if perm {
            return match (a.as_rat(), b.as_rat()) {
                (Some(x), Some(y)) if x.checked_add(y).is_some() => {
                    Term::rat(x.checked_add(y).unwrap_or(x))
                }
                (Some(Rat::ZERO), _) => b,
                (_, Some(Rat::ZERO)) => a,
                _ => mk(Op::Add, Sort::Perm, vec![a, b]),
            };
        }
        match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) if x.checked_add(y).is_some() => Term::int(x + y),
            (Some(0), _) => b,
            (_, Some(0)) => a,
            // Constants gathered: `(n - 1) + 2` is `n + 1` (one term for one value, so
            // that a recursion's unfoldings `f(n - 1 - 2)` and `f(n - 2 - 1)` meet).
            (None, Some(c)) => match shifted(&a) {
                Some((x, k)) if k.checked_add(c).is_some() => offset(x, k + c),
                _ => mk(Op::Add, Sort::Int, vec![a, b]),
            },
            _ => mk(Op::Add, Sort::Int, vec![a, b]),
        }
    }
    pub fn sub(a: Term, b: Term) -> Term {
        let (a, b, perm) = Term::perm_pair(a, b);
        if perm {
            return match (a.as_rat(), b.as_rat()) {
                (Some(x), Some(y)) if x.checked_sub(y).is_some() => {
                    Term::rat(x.checked_sub(y).unwrap_or(x))
                }
                (_, Some(Rat::ZERO)) => a,
                _ if a == b => Term::none(),
                _ => mk(Op::Sub, Sort::Perm, vec![a, b]),
            };
        }
        match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) if x.checked_sub(y).is_some() => Term::int(x - y),
            (_, Some(0)) => a,
            // `(x + y) - x` is `y` (the length of `(seq(v) + s)[1..]` is `|s|`).
            _ if matches!(a.op(), Op::Add) && a.args()[0] == b => a.args()[1].clone(),
            _ if matches!(a.op(), Op::Add) && a.args()[1] == b => a.args()[0].clone(),
            (None, Some(c)) => match shifted(&a) {
                Some((x, k)) if k.checked_sub(c).is_some() => offset(x, k - c),
                _ => mk(Op::Sub, Sort::Int, vec![a, b]),
            },
            _ => mk(Op::Sub, Sort::Int, vec![a, b]),
        }
    }
    pub fn mul(a: Term, b: Term) -> Term {
        let (a, b, perm) = Term::perm_pair(a, b);
        if perm {
            return match (a.as_rat(), b.as_rat()) {
                (Some(x), Some(y)) if x.checked_mul(y).is_some() => {
                    Term::rat(x.checked_mul(y).unwrap_or(x))
                }
                (Some(Rat::ONE), _) => b,
                (_, Some(Rat::ONE)) => a,
                (Some(Rat::ZERO), _) | (_, Some(Rat::ZERO)) => Term::none(),
                _ => mk(Op::Mul, Sort::Perm, vec![a, b]),
            };
        }
        match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) if x.checked_mul(y).is_some() => Term::int(x * y),
            (Some(1), _) => b,
            (_, Some(1)) => a,
            _ => mk(Op::Mul, Sort::Int, vec![a, b]),
        }
    }
    pub fn div(a: Term, b: Term) -> Term {
        match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) if y != 0 && x.checked_div(y).is_some() => Term::int(x / y),
            _ => mk(Op::Div, Sort::Int, vec![a, b]),
        }
    }
    pub fn rem(a: Term, b: Term) -> Term {
        match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) if y != 0 && x.checked_rem(y).is_some() => Term::int(x % y),
            _ => mk(Op::Mod, Sort::Int, vec![a, b]),
        }
    }
    pub fn neg(a: Term) -> Term {
        if a.sort() == Sort::Perm {
            return match a.as_rat().and_then(|x| Rat::ZERO.checked_sub(x)) {
                Some(r) => Term::rat(r),
                None => mk(Op::Neg, Sort::Perm, vec![a]),
            };
        }
        match a.as_int() {
            Some(x) if x.checked_neg().is_some() => Term::int(-x),
            _ => mk(Op::Neg, Sort::Int, vec![a]),
        }
    }
    pub fn lt(a: Term, b: Term) -> Term {
        let (a, b, _) = Term::perm_pair(a, b);
        if let (Some(x), Some(y)) = (a.as_rat(), b.as_rat()) {
            return Term::bool(x.cmp(&y).is_lt());
        }
        match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) => Term::bool(x < y),
            _ if a == b => Term::ff(),
            _ => mk(Op::Lt, Sort::Bool, vec![a, b]),
        }
    }
    pub fn le(a: Term, b: Term) -> Term {
        let (a, b, _) = Term::perm_pair(a, b);
        if let (Some(x), Some(y)) = (a.as_rat(), b.as_rat()) {
            return Term::bool(x.cmp(&y).is_le());
        }
        match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) => Term::bool(x <= y),
            _ if a == b => Term::tt(),
            _ => mk(Op::Le, Sort::Bool, vec![a, b]),
        }
    }

    // ----- logic -----
    pub fn eq(a: Term, b: Term) -> Term {
        let (a, b, _) = Term::perm_pair(a, b);
        if a == b {
            return Term::tt();
        }
        match (a.op(), b.op()) {
            (Op::Int(_), Op::Int(_)) | (Op::Bool(_), Op::Bool(_)) => return Term::ff(),
            (Op::Rat(..), Op::Rat(..)) => return Term::ff(),
            (Op::Class(..), Op::Class(..)) => return Term::ff(),
            (Op::Bool(true), _) => return b,
            (_, Op::Bool(true)) => return a,
            (Op::Bool(false), _) => return Term::not(b),
            (_, Op::Bool(false)) => return Term::not(a),
            _ => {}
        }
        // A canonical order makes `a == b` and `b == a` the same term.
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        mk(Op::Eq, Sort::Bool, vec![a, b])
    }
    pub fn ne(a: Term, b: Term) -> Term {
        Term::not(Term::eq(a, b))
    }
    pub fn not(a: Term) -> Term {
        match a.op() {
            Op::Bool(b) => Term::bool(!b),
            Op::Not => a.args()[0].clone(),
            _ => mk(Op::Not, Sort::Bool, vec![a]),
        }
    }
    pub fn and(a: Term, b: Term) -> Term {
        Term::and_all(vec![a, b])
    }
    /// `self` (a Boolean skeleton) with each argument in a positive position (a
    /// conjunct, a disjunct, an implication's consequent, a branch of `?:`) replaced by
    /// `f`'s answer where it gives one; `None` when it gives none, or `self` is not
    /// such a connective.
    pub fn rebuild_positive(&self, mut f: impl FnMut(&Term) -> Option<Term>) -> Option<Term> {
        let positive: Vec<usize> = match self.op() {
            Op::And | Op::Or => (0..self.args().len()).collect(),
            Op::Implies => vec![1],
            Op::Ite => vec![1, 2],
            _ => return None,
        };
        let mut args = self.args().to_vec();
        let mut any = false;
        for i in positive {
            if let Some(a) = f(&args[i]) {
                args[i] = a;
                any = true;
            }
        }
        if !any {
            return None;
        }
        Some(match self.op() {
            Op::And => Term::and_all(args),
            Op::Or => Term::or_all(args),
            Op::Implies => Term::implies(args[0].clone(), args[1].clone()),
            _ => Term::ite(args[0].clone(), args[1].clone(), args[2].clone()),
        })
    }

    pub fn and_all(ts: Vec<Term>) -> Term {
        let mut out: Vec<Term> = Vec::with_capacity(ts.len());
        for t in ts {
            if t.is_false() {
                return Term::ff();
            }
            if t.is_true() {
                continue;
            }
            if let Op::And = t.op() {
                for s in t.args() {
                    if !out.contains(s) {
                        out.push(s.clone());
                    }
                }
            } else if !out.contains(&t) {
                out.push(t);
            }
        }
        match out.len() {
            0 => Term::tt(),
            1 => out.pop().unwrap_or_else(Term::tt),
            _ => mk(Op::And, Sort::Bool, out),
        }
    }
    pub fn or(a: Term, b: Term) -> Term {
        if a.is_true() || b.is_true() {
            return Term::tt();
        }
        if a.is_false() {
            return b;
        }
        if b.is_false() || a == b {
            return a;
        }
        mk(Op::Or, Sort::Bool, vec![a, b])
    }
    /// The disjunction of `ts` (flat, in order; for many disjuncts, unlike repeated
    /// `or`).
    pub fn or_all(ts: Vec<Term>) -> Term {
        let mut out = Vec::with_capacity(ts.len());
        for t in ts {
            if t.is_true() {
                return Term::tt();
            }
            if !t.is_false() {
                out.push(t);
            }
        }
        match out.len() {
            0 => Term::ff(),
            1 => out.pop().unwrap_or_else(Term::ff),
            _ => mk(Op::Or, Sort::Bool, out),
        }
    }
    pub fn implies(a: Term, b: Term) -> Term {
        if a.is_false() || b.is_true() || a == b {
            return Term::tt();
        }
        if let Op::And = a.op()
            && a.args().contains(&b)
        {
            return Term::tt();
        }
        if a.is_true() {
            return b;
        }
        if b.is_false() {
            return Term::not(a);
        }
        mk(Op::Implies, Sort::Bool, vec![a, b])
    }
    pub fn ite(c: Term, a: Term, b: Term) -> Term {
        if c.is_true() || a == b {
            return a;
        }
        if c.is_false() {
            return b;
        }
        if a.sort() == Sort::Bool {
            match (a.as_bool(), b.as_bool()) {
                (Some(true), Some(false)) => return c,
                (Some(false), Some(true)) => return Term::not(c),
                _ => {}
            }
        }
        let sort = a.sort();
        mk(Op::Ite, sort, vec![c, a, b])
    }

    // ----- snapshots -----
    pub fn combine(a: Term, b: Term) -> Term {
        mk(Op::Combine, Sort::Snap, vec![a, b])
    }
    pub fn first(s: Term) -> Term {
        if let Op::Combine = s.op() {
            return s.args()[0].clone();
        }
        mk(Op::First, Sort::Snap, vec![s])
    }
    pub fn second(s: Term) -> Term {
        if let Op::Combine = s.op() {
            return s.args()[1].clone();
        }
        mk(Op::Second, Sort::Snap, vec![s])
    }
    /// A value as a snapshot.
    pub fn wrap(v: Term) -> Term {
        let sort = v.sort();
        if sort == Sort::Snap {
            return v;
        }
        mk(Op::Wrap(sort), Sort::Snap, vec![v])
    }
    /// A snapshot as a value of `sort`.
    pub fn unwrap(s: Term, sort: Sort) -> Term {
        if sort == Sort::Snap {
            return s;
        }
        if let Op::Wrap(inner) = s.op()
            && *inner == sort
        {
            return s.args()[0].clone();
        }
        mk(Op::Unwrap(sort), sort, vec![s])
    }

    // ----- program functions and arrays -----
    pub fn app(f: &Func, args: Vec<Term>) -> Term {
        let range = f.range;
        mk(Op::App(f.clone()), range, args)
    }
    pub fn len(a: Term) -> Term {
        mk(Op::Len, Sort::Int, vec![a])
    }
    pub fn select(arr: Term, i: Term) -> Term {
        let Sort::Arr(e) = arr.sort() else {
            return mk(Op::Select, Sort::Int, vec![arr, i]);
        };
        // Read over write with syntactically decided indices.
        match arr.op() {
            Op::Store if arr.args()[1] == i => return arr.args()[2].clone(),
            Op::Store => {
                if let (Some(x), Some(y)) = (arr.args()[1].as_int(), i.as_int())
                    && x != y
                {
                    return Term::select(arr.args()[0].clone(), i);
                }
            }
            Op::ConstArr(_) => return arr.args()[0].clone(),
            _ => {}
        }
        mk(Op::Select, Sort::of_elem(e), vec![arr, i])
    }
    pub fn store(arr: Term, i: Term, v: Term) -> Term {
        let sort = arr.sort();
        mk(Op::Store, sort, vec![arr, i, v])
    }
    pub fn const_arr(e: Elem, v: Term) -> Term {
        mk(Op::ConstArr(e), Sort::Arr(e), vec![v])
    }

    // ----- quantifiers -----
    /// `∀ vars. body` (or `∃`) with trigger groups; a body without the bound
    /// variables is the body itself.
    pub fn quant(forall: bool, vars: Vec<Term>, triggers: Vec<Vec<Term>>, body: Term) -> Term {
        Term::quant_named(forall, vars, triggers, body, None)
    }

    /// [`Term::quant`] with the name the solver counts its instances under.
    pub fn quant_named(
        forall: bool,
        vars: Vec<Term>,
        triggers: Vec<Vec<Term>>,
        body: Term,
        name: Option<Rc<str>>,
    ) -> Term {
        if body.as_bool().is_some() || vars.is_empty() {
            return body;
        }
        let binding = Binding {
            forall,
            nvars: vars.len() as u32,
            groups: triggers.iter().map(|g| g.len() as u32).collect::<Vec<_>>().into(),
            name,
        };
        let mut args = vars;
        args.extend(triggers.into_iter().flatten());
        args.push(body);
        mk(Op::Quant(binding), Sort::Bool, args)
    }

    /// This quantifier under `name` (any other term as it is).
    pub fn with_quant_name(&self, name: &str) -> Term {
        let Op::Quant(b) = self.op() else { return self.clone() };
        let (vars, groups, body) = self.quant_parts();
        let groups = groups.into_iter().map(|g| g.to_vec()).collect();
        Term::quant_named(b.forall, vars.to_vec(), groups, body.clone(), Some(name.into()))
    }

    /// A quantifier with its bound variables renamed by position (`∀0`, `∀1`, ...) and
    /// no name: two quantifiers that differ only in the names of their bound
    /// variables (the same contract evaluated twice, with fresh symbols each time)
    /// have the same canonical form. `None` for any other term. Quantifiers nested in
    /// the body keep their names (they then rarely compare equal: a missed match only
    /// costs a query).
    pub fn alpha_canonical(&self) -> Option<Term> {
        let Op::Quant(b) = self.op() else { return None };
        let (vars, groups, body) = self.quant_parts();
        let mut map: TermMap<Term, Term> = TermMap::default();
        let mut canon = Vec::with_capacity(vars.len());
        for (k, v) in vars.iter().enumerate() {
            let Op::Var(_, sort) = v.op() else { return None };
            let c = Term::var(&format!("\u{2200}{k}"), *sort);
            map.insert(v.clone(), c.clone());
            canon.push(c);
        }
        let groups =
            groups.iter().map(|g| g.iter().map(|t| t.substitute(&map)).collect()).collect();
        Some(Term::quant_named(b.forall, canon, groups, body.substitute(&map), None))
    }

    /// The name of a quantifier (`Term::quant_named`).
    pub fn quant_name(&self) -> Option<&Rc<str>> {
        let Op::Quant(b) = self.op() else { return None };
        b.name.as_ref()
    }

    /// A quantifier's bound variables, trigger groups and body (empty parts for any
    /// other term, whose "body" is itself).
    pub fn quant_parts(&self) -> (&[Term], Vec<&[Term]>, &Term) {
        let Op::Quant(b) = self.op() else { return (&[], vec![], self) };
        let a = self.args();
        let n = b.nvars as usize;
        let mut groups = vec![];
        let mut at = n;
        for &g in b.groups.iter() {
            let g = g as usize;
            groups.push(&a[at..at + g]);
            at += g;
        }
        (&a[..n], groups, &a[a.len() - 1])
    }

    // ----- sequences -----
    pub fn seq_empty(sort: Sort) -> Term {
        mk(Op::SeqEmpty(sort), sort, vec![])
    }
    /// `seq(x)`; `None` when `x`'s sort has no sequences (snapshots, arrays).
    pub fn seq_unit(x: Term) -> Option<Term> {
        let sort = x.sort().seq_of()?;
        Some(mk(Op::SeqUnit, sort, vec![x]))
    }
    /// `a ++ b`, kept right-nested (`(a ++ b) ++ c` is `a ++ (b ++ c)`): one term
    /// for each sequence however its parts were grouped, and the parts after a
    /// prefix of known length are a part of it (`(seq(x, y) + r)[1..]` folds to
    /// `seq(y) + r`, whose applications then meet those of `seq(y) + r`).
    pub fn seq_concat(a: Term, b: Term) -> Term {
        if matches!(a.op(), Op::SeqEmpty(_)) {
            return b;
        }
        if matches!(b.op(), Op::SeqEmpty(_)) {
            return a;
        }
        if let Op::SeqConcat = a.op() {
            let (a1, a2) = (a.args()[0].clone(), a.args()[1].clone());
            return Term::seq_concat(a1, Term::seq_concat(a2, b));
        }
        let sort = a.sort();
        mk(Op::SeqConcat, sort, vec![a, b])
    }
    /// `|s|`, folded through the constructors (`|s ++ t| = |s| + |t|`). A slice
    /// `extract(s, o, n)` has length `n` only where `0 ≤ o ≤ o + n ≤ |s|`: the rules
    /// build one only where that was proved, but a definition's body axiom carries its
    /// slices into every application, also those whose branch does not hold there
    /// (`rev(s[1..])` of an empty `s`), and an application's postcondition is assumed
    /// whatever its argument. Folded to a negative `n`, `|rev(extract(..))| = |extract(..)|`
    /// would contradict `|x| ≥ 0`: so the length is folded only when `n` is a
    /// non-negative literal, and is otherwise left to the solver's axiom
    /// (`fits ⇒ |extract(s, o, n)| = n`).
    pub fn seq_len(s: Term) -> Term {
        match s.op() {
            Op::SeqEmpty(_) => Term::int(0),
            Op::SeqUnit => Term::int(1),
            Op::SeqConcat => {
                Term::add(Term::seq_len(s.args()[0].clone()), Term::seq_len(s.args()[1].clone()))
            }
            Op::SeqExtract if s.args()[2].as_int().is_some_and(|n| n >= 0) => s.args()[2].clone(),
            _ => mk(Op::SeqLen, Sort::Int, vec![s]),
        }
    }
    /// `s[i]`, pushed through the constructors: the rules build an index only where
    /// `0 ≤ i < |s|` holds (checked, or under the guard of a quantifier's body), and
    /// there `(s ++ t)[i] = ite(i < |s|, s[i], t[i - |s|])`, `seq(x)[i] = x` and
    /// `extract(s, o, n)[i] = s[o + i]`. So indices reach the solver on the sequences
    /// named in the program, where triggers over them can match (Dafny's and Viper's
    /// axioms of the same laws, applied as the term is built).
    pub fn seq_at(s: Term, i: Term) -> Term {
        let sort = s.sort().seq_elem();
        match s.op() {
            Op::SeqUnit => return s.args()[0].clone(),
            Op::SeqConcat => {
                let (a, b) = (s.args()[0].clone(), s.args()[1].clone());
                let la = Term::seq_len(a.clone());
                if let (Some(n), Some(k)) = (la.as_int(), i.as_int()) {
                    return if k < n {
                        Term::seq_at(a, i)
                    } else {
                        Term::seq_at(b, Term::int(k - n))
                    };
                }
                let left = Term::seq_at(a, i.clone());
                let right = Term::seq_at(b, Term::sub(i.clone(), la.clone()));
                return Term::ite(Term::lt(i, la), left, right);
            }
            Op::SeqExtract => {
                let (a, o) = (s.args()[0].clone(), s.args()[1].clone());
                return Term::seq_at(a, Term::add(o, i));
            }
            _ => {}
        }
        mk(Op::SeqAt, sort, vec![s, i])
    }
    /// `extract(s, o, n)`, with the identities that hold whatever the lengths: the
    /// whole of `s` is `s`, the parts of `a ++ b` at `(0, |a|)` and `(|a|, |b|)` are `a`
    /// and `b` (so `(seq(v) + s)[1..]` is `s`, and a recursive call on it is the
    /// application the caller already has).
    pub fn seq_extract(s: Term, offset: Term, len: Term) -> Term {
        let sort = s.sort();
        if len.as_int() == Some(0) {
            return Term::seq_empty(sort);
        }
        let zero = offset.as_int() == Some(0);
        if zero && len == Term::seq_len(s.clone()) {
            return s;
        }
        if let Op::SeqConcat = s.op() {
            let (a, b) = (s.args()[0].clone(), s.args()[1].clone());
            let la = Term::seq_len(a.clone());
            if zero && len == la {
                return a;
            }
            if offset == la && len == Term::seq_len(b.clone()) {
                return b;
            }
            // A slice that starts where `b` does, or after it (offsets known): a
            // slice of `b` (both are unspecified where the slice does not fit).
            if offset == la {
                return Term::seq_extract(b, Term::int(0), len);
            }
            if let (Some(o), Some(l)) = (offset.as_int(), la.as_int())
                && o > l
            {
                return Term::seq_extract(b, Term::int(o - l), len);
            }
        }
        mk(Op::SeqExtract, sort, vec![s, offset, len])
    }
    /// `contains(s, seq(x))` (membership), pushed through the constructors:
    /// `seq(y)` contains `x` iff `x = y`, a concatenation iff either part does.
    pub fn seq_contains(s: Term, sub: Term) -> Term {
        if let Op::SeqUnit = sub.op() {
            let x = sub.args()[0].clone();
            match s.op() {
                Op::SeqEmpty(_) => return Term::ff(),
                Op::SeqUnit => return Term::eq(s.args()[0].clone(), x),
                Op::SeqConcat => {
                    let (a, b) = (s.args()[0].clone(), s.args()[1].clone());
                    return Term::or(
                        Term::seq_contains(a, sub.clone()),
                        Term::seq_contains(b, sub),
                    );
                }
                _ => {}
            }
        }
        mk(Op::SeqContains, Sort::Bool, vec![s, sub])
    }

    /// A term built as given, without folding (for the solver's axioms of an
    /// operation, which folding would turn into `true`).
    pub fn raw(op: Op, sort: Sort, args: Vec<Term>) -> Term {
        mk(op, sort, args)
    }
}

/// An exact rational `n/d` (`d > 0`, lowest terms): constant permission amounts, so
/// that amounts known syntactically are compared and summed without the solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rat {
    pub n: i64,
    pub d: i64,
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

impl Rat {
    pub const ZERO: Rat = Rat { n: 0, d: 1 };
    pub const ONE: Rat = Rat { n: 1, d: 1 };

    /// `n/d` in lowest terms; `d` must not be 0.
    pub fn new(n: i64, d: i64) -> Rat {
        Rat::of(i128::from(n), i128::from(d)).unwrap_or(Rat::ZERO)
    }
    fn of(n: i128, d: i128) -> Option<Rat> {
        if d == 0 {
            return None;
        }
        let g = gcd(n, d).max(1);
        let (mut n, mut d) = (n / g, d / g);
        if d < 0 {
            n = -n;
            d = -d;
        }
        Some(Rat { n: i64::try_from(n).ok()?, d: i64::try_from(d).ok()? })
    }
    pub fn checked_add(self, o: Rat) -> Option<Rat> {
        let (a, b, c, d) = (self.n as i128, self.d as i128, o.n as i128, o.d as i128);
        Rat::of(a * d + c * b, b * d)
    }
    pub fn checked_sub(self, o: Rat) -> Option<Rat> {
        self.checked_add(Rat { n: o.n.checked_neg()?, d: o.d })
    }
    pub fn checked_mul(self, o: Rat) -> Option<Rat> {
        Rat::of(self.n as i128 * o.n as i128, self.d as i128 * o.d as i128)
    }
    pub fn checked_div(self, o: Rat) -> Option<Rat> {
        Rat::of(self.n as i128 * o.d as i128, self.d as i128 * o.n as i128)
    }
    pub fn is_negative(self) -> bool {
        self.n < 0
    }
}

impl PartialOrd for Rat {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Rat {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.n as i128 * o.d as i128).cmp(&(o.n as i128 * self.d as i128))
    }
}

impl fmt::Display for Rat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.d == 1 { write!(f, "{}", self.n) } else { write!(f, "{}/{}", self.n, self.d) }
    }
}

fn prec(op: &Op) -> u8 {
    match op {
        Op::Implies => 1,
        Op::Or => 2,
        Op::And => 3,
        Op::Eq => 4,
        Op::Lt | Op::Le => 5,
        Op::Add | Op::Sub => 6,
        Op::Mul | Op::Div | Op::Mod | Op::PDiv => 7,
        Op::Not | Op::Neg => 8,
        _ => 9,
    }
}

impl Term {
    /// Print with parentheses where precedence needs them; terms nested deeper than
    /// `MAX_SHOWN_DEPTH` print as `…` (they are unreadable, and printing them would
    /// recurse as deep as the term).
    fn fmt_prec(&self, f: &mut fmt::Formatter<'_>, outer: u8) -> fmt::Result {
        let depth = SHOWN_DEPTH.with(|d| {
            d.set(d.get() + 1);
            d.get()
        });
        if depth == 1 {
            SHOWN_NODES.with(|n| n.set(0));
        }
        // Terms are DAGs: printed as trees they can be exponentially large, so the
        // nodes printed per term are bounded too.
        let nodes = SHOWN_NODES.with(|n| {
            n.set(n.get() + 1);
            n.get()
        });
        let r = if depth > MAX_SHOWN_DEPTH || nodes > MAX_SHOWN_NODES {
            write!(f, "…")
        } else {
            self.fmt_node(f, outer)
        };
        SHOWN_DEPTH.with(|d| d.set(d.get() - 1));
        r
    }

    fn fmt_node(&self, f: &mut fmt::Formatter<'_>, outer: u8) -> fmt::Result {
        let p = prec(self.op());
        let paren = p < outer && p < 9;
        if paren {
            write!(f, "(")?;
        }
        let a = self.args();
        let infix = |f: &mut fmt::Formatter<'_>, sym: &str| -> fmt::Result {
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    write!(f, " {sym} ")?;
                }
                x.fmt_prec(f, p + 1)?;
            }
            Ok(())
        };
        match self.op() {
            // A bound variable renamed apart (`i@1'36`, `fresh_bound`) is shown by its
            // own name: the renaming's number depends on what the process did before
            // (other members, other files), and output must not.
            Op::Var(n, _) => write!(f, "{}", n.split('\'').next().unwrap_or(n))?,
            Op::Int(n) => write!(f, "{n}")?,
            Op::Rat(n, d) => write!(f, "{}", Rat::new(*n, *d))?,
            Op::ToPerm => a[0].fmt_prec(f, outer)?,
            Op::PDiv => infix(f, "/")?,
            Op::BigInt(n) => write!(f, "{n}")?,
            Op::Bool(b) => write!(f, "{b}")?,
            Op::Null => write!(f, "null")?,
            Op::Class(_, n) => write!(f, "{n}")?,
            Op::Unit => write!(f, "unit")?,
            Op::Add => infix(f, "+")?,
            Op::Sub => infix(f, "-")?,
            Op::Mul => infix(f, "*")?,
            Op::Div => infix(f, "/")?,
            Op::Mod => infix(f, "%")?,
            Op::Lt => infix(f, "<")?,
            Op::Le => infix(f, "≤")?,
            Op::Eq => {
                // Literals read better on the right (`x = 0`, `c ≠ null`).
                let (l, r) = lit_right(a);
                l.fmt_prec(f, p + 1)?;
                write!(f, " = ")?;
                r.fmt_prec(f, p + 1)?
            }
            Op::And => infix(f, "∧")?,
            Op::Or => infix(f, "∨")?,
            Op::Implies => infix(f, "⇒")?,
            Op::Neg => {
                write!(f, "-")?;
                a[0].fmt_prec(f, p)?
            }
            Op::Not => {
                if let Op::Eq = a[0].op() {
                    let (l, r) = lit_right(a[0].args());
                    l.fmt_prec(f, 5)?;
                    write!(f, " ≠ ")?;
                    r.fmt_prec(f, 5)?;
                } else {
                    write!(f, "¬")?;
                    a[0].fmt_prec(f, p)?
                }
            }
            Op::Ite => {
                write!(f, "ite({}, {}, {})", a[0], a[1], a[2])?;
            }
            Op::Combine => write!(f, "combine({}, {})", a[0], a[1])?,
            Op::First => write!(f, "first({})", a[0])?,
            Op::Second => write!(f, "second({})", a[0])?,
            Op::Wrap(s) => write!(f, "from{}({})", sort_name(*s), a[0])?,
            Op::Unwrap(s) => write!(f, "to{}({})", sort_name(*s), a[0])?,
            Op::App(func) => {
                write!(f, "{}(", func.name)?;
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, ")")?
            }
            Op::Len => write!(f, "len({})", a[0])?,
            Op::Select => write!(f, "{}[{}]", a[0], a[1])?,
            Op::Store => write!(f, "{}[{} := {}]", a[0], a[1], a[2])?,
            Op::ConstArr(_) => write!(f, "[* := {}]", a[0])?,
            Op::Quant(b) => {
                let (vars, groups, body) = self.quant_parts();
                write!(f, "{}", if b.forall { "∀" } else { "∃" })?;
                for (i, x) in vars.iter().enumerate() {
                    write!(f, "{}{x}", if i > 0 { ", " } else { " " })?;
                }
                write!(f, " ::")?;
                for g in groups {
                    write!(f, " {{")?;
                    for (i, x) in g.iter().enumerate() {
                        write!(f, "{}{x}", if i > 0 { ", " } else { " " })?;
                    }
                    write!(f, " }}")?;
                }
                write!(f, " {body}")?
            }
            Op::SeqEmpty(_) => write!(f, "seq()")?,
            Op::SeqUnit => write!(f, "seq({})", a[0])?,
            Op::SeqConcat => write!(f, "{} ++ {}", a[0], a[1])?,
            Op::SeqLen => write!(f, "|{}|", a[0])?,
            Op::SeqAt => write!(f, "{}[{}]", a[0], a[1])?,
            Op::SeqExtract => write!(f, "{}[{} ..+ {}]", a[0], a[1], a[2])?,
            Op::SeqContains => write!(f, "contains({}, {})", a[0], a[1])?,
        }
        if paren {
            write!(f, ")")?;
        }
        Ok(())
    }
}

/// The two sides of an equation, a literal last.
fn lit_right(a: &[Term]) -> (&Term, &Term) {
    let lit = |t: &Term| {
        matches!(t.op(), Op::Int(_) | Op::Rat(..) | Op::BigInt(_) | Op::Bool(_) | Op::Null)
    };
    if lit(&a[0]) && !lit(&a[1]) { (&a[1], &a[0]) } else { (&a[0], &a[1]) }
}

fn sort_name(s: Sort) -> &'static str {
    match s {
        Sort::Int => "Int",
        Sort::Bool => "Bool",
        Sort::Ref => "Ref",
        Sort::Snap => "Snap",
        Sort::Arr(Elem::Int) => "IntArr",
        Sort::Arr(Elem::Bool) => "BoolArr",
        Sort::Arr(Elem::Ref) => "RefArr",
        Sort::Perm => "Perm",
        Sort::Seq(..) => "Seq",
    }
}

const MAX_SHOWN_DEPTH: u32 = 48;
const MAX_SHOWN_NODES: u32 = 400;

thread_local! {
    static SHOWN_DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    static SHOWN_NODES: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_prec(f, 0)
    }
}

impl fmt::Debug for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// `x + k` (`x - |k|` for a negative `k`, `x` for 0).
fn offset(x: Term, k: i64) -> Term {
    match k {
        0 => x,
        k if k > 0 => mk(Op::Add, Sort::Int, vec![x, Term::int(k)]),
        k => match k.checked_neg() {
            Some(n) => mk(Op::Sub, Sort::Int, vec![x, Term::int(n)]),
            None => mk(Op::Add, Sort::Int, vec![x, Term::int(k)]),
        },
    }
}

/// `x + k` or `x - k` for an integer constant `k` (as `(x, k)` / `(x, -k)`), `x` not a
/// constant.
fn shifted(t: &Term) -> Option<(Term, i64)> {
    let (x, k) = match t.op() {
        Op::Add => (&t.args()[0], t.args()[1].as_int()?),
        Op::Sub => (&t.args()[0], t.args()[1].as_int()?.checked_neg()?),
        _ => return None,
    };
    if x.as_int().is_some() || x.sort() != Sort::Int {
        return None;
    }
    Some((x.clone(), k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_consing_makes_equal_terms_identical() {
        let x = Term::var("x@1", Sort::Int);
        let a = Term::add(x.clone(), Term::int(1));
        let b = Term::add(x.clone(), Term::int(1));
        assert!(a == b);
        assert_eq!(a.id(), b.id());
        assert!(Term::add(x.clone(), Term::int(2)) != a);
    }

    #[test]
    fn constants_are_gathered_in_sums() {
        let n = Term::var("n@1", Sort::Int);
        let one = |k| Term::int(k);
        // f(n - 1 - 2) and f(n - 2 - 1) name one argument.
        let a = Term::sub(Term::sub(n.clone(), one(1)), one(2));
        let b = Term::sub(Term::sub(n.clone(), one(2)), one(1));
        assert!(a == b);
        assert!(a == Term::sub(n.clone(), one(3)));
        assert!(Term::add(Term::sub(n.clone(), one(1)), one(1)) == n);
        assert!(Term::add(Term::sub(n.clone(), one(1)), one(3)) == Term::add(n.clone(), one(2)));
        assert!(Term::sub(Term::add(n.clone(), one(1)), one(3)) == Term::sub(n.clone(), one(2)));
        // Not across a symbol: `(n - m) - 1` stays as written.
        let m = Term::var("m@1", Sort::Int);
        let c = Term::sub(Term::sub(n.clone(), m.clone()), one(1));
        assert!(matches!(c.op(), Op::Sub) && c.args()[1] == one(1));
        // Overflow is left alone.
        let big = Term::add(Term::add(n.clone(), Term::int(i64::MAX)), one(1));
        assert!(matches!(big.op(), Op::Add));
    }

    #[test]
    fn symbols_of_different_sorts_differ() {
        let a = Term::var("x", Sort::Int);
        let b = Term::var("x", Sort::Ref);
        assert!(a != b);
        assert_eq!(b.sort(), Sort::Ref);
    }

    #[test]
    fn deep_terms_drop_without_recursion() {
        // On this small test-thread stack, a recursive drop of a 200,000-deep term
        // (once the interner forgets it) would overflow.
        let x = Term::var("x", Sort::Int);
        let mut t = x.clone();
        for _ in 0..200_000 {
            t = Term::add(t, x.clone());
        }
        reset_interner();
        drop(t);
    }

    #[test]
    fn shared_terms_print_in_bounded_size() {
        // y = y + y, sixty times: a DAG of 61 nodes, a tree of 2^60 leaves.
        let mut t = Term::var("x", Sort::Int);
        for _ in 0..60 {
            t = Term::add(t.clone(), t);
        }
        let shown = t.to_string();
        assert!(shown.len() < 10_000, "{}", shown.len());
    }

    #[test]
    fn deep_terms_print_truncated() {
        let x = Term::var("x", Sort::Int);
        let mut t = x.clone();
        for _ in 0..10_000 {
            t = Term::add(t, x.clone());
        }
        let shown = t.to_string();
        assert!(shown.contains('…'));
        assert!(shown.len() < 1000);
    }

    #[test]
    fn constants_fold() {
        assert_eq!(Term::add(Term::int(2), Term::int(3)), Term::int(5));
        assert_eq!(Term::div(Term::int(-7), Term::int(2)), Term::int(-3));
        assert_eq!(Term::rem(Term::int(-7), Term::int(2)), Term::int(-1));
        assert_eq!(Term::rem(Term::int(7), Term::int(-2)), Term::int(1));
        let x = Term::var("x@1", Sort::Int);
        assert!(Term::eq(x.clone(), x.clone()).is_true());
        assert!(Term::eq(Term::int(1), Term::int(2)).is_false());
        assert_eq!(
            Term::not(Term::not(Term::lt(x.clone(), Term::int(0)))),
            Term::lt(x, Term::int(0))
        );
    }

    #[test]
    fn equality_is_symmetric_syntactically() {
        let x = Term::var("x@1", Sort::Ref);
        let y = Term::var("y@2", Sort::Ref);
        assert_eq!(Term::eq(x.clone(), y.clone()), Term::eq(y, x));
    }

    #[test]
    fn snapshot_laws_fold() {
        let l = Term::var("l@1", Sort::Snap);
        let r = Term::var("r@2", Sort::Snap);
        let c = Term::combine(l.clone(), r.clone());
        assert_eq!(Term::first(c.clone()), l);
        assert_eq!(Term::second(c), r);
        let v = Term::var("v@3", Sort::Int);
        assert_eq!(Term::unwrap(Term::wrap(v.clone()), Sort::Int), v);
        // toBool(fromInt(v)) is not folded: the sorts differ.
        assert_ne!(Term::unwrap(Term::wrap(v.clone()), Sort::Bool).sort(), Sort::Int);
    }

    #[test]
    fn printing_uses_the_papers_notation() {
        let t = Term::var("this", Sort::Ref);
        let s = Term::var("s@1", Sort::Snap);
        let f = Func {
            name: "Cell.getX".into(),
            domain: vec![Sort::Snap, Sort::Ref].into(),
            range: Sort::Int,
        };
        let app = Term::app(&f, vec![s.clone(), t.clone()]);
        assert_eq!(app.to_string(), "Cell.getX(s@1, this)");
        assert_eq!(Term::ne(t, Term::null()).to_string(), "this ≠ null");
        let e = Term::eq(Term::add(Term::var("v@2", Sort::Int), Term::int(1)), Term::int(4));
        assert!(e.to_string() == "v@2 + 1 = 4" || e.to_string() == "4 = v@2 + 1");
    }

    #[test]
    fn array_reads_over_writes_fold() {
        let a = Term::var("a@1", Sort::Arr(Elem::Int));
        let w = Term::store(a.clone(), Term::int(0), Term::int(3));
        assert_eq!(Term::select(w.clone(), Term::int(0)), Term::int(3));
        assert_eq!(Term::select(w, Term::int(1)), Term::select(a, Term::int(1)));
        let d = Term::default_of(Sort::Arr(Elem::Bool));
        assert!(Term::select(d, Term::var("i", Sort::Int)).is_false());
    }
}

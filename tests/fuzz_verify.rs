//! Robustness: many random well-typed `.jv` programs, generated from a deterministic
//! seed, go through the front end and every member through `verify_member`, twice
//! (without inference; with inference, trace and counterexamples). Verdicts do not
//! matter: the front end must accept every program (a rejection is a generator bug),
//! and verification must never panic, never return an internal error (`Err`) and
//! always terminate.
//!
//! Each member has a 2 s solver budget; one that runs for two minutes counts as a hang.
//!
//! Reproduce a failure with the seed it prints:
//! `FUZZ_SEED=<seed> FUZZ_CASES=<n> cargo test --test fuzz_verify -- --nocapture`,
//! or one program alone with `FUZZ_ONLY=<index>`. `FUZZ_PRINT=1` prints every program,
//! `FUZZ_SLOW=<ms>` every member verification that took longer (and the program of
//! each timeout). Longer runs: `FUZZ_CASES=2000`.
//!
//! The problems it found are kept as regressions in `tests/programs/verify/fuzz/`,
//! checked with a time budget by `fuzz_regressions_terminate` below.

use idf_verify::guard::with_big_stack;
use idf_verify::source::front_end;
use idf_verify::syntax::ast::{MemberKind, MemberRef, Program};
use idf_verify::verify::{Config, verify_member};
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ------------------------------------------------------------------ random numbers

use idf_verify::rng::Rng;

fn splitmix(x: u64) -> u64 {
    Rng::new(x).next()
}

// ------------------------------------------------------------------ types and signatures

#[derive(Clone, Debug, PartialEq)]
enum Ty {
    Int,
    Bool,
    Object,
    Class(usize),
    Array(Box<Ty>),
    /// The type of `null` (only as the type of a generated expression).
    Null,
}

impl Ty {
    fn is_ref(&self) -> bool {
        matches!(self, Ty::Object | Ty::Class(_) | Ty::Array(_) | Ty::Null)
    }

    /// The checker's `converts`.
    fn converts_to(&self, to: &Ty) -> bool {
        self == to
            || (*self == Ty::Null && matches!(to, Ty::Class(_) | Ty::Array(_) | Ty::Object))
            || (*to == Ty::Object && self.is_ref())
    }

    fn name(&self) -> String {
        match self {
            Ty::Int => "int".into(),
            Ty::Bool => "bool".into(),
            Ty::Object => "Object".into(),
            Ty::Class(i) => format!("C{i}"),
            Ty::Array(t) => format!("{}[]", t.name()),
            Ty::Null => unreachable!("null is not a declarable type"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Predicate,
    Pure,
    Method,
}

#[derive(Clone, Debug)]
struct Callable {
    name: String,
    kind: Kind,
    is_static: bool,
    params: Vec<(String, Ty)>,
    /// `None`: void (methods only). Predicates: `Bool`.
    ret: Option<Ty>,
    /// A hand-written body and contract (list predicates, recursive pure methods).
    template: Option<String>,
}

#[derive(Clone, Debug)]
struct ClassSig {
    fields: Vec<(String, Ty)>,
    members: Vec<Callable>,
    /// Constructor parameters, when the class declares a constructor.
    ctor: Option<Vec<(String, Ty)>>,
}

// ------------------------------------------------------------------ where code stands

#[derive(Clone, Copy, Debug, PartialEq)]
enum Place {
    Code,
    Pre,
    Post,
    Untouched,
    PureBody,
    PurePre,
    PurePost,
    PredicateBody,
    Invariant,
    Assert,
    Join,
}

impl Place {
    fn permissions(self) -> bool {
        !matches!(self, Place::Code | Place::PureBody | Place::PurePost)
    }

    fn old(self) -> bool {
        matches!(
            self,
            Place::Code
                | Place::Post
                | Place::Untouched
                | Place::PurePost
                | Place::Invariant
                | Place::Assert
                | Place::Join
        )
    }

    fn result(self) -> bool {
        matches!(self, Place::Post | Place::PurePost | Place::Untouched)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum MKind {
    Method,
    Constructor,
    Pure,
    Predicate,
}

/// The member being generated: its class, receiver, locals in scope, place.
#[derive(Clone)]
struct Cx {
    class: usize,
    is_static: bool,
    kind: MKind,
    ret: Option<Ty>,
    place: Place,
    locals: Vec<(String, Ty)>,
}

impl Cx {
    fn at(&self, place: Place) -> Cx {
        Cx { place, ..self.clone() }
    }
}

// ------------------------------------------------------------------ the generator

struct Gen {
    rng: Rng,
    /// The pure method whose `ensures` is being generated (it may not call itself).
    in_own_post: Option<(usize, String)>,
    classes: Vec<ClassSig>,
    /// Every array type fields, params and locals may have.
    array_types: Vec<Ty>,
    /// Fresh local names within the member being generated.
    next_local: usize,
    /// Statements of the member so far (bounds the size of bodies).
    budget: usize,
    /// `if` statements emitted in the member so far (bounds the number of paths).
    ifs: usize,
    /// In a "careful" method: the permissions its precondition gives (every field of
    /// `this`, their arrays, a field of each object parameter), reused as loop invariant
    /// and `join`, so that paths get past their first statements.
    frame: Option<String>,
}

const BIG: &[&str] = &[
    "9223372036854775807",
    "9223372036854775808",
    "100000000000000000000000",
    "340282366920938463463374607431768211457",
    "4294967296",
];

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen {
            rng: Rng::new(seed),
            in_own_post: None,
            classes: Vec::new(),
            array_types: Vec::new(),
            next_local: 0,
            budget: 0,
            ifs: 0,
            frame: None,
        }
    }

    // -------------------------------------------------------------- declarations

    fn random_type(&mut self, n: usize) -> Ty {
        match self.rng.weighted(&[30, 18, 32, 4, 16]) {
            0 => Ty::Int,
            1 => Ty::Bool,
            2 => Ty::Class(self.rng.below(n)),
            3 => Ty::Object,
            _ => match self.rng.weighted(&[6, 2, 3, 1, 1]) {
                0 => Ty::Array(Box::new(Ty::Int)),
                1 => Ty::Array(Box::new(Ty::Bool)),
                2 => Ty::Array(Box::new(Ty::Class(self.rng.below(n)))),
                3 => Ty::Array(Box::new(Ty::Object)),
                _ => Ty::Array(Box::new(Ty::Array(Box::new(Ty::Int)))),
            },
        }
    }

    fn params(&mut self, n: usize, max: usize) -> Vec<(String, Ty)> {
        let k = self.rng.below(max + 1);
        (0..k).map(|i| (format!("p{i}"), self.random_type(n))).collect()
    }

    fn signatures(&mut self) {
        // Small programs (about ten members), so that many fit in the time budget.
        let n = 1 + self.rng.weighted(&[55, 35, 10]);
        for c in 0..n {
            let mut sig = ClassSig { fields: Vec::new(), members: Vec::new(), ctor: None };
            let node = self.rng.chance(30);
            if node {
                sig.fields.push(("val".into(), Ty::Int));
                sig.fields.push(("next".into(), Ty::Class(c)));
            }
            for i in 0..self.rng.below(3) + usize::from(!node) {
                let t = self.random_type(n);
                sig.fields.push((format!("f{i}"), t));
            }
            if self.rng.chance(45) {
                sig.ctor = Some(self.params(n, 2));
            }
            // Predicates.
            sig.members.push(Callable {
                name: "valid".into(),
                kind: Kind::Predicate,
                is_static: false,
                params: vec![],
                ret: Some(Ty::Bool),
                template: None,
            });
            if node {
                let body = match self.rng.below(4) {
                    0 => "acc(val) && acc(next) && (next != null ==> next.list())",
                    1 => "acc(next) && acc(val) && (next == null ? true : next.list())",
                    2 => {
                        "acc(val) && acc(next) && val >= 0 && (next != null ==> next.list() && next.head() >= 0)"
                    }
                    // Sorted: `next.val2()` needs `acc(next.val)`, found by opening `next.list()`.
                    _ if self.rng.chance(30) => {
                        "acc(val) && acc(next) && (next != null ==> next.list()) && (next != null ==> val <= next.val2())"
                    }
                    _ => {
                        "acc(val) && acc(next) && (next != null ==> next.list() && val <= next.head())"
                    }
                };
                sig.members.push(template(Kind::Predicate, "list", Some(Ty::Bool), body));
                sig.members.push(template(
                    Kind::Pure,
                    "head",
                    Some(Ty::Int),
                    if self.rng.chance(50) {
                        "requires list(); { return val; }"
                    } else {
                        "requires list(); { return opening list() in val; }"
                    },
                ));
                sig.members.push(template(
                    Kind::Pure,
                    "val2",
                    Some(Ty::Int),
                    "requires acc(val); { return val; }",
                ));
                let (has_len, has_sum) = (self.rng.chance(60), self.rng.chance(40));
                let len = match self.rng.below(3) {
                    0 => {
                        "requires list(); ensures result >= 1; { return next == null ? 1 : 1 + next.length(); }"
                    }
                    1 => {
                        "requires list(); ensures result > 0; { return opening list() in (next == null ? 1 : 1 + next.length()); }"
                    }
                    _ => "requires list(); { return next == null ? 1 : next.length() + 1; }",
                };
                if has_len {
                    sig.members.push(template(Kind::Pure, "length", Some(Ty::Int), len));
                }
                if has_sum {
                    sig.members.push(template(
                        Kind::Pure,
                        "sum",
                        Some(Ty::Int),
                        "requires list(); { return next == null ? val : val + next.sum(); }",
                    ));
                }
                let meth = match self.rng.below(3) {
                    0 if has_len => {
                        "void addAll(int d) requires list(); ensures list() && length() == old(length()); { val = val + d; if (next != null) { next.addAll(d); } }"
                    }
                    2 if has_sum => {
                        "void addAll(int d) requires list() && d >= 0; ensures list() && sum() >= old(sum()); { int v = val; val = v + d; C_SELF n = next; if (n != null) { n.addAll(d); } }"
                    }
                    _ => {
                        "void addAll(int d) requires list(); ensures list(); { open list(); val = val + d; if (next != null) { next.addAll(d); } close list(); }"
                    }
                };
                if self.rng.chance(60) {
                    let mut add = template(Kind::Method, "addAll", None, meth);
                    add.params = vec![("d".into(), Ty::Int)];
                    sig.members.push(add);
                }
            }
            for i in 0..self.rng.below(2) + usize::from(self.rng.chance(15)) {
                let is_static = self.rng.chance(30);
                let params = self.params(n, 2);
                sig.members.push(Callable {
                    name: format!("q{i}"),
                    kind: Kind::Predicate,
                    is_static,
                    params,
                    ret: Some(Ty::Bool),
                    template: None,
                });
            }
            // Pure methods: getters of fields and random ones.
            for (fi, (_, t)) in sig.fields.clone().into_iter().enumerate() {
                if self.rng.chance(25) {
                    sig.members.push(Callable {
                        name: format!("get{fi}"),
                        kind: Kind::Pure,
                        is_static: false,
                        params: vec![],
                        ret: Some(t),
                        template: Some(format!("#getter {fi}")),
                    });
                }
            }
            for i in 0..1 + self.rng.below(2) {
                let is_static = self.rng.chance(40);
                let params = self.params(n, 2);
                let ret = Some(self.random_type(n));
                sig.members.push(Callable {
                    name: format!("g{i}"),
                    kind: Kind::Pure,
                    is_static,
                    params,
                    ret,
                    template: None,
                });
            }
            // Methods.
            for i in 0..1 + self.rng.below(2) + usize::from(self.rng.chance(20)) {
                let is_static = self.rng.chance(35);
                let params = self.params(n, 3);
                let ret = if self.rng.chance(40) { None } else { Some(self.random_type(n)) };
                sig.members.push(Callable {
                    name: format!("m{i}"),
                    kind: Kind::Method,
                    is_static,
                    params,
                    ret,
                    template: None,
                });
            }
            self.classes.push(sig);
        }
        // Array types mentioned anywhere.
        let mut arrays: Vec<Ty> = Vec::new();
        for c in &self.classes {
            let tys = c.fields.iter().map(|f| &f.1).chain(
                c.members.iter().flat_map(|m| m.params.iter().map(|p| &p.1).chain(m.ret.iter())),
            );
            for t in tys {
                let mut t = t;
                while let Ty::Array(el) = t {
                    if !arrays.contains(t) {
                        arrays.push(t.clone());
                    }
                    t = el;
                }
            }
        }
        if arrays.is_empty() {
            arrays.push(Ty::Array(Box::new(Ty::Int)));
        }
        self.array_types = arrays;
    }

    // -------------------------------------------------------------- expressions

    fn literal_int(&mut self) -> String {
        match self.rng.weighted(&[70, 15, 8, 7]) {
            0 => format!("{}", self.rng.below(6)),
            1 => format!("{}", self.rng.below(200)),
            2 => format!("(-{})", self.rng.below(9) + 1),
            _ => {
                let b = *self.rng.pick(BIG);
                if self.rng.chance(30) { format!("(-{b})") } else { b.to_string() }
            }
        }
    }

    /// Locals (and parameters) whose type converts to `want`; `exact` asks for `want` itself.
    fn locals_of(cx: &Cx, want: &Ty, exact: bool) -> Vec<(String, Ty)> {
        cx.locals
            .iter()
            .filter(|(_, t)| if exact { t == want } else { t.converts_to(want) })
            .cloned()
            .collect()
    }

    /// Fields of any class (with the class) whose type converts to `want`.
    fn fields_of(&self, want: &Ty, exact: bool) -> Vec<(usize, String, Ty)> {
        let mut out = Vec::new();
        for (ci, c) in self.classes.iter().enumerate() {
            for (f, t) in &c.fields {
                if if exact { t == want } else { t.converts_to(want) } {
                    out.push((ci, f.clone(), t.clone()));
                }
            }
        }
        out
    }

    /// Callables of a kind (with their class) whose result converts to `want`.
    fn callables(&self, kind: Kind, want: Option<&Ty>, exact: bool) -> Vec<(usize, Callable)> {
        let mut out = Vec::new();
        for (ci, c) in self.classes.iter().enumerate() {
            for m in &c.members {
                if m.kind != kind {
                    continue;
                }
                let ok = match (want, &m.ret) {
                    (None, _) => true,
                    (Some(w), Some(r)) => {
                        if exact {
                            r == w
                        } else {
                            r.converts_to(w)
                        }
                    }
                    (Some(_), None) => false,
                };
                if ok {
                    out.push((ci, m.clone()));
                }
            }
        }
        out
    }

    /// An expression of exactly type `want` that is never the literal `null`: a receiver
    /// or an array. `None` when nothing of that type is at hand.
    fn source(&mut self, cx: &Cx, want: &Ty, d: u32) -> Option<String> {
        let mut options: Vec<String> = Vec::new();
        if !cx.is_static && *want == Ty::Class(cx.class) {
            options.push("this".into());
            options.push("this".into());
        }
        for (l, _) in Self::locals_of(cx, want, true) {
            options.push(l.clone());
            options.push(l);
        }
        if !cx.is_static {
            for (f, t) in self.classes[cx.class].fields.clone() {
                if t == *want {
                    options.push(if self.rng.chance(50) { f } else { format!("this.{f}") });
                }
            }
        }
        if cx.place.result()
            && let Some(r) = &cx.ret
            && r == want
        {
            options.push("result".into());
        }
        if d > 0 {
            for _ in 0..2 {
                match self.rng.below(4) {
                    3 => {
                        // An element of an array of arrays (or of objects).
                        let at = Ty::Array(Box::new(want.clone()));
                        if self.array_types.contains(&at)
                            && let Some(a) = self.source(cx, &at, d - 1)
                        {
                            let (i, _) = self.expr(cx, &Ty::Int, d - 1);
                            options.push(format!("{a}[{i}]"));
                        }
                    }
                    0 => {
                        let fs = self.fields_of(want, true);
                        if !fs.is_empty() {
                            let (ci, f, _) = self.rng.pick(&fs).clone();
                            if let Some(r) = self.source(cx, &Ty::Class(ci), d - 1) {
                                options.push(format!("{r}.{f}"));
                            }
                        }
                    }
                    1 => {
                        if let Some(c) = self.pure_call(cx, Some(want), true, d - 1) {
                            options.push(c);
                        }
                    }
                    _ => {
                        if cx.place.old() && self.rng.chance(30) {
                            let mut inner = cx.clone();
                            inner.place = cx.place;
                            if let Some(e) = self.source(&inner, want, d - 1) {
                                options.push(format!("old({e})"));
                            }
                        }
                    }
                }
            }
        }
        if options.is_empty() { None } else { Some(self.rng.pick(&options).clone()) }
    }

    /// How a call of `m` of class `ci` is written here, with its arguments; `None` when
    /// no receiver is at hand.
    fn call_text(&mut self, cx: &Cx, ci: usize, m: &Callable, d: u32) -> Option<String> {
        let recv = if m.is_static {
            if ci == cx.class && self.rng.chance(50) { String::new() } else { format!("C{ci}.") }
        } else if ci == cx.class && !cx.is_static && self.rng.chance(50) {
            if self.rng.chance(60) { String::new() } else { "this.".into() }
        } else {
            format!("{}.", self.source(cx, &Ty::Class(ci), d)?)
        };
        let args = self.args(cx, &m.params, d);
        Some(format!("{recv}{}({args})", m.name))
    }

    fn args(&mut self, cx: &Cx, params: &[(String, Ty)], d: u32) -> String {
        let mut out = Vec::new();
        for (_, t) in params {
            let (e, _) = self.expr(cx, t, d);
            out.push(e);
        }
        out.join(", ")
    }

    fn pure_call(&mut self, cx: &Cx, want: Option<&Ty>, exact: bool, d: u32) -> Option<String> {
        let mut cs = self.callables(Kind::Pure, want, exact);
        if let Some((ci, name)) = &self.in_own_post {
            cs.retain(|(c, m)| !(c == ci && &m.name == name));
        }
        if cs.is_empty() {
            return None;
        }
        let (ci, m) = self.rng.pick(&cs).clone();
        self.call_text(cx, ci, &m, d)
    }

    /// An expression whose type converts to `want`, with its actual type.
    fn expr(&mut self, cx: &Cx, want: &Ty, d: u32) -> (String, Ty) {
        for _ in 0..8 {
            if let Some(r) = self.try_expr(cx, want, d) {
                return r;
            }
        }
        self.leaf(cx, want)
    }

    fn leaf(&mut self, cx: &Cx, want: &Ty) -> (String, Ty) {
        let mut options: Vec<(String, Ty)> = Self::locals_of(cx, want, false);
        if !cx.is_static {
            for (f, t) in &self.classes[cx.class].fields {
                if t.converts_to(want) {
                    options.push((f.clone(), t.clone()));
                }
            }
            let this = Ty::Class(cx.class);
            if this.converts_to(want) {
                options.push(("this".into(), this));
            }
        }
        if cx.place.result()
            && let Some(r) = &cx.ret
            && r.converts_to(want)
        {
            options.push(("result".into(), r.clone()));
        }
        if !options.is_empty() && self.rng.chance(75) {
            return self.rng.pick(&options).clone();
        }
        match want {
            Ty::Int => (self.literal_int(), Ty::Int),
            Ty::Bool => {
                // A comparison of an int at hand with a constant, more often than a literal.
                let ints = Self::locals_of(cx, &Ty::Int, true);
                if !ints.is_empty() && self.rng.chance(60) {
                    let x = self.rng.pick(&ints).0.clone();
                    let op = *self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                    let k = self.rng.below(4);
                    return (format!("({x} {op} {k})"), Ty::Bool);
                }
                ((if self.rng.chance(50) { "true" } else { "false" }).into(), Ty::Bool)
            }
            _ => ("null".into(), Ty::Null),
        }
    }

    fn try_expr(&mut self, cx: &Cx, want: &Ty, d: u32) -> Option<(String, Ty)> {
        if d == 0 || self.rng.chance(30) {
            return Some(self.leaf(cx, want));
        }
        let e = d - 1;
        // Options shared by every type: a field, a pure call, `?:`, an array element,
        // `old`, `opening`/`using`, or by type.
        match self.rng.weighted(&[10, 8, 6, 4, 3, 3, 66]) {
            0 => {
                // A field of some receiver.
                let fs = self.fields_of(want, false);
                if fs.is_empty() {
                    return None;
                }
                let (ci, f, t) = self.rng.pick(&fs).clone();
                let r = self.source(cx, &Ty::Class(ci), e)?;
                return Some((format!("{r}.{f}"), t));
            }
            1 => {
                let mut cs = self.callables(Kind::Pure, Some(want), false);
                if let Some((ci, name)) = &self.in_own_post {
                    cs.retain(|(c, m)| !(c == ci && &m.name == name));
                }
                if cs.is_empty() {
                    return None;
                }
                let (ci, m) = self.rng.pick(&cs).clone();
                let t = m.ret.clone().unwrap();
                return Some((self.call_text(cx, ci, &m, e)?, t));
            }
            2 => {
                let (c, _) = self.expr(cx, &Ty::Bool, e);
                let (a, ta) = self.expr(cx, want, e);
                let tb_want = if ta == Ty::Null { want.clone() } else { ta.clone() };
                let (b, tb) = self.expr(cx, &tb_want, e);
                let t = if ta == Ty::Null { tb } else { ta };
                return Some((format!("({c} ? {a} : {b})"), t));
            }
            3 => {
                // An array element.
                let arrays: Vec<Ty> = self
                    .array_types
                    .iter()
                    .filter(|t| matches!(t, Ty::Array(el) if el.converts_to(want)))
                    .cloned()
                    .collect();
                if arrays.is_empty() {
                    return None;
                }
                let at = self.rng.pick(&arrays).clone();
                let a = self.source(cx, &at, e)?;
                let (i, _) = self.expr(cx, &Ty::Int, e);
                let Ty::Array(el) = at else { unreachable!() };
                return Some((format!("{a}[{i}]"), *el));
            }
            4 => {
                if !cx.place.old() {
                    return None;
                }
                let (x, t) = self.expr(cx, want, e);
                return Some((format!("old({x})"), t));
            }
            5 => {
                // opening / using.
                if self.rng.chance(60) {
                    let ps = self.callables(Kind::Predicate, None, false);
                    let (ci, p) = self.rng.pick(&ps).clone();
                    let call = self.call_text(cx, ci, &p, e.min(1))?;
                    let (x, t) = self.expr(cx, want, e);
                    return Some((format!("(opening {call} in {x})"), t));
                }
                let call = self.pure_call(cx, None, false, e.min(1))?;
                let (x, t) = self.expr(cx, want, e);
                return Some((format!("(using {call} in {x})"), t));
            }
            _ => {}
        }
        match want {
            Ty::Int => Some(self.int_expr(cx, e)),
            Ty::Bool => Some(self.bool_expr(cx, e)),
            _ => None,
        }
    }

    fn int_expr(&mut self, cx: &Cx, e: u32) -> (String, Ty) {
        let s = match self.rng.weighted(&[400, 100, 100, 80, 4]) {
            4 => {
                // Rarely, a long chain (deep terms, deep recursion in the rules).
                let (a, _) = self.leaf(cx, &Ty::Int);
                let k = 50 + self.rng.below(300);
                let op = *self.rng.pick(&["+", "-", "*"]);
                // No variable among the factors of a product: Z3 does not stop at the
                // time budget on `x * x * .. * x` (`tests/hang/nonlinear_timeout.jv`).
                let mut chain = a.clone();
                for j in 0..k {
                    let v = if j % 7 == 3 && op != "*" { a.as_str() } else { "1" };
                    write!(chain, " {op} {v}").unwrap();
                }
                format!("({chain})")
            }
            0 => {
                let op = *self.rng.pick(&["+", "-", "*", "/", "%", "+", "-"]);
                let (a, _) = self.expr(cx, &Ty::Int, e);
                let (b, _) = self.expr(cx, &Ty::Int, e);
                format!("({a} {op} {b})")
            }
            1 => {
                let (a, _) = self.expr(cx, &Ty::Int, e);
                format!("(-{a})")
            }
            2 => {
                let at = self.rng.pick(&self.array_types.clone()).clone();
                match self.source(cx, &at, e) {
                    Some(a) => format!("{a}.length"),
                    None => self.literal_int(),
                }
            }
            _ => self.literal_int(),
        };
        (s, Ty::Int)
    }

    fn bool_expr(&mut self, cx: &Cx, e: u32) -> (String, Ty) {
        let s = match self.rng.weighted(&[25, 20, 20, 8, 8]) {
            0 => {
                let op = *self.rng.pick(&["<", "<=", ">", ">="]);
                let (a, _) = self.expr(cx, &Ty::Int, e);
                let (b, _) = self.expr(cx, &Ty::Int, e);
                format!("({a} {op} {b})")
            }
            1 => {
                let op = if self.rng.chance(50) { "==" } else { "!=" };
                let n = self.classes.len();
                let t = self.random_type(n);
                let (a, ta) = self.expr(cx, &t, e);
                let tb = if ta == Ty::Null { t } else { ta };
                let (b, _) = self.expr(cx, &tb, e);
                format!("({a} {op} {b})")
            }
            2 => {
                let op = *self.rng.pick(&["&&", "||", "==>"]);
                let (a, _) = self.expr(cx, &Ty::Bool, e);
                let (b, _) = self.expr(cx, &Ty::Bool, e);
                format!("({a} {op} {b})")
            }
            3 => {
                let (a, _) = self.expr(cx, &Ty::Bool, e);
                format!("(!{a})")
            }
            _ => {
                // `x != null` on a reference at hand: the facts that make accesses defined.
                let refs: Vec<(String, Ty)> =
                    cx.locals.iter().filter(|(_, t)| t.is_ref()).cloned().collect();
                if refs.is_empty() {
                    return (if self.rng.chance(50) { "true" } else { "false" }.into(), Ty::Bool);
                }
                let (x, _) = self.rng.pick(&refs).clone();
                format!("({x} != null)")
            }
        };
        (s, Ty::Bool)
    }

    // -------------------------------------------------------------- assertions

    /// A boolean assertion, with permissions where the place allows them.
    fn assertion(&mut self, cx: &Cx, d: u32) -> String {
        if !cx.place.permissions() {
            return self.expr(cx, &Ty::Bool, d).0;
        }
        for _ in 0..8 {
            if let Some(a) = self.try_assertion(cx, d) {
                return a;
            }
        }
        self.expr(cx, &Ty::Bool, d).0
    }

    /// A permission to a field: `acc(r.f)`.
    fn acc_field(&mut self, cx: &Cx, d: u32) -> Option<String> {
        let mut cands: Vec<usize> =
            (0..self.classes.len()).filter(|&ci| !self.classes[ci].fields.is_empty()).collect();
        // Mostly our own fields.
        if !cx.is_static && !self.classes[cx.class].fields.is_empty() && self.rng.chance(60) {
            cands = vec![cx.class];
        }
        if cands.is_empty() {
            return None;
        }
        let ci = *self.rng.pick(&cands);
        let f = self.rng.pick(&self.classes[ci].fields).0.clone();
        if ci == cx.class && !cx.is_static && self.rng.chance(70) {
            return Some(if self.rng.chance(50) {
                format!("acc({f})")
            } else {
                format!("acc(this.{f})")
            });
        }
        let r = self.source(cx, &Ty::Class(ci), d)?;
        Some(format!("acc({r}.{f})"))
    }

    fn try_assertion(&mut self, cx: &Cx, d: u32) -> Option<String> {
        let e = d.saturating_sub(1);
        let untouched_ok = cx.place == Place::Post
            && matches!(cx.kind, MKind::Method | MKind::Constructor)
            && d > 0;
        match self.rng.weighted(&[24, 26, 6, 16, 12, 7, 5, if untouched_ok { 5 } else { 0 }]) {
            0 => Some(self.expr(cx, &Ty::Bool, d).0),
            1 => self.acc_field(cx, e),
            2 => {
                let at = self.rng.pick(&self.array_types.clone()).clone();
                let a = self.source(cx, &at, e)?;
                Some(format!("acc({a}[*])"))
            }
            3 => {
                let ps = self.callables(Kind::Predicate, None, false);
                let (ci, p) = self.rng.pick(&ps).clone();
                self.call_text(cx, ci, &p, e)
            }
            4 => {
                if d == 0 {
                    return None;
                }
                let a = self.assertion(cx, e);
                let b = self.assertion(cx, e);
                Some(format!("({a} && {b})"))
            }
            5 => {
                if d == 0 {
                    return None;
                }
                let (c, _) = self.expr(cx, &Ty::Bool, e);
                let a = self.assertion(cx, e);
                Some(format!("({c} ==> {a})"))
            }
            6 => {
                if d == 0 {
                    return None;
                }
                let (c, _) = self.expr(cx, &Ty::Bool, e);
                let a = self.assertion(cx, e);
                let b = self.assertion(cx, e);
                Some(format!("({c} ? {a} : {b})"))
            }
            _ => {
                let inner = cx.at(Place::Untouched);
                let a = self.assertion(&inner, e);
                Some(format!("untouched({a})"))
            }
        }
    }

    /// A conjunction of a few assertions, permissions first more often than not.
    fn contract(&mut self, cx: &Cx, max: usize) -> String {
        let k = 1 + self.rng.below(max);
        let mut parts = Vec::new();
        for _ in 0..k {
            parts.push(self.assertion(cx, 2));
        }
        parts.join(" && ")
    }

    // -------------------------------------------------------------- statements

    fn fresh(&mut self) -> String {
        self.next_local += 1;
        format!("l{}", self.next_local)
    }

    fn local_type(&mut self, cx: &Cx) -> Ty {
        // Prefer the types of things at hand, so that assignments have something to use.
        if self.rng.chance(40) && !cx.locals.is_empty() {
            return self.rng.pick(&cx.locals).1.clone();
        }
        let n = self.classes.len();
        self.random_type(n)
    }

    /// The right side of a declaration or assignment of type `want`.
    fn rhs(&mut self, cx: &Cx, want: &Ty) -> String {
        match self.rng.weighted(&[50, 18, 22]) {
            1 => {
                let ci = match want {
                    Ty::Class(ci) => Some(*ci),
                    Ty::Object => Some(self.rng.below(self.classes.len())),
                    _ => None,
                };
                if let Some(ci) = ci {
                    let params = self.classes[ci].ctor.clone().unwrap_or_default();
                    let args = self.args(cx, &params, 1);
                    return format!("new C{ci}({args})");
                }
                if let Ty::Array(el) = want {
                    let n = if self.rng.chance(70) {
                        format!("{}", self.rng.below(5))
                    } else {
                        self.expr(cx, &Ty::Int, 1).0
                    };
                    return format!("new {}[{n}]", el.name());
                }
            }
            2 => {
                let kind = if self.rng.chance(75) { Kind::Method } else { Kind::Pure };
                let cs = self.callables(kind, Some(want), false);
                if !cs.is_empty() {
                    let (ci, m) = self.rng.pick(&cs).clone();
                    if let Some(c) = self.call_text(cx, ci, &m, 1) {
                        return c;
                    }
                }
            }
            _ => {}
        }
        self.expr(cx, want, 2).0
    }

    fn block(&mut self, cx: &mut Cx, n: usize, d: u32, indent: usize) -> String {
        let scope = cx.locals.len();
        let mut out = String::from("{\n");
        for _ in 0..n {
            if self.budget == 0 {
                break;
            }
            self.budget -= 1;
            let s = self.stmt(cx, d, indent + 1);
            out.push_str(&s);
        }
        out.push_str(&"  ".repeat(indent));
        out.push('}');
        cx.locals.truncate(scope);
        out
    }

    fn stmt(&mut self, cx: &mut Cx, d: u32, indent: usize) -> String {
        let pad = "  ".repeat(indent);
        let nested = d > 0 && self.budget > 2;
        let w = [
            20,                                          // local
            22,                                          // assignment
            12,                                          // call
            if nested && self.ifs < 6 { 12 } else { 0 }, // if
            if nested { 5 } else { 0 },                  // while
            if self.frame.is_some() { 3 } else { 9 },    // assert
            9,                                           // open / close / use
            if self.frame.is_some() { 1 } else { 3 },    // join
            3,                                           // return
            if nested { 2 } else { 0 },                  // block
            if nested { 1 } else { 0 },                  // deep nesting (rare)
        ];
        let line = match self.rng.weighted(&w) {
            0 => {
                let t = self.local_type(cx);
                let init = if self.rng.chance(85) {
                    format!(" = {}", self.rhs(cx, &t))
                } else {
                    String::new()
                };
                let x = self.fresh();
                let s = format!("{} {x}{init};", t.name());
                cx.locals.push((x, t));
                s
            }
            1 => self.assignment(cx),
            2 => {
                let kind = if self.rng.chance(80) { Kind::Method } else { Kind::Pure };
                let cs = self.callables(kind, None, false);
                let call = if cs.is_empty() {
                    None
                } else {
                    let (ci, m) = self.rng.pick(&cs).clone();
                    self.call_text(cx, ci, &m, 1)
                };
                match call {
                    Some(c) => format!("{c};"),
                    None => format!("assert {};", self.expr(cx, &Ty::Bool, 1).0),
                }
            }
            3 => {
                self.ifs += 1;
                let (c, _) = self.expr(&cx.at(Place::Code), &Ty::Bool, 2);
                let n = 1 + self.rng.below(3);
                let then = self.block(cx, n, d - 1, indent);
                let mut s = format!("if ({c}) {then}");
                if self.rng.chance(25) {
                    let (c2, _) = self.expr(cx, &Ty::Bool, 2);
                    let n = 1 + self.rng.below(2);
                    let b = self.block(cx, n, d - 1, indent);
                    write!(s, " else if ({c2}) {b}").unwrap();
                }
                if self.rng.chance(50) {
                    let n = 1 + self.rng.below(3);
                    let b = self.block(cx, n, d - 1, indent);
                    write!(s, " else {b}").unwrap();
                }
                s
            }
            4 if self.frame.is_some() && self.rng.chance(70) => {
                // A counting loop that keeps the method's permissions.
                let frame = self.frame.clone().unwrap();
                let i = self.fresh();
                let k = if self.rng.chance(70) {
                    format!("{}", 1 + self.rng.below(3))
                } else {
                    self.expr(cx, &Ty::Int, 1).0
                };
                let mut s = format!("int {i} = 0;\n{pad}while ({i} < {k})");
                write!(s, "\n{pad}  invariant {frame};").unwrap();
                write!(s, "\n{pad}  invariant 0 <= {i};").unwrap();
                if self.rng.chance(30) {
                    let extra = self.contract(&cx.at(Place::Invariant), 1);
                    write!(s, "\n{pad}  invariant {extra};").unwrap();
                }
                cx.locals.push((i.clone(), Ty::Int));
                let n = 1 + self.rng.below(3);
                let mut b = self.block(cx, n, d - 1, indent);
                b.pop();
                write!(b, "  {i} = {i} + 1;\n{pad}}}").unwrap();
                write!(s, "\n{pad}{b}").unwrap();
                s
            }
            4 => {
                let (c, _) = self.expr(cx, &Ty::Bool, 2);
                let mut s = format!("while ({c})");
                let inv = cx.at(Place::Invariant);
                for _ in 0..self.rng.below(3) {
                    let i = self.contract(&inv, 3);
                    write!(s, "\n{pad}  invariant {i};").unwrap();
                }
                let n = 1 + self.rng.below(3);
                let b = self.block(cx, n, d - 1, indent);
                write!(s, "\n{pad}{b}").unwrap();
                s
            }
            5 => format!("assert {};", self.contract(&cx.at(Place::Assert), 2)),
            6 => self.ghost(cx),
            7 => match self.frame.clone() {
                Some(frame) if self.rng.chance(70) => {
                    let extra = self.contract(&cx.at(Place::Join), 1);
                    format!("join {frame} && {extra};")
                }
                _ => format!("join {};", self.contract(&cx.at(Place::Join), 3)),
            },
            8 => self.ret(cx),
            9 => {
                let n = 1 + self.rng.below(2);
                self.block(cx, n, d - 1, indent)
            }
            _ => {
                // Deep nesting (the parser accepts 500 levels): blocks, or `if`s on one
                // condition (one feasible path each), around one statement.
                let k = 30 + self.rng.below(120);
                let (c, _) = self.expr(cx, &Ty::Bool, 1);
                let scope = cx.locals.len();
                let inner = self.stmt(cx, 0, 0);
                cx.locals.truncate(scope);
                let (open, close) = if self.rng.chance(50) {
                    ("{ ".to_string(), "}")
                } else {
                    (format!("if ({c}) {{ "), "}")
                };
                format!("{}{}{}", open.repeat(k), inner.trim(), close.repeat(k))
            }
        };
        format!("{pad}{line}\n")
    }

    fn assignment(&mut self, cx: &mut Cx) -> String {
        let op = if self.rng.chance(10) { ":=" } else { "=" };
        match self.rng.below(3) {
            0 if !cx.locals.is_empty() => {
                let (x, t) = self.rng.pick(&cx.locals).clone();
                let r = self.rhs(cx, &t);
                format!("{x} {op} {r};")
            }
            1 => {
                // A field write.
                let mut cands: Vec<(usize, String, Ty)> = Vec::new();
                for (ci, c) in self.classes.iter().enumerate() {
                    for (f, t) in &c.fields {
                        let w = if ci == cx.class && !cx.is_static { 3 } else { 1 };
                        for _ in 0..w {
                            cands.push((ci, f.clone(), t.clone()));
                        }
                    }
                }
                if cands.is_empty() {
                    return self.assert_true(cx);
                }
                let (ci, f, t) = self.rng.pick(&cands).clone();
                let lhs = if ci == cx.class && !cx.is_static && self.rng.chance(60) {
                    if self.rng.chance(50) { f } else { format!("this.{f}") }
                } else {
                    match self.source(cx, &Ty::Class(ci), 1) {
                        Some(r) => format!("{r}.{f}"),
                        None => return self.assert_true(cx),
                    }
                };
                let r = self.rhs(cx, &t);
                format!("{lhs} {op} {r};")
            }
            _ => {
                let at = self.rng.pick(&self.array_types.clone()).clone();
                let Some(a) = self.source(cx, &at, 1) else {
                    return self.assert_true(cx);
                };
                let (i, _) = self.expr(cx, &Ty::Int, 1);
                let Ty::Array(el) = at else { unreachable!() };
                let r = self.rhs(cx, &el);
                format!("{a}[{i}] {op} {r};")
            }
        }
    }

    fn assert_true(&mut self, cx: &Cx) -> String {
        let (e, _) = self.expr(cx, &Ty::Bool, 1);
        format!("assert {e};")
    }

    fn ghost(&mut self, cx: &Cx) -> String {
        let (kind, word) = match self.rng.below(3) {
            0 => (Kind::Predicate, "open"),
            1 => (Kind::Predicate, "close"),
            _ => (Kind::Pure, "use"),
        };
        let cs = self.callables(kind, None, false);
        if cs.is_empty() {
            return self.assert_true(cx);
        }
        let (ci, m) = self.rng.pick(&cs).clone();
        match self.call_text(cx, ci, &m, 1) {
            Some(c) => format!("{word} {c};"),
            None => self.assert_true(cx),
        }
    }

    fn ret(&mut self, cx: &Cx) -> String {
        match cx.ret.clone() {
            None => "return;".into(),
            Some(t) => {
                if self.rng.chance(20) {
                    let cs = self.callables(Kind::Method, Some(&t), false);
                    if !cs.is_empty() {
                        let (ci, m) = self.rng.pick(&cs).clone();
                        if let Some(c) = self.call_text(cx, ci, &m, 1) {
                            return format!("return {c};");
                        }
                    }
                }
                format!("return {};", self.expr(cx, &t, 2).0)
            }
        }
    }

    // -------------------------------------------------------------- members

    fn member(&mut self, ci: usize, m: &Callable) -> String {
        let mkind = match m.kind {
            Kind::Predicate => MKind::Predicate,
            Kind::Pure => MKind::Pure,
            Kind::Method => MKind::Method,
        };
        let mut cx = Cx {
            class: ci,
            is_static: m.is_static,
            kind: mkind,
            ret: m.ret.clone(),
            place: Place::Code,
            locals: m.params.clone(),
        };
        self.next_local = 0;
        self.ifs = 0;
        let stat = if m.is_static { "static " } else { "" };
        let modifier = match self.rng.below(12) {
            0 => "public ",
            1 => "private ",
            _ => "",
        };
        let params: Vec<String> =
            m.params.iter().map(|(p, t)| format!("{} {p}", t.name())).collect();
        let params = params.join(", ");
        if let Some(t) = &m.template {
            if let Some(fi) = t.strip_prefix("#getter ") {
                let fi: usize = fi.parse().unwrap();
                let (f, ty) = self.classes[ci].fields[fi].clone();
                let (pre, body) = match self.rng.below(4) {
                    0 => ("valid()".to_string(), f.clone()),
                    1 => ("valid()".to_string(), format!("opening valid() in {f}")),
                    2 => (format!("acc({f})"), format!("this.{f}")),
                    _ => (format!("valid() && acc({f})"), f.clone()),
                };
                return format!(
                    "  {modifier}pure {} {}() requires {pre}; {{ return {body}; }}\n",
                    ty.name(),
                    m.name
                );
            }
            let t = t.replace("C_SELF", &format!("C{ci}"));
            return match m.kind {
                Kind::Predicate => format!("  predicate {}() {{ return {t}; }}\n", m.name),
                Kind::Pure => {
                    format!("  pure {} {}() {t}\n", m.ret.as_ref().unwrap().name(), m.name)
                }
                Kind::Method => format!("  {t}\n"),
            };
        }
        match m.kind {
            Kind::Predicate => {
                cx.place = Place::PredicateBody;
                let body = self.contract(&cx, 4);
                format!("  {modifier}{stat}predicate {}({params}) {{ return {body}; }}\n", m.name)
            }
            Kind::Pure => {
                let ret = m.ret.clone().unwrap();
                let mut s = format!("  {modifier}{stat}pure {} {}({params})", ret.name(), m.name);
                if self.rng.chance(75) {
                    let pre = self.contract(&cx.at(Place::PurePre), 3);
                    write!(s, "\n    requires {pre};").unwrap();
                }
                if self.rng.chance(40) {
                    // A pure method's ensures may not call the method itself
                    // (LANGUAGE.md section 15).
                    self.in_own_post = Some((cx.class, m.name.clone()));
                    let post = self.expr(&cx.at(Place::PurePost), &Ty::Bool, 2).0;
                    self.in_own_post = None;
                    write!(s, "\n    ensures {post};").unwrap();
                }
                let (body, _) = self.expr(&cx.at(Place::PureBody), &ret, 3);
                write!(s, "\n  {{ return {body}; }}\n").unwrap();
                s
            }
            Kind::Method => {
                let ty = m.ret.as_ref().map_or("void".to_string(), Ty::name);
                let head = format!("  {modifier}{stat}{ty} {}({params})", m.name);
                self.method_rest(&mut cx, head)
            }
        }
    }

    /// Contracts and body of a method or constructor.
    /// The permissions a careful method holds: see [`Gen::frame`].
    fn frame_of(&mut self, cx: &Cx) -> Option<String> {
        let mut parts = Vec::new();
        if !cx.is_static {
            for (f, t) in &self.classes[cx.class].fields {
                parts.push(format!("acc(this.{f})"));
                if matches!(t, Ty::Array(_)) && self.rng.chance(40) {
                    parts.push(format!("(this.{f} != null ==> acc(this.{f}[*]))"));
                }
            }
        }
        for (p, t) in &cx.locals {
            if self.rng.chance(40) {
                continue;
            }
            match t {
                Ty::Class(k) => {
                    let fields = &self.classes[*k].fields;
                    let g = &fields[self.rng.below(fields.len())].0;
                    parts.push(format!("({p} != null ==> acc({p}.{g}))"));
                }
                Ty::Array(_) => parts.push(format!("({p} != null ==> acc({p}[*]))")),
                _ => {}
            }
        }
        if parts.is_empty() { None } else { Some(parts.join(" && ")) }
    }

    fn method_rest(&mut self, cx: &mut Cx, head: String) -> String {
        let mut s = head;
        self.frame = if self.rng.chance(50) { self.frame_of(cx) } else { None };
        let ctor = cx.kind == MKind::Constructor;
        if let Some(frame) = self.frame.clone() {
            // A constructor holds its fields already: its frame is for loops and joins.
            if !ctor {
                write!(s, "\n    requires {frame};").unwrap();
            }
            if self.rng.chance(30) {
                let pre = self.contract(&cx.at(Place::Pre), 2);
                write!(s, "\n    requires {pre};").unwrap();
            }
            let post = if self.rng.chance(50) {
                frame
            } else {
                format!("{frame} && {}", self.contract(&cx.at(Place::Post), 2))
            };
            write!(s, "\n    ensures {post};").unwrap();
        } else {
            for _ in 0..self.rng.below(3) {
                let pre = self.contract(&cx.at(Place::Pre), 3);
                write!(s, "\n    requires {pre};").unwrap();
            }
            for _ in 0..self.rng.below(3) {
                let post = self.contract(&cx.at(Place::Post), 3);
                write!(s, "\n    ensures {post};").unwrap();
            }
        }
        self.budget = 4 + self.rng.below(10);
        cx.place = Place::Code;
        let n = 1 + self.rng.below(5);
        let mut body = self.block(cx, n, 2, 1);
        if let Some(t) = cx.ret.clone()
            && self.rng.chance(85)
        {
            // A final return, inside the outermost block.
            body.pop();
            let (e, _) = self.expr(cx, &t, 2);
            write!(body, "  return {e};\n  }}").unwrap();
        }
        write!(s, "\n  {body}\n").unwrap();
        self.frame = None;
        s
    }

    fn constructor(&mut self, ci: usize, params: &[(String, Ty)]) -> String {
        let mut cx = Cx {
            class: ci,
            is_static: false,
            kind: MKind::Constructor,
            ret: None,
            place: Place::Code,
            locals: params.to_vec(),
        };
        self.next_local = 0;
        self.ifs = 0;
        let ps: Vec<String> = params.iter().map(|(p, t)| format!("{} {p}", t.name())).collect();
        let head = format!("  C{ci}({})", ps.join(", "));
        self.method_rest(&mut cx, head)
    }

    fn program(&mut self) -> String {
        self.signatures();
        let mut out = String::new();
        for ci in 0..self.classes.len() {
            let c = self.classes[ci].clone();
            let mut parts: Vec<String> = Vec::new();
            for (f, t) in &c.fields {
                parts.push(format!("  {} {f};\n", t.name()));
            }
            if let Some(ps) = &c.ctor {
                parts.push(self.constructor(ci, ps));
            }
            for m in &c.members {
                parts.push(self.member(ci, m));
            }
            self.rng.shuffle(&mut parts);
            if self.rng.chance(10) {
                parts.insert(0, "  /* a comment */ // and another\n".into());
            }
            writeln!(out, "class C{ci} {{").unwrap();
            for p in parts {
                out.push_str(&p);
            }
            out.push_str("}\n\n");
        }
        out
    }
}

fn template(kind: Kind, name: &str, ret: Option<Ty>, text: &str) -> Callable {
    Callable {
        name: name.into(),
        kind,
        is_static: false,
        params: vec![],
        ret,
        template: Some(text.into()),
    }
}

/// The program of one seed.
fn generate(seed: u64) -> String {
    Gen::new(seed).program()
}

// ------------------------------------------------------------------ the harness

/// One problem found: which program, member and configuration, and what happened.
struct Finding {
    index: usize,
    seed: u64,
    what: String,
    source: String,
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        let v = v.trim();
        match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).expect("a hex number"),
            None => v.parse().expect("a number"),
        }
    })
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".into()
    }
}

/// What a worker is doing: program index and member name, since when.
type InFlight = Arc<Mutex<Vec<Option<(usize, String, Instant)>>>>;

/// Verify every member of one program under both configurations, on the calling thread
/// (which has a big stack); the problems found, and whether verification panicked (then
/// the program's remaining members are skipped: the thread's solver may be unusable).
fn exercise(
    index: usize,
    seed: u64,
    src: &str,
    worker: usize,
    in_flight: &InFlight,
    members: &AtomicUsize,
) -> (Vec<Finding>, bool) {
    let finding = |what: String| Finding { index, seed, what, source: src.to_string() };
    let prog: Program = match front_end(src) {
        Ok(p) => p,
        Err(errors) => {
            let msgs: Vec<String> = errors.iter().map(|e| format!("{e:?}")).collect();
            let what =
                format!("generator bug: the front end rejects the program:\n{}", msgs.join("\n"));
            return (vec![finding(what)], false);
        }
    };
    let configs = [
        ("no-infer", Config { infer: false, timeout: Some(2.0), ..Config::default() }),
        (
            "trace+counterexample",
            Config { trace: true, counterexample: true, timeout: Some(2.0), ..Config::default() },
        ),
    ];
    let mut out = Vec::new();
    let mut printed = false;
    for (ci, class) in prog.classes.iter().enumerate() {
        for (mi, m) in class.members.iter().enumerate() {
            if m.kind == MemberKind::Field {
                continue;
            }
            members.fetch_add(1, Ordering::Relaxed);
            let name = if m.kind == MemberKind::Constructor {
                format!("{}.new", class.name.name)
            } else {
                format!("{}.{}", class.name.name, m.name.name)
            };
            for (label, config) in &configs {
                in_flight.lock().unwrap()[worker] =
                    Some((index, format!("{name} ({label})"), Instant::now()));
                let member = MemberRef { class: ci, member: mi };
                let r = catch_unwind(AssertUnwindSafe(|| verify_member(&prog, member, config)));
                if let Some((i, w, since)) = in_flight.lock().unwrap()[worker].clone()
                    && let Some(ms) = env_u64("FUZZ_SLOW")
                    && since.elapsed() >= Duration::from_millis(ms)
                {
                    let st = match &r {
                        Ok(Ok(m)) => format!("{:?}", m.status),
                        _ => "crash".into(),
                    };
                    eprintln!("slow: program {i} {w}: {:?} {st}", since.elapsed());
                    if st == "Timeout" && !printed {
                        printed = true;
                        eprintln!("// program {i} (seed {seed:#x})\n{src}");
                    }
                }
                match r {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => {
                        out.push(finding(format!("{name} ({label}): internal error: {e}")))
                    }
                    Err(p) => {
                        out.push(finding(format!(
                            "{name} ({label}): panic: {}",
                            panic_message(p.as_ref())
                        )));
                        in_flight.lock().unwrap()[worker] = None;
                        return (out, true);
                    }
                }
            }
        }
    }
    in_flight.lock().unwrap()[worker] = None;
    (out, false)
}

/// How long one member may take before the run counts as not terminating (the
/// per-member solver budget is 2 s).
const HANG: Duration = Duration::from_secs(120);

#[test]
fn random_programs_never_crash() {
    let base = env_u64("FUZZ_SEED").unwrap_or(0x1df_5eed);
    let cases = env_u64("FUZZ_CASES").unwrap_or(120) as usize;
    let only = env_u64("FUZZ_ONLY").map(|i| i as usize);
    let print = std::env::var("FUZZ_PRINT").is_ok();
    let indices: Vec<usize> = match only {
        Some(i) => vec![i],
        None => (0..cases).collect(),
    };
    let jobs: Vec<(usize, u64, String)> = indices
        .into_iter()
        .map(|i| {
            let seed = splitmix(base ^ (i as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
            (i, seed, generate(seed))
        })
        .collect();
    if print {
        for (i, seed, src) in &jobs {
            println!("// program {i} (seed {seed:#x})\n{src}");
        }
    }
    let start = Instant::now();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4);
    let jobs = Arc::new(jobs);
    let next = Arc::new(AtomicUsize::new(0));
    let members = Arc::new(AtomicUsize::new(0));
    let in_flight: InFlight = Arc::new(Mutex::new(vec![None; workers]));
    let (tx, rx) = std::sync::mpsc::channel::<Vec<Finding>>();
    for w in 0..workers {
        let (jobs, next, members, in_flight, tx) =
            (jobs.clone(), next.clone(), members.clone(), in_flight.clone(), tx.clone());
        std::thread::spawn(move || {
            // Programs run on one big-stack thread (which keeps its solver between
            // members), and on a fresh one after a panic.
            let mut more = true;
            while more {
                more = with_big_stack(|| {
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some((i, seed, src)) = jobs.get(k) else { return false };
                        let (found, panicked) = exercise(*i, *seed, src, w, &in_flight, &members);
                        if tx.send(found).is_err() {
                            return false;
                        }
                        if panicked {
                            return true;
                        }
                    }
                });
            }
        });
    }
    drop(tx);
    let mut findings = Vec::new();
    let mut done = 0;
    while done < jobs.len() {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(f) => {
                done += 1;
                findings.extend(f);
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        let stuck =
            in_flight.lock().unwrap().iter().flatten().find(|s| s.2.elapsed() > HANG).cloned();
        if let Some((i, what, since)) = stuck {
            let (_, seed, src) = jobs.iter().find(|j| j.0 == i).unwrap();
            panic!(
                "program {i} (seed {seed:#x}, base seed {base:#x}): {what} has run for {:?} \
                 without terminating\n{src}",
                since.elapsed()
            );
        }
    }
    assert_eq!(done, jobs.len(), "a worker thread died: only {done} programs were verified");
    let elapsed = start.elapsed();
    println!(
        "fuzz: {} programs, {} members (x2 configurations) in {:.1?} (base seed {base:#x})",
        jobs.len(),
        members.load(Ordering::Relaxed),
        elapsed
    );
    if !findings.is_empty() {
        findings.sort_by_key(|f| f.index);
        let mut report = String::new();
        for f in &findings {
            writeln!(report, "program {} (seed {:#x}): {}", f.index, f.seed, f.what).unwrap();
        }
        let mut shown = Vec::new();
        for f in &findings {
            if !shown.contains(&f.index) && shown.len() < 3 {
                shown.push(f.index);
                writeln!(
                    report,
                    "\n// ---- program {} (seed {:#x})\n{}",
                    f.index, f.seed, f.source
                )
                .unwrap();
            }
        }
        panic!(
            "{} problem(s) in random programs (base seed {base:#x}; rerun one with \
             FUZZ_SEED={base:#x} FUZZ_ONLY=<index>):\n{report}",
            findings.len()
        );
    }
}

/// The fuzzer's regressions, `tests/programs/verify/fuzz/*.jv` (also run by
/// `tests/programs.rs`), must meet their `// expect:` comments within a time budget per
/// member (`idf-verify --timeout 5 --expect`, in a child process that is killed after
/// 30 s): several of them used to run forever. (A query that ignores its timeout
/// altogether is `tests/hang/`, run by `tests/run_ends.rs`.) A header line
/// `// flags: ...` passes `--no-infer`, `--trace`, `--counterexample`.
#[test]
fn fuzz_regressions_terminate() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/verify/fuzz");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/programs/verify/fuzz")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.to_string_lossy();
            name.ends_with(".jv")
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no regressions in {}", dir.display());
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        let mut args: Vec<String> =
            vec!["--no-cache".into(), "--timeout".into(), "5".into(), "--expect".into()];
        let header = text.lines().take_while(|l| l.starts_with("//"));
        for flag in
            header.filter_map(|l| l.strip_prefix("// flags:")).flat_map(str::split_whitespace)
        {
            match flag {
                "--no-infer" | "--trace" | "--counterexample" => args.push(flag.into()),
                other => panic!("{}: unknown flag `{other}`", f.display()),
            }
        }
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_idf-verify"))
            .args(&args)
            .arg(f)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("idf-verify runs");
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break Some(status);
            }
            if start.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        match status {
            Some(s) if s.success() => {}
            Some(_) => {
                let out = child.wait_with_output().expect("output");
                failures.push(format!(
                    "{}:\n{}{}",
                    f.display(),
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            None => failures.push(format!("{}: still running after 30 s", f.display())),
        }
    }
    assert!(failures.is_empty(), "fuzz regressions fail:\n{}", failures.join("\n"));
}

/// Found by the fuzzer: with trace on (and only then), a pure method calling itself in
/// its precondition with a doubled argument never finished (the bounded nested
/// evaluation of the precondition doubles the argument at each level, and the trace
/// printed those shared terms as trees). A test here because `tests/programs.rs` has no
/// `--trace` flag.
#[test]
fn trace_of_a_doubling_precondition_terminates() {
    const SRC: &str =
        "class C {\n  static pure bool g(int x) requires g(x + x); { return true; }\n}\n";
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = with_big_stack(|| {
            let prog = front_end(SRC).expect("well-formed");
            let config = Config { trace: true, counterexample: true, ..Config::default() };
            verify_member(&prog, MemberRef { class: 0, member: 0 }, &config)
        });
        let _ = tx.send(r);
    });
    let r = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("verification with trace finishes")
        .expect("no internal error");
    let ids: Vec<&str> = r.errors.iter().map(|e| e.id).collect();
    assert_eq!(ids, ["termination.unproven"]);
}

//! A generator of random well-typed `.jv` programs in the shapes where a symbolic
//! executor goes wrong (issue 11, part 4): predicates with conditional parts and
//! recursive predicates, pure methods that unfold two levels into them, pure calls
//! under `&&`, `||`, `==>` and `?:` in contracts, conditions and assertions, guarded
//! calls, branches followed by `open`/`close`, loops with invariants, arrays, joins,
//! `new`, and assertions some of which are false.
//!
//! Every program has the class `N` (a node: `p()` has a conditional part, `list()` is
//! recursive) and often `Buf` (an array with a size). Methods know what they hold
//! ([`Hold`]): pure calls, ghost statements and field accesses are drawn from it, so
//! that a fair share of members verify.

pub use idf_verify::rng::Rng;

/// What a permission held by a method gives access to.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// `R.p()`: `g()`, `h()`, open/close.
    P,
    /// `R.list()`: `len()`, `sum()`, `has(k)`.
    L,
    /// `R.valid()` of a `Buf`: `size()`, `get(i)`.
    B,
    /// Every field of a fresh `N`.
    Fields,
}

#[derive(Clone, Debug)]
struct Hold {
    recv: String,
    kind: Kind,
    /// Held only when this holds (`x != null`).
    guard: Option<String>,
}

#[derive(Clone, Default)]
struct Cx {
    holds: Vec<Hold>,
    ints: Vec<String>,
    bools: Vec<String>,
    /// Is `old` allowed (method bodies and postconditions)?
    old: bool,
    /// Code or assertion: permissions may be named in assertions only.
    in_class_n: bool,
    is_static: bool,
}

/// A generated method's signature, for calls from later methods.
#[derive(Clone)]
struct Sig {
    name: String,
    /// The kinds held on `this` it requires and gives back.
    holds: Vec<Kind>,
    ints: usize,
    ret_int: bool,
}

pub struct Gen {
    rng: Rng,
    fresh: usize,
    n_sigs: Vec<Sig>,
    b_sigs: Vec<Sig>,
    has_ctor: bool,
}

fn call(recv: &str, m: &str, args: &str) -> String {
    if recv == "this" { format!("{m}({args})") } else { format!("{recv}.{m}({args})") }
}

impl Gen {
    /// One of the given words.
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.rng.below(xs.len())]
    }

    pub fn new(seed: u64) -> Gen {
        Gen { rng: Rng(seed), fresh: 0, n_sigs: vec![], b_sigs: vec![], has_ctor: false }
    }

    fn fresh(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}{}", self.fresh)
    }

    fn lit(&mut self) -> String {
        let n = self.rng.below(6) as i64 - 2;
        if n < 0 { format!("(0 - {})", -n) } else { n.to_string() }
    }

    // ------------------------------------------------------------ expressions

    fn int_atom(&mut self, cx: &Cx) -> String {
        if !cx.ints.is_empty() && self.rng.chance(60) {
            return cx.ints[self.rng.below(cx.ints.len())].clone();
        }
        self.lit()
    }

    /// A pure call (or field read) yielding an int, from what is held.
    fn int_from_hold(&mut self, cx: &Cx, d: u32) -> Option<String> {
        if cx.holds.is_empty() {
            return None;
        }
        let h = cx.holds[self.rng.below(cx.holds.len())].clone();
        let r = h.recv.as_str();
        let dot = |f: &str| if r == "this" { f.to_string() } else { format!("{r}.{f}") };
        let e = match h.kind {
            Kind::P if self.rng.chance(15) => {
                let n = dot("n");
                let inner = self.pick(&["0", "1", "NF"]).replace("NF", &format!("{n}.f"));
                format!(
                    "(opening {} in ({n} == null ? {} : {inner}))",
                    call(r, "p", ""),
                    self.lit()
                )
            }
            Kind::P => call(r, self.pick(&["g", "h", "h", "g2"]), ""),
            Kind::L if self.rng.chance(15) => {
                format!("(using {} in {})", call(r, "len", ""), call(r, "sum", ""))
            }
            Kind::L => call(r, self.pick(&["len", "sum", "len"]), ""),
            Kind::B => {
                if self.rng.chance(50) {
                    call(r, "size", "")
                } else {
                    let i = self.int_expr(cx, d + 1);
                    let size = call(r, "size", "");
                    let get = call(r, "get", &i);
                    if self.rng.chance(85) {
                        format!("(0 <= {i} && {i} < {size} ? {get} : 0)")
                    } else {
                        get
                    }
                }
            }
            Kind::Fields => format!("{r}.{}", self.pick(&["f", "v"])),
        };
        let e = if cx.old && self.rng.chance(15) && h.kind != Kind::Fields {
            format!("old({e})")
        } else {
            e
        };
        Some(match &h.guard {
            Some(g) => format!("({g} ? {e} : {})", self.lit()),
            None => e,
        })
    }

    fn int_expr(&mut self, cx: &Cx, d: u32) -> String {
        if d > 2 {
            return self.int_atom(cx);
        }
        match self.rng.below(10) {
            0..=2 => self.int_atom(cx),
            3..=5 => self.int_from_hold(cx, d).unwrap_or_else(|| self.int_atom(cx)),
            6 => {
                let (a, b) = (self.int_expr(cx, d + 1), self.int_expr(cx, d + 1));
                format!("({a} {} {b})", self.pick(&["+", "-", "+"]))
            }
            7 => {
                let a = self.int_expr(cx, d + 1);
                format!("({a} {} 2)", self.pick(&["*", "/", "%"]))
            }
            8 => {
                let c = self.bool_expr(cx, d + 1);
                let (a, b) = (self.int_expr(cx, d + 1), self.int_expr(cx, d + 1));
                format!("({c} ? {a} : {b})")
            }
            _ => {
                let a = self.int_atom(cx);
                format!("({a} >= 0 ? N.half({a}) : 0)")
            }
        }
    }

    fn bool_expr(&mut self, cx: &Cx, d: u32) -> String {
        if d > 2 {
            let (a, b) = (self.int_atom(cx), self.int_atom(cx));
            return format!("{a} {} {b}", self.pick(&["<", "<=", "==", "!="]));
        }
        match self.rng.below(14) {
            0..=4 => {
                let (a, b) = (self.int_expr(cx, d + 1), self.int_expr(cx, d + 1));
                format!("{a} {} {b}", self.pick(&["<", "<=", "==", "!=", ">=", ">"]))
            }
            5 => {
                let (a, b) = (self.bool_expr(cx, d + 1), self.bool_expr(cx, d + 1));
                format!("({a} && {b})")
            }
            6 => {
                let (a, b) = (self.bool_expr(cx, d + 1), self.bool_expr(cx, d + 1));
                format!("({a} || {b})")
            }
            7 => {
                let (a, b) = (self.bool_expr(cx, d + 1), self.bool_expr(cx, d + 1));
                format!("({a} ==> {b})")
            }
            8 if !cx.bools.is_empty() => cx.bools[self.rng.below(cx.bools.len())].clone(),
            9 => {
                let a = self.int_atom(cx);
                format!("({a} > 0 && N.pos({a}))")
            }
            10 => {
                // A pure call guarded by a condition (root cause A's shape).
                let c = self.bool_expr(cx, d + 2);
                let e = self.int_from_hold(cx, d).unwrap_or_else(|| self.int_atom(cx));
                format!("({c} ? {e} >= 0 : {e} < 1)")
            }
            11 => {
                let held: Vec<Hold> =
                    cx.holds.iter().filter(|h| h.kind == Kind::L).cloned().collect();
                if held.is_empty() {
                    return "true".into();
                }
                let h = &held[self.rng.below(held.len())];
                let k = self.int_atom(cx);
                let e = call(&h.recv, "has", &k);
                match &h.guard {
                    Some(g) => format!("({g} && {e})"),
                    None => e,
                }
            }
            12 => {
                let refs: Vec<String> =
                    cx.holds.iter().filter(|h| h.kind != Kind::B).map(|h| h.recv.clone()).collect();
                if refs.is_empty() {
                    return "false".into();
                }
                let r = &refs[self.rng.below(refs.len())];
                let s = &refs[self.rng.below(refs.len())];
                format!("{r} {} {s}", self.pick(&["==", "!="]))
            }
            _ => self.pick(&["true", "false", "true"]).into(),
        }
    }

    /// The permissions of `holds` as an assertion (`R.p()`, `G ==> R.list()`, ...).
    fn perms(holds: &[Hold]) -> Vec<String> {
        holds
            .iter()
            .filter_map(|h| {
                let r = &h.recv;
                let a = match h.kind {
                    Kind::P => call(r, "p", ""),
                    Kind::L => call(r, "list", ""),
                    Kind::B => call(r, "valid", ""),
                    Kind::Fields => return None,
                };
                Some(match &h.guard {
                    Some(g) => format!("({g} ==> {a})"),
                    None => a,
                })
            })
            .collect()
    }

    // ------------------------------------------------------------ statements

    fn block(&mut self, cx: &mut Cx, n: usize, d: u32, ind: usize, ret_int: bool) -> String {
        let mut out = String::new();
        for _ in 0..n {
            out.push_str(&self.stmt(cx, d, ind, ret_int));
        }
        out
    }

    fn stmt(&mut self, cx: &mut Cx, d: u32, ind: usize, ret_int: bool) -> String {
        let pad = " ".repeat(ind);
        let choice = if d > 1 { self.rng.below(6) } else { self.rng.below(17) };
        match choice {
            0 | 1 => format!("{pad}assert {};\n", self.bool_expr(cx, 0)),
            2 => {
                let x = self.fresh("k");
                let e = self.int_expr(cx, 0);
                cx.ints.push(x.clone());
                format!("{pad}int {x} = {e};\n")
            }
            3 => {
                if let Some(x) = cx.ints.iter().find(|x| x.starts_with('k')).cloned() {
                    let e = self.int_expr(cx, 0);
                    format!("{pad}{x} = {e};\n")
                } else {
                    format!("{pad}assert {};\n", self.bool_expr(cx, 0))
                }
            }
            4 => self.ghost(cx, &pad),
            5 => {
                let c = self.bool_expr(cx, 0);
                let mut a = cx.clone();
                let k = 1 + self.rng.below(2);
                let then = self.block(&mut a, k, d + 1, ind + 2, ret_int);
                let mut b = cx.clone();
                let els = if self.rng.chance(60) {
                    let k = 1 + self.rng.below(2);
                    let e = self.block(&mut b, k, d + 1, ind + 2, ret_int);
                    format!(" else {{\n{e}{pad}}}")
                } else {
                    String::new()
                };
                format!("{pad}if ({c}) {{\n{then}{pad}}}{els}\n")
            }
            6 => self.guarded_call(cx, &pad),
            7 => self.b3(cx, &pad),
            8 => self.array(cx, &pad),
            9 => self.new_object(cx, &pad),
            10 => self.loop_(cx, &pad, ind, ret_int),
            11 => self.call_method(cx, &pad),
            12 if ret_int && self.rng.chance(40) => {
                let c = self.bool_expr(cx, 0);
                let e = self.int_expr(cx, 0);
                format!("{pad}if ({c}) {{ return {e}; }}\n")
            }
            13 => self.buf_shape(cx, &pad),
            _ => format!("{pad}assert {};\n", self.bool_expr(cx, 0)),
        }
    }

    /// `open` and `close` of a held instance, around field updates, maybe under a branch.
    fn ghost(&mut self, cx: &Cx, pad: &str) -> String {
        let held: Vec<Hold> = cx
            .holds
            .iter()
            .filter(|h| h.guard.is_none() && h.kind != Kind::Fields)
            .cloned()
            .collect();
        if held.is_empty() {
            return format!("{pad}assert {};\n", self.bool_expr(cx, 0));
        }
        let h = &held[self.rng.below(held.len())];
        let r = &h.recv;
        let dot = |f: &str| if r == "this" { f.to_string() } else { format!("{r}.{f}") };
        let (pred, inner) = match h.kind {
            Kind::P => {
                let nf = dot("n");
                let upd = self.int_atom(cx);
                let inner = match self.rng.below(4) {
                    0 => format!("if ({nf} != null) {{ {nf}.f = {nf}.f + {upd}; }}"),
                    1 => format!("if ({nf} != null) {{ {nf}.f = {upd}; }}"),
                    2 => format!("int {} = {nf} == null ? 0 : {nf}.f;", self.fresh("t")),
                    _ => String::new(),
                };
                ("p", inner)
            }
            Kind::L => {
                let upd = self.int_atom(cx);
                let v = dot("v");
                let inner = match self.rng.below(3) {
                    0 => format!("{v} = {v} + {upd};"),
                    1 => format!("{v} = {upd};"),
                    _ => String::new(),
                };
                ("list", inner)
            }
            _ => {
                let i = self.int_expr(cx, 1);
                let data = dot("data");
                let inner = match self.rng.below(3) {
                    0 => format!("if (0 <= {i} && {i} < {data}.length) {{ {data}[{i}] = 1; }}"),
                    1 => format!("int {} = {data}[{i}];", self.fresh("t")),
                    _ => String::new(),
                };
                ("valid", inner)
            }
        };
        let open = format!("open {};", call(r, pred, ""));
        let close = format!("close {};", call(r, pred, ""));
        if self.rng.chance(20) {
            let m = match h.kind {
                Kind::P => self.pick(&["g", "g2", "h"]),
                Kind::L => self.pick(&["len", "sum"]),
                _ => "size",
            };
            let c = self.bool_expr(cx, 1);
            return format!(
                "{pad}if ({c}) {{ use {}; }}\n{pad}use {};\n",
                call(r, m, ""),
                call(r, m, "")
            );
        }
        match self.rng.below(4) {
            0 => {
                let c = self.bool_expr(cx, 1);
                format!("{pad}if ({c}) {{ {open} {inner} {close} }}\n")
            }
            1 => {
                // Branch, then open/close on every path (root cause B's shape).
                let c = self.bool_expr(cx, 1);
                let e = self.int_from_hold(cx, 1).unwrap_or_else(|| "0".into());
                let t = self.fresh("t");
                format!("{pad}if ({c}) {{ int {t} = {e}; }}\n{pad}{open} {inner} {close}\n")
            }
            2 => format!("{pad}{open} {inner} {close}\n"),
            _ => {
                let e = self.int_from_hold(cx, 1).unwrap_or_else(|| "0".into());
                let t = self.fresh("t");
                format!("{pad}int {t} = {e};\n{pad}{open} {inner} {close}\n")
            }
        }
    }

    /// A call guarded by its precondition's condition, then a use on the other path.
    fn guarded_call(&mut self, cx: &mut Cx, pad: &str) -> String {
        let a = self.int_atom(cx);
        let t = self.fresh("t");
        match self.rng.below(3) {
            0 => format!("{pad}if ({a} > 0) {{ bool {t} = N.pos({a}); }}\n"),
            1 => format!("{pad}int {t} = {a} >= 0 ? N.half({a}) : {a};\n"),
            _ => {
                let c = self.bool_expr(cx, 1);
                let e = self.int_from_hold(cx, 1).unwrap_or_else(|| "0".into());
                format!("{pad}int {t} = 0;\n{pad}if ({c}) {{ {t} = {e}; }}\n")
            }
        }
    }

    /// Root cause B3: a guarded call, then a close on every path, then an assertion.
    fn b3(&mut self, cx: &Cx, pad: &str) -> String {
        let a = self.int_atom(cx);
        let t = self.fresh("t");
        let k = self.rng.below(3);
        let what = self.bool_expr(cx, 1);
        format!(
            "{pad}if ({a} > 0) {{ bool {t} = N.pos({a}); }}\n{pad}close N.ok({k});\n{pad}assert {};\n",
            if self.rng.chance(50) { format!("{a} > 0") } else { what }
        )
    }

    fn array(&mut self, cx: &mut Cx, pad: &str) -> String {
        let a = self.fresh("a");
        let len =
            if self.rng.chance(70) { self.rng.below(4).to_string() } else { self.int_atom(cx) };
        let i = self.int_expr(cx, 1);
        let j = self.int_expr(cx, 1);
        let v = self.int_expr(cx, 1);
        let mut s = format!("{pad}int[] {a} = new int[{len}];\n");
        match self.rng.below(3) {
            0 => s.push_str(&format!(
                "{pad}if (0 <= {i} && {i} < {a}.length) {{ {a}[{i}] = {v}; assert {a}[{i}] == {v}; }}\n"
            )),
            1 => s.push_str(&format!("{pad}{a}[{i}] = {v};\n")),
            _ => s.push_str(&format!(
                "{pad}if ({a}.length > 0) {{ {a}[0] = {v}; }}\n{pad}assert {a}.length == 0 || {a}[{j}] == {v};\n"
            )),
        }
        s
    }

    fn new_object(&mut self, cx: &mut Cx, pad: &str) -> String {
        let z = self.fresh("z");
        let arg = if self.has_ctor { self.int_atom(cx) } else { String::new() };
        let mut s = format!("{pad}N {z} = new N({arg});\n");
        match self.rng.below(4) {
            0 => {
                s.push_str(&format!("{pad}{z}.n = null;\n{pad}close {z}.p();\n"));
                cx.holds.push(Hold { recv: z.clone(), kind: Kind::P, guard: None });
            }
            1 => {
                s.push_str(&format!(
                    "{pad}{z}.nx = null;\n{pad}{z}.v = {};\n{pad}close {z}.list();\n",
                    self.rng.below(3)
                ));
                cx.holds.push(Hold { recv: z.clone(), kind: Kind::L, guard: None });
            }
            2 => {
                let refs: Vec<String> = cx
                    .holds
                    .iter()
                    .filter(|h| h.kind != Kind::B && h.guard.is_none())
                    .map(|h| h.recv.clone())
                    .collect();
                if let Some(r) = refs.first() {
                    s.push_str(&format!("{pad}assert {z} != {r};\n"));
                }
                cx.holds.push(Hold { recv: z.clone(), kind: Kind::Fields, guard: None });
            }
            _ => {
                let v = self.int_expr(cx, 1);
                s.push_str(&format!("{pad}{z}.f = {v};\n{pad}assert {z}.f == {v};\n"));
                cx.holds.push(Hold { recv: z.clone(), kind: Kind::Fields, guard: None });
            }
        }
        s
    }

    fn loop_(&mut self, cx: &mut Cx, pad: &str, ind: usize, ret_int: bool) -> String {
        let c = self.fresh("c");
        let lim =
            if self.rng.chance(50) { self.rng.below(4).to_string() } else { self.int_atom(cx) };
        let carry: Vec<Hold> =
            cx.holds.iter().filter(|h| h.kind != Kind::Fields).cloned().collect();
        let mut invs = vec![match self.rng.below(4) {
            0 => format!("0 <= {c}"),
            1 => format!("{c} <= {lim}"),
            2 => format!("0 <= {c} && ({lim} >= 0 ==> {c} <= {lim})"),
            _ => format!("{c} >= 0 && {}", self.bool_expr(cx, 2)),
        }];
        let keep = self.rng.chance(70);
        if keep {
            invs.extend(Self::perms(&carry));
        }
        let inv: String = invs.iter().map(|i| format!("{pad}  invariant {i};\n")).collect();
        let mut inner = Cx { holds: if keep { carry } else { vec![] }, ..cx.clone() };
        inner.ints.push(c.clone());
        let body = if self.rng.chance(50) {
            self.block(&mut inner, 1, 2, ind + 2, ret_int)
        } else {
            String::new()
        };
        cx.ints.push(c.clone());
        format!(
            "{pad}int {c} = 0;\n{pad}while ({c} < {lim})\n{inv}{pad}{{\n{body}{pad}  {c} = {c} + 1;\n{pad}}}\n"
        )
    }

    /// A call of an earlier method on a receiver that holds what it needs.
    fn call_method(&mut self, cx: &mut Cx, pad: &str) -> String {
        let sigs = if cx.in_class_n { self.n_sigs.clone() } else { self.b_sigs.clone() };
        if sigs.is_empty() || cx.is_static {
            return self.join(cx, pad);
        }
        let s = &sigs[self.rng.below(sigs.len())];
        let have: Vec<Kind> = cx
            .holds
            .iter()
            .filter(|h| h.recv == "this" && h.guard.is_none())
            .map(|h| h.kind)
            .collect();
        if !s.holds.iter().all(|k| have.contains(k)) && self.rng.chance(80) {
            return self.join(cx, pad);
        }
        let args: Vec<String> = (0..s.ints).map(|_| self.int_expr(cx, 1)).collect();
        let c = format!("{}({})", s.name, args.join(", "));
        if s.ret_int {
            let t = self.fresh("r");
            cx.ints.push(t.clone());
            format!("{pad}int {t} = {c};\n")
        } else {
            format!("{pad}{c};\n")
        }
    }

    /// A branch, then `join` with everything held and a fact.
    fn join(&mut self, cx: &mut Cx, pad: &str) -> String {
        let Some(x) = cx.ints.iter().find(|x| x.starts_with('k')).cloned() else {
            return format!("{pad}assert {};\n", self.bool_expr(cx, 0));
        };
        let c = self.bool_expr(cx, 1);
        let mut parts = Self::perms(&cx.holds);
        cx.holds.retain(|h| h.kind != Kind::Fields);
        parts.push(self.bool_expr(cx, 1));
        format!(
            "{pad}if ({c}) {{ {x} = {x} + 1; }} else {{ {x} = {x} - 1; }}\n{pad}join {};\n",
            parts.join(" && ")
        )
    }

    /// Root cause B1's shape on a held buffer.
    fn buf_shape(&mut self, cx: &Cx, pad: &str) -> String {
        let held: Vec<Hold> =
            cx.holds.iter().filter(|h| h.kind == Kind::B && h.guard.is_none()).cloned().collect();
        let Some(h) = held.first() else {
            return format!("{pad}assert {};\n", self.bool_expr(cx, 0));
        };
        let r = &h.recv;
        let i = self.int_atom(cx);
        let size = call(r, "size", "");
        let get = call(r, "get", &i);
        let t = self.fresh("t");
        let data = if r == "this" { "data".to_string() } else { format!("{r}.data") };
        let tail = if self.rng.chance(50) {
            format!("{pad}int {} = {data}[{i}];\n", self.fresh("u"))
        } else {
            format!("{pad}assert {};\n", self.bool_expr(cx, 1))
        };
        format!("{pad}int {t} = 0;\n{pad}if (0 <= {i} && {i} < {size}) {{ {t} = {get}; }}\n{tail}")
    }

    // ------------------------------------------------------------ members

    fn method(&mut self, in_n: bool, index: usize) -> String {
        let is_static = in_n && self.rng.chance(30);
        let ret_int = self.rng.chance(40);
        let name = format!("m{index}");
        let mut cx = Cx { old: false, in_class_n: in_n, is_static, ..Cx::default() };
        let mut params = vec![];
        let n_ints = self.rng.below(3);
        for k in 0..n_ints {
            let x = ["i", "j"][k].to_string();
            params.push(format!("int {x}"));
            cx.ints.push(x);
        }
        if self.rng.chance(30) {
            params.push("bool b".into());
            cx.bools.push("b".into());
        }
        let mut this_holds = vec![];
        if !is_static {
            if in_n {
                for (k, pct) in [(Kind::P, 55), (Kind::L, 45)] {
                    if self.rng.chance(pct) {
                        this_holds.push(k);
                        cx.holds.push(Hold { recv: "this".into(), kind: k, guard: None });
                    }
                }
            } else if self.rng.chance(85) {
                this_holds.push(Kind::B);
                cx.holds.push(Hold { recv: "this".into(), kind: Kind::B, guard: None });
            }
        }
        let mut nullness = vec![];
        if in_n && (is_static || self.rng.chance(35)) {
            params.push("N x".into());
            let kind = if self.rng.chance(50) { Kind::P } else { Kind::L };
            if self.rng.chance(50) {
                nullness.push("x != null".to_string());
                cx.holds.push(Hold { recv: "x".into(), kind, guard: None });
            } else {
                cx.holds.push(Hold { recv: "x".into(), kind, guard: Some("x != null".into()) });
            }
        }
        // Precondition: permissions, then a condition that may call pure methods.
        let mut pre: Vec<String> = nullness;
        pre.extend(Self::perms(&cx.holds));
        if self.rng.chance(65) {
            pre.push(self.bool_expr(&cx, 0));
        }
        // Postcondition: the permissions back, and maybe a fact.
        let entry = cx.clone();
        let mut post_cx = entry.clone();
        post_cx.old = true;
        if ret_int {
            post_cx.ints.push("result".into());
        }
        let mut post = Self::perms(&entry.holds);
        if self.rng.chance(50) {
            post.push(self.bool_expr(&post_cx, 0));
        }
        cx.old = true;
        let n = 1 + self.rng.below(5);
        let body = self.block(&mut cx, n, 0, 4, ret_int);
        let ret = if ret_int {
            format!("    return {};\n", self.int_expr(&cx, 0))
        } else {
            String::new()
        };
        let sig = Sig { name: name.clone(), holds: this_holds, ints: n_ints, ret_int };
        let simple = !params.iter().any(|p| p.starts_with("bool") || p.starts_with("N "));
        if !is_static && simple {
            if in_n { self.n_sigs.push(sig) } else { self.b_sigs.push(sig) }
        }
        let req: String = pre.iter().map(|p| format!("    requires {p};\n")).collect();
        let ens: String = post.iter().map(|p| format!("    ensures {p};\n")).collect();
        format!(
            "  {}{} {name}({})\n{req}{ens}  {{\n{body}{ret}  }}\n",
            if is_static { "static " } else { "" },
            if ret_int { "int" } else { "void" },
            params.join(", ")
        )
    }

    fn class_n(&mut self, methods: usize) -> String {
        let p = match self.rng.below(3) {
            0 => "acc(n) && (n != null ==> acc(n.f))",
            1 => "acc(n) && (n != null ==> acc(n.f) && n.f > 0)",
            _ => "acc(n) && acc(f) && (n != null ==> acc(n.f) && n.f >= f)",
        };
        let list = match self.rng.below(2) {
            0 => "acc(v) && acc(nx) && (nx != null ==> nx.list())",
            _ => "acc(v) && acc(nx) && v >= 0 && (nx != null ==> nx.list())",
        };
        let g = self.pick(&["0", "(n == null ? 0 : n.f)", "(n != null ? 1 : 0)"]);
        let g2 = self.pick(&["g()", "(opening p() in n == null) ? 0 : 1"]);
        let h = self.pick(&["g2()", "g() + 1", "g2() + g()"]);
        let len_post = self.pick(&["result >= 1", "result >= 1", "result > 1"]);
        let sum_post = if list.contains("v >= 0") { "ensures result >= 0;" } else { "" };
        self.has_ctor = self.rng.chance(25);
        let ctor = if self.has_ctor {
            "  N(int a) ensures acc(f) && acc(v) && acc(n) && acc(nx) && f == a && n == null && nx == null && v == 0; { f = a; }\n"
        } else {
            ""
        };
        let mut s = format!(
            "class N {{
  int f;
  int v;
  N n;
  N nx;
  predicate p() {{ return {p}; }}
  predicate list() {{ return {list}; }}
  static predicate ok(int k) {{ return k >= 0; }}
  pure int g() requires p(); {{ return opening p() in {g}; }}
  pure int g2() requires p(); {{ return {g2}; }}
  pure int h() requires p(); {{ return {h}; }}
  pure int len() requires list(); ensures {len_post}; {{ return nx == null ? 1 : 1 + nx.len(); }}
  pure int sum() requires list(); {sum_post} {{ return nx == null ? v : v + nx.sum(); }}
  pure bool has(int k) requires list(); {{ return v == k || (nx != null && nx.has(k)); }}
  static pure bool pos(int x) requires x > 0; {{ return true; }}
  static pure int half(int x) requires x >= 0; ensures result * 2 <= x; {{ return x / 2; }}
{ctor}"
        );
        for i in 0..methods {
            s.push_str(&self.method(true, i));
        }
        s.push_str("}\n");
        s
    }

    fn class_buf(&mut self, methods: usize) -> String {
        let mut s = "class Buf {
  int[] data;
  int n;
  predicate valid() { return acc(data) && acc(n) && data != null && acc(data[*]) && 0 <= n && n <= data.length; }
  pure int size() requires valid(); { return n; }
  pure int get(int i) requires valid() && 0 <= i && i < size(); { return data[i]; }
"
        .to_string();
        for i in 0..methods {
            s.push_str(&self.method(false, 100 + i));
        }
        s.push_str("}\n");
        s
    }

    pub fn program(&mut self) -> String {
        let n = 2 + self.rng.below(3);
        let mut s = self.class_n(n);
        if self.rng.chance(40) {
            let b = 1 + self.rng.below(2);
            s.push_str(&self.class_buf(b));
        }
        s
    }
}

/// The program of one seed: `shapes`' classes, then (with probability `families`
/// percent) one or two of the families of `families.rs`.
pub fn generate(seed: u64, families: u64) -> String {
    let mut s = Gen::new(seed).program();
    s.push_str(&super::families::Fam::new(seed).program(families));
    s
}

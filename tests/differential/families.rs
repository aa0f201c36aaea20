//! Families of programs in the shapes of the audit of issue 20 (`../shared/soundness`:
//! F1-F3, C1-C3), with random variation (constants, which conjunct is wrong, which
//! path), appended to the programs of `shapes.rs`:
//!
//! - [`Fam::dispatch`]: an interface with a conditional precondition on a pure method
//!   (`q(bool b) requires b ==> valid()`), a predicate family, two classes that
//!   implement it (with their own contracts or inheriting the interface's), and
//!   clients calling through the interface on paths where the condition is true or
//!   false, on objects of a known class or of an unknown one (F1);
//! - [`Fam::ensures_calls`]: pure methods whose `ensures` call other pure methods, also
//!   mutually (`size() ensures result == count()`), some wrong by a constant, over a
//!   cell and over a recursive list (F2);
//! - [`Fam::nested_preds`]: predicates that hold only other predicates (a chain, one
//!   that holds itself, two that hold each other), pure methods calling each other
//!   inside `opening`, reached under conditional preconditions on the paths where the
//!   condition is false (F3);
//! - [`Fam::ctor_old`]: constructors with `old(this.f)` in their postconditions, called
//!   by clients;
//! - [`Fam::chains`]: long `else if` chains (10-60 arms) in methods and pure bodies;
//! - [`Fam::sorted`]: a predicate whose body holds an `opening` of its successor's
//!   instance (a sorted list), lists built and rebuilt by closes (C1);
//! - [`Fam::trees`]: heap-free pure helpers (no precondition) inside recursive pure
//!   methods over trees built by several calls (C2).
//!
//! - [`Fam::fractions`]: fractional permissions (LANGUAGE.md section 11): readers
//!   sharing a field at amounts, calls that take part of what the caller holds, writes
//!   with a part, predicates held in part, `perm(..)` in assertions, amounts as `perm`
//!   parameters;
//! - [`Fam::segments`]: quantified permissions over array segments (section 12): loops
//!   filling a segment under a quantified invariant, callers giving segments away,
//!   readers at half, a missing element;
//! - [`Fam::sequences`]: sequences and value quantifiers (sections 13-15): literals,
//!   slices, concatenation, `contains`, `updated`, recursive pure methods with
//!   `decreases`, `forall`/`exists` over ranges, indices right or off by a constant.
//!
//! Facts asserted are right or wrong by a constant ([`Fam::off`]): the concrete
//! interpreter decides which.

use super::shapes::Rng;

pub struct Fam {
    rng: Rng,
    /// Numbers the classes of each family, so several fit in one program.
    k: usize,
}

/// `n` as a `.jv` expression (no negative literals in the language).
fn num(n: i64) -> String {
    if n < 0 { format!("(0 - {})", -n) } else { n.to_string() }
}

/// `e + d` for a constant `d`, written without `+ 0`.
fn plus(e: &str, d: i64) -> String {
    match d {
        0 => e.to_string(),
        d if d < 0 => format!("{e} - {}", -d),
        d => format!("{e} + {d}"),
    }
}

impl Fam {
    pub fn new(seed: u64) -> Fam {
        Fam { rng: Rng(seed ^ 0x00fa_3171_e520), k: 0 }
    }

    fn chance(&mut self, p: u64) -> bool {
        self.rng.chance(p)
    }

    fn below(&mut self, n: usize) -> usize {
        self.rng.below(n)
    }

    /// A small constant in `lo..=hi`.
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.rng.below((hi - lo + 1) as usize) as i64
    }

    /// How wrong a fact is: 0 (right) most often, else a small constant.
    fn off(&mut self) -> i64 {
        if self.chance(60) { 0 } else { *self.rng.pick(&[-2, -1, 1, 1, 2, 7]) }
    }

    /// One of `xs`.
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.rng.below(xs.len())]
    }

    /// Families for one program: with probability `percent`, one or two of them.
    pub fn program(&mut self, percent: u64) -> String {
        let n = match self.below(10) {
            _ if !self.chance(percent) => 0,
            0..=6 => 1,
            _ => 2,
        };
        let mut s = String::new();
        for _ in 0..n {
            self.k += 1;
            let f = match self.rng.weighted(&[4, 3, 3, 2, 2, 2, 2, 4, 4, 4]) {
                0 => self.dispatch(),
                1 => self.ensures_calls(),
                2 => self.nested_preds(),
                3 => self.ctor_old(),
                4 => self.chains(),
                5 => self.sorted(),
                6 => self.trees(),
                7 => self.fractions(),
                8 => self.segments(),
                _ => self.sequences(),
            };
            s.push_str(&f);
        }
        s
    }

    /// One program of the named family alone.
    pub fn one(&mut self, name: &str) -> Option<String> {
        self.k += 1;
        Some(match name {
            "dispatch" => self.dispatch(),
            "ensures" => self.ensures_calls(),
            "nested" => self.nested_preds(),
            "ctor" => self.ctor_old(),
            "chains" => self.chains(),
            "sorted" => self.sorted(),
            "trees" => self.trees(),
            "fractions" => self.fractions(),
            "segments" => self.segments(),
            "sequences" => self.sequences(),
            _ => return None,
        })
    }

    // ------------------------------------------------------------ F1: dispatch

    /// An interface with a conditional precondition and a predicate family.
    pub fn dispatch(&mut self) -> String {
        let k = self.k;
        let (i, a, b, cl) = (format!("I{k}"), format!("A{k}"), format!("B{k}"), format!("Cl{k}"));
        let lo = self.int(-1, 1);
        // What `q(false)` returns in each class, and what `q(true)` adds to the field.
        let (za, zb) = (self.int(-1, 2), self.int(-1, 2));
        let (ka, kb) = (self.int(0, 2), self.int(-1, 1));
        let with_r = true;
        let with_set = self.chance(50);
        // Does each class's constructor say what `r()` is (so clients know the field)?
        let mut ctor_r = [false, false];
        // The interface's facts about q: maybe `!b ==> result == Z` (true of A and B only
        // when za == zb == Z), maybe `b ==> result >= lo` (true when ka, kb >= 0).
        let mut q_ens = vec![];
        let mut i_z = None;
        if self.chance(35) {
            let z = if self.chance(70) { za } else { zb };
            i_z = Some(z);
            q_ens.push(format!("!b ==> result == {}", num(z)));
        }
        let i_lo = self.chance(30);
        if i_lo {
            q_ens.push(format!("b ==> result >= {}", num(lo)));
        }
        let q_ens: String = q_ens.iter().map(|e| format!(" ensures {e};")).collect();
        let mut s = format!("interface {i} {{\n  predicate valid();\n");
        s.push_str(&format!("  pure int q(bool b) requires b ==> valid();{q_ens}\n"));
        if with_r {
            s.push_str(&format!(
                "  pure int r() requires valid(); ensures result >= {};\n",
                num(lo)
            ));
        }
        let mut set_exact = false;
        if with_set {
            set_exact = self.chance(80);
            let post = if set_exact { "r() == v" } else { "r() >= v" };
            s.push_str(&format!(
                "  void set(int v) requires valid() && v >= {}; ensures valid() && {post};\n",
                num(lo)
            ));
        }
        s.push_str("}\n");
        // A: one field; B: two fields, the second one more than the first.
        for (ci, c, fields, inv, val, z, kk) in [
            (0, &a, vec!["x"], format!("acc(x) && x >= {}", num(lo)), "x", za, ka),
            (
                1,
                &b,
                vec!["y", "w"],
                format!("acc(y) && acc(w) && y >= {} && w == y + 1", num(lo)),
                "y",
                zb,
                kb,
            ),
        ] {
            let fields: String = fields.iter().map(|f| format!("  int {f};\n")).collect();
            s.push_str(&format!("class {c} implements {i} {{\n{fields}"));
            s.push_str(&format!("  predicate valid() {{ return {inv}; }}\n"));
            let body = format!("b ? {} : {}", plus(val, kk), num(z));
            let q_own = match self.below(4) {
                0 | 1 => String::new(),
                2 => " requires b ==> valid();".into(),
                _ => format!(" requires b ==> valid(); ensures !b ==> result == {};", num(z)),
            };
            s.push_str(&format!("  pure int q(bool b){q_own} {{ return {body}; }}\n"));
            if with_r {
                let r_own = if self.chance(70) {
                    String::new()
                } else {
                    format!(" requires valid(); ensures result >= {};", num(lo + self.off().min(0)))
                };
                s.push_str(&format!("  pure int r(){r_own} {{ return {val}; }}\n"));
            }
            if with_set {
                let upd = if val == "y" { "y = v; w = v + 1;" } else { "x = v;" };
                let upd =
                    if self.chance(15) { format!("{upd} {val} = {val} + 1;") } else { upd.into() };
                s.push_str(&format!("  void set(int v) {{ {upd} }}\n"));
            }
            let init = if val == "y" { "y = v; w = v + 1;" } else { "x = v;" };
            let ens = if with_r && self.chance(75) {
                ctor_r[ci] = true;
                format!("valid() && r() == {}", plus("v", self.off()))
            } else {
                "valid()".into()
            };
            s.push_str(&format!(
                "  {c}(int v) requires v >= {}; ensures {ens}; {{ {init} }}\n}}\n",
                num(lo)
            ));
        }
        // Clients.
        s.push_str(&format!("class {cl} {{\n"));
        let n = 2 + self.below(3);
        for m in 0..n {
            let cond = self.pick(&["b", "!b", "true", "b", "!b"]);
            let req = if cond == "true" {
                format!("requires v >= {};", num(lo))
            } else {
                format!("requires {cond} && v >= {};", num(lo))
            };
            // Where the object comes from: a known class, a branch, or a parameter.
            let mut body = String::new();
            let (known, z, kk) = match self.below(3) {
                0 => {
                    body.push_str(&format!("    {i} o = new {a}(v);\n"));
                    (ctor_r[0], za, ka)
                }
                1 => {
                    body.push_str(&format!("    {i} o = new {b}(v);\n"));
                    (ctor_r[1], zb, kb)
                }
                _ => {
                    body.push_str(&format!(
                        "    {i} o = null;\n    if (v > {}) {{ o = new {a}(v); }} else {{ o = new {b}(v); }}\n",
                        num(lo + self.int(0, 2))
                    ));
                    (false, za, kb)
                }
            };
            // Calls through the interface on paths where the condition holds or not.
            match self.below(4) {
                0 => body.push_str("    int w = o.q(b);\n"),
                1 => body.push_str(
                    "    int w = 0;\n    if (b) { w = o.q(true); } else { w = o.q(false); }\n",
                ),
                2 => body.push_str("    if (b) { int u = o.q(b); }\n    int w = o.q(false);\n"),
                _ => body.push_str(
                    "    int w = o.q(b);\n    if (!b) { int u = o.q(b); w = w + u - u; }\n",
                ),
            }
            if set_exact && self.chance(40) {
                body.push_str(&format!(
                    "    if (v + 1 >= {}) {{ o.set(v + 1); assert o.r() == {}; }}\n",
                    num(lo),
                    plus("v + 1", self.off())
                ));
            }
            let facts = [
                format!("!b ==> w == {}", num(z + self.off())),
                format!("b ==> w == {}", plus("v", kk + self.off())),
                format!("w == (b ? {} : {})", plus("v", kk + self.off()), num(z + self.off())),
                format!("w >= {}", num(lo + self.off())),
                "false".into(),
                format!("w == {}", num(z + self.off())),
            ];
            let fact = if known {
                facts[self.rng.weighted(&[3, 3, 3, 2, 1, 2])].clone()
            } else {
                facts[self.rng.weighted(&[2, 0, 0, 2, 1, 2])].clone()
            };
            body.push_str(&format!("    assert {fact};\n"));
            if with_r && self.chance(40) {
                body.push_str(&format!("    assert o.r() >= {};\n", num(lo + self.off())));
            }
            s.push_str(&format!("  static void m{m}(bool b, int v) {req}\n  {{\n{body}  }}\n"));
        }
        // A client of an object of unknown class, holding the family instance under
        // the condition.
        let g = self.pick(&["b", "!b"]);
        // Only the interface's `ensures` is known of an object of unknown class.
        let fact = match self.below(3) {
            0 if i_z.is_some() => format!("!b ==> w == {}", num(i_z.unwrap_or(0) + self.off())),
            1 if i_lo => format!("b ==> w >= {}", num(lo + self.off())),
            2 => "false".into(),
            _ => "true".into(),
        };
        s.push_str(&format!(
            "  static int p(bool b, {i} o) requires o != null && ({g} ==> o.valid()) && b; ensures {g} ==> o.valid(); {{\n    int w = o.q(b);\n    assert {fact};\n    return w;\n  }}\n"
        ));
        s.push_str("}\n");
        s
    }

    // ------------------------------------------------------------ F2: ensures calls

    pub fn ensures_calls(&mut self) -> String {
        if self.chance(35) {
            return self.ensures_list();
        }
        let k = self.k;
        let p = format!("P{k}");
        let lo = self.int(-1, 1);
        let (a1, a2) = (self.int(0, 2), self.int(0, 2));
        // size() == count() + (a2 - a1) is right; wrong by a constant sometimes.
        let d2 = a2 - a1 + self.off();
        let count_ens = match self.below(3) {
            0 => String::new(),
            1 => format!(" ensures result == {};", plus("size()", a1 - a2 + self.off())),
            _ => format!(" ensures result >= {};", num(lo + a1 + self.off().min(0))),
        };
        let total = self.chance(50);
        let mut s = format!(
            "class {p} {{\n  int n;\n  predicate valid() {{ return acc(n) && n >= {}; }}\n",
            num(lo)
        );
        // The order of declaration varies (it matters to the termination check).
        let count = format!(
            "  pure int count() requires valid();{count_ens} {{ return {}; }}\n",
            plus("n", a1)
        );
        let size = format!(
            "  pure int size() requires valid(); ensures result == {}; {{ return {}; }}\n",
            plus("count()", d2),
            plus("n", a2)
        );
        if self.chance(50) {
            s.push_str(&count);
            s.push_str(&size);
        } else {
            s.push_str(&size);
            s.push_str(&count);
        }
        if total {
            s.push_str(&format!(
                "  pure int total() requires valid(); ensures result == {}; {{ return {}; }}\n",
                plus("size() + count()", self.off()),
                plus("n + n", a1 + a2)
            ));
        }
        let ctor_ens = match self.below(3) {
            0 => "valid()".to_string(),
            1 => format!("valid() && count() == {}", plus("v", a1 + self.off())),
            _ => format!("valid() && size() == {}", plus("v", a2 + self.off())),
        };
        s.push_str(&format!(
            "  {p}(int v) requires v >= {}; ensures {ctor_ens}; {{ n = v; }}\n",
            num(lo)
        ));
        let inc_post = match self.below(3) {
            0 => format!("size() == {}", plus("old(size())", 1 + self.off())),
            1 => format!("count() == {}", plus("old(count())", 1 + self.off())),
            _ => format!("size() == {}", plus("count()", a2 - a1 + self.off())),
        };
        s.push_str(&format!(
            "  void inc() requires valid(); ensures valid() && {inc_post}; {{ n = n + 1; }}\n"
        ));
        // Clients.
        let fact = |me: &mut Fam, x: &str| -> String {
            match me.below(5) {
                0 => format!("{x}.count() == {}", plus(&format!("{x}.size()"), a1 - a2 + me.off())),
                1 => format!("{x}.size() >= {}", num(lo + a2 + me.off())),
                2 if total => format!(
                    "{x}.total() == {}",
                    plus(&format!("{x}.count() + {x}.size()"), me.off())
                ),
                3 => format!("{x}.count() == {}", num(me.int(-7, 3))),
                _ => "false".into(),
            }
        };
        let f1 = fact(self, "c");
        s.push_str(&format!(
            "  static void c1({p} c) requires c != null && c.valid(); ensures c.valid(); {{\n    int k = c.count();\n    assert {f1};\n  }}\n"
        ));
        let f2 = match self.below(2) {
            0 => format!("c.size() == {}", plus("v", a2 + self.off())),
            _ => fact(self, "c"),
        };
        let inc = if self.chance(50) { "    c.inc();\n" } else { "" };
        let f3 = if inc.is_empty() {
            "true".to_string()
        } else {
            format!("c.count() == {}", plus("v", a1 + 1 + self.off()))
        };
        s.push_str(&format!(
            "  static void c2(int v) requires v >= {}; {{\n    {p} c = new {p}(v);\n    assert {f2};\n{inc}    assert {f3};\n  }}\n",
            num(lo)
        ));
        s.push_str("}\n");
        s
    }

    /// Two recursive pure methods over a list, each `ensures` naming the other.
    fn ensures_list(&mut self) -> String {
        let k = self.k;
        let l = format!("L{k}");
        let c = self.int(0, 1);
        let d = self.off();
        let cnt_ens = match self.below(3) {
            0 => String::new(),
            1 => format!(" ensures result == {};", plus("len()", c + self.off())),
            _ => " ensures result >= 1;".into(),
        };
        let len = format!(
            "  pure int len() requires list(); ensures result == {}; {{ return nx == null ? 1 : 1 + nx.len(); }}\n",
            plus("cnt()", d - c)
        );
        let cnt = format!(
            "  pure int cnt() requires list();{cnt_ens} {{ return nx == null ? {} : 1 + nx.cnt(); }}\n",
            1 + c
        );
        let (first, second) = if self.chance(50) { (len, cnt) } else { (cnt, len) };
        let n = 1 + self.below(3);
        let mut build = String::new();
        let mut prev = "null".to_string();
        for j in 0..n {
            build.push_str(&format!(
                "    {l} x{j} = new {l}();\n    x{j}.nx = {prev};\n    close x{j}.list();\n"
            ));
            prev = format!("x{j}");
        }
        let fact = match self.below(4) {
            0 => format!("{prev}.len() == {}", n as i64 + self.off()),
            1 => format!("{prev}.cnt() == {}", n as i64 + c + self.off()),
            2 => format!("{prev}.len() == {}", plus(&format!("{prev}.cnt()"), self.off() - c)),
            _ => "false".into(),
        };
        format!(
            "class {l} {{\n  int v;\n  {l} nx;\n  predicate list() {{ return acc(v) && acc(nx) && (nx != null ==> nx.list()); }}\n{first}{second}  static void c() {{\n{build}    assert {fact};\n  }}\n  static void d({l} x) requires x != null && x.list(); ensures x.list(); {{\n    int a = x.len();\n    assert a == {};\n  }}\n}}\n",
            plus("x.cnt()", self.off() - c)
        )
    }

    // ------------------------------------------------------------ F3: nested predicates

    pub fn nested_preds(&mut self) -> String {
        let k = self.k;
        let q = format!("Q{k}");
        let lo = self.int(-1, 1);
        let a = self.int(0, 2);
        let b = self.int(-1, 1);
        let kk = self.int(1, 6);
        let mut s = format!("class {q} {{\n  int x;\n");
        s.push_str(&format!("  predicate inner() {{ return acc(x) && x >= {}; }}\n", num(lo)));
        s.push_str("  predicate outer() { return inner(); }\n");
        let two = self.chance(50);
        if two {
            s.push_str("  predicate outer2() { return outer(); }\n");
        }
        s.push_str(&format!("  pure int gi() requires inner(); {{ return {}; }}\n", plus("x", a)));
        let go_ens = if self.chance(40) {
            format!(" ensures result >= {};", num(lo + a + self.off().min(0)))
        } else {
            String::new()
        };
        s.push_str(&format!(
            "  pure int go() requires outer();{go_ens} {{ return opening outer() in gi(); }}\n"
        ));
        if two {
            s.push_str(&format!(
                "  pure int go2() requires outer2(); {{ return opening outer2() in {}; }}\n",
                plus("go()", b)
            ));
        }
        // A predicate that holds itself, two that hold each other, and pure methods that
        // call each other inside `opening` of them (they do not terminate).
        let self_loop = self.chance(60);
        let mutual = !self_loop || self.chance(40);
        let (f_off, g_off) = (self.int(0, 1), self.int(0, 1));
        let f_off = if f_off == 0 { 1 } else { f_off };
        if self_loop {
            s.push_str("  static predicate loop(int n) { return loop(n); }\n");
            s.push_str(&format!(
                "  static pure int f(int n) requires loop(n); {{ return opening loop(n) in f(n) + {f_off}; }}\n"
            ));
            s.push_str(&format!(
                "  static pure int h(bool b) requires b ==> loop({kk}); {{ return b ? f({kk}) : {}; }}\n",
                num(b)
            ));
        }
        if mutual {
            s.push_str("  static predicate pa(int n) { return pb(n); }\n");
            s.push_str("  static predicate pb(int n) { return pa(n); }\n");
            s.push_str(&format!(
                "  static pure int fa(int n) requires pa(n); {{ return opening pa(n) in fb(n) + {f_off}; }}\n"
            ));
            s.push_str(&format!(
                "  static pure int fb(int n) requires pb(n); {{ return opening pb(n) in fa(n) + {g_off}; }}\n"
            ));
            s.push_str(&format!(
                "  static pure int h2(bool b) requires b ==> pa({kk}); {{ return b ? fa({kk}) : {}; }}\n",
                num(a)
            ));
        }
        // Clients on the path where the condition is false.
        let mut m = 0;
        if self_loop {
            let fact = if self.chance(40) {
                "false".into()
            } else {
                format!("v == {}", num(b + self.off()))
            };
            let req = self.pick(&["requires !b;", ""]);
            let body = if req.is_empty() {
                format!("    if (!b) {{\n      int v = h(b);\n      assert {fact};\n    }}\n")
            } else {
                format!("    int v = h(b);\n    assert {fact};\n")
            };
            s.push_str(&format!("  static void m{m}(bool b) {req}\n  {{\n{body}  }}\n"));
            m += 1;
        }
        if mutual {
            let fact = if self.chance(40) {
                "false".into()
            } else {
                format!("v == {}", num(a + self.off()))
            };
            s.push_str(&format!(
                "  static void m{m}(bool b) requires !b;\n  {{\n    int v = h2(b);\n    assert {fact};\n  }}\n"
            ));
            m += 1;
        }
        // Clients of the chain: set through open/close or by inference, then read.
        let ghost = self.chance(50);
        let upd = if ghost {
            "open outer(); open inner(); x = v; close inner(); close outer();"
        } else {
            "x = v;"
        };
        let set_post = match self.below(3) {
            0 => format!("go() == {}", plus("v", a + self.off())),
            1 => format!("go() >= {}", plus("old(go())", self.off())),
            _ => "true".into(),
        };
        s.push_str(&format!(
            "  void set(int v) requires outer() && v >= {}; ensures outer() && {set_post}; {{ {upd} }}\n",
            num(lo)
        ));
        let mut body = format!(
            "    {q} o = new {q}();\n    o.x = v;\n    close o.inner();\n    close o.outer();\n"
        );
        let mut fact = format!("o.go() == {}", plus("v", a + self.off()));
        if two && self.chance(60) {
            body.push_str("    close o.outer2();\n");
            fact = format!("o.go2() == {}", plus("v", a + b + self.off()));
        }
        if self.chance(40) {
            body.push_str("    if (b) { int t = o.x; }\n");
        }
        s.push_str(&format!(
            "  static void m{m}(int v, bool b) requires v >= {};\n  {{\n{body}    assert {fact};\n  }}\n",
            num(lo)
        ));
        s.push_str("}\n");
        s
    }

    // ------------------------------------------------------------ constructors with old

    pub fn ctor_old(&mut self) -> String {
        let k = self.k;
        let c = format!("K{k}");
        let (c1, c2) = (self.int(-1, 2), self.int(-2, 2));
        let d1 = c1 + self.off();
        let d2 = c2 + self.off();
        let with_valid = self.chance(40);
        let old_f = self.pick(&["old(f)", "old(this.f)"]);
        let old_g = self.pick(&["old(g)", "old(this.g)"]);
        let mut post = vec![
            "acc(f) && acc(g) && acc(nx)".to_string(),
            format!("f == {}", plus(&format!("{old_f} + a"), d1)),
            format!("g == {}", plus(old_g, d2)),
        ];
        let nx_post = self.chance(40);
        if nx_post {
            post.push("nx == old(nx)".into());
        }
        if with_valid {
            post = vec![
                "valid()".to_string(),
                format!("get() == {}", plus(&format!("{old_f} + a"), d1)),
            ];
        }
        let req = if self.chance(30) { "requires a >= 0; " } else { "" };
        let mut s = format!("class {c} {{\n  int f;\n  int g;\n  {c} nx;\n");
        if with_valid {
            s.push_str("  predicate valid() { return acc(f) && acc(g) && acc(nx); }\n");
            s.push_str("  pure int get() requires valid(); { return f; }\n");
        }
        s.push_str(&format!(
            "  {c}(int a) {req}ensures {}; {{ f = {}; g = {}; }}\n",
            post.join(" && "),
            plus("f + a", c1),
            plus("g", c2)
        ));
        let arg = if req.is_empty() { "" } else { " requires a >= 0;" };
        let fact = if with_valid {
            format!("o.get() == {}", plus("a", c1 + self.off()))
        } else {
            match self.below(3) {
                0 => format!("o.f == {}", plus("a", c1 + self.off())),
                1 => format!("o.g == {}", num(c2 + self.off())),
                // The caller knows `nx` only if the constructor says it.
                _ if nx_post => {
                    format!("o.nx == null && o.f - o.g == {}", plus("a", c1 - c2 + self.off()))
                }
                _ => format!("o.f - o.g == {}", plus("a", c1 - c2 + self.off())),
            }
        };
        s.push_str(&format!(
            "  static void m0(int a){arg} {{\n    {c} o = new {c}(a);\n    assert {fact};\n  }}\n"
        ));
        if !with_valid {
            let fact = format!("p.f + o.f == {}", plus("a + a", 2 * c1 + self.off()));
            s.push_str(&format!(
                "  static void m1(int a){arg} {{\n    {c} o = new {c}(a);\n    {c} p = new {c}(a);\n    assert o != p;\n    assert {fact};\n  }}\n"
            ));
        }
        s.push_str("}\n");
        s
    }

    // ------------------------------------------------------------ fractions

    /// An amount as written: `write`, `1/2`, ...
    fn amount(&mut self) -> (&'static str, i64, i64) {
        *self.rng.pick(&[
            ("write", 1, 1),
            ("1/2", 1, 2),
            ("1/2", 1, 2),
            ("1/3", 1, 3),
            ("2/3", 2, 3),
            ("1/4", 1, 4),
        ])
    }

    pub fn fractions(&mut self) -> String {
        let k = self.k;
        let c = format!("Fr{k}");
        let (held, hn, hd) = self.amount();
        let (asked, an, ad) = self.amount();
        let mut s = format!("class {c} {{\n  int x;\n  int y;\n");
        s.push_str("  predicate valid() { return acc(x) && acc(y) && x <= y; }\n");
        s.push_str("  pure int getx() requires acc(x, 1/4); { return x; }\n");
        s.push_str("  pure int vx() requires valid(); { return x; }\n");
        // A reader: keeps its part and changes nothing.
        let d = self.off();
        s.push_str(&format!(
            "  static int read({c} c) requires acc(c.x, {asked}); ensures acc(c.x, {asked}) && result == {}; {{ return c.x + {}; }}\n",
            plus("c.x", d),
            self.off().abs() % 2
        ));
        // A caller holding `held` gives `asked` to the reader.
        let d2 = self.off();
        s.push_str(&format!(
            "  static void share({c} c) requires acc(c.x, {held}); ensures acc(c.x, {held}) && c.x == {}; {{\n    int r = read(c);\n    assert r == {};\n  }}\n",
            plus("old(c.x)", d2),
            plus("c.x", self.off()),
        ));
        // A write with a part (fails unless the part is write).
        let (w, _, _) = self.amount();
        s.push_str(&format!(
            "  static void write({c} c, int v) requires acc(c.x, {w}); ensures acc(c.x, {w}); {{ c.x = v; }}\n"
        ));
        // Two parts of one location add up to write.
        let (p1, n1, d1) = self.amount();
        let rest = if d1 == n1 { "none".to_string() } else { format!("{}/{}", d1 - n1, d1) };
        let rest2 = if self.chance(70) { rest.clone() } else { self.amount().0.to_string() };
        s.push_str(&format!(
            "  static void join2({c} c) requires acc(c.x, {p1}) && acc(c.x, {rest2}); ensures acc(c.x); {{ c.x = 3; }}\n"
        ));
        // `perm` after a part is taken.
        let left = hn * ad - an * hd;
        let den = hd * ad;
        let want = if self.chance(70) {
            if left == 0 { "none".to_string() } else { format!("{left}/{den}") }
        } else {
            self.amount().0.to_string()
        };
        s.push_str(&format!(
            "  static void left({c} c) requires acc(c.x, {held}); {{\n    assert acc(c.x, {asked}) && perm(c.x) == {want};\n  }}\n"
        ));
        // Aliasing: write and a part of another object's field.
        let neq = if self.chance(60) { "a != b" } else { "a == b" };
        s.push_str(&format!(
            "  static void alias({c} a, {c} b) requires acc(a.x) && acc(b.x, {asked}); {{\n    assert {neq};\n  }}\n"
        ));
        // Amounts as parameters.
        let bound = self.pick(&["1/2", "write", "none"]);
        s.push_str(&format!(
            "  static void byamount({c} c, perm p) requires none < p && p <= {bound} && acc(c.x, p); ensures acc(c.x, p) && c.x == old(c.x); {{\n    int t = c.x;\n    int u = getx2(c, p);\n  }}\n"
        ));
        s.push_str(&format!(
            "  static int getx2({c} c, perm p) requires none < p && acc(c.x, p); ensures acc(c.x, p); {{ return c.x; }}\n"
        ));
        // A predicate held in part: reads through it, a write through it fails.
        let wr = if self.chance(50) { "x = x;" } else { "int t = x;" };
        let (pp, _, _) = self.amount();
        s.push_str(&format!(
            "  void part() requires acc(valid(), {pp}); ensures acc(valid(), {pp}) && vx() == {}; {{\n    {wr}\n  }}\n",
            plus("old(vx())", self.off())
        ));
        // Splitting a predicate and putting it back.
        s.push_str(&format!(
            "  void halves() requires valid(); ensures valid() && vx() == {}; {{\n    int a = twice(this);\n    open acc(valid(), 1/2);\n    int t = x;\n    close acc(valid(), 1/2);\n  }}\n",
            plus("old(vx())", self.off())
        ));
        s.push_str(&format!(
            "  static int twice({c} c) requires acc(c.valid(), 1/2); ensures acc(c.valid(), 1/2) && result == c.vx(); {{ return c.vx(); }}\n"
        ));
        // Forging: giving back more than was held.
        let (g1, _, _) = self.amount();
        let (g2, _, _) = self.amount();
        s.push_str(&format!(
            "  static void forge({c} c) requires acc(c.x, {g1}); ensures acc(c.x, {g2}); {{ }}\n"
        ));
        // A client creating objects and sharing them.
        let v = self.int(-2, 3);
        s.push_str(&format!(
            "  static void client() {{\n    {c} o = new {c}();\n    o.x = {v};\n    share(o);\n    int r = read(o);\n    assert o.x == {};\n    write(o, 4);\n    assert o.x == {};\n  }}\n",
            num(v + self.off()),
            num(4 + self.off())
        ));
        s.push_str("}\n");
        s
    }

    // ------------------------------------------------------------ segments

    pub fn segments(&mut self) -> String {
        let k = self.k;
        let c = format!("Sg{k}");
        let v = self.int(-1, 3);
        let mut s = format!("class {c} {{\n");
        let seg = |lo: &str, hi: &str, p: &str| {
            if p == "write" {
                format!("(forall int i :: {lo} <= i && i < {hi} ==> acc(a[i]))")
            } else {
                format!("(forall int i :: {lo} <= i && i < {hi} ==> acc(a[i], {p}))")
            }
        };
        // Fill a segment with a loop whose invariant holds the segment.
        let hi_inv = if self.chance(85) { "j" } else { "j + 1" };
        s.push_str(&format!(
            "  static void fill(int[] a, int lo, int hi) requires a != null && 0 <= lo && lo <= hi && hi <= a.length && {}; ensures {} && (forall int i :: lo <= i && i < hi ==> a[i] == {}); {{\n    int j = lo;\n    while (j < hi) invariant lo <= j && j <= hi && {} && (forall int i :: lo <= i && i < {hi_inv} ==> a[i] == {v}); {{\n      a[j] = {v};\n      j = j + 1;\n    }}\n  }}\n",
            seg("lo", "hi", "write"),
            seg("lo", "hi", "write"),
            num(v + if self.chance(80) { 0 } else { self.off() }),
            seg("lo", "hi", "write"),
        ));
        // A reader of part of an array.
        let (p, _, _) = self.amount();
        s.push_str(
            "  static pure int get(int[] a, int i) requires a != null && 0 <= i && i < a.length && acc(a[i], 1/2); { return a[i]; }\n",
        );
        s.push_str(&format!(
            "  static int sum2(int[] a) requires a != null && a.length >= 2 && acc(a[*], {p}); ensures acc(a[*], {p}) && result == a[0] + a[1]; {{ return get(a, 0) + a[1]; }}\n"
        ));
        // A client: splits the array, fills the halves, reads back.
        let n = self.int(2, 5);
        let m = self.int(0, n);
        let idx = self.int(0, n - 1) + if self.chance(85) { 0 } else { 1 };
        let fact_v = v + self.off();
        s.push_str(&format!(
            "  static void client() {{\n    int[] a = new int[{n}];\n    fill(a, 0, {m});\n    fill(a, {m}, {n});\n    int t = sum2(a);\n    assert a[{idx}] == {};\n    assert t == {};\n  }}\n",
            num(fact_v),
            num(2 * v + self.off()),
        ));
        // A method that holds all but one element and touches another.
        let skip = self.int(0, 2);
        let touch = self.int(0, 2);
        s.push_str(&format!(
            "  static void hole(int[] a) requires a != null && a.length == 3 && (forall int i :: 0 <= i && i < a.length && i != {skip} ==> acc(a[i])); ensures (forall int i :: 0 <= i && i < 3 && i != {skip} ==> acc(a[i])); {{\n    a[{touch}] = 1;\n  }}\n"
        ));
        // A write with a part of a segment.
        let (w, _, _) = self.amount();
        s.push_str(&format!(
            "  static void halfwrite(int[] a) requires a != null && a.length > 0 && acc(a[*], {w}); ensures acc(a[*], {w}); {{\n    a[0] = 2;\n  }}\n"
        ));
        // Giving away a segment and keeping the rest.
        let k2 = self.int(0, 3);
        s.push_str(&format!(
            "  static void keep(int[] a) requires a != null && a.length == 4 && acc(a[*]); ensures acc(a[*]) && a[{k2}] == {}; {{\n    int old0 = a[{k2}];\n    fill(a, 2, 4);\n    assert a[{k2}] == {};\n  }}\n",
            if k2 >= 2 { num(v) } else { format!("old(a[{k2}])") },
            if k2 >= 2 { num(v + self.off()) } else { "old0".to_string() },
        ));
        // An element by itself.
        let e = self.int(0, 3);
        s.push_str(&format!(
            "  static void one(int[] a) requires a != null && a.length == 3 && acc(a[{}]); {{\n    a[{e}] = 5;\n    assert perm(a[{e}]) == write;\n  }}\n",
            if self.chance(70) { e } else { self.int(0, 2) }
        ));
        s.push_str("}\n");
        s
    }

    // ------------------------------------------------------------ sequences

    pub fn sequences(&mut self) -> String {
        let k = self.k;
        let c = format!("Sq{k}");
        let mut s = format!("class {c} {{\n");
        s.push_str(
            "  static pure int sum(seq<int> s) decreases s.length; { return s.length == 0 ? 0 : s[0] + sum(s[1..]); }\n",
        );
        s.push_str(
            "  static pure bool sorted(seq<int> s) { return forall int i, int j :: 0 <= i && i < j && j < s.length ==> s[i] <= s[j]; }\n",
        );
        s.push_str(
            "  static pure bool has(seq<int> s, int x) { return exists int i :: 0 <= i && i < s.length && s[i] == x; }\n",
        );
        let (a, b, d) = (self.int(-2, 3), self.int(-2, 3), self.int(0, 4));
        let idx = self.int(0, 3) + if self.chance(80) { 0 } else { 2 };
        let lo = self.int(0, 2);
        let hi = lo + self.int(0, 2) + if self.chance(85) { 0 } else { 2 };
        let facts = [
            format!("t.length == {}", plus("s.length", 3 + self.off())),
            format!("t[s.length] == {}", num(a + self.off())),
            format!("t[s.length + 2] == {}", num(d + self.off())),
            format!("sum(seq({}, {})) == {}", num(a), num(b), num(a + b + self.off())),
            format!("t.contains({})", num(b + self.off())),
            format!("has(t, {})", num(d + self.off())),
            format!("t.updated({idx}, 9)[{idx}] == {}", num(9 + self.off())),
            format!("t[{lo}..{hi}].length == {}", num(hi - lo + self.off())),
            format!("(t + seq({}))[t.length] == {}", num(a), num(a + self.off())),
            format!("sorted(seq({}, {}))", num(a), num(b)),
            format!(
                "seq({}, {})[{}..] == seq({})",
                num(a),
                num(b),
                1 + self.off().clamp(-1, 1),
                num(b)
            ),
            format!("t[{idx}] == t[{idx}]"),
            format!("sum(t) == {}", plus("sum(s)", a + b + d + self.off())),
        ];
        let mut asserts = String::new();
        for _ in 0..3 {
            let f = &facts[self.below(facts.len())];
            asserts.push_str(&format!("    assert {f};\n"));
        }
        let req = self.int(0, 3);
        s.push_str(&format!(
            "  static void m(seq<int> s) requires s.length >= {req}; {{\n    seq<int> t = s + seq({}, {}, {});\n{asserts}  }}\n",
            num(a),
            num(b),
            num(d)
        ));
        // A method with a postcondition over a sequence and a quantifier.
        let off = self.off();
        s.push_str(&format!(
            "  static pure seq<int> pos(seq<int> s) requires forall int i :: 0 <= i && i < s.length ==> s[i] > 0; ensures result.length == s.length && (forall int i :: 0 <= i && i < s.length ==> result[i] == {}); {{ return s; }}\n",
            plus("s[i]", off)
        ));
        s.push_str("}\n");
        s
    }

    // ------------------------------------------------------------ else-if chains

    pub fn chains(&mut self) -> String {
        let k = self.k;
        let c = format!("E{k}");
        let n = 10 + self.below(51);
        // Distinct keys around the inputs' range, and the values of the arms.
        let mut keys: Vec<i64> = (-(n as i64) / 2..(n as i64) - (n as i64) / 2).collect();
        self.rng.shuffle(&mut keys);
        let vals: Vec<i64> = (0..=n).map(|_| self.int(-3, 9)).collect();
        let min = *vals.iter().min().unwrap_or(&0);
        let max = *vals.iter().max().unwrap_or(&0);
        let mut s = format!("class {c} {{\n");
        // A pure body: a chain of `?:`.
        let mut pure = num(vals[n]);
        for j in (0..n).rev() {
            pure = if j + 1 == n {
                format!("x == {} ? {} : {pure}", num(keys[j]), num(vals[j]))
            } else {
                format!("x == {} ? {} : ({pure})", num(keys[j]), num(vals[j]))
            };
        }
        let pp_ens = if self.chance(50) {
            format!(" ensures result <= {};", num(max + self.off().min(0)))
        } else {
            String::new()
        };
        s.push_str(&format!("  static pure int pp(int x){pp_ens} {{ return {pure}; }}\n"));
        // A method: `if .. else if` returning, or assigning.
        let returns = self.chance(50);
        let mut body = String::new();
        for j in 0..n {
            let head = if j == 0 { "    if" } else { " else if" };
            if returns {
                body.push_str(&format!(
                    "{head} (x == {}) {{ return {}; }}",
                    num(keys[j]),
                    num(vals[j])
                ));
            } else {
                body.push_str(&format!(
                    "{head} (x == {}) {{ r = {}; }}",
                    num(keys[j]),
                    num(vals[j])
                ));
            }
            if j % 4 == 3 {
                body.push_str("\n   ");
            }
        }
        // pick's contract: its value (through the pure chain) or only a bound.
        let exact = self.chance(70);
        let pick_ens = if exact {
            format!("result == {}", plus("pp(x)", if self.chance(85) { 0 } else { self.off() }))
        } else {
            format!("result >= {}", num(min + self.off().min(0)))
        };
        if returns {
            body.push_str(&format!(" else {{ return {}; }}\n", num(vals[n])));
            s.push_str(&format!(
                "  static int pick(int x) ensures {pick_ens};\n  {{\n{body}  }}\n"
            ));
        } else {
            body.push_str(&format!(" else {{ r = {}; }}\n", num(vals[n])));
            s.push_str(&format!(
                "  static int pick(int x) ensures {pick_ens};\n  {{\n    int r = 0;\n{body}    return r;\n  }}\n"
            ));
        }
        // A chain of comparisons in a method, with an assertion after it.
        let m = 10 + self.below(20);
        let mut thr: Vec<i64> = (0..m).map(|_| self.int(-12, 12)).collect();
        thr.sort();
        let mut body = "    int r = 0;\n".to_string();
        for (j, t) in thr.iter().enumerate() {
            let head = if j == 0 { "    if" } else { " else if" };
            body.push_str(&format!("{head} (y < {}) {{ r = {}; }}", num(*t), j));
            if j % 4 == 3 {
                body.push_str("\n   ");
            }
        }
        body.push_str(&format!(" else {{ r = {m}; }}\n"));
        let fact = match self.below(3) {
            0 => format!("0 <= r && r <= {}", m as i64 + self.off().min(0)),
            1 => format!("y < {} ==> r == 0", num(thr[0] + self.off())),
            _ => format!("y >= {} ==> r == {m}", num(thr[m - 1] + self.off())),
        };
        s.push_str(&format!(
            "  static int steps(int y)\n  {{\n{body}    assert {fact};\n    return r;\n  }}\n"
        ));
        // Clients.
        let j = self.below(n);
        let f1 = match self.below(3) {
            0 => format!("pp({}) == {}", num(keys[j]), num(vals[j] + self.off())),
            1 if exact => format!("r == {}", num(vals[j] + self.off())),
            _ => format!("pp(x) >= {}", num(min + self.off())),
        };
        s.push_str(&format!(
            "  static void m0(int x) {{\n    int r = pick({});\n    assert {f1};\n  }}\n",
            num(keys[j])
        ));
        let f2 = if exact {
            format!("r == {}", plus("pp(x)", self.off()))
        } else {
            format!("r >= {}", num(min + self.off().min(0)))
        };
        s.push_str(&format!(
            "  static void m1(int x) {{\n    int r = pick(x);\n    assert {f2};\n  }}\n"
        ));
        s.push_str("}\n");
        s
    }

    // ------------------------------------------------------------ C1: sorted list

    pub fn sorted(&mut self) -> String {
        let k = self.k;
        let c = format!("S{k}");
        let strict = self.chance(30);
        let le = if strict { "<" } else { "<=" };
        let mut s = format!("class {c} {{\n  int val;\n  {c} next;\n");
        s.push_str(&format!(
            "  static predicate seg({c} a) {{\n    return a != null ==> acc(a.val) && acc(a.next) && seg(a.next) &&\n      (a.next != null ==> a.val {le} (opening seg(a.next) in a.next.val));\n  }}\n"
        ));
        let nonneg = self.chance(60);
        let cnt_ens = if nonneg { " ensures result >= 0;" } else { "" };
        s.push_str(&format!(
            "  static pure int count({c} a) requires seg(a);{cnt_ens}\n  {{ return a == null ? 0 : (opening seg(a) in 1 + count(a.next)); }}\n"
        ));
        s.push_str(&format!(
            "  static pure int head({c} a) requires seg(a) && a != null;\n  {{ return opening seg(a) in a.val; }}\n"
        ));
        // link2: C1's shape, right or wrong by a constant.
        let d = self.off();
        // `count(a) >= 2` needs `count`'s `ensures result >= 0` (induction).
        let which = self.below(if nonneg { 3 } else { 2 });
        let post = match which {
            0 => format!("seg(a) && count(a) == {}", plus("old(count(rest))", 2 + d)),
            1 => format!("seg(a) && head(a) == {}", plus("old(a.val)", d)),
            _ => format!("seg(a) && count(a) >= {}", num(2 + d)),
        };
        let order = if self.chance(85) { le } else { self.pick(&["<=", ">="]) };
        s.push_str(&format!(
            "  static void link2({c} a, {c} b, {c} rest)\n    requires acc(a.val) && acc(a.next) && acc(b.val) && acc(b.next) && seg(rest);\n    requires a.val {order} b.val && (rest != null ==> b.val {le} head(rest));\n    ensures {post};\n  {{\n    a.next = b;\n    b.next = rest;\n    close seg(b);\n    close seg(a);\n  }}\n"
        ));
        // A cons on top, and an update of the head that is re-closed.
        let dec = self.pick(&["a.val - 1", "a.val - 1", "a.val + 1", "a.val"]);
        let bump_post = match self.below(3) {
            0 => format!("seg(a) && count(a) == {}", plus("old(count(a))", self.off())),
            1 => format!("seg(a) && head(a) == {}", plus("old(head(a))", self.off() - 1)),
            _ => "seg(a)".into(),
        };
        s.push_str(&format!(
            "  static void bump({c} a) requires a != null && seg(a); ensures {bump_post};\n  {{\n    open seg(a);\n    a.val = {dec};\n    close seg(a);\n  }}\n"
        ));
        // A client building a list of 1-4 nodes by closes.
        let n = 1 + self.below(4);
        let mut body = String::new();
        let mut prev = "null".to_string();
        for j in (0..n).rev() {
            body.push_str(&format!(
                "    {c} x{j} = new {c}();\n    x{j}.val = v + {};\n    x{j}.next = {prev};\n    close seg(x{j});\n",
                j * 2
            ));
            prev = format!("x{j}");
        }
        let fact = match self.below(5) {
            0 | 1 => format!("count(x0) == {}", n as i64 + self.off()),
            2 | 3 => format!("head(x0) == {}", plus("v", self.off())),
            _ => "false".into(),
        };
        s.push_str(&format!("  static void build(int v)\n  {{\n{body}    assert {fact};\n"));
        if self.chance(50) {
            s.push_str(&format!(
                "    bump(x0);\n    assert count(x0) == {};\n",
                n as i64 + self.off()
            ));
        }
        s.push_str("  }\n");
        // Link two fresh nodes in front of a list given.
        let d = self.off();
        let fact = match which {
            0 => format!("count(a) == {}", plus("before", 2 + d)),
            1 => format!("head(a) == {}", plus("u - 1", d)),
            _ => format!("count(a) >= {}", num(2 + d)),
        };
        s.push_str(&format!(
            "  static void front({c} rest, int u) requires seg(rest) && (rest != null ==> u + 1 {le} head(rest));\n  {{\n    int before = count(rest);\n    {c} a = new {c}();\n    {c} b = new {c}();\n    a.val = u - 1;\n    b.val = u;\n    link2(a, b, rest);\n    assert {fact};\n  }}\n"
        ));
        s.push_str("}\n");
        s
    }

    // ------------------------------------------------------------ C2: trees

    pub fn trees(&mut self) -> String {
        let k = self.k;
        let t = format!("T{k}");
        let mut s = format!("class {t} {{\n  {t} left;\n  {t} right;\n");
        s.push_str(&format!(
            "  static predicate shape({t} t) {{\n    return t == null ? true : acc(t.left) && acc(t.right) && shape(t.left) && shape(t.right);\n  }}\n"
        ));
        let helper = self.pick(&["max", "max", "sum"]);
        if helper == "max" {
            s.push_str("  static pure int max(int a, int b) { return a >= b ? a : b; }\n");
        } else {
            s.push_str("  static pure int sum(int a, int b) { return a + b; }\n");
        }
        let inc = self.chance(40);
        if inc {
            s.push_str("  static pure int one(int a) { return a + 1; }\n");
        }
        let step = |e: &str| if inc { format!("one({e})") } else { format!("1 + {e}") };
        let rec = step(&format!("{helper}(depth(t.left), depth(t.right))"));
        s.push_str(&format!(
            "  static pure int depth({t} t) requires shape(t);\n  {{ return t == null ? 0 : (opening shape(t) in {rec}); }}\n"
        ));
        let d = self.off();
        let post = step(&format!("{helper}(old(depth(l)), old(depth(r)))"));
        s.push_str(&format!(
            "  static {t} graft({t} l, {t} r)\n    requires shape(l) && shape(r);\n    ensures result != null && shape(result) && depth(result) == {};\n  {{\n    {t} t = new {t}();\n    t.left = l;\n    t.right = r;\n    close shape(t);\n    return t;\n  }}\n",
            plus(&post, d)
        ));
        // A client grafting 2-8 trees: every tree used at most once as a child.
        let calls = 2 + self.below(7);
        let mut free: Vec<(String, i64)> = vec![];
        let mut body = String::new();
        for j in 0..calls {
            let child = |me: &mut Fam, free: &mut Vec<(String, i64)>| -> (String, i64) {
                if !free.is_empty() && me.chance(50) {
                    let i = me.below(free.len());
                    free.remove(i)
                } else {
                    ("null".to_string(), 0)
                }
            };
            let (l, dl) = child(self, &mut free);
            let (r, dr) = child(self, &mut free);
            let depth = if helper == "max" { 1 + dl.max(dr) } else { 1 + dl + dr };
            body.push_str(&format!("    {t} a{j} = graft({l}, {r});\n"));
            free.push((format!("a{j}"), depth));
        }
        let (x, dx) = free[self.below(free.len())].clone();
        let fact = if self.chance(10) {
            "false".into()
        } else {
            format!("depth({x}) == {}", dx + self.off())
        };
        s.push_str(&format!("  static void client()\n  {{\n{body}    assert {fact};\n  }}\n"));
        s.push_str("}\n");
        s
    }
}

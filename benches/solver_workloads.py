#!/usr/bin/env python3
"""Scalable workloads whose proofs need the solver (issue 13 item 7), written as .jv for
idf-verify and, for arith and arrayloop, as .vpr for Viper's Silicon, with the same
meaning. This file owns these families and their failing siblings.

  solver_workloads.py OUTDIR                   # every family at its default sizes
  solver_workloads.py OUTDIR arith 100         # one family at one size
  solver_workloads.py OUTDIR arith 100 --bad   # its failing sibling

Families:
  arith N      N sequential ifs over int parameters, each adding at least 1 to an
               accumulator (`x_i > i` adds `x_i - i`, else 1), with `assert r >= i` after
               the i-th if and `ensures result >= N`: no assertion is decided by the
               syntax, each one is a solver query over the merged accumulator.
  sorted N     a sorted linked list (predicate with an ordering fact, pure size() and
               first()), built by N calls of a recursive insert whose contract gives
               `size() == old(size()) + 1` and `first() <= v`, then facts asserted.
  arrayloop N  N static methods, each an array loop with invariants, cycling through
               fill-and-sum (`result == k * n`), maximum (`result >= a[0]`, `>= k`) and
               count-above (`result <= a.length`), k the method's number.
  members N    benches/members.py's file of N members with predicate-framed contracts.

Each family has a failing sibling (`--bad`, files named FAMILY_N_bad): one constant
changed, so exactly one error is reported, with the id and on the line that the
sibling's `// expect: ID` comment names (run `idf-verify --expect` on it). The
verifying programs carry no expectation comments and must verify. arith's sibling gets
slow past N = 30: a failure after a merged if is re-verified unmerged, over 2^(N/2)
paths (N = 20: 0.9 s, N = 25: 3 s).
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benches"))

SIZES = {"arith": [25, 50, 100, 200], "sorted": [5, 10, 20, 40], "arrayloop": [10, 50, 100, 200],
         "members": [100, 1000, 5000]}


def expect(lines, bad, ident, indent):
    """Adds the expectation comment for the next line (only in the failing sibling)."""
    if bad:
        lines.append(f"{indent}// expect: {ident}")


def arith(n, bad=False):
    """The wrong constant: the middle assertion asks for one more than the ifs give."""
    wrong = max(1, n // 2)
    params = ", ".join(f"int x{i}" for i in range(1, n + 1))
    jv = ["class Arith {", f"  static int m({params})", f"    ensures result >= {n};", "  {", "    int r = 0;"]
    vparams = ", ".join(f"x{i}: Int" for i in range(1, n + 1))
    vpr = [f"method m({vparams}) returns (r: Int)", f"  ensures r >= {n}", "{", "  r := 0"]
    for i in range(1, n + 1):
        k = i + 1 if bad and i == wrong else i
        jv.append(f"    if (x{i} > {i}) {{ r = r + x{i} - {i}; }} else {{ r = r + 1; }}")
        expect(jv, bad and i == wrong, "assert.failed", "    ")
        jv.append(f"    assert r >= {k};")
        vpr.append(f"  if (x{i} > {i}) {{ r := r + x{i} - {i} }} else {{ r := r + 1 }}")
        if bad and i == wrong:
            vpr.append("  // jv expect: assert.failed")
        vpr.append(f"  assert r >= {k}")
    jv += ["    return r;", "  }", "}"]
    vpr += ["}"]
    return jv, vpr


def sorted_list(n, bad=False):
    """The wrong constant: the client's size assertion after the middle insert is one
    too many."""
    jv = ["class Node {", "  int val;", "  Node next;",
          "  predicate list() {",
          "    return acc(val) && acc(next) && (next != null ==> next.list() && val <= next.first());",
          "  }",
          "  pure int first() requires list(); { return val; }",
          "  pure int size() requires list(); ensures result >= 1; { return next == null ? 1 : 1 + next.size(); }",
          "  Node(int v, Node n)",
          "    requires n != null ==> n.list() && v <= n.first();",
          "    ensures list() && first() == v && size() == (n == null ? 1 : 1 + old(n.size()));",
          "  { val = v; next = n; }",
          "  Node insert(int v)",
          "    requires list();",
          "    ensures result != null && result.list() && result.size() == old(size()) + 1;",
          "    ensures result.first() <= v && result.first() <= old(first());",
          "    ensures result.first() == v || result.first() == old(first());",
          "  {",
          "    if (v <= val) { Node h = new Node(v, this); return h; }",
          "    if (next == null) { Node t = new Node(v, null); next = t; return this; }",
          "    Node t = next.insert(v);",
          "    next = t;",
          "    return this;",
          "  }",
          "}",
          "class Client {",
          "  static void main(int seed) {",
          "    Node h = new Node(seed, null);"]
    wrong = max(1, n // 2)
    lo = "seed"
    for i in range(1, n + 1):
        # values alternate around the seed: some go first, some deep into the list
        v = f"seed - {i}" if i % 3 == 0 else f"seed + {i * 7 % 11}"
        jv.append(f"    h = h.insert({v});")
        if i % 3 == 0:
            lo = v
        size = i + 1 + (1 if bad and i == wrong else 0)
        expect(jv, bad and i == wrong, "assert.failed", "    ")
        jv.append(f"    assert h.size() == {size} && h.first() <= {lo};")
    jv += ["  }", "}"]
    return jv, None


ARRAY_KINDS = 3


def arrayloop(n, bad=False):
    """The wrong constant: the middle fill-and-sum method's postcondition factor."""
    wrong = (n // 2) - (n // 2) % ARRAY_KINDS if n > 1 else 0
    jv = ["class Loops {"]
    vpr = ["field val: Int",
           "domain Array {",
           "  function loc(a: Array, i: Int): Ref",
           "  function len(a: Array): Int",
           "  function first(r: Ref): Array",
           "  function second(r: Ref): Int",
           "  axiom all_diff { forall a: Array, i: Int :: {loc(a, i)} first(loc(a, i)) == a && second(loc(a, i)) == i }",
           "  axiom len_nonneg { forall a: Array :: {len(a)} len(a) >= 0 }",
           "}",
           "define access(a) forall j: Int :: {loc(a, j)} 0 <= j && j < len(a) ==> acc(loc(a, j).val)",
           "method new_array(n: Int) returns (a: Array)",
           "  requires n >= 0",
           "  ensures len(a) == n && access(a)",
           "  ensures forall j: Int :: {loc(a, j)} 0 <= j && j < n ==> loc(a, j).val == 0"]
    for k in range(n):
        kind = k % ARRAY_KINDS
        c = k + 1
        if kind == 0:
            f = c + 1 if bad and k == wrong else c
            jv += [f"  static int fillSum{k}(int n)", "    requires n >= 0;"]
            expect(jv, bad and k == wrong, "postcondition.violated", "    ")
            jv += [f"    ensures result == {f} * n;", "  {",
                   "    int[] a = new int[n];", "    int s = 0;", "    int i = 0;", "    while (i < n)",
                   "      invariant acc(a[*]) && a.length == n && 0 <= i && i <= n;",
                   f"      invariant s == {c} * i;", "    {", f"      a[i] = {c};", "      s = s + a[i];",
                   "      i = i + 1;", "    }", "    return s;", "  }"]
            vpr += [f"method fillSum{k}(n: Int) returns (s: Int)", "  requires n >= 0"]
            if bad and k == wrong:
                vpr.append("  // jv expect: postcondition.violated")
            vpr += [f"  ensures s == {f} * n", "{",
                    "  var a: Array", "  a := new_array(n)", "  s := 0", "  var i: Int := 0", "  while (i < n)",
                    "    invariant access(a) && len(a) == n && 0 <= i && i <= n",
                    f"    invariant s == {c} * i", "  {", f"    loc(a, i).val := {c}", "    s := s + loc(a, i).val",
                    "    i := i + 1", "  }", "}"]
        elif kind == 1:
            jv += [f"  static int max{k}(int[] a)", "    requires acc(a[*]) && a.length > 0;",
                   f"    ensures acc(a[*]) && result >= a[0] && result >= {c};", "  {",
                   f"    int m = a[0] > {c} ? a[0] : {c};", "    int i = 1;", "    while (i < a.length)",
                   f"      invariant acc(a[*]) && 1 <= i && i <= a.length && m >= a[0] && m >= {c};", "    {",
                   "      if (a[i] > m) { m = a[i]; }", "      i = i + 1;", "    }", "    return m;", "  }"]
            vpr += [f"method max{k}(a: Array) returns (m: Int)", "  requires access(a) && len(a) > 0",
                    f"  ensures access(a) && m >= loc(a, 0).val && m >= {c}", "{",
                    f"  m := loc(a, 0).val > {c} ? loc(a, 0).val : {c}", "  var i: Int := 1", "  while (i < len(a))",
                    f"    invariant access(a) && 1 <= i && i <= len(a) && m >= loc(a, 0).val && m >= {c}", "  {",
                    "    if (loc(a, i).val > m) { m := loc(a, i).val }", "    i := i + 1", "  }", "}"]
        else:
            jv += [f"  static int countAbove{k}(int[] a)", "    requires acc(a[*]);",
                   "    ensures acc(a[*]) && 0 <= result && result <= a.length;", "  {", "    int c = 0;",
                   "    int i = 0;", "    while (i < a.length)",
                   "      invariant acc(a[*]) && 0 <= i && i <= a.length && 0 <= c && c <= i;", "    {",
                   f"      if (a[i] > {c}) {{ c = c + 1; }}", "      i = i + 1;", "    }", "    return c;", "  }"]
            vpr += [f"method countAbove{k}(a: Array) returns (c: Int)", "  requires access(a)",
                    "  ensures access(a) && 0 <= c && c <= len(a)", "{", "  c := 0", "  var i: Int := 0",
                    "  while (i < len(a))", "    invariant access(a) && 0 <= i && i <= len(a) && 0 <= c && c <= i",
                    "  {", f"    if (loc(a, i).val > {c}) {{ c := c + 1 }}", "    i := i + 1", "  }", "}"]
    jv += ["}"]
    return jv, vpr


def members(n, bad=False):
    """benches/members.py's program; the wrong constant: the middle member's postcondition."""
    import members as m
    jv = m.cell(n).rstrip("\n").split("\n")
    if bad:
        i = n // 2
        line = next(j for j, l in enumerate(jv) if l.startswith(f"  void m{i}("))
        jv[line] = jv[line].replace(f"get() == v + {i};", f"get() == v + {i + 1};")
        jv.insert(line, "  // expect: postcondition.violated")
    return jv, None


FAMILIES = {"arith": arith, "sorted": sorted_list, "arrayloop": arrayloop, "members": members}


def write(out, family, size, bad=False):
    """Writes FAMILY_SIZE[_bad].jv (and .vpr when the family has one); returns the paths."""
    jv, vpr = FAMILIES[family](size, bad)
    name = f"{family}_{size}" + ("_bad" if bad else "")
    paths = []
    for ext, lines in ((".jv", jv), (".vpr", vpr)):
        if lines is not None:
            path = os.path.join(out, name + ext)
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            paths.append(path)
    return paths


def main():
    args = [a for a in sys.argv[1:] if a != "--bad"]
    bad = "--bad" in sys.argv[1:]
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] not in FAMILIES):
        sys.exit(__doc__)
    out = args[0]
    # An option or a family name where the folder belongs (`--help`, `chain`) would
    # write generated programs into a folder of that name.
    if out.startswith("-") or out in FAMILIES or out in ("chain", "paths", "list"):
        sys.exit(__doc__)
    os.makedirs(out, exist_ok=True)
    if len(args) == 3:
        write(out, args[1], int(args[2]), bad)
    else:
        for family, sizes in SIZES.items():
            for size in sizes:
                write(out, family, size, bad)


if __name__ == "__main__":
    main()

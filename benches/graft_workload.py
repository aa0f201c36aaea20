#!/usr/bin/env python3
"""Writes the tree-client workload (issue 20): trees built by N calls of a method that
grafts two trees under a new node, with the depth computed through a heap-free helper
(`max`, no precondition: every application of it is on the `unit` snapshot). The shape
where re-instantiating applications at every inferred close made instances grow until
the solver gave up, where the answer takes milliseconds.

  graft_workload.py OUTDIR N          # grafts_N.jv
  graft_workload.py OUTDIR N --bad    # grafts_N_bad.jv, its failing sibling
  graft_workload.py OUTDIR            # every default size, both variants

OUTDIR must be a folder outside the repository (nothing generated is committed).
The failing sibling asserts one more than the depth of the last tree: exactly one
`assert.failed`, on the line after its `// expect:` comment.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from elseif_workload import check_out  # noqa: E402  (the same output-folder rules)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = [2, 8, 32]

HEADER = """class Tree {
  Tree left;
  Tree right;

  static predicate shape(Tree t) {
    return t == null ? true : acc(t.left) && acc(t.right) && shape(t.left) && shape(t.right);
  }

  static pure int max(int a, int b) { return a >= b ? a : b; }

  static pure int depth(Tree t) requires shape(t);
  { return t == null ? 0 : (opening shape(t) in 1 + max(depth(t.left), depth(t.right))); }

  static Tree graft(Tree l, Tree r)
    requires shape(l) && shape(r);
    ensures result != null && shape(result) && depth(result) == 1 + max(old(depth(l)), old(depth(r)));
  {
    Tree t = new Tree();
    t.left = l;
    t.right = r;
    close shape(t);
    return t;
  }
"""


def grafts(n, bad=False):
    """Tree t_i = graft(t_{i-1}, null): a spine of depth i; then the depth of the last."""
    jv = [HEADER, "  static void client() {", "    Tree t0 = graft(null, null);"]
    for i in range(1, n):
        jv.append(f"    Tree t{i} = graft(t{i - 1}, null);")
    if bad:
        jv.append("    // expect: assert.failed")
        jv.append(f"    assert depth(t{n - 1}) == {n + 1};")
    else:
        jv.append(f"    assert depth(t{n - 1}) == {n};")
    jv += ["  }", "}"]
    return jv


def write(out, n, bad=False):
    path = os.path.join(out, f"grafts_{n}" + ("_bad" if bad else "") + ".jv")
    with open(path, "w") as f:
        f.write("\n".join(grafts(n, bad)) + "\n")
    return path


def main():
    args = [a for a in sys.argv[1:] if a != "--bad"]
    bad = "--bad" in sys.argv[1:]
    if len(args) not in (1, 2):
        sys.exit(__doc__)
    out = check_out(args[0], __doc__, "graft_workload.py")
    if len(args) == 2:
        write(out, int(args[1]), bad)
    else:
        for n in SIZES:
            write(out, n)
            write(out, n, True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the else-if chain workload (issue 20, "no performance cliffs"): one member
whose body is an `if (...) {...} else if (...) {...} ... else {...}` chain of N arms,
each arm assigning a local and a field, followed by assertions and a postcondition
over what the chain computed. With merging, every arm's join merges the states of the
arms below it, so this is the shape where merging could cost more than not merging.

  elseif_workload.py OUTDIR N          # elseif_N.jv
  elseif_workload.py OUTDIR N --bad    # elseif_N_bad.jv, its failing sibling
  elseif_workload.py OUTDIR            # every default size, both variants

OUTDIR must be a folder outside the repository's tracked files (nothing generated is
committed); it is created when missing.

The failing sibling asserts, in its middle arm, one more than that arm assigned: exactly
one error (`assert.failed`) on the line after its `// expect:` comment (run
`idf-verify --expect` on it). The verifying program carries no expectation comments.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = [50, 500, 5000]


def elseif(n, bad=False):
    """The chain dispatches on `x`; arm i sets `r = 2 * i` and `c.val = i + k`. The
    failing sibling's middle arm asserts `r == 2 * i + 1`."""
    wrong = n // 2
    jv = ["class Cell {", "  int val;", "}", "class Chain {",
          "  static int pick(int x, int k, Cell c)",
          "    requires acc(c.val) && k >= 0;",
          f"    ensures acc(c.val) && 0 <= result && result <= {2 * n} && c.val >= k;",
          "  {",
          "    int r = 0;"]
    for i in range(n):
        head = "    if" if i == 0 else "    else if"
        body = f"r = {2 * i}; c.val = {i} + k;"
        if bad and i == wrong:
            jv.append(f"{head} (x == {i}) {{")
            jv.append(f"      {body}")
            jv.append("      // expect: assert.failed")
            jv.append(f"      assert r == {2 * i + 1};")
            jv.append("    }")
        else:
            jv.append(f"{head} (x == {i}) {{ {body} }}")
    jv.append(f"    else {{ r = {2 * n}; c.val = k; }}")
    jv += ["    assert r >= 0 && c.val >= k;", "    return r;", "  }", "}"]
    return jv


def check_out(out, doc=None, name="elseif_workload.py"):
    """OUTDIR must not be inside the repository (generated programs are not committed),
    nor an option or a size where the folder belongs (`--help`, `500`), which would
    write the programs into a folder of that name."""
    if out.startswith("-") or out.isdigit():
        sys.exit(doc or __doc__)
    real = os.path.realpath(out)
    if real == ROOT or real.startswith(ROOT + os.sep):
        sys.exit(f"{name}: {out} is inside the repository; give a folder outside it")
    os.makedirs(real, exist_ok=True)
    return real


def write(out, n, bad=False):
    name = f"elseif_{n}" + ("_bad" if bad else "")
    path = os.path.join(out, name + ".jv")
    with open(path, "w") as f:
        f.write("\n".join(elseif(n, bad)) + "\n")
    return path


def main():
    args = [a for a in sys.argv[1:] if a != "--bad"]
    bad = "--bad" in sys.argv[1:]
    if len(args) not in (1, 2):
        sys.exit(__doc__)
    out = check_out(args[0])
    if len(args) == 2:
        write(out, int(args[1]), bad)
    else:
        for n in SIZES:
            write(out, n)
            write(out, n, True)


if __name__ == "__main__":
    main()

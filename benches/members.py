#!/usr/bin/env python3
"""Run time against the number of members in one file (issue: linear in members).

Writes files of N small members (each a method with a predicate-framed contract and a
pure getter, as in the paper's Cell) and times `target/release/idf-verify` on each with
hyperfine (median of --runs runs), then prints time per member. Per-program work (the
checked program's facts, the pure methods' definitions) is done once per worker thread,
so time should grow linearly.

  python3 benches/members.py                 # N = 1000, 2000, 5000, 10000
  python3 benches/members.py --sizes 1000 20000 --runs 3
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def program(n):
    lines = ["class Many {", "  int f;", "  predicate p() { return acc(f); }",
             "  pure int get() requires p(); { return f; }"]
    for i in range(n):
        lines.append(f"  void m{i}(int v) requires p(); ensures p() && get() == v + {i}; {{ f = v + {i}; }}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000, 10000])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/idf-verify"))
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in a.sizes:
            path = os.path.join(d, f"many_{n}.jv")
            with open(path, "w") as f:
                f.write(program(n))
            out = os.path.join(d, "h.json")
            subprocess.run(["hyperfine", "-N", "-w", "1", "-r", str(a.runs), "--export-json", out,
                            f"{a.bin} --no-cache {path}"], check=True, capture_output=True)
            median = json.load(open(out))["results"][0]["median"]
            rows.append((n, median))
    print("| members | median | per member |")
    print("|---:|---:|---:|")
    for n, t in rows:
        print(f"| {n} | {t * 1000:.0f} ms | {t / n * 1e6:.1f} µs |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

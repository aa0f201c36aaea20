#!/usr/bin/env python3
"""Run time against the number of members in one file (linear in members).

Shapes of file (each member small, N members in one file):
  cell    N methods with a predicate-framed contract and a pure getter, as in the
          paper's Cell (the contracts are decided without a solver query);
  free    N/2 classes, each a predicate over a field and a pure method requiring it:
          N members that need no solver, N/2 pure methods (a member's check used to
          revisit every pure method: quadratic);
  pure    one class of N pure methods with a precondition (N pure methods);
  stream  as pure, about 5 MB at N = 80,000: also reports when the first and the
          last line of the human output arrive (results stream as they finish).

Each file is verified by `target/release/idf-verify --no-cache -q` `--runs` times; the
median wall time, the median CPU time (user + system, all threads: less sensitive to
other load) and the peak resident memory are printed per size.

  python3 benches/members.py                              # cell: 1000 .. 10000
  python3 benches/members.py --shape free --sizes 1500 6000 20000
  python3 benches/members.py --shape stream --sizes 80421 --runs 1
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cell(n):
    lines = ["class Many {", "  int f;", "  predicate p() { return acc(f); }",
             "  pure int get() requires p(); { return f; }"]
    for i in range(n):
        lines.append(f"  void m{i}(int v) requires p(); ensures p() && get() == v + {i}; {{ f = v + {i}; }}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def free(n):
    return "".join(
        f"class C{i} {{ int f; predicate p() {{ return acc(f); }} "
        f"pure int g() requires p(); {{ return {i}; }} }}\n"
        for i in range(n // 2))


def pure(n):
    lines = ["class A {", "  int f;"]
    for i in range(n):
        lines.append(f"  pure int g{i}(int x) requires x > 0; {{ return x + {i}; }}")
    lines.append("}")
    return "\n".join(lines) + "\n"


SHAPES = {"cell": cell, "free": free, "pure": pure, "stream": pure}


def timed(cmd):
    """(wall s, cpu s, peak KB, first-line s, last-line s) of one run."""
    start = time.monotonic()
    first = last = None
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE)
    for _ in p.stdout:
        last = time.monotonic() - start
        if first is None:
            first = last
    p.stdout.close()
    # This child's own resource use (CPU of all its threads, its peak memory).
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    cpu = usage.ru_utime + usage.ru_stime
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}")
    return wall, cpu, usage.ru_maxrss, first, last


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=sorted(SHAPES), default="cell")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000, 10000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/idf-verify"))
    a = ap.parse_args()
    stream = a.shape == "stream"
    print(f"shape {a.shape}")
    print("| members | bytes | median wall | median CPU | CPU per member | peak RSS |"
          + (" first line | last line |" if stream else ""))
    print("|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if stream else ""))
    with tempfile.TemporaryDirectory() as d:
        for n in a.sizes:
            path = os.path.join(d, f"{a.shape}_{n}.jv")
            with open(path, "w") as f:
                f.write(SHAPES[a.shape](n))
            # Without -q for stream: every member's line shows when it arrives.
            cmd = [a.bin, "--no-cache"] + ([] if stream else ["-q"]) + [path]
            runs = [timed(cmd) for _ in range(a.runs)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            rss = max(r[2] for r in runs)
            row = (f"| {n} | {os.path.getsize(path)} | {wall:.2f} s | {cpu:.2f} s | "
                   f"{cpu / n * 1e6:.0f} µs | {rss // 1024} MB |")
            if stream:
                row += f" {runs[0][3]:.2f} s | {runs[0][4]:.2f} s |"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

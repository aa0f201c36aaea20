#!/usr/bin/env python3
"""Performance benchmark of idf-verify, and its comparison with Viper's Silicon.

Times whole-process wall time of `target/release/idf-verify --no-cache` (median of --runs runs,
with hyperfine when installed, otherwise time.perf_counter around subprocess) on

  * the scalable workloads of ../shared/peers/workloads.py (chain, paths, list) and
    of benches/visitor_workload.py (visitor: a tree of N objects built in straight-line
    code, visited through interfaces; LANGUAGE.md section 10) and of
    benches/solver_workloads.py (arith, sorted, arrayloop, members: proofs that need
    Z3; shown again with their growth and total solver queries from --stats) and of
    benches/elseif_workload.py (elseif 50-5000: `else if` chains, each also with
    --no-merge and as its failing sibling with --expect) and of
    benches/feature_workloads.py (halfread, dcfill, qpread, bsearch, sortedins,
    seqbuild at 10, 100, 1000, dcchain and sortedchain at 5, 10, 20: LANGUAGE.md
    sections 11-15, each with a .vpr; shown again with their growth and solver queries),
  * every ../shared/suite/*.jv program (run with --expect, the acceptance mode),
  * every examples/*.jv program,
  * a folder of 40 example files with --jobs 1 and with --jobs 2,

prints a markdown table of medians and of ratios to Silicon, and checks the issue's
targets (PASS/FAIL per target). It reports; it never gates anything (exit 0 unless the
benchmark itself cannot run).

Silicon times come from benches/silicon-times.json (committed). `--silicon` also runs
Silicon once on each workload that has no cached time (or on all with
--silicon-refresh), killing it after --silicon-budget seconds (the time is then a lower
bound, shown as ">N s"). Silicon prints its own verification time ("... in 10.64s"),
which is recorded next to its wall time.

  benches/run.py                       # idf-verify timings + cached Silicon times
  benches/run.py --runs 11 --markdown out.md
  benches/run.py --silicon --silicon-budget 120 --only 'chain_(10|50)$'
  benches/run.py --stats               # also: per-workload slowest member, --stats
  benches/run.py --only '^(halfread|dcfill|qpread|bsearch|sortedins|seqbuild|dcchain|sortedchain)_'

A program whose first run (which checks its exit status) takes longer than --slow seconds
is timed --slow-runs times in all, that first run included, without warm-up (the largest
feature workloads take minutes).

Build first: cargo build --release.
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, "benches", "silicon-times.json")

WORKLOADS = [("chain", n) for n in (10, 50, 100, 500, 1000, 10000)] + \
    [("paths", k) for k in (8, 10, 12, 14, 20, 200)] + [("list", n) for n in (5, 10, 20, 40, 200, 1000)] + \
    [("visitor", n) for n in (10, 100, 1000)]
# Workloads whose proofs need the solver (benches/solver_workloads.py; issue 13 item 7),
# reported again in a table of growth and solver queries. arith grows steeply (150: ~27 s,
# 200: ~4 min), so the default stops at 100.
SOLVER_FAMILIES = ("arith", "sorted", "arrayloop", "members")
SOLVER_WORKLOADS = [("arith", n) for n in (25, 50, 75, 100)] + [("sorted", n) for n in (5, 10, 20, 40)] + \
    [("arrayloop", n) for n in (10, 50, 100, 200)] + [("members", n) for n in (100, 1000, 5000)]
WORKLOADS += SOLVER_WORKLOADS
# Workloads written by this folder's generators rather than ../shared/peers/workloads.py:
# family -> the generator's argv before (OUTDIR, N).
SOLVER_GEN = os.path.join(ROOT, "benches", "solver_workloads.py")
LOCAL_WORKLOADS = {"visitor": [os.path.join(ROOT, "benches", "visitor_workload.py")]}
LOCAL_WORKLOADS.update({fam: [SOLVER_GEN, fam] for fam in SOLVER_FAMILIES})
# `else if` chains (benches/elseif_workload.py; issue 20, no performance cliffs), each
# also timed with --no-merge and as its failing sibling (with --expect).
ELSEIF_GEN = os.path.join(ROOT, "benches", "elseif_workload.py")
ELSEIF_SIZES = (50, 500, 5000)
# Merging is never slower than separate paths by more than this factor; the chain grows
# linearly (5000 arms ≤ this times 500 arms).
ELSEIF_MERGE_FACTOR = 2.0
ELSEIF_LINEAR = 12.0
WORKLOADS += [("elseif", n) for n in ELSEIF_SIZES]
LOCAL_WORKLOADS["elseif"] = [ELSEIF_GEN]
# Trees grafted by N calls, their depth through a heap-free helper
# (benches/graft_workload.py; issue 20: the C2 shape).
WORKLOADS += [("grafts", n) for n in (2, 8, 32)]
LOCAL_WORKLOADS["grafts"] = [os.path.join(ROOT, "benches", "graft_workload.py")]
# Workloads for LANGUAGE.md sections 11-15 (benches/feature_workloads.py, each with a
# .vpr): half-permission readers, divide-and-conquer over array segments, loops with
# quantified read permissions, binary search, a sorted list specified by its contents,
# sequence construction. Reported again with their growth (like the solver workloads).
FEATURE_GEN = os.path.join(ROOT, "benches", "feature_workloads.py")
FEATURE_FAMILIES = ("halfread", "dcfill", "qpread", "bsearch", "sortedins", "seqbuild", "dcchain", "sortedchain")
# dcchain and sortedchain are single methods that grow faster than linearly (N calls on
# consecutive segments of one array, N inserts into one list): small sizes only.
FEATURE_WORKLOADS = [(fam, n) for fam in FEATURE_FAMILIES[:6] for n in (10, 100, 1000)] + \
    [(fam, n) for fam in FEATURE_FAMILIES[6:] for n in (5, 10, 20)]
WORKLOADS += FEATURE_WORKLOADS
LOCAL_WORKLOADS.update({fam: [FEATURE_GEN, fam] for fam in FEATURE_FAMILIES})

# Targets of the issues (seconds; issue 13 for the 20 ms, chain 10000, paths 20/200,
# list 1000 and one-member figures).
SUITE_LIMIT = 0.020
ONE_MEMBER_LIMIT = 0.008
CHAIN_10000_LIMIT = 1.0
CHAIN_10000_MIB = 100
CHAIN_10000_LINEAR = 12.0
PATHS_20_LIMIT = 1.0
PATHS_200_LIMIT = 2.0
LIST_1000_LIMIT = 0.300
LIST_1000_LINEAR = 6.0
# A one-member file whose proof needs Z3 (the per-process floor with a solver).
ONE_MEMBER = "class One {\n  static void m(int x) requires x > 0; { assert x != 0 && x + 1 > 1; }\n}\n"
CHAIN_1000_LIMIT = 1.0
CHAIN_LINEAR_LIMIT = 2.2
PATHS_14_LIMIT = 2.0
LIST_40_LIMIT = 0.200
SILICON_RATIO = 20.0
JOBS_SPEEDUP = 1.7


class Program:
    def __init__(self, name, group, jv, vpr=None, args=()):
        self.name, self.group, self.jv, self.vpr, self.args = name, group, jv, vpr, list(args)
        self.median = self.min = self.max = None
        self.times = []
        self.rc = None
        self.silicon = None  # dict from the cache
        self.stats = None
        self.first = None  # the times of the first measurement, when a rerun was faster
        self.rerun = None
        self.cpu = None  # mean user + system time of one run
        self.totals = None  # solver workloads: --stats summed over members (queries, z3_ms, total_ms, members)
        self.runs = None  # timed runs (fewer for a slow program, see --slow)


# ---------------------------------------------------------------- timing

def have_hyperfine():
    return shutil.which("hyperfine") is not None


def time_commands(cmds, runs, warmup, use_hyperfine):
    """Returns, per command (a list of argv), the list of wall times in seconds and the
    mean CPU time (user + system) of one run."""
    if use_hyperfine:
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            out = f.name
        try:
            argv = ["hyperfine", "-N", "-i", "--style", "none", "--runs", str(runs),
                    "--warmup", str(warmup), "--export-json", out]
            argv += [" ".join(quote(a) for a in cmd) for cmd in cmds]
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
            with open(out) as f:
                return [(r["times"], r["user"] + r["system"]) for r in json.load(f)["results"]]
        finally:
            os.unlink(out)
    result = []
    for cmd in cmds:
        for _ in range(warmup):
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ts = []
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            ts.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        result.append((ts, (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) / runs))
    return result


BIN = [os.path.join(ROOT, "target", "release", "idf-verify")]
RUNS = [None]  # --runs, for the table's note on programs timed fewer times


def peak_rss_mib(cmd):
    """The peak resident memory of one run of `cmd`, in MiB (wait4's ru_maxrss)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return usage.ru_maxrss / 1024


def quote(arg):
    # hyperfine -N splits with shell-words rules
    return arg if re.fullmatch(r"[\w./:=+-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"


def fmt(s):
    if s is None:
        return "n/a"
    if s >= 60:
        return f"{int(s // 60)} min {s % 60:.0f} s"
    if s >= 1:
        return f"{s:.2f} s"
    return f"{s * 1000:.0f} ms"


# ---------------------------------------------------------------- Silicon

def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def load_cache():
    if os.path.exists(CACHE):
        with open(CACHE) as f:
            return json.load(f)
    return {"note": "", "programs": {}}


def save_cache(cache):
    with open(CACHE, "w") as f:
        json.dump(cache, f, indent=2, sort_keys=True)
        f.write("\n")


def run_silicon(silicon, vpr, budget):
    t0 = time.perf_counter()
    try:
        p = subprocess.run([silicon, os.path.basename(vpr)], cwd=os.path.dirname(vpr),
                           capture_output=True, text=True, timeout=budget)
        out, timeout = p.stdout + p.stderr, False
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        timeout = True
    wall = time.perf_counter() - t0
    entry = {"wall_s": round(wall, 2), "timeout": timeout, "sha": sha(vpr),
             "source": f"measured {datetime.date.today().isoformat()}, one run",
             "load_avg": " / ".join(f"{x:.2f}" for x in os.getloadavg())}  # at the end of the run
    m = re.search(r"Silicon (finished verification successfully|found (\d+) errors?) in (?:(\d+)m:)?([\d.]+)s", out)
    if m:
        entry["reported_s"] = 60 * int(m.group(3) or 0) + float(m.group(4))
        entry["verdict"] = "verified" if m.group(2) is None else f"{m.group(2)} errors"
    elif not timeout:
        entry["verdict"] = "unknown: " + " | ".join(out.strip().splitlines()[-2:])[:200]
    return entry


def silicon_cell(sil):
    if not sil:
        return "n/a", "n/a", "n/a"
    wall = (">" if sil.get("timeout") else "") + fmt(sil["wall_s"])
    if "README" in sil.get("source", ""):
        wall += "†"
    readme = fmt(sil.get("readme_wall_s")) if sil.get("readme_wall_s") is not None else "n/a"
    rep = fmt(sil.get("reported_s")) if sil.get("reported_s") is not None else "n/a"
    return wall, readme, rep


def sil_wall(sil):
    """The smaller (conservative) of Silicon's wall time measured here and the README's."""
    return min(sil["wall_s"], sil.get("readme_wall_s", sil["wall_s"]))


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7, help="timed runs per program (default 7)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    ap.add_argument("--slow", type=float, default=10.0,
                    help="seconds: a program whose first run takes longer gets --slow-runs runs (default 10)")
    ap.add_argument("--slow-runs", type=int, default=3, help="timed runs of a slow program, its first run included (default 3), no warm-up")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "idf-verify"))
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared"),
                    help="the shared folder with suite/ and peers/ (default ../shared)")
    ap.add_argument("--only", help="regex: time only programs whose name matches")
    ap.add_argument("--no-hyperfine", action="store_true", help="use time.perf_counter even if hyperfine exists")
    ap.add_argument("--no-jobs", action="store_true", help="skip the --jobs experiment")
    ap.add_argument("--jobs-only", action="store_true", help="only the --jobs experiment")
    ap.add_argument("--silicon", action="store_true", help="run Silicon on programs without a cached time")
    ap.add_argument("--silicon-refresh", action="store_true", help="with --silicon: rerun even cached ones")
    ap.add_argument("--silicon-budget", type=float, default=120, help="seconds per Silicon run before it is killed")
    ap.add_argument("--silicon-only", action="store_true", help="only run Silicon (no idf-verify timing)")
    ap.add_argument("--no-rerun", action="store_true",
                    help="do not time a second time the programs that miss a target (by default they are, and the "
                         "lower median is kept, both shown: the machine is shared)")
    ap.add_argument("--stats", action="store_true", help="also report the slowest member of each workload (--stats)")
    ap.add_argument("--markdown", help="also write the report to this file")
    ap.add_argument("--readme", action="store_true", help="also write the report into README.md, section ## Performance")
    ap.add_argument("--json", help="also write all measurements to this JSON file")
    args = ap.parse_args()

    if not args.silicon_only and not os.access(args.bin, os.X_OK):
        sys.exit(f"{args.bin} not found: run cargo build --release first")
    peers, suite = os.path.join(args.shared, "peers"), os.path.join(args.shared, "suite")
    tmp = tempfile.mkdtemp(prefix="idf-bench-")
    try:
        return run(args, peers, suite, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(args, peers, suite, tmp):
    BIN[0] = args.bin
    RUNS[0] = args.runs
    wl = os.path.join(tmp, "workloads")
    os.makedirs(wl)
    for fam, n in WORKLOADS:
        if fam in LOCAL_WORKLOADS:
            gen = LOCAL_WORKLOADS[fam]
            subprocess.run([sys.executable, gen[0], wl] + gen[1:] + [str(n)], check=True)
        else:
            subprocess.run([sys.executable, os.path.join(peers, "workloads.py"), wl, fam, str(n)], check=True)

    progs = []
    for fam, n in WORKLOADS:
        name = f"{fam}_{n}"
        vpr = os.path.join(wl, name + ".vpr")
        group = "solver" if fam in SOLVER_FAMILIES else "feature" if fam in FEATURE_FAMILIES else "workload"
        progs.append(Program(name, group, os.path.join(wl, name + ".jv"),
                             vpr if os.path.exists(vpr) else None))
        if fam == "elseif":
            jv = os.path.join(wl, name + ".jv")
            progs.append(Program(name + " --no-merge", "workload", jv, args=["--no-merge"]))
            subprocess.run([sys.executable, ELSEIF_GEN, wl, str(n), "--bad"], check=True)
            progs.append(Program(name + "_bad", "workload", os.path.join(wl, name + "_bad.jv"), args=["--expect"]))
    for f in sorted(os.listdir(suite)):
        if f.endswith(".jv"):
            vpr = os.path.join(peers, "suite", f[:-3] + ".vpr")
            progs.append(Program("suite/" + f, "suite", os.path.join(suite, f),
                                 vpr if os.path.exists(vpr) else None, ["--expect"]))
    one = os.path.join(wl, "one_member.jv")
    with open(one, "w") as f:
        f.write(ONE_MEMBER)
    progs.append(Program("one_member", "workload", one))
    examples = sorted(f for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".jv"))
    for f in examples:
        progs.append(Program("examples/" + f, "example", os.path.join(ROOT, "examples", f)))
    if args.only:
        progs = [p for p in progs if re.search(args.only, p.name)]
    if args.jobs_only:
        progs = []

    # ---- Silicon (cached, optionally measured)
    cache = load_cache()
    for p in progs:
        if not p.vpr:
            continue
        key = p.name[:-3] if p.name.endswith(".jv") else p.name
        entry = cache["programs"].get(key)
        stale = entry and "sha" in entry and entry["sha"] != sha(p.vpr)
        if args.silicon and (entry is None or stale or args.silicon_refresh):
            print(f"silicon {key} (budget {args.silicon_budget:.0f} s) ...", file=sys.stderr, flush=True)
            entry = run_silicon(os.path.join(peers, "silicon"), p.vpr, args.silicon_budget)
            print(f"  wall {entry['wall_s']} s, reported {entry.get('reported_s')}, "
                  f"{'TIMEOUT' if entry['timeout'] else entry.get('verdict')}", file=sys.stderr, flush=True)
            old = cache["programs"].get(key)
            if old and not stale and "sha" in old:
                # several runs on a shared, noisy machine: keep the fastest complete one, list all
                entry["all_wall_s"] = old.get("all_wall_s", [old["wall_s"]]) + [entry["wall_s"]]
                if "readme_wall_s" in old:
                    entry["readme_wall_s"] = old["readme_wall_s"]
                if not old.get("timeout") and (entry["timeout"] or old["wall_s"] <= entry["wall_s"]):
                    entry = dict(old, all_wall_s=entry["all_wall_s"])
                entry["source"] = (f"measured {datetime.date.today().isoformat()}, fastest complete run of "
                                   f"{len(entry['all_wall_s'])}")
            cache["programs"][key] = entry
            save_cache(cache)
        elif stale:
            entry = None
        p.silicon = entry
    if args.silicon_only:
        return 0

    # ---- idf-verify
    use_hf = have_hyperfine() and not args.no_hyperfine
    print(f"timing {len(progs)} programs, {args.runs} runs each ({'hyperfine' if use_hf else 'perf_counter'}) ...",
          file=sys.stderr, flush=True)
    for p in progs:
        cmd = [args.bin, "--no-cache"] + p.args + [p.jv]
        want_stats = (args.stats and p.group == "workload") or p.group in ("solver", "feature")
        # The first run checks the exit status (and gives --stats where wanted); it is timed
        # to tell slow programs, whose first run then counts as one of their --slow-runs.
        t0 = time.perf_counter()
        if want_stats:
            first = subprocess.run([args.bin, "--no-cache", "--stats", "--format", "json"] + p.args + [p.jv],
                                   capture_output=True, text=True)
            members = [m for f in json.loads(first.stdout)["files"] for m in f["members"]]
            # a member that ran out of time has no stats
            timed = [m for m in members if "stats" in m]
            p.stats = max(timed, key=lambda m: m["time_ms"]) if timed else None
            p.totals = {k: sum(m["stats"][k] for m in timed) for k in ("queries", "z3_ms", "total_ms")}
            p.totals["members"] = len(members)
            p.totals["no_stats"] = len(members) - len(timed)
        else:
            first = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        first_s = time.perf_counter() - t0
        p.rc = first.returncode
        if first_s > args.slow:
            p.runs = args.slow_runs
            times, p.cpu = time_commands([cmd], args.slow_runs - 1, 0, use_hf)[0] if args.slow_runs > 1 else ([], None)
            p.times = [first_s] + times
        else:
            p.runs = args.runs
            p.times, p.cpu = time_commands([cmd], args.runs, args.warmup, use_hf)[0]
        p.median, p.min, p.max = statistics.median(p.times), min(p.times), max(p.times)
        print(f"  {p.name:34} {fmt(p.median):>9}  (min {fmt(p.min)}, max {fmt(p.max)})", file=sys.stderr, flush=True)

    if not args.no_rerun:
        for p in suspicious(progs):
            if p.runs != args.runs:
                continue  # a slow program (--slow) is not timed again
            warm = args.warmup if p.runs == args.runs else 0
            t, cpu = time_commands([[args.bin, "--no-cache"] + p.args + [p.jv]], p.runs, warm, use_hf)[0]
            p.rerun = statistics.median(t)
            print(f"  rerun {p.name:28} {fmt(p.rerun):>9}  (first {fmt(p.median)})", file=sys.stderr, flush=True)
            if p.rerun < p.median:
                p.first, p.times, p.cpu = p.times, t, cpu
                p.median, p.min, p.max = statistics.median(t), min(t), max(t)

    jobs = None
    if args.jobs_only or not (args.no_jobs or args.only):
        jobs = jobs_experiment(args, tmp, examples, use_hf)

    report = render(args, progs, jobs, use_hf)
    print(report)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(report)
    if args.readme:
        write_readme(report, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"programs": [{"name": p.name, "group": p.group, "rc": p.rc, "times_s": p.times, "cpu_s": p.cpu,
                                     "first_times_s": p.first, "rerun_median_s": p.rerun,
                                     "median_s": p.median, "runs": p.runs, "silicon": p.silicon, "stats": p.stats,
                                     "totals": p.totals}
                                    for p in progs], "jobs": jobs}, f, indent=2)
    return 0


README_INTRO = """\
Measured by `benches/run.py` (a report, not a gate: no test asserts a time). It writes the
scalable workloads of `../shared/peers/workloads.py` (chain 10–1000, paths 8–14, list 5–40)
and of `benches/visitor_workload.py` (visitor 10–1000: a tree of N objects built in
straight-line code and visited through the interfaces of `examples/visitor.jv`, with a
Viper encoding of its predicate family and dispatch) and of `benches/solver_workloads.py`
(arith, sorted, arrayloop, members: proofs that need the solver) and of
`benches/feature_workloads.py` (halfread, dcfill, qpread, bsearch, sortedins, seqbuild at
10, 100, 1000, dcchain and sortedchain at 5, 10, 20: LANGUAGE.md sections 11-15, each with
a Viper encoding; a program whose first run exceeds `--slow` seconds is timed
`--slow-runs` times, that run included) into a temporary folder and times whole `target/release/idf-verify` processes on them, on
every `../shared/suite/*.jv` program (with `--expect`) and on every `examples/*.jv`, then
`--jobs 1` against `--jobs 2` on a folder of 40 example files. Silicon's times come from
`benches/silicon-times.json` (one run per program, made with `--silicon`; Silicon is slow:
chain 100 takes ten minutes, so runs are killed at a budget and give lower bounds). The
cached Silicon times were measured on this machine while it was as loaded, and are 2–4x the
figures of `../shared/peers/README.md`; both are shown, and the ratios use the smaller.

```
cargo build --release
python3 benches/run.py --stats --readme      # this section (--runs N, default 7)
python3 benches/run.py --silicon             # also run Silicon where no time is cached
```

The machine is shared with other engineers' builds, so times are noisy: the load average
is given with each run (above 2 on 2 cores means idf-verify shared the CPUs), the CPU column
(user + system time) is less affected by other load than wall time, and the `--jobs`
control (two independent processes at once) shows how much parallelism the machine had to
give at that moment. `--bin PATH` times another build (e.g. a clean checkout of a commit).
"""


def write_readme(report, args):
    path = os.path.join(ROOT, "README.md")
    with open(path) as f:
        text = f.read()
    section = "## Performance\n\n" + README_INTRO + "\n" + report.rstrip() + "\n"
    m = re.search(r"^## Performance\n.*?(?=^## |\Z)", text, flags=re.S | re.M)
    if m:
        rest = text[m.end():]
        text = text[:m.start()] + section + ("\n" + rest if rest else "")
    else:
        text = text.rstrip() + "\n\n" + section
    with open(path, "w") as f:
        f.write(text)


def suspicious(progs):
    """Programs that miss a target: worth a second measurement on a shared machine."""
    by = {p.name: p for p in progs}
    out = [p for p in progs if p.group == "suite" and p.median >= SUITE_LIMIT]
    for name, limit in (("chain_1000", CHAIN_1000_LIMIT), ("paths_14", PATHS_14_LIMIT), ("list_40", LIST_40_LIMIT)):
        if name in by and by[name].median >= limit:
            out.append(by[name])
    if "chain_500" in by and "chain_1000" in by and by["chain_1000"].median > CHAIN_LINEAR_LIMIT * by["chain_500"].median:
        out += [by["chain_500"], by["chain_1000"]]
    out += [p for p in progs if p.silicon and sil_wall(p.silicon) / p.median < SILICON_RATIO]
    return list(dict.fromkeys(out))


def jobs_experiment(args, tmp, examples, use_hf):
    folder = os.path.join(tmp, "jobs40")
    os.makedirs(folder)
    for i in range(40):
        f = examples[i % len(examples)]
        shutil.copy(os.path.join(ROOT, "examples", f), os.path.join(folder, f"{i:02}_{f}"))
    cmds = [[args.bin, "--no-cache", "--jobs", str(j), folder] for j in (1, 2)]
    rcs = [subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode for c in cmds]
    print("timing --jobs 1 / --jobs 2 on 40 example files ...", file=sys.stderr, flush=True)
    (t1, c1), (t2, c2) = time_commands(cmds, args.runs, args.warmup, use_hf)
    m1, m2 = statistics.median(t1), statistics.median(t2)
    print(f"  --jobs 1 {fmt(m1)}, --jobs 2 {fmt(m2)}, speed-up {m1 / m2:.2f}x", file=sys.stderr, flush=True)
    # Control: how much parallelism does the (shared) machine give right now? The same 40
    # files as two halves, verified by two `--jobs 1` processes one after the other and
    # then at the same time. Their ratio is the best `--jobs 2` could do at this moment.
    halves = [os.path.join(tmp, f"half{h}") for h in (0, 1)]
    for h, d in enumerate(halves):
        os.makedirs(d)
        for f in sorted(os.listdir(folder))[h::2]:
            shutil.copy(os.path.join(folder, f), d)
    seq, par = [], []
    for r in range(args.warmup + args.runs):
        t0 = time.perf_counter()
        for d in halves:
            subprocess.run([args.bin, "--no-cache", "--jobs", "1", d], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t_seq = time.perf_counter() - t0
        t0 = time.perf_counter()
        procs = [subprocess.Popen([args.bin, "--no-cache", "--jobs", "1", d], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) for d in halves]
        for pr in procs:
            pr.wait()
        t_par = time.perf_counter() - t0
        if r >= args.warmup:
            seq.append(t_seq)
            par.append(t_par)
    control = statistics.median(seq) / statistics.median(par)
    print(f"  control: two processes on the halves, sequential {fmt(statistics.median(seq))}, "
          f"concurrent {fmt(statistics.median(par))}, speed-up {control:.2f}x", file=sys.stderr, flush=True)
    return {"files": 40, "from": f"examples/*.jv ({len(examples)} files) copied round-robin", "rc": rcs,
            "jobs1_s": t1, "jobs2_s": t2, "jobs1_cpu_s": c1, "jobs2_cpu_s": c2, "jobs1_median_s": m1, "jobs2_median_s": m2, "speedup": m1 / m2,
            "control_seq_s": seq, "control_par_s": par, "control_speedup": control}


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        with open("/proc/meminfo") as f:
            mem = int(next(l.split()[1] for l in f if l.startswith("MemTotal"))) // (1024 * 1024)
    except (OSError, StopIteration):
        mem = "?"
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{os.cpu_count()} cores ({cpu}), {mem} GiB RAM, {platform.system()} {platform.release()}; " \
           f"load average at the end of the run {load}"


def source_of(binary):
    """The commit the binary was built from, as far as the checkout around it tells."""
    d = os.path.dirname(os.path.abspath(binary))
    while d != os.path.dirname(d) and not os.path.exists(os.path.join(d, ".git")):
        d = os.path.dirname(d)
    if not os.path.exists(os.path.join(d, ".git")):
        return f"binary {binary}"
    git = ["git", "-C", d]
    commit = subprocess.run(git + ["log", "-1", "--format=%h (%cd)", "--date=format:%Y-%m-%d %H:%M"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no", "src", "build.rs", "grammar",
                                  "Cargo.toml", "Cargo.lock"], capture_output=True, text=True).stdout.strip()
    return f"release build of commit {commit}" + (" plus uncommitted changes in the working tree" if dirty else "")


def render(args, progs, jobs, use_hf):
    by = {p.name: p for p in progs}
    cmd = " ".join(["benches/run.py"] + [quote(a) for a in sys.argv[1:]])
    lines = [f"`{cmd}`: idf-verify {source_of(args.bin)}. Medians of whole-process wall time over {args.runs} "
             f"runs ({args.warmup} warm-up), measured with "
             f"{'hyperfine -N' if use_hf else 'time.perf_counter around subprocess'}. Machine: {machine()}.", ""]
    if progs:
        lines += table(progs)
    if jobs:
        lines += [f"`--jobs`: a folder of 40 example files ({jobs['from']}): `--jobs 1` {fmt(jobs['jobs1_median_s'])}, "
                  f"`--jobs 2` {fmt(jobs['jobs2_median_s'])}, speed-up {jobs['speedup']:.2f}x (CPU per run "
                  f"{fmt(jobs['jobs1_cpu_s'])} / {fmt(jobs['jobs2_cpu_s'])}) "
                  f"(exit {jobs['rc'][0]} / {jobs['rc'][1]}). Control for the machine's free parallelism at "
                  f"that moment: the two halves of the folder verified by two `--jobs 1` processes at the same "
                  f"time are {jobs['control_speedup']:.2f}x faster than one after the other (on an idle 2-core "
                  f"machine about 2x; much less means other load, and `--jobs 2` cannot do better).", ""]
    return "\n".join(targets(by, progs, jobs, lines))


def table(progs):
    lines = ["| Program | idf-verify median | min – max | CPU | exit | Silicon wall | Silicon wall (peers README) | "
             "Silicon reported | wall ratio | reported ratio |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in progs:
        wall, readme, rep = silicon_cell(p.silicon)
        ratio = rratio = "n/a"
        if p.silicon and p.median:
            lower = p.silicon.get("timeout") and sil_wall(p.silicon) == p.silicon["wall_s"]
            ratio = (">" if lower else "") + f"{sil_wall(p.silicon) / p.median:.0f}x"
            if p.silicon.get("reported_s") is not None:
                rratio = f"{p.silicon['reported_s'] / p.median:.0f}x"
        med = fmt(p.median)
        if p.runs is not None and p.runs != RUNS[0]:
            med += f" ({p.runs} runs)"
        if p.rerun is not None:
            other = statistics.median(p.first) if p.first else p.rerun
            med += f" (rerun; other {fmt(other)})"
        lines.append(f"| {p.name} | {med} | {fmt(p.min)} – {fmt(p.max)} | {fmt(p.cpu)} | {p.rc} | {wall} | {readme} | "
                     f"{rep} | {ratio} | {rratio} |")
    lines += ["", "CPU: mean user + system time of one run (all threads; less sensitive to other load than "
              "wall time). Exit: the exit status of idf-verify (suite programs are run with `--expect`, so 0 means every "
              "expected error was reported). Silicon: one run each, from `benches/silicon-times.json`; "
              "† = figure from `../shared/peers/README.md` (wall time only), > = killed at the budget "
              "(a lower bound). Silicon wall (peers README): the figure of `../shared/peers/README.md`, measured "
              "on a quieter machine (suite programs: the low end of its 3.8–8.0 s range). Wall ratio = the smaller "
              "of the two Silicon wall times / idf-verify median; reported ratio = Silicon's self-reported "
              "verification time / idf-verify median. \"(k runs)\": a program slower than --slow on its first run, "
              "timed k times (that run included) without warm-up; its CPU column is over the later runs. \"rerun\": a program that missed a target was timed "
              "again and the lower of the two medians is shown (other: the higher).", ""]
    return lines


def targets(by, progs, jobs, lines):
    res = []

    def target(desc, ok, detail):
        res.append(f"| {desc} | {'n/a' if ok is None else 'PASS' if ok else 'FAIL'} | {detail} |")

    suite = [p for p in progs if p.group == "suite"]
    if suite:
        slow = [p for p in suite if p.median >= SUITE_LIMIT]
        worst = max(suite, key=lambda p: p.median)
        target(f"every suite program < {fmt(SUITE_LIMIT)}", not slow,
               f"slowest {worst.name} {fmt(worst.median)}" +
               (f"; over: {', '.join(f'{p.name[6:]} {fmt(p.median)}' for p in slow)}" if slow else ""))
    if "one_member" in by:
        p = by["one_member"]
        target(f"a one-member file (one Z3 query) < {fmt(ONE_MEMBER_LIMIT)}", p.median < ONE_MEMBER_LIMIT,
               fmt(p.median))
    c1k, c10k = by.get("chain_1000"), by.get("chain_10000")
    if c10k:
        target(f"chain 10000 < {fmt(CHAIN_10000_LIMIT)}", c10k.median < CHAIN_10000_LIMIT, fmt(c10k.median))
        rss = peak_rss_mib([BIN[0], "--no-cache", c10k.jv])
        target(f"chain 10000 < {CHAIN_10000_MIB} MiB peak (max RSS)", rss < CHAIN_10000_MIB, f"{rss:.0f} MiB")
        if c1k:
            r = c10k.median / c1k.median
            target(f"chain 10000 ≤ {CHAIN_10000_LINEAR:.0f}x chain 1000 (linear)", r <= CHAIN_10000_LINEAR,
                   f"{fmt(c10k.median)} / {fmt(c1k.median)} = {r:.1f}x")
    for k, limit in (("paths_20", PATHS_20_LIMIT), ("paths_200", PATHS_200_LIMIT)):
        if k in by:
            target(f"{k.replace('_', ' ')} < {fmt(limit)}", by[k].median < limit, fmt(by[k].median))
    l2, l1k = by.get("list_200"), by.get("list_1000")
    if l1k:
        target(f"list 1000 < {fmt(LIST_1000_LIMIT)}", l1k.median < LIST_1000_LIMIT, fmt(l1k.median))
        if l2:
            r = l1k.median / l2.median
            target(f"list 1000 ≤ {LIST_1000_LINEAR:.0f}x list 200 (linear)", r <= LIST_1000_LINEAR,
                   f"{fmt(l1k.median)} / {fmt(l2.median)} = {r:.1f}x")
    e5, e5k = by.get("elseif_500"), by.get("elseif_5000")
    if e5 and e5k:
        r = e5k.median / e5.median
        target(f"elseif 5000 ≤ {ELSEIF_LINEAR:.0f}x elseif 500 (linear)", r <= ELSEIF_LINEAR,
               f"{fmt(e5k.median)} / {fmt(e5.median)} = {r:.1f}x")
    for n in ELSEIF_SIZES:
        m, s = by.get(f"elseif_{n}"), by.get(f"elseif_{n} --no-merge")
        if m and s:
            r = m.median / s.median
            target(f"elseif {n} merged ≤ {ELSEIF_MERGE_FACTOR:.0f}x --no-merge", r <= ELSEIF_MERGE_FACTOR,
                   f"{fmt(m.median)} / {fmt(s.median)} = {r:.2f}x")
    c5, c10 = by.get("chain_500"), by.get("chain_1000")
    if c10:
        target(f"chain 1000 < {fmt(CHAIN_1000_LIMIT)}", c10.median < CHAIN_1000_LIMIT, fmt(c10.median))
    if c5 and c10:
        r = c10.median / c5.median
        target(f"chain 1000 ≤ {CHAIN_LINEAR_LIMIT}x chain 500", r <= CHAIN_LINEAR_LIMIT,
               f"{fmt(c10.median)} / {fmt(c5.median)} = {r:.2f}x")
    if "paths_14" in by:
        p = by["paths_14"]
        target(f"paths 14 < {fmt(PATHS_14_LIMIT)}", p.median < PATHS_14_LIMIT, fmt(p.median))
    if "list_40" in by:
        p = by["list_40"]
        target(f"list 40 < {fmt(LIST_40_LIMIT)}", p.median < LIST_40_LIMIT, fmt(p.median))
    withsil = [p for p in progs if p.silicon]
    nosil = [p.name for p in progs if p.vpr and not p.silicon]
    if withsil:
        worst = min(withsil, key=lambda p: sil_wall(p.silicon) / p.median)
        r = sil_wall(worst.silicon) / worst.median
        bad = [p for p in withsil if sil_wall(p.silicon) / p.median < SILICON_RATIO]
        target(f"≥ {SILICON_RATIO:.0f}x faster than Silicon's wall time", not bad,
               f"on {len(withsil)} programs with a Silicon time; lowest ratio {r:.0f}x ({worst.name})" +
               (f"; below: {', '.join(p.name for p in bad)}" if bad else "") +
               (f"; no Silicon time for {', '.join(nosil)}" if nosil else ""))
    withrep = [p for p in progs if p.silicon and p.silicon.get("reported_s") is not None]
    if withrep:
        worst = min(withrep, key=lambda p: p.silicon["reported_s"] / p.median)
        bad = [p for p in withrep if p.median >= p.silicon["reported_s"]]
        target("faster than Silicon's own reported verification time", not bad,
               f"on {len(withrep)} programs; lowest ratio {worst.silicon['reported_s'] / worst.median:.0f}x "
               f"({worst.name})" + (f"; not faster: {', '.join(p.name for p in bad)}" if bad else ""))
    if jobs:
        target(f"`--jobs 2` ≥ {JOBS_SPEEDUP}x faster than `--jobs 1` (40 files)", jobs["speedup"] >= JOBS_SPEEDUP,
               f"{fmt(jobs['jobs1_median_s'])} / {fmt(jobs['jobs2_median_s'])} = {jobs['speedup']:.2f}x "
               f"(control, two processes: {jobs['control_speedup']:.2f}x)")
    lines += ["| Target | Result | Figures |", "|---|---|---|"] + res + [""]

    lines += solver_table(progs)
    lines += solver_table(progs, "feature", FEATURE_TITLE)
    stats = [p for p in progs if p.stats and p.group == "workload"]
    if stats:
        lines += ["Slowest member per workload (`idf-verify --stats`):", "",
                  "| Workload | member | time | in Z3 | outside Z3 | paths | branches | queries | pushes | chunks max |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for p in stats:
            m, s = p.stats, p.stats["stats"]
            lines.append(f"| {p.name} | {m['name']} | {m['time_ms']:.1f} ms | {s['z3_ms']:.1f} ms | "
                         f"{s['total_ms'] - s['z3_ms']:.1f} ms | {s['paths']} | {s['branches']} | {s['queries']} | "
                         f"{s['pushes']} | {s['chunks_max']} |")
        lines.append("")
    return lines


SOLVER_TITLE = ("Workloads whose proofs need the solver (`benches/solver_workloads.py`; each has a failing "
                "sibling, checked by `tests/programs/verify/bench/`): growth and solver queries "
                "(`idf-verify --stats`, summed over the file's members):")
FEATURE_TITLE = ("Workloads of LANGUAGE.md sections 11-15 (`benches/feature_workloads.py`: fractions, array "
                 "segments, quantified permissions, value quantifiers, sequences): growth and solver queries "
                 "(`idf-verify --stats`, summed over the file's members):")


def solver_table(progs, group="solver", title=SOLVER_TITLE):
    """Growth of the solver (or feature) workloads: each size against the family's previous
    one, and the solver queries of the whole file (`--stats`, summed over members)."""
    rows = [p for p in progs if p.group == group and p.totals]
    if not rows:
        return []
    lines = [title, "",
             "| Workload | members | median | × time vs previous size | × size | queries | in Z3 (sum) | exit |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    prev = {}
    for p in rows:
        fam, n = p.name.rsplit("_", 1)
        n = int(n)
        grow = size = ""
        if fam in prev:
            pn, pm = prev[fam]
            grow, size = f"{p.median / pm:.1f}x", f"{n / pn:.1f}x"
        prev[fam] = (n, p.median)
        t = p.totals
        queries = f"{t['queries']}" + (f" (+{t['no_stats']} members without stats)" if t.get("no_stats") else "")
        lines.append(f"| {p.name} | {t['members']} | {fmt(p.median)} | {grow} | {size} | {queries} | "
                     f"{fmt(t['z3_ms'] / 1000)} | {p.rc} |")
    return lines + [""]


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Turns fastpath-driver's lines (see run) into the table of docs/FAST-PATHS.md.

For every case, file system and fast path: the median ops/s with it (all switches on) and without
it (its switch off), and the median of the per-round ratios with/without (each ratio from runs
seconds apart on the same file system), with the lowest and highest. A ratio above 1 means the fast
path makes the workload faster. Overwrite and remove cases also give the ratio until `trash/` is
empty again ("settled"); split cases the slowest window of 2,000 puts and the buckets at the end.

With a second file (an earlier run of the same cases), each cell also shows that run's median
ratio in parentheses, as a check that a figure repeats.

usage: report.py RESULTS.jsonl [EARLIER.jsonl]
"""
import json
import statistics
import sys

PATHS = {
    "no-anonymous-temps": "anonymous temp files",
    "no-claim-name-first": "claim-name-first",
    "no-trash-link": "hard link into trash/",
    "no-remove-into-trash": "remove into trash/",
    "no-rightmost-split": "rightmost split",
    "no-hashed-cut": "hashed cut (vs median)",
    "no-inline-cached-reads": "inline cached reads",
    "all-again": "(control: all on, run twice)",
}


def load(path):
    header, runs, wall = {}, [], None
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        if "case" in record:
            runs.append(record)
        elif "wall_seconds" in record:
            wall = record["wall_seconds"]
        else:
            header = record
    return header, runs, wall


def median_ratios(runs, key="seconds", window=False):
    """(case, fs, variant) -> the median of the per-round ratios all/variant."""
    by = {(r["case"], r["fs"], r["variant"], r["round"]): r for r in runs}
    ratios = {}
    for (case, fs, variant, n), r in by.items():
        base = by.get((case, fs, "all", n))
        if variant == "all" or not base:
            continue
        if window:
            ratio = base["worstWindowOpsPerSecond"] / r["worstWindowOpsPerSecond"]
        else:
            ratio = r[key] / base[key]
        ratios.setdefault((case, fs, variant), []).append(ratio)
    return {k: statistics.median(v) for k, v in ratios.items()}


def main(path, earlier_path=None):
    header, runs, wall = load(path)
    earlier = {}
    if earlier_path:
        _, earlier_runs, _ = load(earlier_path)
        earlier = {
            "seconds": median_ratios(earlier_runs),
            "settledSeconds": median_ratios(earlier_runs, key="settledSeconds"),
            "window": median_ratios([r for r in earlier_runs if r.get("worstWindowOpsPerSecond")], window=True),
        }
    cases = list(dict.fromkeys(r["case"] for r in runs))
    systems = list(dict.fromkeys(r["fs"] for r in runs))
    by = {(r["case"], r["fs"], r["variant"], r["round"]): r for r in runs}

    def rate(r, key="seconds"):
        return r["ops"] / r[key]

    def cell(case, fs, variant, key="seconds", window=False):
        rounds = sorted({r["round"] for r in runs if r["case"] == case and r["fs"] == fs})
        pairs = [(by.get((case, fs, "all", n)), by.get((case, fs, variant, n))) for n in rounds]
        pairs = [(a, b) for a, b in pairs if a and b]
        if not pairs:
            return "–"
        if window:
            with_ = [a["worstWindowOpsPerSecond"] for a, _ in pairs]
            without = [b["worstWindowOpsPerSecond"] for _, b in pairs]
        else:
            with_ = [rate(a, key) for a, _ in pairs]
            without = [rate(b, key) for _, b in pairs]
        ratios = [w / o for w, o in zip(with_, without)]
        text = "%s / %s (**%.2f×** [%.2f–%.2f])" % (
            fmt(statistics.median(with_)), fmt(statistics.median(without)),
            statistics.median(ratios), min(ratios), max(ratios))
        previous = earlier.get("window" if window else key, {}).get((case, fs, variant))
        return text + (" (%.2f×)" % previous if previous is not None else "")

    print("Run: %s, %s; base %s" % (header.get("date", "?"), header.get("machine", "?"), header.get("base", "?")[:10]))
    print("File systems: ext4-loop = %s; disk = %s" % (header.get("loop", "?"), header.get("disk", "?")))
    rounds = max((r["round"] for r in runs), default=-1) + 1
    print("Rounds: %d (split cases: fewer, see the lines); wall time %s s" % (rounds, wall))
    print()
    print("| fast path | workload | " + " | ".join("%s: with / without ops/s (ratio [range])" % fs for fs in systems) + " |")
    print("|---|---|" + "---|" * len(systems))
    for case in cases:
        variants = list(dict.fromkeys(r["variant"] for r in runs if r["case"] == case and r["variant"] != "all"))
        for variant in variants:
            name = PATHS.get(variant, variant)
            print("| %s | %s | %s |" % (name, case, " | ".join(cell(case, fs, variant) for fs in systems)))
            if case.startswith(("overwrite", "remove")):
                print("| %s | %s, until trash/ is empty | %s |" % (
                    name, case, " | ".join(cell(case, fs, variant, key="settledSeconds") for fs in systems)))
            if any(r.get("worstWindowOpsPerSecond") for r in runs if r["case"] == case):
                print("| %s | %s, slowest 2,000 puts | %s |" % (
                    name, case, " | ".join(cell(case, fs, variant, window=True) for fs in systems)))
                buckets = {}
                for r in runs:
                    if r["case"] == case and r.get("buckets"):
                        buckets.setdefault(r["variant"], set()).add(r["buckets"])
                print("| | buckets at the end: %s | | |" % ", ".join(
                    "%s %s" % ("with" if v == "all" else "without", "/".join(map(str, sorted(b)))) for v, b in buckets.items()))


def fmt(value):
    return "{:,.0f}".format(value) if value >= 100 else "%.1f" % value


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(*sys.argv[1:])

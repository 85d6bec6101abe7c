#!/usr/bin/env python3
# Copyright AppendLog contributors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Median new/old ratios of the paired rounds that tools/paired-rounds.sh ran, each with a 95 %
bootstrap interval (10,000 resamplings of the pairs), from the results.md of every run: the
appendlog row's records/s, CPU time per record (the JVM's and the counting task's), checkpoint
p99, checkpointed bytes and heap, the index and change buffer of its heap breakdown, and their
share of hashmap's heap in the same JVM.
Usage: tools/paired-rounds.py OUT_DIR"""

import glob
import os
import random
import re
import statistics
import sys

UNITS = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}


def number(cell):
    match = re.match(r"^(-?[\d.]+)\s*(k|M|G|kB|MB|GB|B)?$", cell.strip())
    return float(match.group(1)) * UNITS[match.group(2) or ""] if match else None


def tables(path):
    found, rows = [], []
    for line in open(path, encoding="utf-8"):
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows:
            found.append(rows)
            rows = []
    return found + ([rows] if rows else [])


def row(table, backend):
    return next(dict(zip(table[0], r)) for r in table[2:] if r[1] == backend)


def figures(run_dir):
    found = tables(os.path.join(run_dir, "results.md"))
    runs, breakdown = found[0], found[-1]
    a, h = row(runs, "appendlog"), row(runs, "hashmap")
    parts = row(breakdown, "appendlog")
    return {
        "records/s": number(a["records/s"]),
        "CPU µs / record": number(a["CPU µs / record"]),
        "task CPU µs / record": number(a["task CPU µs / record"]),
        "ckpt p99 ms": number(a["ckpt p99 ms"]),
        "incremental / ckpt": number(a["incremental / ckpt"]),
        "heap": number(a["heap"]),
        "index": number(parts["index"]),
        "change buffer": number(parts["change buffer"]),
        "hashmap heap": number(h["heap"]),
    }


def shown(name, value):
    if name == "records/s":
        return f"{value / 1e3:.1f} k"
    if "µs" in name:
        return f"{value:.2f}"
    if name.endswith("ms"):
        return f"{value:.0f}"
    return f"{value / 1e6:.1f} MB"


def interval(ratios, rounds=10_000):
    rng = random.Random(1)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(rounds))
    return medians[int(rounds * 0.025)], medians[int(rounds * 0.975) - 1]


def main(out):
    pairs = []
    for old in sorted(glob.glob(os.path.join(out, "pair*-old"))):
        new = old[: -len("old")] + "new"
        if os.path.isfile(os.path.join(old, "results.md")) and os.path.isfile(os.path.join(new, "results.md")):
            pairs.append((figures(old), figures(new)))
    print(f"{len(pairs)} pairs")
    print("| figure | old (median) | new (median) | new/old (median) | 95 % interval |")
    print("|---|---:|---:|---:|---:|")
    for name in ["records/s", "CPU µs / record", "task CPU µs / record", "ckpt p99 ms", "incremental / ckpt", "heap", "index", "change buffer"]:
        ratios = [n[name] / o[name] for o, n in pairs if o[name] and n[name]]
        low, high = interval(ratios)
        print(
            f"| {name} | {shown(name, statistics.median(o[name] for o, _ in pairs))} "
            f"| {shown(name, statistics.median(n[name] for _, n in pairs))} "
            f"| {statistics.median(ratios):.2f}x | {low:.2f}x-{high:.2f}x |"
        )
    for label, side in (("old", 0), ("new", 1)):
        share = [(p[side]["index"] + p[side]["change buffer"]) / p[side]["hashmap heap"] for p in pairs]
        whole = [p[side]["heap"] / p[side]["hashmap heap"] for p in pairs]
        print(
            f"{label}: index and change buffer {statistics.median(share):.0%} of hashmap's heap,"
            f" appendlog's heap {statistics.median(whole):.2f}x hashmap's (medians)"
        )


if __name__ == "__main__":
    main(sys.argv[1])

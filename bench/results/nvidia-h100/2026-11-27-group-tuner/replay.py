#!/usr/bin/env python3
"""Replays the committed rule of tuning::pickSnapshotGroup (copies = bytes
over one measured host-to-device bandwidth; pipelined cost per snapshot;
ties within 5% to the lesser aggregation per snapshot) on the candidates
measured in second/ (aggregations and bytes), and reads each pick's
ratios from this session's H100 runs at fixed group sizes (second/, first/
and ../2026-11-27-short-rows/old.log, the kernel as committed).

usage: replay.py (from this directory); writes replay.md
"""
import glob
import json
import math
import re

TIE = 0.05


def candidates():
    out = []
    for path in sorted(glob.glob("second/tuned-*.json")):
        for c in json.load(open(path))["snapshot_cases"]:
            out.append(c)
    return out


def bandwidth(cases):
    # Bytes per ms of the large feature copies timed in second/.
    rates = sorted(k["feature_bytes"] / k["feature_copy_ms"]
                   for c in cases for k in c["group_choice"]["candidates"]
                   if k["feature_bytes"] > 50e6)
    return rates[len(rates) // 2]


def pick(choice, snapshots, bytes_per_ms):
    best = None
    for k in choice["candidates"]:
        s = k["group"]
        groups = -(-snapshots // s)
        left = max(0, choice["memory_budget"] - 2 * k["device_bytes"])
        cached = min(groups, left // max(1, k["resident_structure_bytes"]))
        copy = (k["feature_bytes"] + k["structure_bytes"] *
                (groups - cached) / groups) / bytes_per_ms
        k["cost"] = max(copy, k["aggregate_ms"]) / s
    for k in choice["candidates"]:
        if best is None:
            best = k
            continue
        if abs(k["cost"] - best["cost"]) > TIE * min(k["cost"], best["cost"]):
            if k["cost"] < best["cost"]:
                best = k
        else:
            a, b = k["aggregate_ms"] / k["group"], best["aggregate_ms"] / best["group"]
            if a < b or (a == b and k["group"] > best["group"]):
                best = k
    return best["group"]


LINE = re.compile(r"snapshot (\S+)\s+S(\d+)\s+(\S+)\s+w(\d+)\s+overlap \S+\s+multi\s+(\S+) ms"
                  r"\s+per-snapshot\s+(\S+) ms\s+cuSPARSE\s+(\S+) ms")


def fixed_runs():
    runs = {}
    for path in ["../2026-11-27-short-rows/old.log"] + sorted(glob.glob("first/*.log")) + \
            sorted(glob.glob("second/*.log")):
        for line in open(path):
            m = LINE.match(line)
            if m:
                multi, per, cus = map(float, m.group(5, 6, 7))
                runs[(m.group(1), int(m.group(2)), m.group(3), int(m.group(4)))] = \
                    (per / multi, cus / multi, path)
    return runs


def main():
    cases = candidates()
    bpm = bandwidth(cases)
    runs = fixed_runs()
    rows, per, cus = [], [], []
    for c in cases:
        snapshots = 61 if "england" in c["series"] else (
            8 if c["series"].startswith("rmat") else c["group_choice"]["groups"] * c["group"])
        s = pick(c["group_choice"], snapshots, bpm)
        r = runs.get((c["series"], s, c["type"], c["width"]))
        if r:
            per.append(r[0])
            cus.append(r[1])
        rows.append("| %s | %s | %d | %d | %d | %s | %s | %s |" % (
            c["series"], c["type"], c["width"], c["group"], s,
            "%.2fx" % r[0] if r else "-", "%.2fx" % r[1] if r else "-",
            r[2] if r else "not run"))

    def g(xs):
        return math.exp(sum(map(math.log, xs)) / len(xs))
    with open("replay.md", "w") as f:
        f.write("Host-to-device bandwidth (median of second/'s large copies): "
                "%.2f GB/s\n\n" % (bpm / 1e6))
        f.write("| series | type | width | second/ picked | committed rule picks | "
                "vs per-snapshot | vs cuSPARSE | ratios from |\n"
                "|---|---|--:|--:|--:|--:|--:|---|\n")
        f.write("\n".join(rows) + "\n\n")
        f.write("At the committed rule's picks (%d cases with a run): vs gnnc per "
                "snapshot geomean %.2fx, worst %.2fx; vs cuSPARSE geomean %.2fx, "
                "worst %.2fx.\n" % (len(per), g(per), min(per), g(cus), min(cus)))


if __name__ == "__main__":
    main()

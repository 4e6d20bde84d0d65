#!/usr/bin/env python3
"""Reads the flight-recorder dumps of every rank (HOSTCCL_FLIGHT_RECORDER_DIR) and says,
per communicator, where the ranks went apart:

  * the first collective sequence number at which ranks recorded different ops
    (collective, dtype, count, reduce op or root), with the ranks on each side;
  * the ranks that never arrived: the furthest op any rank started, and every rank
    that did not reach it (and what it was doing instead);
  * the ranks with no dump at all (dead, or never got that far);
  * the failure each rank reported.

Usage: flight_recorder.py <dir or files>...   (exit status 0; 2 on unreadable input)
"""
import argparse
import glob
import json
import os
import sys
from collections import defaultdict

VARIABLE = {"AllGatherV", "ReduceScatterV", "AlltoAllV", "AlltoAllVC"}


def load(paths):
    dumps = []
    for p in paths:
        files = sorted(glob.glob(os.path.join(p, "hostccl-flight.*.json"))) if os.path.isdir(p) else [p]
        for f in files:
            try:
                with open(f) as fh:
                    dumps.append(json.load(fh))
            except (OSError, ValueError) as e:
                print(f"cannot read {f}: {e}", file=sys.stderr)
                sys.exit(2)
    return dumps


def signature(op):
    """What every rank must agree on at one sequence number."""
    sig = [op["op"], op["dtype"]]
    if op["op"] not in VARIABLE:  # V forms: per-rank counts differ by design
        sig.append(f"count {op['count']}")
    if "redop" in op:
        sig.append(op["redop"])
    if "root" in op:
        sig.append(f"root {op['root']}")
    return " ".join(str(s) for s in sig)


def ranks_text(ranks):
    ranks = sorted(ranks)
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def analyse(comm_dumps):
    """Lines describing one communicator's dumps."""
    lines = []
    first = comm_dumps[0]
    size = first["size"]
    by_rank = {d["rank"]: d for d in comm_dumps}
    lines.append(f"communicator {first['comm']} ({first['comm_id']}), {size} ranks, dumps from "
                 f"{ranks_text(by_rank)}")
    missing = [r for r in range(size) if r not in by_rank]
    if missing:
        lines.append(f"  no dump from {ranks_text(missing)}: dead, or never got this far")

    seqs = defaultdict(dict)  # seq -> rank -> op
    for r, d in by_rank.items():
        for op in d["ops"]:
            if op["seq"] > 0:
                seqs[op["seq"]][r] = op
    for seq in sorted(seqs):
        groups = defaultdict(list)
        for r, op in seqs[seq].items():
            groups[signature(op)].append(r)
        if len(groups) > 1:
            sides = "; ".join(f"{ranks_text(rs)}: {sig}" for sig, rs in sorted(groups.items(), key=lambda g: min(g[1])))
            lines.append(f"  first divergence at seq {seq}: {sides}")
            break
    else:
        lines.append("  no divergence: every op recorded by two or more ranks matches")

    furthest = max(seqs) if seqs else 0
    if furthest:
        behind = []
        for r, d in sorted(by_rank.items()):
            started = [op for op in d["ops"] if op["seq"] > 0]
            last = max(started, key=lambda op: op["seq"]) if started else None
            if last is None or last["seq"] < furthest:
                where = f"last at seq {last['seq']} ({last['op']}, {last['state']})" if last else "no collective started"
                behind.append(f"rank {r} {where}")
        if behind or missing:
            names = behind + [f"rank {r} (no dump)" for r in missing]
            lines.append(f"  never arrived at seq {furthest}: " + "; ".join(names))
        else:
            lines.append(f"  every dumped rank reached seq {furthest}")

    for r, d in sorted(by_rank.items()):
        f = d.get("failure", {})
        if f.get("code", "HCCL_SUCCESS") != "HCCL_SUCCESS":
            blamed = f" blaming rank {f['rank']}" if f.get("rank", -1) >= 0 else ""
            lines.append(f"  rank {r} ({d['reason']}): {f['code']}{blamed}: {f.get('text', '')}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="dump directories or files")
    args = ap.parse_args()
    dumps = load(args.paths)
    if not dumps:
        print("no flight-recorder dumps found", file=sys.stderr)
        return 2
    comms = defaultdict(list)
    for d in dumps:
        comms[d["comm_id"]].append(d)
    for cid in sorted(comms):
        print("\n".join(analyse(comms[cid])))
    return 0


if __name__ == "__main__":
    sys.exit(main())

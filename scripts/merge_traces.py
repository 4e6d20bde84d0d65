#!/usr/bin/env python3
"""Merges the per-rank trace files that HOSTCCL_TRACE=<prefix> writes into one
Chrome/Perfetto trace, ranks side by side (each rank is a process row).

    python3 scripts/merge_traces.py -o merged.json /tmp/run.*.rank*.json
"""
import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="per-rank trace files")
    parser.add_argument("-o", "--output", required=True, help="merged trace file")
    args = parser.parse_args()
    events, dropped = [], 0
    for path in args.files:
        with open(path) as f:
            trace = json.load(f)
        events.extend(trace.get("traceEvents", []))
        dropped += trace.get("otherData", {}).get("dropped", 0)
    events.sort(key=lambda e: (e.get("ph") != "M", e.get("ts", 0)))
    with open(args.output, "w") as f:
        json.dump({"displayTimeUnit": "ms", "otherData": {"files": len(args.files), "dropped": dropped},
                   "traceEvents": events}, f)
    ops = sum(1 for e in events if e.get("cat") == "op")
    print(f"merged {len(args.files)} files: {ops} ops, {len(events)} events -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

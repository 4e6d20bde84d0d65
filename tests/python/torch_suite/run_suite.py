"""Runs PyTorch's own distributed test suite (the installed torch's
torch/testing/_internal/distributed/distributed_test.py: DistributedTest._DistTestBase
with TestDistBackend, as PyTorch's test_distributed_spawn.py runs it) on a backend,
under torch 1.13 or 2.x (each with its own list of what passes with Gloo there).

    # one backend, every test (or --tests a,b / --tests @FILE), outcomes to a file:
    /usr/bin/python3 tests/python/torch_suite/run_suite.py --backend gloo --jobs 4 --results gloo.txt
    # the check ctest runs: what passes with Gloo passes with hostccl (per torch, its own lists)
    /usr/bin/python3 tests/python/torch_suite/run_suite.py --backend hostccl --jobs 4 \
        --gloo-passes tests/python/torch_suite/gloo_passes_torch1.13.txt \
        --exceptions tests/python/torch_suite/exceptions_torch1.13.txt

A plugin backend (hostccl) is declared to support DDP and subgroups
(DistTestCases.backend_feature["plugin"], ["ddp"], ["subgroup"]) before the suite is
imported, as the suite asks plugin backends to. The suite keeps some tests for Gloo
by name (get_future, coalesced allreduce, batch_isend_irecv, timeouts, object
collectives, monitored_barrier, ...); --as-gloo runs those on the backend with the
suite believing it is Gloo. Each --jobs share of the tests runs in one interpreter,
whose ranks are forked (not spawned: no second torch import per rank). torch's test
utilities import `expecttest`, which Debian 12 does not package: where it is missing,
stubs/expecttest.py stands in for it on this runner's path.
"""

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import expecttest  # noqa: F401  (PyPI's, in the torch 2.x venvs)
except ImportError:
    sys.path.insert(0, os.path.join(HERE, "stubs"))
ARGS = sys.argv[1:]

if os.environ.get("HOSTCCL_TORCH_SUITE_TEST") == "1":
    # A test's interpreter, and (re-importing this file) the processes the suite
    # spawns: the class must be defined at module level for them to find it.
    sys.argv = sys.argv[:1]  # torch's test utilities parse the command line at import
    _backend = os.environ["BACKEND"]
    if os.environ.get("HOSTCCL_TORCH_SUITE_AS_GLOO") == "1":
        # --as-gloo: the suite sees "gloo" (and so runs the tests it keeps for Gloo by
        # name); the process groups its ranks make are the backend's.
        os.environ["BACKEND"] = "gloo"
    if _backend not in ("gloo", "nccl", "mpi", "ucc"):
        import hostccl.torch  # noqa: F401  (registers the backend)
        from torch.testing._internal.common_distributed import DistTestCases

        for _feature in ("plugin", "ddp", "subgroup"):
            DistTestCases.backend_feature[_feature].add(_backend)
    import torch.multiprocessing
    from torch.testing._internal.distributed.distributed_test import DistributedTest, TestDistBackend

    if torch.__version__.startswith("1."):
        import torch.nn.parallel._replicated_tensor_ddp_utils as _replicated

        # torch 1.13's suite turns on DDP's ReplicatedTensor mode in every rank, whose
        # module (torch.distributed._shard) cannot be imported on Debian's Python 3.11
        # (a dataclass with a mutable default), failing every DDP test whatever the
        # backend. The mode stays off here, for every backend alike.
        _replicated._set_ddp_with_replicated_tensor = lambda value: None
    if os.environ.get("HOSTCCL_TORCH_SUITE_AS_GLOO") == "1":
        # The tests keep believing they run on Gloo (their bodies branch on the name);
        # the groups they make are the backend's.
        import torch.distributed as _dist

        def _on_backend(make):
            def made(*args, **kwargs):
                if kwargs.get("backend") in ("gloo", dist_backend_gloo):
                    kwargs["backend"] = _backend
                return make(*args, **kwargs)
            return made

        dist_backend_gloo = _dist.Backend.GLOO
        for _name in ("init_process_group", "new_group"):
            setattr(_dist, _name, _on_backend(getattr(_dist, _name)))
            setattr(_dist.distributed_c10d, _name, getattr(_dist, _name))

    class TestDistBackendWithSpawn(TestDistBackend, DistributedTest._DistTestBase):
        def setUp(self):
            super().setUp()
            # Forked, not spawned: the ranks start in moments instead of importing
            # torch again (CPU only: nothing here needs a fresh CUDA context).
            self._start_processes(torch.multiprocessing.get_context("fork").Process)


def _chunk_command(args, tests):
    # TMPDIR too: the suite's FileStore files (NamedTemporaryFile, never deleted)
    # then go with the directory.
    scratch = tempfile.mkdtemp(prefix="hostccl-torch-suite-")
    env = dict(os.environ, BACKEND=args.backend, WORLD_SIZE=str(args.world_size), HOSTCCL_TORCH_SUITE_TEST="1",
               HOSTCCL_TORCH_SUITE_AS_GLOO="1" if args.as_gloo else "0", TEMP_DIR=scratch, TMPDIR=scratch)
    return [sys.executable, os.path.abspath(__file__), "--run-here", ",".join(tests)], env


def list_tests(args):
    cmd, env = _chunk_command(args, [])
    out = subprocess.run(cmd[:2] + ["--list-here"], env=env, stdout=subprocess.PIPE, check=True).stdout.decode()
    shutil.rmtree(env["TEMP_DIR"], ignore_errors=True)
    return [line for line in out.splitlines() if line.startswith("test_")]


def run_chunk(args, tests, report):
    """Runs `tests` in one interpreter; report(test, outcome, seconds, output) for each.

    The interpreter prints "@@ <test> <outcome> <seconds>" after each test; a test
    that never reports (the interpreter died or hung) is failed with the output."""
    cmd, env = _chunk_command(args, tests)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    done, output = set(), []
    # A chunk that hangs silently is killed at its deadline (the loop below only
    # wakes on output).
    watchdog = threading.Timer(args.timeout * max(1, len(tests)), proc.kill)
    watchdog.start()
    for raw in proc.stdout:
        line = raw.decode(errors="replace").rstrip("\n")
        if line.startswith("@@ "):
            _, test, outcome, seconds = line.split()
            done.add(test)
            report(test, outcome, float(seconds), "\n".join(output))
            output = []
        else:
            output.append(line)
    proc.wait()
    watchdog.cancel()
    shutil.rmtree(env["TEMP_DIR"], ignore_errors=True)
    for test in tests:
        if test not in done:
            report(test, "failed", 0.0, "\n".join(output) + "\n(no result: the interpreter exited %d)" % proc.returncode)
            output = []


def run_here(tests):
    """Runs the tests here, one after another, printing each one's outcome line."""
    import unittest

    class Reporter(unittest.TextTestResult):
        def startTest(self, test):
            self._started = time.monotonic()
            super().startTest(test)

        def stopTest(self, test):
            super().stopTest(test)
            name = test.id().rsplit(".", 1)[-1]
            failed = any(t is test for t, _ in self.failures + self.errors + self.unexpectedSuccesses)
            skipped = any(t is test for t, _ in self.skipped)
            outcome = "failed" if failed else "skipped" if skipped else "passed"
            self.stream.flush()
            print("@@ %s %s %.1f" % (name, outcome, time.monotonic() - self._started), flush=True)

    suite = unittest.TestSuite(TestDistBackendWithSpawn(t) for t in tests)
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2, resultclass=Reporter)
    return 0 if runner.run(suite).wasSuccessful() else 1


def read_names(path):
    """{first word: rest of the line} of a file's lines, # comments left out."""
    names = {}
    with open(path) as f:
        for line in f:
            if line.strip() and not line.lstrip().startswith("#"):
                word, _, rest = line.strip().partition(" ")
                names[word] = rest.strip()
    return names


def run_tests(args, tests, as_gloo=False):
    """{test: outcome} after running them; prints a line per test (and a failure's output)."""
    outcomes = {}
    lock = threading.Lock()
    run_args = argparse.Namespace(**vars(args))
    run_args.as_gloo = as_gloo

    def report(test, outcome, seconds, out):
        with lock:
            outcomes[test] = outcome
            print("%s%s %s %.1f" % ("[as gloo] " if as_gloo else "", test, outcome, seconds), flush=True)
            if outcome == "failed" and args.verbose_failures:
                print("\n".join("    " + line for line in out.splitlines()[-60:]), flush=True)

    chunks = [c for c in (tests[j::args.jobs] for j in range(args.jobs)) if c]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(lambda chunk: run_chunk(run_args, chunk, report), chunks))
    return outcomes


def summary(name, outcomes):
    counts = {k: sum(1 for v in outcomes.values() if v == k) for k in ("passed", "failed", "skipped")}
    return "%s: %d passed, %d failed, %d skipped" % (name, counts["passed"], counts["failed"], counts["skipped"])


def check(args):
    """Every test that passes with Gloo (--gloo-passes) passes on the backend, as the suite
    runs it or, for tests the suite keeps for Gloo by name, with --as-gloo; the tests
    in --exceptions must still fail (else the list is out of date)."""
    gloo = read_names(args.gloo_passes)
    exceptions = read_names(args.exceptions) if args.exceptions else {}
    suite = list_tests(args)
    gone = sorted(set(gloo) - set(suite))
    plain = run_tests(args, suite)
    gated = sorted(t for t in gloo if plain.get(t) == "skipped")
    as_gloo = run_tests(args, gated, as_gloo=True) if gated else {}
    passed = {t for t, o in plain.items() if o == "passed"} | {t for t, o in as_gloo.items() if o == "passed"}
    missing = sorted(t for t in gloo if t not in passed and t not in exceptions and t in plain)
    stale = sorted(t for t in exceptions if t in passed)
    print(summary("%s as the suite runs it" % args.backend, plain))
    print(summary("%s, tests the suite keeps for Gloo (--as-gloo)" % args.backend, as_gloo))
    print("Gloo passes %d tests here (%s); %s passes %d of them, %d are listed exceptions" %
          (len(gloo), args.gloo_passes, args.backend, len(set(gloo) & passed), len(set(gloo) & set(exceptions))))
    for t in gone:
        print("NOT IN THE SUITE (re-record %s): %s" % (args.gloo_passes, t))
    for t in missing:
        print("PASSES WITH GLOO, NOT WITH %s: %s (%s)" % (args.backend, t, as_gloo.get(t, plain.get(t))))
    for t in stale:
        print("LISTED AS AN EXCEPTION BUT PASSES (remove it from %s): %s" % (args.exceptions, t))
    return 1 if missing or stale or gone else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="hostccl")
    parser.add_argument("--world-size", type=int, default=3)
    parser.add_argument("--tests", default="", help="comma-separated names, or @FILE (first word of each line; # comments)")
    parser.add_argument("--results", default="", help="write '<test> <outcome>' lines here")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per test")
    parser.add_argument("--list", action="store_true", help="print the suite's test names and exit")
    parser.add_argument("--as-gloo", action="store_true",
                        help="the suite sees the backend as gloo (the tests it keeps for Gloo by name)")
    parser.add_argument("--gloo-passes", default="",
                        help="check mode: the tests that pass with Gloo here (a --results file of a gloo run)")
    parser.add_argument("--exceptions", default="", help="check mode: tests that may fail, with the reason")
    parser.add_argument("--verbose-failures", action="store_true", help="print the end of a failed test's output")
    parser.add_argument("--list-here", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--run-here", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(ARGS)
    if args.list_here:
        print("\n".join(sorted(n for n in dir(TestDistBackendWithSpawn) if n.startswith("test_"))))
        return 0
    if args.run_here is not None:
        return run_here([t for t in args.run_here.split(",") if t])
    if args.gloo_passes:
        return check(args)
    if args.tests.startswith("@"):
        tests = list(read_names(args.tests[1:]))
    elif args.tests:
        tests = args.tests.split(",")
    else:
        tests = list_tests(args)
    if args.list:
        print("\n".join(tests))
        return 0
    outcomes = run_tests(args, tests, as_gloo=args.as_gloo)
    if args.results:
        with open(args.results, "w") as f:
            f.write("".join("%s %s\n" % (t, outcomes[t]) for t in sorted(outcomes)))
    print(summary("%s, world size %d" % (args.backend, args.world_size), outcomes))
    return 1 if any(o == "failed" for o in outcomes.values()) else 0


if __name__ == "__main__":
    sys.exit(main())

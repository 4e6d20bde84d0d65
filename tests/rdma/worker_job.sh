#!/bin/sh
# worker_job.sh <mp_worker> N [family|all]: one job of N processes of the multiprocess
# test worker (rank 0 publishes the root info in a file, as a launcher would); without
# a family, the worker's own suite (allreduce in host and aclrtMalloc memory, gathers,
# a sub-communicator, two communicators at once). Exits non-zero if any rank does.
worker=$1 n=$2 family=${3:-}
file=/tmp/rootinfo.$$
rm -f "$file"
pids=""
for r in $(seq 0 $((n - 1))); do
    "$worker" rootinfo "$file" $r $n $family > /tmp/worker$r.out 2>&1 &
    pids="$pids $!"
done
rc=0
for p in $pids; do wait $p || rc=1; done
grep -h "ok$" /tmp/worker0.out
[ $rc -eq 0 ] || { echo "a rank failed:"; grep -h -v "^\[.*info\]" /tmp/worker*.out | tail -n 8; }
rm -f "$file"
exit $rc

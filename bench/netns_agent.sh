#!/usr/bin/env bash
# A stand-in for ssh used by mpirun / mpiexec in bench/compare.sh: "host command..."
# runs the command inside the network namespace named `host`, so each emulated host
# gets its own launcher daemon, as on a real cluster. Leading ssh options are ignored.
while [[ "${1:-}" == -* ]]; do shift; done
host=$1
shift
# Its own hostname too (a UTS namespace), or MPI libraries that detect locality by
# hostname would treat the two "hosts" as one and use shared memory between them.
exec ip netns exec "$host" unshare --uts bash -c "hostname '$host'; $*"

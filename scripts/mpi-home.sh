#!/usr/bin/env bash
# Lays out an MPI_HOME as HCCL Test's Makefile expects it (<dir>/include, and a
# <dir>/lib/libmpi.so that links everything its mpi.h needs) for Debian's MPI
# packages, whose files are not laid out that way:
# - Open MPI's mpi.h declares the C++ bindings, which live in libmpi_cxx;
# - MPICH's libraries are libmpich and libmpichcxx, and libmpi.so is Open MPI's.
#   bash mpi-home.sh openmpi|mpich <dir>      then: make MPI_HOME=<dir> ...
set -euo pipefail
flavour=${1:?usage: mpi-home.sh openmpi|mpich <dir>} dir=${2:?usage: mpi-home.sh openmpi|mpich <dir>}
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
libs=/usr/lib/$multiarch
case $flavour in
  openmpi) include=$libs/openmpi/include; inputs="$libs/openmpi/lib/libmpi.so $libs/openmpi/lib/libmpi_cxx.so" ;;
  mpich) include=$libs/mpich/include; inputs="$libs/libmpich.so $libs/libmpichcxx.so" ;;
  *) echo "mpi-home.sh: unknown MPI '$flavour' (openmpi or mpich)" >&2; exit 2 ;;
esac
for f in $include/mpi.h $inputs; do
  [ -e "$f" ] || { echo "mpi-home.sh: $f is missing (is Debian's $flavour development package installed?)" >&2; exit 1; }
done
mkdir -p "$dir/lib"
ln -sfn "$include" "$dir/include"
echo "INPUT($inputs)" > "$dir/lib/libmpi.so"
echo "$dir"

#!/usr/bin/env bash
# hostccl's RDMA suite on real verbs: soft-RoCE (rdma_rxe) in a qemu guest, since this
# machine has no RDMA device and cannot load kernel modules itself. Builds (once, then
# cached) a Debian guest with rdma-core from Debian's packages, mirrors the built
# tests into it at the same paths, boots it under TCG with guest_suite.sh as PID 1 and
# reads the verdict from the serial log. Skipped, with the reason, where it cannot run.
#   bash tests/rdma/run.sh <build dir> [--quick] [--bandwidth] [--steps matrix,ring_budget,subcomm,zero_copy,qp_error,bandwidth]
#                          [--env VAR=value ...]
#   bash tests/rdma/run.sh --prepare        # only build the cached guest (while the project builds)
# Env: HOSTCCL_RXE_CACHE (guest cache, default /var/cache/hostccl/rxe-guest),
#      HOSTCCL_RDMA_TIMEOUT (seconds for the whole boot, default 720).
set -uo pipefail
prepare=""
if [ "${1:-}" = --prepare ]; then
    prepare=1
else
    build=$(cd "${1:?usage: run.sh <build dir> [--quick] [--bandwidth] | --prepare}" && pwd)
fi
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
ranks="2 3 4"
steps=matrix,ring_budget,subcomm,zero_copy,qp_error
extra_env=()
while [ $# -gt 0 ]; do
    case $1 in
        --quick) ranks=2 ;;
        --bandwidth) steps=$steps,bandwidth ;;
        --steps) steps=$2; shift ;;
        --env) extra_env+=("export ${2%%=*}='${2#*=}'"); shift ;;  # VAR=value for the guest's tests
        *) echo "unknown argument $1"; exit 2 ;;
    esac
    shift
done
skip() { echo "rdma suite skipped: $*"; exit 0; }
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, the guest's disk image)"
for tool in qemu-system-x86_64 debootstrap mkfs.ext4; do
    command -v $tool >/dev/null || skip "$tool is not installed (scripts/setup-deps.sh installs it)"
done
if [ -z "$prepare" ]; then
    for t in mp_worker rdma_zero_copy_test; do
        [ -x "$build/tests/$t" ] || { echo "rdma suite: $build has no tests/$t (built without libibverbs?)"; exit 1; }
    done
    grep -q HOSTCCL_HAVE_RDMA "$build/CMakeFiles/hccl_objects.dir/flags.make" 2>/dev/null ||
        skip "the build has no RDMA transport (libibverbs-dev missing at configure time)"
fi
cache=${HOSTCCL_RXE_CACHE:-/var/cache/hostccl/rxe-guest}
mkdir -p "$cache"
rootfs=$cache/rootfs
start=$SECONDS

if [ ! -e "$rootfs/.built" ]; then
    rm -rf "$rootfs"
    mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
    [ -n "$mirror" ] || mirror=$(awk '/^deb / { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
    echo "rdma suite: building the guest (debootstrap from $mirror)"
    debootstrap --variant=minbase \
        --include=linux-image-amd64,rdma-core,ibverbs-providers,ibverbs-utils,iproute2,perftest,kmod,procps \
        bookworm "$rootfs" "$mirror" > "$cache/debootstrap.log" 2>&1 ||
        { tail -5 "$cache/debootstrap.log"; skip "debootstrap failed (no Debian mirror reachable?)"; }
    touch "$rootfs/.built"
    echo "rdma suite: guest built in $((SECONDS - start)) s"
fi
[ -n "$prepare" ] && { echo "rdma suite: guest ready in $cache"; exit 0; }

# The payload: test programs at their build paths, their libraries, the suite scripts.
rm -rf "$rootfs/hostccl-libs" "$rootfs/${build#/}" "$rootfs/${src#/}"
programs=("$build/tests/mp_worker" "$build/tests/cxx_api_test" "$build/tests/rdma_zero_copy_test"
          "$build/bench/perf/allreduce_perf" "$build/bench/perf/sendrecv_perf")
mkdir -p "$rootfs/hostccl-libs" "$rootfs/${src#/}/tests/rdma"
for p in "${programs[@]}"; do
    mkdir -p "$rootfs/$(dirname "${p#/}")"
    cp "$p" "$rootfs/${p#/}"
    # Everything it links but what the guest has its own of (libc, verbs and its providers).
    ldd "$p" | awk '$3 ~ /^\// { print $3 }' | grep -v -E '/(libc|libm|ld-linux[^/]*|libibverbs|libnl-[^/]*|libgcc_s)\.so' |
        while read -r lib; do cp -L "$lib" "$rootfs/hostccl-libs/"; done
done
cp "$src"/tests/rdma/*.sh "$rootfs/${src#/}/tests/rdma/"
install -m 0755 "$src/tests/rdma/guest_suite.sh" "$rootfs/hostccl-suite.sh"
{
    printf 'BUILD=%s\nSRC=%s\nRANKS="%s"\nSTEPS=%s\n' "$build" "$src" "$ranks" "$steps"
    [ ${#extra_env[@]} -eq 0 ] || printf '%s\n' "${extra_env[@]}"
} > "$rootfs/hostccl-suite.env"
work=$(mktemp -d /tmp/hostccl-rdma.XXXXXX)
trap 'rm -rf "$work"' EXIT
kver=$(ls "$rootfs/lib/modules" | sort -V | tail -1)
cp "$rootfs/boot/vmlinuz-$kver" "$work/vmlinuz"
cp "$rootfs/boot/initrd.img-$kver" "$work/initrd.img"
truncate -s 2000M "$work/disk.img"
mkfs.ext4 -q -F -L root -d "$rootfs" "$work/disk.img" || { echo "rdma suite: mkfs.ext4 failed"; exit 1; }

# KVM is not usable on these machines (nested); TCG boots the guest in seconds. A
# panic (the suite script dying as PID 1) reboots, which -no-reboot turns into an exit.
log=${HOSTCCL_RDMA_LOG:-$build/rdma-guest.log}
echo "rdma suite: booting the guest (serial log: $log)"
timeout "${HOSTCCL_RDMA_TIMEOUT:-720}" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 -m 3072 \
    -nographic -no-reboot -kernel "$work/vmlinuz" -initrd "$work/initrd.img" \
    -append "root=/dev/vda rw console=ttyS0 loglevel=4 panic=1 init=/hostccl-suite.sh" \
    -drive file="$work/disk.img",format=raw,if=virtio -nic none > "$log" 2>&1
grep -E '^=== |OK|FAILED|busbw|#|Gb/sec|^ *[0-9]|^sends:' "$log" | grep -v -E '^\[' | tail -n 80
echo "rdma suite: $((SECONDS - start)) s in all"
grep -q 'RDMA SUITE DONE result=PASS' "$log" && { echo "rdma suite: PASS"; exit 0; }
echo "rdma suite: FAIL (serial log: $log)"
exit 1

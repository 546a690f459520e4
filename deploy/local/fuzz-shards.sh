#!/bin/sh
# A sharded fuzz campaign on one machine, then its merge: the same steps a cluster takes
# (deploy/k8s/fuzz-job.yaml, deploy/slurm/fuzz.sbatch), with processes for machines.
#
#   deploy/local/fuzz-shards.sh SEEDS N OUT [FUZZ OPTIONS...]
#   deploy/local/fuzz-shards.sh 0..100000 4 /tmp/campaign --threads 1 --time-limit 30m
#
# Shard K of N writes OUT/shard-K; the merge writes OUT/merged and exits with merge's code
# (0 clean, 1 violation, 3 panic, 4 incomplete, 2 refused). Runs JOBS shards at a time
# (default: the number of processors) with GNU parallel when it is installed, else xargs -P
# (FUZZ_SHARDS_RUNNER=xargs chooses xargs).
# FLINKSIM names the binary (default: flinksim on PATH). A shard's own exit code is not an
# error unless it is 2 (bad input); a shard that failed shows in the merge as missing seeds.
set -eu

if [ $# -lt 3 ]; then
    echo "usage: $0 SEEDS N OUT [FUZZ OPTIONS...]" >&2
    exit 2
fi
seeds=$1 shards=$2 out=$3
shift 3
flinksim=${FLINKSIM:-flinksim}
jobs=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
mkdir -p "$out"

# One shard: its own directory and log; 0, 1 and 3 are campaign outcomes, not failures.
run_shard() {
    k=$1
    shift
    code=0
    "$flinksim" fuzz --seeds "$seeds" --shard "$k/$shards" --out "$out/shard-$k" "$@" \
        >"$out/shard-$k.log" 2>&1 || code=$?
    case $code in
        0 | 1 | 3) ;;
        *) echo "shard $k/$shards exited $code; see $out/shard-$k.log" >&2 ;;
    esac
}

# Each shard is this script again with FUZZ_SHARD_K set, so both runners start a plain command.
if [ -n "${FUZZ_SHARD_K:-}" ]; then
    run_shard "$FUZZ_SHARD_K" "$@"
    exit 0
fi
export FLINKSIM="$flinksim"
if [ "${FUZZ_SHARDS_RUNNER:-auto}" != xargs ] && command -v parallel >/dev/null 2>&1; then
    seq 0 $((shards - 1)) | parallel -q -j "$jobs" env FUZZ_SHARD_K={} "$0" "$seeds" "$shards" "$out" "$@"
else
    seq 0 $((shards - 1)) | xargs -P "$jobs" -I {} env FUZZ_SHARD_K={} "$0" "$seeds" "$shards" "$out" "$@"
fi

# The fuzz options are spent; the positional parameters become the shard directories.
set --
k=0
while [ "$k" -lt "$shards" ]; do
    # A shard that wrote nothing is left out: the merge reports its seeds as missing.
    if [ -f "$out/shard-$k/results.jsonl" ]; then
        set -- "$@" "$out/shard-$k"
    fi
    k=$((k + 1))
done
if [ $# -eq 0 ]; then
    echo "no shard wrote results; see $out/shard-*.log" >&2
    exit 2
fi
exec "$flinksim" merge "$@" --out "$out/merged"

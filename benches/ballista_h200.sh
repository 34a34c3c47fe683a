#!/usr/bin/env bash
# Runs on the GPU machine (16 cores) from the repository root: gdscan's
# tables on a Ballista cluster of 1 scheduler + 2 executors on 127.0.0.1,
# against single-node gdscan and single-node DataFusion, in one run
# (`gdscan bench tpch --engine ballista`). Needs the Ballista build carried
# as .carry/gdscan-ballista (or xz-compressed as .carry/gdscan-ballista.xz):
#   cargo build --release -p gdscan-cli --features ballista
#   cp target/release/gdscan .carry/gdscan-ballista && xz -T0 .carry/gdscan-ballista
# Environment: GDSCAN_TPCH_SFS (default "1 10"), GDSCAN_BALLISTA_EXECUTORS
# (default 2), GDSCAN_SQL_ITERATIONS (default 3). Logs and JSON go to $OUT.
set -uo pipefail
out=${OUT:-/tmp/gdscan-out}
mkdir -p "$out"
if [ -f .carry/gdscan-ballista.xz ] && [ ! -x .carry/gdscan-ballista ]; then
  # (the GPU machine has Python's lzma, not always xz)
  python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" \
    .carry/gdscan-ballista.xz .carry/gdscan-ballista && chmod +x .carry/gdscan-ballista
fi
bin=.carry/gdscan-ballista
[ -x "$bin" ] || { echo "missing $bin (see the header)" >&2; exit 1; }
executors=${GDSCAN_BALLISTA_EXECUTORS:-2}
iterations=${GDSCAN_SQL_ITERATIONS:-3}
nproc | tee "$out/ballista-cpus.txt"
for sf in ${GDSCAN_TPCH_SFS:-1 10}; do
  data=$PWD/.benchdata/tpch-sf$sf
  mkdir -p "$data"
  echo "== SF $sf: $executors executors, $iterations iterations"
  "$bin" bench tpch --engine ballista --executors "$executors" --sf "$sf" --data "$data" \
    --iterations "$iterations" --json "$out/ballista-sf$sf.json" 2>&1 | tee "$out/ballista-sf$sf.txt"
done

#!/usr/bin/env bash
# The Python package on the GPU machine, one command from the repository
# root. Carried files (see python/README.md, "On the GPU machine"):
#   .carry/gdscan(.xz)   release CLI (cargo build --release -p gdscan-cli --no-default-features)
#   .whl/py/gdscan-*.whl the package (maturin build --release -m python/Cargo.toml)
#   .whl/py/*.whl        pytest, pluggy, iniconfig, packaging, pygments (pure
#                        Python wheels: pip download ... -d .whl/py)
#   .carry/pyarrow-*.tar.xz  pyarrow 26 for CPython 3.12, its wheel's files
#                        without Flight, S3, ORC, headers and tests (the wheel
#                        itself is 55 MB; this is the size that fits a carry)
#   nvCOMP: GDSCAN_NVCOMP_LIBRARY, or the wheel nvidia-libnvcomp-cu13==6.0.0.12
#                        anywhere under .whl/ (installed beside the others,
#                        and GDSCAN_NVCOMP_LIBRARY pointed at its libnvcomp.so.6)
# Installs the wheels into /tmp/pysite (no index, no dependencies fetched),
# generates TPC-H lineitem SF ${GDSCAN_TPCH_SF:-1}, runs the GPU pytest with
# GDSCAN_REQUIRE_GPU=1 (a missing GPU, CuPy, PyTorch or file fails it), then
# the Python benchmark beside `gdscan bench decode` on the same files.
# Usage: bash benches/python_gpu.sh [tests] [bench]   (default: both)
set -uo pipefail
out=${OUT:-/tmp/gdscan-out}
mkdir -p "$out"
steps=${*:-tests bench}
for xz in .carry/*.xz; do
  [ -f "$xz" ] || continue
  bin=${xz%.xz}
  [ -x "$bin" ] && continue
  python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" "$xz" "$bin"
  chmod +x "$bin"
done
site=/tmp/pysite
rm -rf "$site"
# GDSCAN_PY_WITH_KVIKIO=1 also installs .whl/*.whl (the KvikIO 26.10 wheels
# benches/h200.sh uses), for the benchmark's kvikio.CuFile.pread anchor.
extra=()
if [ "${GDSCAN_PY_WITH_KVIKIO:-0}" = 1 ]; then
  extra=(.whl/*.whl)
else
  extra=($(find .whl -name 'nvidia_libnvcomp*.whl' 2>/dev/null | head -n 1))
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" \
  .whl/py/*.whl "${extra[@]}" || exit 1
if [ -z "${GDSCAN_NVCOMP_LIBRARY:-}" ]; then
  GDSCAN_NVCOMP_LIBRARY=$(find "$site" -name libnvcomp.so.6 | head -n 1)
  [ -n "$GDSCAN_NVCOMP_LIBRARY" ] && export GDSCAN_NVCOMP_LIBRARY
fi
echo "GDSCAN_NVCOMP_LIBRARY=${GDSCAN_NVCOMP_LIBRARY:-<unset>}"
for tarball in .carry/pyarrow-*.tar.xz; do
  [ -f "$tarball" ] || continue
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$tarball" "$site" || exit 1
done
# GDSCAN_PY_CUDF_SITE (cuDF's wheels installed there, e.g. /tmp/cudfsite):
# first on the path, since its nvidia.libnvcomp (nvCOMP 5, which libcudf
# loads) would be shadowed by the nvCOMP 6 package installed here (gdscan
# finds nvCOMP 6 through GDSCAN_NVCOMP_LIBRARY, set above).
export PYTHONPATH="${GDSCAN_PY_CUDF_SITE:+$GDSCAN_PY_CUDF_SITE:}$site${PYTHONPATH:+:$PYTHONPATH}"
python3 -c "import gdscan, pyarrow, cupy, torch, numpy; print('gdscan', gdscan.__file__, 'pyarrow', pyarrow.__version__, 'cupy', cupy.__version__, 'torch', torch.__version__, 'numpy', numpy.__version__, 'gpu', gdscan.cuda_available())"
sf=${GDSCAN_TPCH_SF:-1}
data=$PWD/.benchdata/tpch-li-sf$sf
[ -d "$data/lineitem" ] || ./.carry/gdscan tpch gen --sf "$sf" --tables lineitem --out "$data" --quiet || exit 1
status=0
for step in $steps; do
  case $step in
    tests)
      echo "== pytest python/tests (GDSCAN_REQUIRE_GPU=1, lineitem SF $sf) =="
      GDSCAN_REQUIRE_GPU=1 GDSCAN_LINEITEM="$data/lineitem" \
        python3 -m pytest python/tests -p no:cacheprovider -rsx -q 2>&1 | tee "$out/python-tests.txt"
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      ;;
    bench)
      echo "== gdscan bench decode (Rust) and the same files from Python =="
      ./.carry/gdscan bench decode --data "$data" --cases all --iterations 5 --json "$out/decode-rust.json" \
        > "$out/decode-rust.txt" 2>&1 || { cat "$out/decode-rust.txt"; status=1; continue; }
      python3 benches/python_bench.py --data "$data" --rust "$out/decode-rust.json" --iterations 5 \
        2>&1 | tee "$out/python-bench.txt"
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      ;;
  esac
done
exit $status

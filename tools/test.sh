#!/usr/bin/env bash
# The full test suite, as CI runs it:
#   1. Release build (warnings are errors), the ISA linkage check of its objects, unit tests
#      and ONNX node conformance via ctest;
#   2. unit + conformance tests again under AddressSanitizer + UndefinedBehaviorSanitizer (clang);
#   3. the model-loader and request fuzzers for a bounded time each (IGNIS_FUZZ_SECONDS, default
#      60), built in step 2's tree;
#   4. the Python package: pip install . and its pytest suite;
#   5. parity with onnxruntime on the model zoo (generated on first use into models/), on the
#      broad model set (tools/make_broad_set.py, into models/broad/) and on
#      scikit-learn models (those ending in ZipMap through the package installed in step 4);
#   6. the server (`ignis serve`) driven by real clients: tritonclient HTTP/gRPC, curl, raw
#      sockets, a real Prometheus, SIGTERM under load.
# Conformance runs two suites of ONNX node tests: Debian's (ONNX 1.12, opsets <= 17) and the
# one PyPI's onnx wheel generates (tools/make_node_suite.py, opsets up to its newest).
# Set IGNIS_QUICK=1 to run only step 1.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)
NODE_DATA=/usr/share/libonnx-testdata/data/node
NODE_SUITE=build/node-suite
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
summary=()
# Seconds since the start, per step, for the summary: compiling is most of a cold run.
t0=$(date +%s)
step_start=$t0
step() {
  local now
  now=$(date +%s)
  [ -n "${step_name:-}" ] && timings+=("$step_name $((now - step_start))s")
  step_name=$1
  step_start=$now
  echo "== $1 (at $((now - t0))s)"
}
timings=()

step "1. release build + unit tests + conformance"
tools/build.sh
# No code compiled with AVX2/AVX-512 flags may be a weak definition the linker can hand to
# plain code paths (tools/check_isa_linkage.py has the rule).
python3 tools/check_isa_linkage.py build | tee build/isa_linkage.txt
summary+=("$(tail -n 1 build/isa_linkage.txt)")
(cd build && ctest --output-on-failure -j "$JOBS" -LE conformance)
./build/tests/ignis_conformance "$NODE_DATA" --min-pass-rate 0.97 | tee build/conformance.txt | tail -n 1
summary+=("debian onnx 1.12 $(tail -n 1 build/conformance.txt)")
python3 tools/make_node_suite.py --out "$NODE_SUITE"
./build/tests/ignis_conformance "$NODE_SUITE" --min-pass-rate 0.95 --ops-doc docs/supported_ops.md | tee build/conformance_onnx.txt | tail -n 1
summary+=("onnx $(cat "$NODE_SUITE/VERSION") $(tail -n 1 build/conformance_onnx.txt)")
# The same suites with only reference kernels, so the reference path keeps its coverage.
IGNIS_KERNELS=ref ./build/tests/ignis_conformance "$NODE_DATA" --min-pass-rate 0.97 > build/conformance_ref.txt
IGNIS_KERNELS=ref ./build/tests/ignis_conformance "$NODE_SUITE" --min-pass-rate 0.95 > build/conformance_onnx_ref.txt
summary+=("reference kernels only: $(tail -n 1 build/conformance_ref.txt)")
summary+=("reference kernels only: $(tail -n 1 build/conformance_onnx_ref.txt)")
[ "${IGNIS_QUICK:-0}" = 1 ] && { printf '%s\n' "${summary[@]}"; exit 0; }

step "2. AddressSanitizer + UndefinedBehaviorSanitizer"
# One clang tree serves the sanitizer tests and the fuzzers of step 3 (libFuzzer needs clang;
# the library's coverage instrumentation costs the tests little, a third cold compile of the
# tree costs a CI run minutes). -Werror is enforced by step 1's GCC build.
# -O1 with line tables only: what ASan's own documentation recommends, and about half the
# compile time of RelWithDebInfo's -O2 -g on the template-heavy reference kernels (a cold
# build of this tree is the longest step of a CI run). Stack traces keep file:line.
sanitizer_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG")
CXX=clang++ cmake -S . -B build-asan -G Ninja "${sanitizer_flags[@]}" -DIGNIS_SANITIZE=ON -DIGNIS_FUZZ=ON \
  -DIGNIS_WERROR=OFF "${launcher[@]}" > /dev/null
cmake --build build-asan -j "$JOBS"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
./build-asan/tests/ignis_unit_tests --gtest_brief=1
./build-asan/tests/ignis_conformance "$NODE_DATA" --timeout 300 | tail -n 1
./build-asan/tests/ignis_conformance "$NODE_SUITE" --timeout 300 | tail -n 1
summary+=("sanitizers: unit tests and conformance clean under ASan+UBSan")

step "3. fuzzing the model loader and the request decoder"
FUZZ_SECONDS=${IGNIS_FUZZ_SECONDS:-60}
corpus=build-asan/corpus
mkdir -p "$corpus"
cp assets/digits_cnn.onnx "$corpus/" 2>/dev/null || true
for c in test_abs test_add_bcast test_conv_with_strides_padding test_reshape_extended_dims test_gather_0 test_slice; do
  [ -f "$NODE_DATA/$c/model.onnx" ] && cp "$NODE_DATA/$c/model.onnx" "$corpus/$c.onnx"
done
./build-asan/tools/fuzz/fuzz_model_loader "$corpus" -max_total_time="$FUZZ_SECONDS" -max_len=65536 -rss_limit_mb=4096 \
  -print_final_stats=1 2>&1 | tail -n 5
summary+=("fuzz: model loader ran ${FUZZ_SECONDS}s without a crash")
# The server's request decoder and config reader, seeded with valid requests of each form.
rcorpus=build-asan/corpus_requests
mkdir -p "$rcorpus"
printf '%s' '{"id":"1","inputs":[{"name":"x","shape":[2,2],"datatype":"FP32","data":[[1,2],[3,4]]}],"outputs":[{"name":"y","parameters":{"binary_data":true}}]}' > "$rcorpus/json"
printf '\001%s' '{"inputs":[{"name":"b","shape":[2],"datatype":"BOOL","data":[true,false]},{"name":"s","shape":[1],"datatype":"BYTES","data":["ab"]}],"parameters":{"priority":1,"timeout":100}}' > "$rcorpus/types"
printf '\002%s\n1234567' '{"inputs":[{"name":"x","shape":[2],"datatype":"INT32","parameters":{"binary_data_size":8}}]}' > "$rcorpus/binary"
printf '\000%s' 'name: "m" max_batch_size: 8 input [ { name: "x" data_type: TYPE_FP32 dims: [ 3, -1 ] } ] dynamic_batching { preferred_batch_size: [ 4 ] }' > "$rcorpus/config"
./build-asan/tools/fuzz/fuzz_infer_request "$rcorpus" -max_total_time="$FUZZ_SECONDS" -max_len=8192 -rss_limit_mb=4096 \
  -print_final_stats=1 2>&1 | tail -n 5
summary+=("fuzz: request decoder ran ${FUZZ_SECONDS}s without a crash")

step "4. Python package"
# The model zoo first: the package's zoo tests (tests/python/test_zoo.py) and step 5 use it.
if [ ! -f models/.complete ]; then
  /usr/bin/python3 tools/make_zoo.py --out models
  touch models/.complete
fi
bash tools/python_test.sh 2>&1 | tee build/python_tests.txt | tail -n 5
summary+=("python: $(grep -E '[0-9]+ passed' build/python_tests.txt | tail -n 1)")

step "5. parity with onnxruntime on the model zoo"
# The broad set: architectures and exporters the kernels were not tuned on (not committed).
if [ ! -f models/broad/.complete ]; then
  /usr/bin/python3 tools/make_broad_set.py --out models/broad
  touch models/broad/.complete
fi
IGNIS_BIN=build/ignis python3 -m pytest -q tests/models 2>&1 | tee build/parity.txt | tail -n 20
summary+=("$(grep -E '^(parity|optimize) ' build/parity.txt || true)")
IGNIS_KERNELS=ref IGNIS_BIN=build/ignis python3 -m pytest -q tests/models/test_parity.py 2>&1 | tee build/parity_ref.txt | tail -n 3
summary+=("parity with reference kernels only: $(tail -n 1 build/parity_ref.txt)")

step "6. the server"
IGNIS_BIN=build/ignis python3 -m pytest -q tests/serve 2>&1 | tee build/serve_tests.txt | tail -n 15
summary+=("server: $(grep -E '[0-9]+ (passed|failed)' build/serve_tests.txt | tail -n 1)")
# Hostile traffic, shutdown and the batcher again against the sanitizer build of step 2: a
# memory error in the connection or request handling, or in batch assembly and splitting,
# aborts the server and fails these tests.
IGNIS_BIN=build-asan/ignis IGNIS_TEST_EXIT_TIMEOUT_S=60 python3 -m pytest -q tests/serve/test_http_errors.py tests/serve/test_shutdown.py \
  tests/serve/test_batching.py \
  2>&1 | tee build/serve_tests_asan.txt | tail -n 3
summary+=("server under ASan+UBSan: $(grep -E '[0-9]+ (passed|failed)' build/serve_tests_asan.txt | tail -n 1)")

step "summary"
printf '%s\n' "${summary[@]}"
echo "time per step: ${timings[*]}"

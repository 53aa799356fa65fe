# Sourced by the CI mutation runs (run_fuzz_ci.sh, run_relayd_fuzz_ci.sh): one sanitizer build
# directory, one set of flags, so that either run's build is incremental after the other's.
#   sanitizer_build SOURCE_DIR BUILD_DIR TARGET LOG
# Builds TARGET with AddressSanitizer and UndefinedBehaviorSanitizer (-O1, an abort on the first
# undefined behaviour) on both cores (the runs hold the `machine` lock); on failure prints the
# log's end and exits 1.
sanitizer_build() {
  local src=$1 bin=$2 target=$3 log=$4
  local san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  cmake -S "$src" -B "$bin" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1 $san" \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g1 $san" -DCMAKE_EXE_LINKER_FLAGS="$san" >"$bin.cmake.log" 2>&1 ||
    { cat "$bin.cmake.log"; exit 1; }
  nice cmake --build "$bin" --target "$target" -j"$(nproc)" >"$log" 2>&1 ||
    { tail -30 "$log"; exit 1; }
}

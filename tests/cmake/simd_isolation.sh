#!/usr/bin/env bash
# The SIMD kernels stay where the run-time dispatch can keep them from a CPU without their
# instruction set (src/oboro/util/simd_target.hpp), checked on the compiled core:
#   1. no function that the linker may share between object files (a weak, COMDAT symbol: the
#      inline functions of headers and templates) has an AVX instruction (a VEX or EVEX encoding:
#      a mnemonic that starts with "v", or a ymm, zmm or mask register), which the x86-64 baseline
#      (SSE2) never has: the linker keeps one copy of such a function for the whole program, and a
#      copy compiled for AVX-512 could then run in the scalar path of a CPU without it;
#   2. the kernels' object files do use the wide registers (their target was honoured).
# Run by ctest (tests/cmake/CMakeLists.txt) on the layer libraries of a build for the x86-64
# baseline (not with OBORO_NATIVE, where every function may use them).
# Usage: simd_isolation.sh OBJDUMP NM LIB.a...
set -euo pipefail
objdump="$1" nm="$2"
shift 2

weak="$(mktemp)"
trap 'rm -f "$weak"' EXIT
fail=0
for lib in "$@"; do
  # 1. weak functions (nm types W and V) with an AVX instruction
  "$nm" --defined-only "$lib" | awk '$2 == "W" || $2 == "V" { print $3 }' | sort -u >"$weak"
  bad="$("$objdump" -d --no-show-raw-insn "$lib" | awk '
    NR == FNR { isweak[$1] = 1; next }
    /^[^ ]+\.o:/ { obj = $1; sub(/:$/, "", obj) }
    /^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/^<|>:$/, "", fn) }
    /^ *[0-9a-f]+:\t/ && ($2 ~ /^v/ || /%([yz]mm[0-9]|k[0-7])/) { if (fn in isweak && !((obj, fn) in seen)) { seen[obj, fn] = 1; print obj ": " fn } }' "$weak" -)"
  if [ -n "$bad" ]; then
    echo "FAIL: $(basename "$lib"): shared (weak) functions compiled with AVX instructions:"
    echo "$bad" | c++filt | sed 's/^/  /'
    fail=1
  fi
done

# 2. the objects holding each instruction set's kernels use its registers (math/random.cpp: ChaCha20's
# AVX2 and AVX-512 blocks, both intrinsics, beside the baseline loop)
declare -A want=([eltwise_avx2.cpp.o]=ymm [eltwise_avx512.cpp.o]=zmm [eltwise_avx512ifma.cpp.o]=zmm
                 [ntt_avx2.cpp.o]=ymm [ntt_simd.cpp.o]=zmm [ntt_ifma.cpp.o]=zmm [random.cpp.o]=zmm)
found=""
for lib in "$@"; do
  for obj in $(ar t "$lib"); do
    [ -n "${want[$obj]:-}" ] || continue
    found+=" $obj"
    count="$("$objdump" -d --no-show-raw-insn "$lib" | awk -v o="$obj:" -v r="%${want[$obj]}[0-9]" '
      /^[^ ]+\.o:/ { cur = $1 } cur == o && $0 ~ r { n++ } END { print n + 0 }')"
    if [ "$count" -eq 0 ]; then
      echo "FAIL: $obj has no ${want[$obj]} instruction: its kernels were not compiled for their instruction set"
      fail=1
    else
      echo "ok: $obj: $count ${want[$obj]} instructions"
    fi
  done
done
for obj in "${!want[@]}"; do
  case "$found" in *" $obj"*) ;; *) echo "FAIL: $obj is in none of the libraries"; fail=1 ;; esac
done
[ "$fail" -eq 0 ] && echo "SIMD isolation: passed"
exit "$fail"

#!/usr/bin/env bash
# `cmake --install` and the exported package, as a user sees them: installs this build tree into a
# scratch prefix, then configures, builds and runs examples/quickstart (a separate CMake project,
# find_package(oboro) and oboro::oboro) against that prefix only. The consumer is compiled with the
# build's compiler, build type and flags (a sanitizer build's libraries need its runtime), never
# sees the source or build tree, and needs no GoogleTest. It also checks that the package's
# version is the project's and that the Python module is not installed with the C++ package.
# Run by ctest (tests/cmake).
# Usage: install_consumer.sh CMAKE BUILD_DIR SOURCE_DIR SCRATCH_DIR VERSION CXX BUILD_TYPE CXX_FLAGS
set -euo pipefail
cmake="$1" build="$2" src="$3" scratch="$4" version="$5" cxx="$6" build_type="$7" cxx_flags="$8"
rm -rf "$scratch"
prefix="$scratch/prefix"

"$cmake" --install "$build" --prefix "$prefix" >"$scratch.install.log" 2>&1 || { cat "$scratch.install.log"; exit 1; }
rm -f "$scratch.install.log"
for f in lib/cmake/oboro/oboroConfig.cmake lib/cmake/oboro/oboroConfigVersion.cmake lib/cmake/oboro/oboroTargets.cmake \
         include/oboro/ckks/auto_evaluator.hpp lib/liboboro_io.a; do
  [ -f "$prefix/$f" ] || { echo "FAIL: $f was not installed"; exit 1; }
done
if find "$prefix" -name "_core*" | grep -q .; then
  echo "FAIL: the Python module was installed with the C++ package"; exit 1
fi
echo "ok: installed into $prefix ($(find "$prefix" -type f | wc -l) files)"

# The consumer: the installed prefix only (CMAKE_FIND_USE_PACKAGE_REGISTRY off, no source tree).
"$cmake" -S "$src/examples/quickstart" -B "$scratch/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE="$build_type" \
  "-DCMAKE_CXX_FLAGS=$cxx_flags" >"$scratch/configure.log" 2>&1 || { cat "$scratch/configure.log"; exit 1; }
found="$(sed -n 's/^oboro_DIR:PATH=//p' "$scratch/consumer/CMakeCache.txt")"
[ "$found" = "$prefix/lib/cmake/oboro" ] || { echo "FAIL: find_package(oboro) found $found, not the installed package"; exit 1; }
"$cmake" --build "$scratch/consumer" >"$scratch/build.log" 2>&1 || { cat "$scratch/build.log"; exit 1; }
if grep -q -- "$src/src" "$scratch/build.log" "$scratch/consumer/build.ninja"; then
  echo "FAIL: the consumer compiled against the source tree"; exit 1
fi
grep -q "found oboro $version at $prefix/lib/cmake/oboro" "$scratch/configure.log" ||
  { echo "FAIL: the installed package is not version $version:"; grep "found oboro" "$scratch/configure.log"; exit 1; }
echo "ok: examples/quickstart configured (oboro $version) and built against the installed package"

"$scratch/consumer/quickstart"
rm -rf "$scratch"
echo "install_consumer: passed"

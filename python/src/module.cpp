// oboro._core: the native part of the Python package.
//
// Version, build information and an NTT self-test (this file); the exceptions (errors.cpp) and
// the CKKS API, oboro.Context and oboro.Ciphertext (ckks.cpp). More files in python/src/ are
// picked up by CMake.
#include <cstdint>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "oboro/backend/cpu/eltwise.hpp"
#include "oboro/backend/cpu/ntt_simd.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/math/random.hpp"

#if defined(OBORO_WITH_CUDA_RUNTIME)
#include "oboro/backend/cuda/elementwise.hpp"
#endif

namespace nb = nanobind;

namespace {

nb::dict build_info() {
    nb::dict d;
    d["version"] = OBORO_VERSION;
    d["compiler"] = OBORO_COMPILER;
    d["build_type"] = OBORO_BUILD_TYPE;
    d["word_size"] = 64;
    // the CPU kernels this machine runs (chosen at run time): "avx512+ifma", "avx512", "avx2", "scalar"
    d["cpu_ntt"] = std::string(oboro::backend::cpu::ntt_implementation());
    d["cpu_kernels"] = std::string(oboro::backend::cpu::eltwise_implementation());
    d["cuda"] = bool(OBORO_CUDA_COMPILED);
    d["cuda_architectures"] = std::string(OBORO_CUDA_ARCHS);
#if defined(OBORO_WITH_CUDA_RUNTIME)
    d["cuda_runtime"] = true;
    d["cuda_devices"] = oboro::cuda::device_count();
#else
    d["cuda_runtime"] = false;
    d["cuda_devices"] = 0;
#endif
    return d;
}

// Forward then inverse negacyclic NTT of pseudo-random data modulo a `bits`-bit NTT prime, for
// n = 2^log_n. True when the round trip gives the input back (and the forward transform moved it).
bool selftest_ntt(int log_n, int bits) {
    if (log_n < 1 || log_n > 17) throw nb::value_error("log_n must be in 1..17");
    if (bits < 20 || bits > 62) throw nb::value_error("bits must be in 20..62");
    const uint32_t n = uint32_t(1) << log_n;
    const uint64_t q = oboro::math::generate_ntt_primes(bits, n, 1)[0];
    const oboro::math::NttTables tables(q, n);

    oboro::math::Seed seed{};
    seed[0] = uint8_t(log_n);
    seed[1] = uint8_t(bits);
    oboro::math::Prng prng(seed);
    std::vector<uint64_t> a(n);
    for (auto& x : a) x = prng.uniform(q);
    std::vector<uint64_t> b = a;
    oboro::math::ntt_forward(b.data(), tables);
    const bool moved = n == 1 || b != a;
    for (uint64_t x : b)
        if (x >= q) return false;
    oboro::math::ntt_inverse(b.data(), tables);
    return moved && b == a;
}

}  // namespace

NB_MODULE(_core, m) {
    m.doc() = "oboro native core (C++20 CKKS library)";
    m.attr("__version__") = OBORO_VERSION;
    m.def("build_info", &build_info, nb::sig("def build_info() -> dict[str, typing.Any]"),
          "Build information: version, compiler, build type, word size, the CPU kernels in use "
          "(cpu_ntt, cpu_kernels: avx512+ifma, avx512, avx2 or scalar), CUDA (compiled, runtime, "
          "architectures, visible devices).");
    m.def("_selftest_ntt", &selftest_ntt, nb::arg("log_n"), nb::arg("bits"),
          "NTT round trip for n = 2^log_n modulo a bits-bit NTT prime; True on success.");
    oboro::py::register_errors(m);
    oboro::py::register_ckks(m);
}

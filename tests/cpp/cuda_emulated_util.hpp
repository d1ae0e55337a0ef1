// Helpers of the emulated kernel tests: the kernels' constants from host tables, and the emulated
// launches (the CUDA launch sequences run through the CPU grid emulator).
#pragma once

#include <vector>

#include "oboro/backend/cuda/base_conversion_kernels.hpp"
#include "oboro/backend/cuda/elementwise_kernels.hpp"
#include "oboro/backend/cuda/emulated_launches.hpp"
#include "oboro/backend/cuda/grid_emulator.hpp"
#include "oboro/backend/cuda/keyswitch_kernels.hpp"
#include "oboro/backend/cuda/ntt_kernels.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/math/rns.hpp"

namespace oboro::test::cuda_emu {

namespace kernels = oboro::cuda::kernels;

// The Barrett constants of the first `count` primes, as the element-wise kernels take them.
inline std::vector<math::Barrett<uint64_t>> barretts(const math::Modulus* moduli, size_t count) {
    std::vector<math::Barrett<uint64_t>> out;
    for (size_t i = 0; i < count; ++i) out.push_back(moduli[i].barrett);
    return out;
}

inline std::vector<kernels::NttTableView> table_views(const std::vector<math::NttTables>& t) {
    std::vector<kernels::NttTableView> v;
    for (const auto& x : t) v.push_back(kernels::host_table_view(x));
    return v;
}
inline std::vector<kernels::NttTableView> table_views(const math::NttTables* t, size_t count) {
    std::vector<kernels::NttTableView> v;
    for (size_t i = 0; i < count; ++i) v.push_back(kernels::host_table_view(t[i]));
    return v;
}

// The emulated launches (backend/cuda/emulated_launches.hpp), under the names the tests use.
using oboro::cuda::emulate_base_conversion;
using oboro::cuda::emulate_divide_drop;
using oboro::cuda::emulate_ntt;
using oboro::cuda::EmulatedLaunches;

}  // namespace oboro::test::cuda_emu

#include "oboro/algorithms/homomorphic_dft.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "oboro/ckks/encoder.hpp"
#include "oboro/util/error.hpp"

namespace oboro::algorithms {

using cplx = std::complex<double>;

namespace {
// The twiddles of the butterflies in a block of `len`: entry j is exp(2 pi i (5^j mod 4 len) / (4 len)),
// j < len / 2, as Encoder::embed takes them from its root table. The powers of 5 are stepped, not
// recomputed per entry: per entry they would cost O(len) each, O(n^2) for the stages.
std::vector<cplx> stage_twiddles(size_t len) {
    const uint64_t m = 4 * uint64_t(len);
    std::vector<cplx> out(len / 2);
    uint64_t g = 1;
    for (size_t j = 0; j < out.size(); ++j) {
        const double angle = 2 * M_PI * double(g) / double(m);
        out[j] = {std::cos(angle), std::sin(angle)};
        g = (g * 5) % m;
    }
    return out;
}
}  // namespace

std::vector<ComplexDiagonals> dft_stages(size_t n, DftDirection direction) {
    if (n < 2 || !ckks::is_power_of_two(n)) raise<ValueError>("dft_stages: n = ", n, " must be a power of two >= 2");
    std::vector<ComplexDiagonals> stages;
    for (size_t len = 2; len <= n; len <<= 1) {
        const size_t half = len / 2;
        const std::vector<cplx> twiddle = stage_twiddles(len);
        std::vector<cplx> d0(n), up(n), down(n);  // offsets 0, +half, -half (n - half)
        for (size_t l = 0; l < n; ++l) {
            const size_t r = l % len;
            if (direction == DftDirection::slots_to_coeffs) {
                // (u, v) -> (u + psi v, u - psi v)
                if (r < half) {
                    const cplx psi = twiddle[r];
                    d0[l] = 1;
                    up[l] = psi;
                } else {
                    const cplx psi = twiddle[r - half];
                    d0[l] = -psi;
                    down[l] = 1;
                }
            } else {
                // (u, v) -> ((u + v) / 2, (u - v) conj(psi) / 2)
                if (r < half) {
                    d0[l] = 0.5;
                    up[l] = 0.5;
                } else {
                    const cplx w = std::conj(twiddle[r - half]) * 0.5;
                    d0[l] = -w;
                    down[l] = w;
                }
            }
        }
        ComplexDiagonals stage;
        stage[0] = std::move(d0);
        if (half == n - half) {  // n == 2: both neighbours are the same offset
            for (size_t l = 0; l < n; ++l) up[l] += down[l];
            stage[int64_t(half)] = std::move(up);
        } else {
            stage[int64_t(half)] = std::move(up);
            stage[int64_t(n - half)] = std::move(down);
        }
        stages.push_back(std::move(stage));
    }
    // embed_inverse runs its stages from the largest block down
    if (direction == DftDirection::coeffs_to_slots) std::reverse(stages.begin(), stages.end());
    return stages;
}

ComplexDiagonals compose(const ComplexDiagonals& a, const ComplexDiagonals& b, size_t n) {
    ComplexDiagonals c;
    for (const auto& [i, ai] : a)
        for (const auto& [j, bj] : b) {
            auto& ck = c[int64_t((size_t(i) + size_t(j)) % n)];
            if (ck.empty()) ck.assign(n, cplx(0, 0));
            for (size_t l = 0; l < n; ++l) ck[l] += ai[l] * bj[(l + size_t(i)) % n];
        }
    double largest = 0;
    for (const auto& [k, v] : c)
        for (const cplx& x : v) largest = std::max(largest, std::abs(x));
    for (auto it = c.begin(); it != c.end();) {
        const bool tiny = std::all_of(it->second.begin(), it->second.end(),
                                      [&](const cplx& x) { return std::abs(x) <= largest * 0x1p-60; });
        it = tiny ? c.erase(it) : std::next(it);
    }
    return c;
}

ComplexDiagonals scaled(ComplexDiagonals m, cplx factor) {
    for (auto& [k, v] : m)
        for (cplx& x : v) x *= factor;
    return m;
}

ComplexDiagonals periodic_extension(const ComplexDiagonals& m, size_t n) {
    ComplexDiagonals out;
    for (const auto& [k, v] : m) {
        std::vector<cplx> w(2 * n);
        for (size_t l = 0; l < 2 * n; ++l) w[l] = v[l % n];
        out[k] = std::move(w);
    }
    return out;
}

std::vector<ComplexDiagonals> merge_stages(const std::vector<ComplexDiagonals>& stages, int levels, size_t n) {
    const int count = int(stages.size());
    if (levels < 1 || levels > count)
        raise<ValueError>("merge_stages: ", levels, " levels for ", count, " butterfly stages (1..", count, ")");
    std::vector<ComplexDiagonals> out;
    size_t next = 0;
    for (int g = 0; g < levels; ++g) {
        const int size = count / levels + (g < count % levels ? 1 : 0);
        ComplexDiagonals m = stages[next++];
        for (int s = 1; s < size; ++s) m = compose(stages[next++], m, n);
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<cplx> apply_diagonals(const ComplexDiagonals& m, const std::vector<cplx>& x) {
    const size_t n = x.size();
    std::vector<cplx> y(n, cplx(0, 0));
    for (const auto& [k, d] : m)
        for (size_t l = 0; l < n; ++l) y[l] += d[l] * x[(l + size_t(k)) % n];
    return y;
}

TransformChain::TransformChain(ckks::ContextPtr ctx, const std::vector<Step>& steps, Hoisting hoisting,
                               const MemoryPolicy& memory) {
    transforms_.reserve(steps.size());
    for (const Step& s : steps)
        transforms_.emplace_back(ctx, s.matrix, s.slots, hoisting, PlaintextScale::prime, s.scale_factor, memory);
}

std::vector<int64_t> TransformChain::rotation_steps() const {
    std::set<int64_t> all;
    for (const LinearTransform& t : transforms_)
        for (int64_t k : t.rotation_steps()) all.insert(k);
    return {all.begin(), all.end()};
}

OpCounts TransformChain::cost() const {
    OpCounts c;
    for (const LinearTransform& t : transforms_) c += t.cost();
    return c;
}

size_t TransformChain::plaintext_bytes(int input_level) const {
    size_t bytes = 0;
    for (size_t i = 0; i < transforms_.size(); ++i) bytes += transforms_[i].plaintext_bytes(input_level - int(i));
    return bytes;
}

void TransformChain::encode_diagonals(int input_level) const {
    for (size_t i = 0; i < transforms_.size(); ++i) transforms_[i].encode_diagonals(input_level - int(i));
}

size_t TransformChain::kept_plaintext_bytes() const {
    size_t bytes = 0;
    for (const LinearTransform& t : transforms_) bytes += t.kept_plaintext_bytes();
    return bytes;
}

template <ckks::Encrypted T> T TransformChain::apply(const CountedOps& ops, T x, const ckks::GaloisKeys& keys) const {
    for (const LinearTransform& t : transforms_) {
        x.set_slots(t.slots());
        x = t.apply(ops, x, keys);
    }
    return x;
}

template ckks::Ciphertext TransformChain::apply(const CountedOps&, ckks::Ciphertext, const ckks::GaloisKeys&) const;
template ckks::CiphertextBatch TransformChain::apply(const CountedOps&, ckks::CiphertextBatch,
                                                     const ckks::GaloisKeys&) const;

}  // namespace oboro::algorithms

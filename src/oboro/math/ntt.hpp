// Negacyclic number-theoretic transform over Z_q[X]/(X^n + 1).
//
// Forward: Cooley-Tukey butterflies with the powers of psi (a primitive 2n-th root of unity) in
// bit-reversed order, so no separate bit-reversal pass is needed (Longa-Naehrig). Inverse:
// Gentleman-Sande with the inverse powers, n^{-1} folded into the last stage.
// Butterflies are Harvey's lazy ones: values stay in [0, 4q) between stages and one Shoup
// multiplication per butterfly replaces a full modular reduction.
//
// Evaluation order: after ntt_forward, slot i holds a(psi^(2*bitrev(i)+1)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace oboro::math {

// bit-reverse the low `bits` bits of x
inline uint32_t bit_reverse(uint32_t x, int bits) {
    if (bits == 0) return 0;
    // all 32 bits reversed by swapping halves of ever smaller blocks, then the low `bits` kept
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
    x = (x >> 16) | (x << 16);
    return x >> (32 - bits);
}

struct NttTables {
    uint64_t q = 0;
    uint32_t n = 0;
    int log_n = 0;
    uint64_t psi = 0;                      // primitive 2n-th root of unity mod q
    std::vector<uint64_t> psi_rev;          // psi^bitrev(i)
    std::vector<uint64_t> psi_rev_shoup;
    std::vector<uint64_t> psi_inv_rev;      // psi^-bitrev(i)
    std::vector<uint64_t> psi_inv_rev_shoup;
    uint64_t n_inv = 0, n_inv_shoup = 0;                  // n^{-1} mod q
    uint64_t last_inv = 0, last_inv_shoup = 0;            // n^{-1} * psi_inv_rev[1] mod q

    NttTables() = default;
    NttTables(uint64_t modulus, uint32_t degree);
    // The tables of the transform of size `degree` (a power of two >= 2 dividing full.n) whose root
    // is full.psi^(full.n / degree): the first `degree` powers of full's bit-reversed tables are
    // exactly its own (bitrev over log_n bits of i < degree is bitrev over log2(degree) bits times
    // full.n / degree). A polynomial in X^(full.n / degree) has full's NTT words in runs of
    // full.n / degree equal words, and this transform of its `degree` coefficients gives one word per run.
    NttTables(const NttTables& full, uint32_t degree);
};

// In place. Input in [0, 4q) (canonical input is fine), output canonical in [0, q).
void ntt_forward(uint64_t* a, const NttTables& t);
// In place. Input in [0, 2q), output canonical in [0, q).
void ntt_inverse(uint64_t* a, const NttTables& t);
// Forward without the final reduction: output in [0, 4q). For fused kernels that reduce later.
void ntt_forward_lazy(uint64_t* a, const NttTables& t);

}  // namespace oboro::math

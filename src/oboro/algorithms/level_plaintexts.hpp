// Fixed plaintext vectors (masks, diagonals) encoded once per level and reused. Each is encoded
// at scale q_level, the prime that the rescale after the cMult removes, so cMult + rescale gives
// back the ciphertext's own scale (up to rounding in the last bits of the double) and products of
// such ciphertexts can be summed without any scale alignment. Or, for automatic mode, at the
// standard scale D_level: cMult + rescale of a ciphertext at D_level gives D_level^2 / q_level =
// D_{level-1}, the standard scale of the level below, exactly (ckks/auto_evaluator.hpp). Over the basis Q_level * P
// (Basis::qp, Encoder::encode_extended) they multiply the rotations of double hoisting.
//
// Where the encodings live: a Ciphertext takes them as Plaintexts (host memory); a batch takes
// them as PlaintextBatches of one plaintext (broadcast to every element) in its own memory, host
// or a device queue's: the host encodings copied there once per (level, memory), so a batch on
// a device gives the same words as the host.
#pragma once

#include <complex>
#include <concepts>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/evaluator.hpp"

namespace oboro::algorithms {

// The plaintext operand type of T: Plaintext for a Ciphertext, PlaintextBatch for a batch.
template <ckks::Encrypted T>
using PlainOf = std::conditional_t<std::same_as<T, ckks::Ciphertext>, ckks::Plaintext, ckks::PlaintextBatch>;

// The scale of the encodings at level l: q_l (the rescale gives the operand's scale back), the
// context's standard scale D_l (the rescale takes an operand at D_l to D_{l-1}), or 1 (integer
// polynomials that multiply without a rescale: the constant i is the monomial X^(N/2)).
enum class PlaintextScale { prime, standard, unit };
double plaintext_scale(const ckks::Context& ctx, PlaintextScale kind, int level);

class LevelPlaintexts {
public:
    // `vectors`: slot values (each of `slots` values or fewer; missing ones are zero), encoded in
    // `basis` at every level. Real vectors are kept as they are (half the memory of complex ones).
    LevelPlaintexts(ckks::ContextPtr ctx, std::vector<std::vector<double>> vectors, size_t slots,
                    ckks::Basis basis = ckks::Basis::q, PlaintextScale scale = PlaintextScale::prime);
    // `scale_factor` multiplies the encodings' scale (plaintext_scale(scale, level) * factor): a
    // transform of small entries keeps its relative precision (algorithms/homomorphic_dft.hpp).
    LevelPlaintexts(ckks::ContextPtr ctx, std::vector<std::vector<std::complex<double>>> vectors, size_t slots,
                    ckks::Basis basis = ckks::Basis::q, PlaintextScale scale = PlaintextScale::prime,
                    double scale_factor = 1.0);

    size_t size() const { return real_.size() + complex_.size(); }
    ckks::Basis basis() const { return basis_; }
    // The runs of equal NTT words every encoding has (ckks::CompactPlaintext): n / 2p for the
    // longest period p (a power of two dividing slots) with which the vectors repeat, exactly; 1
    // when that is fewer than kMinCompactBlock words. Vectors of period p are encoded with p
    // slots, so their polynomials are exactly those of X^(n / 2p).
    size_t block() const { return block_; }
    static constexpr size_t kMinCompactBlock = 8;  // one AVX-512 register of words
    // The host memory of the encodings at `level`: dense (at) or compact (compact_at, block()
    // words per stored word).
    size_t bytes_at(int level, bool compact) const;
    // The host memory of the encodings kept so far (every level of at and compact_at).
    size_t kept_bytes() const;
    // The encodings at `level` kept as CompactPlaintexts (block() > 1, else ValueError): a
    // fraction of the memory of at(level), for Evaluator::multiply_plain_sum on host operands
    // (encoded on first use; safe to call from several threads).
    const std::vector<ckks::CompactPlaintext>& compact_at(int level) const;
    // The encodings at `level` (encoded on first use; safe to call from several threads).
    const std::vector<ckks::Plaintext>& at(int level) const;
    // The same encodings as batches of one plaintext in `memory`'s memory (nullptr or a host queue:
    // host memory), copied there on first use; safe to call from several threads. The batches hold
    // their queue, so a cached entry's queue outlives it. A device gets dense words (expanded from
    // compact_at when block() > 1, without keeping them on the host).
    const std::vector<ckks::PlaintextBatch>& at(int level, const ckks::QueuePtr& memory) const;
    // The encodings at x's level as operands of x, in x's memory.
    template <ckks::Encrypted T> const std::vector<PlainOf<T>>& operands_for(const T& x) const {
        if constexpr (std::same_as<T, ckks::Ciphertext>) return at(x.level());
        else return at(x.level(), x.device_queue());
    }
    // compact_at(x's level) when x can take it (block() > 1 and x in host memory: only the CPU
    // queue's multiply_plain_sum reads runs), else nullptr.
    template <ckks::Encrypted T>
    const std::vector<ckks::CompactPlaintext>* compact_operands_for(const T& x) const {
        if (block_ == 1) return nullptr;
        if constexpr (std::same_as<T, ckks::CiphertextBatch>)
            if (x.device()) return nullptr;
        return &compact_at(x.level());
    }
    // Vectors `which` encoded now at x's level, in x's memory, and not kept: an encoding per use
    // instead of the memory of every encoding (MemoryPolicy::encode_on_use, linear_transform.hpp).
    template <ckks::Encrypted T>
    std::vector<PlainOf<T>> encode_for(const T& x, const std::vector<size_t>& which) const {
        std::vector<ckks::Plaintext> pts;
        pts.reserve(which.size());
        for (size_t i : which) pts.push_back(encode(i, x.level()));
        if constexpr (std::same_as<T, ckks::Ciphertext>) return pts;
        else return batches_in(pts, x.device_queue());
    }

private:
    // vector `index` at `level` (with period_ slots: the same slot vector, a polynomial in X^block_)
    ckks::Plaintext encode(size_t index, int level) const;
    // encode(values, scale) of vector `index`'s first period_ values at its scale at `level`, seen
    // with slots_ slots: the one place that picks the vector and its scale for encode and compact_locked
    template <typename Encode> auto encode_with(size_t index, int level, Encode encode) const;
    const std::vector<ckks::Plaintext>& encoded_locked(int level) const;  // mutex_ held
    const std::vector<ckks::CompactPlaintext>& compact_locked(int level) const;  // mutex_ held
    void set_period();  // period_ and block_ from the vectors, which it then cuts to their first period
    // each plaintext as a batch of one in `memory`'s memory (host memory for nullptr or a host queue)
    std::vector<ckks::PlaintextBatch> batches_in(const std::vector<ckks::Plaintext>& pts,
                                                 const ckks::QueuePtr& memory) const;

    ckks::ContextPtr ctx_;
    ckks::Encoder encoder_;
    // the vectors' first period_ values (or fewer: missing ones are zero); one of the two is empty
    std::vector<std::vector<double>> real_;
    std::vector<std::vector<std::complex<double>>> complex_;
    size_t slots_;
    ckks::Basis basis_;
    PlaintextScale scale_;
    double scale_factor_ = 1.0;
    size_t period_ = 0;  // the longest of the vectors' periods
    size_t block_ = 1;
    mutable std::mutex mutex_;
    mutable std::map<int, std::vector<ckks::Plaintext>> cache_;
    mutable std::map<int, std::vector<ckks::CompactPlaintext>> compact_;
    // keyed by the device queue (nullptr: host memory); std::map keeps references stable
    mutable std::map<std::pair<int, const backend::Queue*>, std::vector<ckks::PlaintextBatch>> batches_;
};

}  // namespace oboro::algorithms

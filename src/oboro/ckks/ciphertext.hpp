// Plaintexts and ciphertexts. Both keep their polynomials in NTT (evaluation) form, limb-major:
// polynomial j, limb i is the n words at data() + (j * limbs() + i) * n. A ciphertext at level l
// has l + 1 limbs per polynomial; `scale` is the exact scale of the encoded message (after a
// rescale it is divided by the prime that was dropped, not rounded to a nominal power of two).
#pragma once

#include <cstdint>
#include <optional>

#include "oboro/ckks/context.hpp"
#include "oboro/math/random.hpp"
#include "oboro/util/buffer.hpp"

namespace oboro::ckks {

// The RNS basis of an object's limbs: Q_level (the ciphertext primes q_0 .. q_level), or
// Q_level * P, with the special primes of key switching after them: the extended basis in which
// double hoisting keeps rotated ciphertexts and their sums before one ModDown (Evaluator::
// rotate_many_extended, mod_down), and the plaintexts multiplied into them. An object over
// Q_level * P decrypts to P times its message; only those operations take it.
enum class Basis { q, qp };

// The special limbs an object in `basis` carries after its ciphertext limbs.
inline size_t special_limbs_of(const Context& ctx, Basis basis) { return basis == Basis::qp ? ctx.p_count() : 0; }

class PolyArray {
public:
    PolyArray() = default;
    PolyArray(const Context& ctx, size_t polys, int level, double scale, size_t slots, Basis basis = Basis::q)
        : data_(polys * (size_t(checked_level(ctx, level) + 1) + special_limbs_of(ctx, basis)) * ctx.n()), n_(ctx.n()),
          polys_(polys), level_(level), special_(special_limbs_of(ctx, basis)), scale_(scale), slots_(slots),
          context_id_(ctx.id()) {}

    size_t n() const { return n_; }
    // Limbs per polynomial: level + 1, and the special primes over Q_level * P.
    size_t limbs() const { return size_t(level_ + 1) + special_; }
    size_t special_limbs() const { return special_; }
    Basis basis() const { return special_ ? Basis::qp : Basis::q; }
    int level() const { return level_; }
    double scale() const { return scale_; }
    size_t slots() const { return slots_; }
    uint64_t context_id() const { return context_id_; }
    bool empty() const { return data_.empty(); }

    void set_scale(double s) { scale_ = s; }
    void set_slots(size_t s) { slots_ = s; }

    // Read access never changes anything; write access has its own name, because it forgets the
    // seed of polynomial 1 (see uniform_seed): the data may change.
    const uint64_t* poly(size_t j) const { return data_.data() + j * limbs() * n_; }
    const uint64_t* data() const { return data_.data(); }
    uint64_t* mutable_poly(size_t j) {
        uniform_seed_.reset();
        return data_.data() + j * limbs() * n_;
    }
    uint64_t* mutable_data() {
        uniform_seed_.reset();
        return data_.data();
    }
    size_t word_count() const { return data_.size(); }

    // Secret-key encryption draws polynomial 1 (the uniform "a") as the expansion of a 32-byte
    // seed (math::Prng(seed), sample_uniform over the limbs of this level). While polynomial 1 is
    // untouched the seed stands for it, and serialization stores the seed instead of the
    // polynomial (half the size). Every write access and every reshape forgets the seed.
    const std::optional<math::Seed>& uniform_seed() const { return uniform_seed_; }
    // The caller guarantees that polynomial 1 is the expansion of `seed` at this level.
    void set_uniform_seed(const math::Seed& seed) { uniform_seed_ = seed; }

protected:
    static int checked_level(const Context& ctx, int level);  // throws LevelMismatch outside 0..max_level
    size_t polys() const { return polys_; }
    void reshape_polys(size_t polys, int level);  // keeps the leading limbs of each polynomial
    // Makes this an array of `polys` polynomials at `level` with undefined contents, keeping the
    // buffer when it already has exactly the words needed (outputs reused across calls).
    void reset_shape(const Context& ctx, size_t polys, int level, double scale, size_t slots, Basis basis);
    void reset_shape(size_t n, size_t polys, int level, size_t special, double scale, size_t slots,
                     uint64_t context_id);

    AlignedBuffer<uint64_t> data_;
    size_t n_ = 0;
    size_t polys_ = 0;
    int level_ = 0;
    size_t special_ = 0;
    double scale_ = 1;
    size_t slots_ = 0;
    uint64_t context_id_ = 0;
    std::optional<math::Seed> uniform_seed_;
};

class Plaintext : public PolyArray {
    friend class CompactPlaintext;  // expands into one (reset_shape)

public:
    Plaintext() = default;
    Plaintext(const Context& ctx, int level, double scale, size_t slots, Basis basis = Basis::q)
        : PolyArray(ctx, 1, level, scale, slots, basis) {}
    // Drops limbs above `level` in place (over Q_level: ValueError over Q_level * P).
    void drop_to_level(int level) { reshape_polys(1, level); }
};

// A plaintext whose NTT words come in runs of `block` equal words, kept as one word per run:
// n / block words per limb. A vector of slots that repeats with period p is a polynomial in
// X^(n / 2p), and such a polynomial takes one value on each run of n / 2p consecutive NTT words
// (slot i holds a(psi^(2 bitrev(i) + 1)), which depends only on i's high bits). Most of the
// diagonals of bootstrapping's DFTs repeat with a short period (algorithms/homomorphic_dft.hpp):
// kept this way they take a fraction of the memory, and multiply_plain_sum, the only operation
// that takes them, reads a fraction of the words.
class CompactPlaintext : public PolyArray {
public:
    CompactPlaintext() = default;
    // The runs of `dense` (over either basis), one word each. ValueError unless block is a power of
    // two dividing n and every run of `block` words of every limb is one word repeated.
    CompactPlaintext(const Plaintext& dense, size_t block);
    // `block` (a power of two dividing n) words per stored word, the stored words undefined
    // (Encoder::encode_compact writes them).
    CompactPlaintext(const Context& ctx, int level, double scale, size_t slots, Basis basis, size_t block);
    // How many NTT words each stored word stands for; n() is the words stored per limb.
    size_t block() const { return block_; }
    // The dense plaintext: every word repeated `block` times.
    Plaintext expanded() const;

private:
    size_t block_ = 1;
};

class Ciphertext : public PolyArray {
    friend class CiphertextBatch;  // splits a batch into ciphertexts (reset_shape)

public:
    Ciphertext() = default;
    Ciphertext(const Context& ctx, size_t size, int level, double scale, size_t slots, Basis basis = Basis::q)
        : PolyArray(ctx, size, level, scale, slots, basis) {}
    // Number of polynomials: 2 for a normal ciphertext, 3 after a multiplication before
    // relinearization.
    size_t size() const { return polys(); }
    // Drops limbs above `level` and/or the polynomials past `size`, in place, without copying
    // the limbs that stay (memmove within the buffer).
    void reshape(size_t size, int level) { reshape_polys(size, level); }
    // Turns this into an output of `size` polynomials at `level` (contents undefined); no
    // allocation when the buffer already has that many words. The Evaluator's *_into forms use it.
    void prepare_output(const Context& ctx, size_t size, int level, double scale, size_t slots,
                        Basis basis = Basis::q) {
        reset_shape(ctx, size, level, scale, slots, basis);
    }
};

}  // namespace oboro::ckks

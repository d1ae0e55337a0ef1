// The CKKS encoder: complex (or real) vectors <-> plaintext polynomials, through the canonical
// embedding. Slot j of a full plaintext is the polynomial evaluated at zeta^(5^j), zeta =
// exp(i*pi/N), so that the automorphism X -> X^(5^k) rotates the slots by k.
//
// A vector of `slots` values (a power of two <= N/2) is encoded in the subring Z[X^(N/(2*slots))];
// viewed with N/2 slots it is the same vector repeated N/(2*slots) times, which is how CKKS packs
// fewer slots, and why rotations of a sparse plaintext wrap around at `slots`.
#pragma once

#include <complex>
#include <optional>
#include <vector>

#include "oboro/ckks/ciphertext.hpp"

namespace oboro::ckks {

// The headroom that keeps a wrapped-around result from passing as a value (docs/precision.md,
// "Values too large for the modulus"). A result is correct while every coefficient of its
// polynomial stays under Q_level / 2 in magnitude; beyond that it wraps to the other side and
// decodes to garbage, and a wrapped coefficient lands anywhere in (-Q/2, Q/2]. So:
//  - decoding refuses a coefficient beyond Q_level / 2^overflow_headroom_bits: a wrapped
//    coefficient lands there with probability 1 - 2^(1 - overflow_headroom_bits) = 15/16, and a
//    wrapped result with m coefficients that carry the message escapes with probability
//    (1/16)^m (a vector of one real value: one coefficient; random data: all of them);
//  - encoding refuses a value whose scaled coefficients reach Q_level / 2^encoding_headroom_bits,
//    so that what was encoded (plus noise, plus a few additions) still decodes.
// Coefficients are bounded by the largest slot value times the scale, so a result decodes when
// max |value| * scale < Q_level / 2^overflow_headroom_bits.
inline constexpr int overflow_headroom_bits = 5;
inline constexpr int encoding_headroom_bits = 6;

// The shape of an encoding with the defaults filled in (Encoder::encoding_shape).
struct EncodingShape {
    int level = 0;
    double scale = 1;
    size_t slots = 0;
    Basis basis = Basis::q;  // Basis::qp: over Q_level * P (encode_extended)
};

class Encoder {
public:
    explicit Encoder(ContextPtr ctx);

    const ContextPtr& context() const { return ctx_; }

    // values.size() <= slots; missing values are zero. Not given (std::nullopt): the top level, the
    // context's default scale, N/2 slots. A given value is used as it is: ValueError for a scale
    // that is not finite and >= 1 (0 included), slots that are not a power of two in [1, N/2], and
    // LevelMismatch for a level outside 0..max_level.
    Plaintext encode(const std::vector<std::complex<double>>& values, std::optional<int> level = std::nullopt,
                     std::optional<double> scale = std::nullopt, std::optional<size_t> slots = std::nullopt) const;
    Plaintext encode(const std::vector<double>& values, std::optional<int> level = std::nullopt,
                     std::optional<double> scale = std::nullopt, std::optional<size_t> slots = std::nullopt) const;
    // The same encoding over Q_level * P (ciphertext.hpp: Basis): the weights that double hoisting
    // multiplies into rotations kept in the extended basis (Evaluator::rotate_many_extended).
    Plaintext encode_extended(const std::vector<std::complex<double>>& values, int level, double scale,
                              size_t slots) const;
    Plaintext encode_extended(const std::vector<double>& values, int level, double scale, size_t slots) const;
    // encode (basis q) or encode_extended (basis qp) of `slots` values kept as a CompactPlaintext
    // with a block of N / (2 slots) words: the same words as CompactPlaintext(encode(...), block),
    // computed by transforms of 2 slots words per limb instead of N.
    CompactPlaintext encode_compact(const std::vector<std::complex<double>>& values, int level, double scale,
                                    size_t slots, Basis basis) const;
    CompactPlaintext encode_compact(const std::vector<double>& values, int level, double scale, size_t slots,
                                    Basis basis) const;
    // A constant in every slot.
    Plaintext encode_constant(std::complex<double> value, std::optional<int> level = std::nullopt,
                              std::optional<double> scale = std::nullopt,
                              std::optional<size_t> slots = std::nullopt) const;

    // ModulusOverflow when a coefficient is beyond Q_level / 2^overflow_headroom_bits (the result
    // has most likely wrapped around the modulus; the message says what to change).
    std::vector<std::complex<double>> decode(const Plaintext& pt) const;
    std::vector<double> decode_real(const Plaintext& pt) const;

    // Exposed for the decryptor: decode the polynomial `poly` (NTT form, level+1 limbs; it is
    // overwritten) with the given scale and slot count.
    std::vector<std::complex<double>> decode_poly(uint64_t* poly, int level, double scale, size_t slots) const;

    // The embedding itself on a vector of length `slots` (in place); exposed for tests.
    void embed(std::vector<std::complex<double>>& v) const;          // coefficients -> slots
    void embed_inverse(std::vector<std::complex<double>>& v) const;  // slots -> coefficients

    // ---- the two halves of encode(), for batched encoding (batch_encoder.hpp) ----
    // level / scale / slots with defaults resolved (as encode's), checked for `value_count`
    // values: LevelMismatch, ValueError.
    EncodingShape encoding_shape(const char* op, size_t value_count, std::optional<int> level,
                                 std::optional<double> scale, std::optional<size_t> slots) const;
    // The 2 * slots integer coefficients of the subring (subring_layout.hpp) of `count` values:
    // round(coefficient * scale), real parts then imaginary parts. ValueError when one is not
    // finite or reaches the modulus (Q_level, or Q_level * P over Basis::qp) over
    // 2^encoding_headroom_bits.
    void scaled_coefficients(const char* op, const std::complex<double>* values, size_t count,
                             const EncodingShape& shape, double* out) const;

private:
    // ModulusOverflow unless every decoded coefficient (already divided by the scale) stays within
    // Q_level / 2^overflow_headroom_bits.
    void check_not_wrapped(const double* coefficients, size_t count, int level, double scale) const;
    void check_slots(const char* op, size_t slots, size_t count) const;
    // encoding_shape over `basis`, and the scaled coefficients of `values` for it (into
    // `coefficients`): the half of encode_in and encode_compact before the words are written
    EncodingShape shaped_coefficients(const char* op, const std::vector<std::complex<double>>& values,
                                      std::optional<int> level, std::optional<double> scale,
                                      std::optional<size_t> slots, Basis basis, std::vector<double>& coefficients) const;
    Plaintext encode_in(const char* op, const std::vector<std::complex<double>>& values, std::optional<int> level,
                        std::optional<double> scale, std::optional<size_t> slots, Basis basis) const;

    ContextPtr ctx_;
    // The embedding's twiddles, one run per butterfly stage (the constructor says which).
    std::vector<std::complex<double>> twiddles_;
    std::vector<std::complex<double>> inverse_twiddles_;
};


inline bool is_power_of_two(size_t x) { return x && (x & (x - 1)) == 0; }

// v in bit-reversed index order (v.size() a power of two): the permutation that Encoder::embed
// applies before its butterflies (algorithms/homomorphic_dft.hpp leaves it out).
void bit_reverse_permute(std::vector<std::complex<double>>& v);

}  // namespace oboro::ckks

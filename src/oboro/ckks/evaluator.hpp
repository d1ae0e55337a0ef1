// Homomorphic operations. Every operation has an allocating form that returns a new ciphertext
// (`add(a, b)`) and an in-place form that overwrites its first operand (`add_inplace(a, b)`).
// Operands are checked before anything is written: a mismatch of context, level or scale, a
// missing key or an impossible request throws a typed error (see util/error.hpp) naming the
// operation and the operands' levels and scales.
//
// The evaluator never relinearizes or rescales on its own; that is the caller's choice (the
// Python layer automates it).
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "oboro/ckks/ciphertext.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/hoisting.hpp"
#include "oboro/ckks/keys.hpp"

namespace oboro::ckks {

class Evaluator {
public:
    explicit Evaluator(ContextPtr ctx);

    const ContextPtr& context() const { return ctx_; }

    // ---- addition and subtraction ----
    Ciphertext add(const Ciphertext& a, const Ciphertext& b) const;
    void add_inplace(Ciphertext& a, const Ciphertext& b) const;
    Ciphertext add(const Ciphertext& a, const Plaintext& b) const;
    void add_inplace(Ciphertext& a, const Plaintext& b) const;
    Ciphertext add(const Ciphertext& a, double c) const;      // c added to every slot
    void add_inplace(Ciphertext& a, double c) const;
    Ciphertext sub(const Ciphertext& a, const Ciphertext& b) const;
    void sub_inplace(Ciphertext& a, const Ciphertext& b) const;
    Ciphertext sub(const Ciphertext& a, const Plaintext& b) const;
    void sub_inplace(Ciphertext& a, const Plaintext& b) const;
    Ciphertext sub(const Ciphertext& a, double c) const;
    void sub_inplace(Ciphertext& a, double c) const;
    Ciphertext negate(const Ciphertext& a) const;
    void negate_inplace(Ciphertext& a) const;

    // ---- into preallocated outputs ----
    // The same results as add / multiply / multiply_relin_rescale written into `out`, whose buffer
    // is reused when it has the right size (so a loop over many operands allocates once). `out`
    // must not be an operand.
    void add_into(const Ciphertext& a, const Ciphertext& b, Ciphertext& out) const;
    void multiply_into(const Ciphertext& a, const Ciphertext& b, Ciphertext& out) const;
    void multiply_relin_rescale_into(const Ciphertext& a, const Ciphertext& b, const RelinKey& rk,
                                     Ciphertext& out) const;

    // ---- multiplication ----
    // Ciphertext x ciphertext: a size-3 result at scale a.scale * b.scale (relinearize next).
    Ciphertext multiply(const Ciphertext& a, const Ciphertext& b) const;
    void multiply_inplace(Ciphertext& a, const Ciphertext& b) const;
    Ciphertext square(const Ciphertext& a) const;
    // Ciphertext x plaintext: scale a.scale * b.scale.
    Ciphertext multiply(const Ciphertext& a, const Plaintext& b) const;
    void multiply_inplace(Ciphertext& a, const Plaintext& b) const;
    // Ciphertext x real constant, encoded at scale q_level so that a following rescale returns
    // the ciphertext to (almost exactly) its current scale.
    Ciphertext multiply(const Ciphertext& a, double c) const;
    void multiply_inplace(Ciphertext& a, double c) const;
    // Ciphertext x integer: exact, consumes no level, keeps the scale.
    Ciphertext multiply_integer(const Ciphertext& a, int64_t c) const;
    void multiply_integer_inplace(Ciphertext& a, int64_t c) const;

    // ---- relinearization, rescaling, levels ----
    Ciphertext relinearize(const Ciphertext& a, const RelinKey& rk) const;
    void relinearize_inplace(Ciphertext& a, const RelinKey& rk) const;
    // Divides by the last prime q_l (with rounding) and drops it: level l -> l-1, scale / q_l.
    Ciphertext rescale(const Ciphertext& a) const;
    void rescale_inplace(Ciphertext& a) const;
    // multiply + relinearize + rescale in one call.
    Ciphertext multiply_relin_rescale(const Ciphertext& a, const Ciphertext& b, const RelinKey& rk) const;
    // Brings `a` to a lower `level` at (almost exactly) the given `scale`, e.g. the level and scale
    // of a product, so that the two can be added: multiplies by the integer round(scale * q_l /
    // a.scale), rescales by q_l (the result's scale is then within 2^-40 of `scale`) and drops
    // any further limbs. Consumes one prime, exactly like the product it is matched to.
    Ciphertext rescale_to(const Ciphertext& a, int level, double scale) const;
    void rescale_to_inplace(Ciphertext& a, int level, double scale) const;
    // Drops limbs down to `level` without changing the message or the scale.
    Ciphertext drop_to_level(const Ciphertext& a, int level) const;
    void drop_to_level_inplace(Ciphertext& a, int level) const;

    // ---- rotations and conjugation ----
    // Left rotation by `steps` slots (negative: right), -slots < steps < slots.
    Ciphertext rotate(const Ciphertext& a, int64_t steps, const GaloisKeys& keys) const;
    void rotate_inplace(Ciphertext& a, int64_t steps, const GaloisKeys& keys) const;
    Ciphertext conjugate(const Ciphertext& a, const GaloisKeys& keys) const;
    void conjugate_inplace(Ciphertext& a, const GaloisKeys& keys) const;
    // The automorphism X -> X^galois followed by key switching.
    Ciphertext apply_galois(const Ciphertext& a, uint64_t galois, const GaloisKeys& keys, const char* op) const;

    // ---- hoisted rotations (hoisting.cpp) ----
    // out[i] = rotate(a, steps[i]) for every step (0 and repeats allowed), with ONE ModUp of a's c1
    // shared by all of them. Equal to the one-at-a-time rotations up to key-switching noise.
    // Every step is checked and every key looked up before any work: a MissingKey names all the
    // steps whose keys are missing.
    std::vector<Ciphertext> rotate_many(const Ciphertext& a, const std::vector<int64_t>& steps,
                                        const GaloisKeys& keys, KeySwitchCounts* counts = nullptr) const;
    // sum_i rotate(a, steps[i]) (a step 0 adds a itself, without a key) with one ModUp and one
    // ModDown: the key inner products are summed over Q*P and divided by P once (lazy ModDown).
    Ciphertext rotate_sum(const Ciphertext& a, const std::vector<int64_t>& steps, const GaloisKeys& keys,
                          KeySwitchCounts* counts = nullptr) const;

private:
    void check_context(const char* op, const PolyArray& x, const char* name) const;
    void check_same_level_scale(const char* op, const PolyArray& a, const PolyArray& b) const;
    void check_size2(const char* op, const Ciphertext& a, const char* name) const;
    // The checks of a ciphertext product (context, level, sizes, product scale).
    void check_multiply(const char* op, const Ciphertext& a, const Ciphertext& b) const;
    void check_multiply_relin_rescale(const Ciphertext& a, const Ciphertext& b, const RelinKey& rk) const;
    void check_output(const char* op, const Ciphertext& out, const Ciphertext& a, const Ciphertext& b) const;
    void check_relin_key(const char* op, const RelinKey& rk, const Ciphertext& a) const;
    // ValueError unless -slots < step < slots for the operand's slot count.
    void check_step(const char* op, const Ciphertext& a, int64_t step) const;
    // The Galois element of every step (1 for step 0); ValueError for a step out of range,
    // MissingKey naming every step without a key.
    std::vector<uint64_t> check_rotations(const char* op, const Ciphertext& a, const std::vector<int64_t>& steps,
                                          const GaloisKeys& keys) const;
    const KeySwitchKey& galois_key(const char* op, const GaloisKeys& keys, uint64_t galois, int64_t steps,
                                   const Ciphertext& a) const;
    void add_constant(const char* op, Ciphertext& a, double c, bool subtract) const;
    // every polynomial of a times per_limb[i] on limb i
    void multiply_polys_by(Ciphertext& a, const std::vector<uint64_t>& per_limb) const;
    // round(c * scale) mod q_i for every limb of a level
    std::vector<uint64_t> scaled_constant(const char* op, double c, double scale, int level) const;

    ContextPtr ctx_;
};

// Helpers shared by Evaluator and BatchEvaluator:
// round(c * scale) mod q_i for every limb of a level (ValueError when it does not fit).
std::vector<uint64_t> scaled_constant(const Context& ctx, const char* op, double c, double scale, int level);
// c mod q_i for every limb of a level.
std::vector<uint64_t> integer_residues(const Context& ctx, int64_t c, int level);
// ScaleMismatch when scale_a * scale_b does not fit the modulus at `level`.
void check_product_scale(const Context& ctx, const char* op, int level, double scale_a, double scale_b);

// Two scales are "the same" when they agree to 40 bits: adding messages whose scales differ
// more than that would silently distort the result beyond CKKS precision.
bool same_scale(double a, double b);

// "level 3, scale 2^40.0000000000": how operands are named in error messages.
std::string describe(const PolyArray& x);

}  // namespace oboro::ckks

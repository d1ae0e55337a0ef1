// Operation counts of the matrix algorithms, in the units of paper 003 (Table 5): Add, Rot, cMult
// and Mult, plus the relinearizations, rescales and key-switch work behind them. The algorithms
// do every homomorphic operation through the counted calls below, so the counts are what was
// executed, not a formula (tests compare them with the formulas and the paper's table).
//
// Conventions: Add = ciphertext + ciphertext (any degree); Rot = one rotation (an automorphism and
// its key switch; hoisted rotations count one each, their shared ModUp shows in key_switch);
// cMult = ciphertext x plaintext; Mult = ciphertext x ciphertext tensor product (relinearization
// and rescale counted apart: a product summed as degree 2 and relinearized once is d Mults, 1 relin).
//
// Batches: counts are TOTALS over the elements. An operation on a CiphertextBatch of c elements is
// one batched call but counts c times, as the Evaluator counts the key-switch work of a batch
// (KeySwitchCounts): an algorithm run on a batch of c counts repeated(counts of one ciphertext, c),
// and its cost formula times c (repeated(cost(), c)).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/key_switch_counts.hpp"
#include "oboro/ckks/trace.hpp"

namespace oboro::algorithms {

struct OpCounts {
    uint64_t add = 0;
    uint64_t rot = 0;
    uint64_t cmult = 0;
    uint64_t mult = 0;
    uint64_t relin = 0;
    uint64_t rescale = 0;
    ckks::KeySwitchCounts key_switch;  // ModUps / key inner products / ModDowns of rotations and relins

    OpCounts& operator+=(const OpCounts& o) {
        add += o.add;
        rot += o.rot;
        cmult += o.cmult;
        mult += o.mult;
        relin += o.relin;
        rescale += o.rescale;
        key_switch += o.key_switch;
        return *this;
    }
    bool operator==(const OpCounts&) const = default;
};

// `times` repetitions of `c`.
inline OpCounts repeated(const OpCounts& c, uint64_t times) {
    OpCounts r;
    r.add = c.add * times;
    r.rot = c.rot * times;
    r.cmult = c.cmult * times;
    r.mult = c.mult * times;
    r.relin = c.relin * times;
    r.rescale = c.rescale * times;
    r.key_switch = {c.key_switch.mod_ups * times, c.key_switch.inner_products * times, c.key_switch.mod_downs * times};
    return r;
}

// The cost of a matrix product in the four steps that block products reuse (the formulas, not a
// measurement): transforming a left operand, transforming a right operand, adding one degree-2
// product of transformed operands to an accumulator, and finishing an accumulator (relinearize,
// rescale and what follows). One product is left + right + product + finish less one add (the
// first product starts the accumulator); a block product with a grid of m x k times k x n blocks
// is m k left + k n right + m k n product + m n (finish - one add).
struct MatmulCost {
    OpCounts left, right, product, finish;

    OpCounts total(uint64_t m, uint64_t k, uint64_t n) const {
        OpCounts c = repeated(left, m * k);
        c += repeated(right, k * n);
        c += repeated(product, m * k * n);
        c += repeated(finish, m * n);
        c.add -= m * n;
        return c;
    }
};

// Where an algorithm's time goes, by operation: the wall time of each kind of CountedOps call,
// each call between two synchronize()s of its evaluator's queue (so that a device's asynchronous
// work is charged to the call that enqueued it; the synchronisation itself slows the run down:
// for profiling, not for timing a whole run).
struct OpProfile {
    struct Entry {
        uint64_t calls = 0;
        double seconds = 0;
    };
    std::map<std::string, Entry> ops;
};

// The homomorphic operations of the algorithms layer, on a Ciphertext or a CiphertextBatch (the
// same member templates), each adding itself to `counts` (nullptr: not counted) and, with a
// profile, its time to `profile`. Thin: all checks and the work are the Evaluator's.
class CountedOps {
public:
    CountedOps(const ckks::Evaluator& eval, OpCounts* counts, OpProfile* profile = nullptr)
        : eval_(eval), counts_(counts), profile_(profile) {}

    const ckks::Evaluator& eval() const { return eval_; }
    OpCounts* counts() const { return counts_; }

    template <ckks::Encrypted T> void add_inplace(T& a, const T& b) const {
        const Timed timed(*this, "add");
        eval_.add_inplace(a, b);
        if (counts_) counts_->add += ckks::element_count(a);
    }
    template <ckks::Encrypted T> T rotate(const T& a, int64_t steps, const ckks::GaloisKeys& keys) const {
        const Timed timed(*this, "rotate");
        T r = eval_.rotate(a, steps, keys);
        if (counts_ && steps != 0) {
            const uint64_t n = ckks::element_count(a);
            counts_->rot += n;
            counts_->key_switch += ckks::KeySwitchCounts{n, n, n};
        }
        return r;
    }
    // Hoisted: one ModUp for all steps (step 0 returns a copy and is not a rotation).
    template <ckks::Encrypted T>
    std::vector<T> rotate_many(const T& a, const std::vector<int64_t>& steps, const ckks::GaloisKeys& keys) const {
        const Timed timed(*this, "rotate_many");
        auto out = eval_.rotate_many(a, steps, keys, counts_ ? &counts_->key_switch : nullptr);
        if (counts_)
            for (int64_t s : steps) counts_->rot += s != 0 ? ckks::element_count(a) : 0;
        return out;
    }
    // Double hoisting: the rotations kept over Q_level * P (one ModUp, no ModDown; step 0 is
    // a lifted, not a rotation), summed there and divided by P once (mod_down: one ModDown).
    template <ckks::Encrypted T>
    std::vector<T> rotate_many_extended(const T& a, const std::vector<int64_t>& steps,
                                        const ckks::GaloisKeys& keys) const {
        const Timed timed(*this, "rotate_many_extended");
        auto out = eval_.rotate_many_extended(a, steps, keys, counts_ ? &counts_->key_switch : nullptr);
        if (counts_)
            for (int64_t s : steps) counts_->rot += s != 0 ? ckks::element_count(a) : 0;
        return out;
    }
    template <ckks::Encrypted T> T mod_down(const T& a) const {
        const Timed timed(*this, "mod_down");
        T r = eval_.mod_down(a);
        if (counts_) counts_->key_switch.mod_downs += ckks::element_count(a);
        return r;
    }
    // sum_{j < 2^rounds} rot(a, j * stride) by ckks::rotate_and_sum, hoisted in h iterations:
    // each summed rotation counts as one Rot and one Add (the inner products are summed lazily).
    template <ckks::Encrypted T>
    T rotate_and_sum(const T& a, const ckks::SumSpec& spec, const ckks::GaloisKeys& keys, int h) const {
        const Timed timed(*this, "rotate_and_sum");
        ckks::KeySwitchCounts ks;  // already totals over the elements
        T r = ckks::rotate_and_sum(eval_, a, spec, keys, ckks::SumStrategy::hoisted, h, &ks);
        if (counts_) {
            counts_->rot += ks.inner_products;
            counts_->add += ks.inner_products;
            counts_->key_switch += ks;
        }
        return r;
    }
    template <ckks::Encrypted T, typename P> requires ckks::PlainOperandOf<P, T>
    void multiply_plain_inplace(T& a, const P& p) const {
        const Timed timed(*this, "multiply_plain");
        eval_.multiply_inplace(a, p);
        if (counts_) counts_->cmult += ckks::element_count(a);
    }
    template <ckks::Encrypted T, typename P> requires ckks::PlainOperandOf<P, T>
    T multiply_plain(const T& a, const P& p) const {
        const Timed timed(*this, "multiply_plain");
        T r = eval_.multiply(a, p);
        if (counts_) counts_->cmult += ckks::element_count(a);
        return r;
    }
    // acc += a * p: one cMult and one Add.
    template <ckks::Encrypted T, typename P> requires ckks::PlainOperandOf<P, T>
    void multiply_accumulate(T& acc, const T& a, const P& p) const {
        const Timed timed(*this, "multiply_accumulate (plain)");
        eval_.multiply_accumulate(acc, a, p);
        if (counts_) {
            counts_->cmult += ckks::element_count(a);
            counts_->add += ckks::element_count(a);
        }
    }
    // sum_j a[j] * p[j]: one cMult per term and one Add per term after the first.
    template <ckks::Encrypted T, typename P> requires ckks::SumPlainOperandOf<P, T>
    T multiply_plain_sum(const std::vector<const T*>& a, const std::vector<const P*>& p) const {
        const Timed timed(*this, "multiply_plain_sum");
        T r = eval_.multiply_plain_sum(a, p);
        if (counts_) {
            counts_->cmult += ckks::element_count(r) * a.size();
            counts_->add += ckks::element_count(r) * (a.size() - 1);
        }
        return r;
    }
    // Several such sums at once (Evaluator::multiply_plain_sums): the same counts.
    template <ckks::Encrypted T, typename P> requires ckks::SumPlainOperandOf<P, T>
    std::vector<T> multiply_plain_sums(const std::vector<std::vector<const T*>>& a,
                                       const std::vector<std::vector<const P*>>& p) const {
        const Timed timed(*this, "multiply_plain_sums");
        std::vector<T> r = eval_.multiply_plain_sums(a, p);
        if (counts_)
            for (size_t g = 0; g < a.size(); ++g) {
                counts_->cmult += ckks::element_count(r[g]) * a[g].size();
                counts_->add += ckks::element_count(r[g]) * (a[g].size() - 1);
            }
        return r;
    }
    template <ckks::Encrypted T> T multiply(const T& a, const T& b) const {
        const Timed timed(*this, "multiply");
        T r = eval_.multiply(a, b);
        if (counts_) counts_->mult += ckks::element_count(r);
        return r;
    }
    template <ckks::Encrypted T> void relinearize_inplace(T& a, const ckks::RelinKey& rk) const {
        const Timed timed(*this, "relinearize");
        eval_.relinearize_inplace(a, rk);
        if (counts_) {
            const uint64_t n = ckks::element_count(a);
            counts_->relin += n;
            counts_->key_switch += ckks::KeySwitchCounts{n, n, n};
        }
    }
    template <ckks::Encrypted T> void rescale_inplace(T& a) const {
        const Timed timed(*this, "rescale");
        const bool extended = a.basis() == ckks::Basis::qp;  // the ModDown joins the rescale
        eval_.rescale_inplace(a);
        if (counts_) {
            counts_->rescale += ckks::element_count(a);
            if (extended) counts_->key_switch.mod_downs += ckks::element_count(a);
        }
    }
    // a * b relinearized and rescaled (the key set's relinearization key): one Mult, one relin.
    template <ckks::Encrypted T> T multiply_relin_rescale(const T& a, const T& b) const {
        const Timed timed(*this, "multiply_relin_rescale");
        T r = eval_.multiply_relin_rescale(a, b);
        if (counts_) {
            const uint64_t n = ckks::element_count(r);
            counts_->mult += n;
            counts_->relin += n;
            counts_->rescale += n;
            counts_->key_switch += ckks::KeySwitchCounts{n, n, n};
        }
        return r;
    }
    // a * b + c relinearized and rescaled in one call (the key set's key): one Mult, one relin,
    // one Add and one rescale.
    template <ckks::Encrypted T> T multiply_add_relin_rescale(const T& a, const T& b, const T& c) const {
        const Timed timed(*this, "multiply_add_relin_rescale");
        T r = eval_.multiply_add_relin_rescale(a, b, c);
        if (counts_) {
            const uint64_t n = ckks::element_count(r);
            counts_->mult += n;
            counts_->relin += n;
            counts_->add += n;
            counts_->rescale += n;
            counts_->key_switch += ckks::KeySwitchCounts{n, n, n};
        }
        return r;
    }
    // c * k with k encoded at scale / c.scale, so that the product is at exactly `scale` at
    // `level` (at most c's: c's limbs above it are not read), not rescaled (the addend of
    // multiply_add_relin_rescale): one cMult.
    template <ckks::Encrypted T> T multiply_constant_to(const T& c, double k, double scale, int level) const {
        const Timed timed(*this, "multiply_constant_to");
        T r = eval_.zero_like(c, 2, level, scale);
        eval_.multiply_accumulate(r, c, k);
        if (counts_) counts_->cmult += ckks::element_count(c);
        return r;
    }
    // a * b relinearized with the key set's key, not rescaled: one Mult, one relin.
    template <ckks::Encrypted T> T multiply_relin(const T& a, const T& b) const {
        const Timed timed(*this, "multiply_relin");
        T r = eval_.relinearize(eval_.multiply(a, b));
        if (counts_) {
            const uint64_t n = ckks::element_count(r);
            counts_->mult += n;
            counts_->relin += n;
            counts_->key_switch += ckks::KeySwitchCounts{n, n, n};
        }
        return r;
    }
    // acc += a * c (c a real constant encoded at acc's scale over a's): one cMult and one Add.
    template <ckks::Encrypted T> void multiply_accumulate(T& acc, const T& a, double c) const {
        const Timed timed(*this, "multiply_accumulate (constant)");
        eval_.multiply_accumulate(acc, a, c);
        if (counts_) {
            counts_->cmult += ckks::element_count(a);
            counts_->add += ckks::element_count(a);
        }
    }
    // acc += sum_j a[j] * c[j] in one pass over acc (Evaluator::multiply_accumulate): one cMult and
    // one Add per term.
    template <ckks::Encrypted T>
    void multiply_accumulate(T& acc, const std::vector<const T*>& a, const std::vector<double>& c) const {
        const Timed timed(*this, "multiply_accumulate (constants)");
        eval_.multiply_accumulate(acc, a, c);
        if (counts_) {
            const uint64_t n = ckks::element_count(acc) * a.size();
            counts_->cmult += n;
            counts_->add += n;
        }
    }
    // a * c landing on exactly (level, scale): one cMult and one rescale.
    template <ckks::Encrypted T> T multiply_to(const T& a, double c, int level, double scale) const {
        const Timed timed(*this, "multiply_to");
        T r = eval_.multiply_to(a, c, level, scale);
        if (counts_) {
            counts_->cmult += ckks::element_count(a);
            counts_->rescale += ckks::element_count(a);
        }
        return r;
    }
    // a brought to (level, scale) by an integer multiplication and a rescale: one cMult and one
    // rescale.
    template <ckks::Encrypted T> T rescale_to(const T& a, int level, double scale) const {
        const Timed timed(*this, "rescale_to");
        T r = eval_.rescale_to(a, level, scale);
        if (counts_) {
            counts_->cmult += ckks::element_count(a);
            counts_->rescale += ckks::element_count(a);
        }
        return r;
    }
    template <ckks::Encrypted T> void sub_inplace(T& a, const T& b) const {
        const Timed timed(*this, "sub");
        eval_.sub_inplace(a, b);
        if (counts_) counts_->add += ckks::element_count(a);
    }

private:
    // Charges the enclosing call to profile_[kind] (nothing without a profile).
    class Timed {
    public:
        Timed(const CountedOps& ops, const char* kind) : ops_(ops), kind_(kind) {
            if (!ops_.profile_) return;
            ops_.eval_.synchronize();
            t0_ = std::chrono::steady_clock::now();
        }
        ~Timed() {
            if (!ops_.profile_) return;
            try {
                ops_.eval_.synchronize();
            } catch (...) {  // a device error surfaces again at the next call of the queue
            }
            auto& e = ops_.profile_->ops[kind_];
            ++e.calls;
            e.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
        }
        Timed(const Timed&) = delete;
        Timed& operator=(const Timed&) = delete;

    private:
        const CountedOps& ops_;
        const char* kind_;
        std::chrono::steady_clock::time_point t0_{};
    };

    const ckks::Evaluator& eval_;
    OpCounts* counts_;
    OpProfile* profile_;
};

}  // namespace oboro::algorithms

// Operation counts of the matrix algorithms, in the units of paper 003 (Table 5): Add, Rot, cMult
// and Mult, plus the relinearizations, rescales and key-switch work behind them. The algorithms
// do every homomorphic operation through the counted calls below, so the counts are what was
// executed, not a formula (tests compare them with the formulas and the paper's table).
//
// Conventions: Add = ciphertext + ciphertext (any degree); Rot = one rotation (an automorphism and
// its key switch; hoisted rotations count one each, their shared ModUp shows in key_switch);
// cMult = ciphertext x plaintext; Mult = ciphertext x ciphertext tensor product (relinearization
// and rescale counted apart: a product summed as degree 2 and relinearized once is d Mults, 1 relin).
#pragma once

#include <cstdint>
#include <vector>

#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/hoisting.hpp"

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

// The homomorphic operations of the algorithms layer, each adding itself to `counts` (nullptr:
// not counted). Thin: all checks and the work are the Evaluator's.
class CountedOps {
public:
    CountedOps(const ckks::Evaluator& eval, OpCounts* counts) : eval_(eval), counts_(counts) {}

    const ckks::Evaluator& eval() const { return eval_; }
    OpCounts* counts() const { return counts_; }

    void add_inplace(ckks::Ciphertext& a, const ckks::Ciphertext& b) const {
        eval_.add_inplace(a, b);
        if (counts_) ++counts_->add;
    }
    ckks::Ciphertext rotate(const ckks::Ciphertext& a, int64_t steps, const ckks::GaloisKeys& keys) const {
        ckks::Ciphertext r = eval_.rotate(a, steps, keys);
        if (counts_ && steps != 0) {
            ++counts_->rot;
            counts_->key_switch += ckks::KeySwitchCounts{1, 1, 1};
        }
        return r;
    }
    // Hoisted: one ModUp for all steps (step 0 returns a copy and is not a rotation).
    std::vector<ckks::Ciphertext> rotate_many(const ckks::Ciphertext& a, const std::vector<int64_t>& steps,
                                              const ckks::GaloisKeys& keys) const {
        auto out = eval_.rotate_many(a, steps, keys, counts_ ? &counts_->key_switch : nullptr);
        if (counts_)
            for (int64_t s : steps) counts_->rot += s != 0;
        return out;
    }
    void multiply_plain_inplace(ckks::Ciphertext& a, const ckks::Plaintext& p) const {
        eval_.multiply_inplace(a, p);
        if (counts_) ++counts_->cmult;
    }
    ckks::Ciphertext multiply(const ckks::Ciphertext& a, const ckks::Ciphertext& b) const {
        ckks::Ciphertext r = eval_.multiply(a, b);
        if (counts_) ++counts_->mult;
        return r;
    }
    void relinearize_inplace(ckks::Ciphertext& a, const ckks::RelinKey& rk) const {
        eval_.relinearize_inplace(a, rk);
        if (counts_) {
            ++counts_->relin;
            counts_->key_switch += ckks::KeySwitchCounts{1, 1, 1};
        }
    }
    void rescale_inplace(ckks::Ciphertext& a) const {
        eval_.rescale_inplace(a);
        if (counts_) ++counts_->rescale;
    }

private:
    const ckks::Evaluator& eval_;
    OpCounts* counts_;
};

}  // namespace oboro::algorithms

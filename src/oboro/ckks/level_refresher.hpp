// What automatic mode calls when an operand has no level left for a product: the same values with
// their levels back (automatic bootstrapping; algorithms::BootstrapSet is one). The evaluator passed
// is the operation's own (its keys and its queue). Implementations throw the typed errors of the
// library (MissingKey when they cannot refresh this operand).
#pragma once

#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/ciphertext.hpp"

namespace oboro::ckks {

class Evaluator;

class LevelRefresher {
public:
    virtual ~LevelRefresher() = default;
    virtual Ciphertext refresh(const Evaluator& eval, const Ciphertext& a) const = 0;
    virtual CiphertextBatch refresh(const Evaluator& eval, const CiphertextBatch& a) const = 0;
    // The highest level at which a product's operand of `slots` slots is refreshed first: 0, or
    // more for a refresher whose inputs need levels of their own (a bootstrap that runs
    // SlotsToCoeffs first takes inputs at its min_input_level and above, so an operand is refreshed
    // there rather than taken below it).
    virtual int refresh_level(size_t slots) const {
        (void)slots;
        return 0;
    }
};

}  // namespace oboro::ckks

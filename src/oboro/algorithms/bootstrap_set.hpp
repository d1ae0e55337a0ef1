// Bootstrappers for several slot counts, each with its keys: what a context that bootstraps
// ciphertexts of different sizes holds. It picks the cheapest bootstrapper that takes a
// ciphertext (the fewest slots that are a multiple of its own), and it is the LevelRefresher of
// automatic bootstrapping (ckks/level_refresher.hpp). Immutable once made.
#pragma once

#include <memory>
#include <vector>

#include "oboro/algorithms/bootstrap.hpp"
#include "oboro/ckks/level_refresher.hpp"

namespace oboro::algorithms {

class BootstrapSet final : public ckks::LevelRefresher {
public:
    struct Entry {
        std::shared_ptr<const Bootstrapper> boot;
        BootstrapKeys keys;
    };

    BootstrapSet() = default;
    // ValueError for two entries of one slot count.
    explicit BootstrapSet(std::vector<Entry> entries);

    // By slot count, ascending.
    const std::vector<Entry>& entries() const { return entries_; }
    // The entry of the fewest slots that takes a ciphertext of `slots` (a power of two: any
    // larger count is a multiple), or nullptr.
    const Entry* for_slots(size_t slots) const;
    // The entry of exactly `slots` slots, or nullptr.
    const Entry* exactly(size_t slots) const;

    // The bootstrap of x by for_slots(x.slots()); MissingKey when there is none.
    template <ckks::Encrypted T> T bootstrap(const CountedOps& ops, const T& x) const;
    // Bootstrapper::bootstrap_real_pair and bootstrap_real by the same entry.
    template <ckks::Encrypted T>
    std::pair<T, T> bootstrap_real_pair(const CountedOps& ops, const T& re, const T& im) const;
    ckks::CiphertextBatch bootstrap_real(const CountedOps& ops, const ckks::CiphertextBatch& x) const;

    ckks::Ciphertext refresh(const ckks::Evaluator& eval, const ckks::Ciphertext& a) const override;
    ckks::CiphertextBatch refresh(const ckks::Evaluator& eval, const ckks::CiphertextBatch& a) const override;
    // for_slots(slots)'s min_input_level (0 when there is none: refresh then raises MissingKey)
    int refresh_level(size_t slots) const override;

private:
    const Entry& entry_for(size_t slots) const;  // for_slots(slots), or MissingKey
    std::vector<Entry> entries_;
};

}  // namespace oboro::algorithms

// The evaluation keys an Evaluator uses, behind one interface (Lattigo's EvaluationKeySet): the
// evaluator asks for the relinearization key and for the key of a Galois element, and a missing
// key is a MissingKey error that names the step. Keys are held in memory today (MemoryKeySet);
// a key set that loads keys lazily (from disk, from a server) implements the same two lookups.
//
// Thread safety: lookups may run in several threads at once. A key set is immutable once shared:
// to add keys, build a new one and swap the pointer; evaluations that hold
// the old one keep using it safely.
#pragma once

#include <cstdint>
#include <memory>

#include "oboro/ckks/keys.hpp"

namespace oboro::ckks {

class KeySet {
public:
    virtual ~KeySet() = default;
    // The context (parameter set) the keys belong to; 0: any (an empty set).
    virtual uint64_t context_id() const = 0;
    // The relinearization key, or nullptr when there is none. It stays valid while the set lives.
    virtual const RelinKey* relin_key() const = 0;
    // The key switching from s(X^galois) back to s, or nullptr. It stays valid while the set lives.
    virtual const KeySwitchKey* galois_key(uint64_t galois) const = 0;
};

namespace detail {
// The lookups both key sets below do over a relinearization key and a GaloisKeys map (either null).
inline uint64_t context_of(const RelinKey* relin, const GaloisKeys* galois) {
    if (relin && !relin->empty()) return relin->context_id;
    return galois ? galois->context_id : 0;
}
inline const KeySwitchKey* find_galois(const GaloisKeys* keys, uint64_t galois) {
    return keys ? keys->find(galois) : nullptr;
}
}  // namespace detail

// Keys in memory, shared (not copied) with whoever else holds them.
class MemoryKeySet final : public KeySet {
public:
    MemoryKeySet() = default;
    MemoryKeySet(std::shared_ptr<const RelinKey> relin, std::shared_ptr<const GaloisKeys> galois)
        : relin_(std::move(relin)), galois_(std::move(galois)) {}

    uint64_t context_id() const override { return detail::context_of(relin_.get(), galois_.get()); }
    const RelinKey* relin_key() const override { return relin_ && !relin_->empty() ? relin_.get() : nullptr; }
    const KeySwitchKey* galois_key(uint64_t galois) const override { return detail::find_galois(galois_.get(), galois); }

    const std::shared_ptr<const RelinKey>& relin() const { return relin_; }
    const std::shared_ptr<const GaloisKeys>& galois() const { return galois_; }

private:
    std::shared_ptr<const RelinKey> relin_;
    std::shared_ptr<const GaloisKeys> galois_;
};

// A key set over keys the caller owns (the evaluator's overloads that take keys as arguments):
// no copy, valid while those keys live. Either may be null.
class KeyRefs final : public KeySet {
public:
    explicit KeyRefs(const RelinKey* relin, const GaloisKeys* galois = nullptr) : relin_(relin), galois_(galois) {}
    explicit KeyRefs(const GaloisKeys& galois) : galois_(&galois) {}

    uint64_t context_id() const override { return detail::context_of(relin_, galois_); }
    const RelinKey* relin_key() const override { return relin_ && !relin_->empty() ? relin_ : nullptr; }
    const KeySwitchKey* galois_key(uint64_t galois) const override { return detail::find_galois(galois_, galois); }

private:
    const RelinKey* relin_ = nullptr;
    const GaloisKeys* galois_ = nullptr;
};

}  // namespace oboro::ckks

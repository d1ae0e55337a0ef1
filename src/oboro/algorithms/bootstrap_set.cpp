#include "oboro/algorithms/bootstrap_set.hpp"

#include <algorithm>

#include "oboro/util/error.hpp"

namespace oboro::algorithms {

BootstrapSet::BootstrapSet(std::vector<Entry> entries) : entries_(std::move(entries)) {
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& a, const Entry& b) { return a.boot->slots() < b.boot->slots(); });
    for (size_t i = 1; i < entries_.size(); ++i)
        if (entries_[i].boot->slots() == entries_[i - 1].boot->slots())
            raise<ValueError>("BootstrapSet: two bootstrappers of ", entries_[i].boot->slots(), " slots");
}

const BootstrapSet::Entry* BootstrapSet::for_slots(size_t slots) const {
    for (const Entry& e : entries_)
        if (slots > 0 && e.boot->slots() >= slots && e.boot->slots() % slots == 0) return &e;
    return nullptr;
}

const BootstrapSet::Entry* BootstrapSet::exactly(size_t slots) const {
    for (const Entry& e : entries_)
        if (e.boot->slots() == slots) return &e;
    return nullptr;
}

const BootstrapSet::Entry& BootstrapSet::entry_for(size_t slots) const {
    const Entry* e = for_slots(slots);
    if (!e)
        raise<MissingKey>("bootstrap: no bootstrapping keys for ", slots,
                          " slots; call ctx.keygen(bootstrap=True) (all slot counts) or keygen(bootstrap=", slots,
                          ") (in C++: Bootstrapper::generate_keys)");
    return *e;
}

template <ckks::Encrypted T> T BootstrapSet::bootstrap(const CountedOps& ops, const T& x) const {
    const Entry& e = entry_for(x.slots());
    return e.boot->bootstrap(ops, x, e.keys);
}

template <ckks::Encrypted T>
std::pair<T, T> BootstrapSet::bootstrap_real_pair(const CountedOps& ops, const T& re, const T& im) const {
    const Entry& e = entry_for(std::max(re.slots(), im.slots()));
    return e.boot->bootstrap_real_pair(ops, re, im, e.keys);
}

ckks::CiphertextBatch BootstrapSet::bootstrap_real(const CountedOps& ops, const ckks::CiphertextBatch& x) const {
    const Entry& e = entry_for(x.slots());
    return e.boot->bootstrap_real(ops, x, e.keys);
}

int BootstrapSet::refresh_level(size_t slots) const {
    const Entry* e = for_slots(slots);
    return e ? e->boot->min_input_level() : 0;
}

ckks::Ciphertext BootstrapSet::refresh(const ckks::Evaluator& eval, const ckks::Ciphertext& a) const {
    return bootstrap(CountedOps(eval, nullptr), a);
}

ckks::CiphertextBatch BootstrapSet::refresh(const ckks::Evaluator& eval, const ckks::CiphertextBatch& a) const {
    return bootstrap(CountedOps(eval, nullptr), a);
}

template ckks::Ciphertext BootstrapSet::bootstrap(const CountedOps&, const ckks::Ciphertext&) const;
template ckks::CiphertextBatch BootstrapSet::bootstrap(const CountedOps&, const ckks::CiphertextBatch&) const;
template std::pair<ckks::Ciphertext, ckks::Ciphertext> BootstrapSet::bootstrap_real_pair(
    const CountedOps&, const ckks::Ciphertext&, const ckks::Ciphertext&) const;

}  // namespace oboro::algorithms

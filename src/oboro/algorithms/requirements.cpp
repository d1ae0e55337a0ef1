#include "oboro/algorithms/requirements.hpp"

#include <sstream>

#include "oboro/ckks/evaluator.hpp"
#include "oboro/util/error.hpp"

namespace oboro::algorithms {

void require_rotation_keys(const char* op, const ckks::Context& ctx, const ckks::GaloisKeys& keys,
                           const std::vector<int64_t>& steps, const char* helper) {
    if (keys.context_id != 0 && keys.context_id != ctx.id())
        raise<ContextMismatch>(op, ": the Galois keys belong to another parameter set");
    std::ostringstream missing;
    size_t n = 0;
    for (int64_t s : steps)
        if (s != 0 && !keys.has(ctx.galois_element(s))) missing << (n++ ? ", " : "") << s;
    if (n)
        raise<MissingKey>(op, ": no Galois key for the rotation", n > 1 ? "s" : "", " by ", missing.str(),
                          "; generate the keys of all the steps that ", helper, " lists");
}

template <ckks::Encrypted T>
void require_levels(const char* op, const T& ct, const char* name, int levels, const char* why) {
    if (ct.level() < levels)
        raise<LevelMismatch>(op, ": operand '", name, "' is at ", ckks::describe(ct), " but the method needs ", levels,
                             " levels (", why, "); encrypt at a higher level");
}

template <ckks::Encrypted T>
void require_layout(const char* op, const T& ct, const char* name, size_t slots, const char* layout) {
    if (ct.size() != 2)
        raise<ValueError>(op, ": operand '", name, "' has size ", ct.size(), "; relinearize it first");
    if (ct.slots() != slots)
        raise<ValueError>(op, ": operand '", name, "' has ", ct.slots(), " slots but the ", layout, " layout uses ",
                          slots, "; encrypt the matrix with that slot count");
}

template <ckks::Encrypted T> void require_same_count(const char* op, const T& a, const T& b) {
    if (ckks::element_count(a) != ckks::element_count(b))
        raise<ValueError>(op, ": operand 'A' is a ", ckks::describe(a), " but operand 'B' a ", ckks::describe(b),
                          "; multiply batches of the same length");
}

#define OBORO_REQUIREMENTS(T)                                                                            \
    template void require_levels(const char*, const T&, const char*, int, const char*);                 \
    template void require_layout(const char*, const T&, const char*, size_t, const char*);              \
    template void require_same_count(const char*, const T&, const T&);
OBORO_REQUIREMENTS(ckks::Ciphertext)
OBORO_REQUIREMENTS(ckks::CiphertextBatch)
#undef OBORO_REQUIREMENTS

}  // namespace oboro::algorithms

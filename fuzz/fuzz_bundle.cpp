// Fuzz target: bundles (io::split_bundle), read the way Context.deserialize reads a serialized
// context: the first record is the context, every other record is loaded for it by its type (also
// the types Context.deserialize refuses, for their loaders' sake) and then used with keys of that
// context. The mutator re-seals the nested records too.
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "fuzz.hpp"

using namespace oboro;

namespace {

struct Loaded {
    ckks::ContextPtr ctx;
    std::vector<std::function<void(const fuzz::Session&)>> uses;  // one per loaded record
};

// Loads `part` with `load` and queues `use` of the object.
template <class Load, class Use> void add(Loaded& l, io::ByteView part, Load&& load, Use&& use) {
    auto object = std::make_shared<const decltype(load(part))>(load(part));
    l.uses.push_back([object, use](const fuzz::Session& s) { use(s, *object); });
}

Loaded load(io::ByteView data) {
    Loaded l;
    const std::vector<io::ByteView> parts = io::split_bundle(data);
    if (parts.empty()) return l;
    l.ctx = io::load_context(parts[0]);
    const ckks::Context& c = *l.ctx;
    for (size_t i = 1; i < parts.size(); ++i) {
        const io::ByteView p = parts[i];
        switch (io::peek_type(p)) {
            case io::ObjectType::plaintext:
                add(l, p, [&](io::ByteView b) { return io::load_plaintext(c, b); }, fuzz::use_plaintext);
                break;
            case io::ObjectType::ciphertext:
                add(l, p, [&](io::ByteView b) { return io::load_ciphertext(c, b); }, fuzz::use_ciphertext);
                break;
            case io::ObjectType::public_key:
                add(l, p, [&](io::ByteView b) { return io::load_public_key(c, b); }, fuzz::use_public_key);
                break;
            case io::ObjectType::relin_key:
                add(l, p, [&](io::ByteView b) { return io::load_relin_key(c, b); }, fuzz::use_relin_key);
                break;
            case io::ObjectType::galois_keys:
                add(l, p, [&](io::ByteView b) { return io::load_galois_keys(c, b); }, fuzz::use_galois_keys);
                break;
            case io::ObjectType::secret_key:
                add(l, p, [&](io::ByteView b) { return io::load_secret_key(c, b); }, fuzz::use_secret_key);
                break;
            case io::ObjectType::ciphertext_batch:
                add(l, p, [&](io::ByteView b) { return io::load_ciphertext_batch(c, b); }, fuzz::use_batch);
                break;
            case io::ObjectType::bootstrap_keys:
                add(l, p, [&](io::ByteView b) { return io::load_bootstrap_keys(c, b); },
                    [](const fuzz::Session& s, const auto& k) { fuzz::use_bootstrap_keys(s, k.first, k.second); });
                break;
            case io::ObjectType::encrypted_matrix:
                (void)io::load_matrix(c, p, nullptr);
                break;
            case io::ObjectType::context:
                (void)io::load_context(p);
                break;
            case io::ObjectType::bundle:  // split_bundle refuses nested bundles
                std::abort();
        }
    }
    return l;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::check({data, size}, load, [](const Loaded& l) {
        // The fuzz parameters' context has its keys made already; another small one gets keys
        // here (as in fuzz_context.cpp, large ones would take most of the run).
        if (!l.ctx || l.ctx->n() > 1024 || l.ctx->q_count() + l.ctx->p_count() > 8) return;
        std::optional<fuzz::Session> own;
        if (l.ctx->id() != fuzz::fixture().ctx->id())
            fuzz::must_work("keys for the loaded context", [&] { own.emplace(l.ctx); });
        const fuzz::Session& s = own ? *own : fuzz::fixture();
        for (const auto& use : l.uses) use(s);
    });
    return 0;
}

// Fuzz target: context records (io::load_context), the parameters themselves. A loaded context of
// at most 2^10 coefficients and 8 primes is used too: keys made for it, a ciphertext encrypted,
// evaluated and decrypted (mutants that keep the primes valid vary the scale, the secret
// distribution, the Hamming weight and the security level). Larger ones are only loaded: their
// keys would take most of the run.
#include <optional>

#include "fuzz.hpp"

using namespace oboro;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::check({data, size}, [](io::ByteView b) { return io::load_context(b); },
                [](const ckks::ContextPtr& ctx) {
                    fuzz::must_work("serialize the context again",
                                    [&] { (void)io::load_context(io::serialize(*ctx, "again")); });
                    if (ctx->n() > 1024 || ctx->q_count() + ctx->p_count() > 8) return;
                    std::optional<fuzz::Session> s;
                    fuzz::must_work("keys for the loaded context", [&] { s.emplace(ctx); });
                    // The default scale may be too large to encode anything at (it is only checked to
                    // be finite and >= 1, as in Parameters::validate): the encoder refuses then.
                    std::optional<ckks::Ciphertext> ct;
                    fuzz::may_refuse("encrypt at the default scale", [&] { ct = s->ciphertext(ctx->max_level()); });
                    if (ct) fuzz::use_ciphertext(*s, *ct);
                });
    return 0;
}

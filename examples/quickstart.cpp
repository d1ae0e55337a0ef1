// The C++ quick start: encrypt two vectors, compute x*y + 2x - 1 and rotate it in automatic mode,
// decrypt, and compare with the plain computation.
// Build: cmake -S . -B build -G Ninja && ninja -C build quickstart && build/examples/quickstart
#include <cmath>
#include <complex>
#include <cstdio>
#include <memory>
#include <vector>

#include "oboro/ckks/auto_evaluator.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/keygen.hpp"

int main() {
    using namespace oboro::ckks;
    using cplx = std::complex<double>;
    // N = 16384, ciphertext primes {60, 40, 40, 40} bits, one 60-bit special prime, scale 2^40.
    auto ctx = Context::create(Parameters::preset("S2"));
    std::printf("parameters: %s\n", ctx->params().describe().c_str());

    KeyGenerator keygen(ctx);
    // The evaluation keys live in a key set that the evaluator holds.
    auto keys = std::make_shared<const MemoryKeySet>(std::make_shared<const RelinKey>(keygen.relin_key()),
                                                     std::make_shared<const GaloisKeys>(keygen.galois_keys({1})));
    Encoder encoder(ctx);
    Encryptor encryptor(ctx, keygen.secret_key());  // shares the one secret key; or keygen.public_key()
    Decryptor decryptor(ctx, keygen.secret_key());
    // Automatic mode: relinearization, rescaling, level and scale alignment and rotation
    // composition are the evaluator's (ckks/auto_evaluator.hpp); Evaluator alone is manual mode.
    const AutoEvaluator eval(Evaluator(ctx, keys));

    // Fresh ciphertexts at the top level's standard scale (the scale every automatic result of a
    // level lands on), in 4 slots: rotations are cyclic over them.
    const int top = ctx->max_level();
    auto encrypt = [&](const std::vector<cplx>& v) {
        return encryptor.encrypt(encoder.encode(v, top, ctx->standard_scale(top), v.size()));
    };
    const std::vector<cplx> x = {0.5, -1.25, 2.0, 0.75}, y = {1.5, 0.25, -0.5, 1.0};
    const Ciphertext cx = encrypt(x), cy = encrypt(y);

    // x*y is one level down; adding 2x (an integer factor: no level) aligns 2x to it exactly.
    Ciphertext r = eval.add(eval.multiply(cx, cy), eval.multiply(cx, int64_t(2)));
    r = eval.sub(r, cplx(1.0));
    r = eval.rotate(r, 1);  // np.roll(v, -1) over the 4 slots

    const auto got = decryptor.decrypt_decode(r, encoder);
    double max_err = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        const size_t j = (i + 1) % x.size();
        const cplx want = x[j] * y[j] + 2.0 * x[j] - 1.0;
        max_err = std::max(max_err, std::abs(got[i] - want));
        std::printf("slot %zu: %+.6f (expected %+.6f)\n", i, got[i].real(), want.real());
    }
    std::printf("max abs error %.2e (%.1f bits), result at level %d, scale 2^%.4f\n", max_err, -std::log2(max_err),
                r.level(), std::log2(r.scale()));
    return max_err < 1e-4 ? 0 : 1;
}

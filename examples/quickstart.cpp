// The C++ quick start: encrypt two vectors, compute x*y + x and rotate it, decrypt, and compare
// with the plain computation. Build: cmake -S . -B build -G Ninja && ninja -C build quickstart
#include <cmath>
#include <complex>
#include <cstdio>
#include <vector>

#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keygen.hpp"

int main() {
    using namespace oboro::ckks;
    // N = 16384, ciphertext primes {60, 40, 40, 40} bits, one 60-bit special prime, scale 2^40.
    auto ctx = Context::create(Parameters::preset("S2"));
    std::printf("parameters: %s\n", ctx->params().describe().c_str());

    KeyGenerator keygen(ctx);
    const RelinKey relin = keygen.relin_key();
    const GaloisKeys galois = keygen.galois_keys({1});
    Encoder encoder(ctx);
    Encryptor encryptor(ctx, keygen.secret_key());  // or keygen.public_key()
    Decryptor decryptor(ctx, keygen.secret_key());
    Evaluator eval(ctx);

    const std::vector<double> x = {0.5, -1.25, 2.0, 0.75}, y = {1.5, 0.25, -0.5, 1.0};
    const Ciphertext cx = encryptor.encrypt(encoder.encode(x));
    const Ciphertext cy = encryptor.encrypt(encoder.encode(y));

    // x*y: tensor, relinearize and rescale in one call. Its exact scale is 2^80/q_3, not 2^40,
    // so x is brought to the same level and scale (rescale_to) before the addition; the
    // evaluator never does this implicitly (the Python API does).
    Ciphertext r = eval.multiply_relin_rescale(cx, cy, relin);
    eval.add_inplace(r, eval.rescale_to(cx, r.level(), r.scale()));
    r = eval.rotate(r, 1, galois);

    const auto got = decryptor.decrypt_decode(r, encoder);
    double max_err = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        const size_t j = (i + 1) % ctx->max_slots();
        const double want = j < x.size() ? x[j] * y[j] + x[j] : 0.0;
        max_err = std::max(max_err, std::abs(got[i] - want));
        std::printf("slot %zu: %+.6f (expected %+.6f)\n", i, got[i].real(), want);
    }
    std::printf("max abs error %.2e (%.1f bits), result at level %d, scale 2^%.4f\n", max_err, -std::log2(max_err),
                r.level(), std::log2(r.scale()));
    return max_err < 1e-4 ? 0 : 1;
}

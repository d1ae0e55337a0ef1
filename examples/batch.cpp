// Many ciphertexts at once in C++: d rows of data encoded and encrypted as one batch, x*y + x and
// a rotation computed with one batched call per operation, the batch decrypted and compared with
// the plain computation. Build and run: ninja -C build batch && build/examples/batch [d]
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/batch_encoder.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/keygen.hpp"

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
    using namespace oboro::ckks;
    using cplx = std::complex<double>;
    const size_t d = argc > 1 ? size_t(std::atoi(argv[1])) : 200, width = 16;
    if (d == 0) {
        std::fprintf(stderr, "usage: batch [d > 0]\n");
        return 2;
    }
    auto ctx = Context::create(Parameters::preset("S1"));  // N = 8192, {60, 40} + {60} bits, scale 2^40
    KeyGenerator keygen(ctx);
    const RelinKey relin = keygen.relin_key();
    const GaloisKeys galois = keygen.galois_keys({1});
    Encoder encoder(ctx);
    Encryptor encryptor(ctx, keygen.public_key());
    Decryptor decryptor(ctx, keygen.secret_key());
    const Evaluator eval(ctx);

    // Row r of x and y is element r of the batch: d x width values, one row after the other.
    std::mt19937_64 gen(7);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::vector<cplx> x(d * width), y(d * width);
    for (auto& v : x) v = uniform(gen);
    for (auto& v : y) v = uniform(gen);

    auto t0 = std::chrono::steady_clock::now();
    // One batched encoding each into `width` slots (so rotations wrap around the row, like np.roll),
    // then one parallel encryption each (every element draws its own randomness).
    const CiphertextBatch bx = encryptor.encrypt_batch(encode_batch(encoder, x, d, std::nullopt, std::nullopt, width));
    const CiphertextBatch by = encryptor.encrypt_batch(encode_batch(encoder, y, d, std::nullopt, std::nullopt, width));
    const double t_encrypt = seconds_since(t0);

    t0 = std::chrono::steady_clock::now();
    // x*y for all d elements in one call (tensor, relinearize, rescale); x is brought to the
    // product's level and scale before the addition, as for single ciphertexts.
    CiphertextBatch r = eval.multiply_relin_rescale(bx, by, relin);
    eval.add_inplace(r, eval.rescale_to(bx, r.level(), r.scale()));
    r = eval.rotate(r, 1, galois);
    const double t_eval = seconds_since(t0);

    t0 = std::chrono::steady_clock::now();
    const auto got = decryptor.decrypt_decode(r, encoder);  // one vector per element, in parallel
    const double t_decrypt = seconds_since(t0);

    double max_err = 0;
    for (size_t e = 0; e < d; ++e)
        for (size_t i = 0; i < width; ++i) {
            const size_t j = (i + 1) % width;  // rotation by 1 over the element's `width` slots
            const cplx want = x[e * width + j] * y[e * width + j] + x[e * width + j];
            max_err = std::max(max_err, std::abs(got[e][i] - want));
        }
    std::printf("%zu ciphertexts of %zu values: encode+encrypt %.3f s, x*y + x and rotate %.3f s, decrypt %.3f s\n", d,
                width, t_encrypt, t_eval, t_decrypt);
    std::printf("element 0, slot 0: %+.6f (expected %+.6f)\n", got[0][0].real(),
                (x[1] * y[1] + x[1]).real());
    std::printf("max abs error over all elements %.2e (%.1f bits)\n", max_err, -std::log2(max_err));
    return max_err < 1e-4 ? 0 : 1;
}

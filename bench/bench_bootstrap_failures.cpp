// Bootstrapping's failure rate: many bootstraps of fresh encryptions of fresh random values (uniform
// in the complex unit disk, full slots), each decrypted and checked against its input. A bootstrap
// fails when its precision (-log2 of the largest error over the slots) is below the threshold. Each
// encryption draws its randomness from the operating system, so every bootstrap sees other integers
// I from ModRaise: the run samples the bound that docs/bootstrapping.md states holds always.
// Prints progress, then the count, the failures, the worst, median and mean precision and a
// histogram by whole bits; writes JSON with machine and date.
//
//   bench_bootstrap_failures [--preset BT] [--count 10000] [--batch 32] [--threshold 15] [--json FILE]
//   bench_bootstrap_failures --quick      # 64 bootstraps of BT: a smoke test
// BT (N = 2^12, insecure, tests only) is the B1 circuit in a small ring: 10^4 bootstraps take about
// 20 minutes on 2 threads here.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "oboro/algorithms/bootstrap.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keygen.hpp"
#include "oboro/util/parallel.hpp"

using namespace oboro;
using namespace oboro::ckks;
using namespace oboro::algorithms;
using cplx = std::complex<double>;

namespace {

struct Options {
    std::string preset = "BT";
    size_t count = 10000, batch = 32;
    double threshold = 15;
    std::string json;
};

int usage() {
    std::fprintf(stderr, "usage: bench_bootstrap_failures [--quick] [--preset BT] [--count 10000] [--batch 32] "
                         "[--threshold 15] [--json FILE]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") o.count = 64;
        else if (a == "--preset") o.preset = bench::option_value(argc, argv, i);
        else if (a == "--count") o.count = std::stoul(bench::option_value(argc, argv, i));
        else if (a == "--batch") o.batch = std::max<size_t>(1, std::stoul(bench::option_value(argc, argv, i)));
        else if (a == "--threshold") o.threshold = std::stod(bench::option_value(argc, argv, i));
        else if (a == "--json") o.json = bench::option_value(argc, argv, i);
        else return usage();
    }
    bench::prepare_outputs({o.json});
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    auto ctx = Context::create(Parameters::preset(o.preset));
    const Bootstrapper boot(ctx);
    const size_t slots = boot.slots();
    KeyGenerator keygen(ctx);
    const PublicKey pk = keygen.public_key();
    const RelinKey rk = keygen.relin_key();
    const BootstrapKeys bk = boot.generate_keys(keygen);
    const KeyRefs key_set(&rk, &bk.galois);
    const Evaluator eval = Evaluator(ctx).with_keys(key_set);
    Encoder enc(ctx);
    Encryptor encryptor(ctx, pk);
    Decryptor dec(ctx, keygen.secret_key());
    std::mt19937_64 gen(2026);  // the values only: the encryptions' randomness is the OS's
    std::uniform_real_distribution<double> angle(0, 2 * M_PI), radius(0, 1);

    std::vector<double> bits;
    bits.reserve(o.count);
    size_t failures = 0;
    std::fprintf(stderr, "[%s, %zu slots] %zu bootstraps in batches of %zu, failure below %.1f bits\n",
                 o.preset.c_str(), slots, o.count, o.batch, o.threshold);
    while (bits.size() < o.count) {
        const size_t m = std::min(o.batch, o.count - bits.size());
        std::vector<std::vector<cplx>> values(m, std::vector<cplx>(slots));
        std::vector<Ciphertext> cts;
        for (auto& v : values) {
            for (auto& x : v) x = std::polar(std::sqrt(radius(gen)), angle(gen));
            cts.push_back(encryptor.encrypt(enc.encode(v, 0, std::nullopt, slots)));
        }
        const CiphertextBatch out =
            boot.bootstrap(CountedOps(eval, nullptr), CiphertextBatch::from_ciphertexts(*ctx, cts), bk);
        for (size_t c = 0; c < m; ++c) {
            const double b = bench::precision_of(dec.decrypt_decode(out.at(c), enc), values[c]).worst;
            bits.push_back(b);
            if (b < o.threshold) ++failures;
        }
        std::fprintf(stderr, "  %zu/%zu, %zu failures, worst %.1f bits, %.0f s\n", bits.size(), o.count, failures,
                     *std::min_element(bits.begin(), bits.end()),
                     std::chrono::duration<double>(clock::now() - t0).count());
    }

    std::vector<double> sorted = bits;
    std::sort(sorted.begin(), sorted.end());
    double mean = 0;
    for (double b : bits) mean += b / double(bits.size());
    std::map<int, size_t> histogram;  // by whole bits
    for (double b : bits) ++histogram[int(std::floor(b))];
    const double seconds = std::chrono::duration<double>(clock::now() - t0).count();
    std::printf("%s, %zu slots: %zu bootstraps, %zu below %.1f bits; precision worst %.2f, median %.2f, mean %.2f bits "
                "(%.0f s)\n",
                o.preset.c_str(), slots, bits.size(), failures, o.threshold, sorted.front(), sorted[sorted.size() / 2],
                mean, seconds);
    for (const auto& [b, n] : histogram) std::printf("  [%d, %d) bits: %zu\n", b, b + 1, n);
    if (!o.json.empty()) {
        std::ofstream os = bench::output_file(o.json);
        os << "{\"benchmark\": \"bootstrap_failures\", \"machine\": " << bench::machine_json() << ", \"preset\": \""
           << o.preset << "\", \"slots\": " << slots << ", \"threads\": " << oboro::num_threads()
           << ", \"message_ratio_bits\": " << boot.message_ratio_bits() << ", \"count\": " << bits.size()
           << ", \"threshold_bits\": " << o.threshold << ", \"failures\": " << failures
           << ", \"worst_bits\": " << sorted.front() << ", \"median_bits\": " << sorted[sorted.size() / 2]
           << ", \"mean_bits\": " << mean << ", \"seconds\": " << seconds << ", \"histogram\": {";
        bool first = true;
        for (const auto& [b, n] : histogram) {
            os << (first ? "" : ", ") << "\"" << b << "\": " << n;
            first = false;
        }
        os << "}}\n";
    }
    return 0;
}

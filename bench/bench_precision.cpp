// Measured precision of every primitive, in bits (-log2 of the maximum absolute error over all
// slots against a double-precision reference, worst of several trials), inputs uniform complex in
// the unit square. Writes JSON and Markdown with machine and date.
//
//   bench_precision [--presets S1,S2,S4] [--trials 3] [--json FILE] [--markdown FILE]
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keygen.hpp"

using namespace oboro;
using namespace oboro::ckks;
using cplx = std::complex<double>;

namespace {

struct Row {
    std::string preset, op;
    double bits;
};

double bits_of(const std::vector<cplx>& got, const std::vector<cplx>& want) {
    return bench::precision_of(got, want).worst;
}

void run(const std::string& name, int trials, std::vector<Row>& rows) {
    std::fprintf(stderr, "[%s] keys...\n", name.c_str());
    auto ctx = Context::create(Parameters::preset(name));
    KeyGenerator keygen(ctx);
    const PublicKey pk = keygen.public_key();
    const RelinKey rk = keygen.relin_key();
    const GaloisKeys gk = keygen.galois_keys({1}, true);
    Encoder enc(ctx);
    Encryptor pk_enc(ctx, pk), sk_enc(ctx, keygen.secret_key());
    Decryptor dec(ctx, keygen.secret_key());
    Evaluator ev(ctx);
    const size_t slots = ctx->max_slots();
    std::mt19937_64 gen(7);  // inputs only
    std::uniform_real_distribution<double> d(-1, 1);
    auto random_vec = [&] {
        std::vector<cplx> v(slots);
        for (auto& x : v) x = cplx(d(gen), d(gen));
        return v;
    };
    std::vector<std::pair<std::string, std::function<double()>>> ops;
    ops.push_back({"encode + decode", [&] { auto v = random_vec(); return bits_of(enc.decode(enc.encode(v)), v); }});
    ops.push_back({"encrypt (secret key) + decrypt", [&] {
        auto v = random_vec(); return bits_of(dec.decrypt_decode(sk_enc.encrypt(enc.encode(v)), enc), v); }});
    ops.push_back({"encrypt (public key) + decrypt", [&] {
        auto v = random_vec(); return bits_of(dec.decrypt_decode(pk_enc.encrypt(enc.encode(v)), enc), v); }});
    ops.push_back({"add", [&] {
        auto a = random_vec(), b = random_vec();
        std::vector<cplx> r(slots);
        for (size_t i = 0; i < slots; ++i) r[i] = a[i] + b[i];
        return bits_of(dec.decrypt_decode(ev.add(pk_enc.encrypt(enc.encode(a)), pk_enc.encrypt(enc.encode(b))), enc), r); }});
    ops.push_back({"mul + relin + rescale", [&] {
        auto a = random_vec(), b = random_vec();
        std::vector<cplx> r(slots);
        for (size_t i = 0; i < slots; ++i) r[i] = a[i] * b[i];
        return bits_of(dec.decrypt_decode(ev.multiply_relin_rescale(pk_enc.encrypt(enc.encode(a)), pk_enc.encrypt(enc.encode(b)), rk), enc), r); }});
    ops.push_back({"ct x pt mul + rescale", [&] {
        auto a = random_vec(), b = random_vec();
        std::vector<cplx> r(slots);
        for (size_t i = 0; i < slots; ++i) r[i] = a[i] * b[i];
        return bits_of(dec.decrypt_decode(ev.rescale(ev.multiply(pk_enc.encrypt(enc.encode(a)), enc.encode(b))), enc), r); }});
    ops.push_back({"rotate by 1", [&] {
        auto a = random_vec();
        std::vector<cplx> r(slots);
        for (size_t i = 0; i < slots; ++i) r[i] = a[(i + 1) % slots];
        return bits_of(dec.decrypt_decode(ev.rotate(pk_enc.encrypt(enc.encode(a)), 1, gk), enc), r); }});
    ops.push_back({"conjugate", [&] {
        auto a = random_vec();
        std::vector<cplx> r(slots);
        for (size_t i = 0; i < slots; ++i) r[i] = std::conj(a[i]);
        return bits_of(dec.decrypt_decode(ev.conjugate(pk_enc.encrypt(enc.encode(a)), gk), enc), r); }});
    for (auto& [op, f] : ops) {
        double worst = 1e9;
        for (int t = 0; t < trials; ++t) worst = std::min(worst, f());
        rows.push_back({name, op, worst});
        std::printf("%-4s %-34s %6.2f bits\n", name.c_str(), op.c_str(), worst);
        std::fflush(stdout);
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> presets = {"S1", "S2", "S4"};
    int trials = 3;
    std::string json_path, md_path;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return bench::option_value(argc, argv, i); };
        if (a == "--presets") presets = bench::split(next(), ',');
        else if (a == "--trials") trials = std::stoi(next());
        else if (a == "--json") json_path = next();
        else if (a == "--markdown") md_path = next();
        else { std::fprintf(stderr, "usage: %s [--presets S1,S2,S4] [--trials N] [--json F] [--markdown F]\n", argv[0]); return 2; }
    }
    bench::prepare_outputs({json_path, md_path});
    std::vector<Row> rows;
    for (const auto& p : presets) run(p, trials, rows);
    if (!json_path.empty()) {
        std::ofstream out = bench::output_file(json_path);
        out << "{\n  \"benchmark\": \"bench_precision\",\n  \"machine\": " << bench::machine_json() << ",\n  \"trials\": " << trials
            << ",\n  \"unit\": \"bits = -log2(max abs error), worst trial\",\n  \"results\": [\n";
        for (size_t i = 0; i < rows.size(); ++i)
            out << "    {\"preset\": \"" << rows[i].preset << "\", \"op\": \"" << rows[i].op << "\", \"bits\": " << rows[i].bits
                << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
        out << "  ]\n}\n";
    }
    if (!md_path.empty()) {
        std::ofstream out = bench::output_file(md_path);
        out << "# Measured precision\n\nGenerated by `bench/bench_precision` on " << bench::utc_now() << " (" << bench::cpu_model()
            << "). Bits = -log2 of the maximum absolute error over all slots against a double-precision reference, "
            << "worst of " << trials << " trials; inputs uniform in the complex unit square, scale 2^40.\n\n| op |";
        for (const auto& p : presets) out << " " << p << " |";
        out << "\n|---|";
        for (size_t i = 0; i < presets.size(); ++i) out << "---:|";
        out << "\n";
        for (size_t r = 0; r < rows.size() / presets.size(); ++r) {
            out << "| " << rows[r].op << " |";
            for (size_t p = 0; p < presets.size(); ++p) {
                char buf[32];
                std::snprintf(buf, sizeof buf, " %.1f |", rows[p * (rows.size() / presets.size()) + r].bits);
                out << buf;
            }
            out << "\n";
        }
    }
    return 0;
}

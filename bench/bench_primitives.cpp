// Per-operation timings of the CKKS primitives at the paper parameter sets, single-threaded by
// default. Prints a table and writes JSON with the machine and date; bench/report_primitives.py
// turns the JSON into the Markdown table in docs/benchmarks/.
//
//   bench_primitives [--presets S1,S2,S4] [--threads 1] [--json out.json] [--min-seconds 0.3]
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keygen.hpp"
#include "oboro/util/parallel.hpp"

using namespace oboro;
using namespace oboro::ckks;
using cplx = std::complex<double>;

namespace {

struct Row {
    std::string preset, op;
    bench::Timing t;
};

void run_preset(const std::string& name, double min_seconds, std::vector<Row>& rows) {
    std::fprintf(stderr, "[%s] building context and keys...\n", name.c_str());
    auto ctx = Context::create(Parameters::preset(name));
    KeyGenerator keygen(ctx);
    const PublicKey pk = keygen.public_key();
    const RelinKey rk = keygen.relin_key();
    const GaloisKeys gk = keygen.galois_keys({1});
    Encoder encoder(ctx);
    Encryptor encryptor(ctx, pk);
    Decryptor decryptor(ctx, keygen.secret_key());
    Evaluator eval(ctx);

    const std::vector<cplx> v = bench::random_slots(ctx->max_slots());

    const Plaintext pt = encoder.encode(v);
    const Ciphertext a = encryptor.encrypt(pt), b = encryptor.encrypt(pt);
    const Ciphertext prod = eval.multiply(a, b);
    const Ciphertext relin = eval.relinearize(prod, rk);

    auto add = [&](const char* op, const std::function<void()>& f) {
        std::fprintf(stderr, "[%s] %s...\n", name.c_str(), op);
        rows.push_back({name, op, bench::measure(f, 5, min_seconds)});
        std::printf("%-4s %-28s %12.1f us  (min %.1f, %d runs)\n", name.c_str(), op, rows.back().t.median_us,
                    rows.back().t.min_us, rows.back().t.runs);
        std::fflush(stdout);
    };
    add("encode", [&] { (void)encoder.encode(v); });
    add("encrypt (public key)", [&] { (void)encryptor.encrypt(pt); });
    add("encode + encrypt (public key, one step)", [&] { (void)encryptor.encrypt(encoder, v); });
    add("decrypt + decode", [&] { (void)decryptor.decrypt_decode(a, encoder); });
    add("add (ct+ct)", [&] { (void)eval.add(a, b); });
    Ciphertext acc = a;
    add("add in place", [&] { eval.add_inplace(acc, b); });
    add("ct x pt mul", [&] { (void)eval.multiply(a, pt); });
    add("tensor (ct x ct, no relin)", [&] { (void)eval.multiply(a, b); });
    add("mul + relin", [&] { (void)eval.relinearize(eval.multiply(a, b), rk); });
    add("rescale alone", [&] { (void)eval.rescale(relin); });
    add("mul + relin + rescale", [&] { (void)eval.multiply_relin_rescale(a, b, rk); });
    add("rotate by 1", [&] { (void)eval.rotate(a, 1, gk); });
}

void write_json(const std::string& path, const std::vector<Row>& rows, int threads) {
    std::ofstream out = bench::output_file(path);
    out << "{\n  \"benchmark\": \"bench_primitives\",\n  \"machine\": " << bench::machine_json()
        << ",\n  \"threads\": " << threads << ",\n  \"unit\": \"microseconds\",\n  \"results\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        out << "    {\"preset\": \"" << r.preset << "\", \"op\": \"" << r.op << "\", \"median_us\": " << r.t.median_us
            << ", \"min_us\": " << r.t.min_us << ", \"runs\": " << r.t.runs << "}" << (i + 1 < rows.size() ? "," : "")
            << "\n";
    }
    out << "  ]\n}\n";
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> presets = {"S1", "S2", "S4"};
    int threads = 1;
    double min_seconds = 0.3;
    std::string json_path;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto next = [&] { return bench::option_value(argc, argv, i); };
        if (arg == "--presets") presets = bench::split(next(), ',');
        else if (arg == "--threads") threads = std::stoi(next());
        else if (arg == "--json") json_path = next();
        else if (arg == "--min-seconds") min_seconds = std::stod(next());
        else if (arg == "--help" || arg == "-h") {
            std::printf("usage: %s [--presets S1,S2,S4] [--threads N] [--json FILE] [--min-seconds S]\n", argv[0]);
            return 0;
        } else {
            std::fprintf(stderr, "unknown argument %s (try --help)\n", arg.c_str());
            return 2;
        }
    }
    bench::prepare_outputs({json_path});
    set_num_threads(threads);
    std::printf("oboro bench_primitives: %s, %d thread(s), medians\n", bench::cpu_model().c_str(), threads);
    std::vector<Row> rows;
    for (const auto& p : presets) run_preset(p, min_seconds, rows);
    if (!json_path.empty()) {
        write_json(json_path, rows, threads);
        std::printf("wrote %s\n", json_path.c_str());
    }
    return 0;
}

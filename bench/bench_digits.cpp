// Key switching by level under two splits of the key-switching digits, in one process: the
// preset's own (balanced by bits: Parameters::digit_partition) and the fewest digits of equal
// prime counts under P (the split before format version 10). At each level: multiply +
// relinearize + rescale, and a rotation by one slot; the four operations of a level run in
// interleaved rounds (bench::measure_interleaved), so that the machine's drift falls on both splits
// alike. Prints the medians with the digits each split meets at that level, and writes JSON and
// Markdown with the machine and date.
//
//   bench_digits [--presets B1] [--levels 25,20,10] [--threads 1] [--min-seconds 1] [--json F]
//                [--markdown F] [--quick]
// Without --levels: every level from the top down to 1. --quick: BT, its top level and level 1.
#include <cstdio>
#include <fstream>
#include <functional>
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

namespace {

struct Options {
    std::vector<std::string> presets = {"B1"};
    std::vector<int> levels;  // empty: every level from the top down to 1
    int threads = 1;
    double min_seconds = 1;
    std::string json, markdown;
};

struct Row {
    std::string preset;
    int level = 0;
    size_t digits_balanced = 0, digits_uniform = 0;
    bench::Timing relin_balanced, relin_uniform, rotate_balanced, rotate_uniform;
};

std::string split_text(const std::vector<size_t>& digits) {
    std::string s;
    for (size_t d : digits) s += (s.empty() ? "" : " ") + std::to_string(d);
    return s;
}

// One split's context, keys and operands.
struct Side {
    ContextPtr ctx;
    std::unique_ptr<KeyGenerator> keygen;
    RelinKey rk;
    GaloisKeys gk;
    explicit Side(const Parameters& p) : ctx(Context::create(p)), keygen(std::make_unique<KeyGenerator>(ctx)) {
        rk = keygen->relin_key();
        gk = keygen->galois_keys({1});
    }
    Ciphertext encrypt_at(int level) const {
        const Encoder encoder(ctx);
        Encryptor encryptor(ctx, keygen->secret_key());
        return encryptor.encrypt(
            encoder.encode(bench::random_slots(ctx->max_slots(), uint64_t(level) + 1), level, ctx->standard_scale(level)));
    }
};

struct PresetResult {
    std::string preset, balanced, uniform;
    std::vector<Row> rows;
};

PresetResult run_preset(const std::string& name, const Options& o) {
    PresetResult out;
    out.preset = name;
    Parameters balanced = Parameters::preset(name);
    Parameters uniform = balanced;
    uniform.digit_primes = fewest_uniform_digits(uniform);
    std::fprintf(stderr, "[%s] contexts and keys of both splits...\n", name.c_str());
    const Side b(balanced), u(uniform);
    out.balanced = split_text(b.ctx->digit_primes());
    out.uniform = split_text(u.ctx->digit_primes());
    std::printf("%s: balanced digits (%s), uniform digits (%s); %d thread(s), medians in ms\n", name.c_str(),
                out.balanced.c_str(), out.uniform.c_str(), o.threads);
    std::printf("%-5s %8s %8s %14s %14s %7s %14s %14s %7s\n", "level", "digits_b", "digits_u", "relin_b", "relin_u",
                "ratio", "rotate_b", "rotate_u", "ratio");
    std::vector<int> levels = o.levels;
    if (levels.empty())
        for (int l = b.ctx->max_level(); l >= 1; --l) levels.push_back(l);
    const Evaluator eb(b.ctx), eu(u.ctx);
    for (int level : levels) {
        if (level < 1 || level > b.ctx->max_level()) {
            std::fprintf(stderr, "[%s] level %d skipped (1..%d)\n", name.c_str(), level, b.ctx->max_level());
            continue;
        }
        const Ciphertext xb = b.encrypt_at(level), xu = u.encrypt_at(level);
        const std::vector<bench::Timing> t = bench::measure_interleaved(
            {[&] { (void)eb.multiply_relin_rescale(xb, xb, b.rk); }, [&] { (void)eu.multiply_relin_rescale(xu, xu, u.rk); },
             [&] { (void)eb.rotate(xb, 1, b.gk); }, [&] { (void)eu.rotate(xu, 1, u.gk); }},
            5, o.min_seconds);
        Row r{name, level, b.ctx->ring().digits_at(level), u.ctx->ring().digits_at(level), t[0], t[1], t[2], t[3]};
        std::printf("%-5d %8zu %8zu %14.2f %14.2f %7.2f %14.2f %14.2f %7.2f\n", level, r.digits_balanced, r.digits_uniform,
                    t[0].median_us / 1e3, t[1].median_us / 1e3, t[1].median_us / t[0].median_us, t[2].median_us / 1e3,
                    t[3].median_us / 1e3, t[3].median_us / t[2].median_us);
        std::fflush(stdout);
        out.rows.push_back(r);
    }
    return out;
}

void write_json(const std::string& path, const std::vector<PresetResult>& results, const Options& o) {
    std::ofstream out = bench::output_file(path);
    out << "{\n  \"benchmark\": \"bench_digits\",\n  \"machine\": " << bench::machine_json() << ",\n  \"threads\": " << o.threads
        << ",\n  \"unit\": \"microseconds (median)\",\n  \"presets\": [\n";
    for (size_t p = 0; p < results.size(); ++p) {
        const PresetResult& r = results[p];
        out << "    {\"preset\": \"" << r.preset << "\", \"balanced_digits\": \"" << r.balanced << "\", \"uniform_digits\": \""
            << r.uniform << "\", \"levels\": [\n";
        for (size_t i = 0; i < r.rows.size(); ++i) {
            const Row& x = r.rows[i];
            out << "      {\"level\": " << x.level << ", \"digits_balanced\": " << x.digits_balanced
                << ", \"digits_uniform\": " << x.digits_uniform << ", \"relin_rescale_balanced_us\": " << x.relin_balanced.median_us
                << ", \"relin_rescale_uniform_us\": " << x.relin_uniform.median_us
                << ", \"rotate_balanced_us\": " << x.rotate_balanced.median_us << ", \"rotate_uniform_us\": " << x.rotate_uniform.median_us
                << ", \"runs\": " << x.relin_balanced.runs << "}" << (i + 1 < r.rows.size() ? "," : "") << "\n";
        }
        out << "    ]}" << (p + 1 < results.size() ? "," : "") << "\n";
    }
    out << "  ]\n}\n";
}

void write_markdown(const std::string& path, const std::vector<PresetResult>& results, const Options& o) {
    std::ofstream out = bench::output_file(path);
    out << "# Key switching by level: digits balanced by bits against digits of equal counts\n\n"
        << "Generated by `bench_digits` on " << bench::utc_now() << ": " << bench::cpu_model() << " ("
        << bench::cpu_flags_summary() << "), " << o.threads
        << " thread(s). Medians in ms; the two splits' operations run in interleaved rounds in one process. "
           "Balanced: the preset's key-switching digits (Parameters::digit_partition, docs/parameters.md); "
           "uniform: the fewest digits of equal prime counts under P, the split before format version 10. "
           "Digits: those that the level's primes meet. Ratio: uniform / balanced (above 1: the balanced split is faster).\n";
    for (const PresetResult& r : results) {
        out << "\n## " << r.preset << ": balanced digits " << r.balanced << "; uniform digits " << r.uniform << "\n\n"
            << "| level | digits (balanced / uniform) | mul + relin + rescale, balanced | uniform | ratio | rotate, balanced | uniform | ratio |\n"
            << "|---:|---:|---:|---:|---:|---:|---:|---:|\n";
        for (const Row& x : r.rows)
            out << "| " << x.level << " | " << x.digits_balanced << " / " << x.digits_uniform << " | "
                << bench::fmt("%.2f", x.relin_balanced.median_us / 1e3) << " | " << bench::fmt("%.2f", x.relin_uniform.median_us / 1e3)
                << " | " << bench::fmt("%.2f", x.relin_uniform.median_us / x.relin_balanced.median_us) << " | "
                << bench::fmt("%.2f", x.rotate_balanced.median_us / 1e3) << " | " << bench::fmt("%.2f", x.rotate_uniform.median_us / 1e3)
                << " | " << bench::fmt("%.2f", x.rotate_uniform.median_us / x.rotate_balanced.median_us) << " |\n";
    }
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--presets") {
            o.presets = bench::split(bench::option_value(argc, argv, i), ',');
        } else if (a == "--levels") {
            o.levels.clear();
            for (const auto& l : bench::split(bench::option_value(argc, argv, i), ',')) o.levels.push_back(std::stoi(l));
        } else if (a == "--threads") {
            o.threads = std::stoi(bench::option_value(argc, argv, i));
        } else if (a == "--min-seconds") {
            o.min_seconds = std::stod(bench::option_value(argc, argv, i));
        } else if (a == "--json") {
            o.json = bench::option_value(argc, argv, i);
        } else if (a == "--markdown") {
            o.markdown = bench::option_value(argc, argv, i);
        } else if (a == "--quick") {
            o.presets = {"BT"};
            o.levels = {Parameters::preset("BT").max_level(), 1};
            o.min_seconds = 0;
        } else {
            std::fprintf(stderr,
                         "usage: bench_digits [--presets B1] [--levels 25,20,10] [--threads 1] [--min-seconds 1] "
                         "[--json F] [--markdown F] [--quick]\n");
            return 2;
        }
    }
    bench::prepare_outputs({o.json, o.markdown});
    oboro::set_num_threads(o.threads);
    std::vector<PresetResult> results;
    for (const std::string& p : o.presets) results.push_back(run_preset(p, o));
    if (!o.json.empty()) write_json(o.json, results, o);
    if (!o.markdown.empty()) write_markdown(o.markdown, results, o);
    return 0;
}

// Bootstrapping: set-up (the bootstrapper's matrices, key generation and the keys' size), the time
// of one bootstrap (median over repeated runs after an untimed one) and its precision in bits (-log2 of the largest
// error over the slots, and the mean over the slots of -log2 of the error, worst of the runs, values uniform in the unit disk; and for the hardest input,
// every slot 1), per preset and slot
// count, with the peak memory of the row (the process's, reset at the start of each row). Also two real
// inputs in one bootstrap (Bootstrapper::bootstrap_real_pair): its time (median) and the worst
// precision of its two outputs, values uniform in [-1, 1]. Writes JSON with machine and date (bench/report_bootstrap.py
// renders it, beside Lattigo's figures of the same session).
//
//   bench_bootstrap [--presets B1] [--slots 32768,16] [--threads 2,1] [--message-ratio 12,8]
//                   [--double-angles 2,0] [--eval-mod-terms 1,2] [--iterations 1,2] [--order cts,stc] [--memory balanced,balanced:1,fast,seeded,low]
//                   [--key-tolerance 0.05,0.5] [--digits balanced,uniform] [--dft-levels 3:3,4:3] [--runs 3] [--profile]
//                   [--json FILE]
// One row per preset, slot count, thread count, message ratio, number of EvalMod's double angles and
// terms of its sine series (each automatic unless given),
// of iterations, order (cts: CoeffsToSlots first, the default; stc: SlotsToCoeffs first, the
// inputs then encrypted at the bootstrapper's min_input_level()) and memory policy (balanced, the
// default: keys whose uniform halves are kept as seeds, but for those a bootstrap uses several times;
// balanced:R: the same with those read at least R times a pass stored whole
// (MemoryPolicy::whole_key_reads); fast: the same keys stored whole; seeded: every one of them seeded; low:
// MemoryPolicy::low(), fewer keys, seeded, and the dense DFT diagonals encoded at each use)
// and, where given, the DFT plans' key-saving tolerance (MemoryPolicy::key_saving_tolerance: the
// fewest keys among the plans within that fraction of the least modelled cost), and the key-switching
// digits (balanced: the preset's own, Parameters::digit_partition; uniform: the fewest digits of
// equal counts under P, the split before format version 10, for an A/B in one binary), and the levels
// of the two DFTs (--dft-levels CTS:STC, BootstrapConfig's coeffs_to_slots_levels and
// slots_to_coeffs_levels: each level more takes one from the output level).
// --profile: one more bootstrap per row with each operation of the algorithms layer timed
// (algorithms::OpProfile: multiply_relin_rescale, rotate_many_extended, ...), printed after the table
// and written to the JSON: where a bootstrap's time goes.
//   bench_bootstrap --quick          # BT (insecure test ring), full slots, one run: a smoke test
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "oboro/algorithms/bootstrap.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keygen.hpp"
#include "oboro/util/memory_pool.hpp"
#include "oboro/util/parallel.hpp"
#include "oboro/util/workspace.hpp"

using namespace oboro;
using namespace oboro::ckks;
using namespace oboro::algorithms;
using cplx = std::complex<double>;

namespace {

struct Row {
    std::string preset;
    size_t slots = 0;
    int threads = 0, depth = 0, output_level = 0, keys = 0, message_ratio_bits = 0, double_angles = 0, cosine_degree = 0;
    int cts_levels = 0, stc_levels = 0;
    int iterations = 1, input_level = 0, eval_mod_terms = 1;
    bool stc_first = false;
    std::string memory = "balanced";  // the memory policy: balanced (the default), fast or low
    bool seeded_keys = false;         // its keys keep their uniform halves as seeds
    int whole_keys = 0;               // of its Galois keys, those stored whole all the same
    double key_tolerance = 0;
    std::string digits = "balanced";  // the key-switching digits: balanced (the preset's) or uniform
    std::vector<size_t> digit_primes;
    bool encapsulates = false;
    double key_gib = 0, diagonal_gib = 0, setup_s = 0, keygen_s = 0, model_bits = 0, bits = 0, constant_bits = 0, peak_gib = 0;
    double mean_bits = 0, pair_bits = 0;
    bench::Timing time, pair_time;
    OpProfile profile;         // with --profile: one more bootstrap, each operation timed
    double profiled_s = 0;     // that bootstrap's time
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Starts a new peak: the kernel's high-water mark of this process goes back to its current size.
void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

// The peak resident memory of this process since reset_peak() (VmHWM), GiB.
double peak_gib() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / (1024.0 * 1024.0);
    return 0;
}

// The memory of the bootstrapping keys and the relinearization key (EvalMod's products need it), as
// Lattigo's evaluation key set counts them (KeySwitchKey::data: the packed bytes).
double key_gib(const BootstrapKeys& bk, const RelinKey& rk) {
    double bytes = double(rk.data.size());
    for (const auto& [g, key] : bk.galois.keys) bytes += double(key->data.size());
    if (bk.encapsulation) bytes += double(bk.encapsulation->to_ephemeral.data.size() + bk.encapsulation->from_ephemeral.data.size());
    return bytes / (1024.0 * 1024.0 * 1024.0);
}

Row run(const std::string& preset, std::optional<size_t> slots_opt, int threads, int runs, std::optional<int> ratio,
        std::optional<int> double_angles, std::optional<int> terms, std::optional<int> iterations, bool stc_first, const std::string& memory,
        std::optional<double> key_tolerance, const std::string& digits, std::optional<std::pair<int, int>> dft_levels,
        bool profile) {
    using clock = std::chrono::steady_clock;
    oboro::set_num_threads(threads);
    // the previous row's key-switching scratch (one workspace per thread it ran) and the pool's
    // cached blocks (given back only after 10 s idle) go back now, or they would count in this
    // row's peak
    oboro::scratch_pool().release_idle();
    oboro::pool_trim();
    reset_peak();
    Row row;
    row.preset = preset;
    row.threads = threads;
    Parameters params = Parameters::preset(preset);
    if (digits == "uniform")
        params.digit_primes = fewest_uniform_digits(params);
    row.digits = digits;
    auto ctx = Context::create(params);
    row.digit_primes = ctx->digit_primes();
    const size_t slots = slots_opt.value_or(ctx->max_slots());
    row.slots = slots;
    std::fprintf(stderr, "[%s, %zu slots] the bootstrapper's matrices...\n", preset.c_str(), slots);
    auto t0 = clock::now();
    BootstrapConfig config;
    config.slots = slots;
    if (ratio) config.message_ratio_bits = *ratio;
    if (double_angles) config.double_angles = *double_angles;
    config.eval_mod_terms = terms;
    config.iterations = iterations;
    if (stc_first) config.order = BootstrapOrder::slots_to_coeffs_first;
    if (dft_levels) {
        config.coeffs_to_slots_levels = dft_levels->first;
        config.slots_to_coeffs_levels = dft_levels->second;
    }
    row.cts_levels = config.coeffs_to_slots_levels;
    row.stc_levels = config.slots_to_coeffs_levels;
    row.stc_first = stc_first;
    if (memory == "low") config.memory = MemoryPolicy::low();
    if (memory == "fast") config.memory = kFastBootstrapMemory;
    if (memory == "seeded") config.memory = kSeededBootstrapMemory;
    if (memory.starts_with("balanced:")) config.memory.whole_key_reads = std::stod(memory.substr(9));
    row.memory = memory;
    row.seeded_keys = config.memory.seeded_keys;
    if (key_tolerance) config.memory.key_saving_tolerance = *key_tolerance;
    row.key_tolerance = config.memory.key_saving_tolerance;

    const Bootstrapper boot(ctx, config);
    boot.encode_diagonals();
    row.double_angles = boot.eval_mod().double_angles();
    row.eval_mod_terms = boot.eval_mod().terms();
    row.cosine_degree = boot.eval_mod().cosine().degree();
    row.iterations = boot.iterations();
    row.message_ratio_bits = boot.message_ratio_bits();
    const int input_level = row.input_level = boot.min_input_level();
    row.setup_s = seconds_since(t0);
    row.depth = boot.depth();
    row.output_level = boot.output_level();
    row.model_bits = boot.precision_bits();
    row.encapsulates = boot.encapsulates();
    row.whole_keys = int(boot.whole_galois_keys());
    std::fprintf(stderr, "[%s, %zu slots] keys (%zu Galois keys, %d of them stored whole)...\n", preset.c_str(), slots,
                 boot.galois_key_levels().size(), row.whole_keys);
    t0 = clock::now();
    KeyGenerator keygen(ctx);
    const PublicKey pk = keygen.public_key();
    const RelinKey rk = keygen.relin_key();
    const BootstrapKeys bk = boot.generate_keys(keygen);
    row.keygen_s = seconds_since(t0);
    row.keys = int(bk.galois.keys.size()) + (bk.encapsulation ? 2 : 0) + 1;
    row.key_gib = key_gib(bk, rk);
    const KeyRefs key_set(&rk, &bk.galois);
    const Evaluator eval = Evaluator(ctx).with_keys(key_set);
    Encoder enc(ctx);
    Encryptor encryptor(ctx, pk);
    Decryptor dec(ctx, keygen.secret_key());
    std::mt19937_64 gen(11);  // inputs only
    std::uniform_real_distribution<double> angle(0, 2 * M_PI), radius(0, 1);
    std::vector<cplx> values(slots);
    for (auto& v : values) v = std::polar(std::sqrt(radius(gen)), angle(gen));
    const Ciphertext in = encryptor.encrypt(enc.encode(values, input_level, std::nullopt, slots));
    // the hardest input for EvalMod: every slot 1, whose polynomial is the constant 1 (the largest
    // coefficient values in the unit disk can have; random values have coefficients near 1/sqrt(n))
    const std::vector<cplx> ones(slots, cplx(1, 0));
    const Ciphertext in_ones = encryptor.encrypt(enc.encode(ones, input_level, std::nullopt, slots));
    row.constant_bits = bench::precision_of(dec.decrypt_decode(boot.bootstrap(CountedOps(eval, nullptr), in_ones, bk), enc), ones).worst;
    // a first, untimed bootstrap: the pool's buffers and the lazily made tables of the levels
    const bench::Precision first = bench::precision_of(dec.decrypt_decode(boot.bootstrap(CountedOps(eval, nullptr), in, bk), enc), values);
    row.bits = first.worst;
    row.mean_bits = first.mean;
    std::vector<double> us;
    for (int r = 0; r < runs; ++r) {
        std::fprintf(stderr, "[%s, %zu slots] bootstrap %d/%d...\n", preset.c_str(), slots, r + 1, runs);
        t0 = clock::now();
        const Ciphertext out = boot.bootstrap(CountedOps(eval, nullptr), in, bk);
        us.push_back(seconds_since(t0) * 1e6);
        const bench::Precision b = bench::precision_of(dec.decrypt_decode(out, enc), values);
        row.bits = std::min(row.bits, b.worst);
        row.mean_bits = std::min(row.mean_bits, b.mean);
    }
    row.time = bench::timing_of(us);
    if (profile) {
        std::fprintf(stderr, "[%s, %zu slots] a profiled bootstrap...\n", preset.c_str(), slots);
        t0 = clock::now();
        (void)boot.bootstrap(CountedOps(eval, nullptr, &row.profile), in, bk);
        row.profiled_s = seconds_since(t0);
    }
    // the DFTs' diagonals the bootstraps encoded and keep (Bootstrapper::diagonal_bytes)
    row.diagonal_gib = double(boot.kept_diagonal_bytes()) / (1024.0 * 1024.0 * 1024.0);
    // two real inputs in one bootstrap
    std::uniform_real_distribution<double> real(-1, 1);
    std::vector<cplx> re(slots), im(slots);
    for (size_t i = 0; i < slots; ++i) re[i] = real(gen), im[i] = real(gen);
    const Ciphertext in_re = encryptor.encrypt(enc.encode(re, input_level, std::nullopt, slots));
    const Ciphertext in_im = encryptor.encrypt(enc.encode(im, input_level, std::nullopt, slots));
    us.clear();
    row.pair_bits = 60;
    for (int r = 0; r < runs; ++r) {
        std::fprintf(stderr, "[%s, %zu slots] two real inputs in one bootstrap %d/%d...\n", preset.c_str(), slots,
                     r + 1, runs);
        t0 = clock::now();
        const auto [a, b] = boot.bootstrap_real_pair(CountedOps(eval, nullptr), in_re, in_im, bk);
        us.push_back(seconds_since(t0) * 1e6);
        row.pair_bits = std::min({row.pair_bits, bench::precision_of(dec.decrypt_decode(a, enc), re).worst,
                                   bench::precision_of(dec.decrypt_decode(b, enc), im).worst});
    }
    row.pair_time = bench::timing_of(us);
    row.peak_gib = peak_gib();
    std::fprintf(stderr, "[%s, %zu slots] %.2f s, %.1f bits (all ones: %.1f), %d levels left\n", preset.c_str(),
                 slots, row.time.median_us / 1e6, row.bits, row.constant_bits, row.output_level);
    return row;
}

void write_json(const std::string& path, const std::vector<Row>& rows, int runs) {
    std::ofstream os = bench::output_file(path);
    os << "{\"benchmark\": \"bootstrap\", \"machine\": " << bench::machine_json()
       << ", \"runs\": " << runs << ", \"rows\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        os << "  {\"preset\": \"" << r.preset << "\", \"threads\": " << r.threads << ", \"slots\": " << r.slots << ", \"depth\": " << r.depth
           << ", \"output_level\": " << r.output_level << ", \"message_ratio_bits\": " << r.message_ratio_bits << ", \"double_angles\": " << r.double_angles << ", \"eval_mod_terms\": " << r.eval_mod_terms << ", \"iterations\": " << r.iterations
           << ", \"coeffs_to_slots_levels\": " << r.cts_levels << ", \"slots_to_coeffs_levels\": " << r.stc_levels
           << ", \"order\": \"" << (r.stc_first ? "slots_to_coeffs_first" : "coeffs_to_slots_first")
           << "\", \"memory\": \"" << r.memory << "\", \"seeded_keys\": " << (r.seeded_keys ? "true" : "false")
           << ", \"whole_galois_keys\": " << r.whole_keys
           << ", \"key_saving_tolerance\": " << r.key_tolerance << ", \"digits\": \"" << r.digits << "\", \"digit_primes\": [";
        for (size_t j = 0; j < r.digit_primes.size(); ++j) os << (j ? ", " : "") << r.digit_primes[j];
        os << "], \"input_level\": " << r.input_level
           << ", \"cosine_degree\": " << r.cosine_degree << ", \"encapsulates\": " << (r.encapsulates ? "true" : "false")
           << ", \"setup_s\": " << r.setup_s << ", \"keygen_s\": " << r.keygen_s << ", \"keys\": " << r.keys
           << ", \"key_gib\": " << r.key_gib << ", \"diagonal_gib\": " << r.diagonal_gib << ", \"bootstrap_median_s\": " << r.time.median_us / 1e6
           << ", \"bootstrap_min_s\": " << r.time.min_us / 1e6 << ", \"precision_bits\": " << r.bits << ", \"mean_precision_bits\": " << r.mean_bits << ", \"constant_precision_bits\": " << r.constant_bits
           << ", \"model_bits\": " << r.model_bits << ", \"real_pair_median_s\": " << r.pair_time.median_us / 1e6
           << ", \"real_pair_precision_bits\": " << r.pair_bits << ", \"peak_gib\": " << r.peak_gib;
        if (!r.profile.ops.empty()) {
            os << ", \"profiled_s\": " << r.profiled_s << ", \"profile\": [";
            bool first = true;
            for (const auto& [op, e] : r.profile.ops) {
                os << (first ? "" : ", ") << "{\"op\": \"" << op << "\", \"calls\": " << e.calls << ", \"seconds\": " << e.seconds << "}";
                first = false;
            }
            os << "]";
        }
        os << "}"
           << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    os << "]}\n";
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> presets = {"B1"};
    std::vector<std::optional<size_t>> slots = {std::nullopt};
    int runs = 3;
    std::vector<int> threads = {oboro::num_threads()};
    std::vector<std::optional<int>> ratios = {std::nullopt}, angles = {std::nullopt};
    std::vector<std::optional<int>> iterations = {std::nullopt};
    std::vector<std::optional<int>> terms = {std::nullopt};
    std::vector<bool> orders = {false};
    std::vector<std::string> memories = {"balanced"};
    std::vector<std::optional<double>> tolerances = {std::nullopt};
    std::vector<std::string> digit_splits = {"balanced"};
    std::vector<std::optional<std::pair<int, int>>> dft_levels = {std::nullopt};
    std::string json;
    bool profile = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") {
            presets = {"BT"};
            runs = 1;
        } else if (a == "--presets") {
            presets = bench::split(bench::option_value(argc, argv, i), ',');
        } else if (a == "--slots") {
            slots.clear();
            for (const auto& s : bench::split(bench::option_value(argc, argv, i), ',')) slots.push_back(std::stoul(s));
        } else if (a == "--runs") {
            runs = std::max(1, std::stoi(bench::option_value(argc, argv, i)));
        } else if (a == "--message-ratio") {
            ratios.clear();
            for (const auto& r : bench::split(bench::option_value(argc, argv, i), ',')) ratios.push_back(std::stoi(r));
        } else if (a == "--double-angles") {
            angles.clear();
            for (const auto& r : bench::split(bench::option_value(argc, argv, i), ',')) angles.push_back(std::stoi(r));
        } else if (a == "--eval-mod-terms") {
            terms.clear();
            for (const auto& r : bench::split(bench::option_value(argc, argv, i), ',')) terms.push_back(std::stoi(r));
        } else if (a == "--iterations") {
            iterations.clear();
            for (const auto& r : bench::split(bench::option_value(argc, argv, i), ',')) iterations.push_back(std::stoi(r));
        } else if (a == "--order") {
            orders.clear();
            for (const auto& o : bench::split(bench::option_value(argc, argv, i), ',')) {
                if (o != "cts" && o != "stc") {
                    std::fprintf(stderr, "--order takes cts (CoeffsToSlots first) and stc (SlotsToCoeffs first)\n");
                    return 2;
                }
                orders.push_back(o == "stc");
            }
        } else if (a == "--memory") {
            memories.clear();
            for (const auto& m : bench::split(bench::option_value(argc, argv, i), ',')) {
                const auto reads_ok = [&] {
                    char* end = nullptr;
                    const double r = std::strtod(m.c_str() + 9, &end);
                    return end != m.c_str() + 9 && *end == '\0' && r >= 0;
                };
                if (m != "balanced" && m != "fast" && m != "low" && m != "seeded" &&
                    !(m.starts_with("balanced:") && reads_ok())) {
                    std::fprintf(stderr, "--memory takes balanced (the default: seeded keys, those used several times "
                                         "stored whole), balanced:R (seeded keys, those read at least R >= 0 times a "
                                         "pass stored whole), fast (kFastBootstrapMemory: keys stored whole), seeded (every "
                                         "key seeded) and low (MemoryPolicy::low())\n");
                    return 2;
                }
                memories.push_back(m);
            }
        } else if (a == "--key-tolerance") {
            tolerances.clear();
            for (const auto& t : bench::split(bench::option_value(argc, argv, i), ',')) tolerances.push_back(std::stod(t));
        } else if (a == "--digits") {
            digit_splits.clear();
            for (const auto& d : bench::split(bench::option_value(argc, argv, i), ',')) {
                if (d != "balanced" && d != "uniform") {
                    std::fprintf(stderr, "--digits takes balanced (the preset's key-switching digits) and uniform "
                                         "(the fewest digits of equal counts under P)\n");
                    return 2;
                }
                digit_splits.push_back(d);
            }
        } else if (a == "--dft-levels") {
            dft_levels.clear();
            for (const auto& d : bench::split(bench::option_value(argc, argv, i), ',')) {
                const auto colon = d.find(':');
                char* end = nullptr;
                const long cts = colon == std::string::npos ? 0 : std::strtol(d.c_str(), &end, 10);
                const bool cts_ok = colon != std::string::npos && end == d.c_str() + colon;
                const long stc = cts_ok ? std::strtol(d.c_str() + colon + 1, &end, 10) : 0;
                if (!cts_ok || *end != '\0' || end == d.c_str() + colon + 1 || cts < 1 || stc < 1) {
                    std::fprintf(stderr, "--dft-levels takes CTS:STC pairs of level counts >= 1 (the DFTs' levels, "
                                         "BootstrapConfig::coeffs_to_slots_levels and slots_to_coeffs_levels; 3:3 by default)\n");
                    return 2;
                }
                dft_levels.push_back(std::pair<int, int>(int(cts), int(stc)));
            }
        } else if (a == "--threads") {
            threads.clear();
            for (const auto& t : bench::split(bench::option_value(argc, argv, i), ',')) threads.push_back(std::stoi(t));
        } else if (a == "--profile") {
            profile = true;
        } else if (a == "--json") {
            json = bench::option_value(argc, argv, i);
        } else {
            std::fprintf(stderr, "usage: bench_bootstrap [--quick] [--presets B1] [--slots 32768,16] [--threads 2,1] "
                                 "[--message-ratio 12,8] [--double-angles 2,0] [--eval-mod-terms 1,2] [--iterations 1,2] [--order cts,stc] "
                                 "[--memory balanced,fast,low] [--key-tolerance 0.05,0.5] [--digits balanced,uniform] "
                                 "[--dft-levels 3:3,4:3] [--runs 3] [--profile] [--json FILE]\n");
            return 2;
        }
    }
    bench::prepare_outputs({json});
    std::vector<Row> rows;
    for (const auto& p : presets)
        for (const auto& s : slots)
            for (int t : threads)
                for (const auto& r : ratios)
                    for (const auto& d : angles)
                        for (const auto& e : terms)
                            for (const auto& it : iterations)
                                for (bool o : orders)
                                    for (const auto& m : memories)
                                        for (const auto& k : tolerances)
                                            for (const auto& g : digit_splits)
                                                for (const auto& v : dft_levels)
                                                    rows.push_back(run(p, s, t, runs, r, d, e, it, o, m, k, g, v, profile));
    std::printf("%-6s %5s %5s %8s %5s %8s %7s %7s %5s %6s %5s %5s %6s %6s %10s %9s %9s %9s %8s %9s %9s %8s %6s %5s %9s %9s %9s\n", "preset", "order", "dft", "memory", "k_tol", "digits", "threads", "slots",
                "ratio", "angles", "terms", "iters", "used", "left", "boot_s", "bits", "mean_bits", "ones_bits", "pair_s", "pair_bits", "setup_s", "keygen_s",
                "keys", "whole", "keys_GiB", "diag_GiB", "peak_GiB");
    for (const Row& r : rows) {
        const std::string dft = std::to_string(r.cts_levels) + ":" + std::to_string(r.stc_levels);
        std::printf("%-6s %5s %5s %8s %5.2f %8s %7d %7zu %5d %6d %5d %5d %6d %6d %10.2f %9.1f %9.1f %9.1f %8.2f %9.1f %9.1f %8.1f %6d %5d %9.2f %9.2f %9.1f\n",
                    r.preset.c_str(), r.stc_first ? "stc" : "cts", dft.c_str(), r.memory.c_str(), r.key_tolerance, r.digits.c_str(), r.threads, r.slots, r.message_ratio_bits, r.double_angles, r.eval_mod_terms, r.iterations, r.depth, r.output_level,
                    r.time.median_us / 1e6, r.bits, r.mean_bits, r.constant_bits, r.pair_time.median_us / 1e6, r.pair_bits,
                    r.setup_s, r.keygen_s, r.keys, r.whole_keys, r.key_gib, r.diagonal_gib, r.peak_gib);
    }
    for (const Row& r : rows) {
        if (r.profile.ops.empty()) continue;
        std::printf("\nprofile: %s, %d thread(s), %zu slots, one bootstrap of %.2f s, each operation timed\n",
                    r.preset.c_str(), r.threads, r.slots, r.profiled_s);
        std::vector<std::pair<std::string, OpProfile::Entry>> by_time(r.profile.ops.begin(), r.profile.ops.end());
        std::sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
        double timed = 0;
        for (const auto& [op, e] : by_time) {
            std::printf("  %-32s %6llu calls %9.3f s %5.1f%%\n", op.c_str(), (unsigned long long)e.calls, e.seconds,
                        100 * e.seconds / r.profiled_s);
            timed += e.seconds;
        }
        std::printf("  %-32s %16s %9.3f s %5.1f%%\n", "(between operations)", "", r.profiled_s - timed,
                    100 * (r.profiled_s - timed) / r.profiled_s);
    }
    if (!json.empty()) write_json(json, rows, runs);
    return 0;
}

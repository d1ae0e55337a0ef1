// Trace-type functions (rotate-and-sum), reproducing paper 004's tables on oboro:
//   1. logN = 15, scale 2^40, M = 7 rounds, ciphertext level l in {1,4,9}, special primes k in
//      {1,5,10} (digits of k primes, as in the paper: dnum = ceil((l+1)/k)), hoisted h = 1..7 and
//      repeated doubling, 1 and 2 threads, scalar and SIMD kernels when the CPU has them. Printed in
//      the paper's layout (rows h, columns k/l) as the speed-up of hoisted h over doubling, and,
//      when both kernel kinds ran, as the speed-up of SIMD over scalar (the paper's Table 2).
//   2. The total sum of all slots at S1 and S2, single-threaded, against the other libraries'
//      figures (bench/peers_trace.json, copied from shared/PEERS.md).
// The parameters of part 1 exceed the 128-bit security bound for l = 9, k = 10 (as in the paper);
// they are benchmarks, not recommendations. Key sets larger than --max-key-mb are skipped (N/A,
// as the paper's "out of memory").
//
//   bench_trace [--quick] [--threads 1,2] [--runs N] [--max-key-mb MB] [--json FILE] [--markdown FILE]
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "bench_util.hpp"
#include "oboro/backend/cpu/ntt_simd.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/keygen.hpp"
#include "oboro/ckks/trace.hpp"
#include "oboro/util/parallel.hpp"

#ifndef OBORO_PEERS_TRACE_JSON
#define OBORO_PEERS_TRACE_JSON ""
#endif

using namespace oboro;
using namespace oboro::ckks;

namespace {

struct Cell {  // one measurement of part 1
    int k = 0, l = 0, threads = 1, h = 0;  // h = 0: doubling
    bool simd = false;
    double us = NAN;                       // NAN: not measured (key memory)
};

struct TotalRow {
    std::string preset, strategy;
    int h = 0;
    size_t keys = 0;
    double us = 0;
};

Parameters table_params(int l, int k) {
    Parameters p;
    p.log_n = 15;
    p.q_bits = std::vector<int>(size_t(l + 1), 40);
    p.q_bits[0] = 60;
    p.p_bits = std::vector<int>(size_t(k), 60);
    p.dnum = (l + 1 + k - 1) / k;  // digits of k primes (the paper's alpha = k)
    p.scale = 0x1p40;
    p.security = SecurityLevel::none;
    return p;
}

double key_mb(const Context& ctx, size_t keys) {
    const double per = double(ctx.num_digits()) * 2 * double(ctx.q_count() + ctx.p_count()) * double(ctx.n()) * 8;
    return per * double(keys) / (1 << 20);
}

std::vector<int64_t> unite(std::vector<int64_t> a, const std::vector<int64_t>& b) {
    std::set<int64_t> s(a.begin(), a.end());
    s.insert(b.begin(), b.end());
    return {s.begin(), s.end()};
}

Ciphertext fresh(const ContextPtr& ctx, KeyGenerator& keygen) {
    Encoder enc(ctx);
    Encryptor encryptor(ctx, keygen.secret_key());
    std::vector<double> v(ctx->max_slots());
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(double(i));
    return encryptor.encrypt(enc.encode(v));
}

void part1(const std::vector<int>& levels, const std::vector<int>& specials, const std::vector<int>& threads,
           const std::vector<bool>& simds, int runs, double max_key_mb, std::vector<Cell>& cells,
           std::map<std::pair<int, int>, int>& model_h) {
    const SumSpec spec{1, 7};
    for (int k : specials) {
        for (int l : levels) {
            auto ctx = Context::create(table_params(l, k));
            KeyGenerator keygen(ctx);
            // One key set for every h that fits the memory budget (each h's steps are a subset of 1..127).
            std::vector<int64_t> steps = sum_rotation_steps(*ctx, spec, ctx->max_slots(), SumStrategy::doubling);
            std::vector<int> hs;
            for (int h = 1; h <= spec.rounds; ++h) {
                auto s = sum_rotation_steps(*ctx, spec, ctx->max_slots(), SumStrategy::hoisted, h);
                if (key_mb(*ctx, unite(steps, s).size()) > max_key_mb && h < spec.rounds) continue;
                steps = unite(steps, s);
                hs.push_back(h);
            }
            std::fprintf(stderr, "k=%d l=%d: %zu keys (%.0f MB)...\n", k, l, steps.size(), key_mb(*ctx, steps.size()));
            const GaloisKeys gk = keygen.galois_keys(steps);
            const Ciphertext ct = fresh(ctx, keygen);
            const Evaluator eval(ctx);
            model_h[{k, l}] = choose_iterations(*ctx, l, spec.rounds);
            for (int t : threads) {
                set_num_threads(t);
                for (bool simd : simds) {
                    backend::cpu::set_simd_enabled(simd);
                    for (int h = 0; h <= spec.rounds; ++h) {
                        Cell c{k, l, t, h, simd, NAN};
                        if (h == 0 || std::count(hs.begin(), hs.end(), h)) {
                            const SumStrategy st = h == 0 ? SumStrategy::doubling : SumStrategy::hoisted;
                            c.us = bench::measure([&] { rotate_and_sum(eval, ct, spec, gk, st, std::max(h, 1)); }, runs,
                                                  0.0, runs)
                                       .median_us;
                        }
                        cells.push_back(c);
                    }
                }
            }
        }
    }
    set_num_threads(1);
    backend::cpu::set_simd_enabled(backend::cpu::simd_available());
}

void part2(const std::vector<std::string>& presets, int runs, std::vector<TotalRow>& rows) {
    set_num_threads(1);
    for (const auto& name : presets) {
        auto ctx = Context::create(Parameters::preset(name));
        KeyGenerator keygen(ctx);
        const SumSpec spec = SumSpec::total(ctx->max_slots());
        const auto d_steps = sum_rotation_steps(*ctx, spec, ctx->max_slots(), SumStrategy::doubling);
        const auto a_steps = sum_rotation_steps(*ctx, spec, ctx->max_slots(), SumStrategy::automatic);
        const GaloisKeys gk = keygen.galois_keys(unite(d_steps, a_steps));
        const Ciphertext ct = fresh(ctx, keygen);
        const Evaluator eval(ctx);
        const int h = choose_iterations(*ctx, ctx->max_level(), spec.rounds);
        for (SumStrategy st : {SumStrategy::doubling, SumStrategy::automatic}) {
            const double us =
                bench::measure([&] { rotate_and_sum(eval, ct, spec, gk, st); }, runs, 0.0, runs).median_us;
            rows.push_back({name, to_string(st), st == SumStrategy::doubling ? 0 : h,
                            (st == SumStrategy::doubling ? d_steps : a_steps).size(), us});
        }
    }
}

// A figure of bench/peers_trace.json: section `preset`, op, library (nullopt when absent).
std::optional<double> peer(const std::string& json, const std::string& preset, const std::string& op,
                           const std::string& lib) {
    const auto sec = json.find("\"" + preset + "\": {");
    if (sec == std::string::npos) return std::nullopt;
    const auto o = json.find("\"" + op + "\": {", sec);
    if (o == std::string::npos) return std::nullopt;
    const auto end = json.find('}', o);
    std::smatch m;
    const std::string body = json.substr(o, end - o);
    if (std::regex_search(body, m, std::regex("\"" + lib + "\": ([0-9.]+)"))) return std::stod(m[1]);
    return std::nullopt;
}

using bench::fmt;

// Part 1 as markdown tables in the paper's layout.
std::string tables(const std::vector<Cell>& cells, const std::vector<int>& levels, const std::vector<int>& specials,
                   const std::vector<int>& threads, const std::vector<bool>& simds,
                   const std::map<std::pair<int, int>, int>& model_h) {
    auto find = [&](int k, int l, int t, bool s, int h) -> double {
        for (const auto& c : cells)
            if (c.k == k && c.l == l && c.threads == t && c.simd == s && c.h == h) return c.us;
        return NAN;
    };
    std::ostringstream os;
    auto header = [&] {
        os << "| h \\ k/l |";
        for (int k : specials)
            for (int l : levels) os << " " << k << "/" << l << " |";
        os << "\n|---|";
        for (size_t i = 0; i < specials.size() * levels.size(); ++i) os << "---:|";
        os << "\n";
    };
    for (int t : threads)
        for (bool s : simds) {
            os << "\n**" << t << " thread" << (t > 1 ? "s" : "") << ", " << (s ? "SIMD" : "scalar")
               << " kernels**: speed-up of hoisted h over repeated doubling (doubling time / hoisted time; N/A: key "
                  "set over the memory budget)\n\n";
            header();
            for (int h = 1; h <= 7; ++h) {
                os << "| " << h << " |";
                for (int k : specials)
                    for (int l : levels) {
                        const double d = find(k, l, t, s, 0), x = find(k, l, t, s, h);
                        os << (std::isnan(x) ? std::string(" N/A |") : fmt(" %.2f |", d / x));
                    }
                os << "\n";
            }
            os << "| doubling (ms) |";
            for (int k : specials)
                for (int l : levels) os << fmt(" %.1f |", find(k, l, t, s, 0) / 1000);
            os << "\n| best h (measured) |";
            for (int k : specials)
                for (int l : levels) {
                    int best = 0;
                    double bt = find(k, l, t, s, 0);
                    for (int h = 1; h <= 7; ++h)
                        if (find(k, l, t, s, h) < bt) bt = find(k, l, t, s, h), best = h;
                    os << " " << (best ? std::to_string(best) : "doubling") << " |";
                }
            os << "\n| automatic h (model) |";
            for (int k : specials)
                for (int l : levels) os << " " << model_h.at({k, l}) << " |";
            os << "\n";
        }
    if (simds.size() == 2)
        for (int t : threads) {
            os << "\n**" << t << " thread" << (t > 1 ? "s" : "")
               << "**: speed-up of SIMD over scalar kernels (paper 004 Table " << (t == 1 ? 2 : 3) << " layout)\n\n";
            header();
            for (int h = 1; h <= 7; ++h) {
                os << "| " << h << " |";
                for (int k : specials)
                    for (int l : levels) {
                        const double a = find(k, l, t, false, h), b = find(k, l, t, true, h);
                        os << (std::isnan(a) ? std::string(" N/A |") : fmt(" %.2f |", a / b));
                    }
                os << "\n";
            }
        }
    return os.str();
}

std::string totals_table(const std::vector<TotalRow>& rows, const std::string& peers) {
    std::ostringstream os;
    os << "| preset | strategy | h | keys | oboro (us) | OpenFHE library call (us) | SEAL manual (us) | vs OpenFHE | vs SEAL |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& r : rows) {
        const auto o = peer(peers, r.preset, "rotate-and-sum, library call", "openfhe");
        const auto s = peer(peers, r.preset, "rotate-and-sum, manual log2(slots) rots", "seal");
        os << "| " << r.preset << " | " << r.strategy << " | " << (r.h ? std::to_string(r.h) : "-") << " | " << r.keys
           << " | " << fmt("%.0f", r.us) << " | " << (o ? fmt("%.0f", *o) : "n/a") << " | "
           << (s ? fmt("%.0f", *s) : "n/a") << " | " << (o ? fmt("%.2fx", *o / r.us) : "n/a") << " | "
           << (s ? fmt("%.2fx", *s / r.us) : "n/a") << " |\n";
    }
    return os.str();
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::vector<int> threads = {1, 2};
    int runs = 3;
    double max_key_mb = 1500;
    std::string json_path, md_path;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return bench::option_value(argc, argv, i); };
        if (a == "--quick") quick = true;
        else if (a == "--threads") { threads.clear(); for (auto& t : bench::split(next(), ',')) threads.push_back(std::stoi(t)); }
        else if (a == "--runs") runs = std::stoi(next());
        else if (a == "--max-key-mb") max_key_mb = std::stod(next());
        else if (a == "--json") json_path = next();
        else if (a == "--markdown") md_path = next();
        else {
            std::fprintf(stderr, "usage: %s [--quick] [--threads 1,2] [--runs N] [--max-key-mb MB] [--json F] [--markdown F]\n",
                         argv[0]);
            return 2;
        }
    }
    bench::prepare_outputs({json_path, md_path});
    // --quick: a smoke test (one table column, one thread, one run, S1 only).
    std::vector<int> levels = {1, 4, 9}, specials = {1, 5, 10};
    std::vector<std::string> presets = {"S1", "S2"};
    if (quick) levels = {1}, specials = {1}, threads = {1}, runs = 1, presets = {"S1"};
    std::vector<bool> simds = {false};
    if (backend::cpu::simd_available()) simds.push_back(true);

    std::vector<Cell> cells;
    std::map<std::pair<int, int>, int> model_h;
    part1(levels, specials, threads, simds, runs, max_key_mb, cells, model_h);
    std::vector<TotalRow> totals;
    part2(presets, quick ? 1 : std::max(runs, 5), totals);

    const std::string peers = read_file(OBORO_PEERS_TRACE_JSON);
    const std::string t1 = tables(cells, levels, specials, threads, simds, model_h), t2 = totals_table(totals, peers);
    std::printf("# rotate-and-sum, logN = 15, M = 7 (median of %d runs)%s\n%s\n# total sum of all slots, 1 thread\n\n%s",
                runs, backend::cpu::simd_available() ? "" : "; no AVX-512 on this CPU: scalar kernels only", t1.c_str(),
                t2.c_str());

    if (!json_path.empty()) {
        std::ofstream out = bench::output_file(json_path);
        out << "{\n  \"benchmark\": \"bench_trace\",\n  \"machine\": " << bench::machine_json() << ",\n  \"runs\": " << runs
            << ",\n  \"unit\": \"us, median\",\n  \"trace\": [\n";
        for (size_t i = 0; i < cells.size(); ++i) {
            const auto& c = cells[i];
            out << "    {\"k\": " << c.k << ", \"l\": " << c.l << ", \"threads\": " << c.threads << ", \"simd\": "
                << (c.simd ? "true" : "false") << ", \"strategy\": \"" << (c.h ? "hoisted" : "doubling") << "\", \"h\": "
                << c.h << ", \"us\": " << (std::isnan(c.us) ? std::string("null") : fmt("%.1f", c.us)) << "}"
                << (i + 1 < cells.size() ? "," : "") << "\n";
        }
        out << "  ],\n  \"total_sum\": [\n";
        for (size_t i = 0; i < totals.size(); ++i)
            out << "    {\"preset\": \"" << totals[i].preset << "\", \"strategy\": \"" << totals[i].strategy << "\", \"h\": "
                << totals[i].h << ", \"keys\": " << totals[i].keys << ", \"us\": " << fmt("%.1f", totals[i].us) << "}"
                << (i + 1 < totals.size() ? "," : "") << "\n";
        out << "  ]\n}\n";
    }
    if (!md_path.empty()) {
        std::ofstream out = bench::output_file(md_path);
        out << "# Rotate-and-sum (trace-type functions)\n\nGenerated by `bench/bench_trace` on " << bench::utc_now() << " ("
            << bench::cpu_model() << ", " << std::thread::hardware_concurrency() << " hardware threads, "
            << bench::cpu_flags_summary() << "). The machine is shared: figures are noisy.\n\n"
            << "## Paper 004's table: logN = 15, scale 2^40, M = 7 rounds\n\nLevel l (l+1 ciphertext primes: 60 + "
               "40-bit), k special 60-bit primes, digits of k primes (dnum = ceil((l+1)/k)); median of "
            << runs << " runs. h is the number of iterations after unrolling (paper 004 / Ishimaki-Yamana): "
               "h = 7 is one rotation per iteration, h = 1 one iteration of 127 rotations."
            << (backend::cpu::simd_available() ? "" : " This CPU has no AVX-512: only the scalar kernels ran.") << "\n"
            << t1 << "\n## Total sum of all slots, single thread, against the other libraries\n\n"
            << "Other libraries: bench/peers_trace.json (from shared/PEERS.md, same machine class, another day: "
               "the machines drift 1.3-1.8x). 'automatic' is the cost model's h at the top level.\n\n"
            << t2;
    }
    return 0;
}

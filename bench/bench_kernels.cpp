// Element-wise kernel benchmarks (backend/cpu/eltwise.hpp), single-threaded:
//  (a) every kernel in every table this CPU has (scalar, AVX2, AVX-512, AVX-512 IFMA), and the NTT
//      in each implementation, on a 60-bit, a 61-bit (just above 2^61) and a 40-bit prime: ns per
//      element;
//  (b) paper 004's experiment: the fused multiply-add acc = acc + a*b (one reduction) against a
//      multiply then an add (two kernels, two reductions), over logN = 10..15 and 1..15 limbs of
//      60-bit primes, with the input size (paper: 64*(3*N*l + l)/8 bytes) at which fused wins;
//  (c) the NTT of each implementation at the ring degrees of the presets, N = 2^12 .. 2^16, on a
//      60-bit and a 40-bit prime: ns per element (a limb of N = 2^16 is 512 KiB, beyond the
//      first-level cache: the transform's blocking, backend/cpu/ntt_avx512_stages.hpp, shows here).
// Prints the tables, and writes JSON (--json) and Markdown (--markdown) with the machine and date;
// bench/plot_kernels.py draws (b) from the JSON.
//
//   bench_kernels [--json out.json] [--markdown docs/benchmarks/kernels.md] [--min-seconds 0.05]
//                 [--max-logn 15] [--max-limbs 15]
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "oboro/backend/cpu/eltwise.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/backend/key_switch_key.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/util/buffer.hpp"

using namespace oboro;
using backend::cpu::EltwiseKernels;
using backend::cpu::Isa;

namespace {

struct KernelRow {
    std::string isa, kernel;
    double ns_per_element = 0;
};

struct NttRow {
    std::string isa;
    int bits = 0, logn = 0;
    double forward_ns = 0, inverse_ns = 0;  // per element
};

struct FmaRow {
    std::string isa;
    int logn = 0, limbs = 0;
    double bytes = 0, fused_us = 0, separate_us = 0;
};

// The tables this CPU has. The IFMA table differs from the AVX-512 one only on primes below 2^50,
// so the fused multiply-add experiment (60-bit primes) leaves it out.
std::vector<std::pair<Isa, const EltwiseKernels*>> isa_tables(bool with_ifma = true) {
    std::vector<std::pair<Isa, const EltwiseKernels*>> out;
    for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512, Isa::avx512ifma})
        if (isa != Isa::avx512ifma || with_ifma)
            if (const EltwiseKernels* k = backend::cpu::eltwise_kernels(isa)) out.push_back({isa, k});
    return out;
}
std::vector<const EltwiseKernels*> tables(bool with_ifma = true) {
    std::vector<const EltwiseKernels*> out;
    for (const auto& [isa, k] : isa_tables(with_ifma)) out.push_back(k);
    return out;
}

void fill(uint64_t* p, size_t n, uint64_t q, std::mt19937_64& gen) {
    for (size_t i = 0; i < n; ++i) p[i] = gen() % q;
}

// Median time of one call of f, in microseconds; short calls are repeated inside each sample so
// that a sample lasts long enough for the clock.
double time_us(const std::function<void()>& f, size_t work, double min_seconds) {
    const int reps = int(std::max<size_t>(1, (size_t(1) << 17) / std::max<size_t>(work, 1)));
    const bench::Timing t = bench::measure(
        [&] {
            for (int r = 0; r < reps; ++r) f();
        },
        5, min_seconds);
    return t.median_us / reps;
}

// On one prime of `bits` bits: the NTT prime just below 2^bits, or (above) the one just above it,
// as the 61-bit chains take alternately (math::generate_ntt_primes_near; B1's CoeffsToSlots and
// EvalMod primes), where the 30-bit halves sums of dot2 take fewer terms.
std::vector<KernelRow> run_kernels(double min_seconds, int bits, bool above = false) {
    const size_t n = 8192, terms = 3;  // three arrays of 64 KiB: in L2
    const uint64_t q = above ? math::generate_ntt_primes_near(bits, n, 2)[1] : math::generate_ntt_primes(bits, n, 1)[0];
    const math::NttTables ntt(q, uint32_t(n));
    const std::string suffix = " [" + std::to_string(bits) + "-bit]";
    const math::Modulus m(q);
    const uint64_t w = q / 3, ws = math::shoup_precompute(w, q);
    std::mt19937_64 gen(1);
    AlignedBuffer<uint64_t> x(n), y(n), z(n), d0(n), d1(n), d2(n), dx(terms * n), dy0(terms * n), dy1(terms * n);
    for (auto* b : {&x, &y, &z, &dx, &dy0, &dy1}) fill(b->data(), b->size(), q, gen);
    backend::cpu::DotTerm dot_terms[terms];
    const uint64_t weights[terms] = {w, q - 1, q / 7};
    const double inverses[terms] = {1.0 / double(q), 1.0 / double(q), 1.0 / double(q)};
    std::vector<uint8_t> counts(n);
    std::vector<uint8_t> packed_key(n * backend::key_word_bytes(q));
    backend::pack_key_words(x.data(), n, backend::key_word_bytes(q), packed_key.data());
    for (auto& c : counts) c = uint8_t(gen() % (terms + 1));
    for (size_t j = 0; j < terms; ++j) {
        dot_terms[j] = {dx.data() + j * n, dy0.data() + j * n, dy1.data() + j * n};
    }
    std::vector<KernelRow> rows;
    for (const auto& [isa, k] : isa_tables()) {
        auto add = [&](const char* label, const std::function<void()>& f) {
            const std::string name = label + suffix;
            rows.push_back({k->name, name, 1000.0 * time_us(f, n, min_seconds) / double(n)});
            std::printf("%-12s %-36s %8.3f ns/element\n", k->name, name.c_str(), rows.back().ns_per_element);
            std::fflush(stdout);
        };
        add("add", [&] { k->add(d0.data(), x.data(), y.data(), q, n); });
        add("sub", [&] { k->sub(d0.data(), x.data(), y.data(), q, n); });
        add("negate", [&] { k->negate(d0.data(), x.data(), q, n); });
        add("add_scalar", [&] { k->add_scalar(d0.data(), x.data(), w, q, n); });
        add("mul", [&] { k->mul(d0.data(), x.data(), y.data(), m, n); });
        add("mul_add (fused)", [&] {
            std::memcpy(d0.data(), z.data(), n * sizeof(uint64_t));
            k->mul_add(d0.data(), x.data(), y.data(), m, n);
        });
        add("mul_scalar (Shoup)", [&] { k->mul_scalar(d0.data(), x.data(), w, ws, q, n); });
        add("sub_mul_scalar (Shoup)", [&] { k->sub_mul_scalar(d0.data(), x.data(), y.data(), w, ws, q, n); });
        add("mul_scalar_add (Shoup)", [&] { k->mul_scalar_add(d0.data(), x.data(), w, ws, q, n); });
        add("tensor (3 products)", [&] {
            k->tensor(d0.data(), d1.data(), d2.data(), x.data(), y.data(), z.data(), x.data(), m, n);
        });
        add("dot2 (3 terms, 2 outputs)", [&] { k->dot2(d0.data(), d1.data(), dot_terms, terms, false, m, n); });
        // fast base conversion from three source limbs into this prime: the sum with the overflow
        // counts subtracted, and the counts themselves (centred conversion)
        add("weighted_sum (3 terms, counts)", [&] {
            k->weighted_sum(d0.data(), dx.data(), n, terms, q, weights, counts.data(), w, ws, m, n);
        });
        add("overflow_counts (3 terms)", [&] { k->overflow_counts(counts.data(), dx.data(), n, terms, inverses, n); });
        // a switching key's limb stored in the bytes its prime needs (8 for the 60-bit prime, 5 or
        // 6 for the 40-bit one), unpacked as the key inner product does
        add("unpack_key_words", [&] {
            k->unpack_key_words(d0.data(), packed_key.data(), n, backend::key_word_bytes(q), 0, n);
        });
        const auto [forward, inverse] = backend::cpu::ntt_functions(isa, q);  // as the library dispatches
        if (forward) {
            add("NTT forward", [&] { forward(d0.data(), ntt); });  // canonical in, canonical out: repeatable
            add("NTT inverse", [&] { inverse(d0.data(), ntt); });
        }
    }
    return rows;
}

std::vector<NttRow> run_ntt(double min_seconds) {
    std::vector<NttRow> rows;
    for (int bits : {60, 40})
        for (int logn = 12; logn <= 16; ++logn) {
            const size_t n = size_t(1) << logn;
            const uint64_t q = math::generate_ntt_primes(bits, n, 1)[0];
            const math::NttTables ntt(q, uint32_t(n));
            std::mt19937_64 gen(3);
            AlignedBuffer<uint64_t> d(n);
            fill(d.data(), n, q, gen);
            for (const auto& [isa, k] : isa_tables()) {
                const auto [forward, inverse] = backend::cpu::ntt_functions(isa, q);
                if (!forward) continue;
                NttRow r{k->name, bits, logn};
                r.forward_ns = 1000.0 * time_us([&] { forward(d.data(), ntt); }, n, min_seconds) / double(n);
                r.inverse_ns = 1000.0 * time_us([&] { inverse(d.data(), ntt); }, n, min_seconds) / double(n);
                std::printf("%-12s NTT [%d-bit] logN=%2d  forward %7.3f  inverse %7.3f ns/element\n", k->name, bits, logn,
                            r.forward_ns, r.inverse_ns);
                std::fflush(stdout);
                rows.push_back(r);
            }
        }
    return rows;
}

std::vector<FmaRow> run_fma(double min_seconds, int max_logn, int max_limbs) {
    std::vector<FmaRow> rows;
    for (int logn = 10; logn <= max_logn; ++logn) {
        const size_t n = size_t(1) << logn;
        std::vector<math::Modulus> mods;
        for (uint64_t q : math::generate_ntt_primes(60, n, max_limbs)) mods.emplace_back(q);
        for (int limbs = 1; limbs <= max_limbs; ++limbs) {
            const size_t total = n * size_t(limbs);
            std::mt19937_64 gen(uint64_t(logn * 100 + limbs));
            AlignedBuffer<uint64_t> a(total), b(total), c(total), tmp(total);
            for (int i = 0; i < limbs; ++i) {
                fill(a.data() + i * n, n, mods[i].value, gen);
                fill(b.data() + i * n, n, mods[i].value, gen);
                fill(c.data() + i * n, n, mods[i].value, gen);
            }
            for (const EltwiseKernels* k : tables(false)) {
                // c stays canonical under both forms, so repeating them in place is a fair loop
                const double fused = time_us(
                    [&] {
                        for (int i = 0; i < limbs; ++i) k->mul_add(c.data() + i * n, a.data() + i * n, b.data() + i * n, mods[i], n);
                    },
                    total, min_seconds);
                const double separate = time_us(
                    [&] {
                        for (int i = 0; i < limbs; ++i) {
                            k->mul(tmp.data() + i * n, a.data() + i * n, b.data() + i * n, mods[i], n);
                            k->add(c.data() + i * n, c.data() + i * n, tmp.data() + i * n, mods[i].value, n);
                        }
                    },
                    total, min_seconds);
                const double bytes = 64.0 * double(3 * total + size_t(limbs)) / 8.0;
                rows.push_back({k->name, logn, limbs, bytes, fused, separate});
                std::printf("%-8s logN=%2d limbs=%2d %10.0f bytes  fused %9.2f us  separate %9.2f us  x%.2f\n", k->name,
                            logn, limbs, bytes, fused, separate, separate / fused);
                std::fflush(stdout);
            }
        }
    }
    return rows;
}

// The input size from which the fused form is faster at every larger size, judged on the median
// ratio of each point and its six nearest sizes (one noisy sample on a shared machine must not
// move the crossover); negative when it never settles there.
double crossover_bytes(std::vector<FmaRow> rows) {
    std::sort(rows.begin(), rows.end(), [](const FmaRow& a, const FmaRow& b) { return a.bytes < b.bytes; });
    const size_t half = 3;
    std::vector<double> smooth(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        const size_t lo = i < half ? 0 : i - half, hi = std::min(rows.size(), i + half + 1);
        std::vector<double> w;
        for (size_t j = lo; j < hi; ++j) w.push_back(rows[j].separate_us / rows[j].fused_us);
        std::sort(w.begin(), w.end());
        smooth[i] = w[w.size() / 2];
    }
    double from = -1;
    for (size_t i = rows.size(); i-- > 0;) {
        if (smooth[i] > 1.0) from = rows[i].bytes;
        else break;
    }
    return from;
}

std::vector<FmaRow> of_isa(const std::vector<FmaRow>& rows, const std::string& isa) {
    std::vector<FmaRow> out;
    for (const auto& r : rows)
        if (r.isa == isa) out.push_back(r);
    return out;
}

void write_json(const std::string& path, const std::vector<KernelRow>& k, const std::vector<NttRow>& t,
                const std::vector<FmaRow>& f) {
    std::ofstream out = bench::output_file(path);
    out << "{\n  \"benchmark\": \"bench_kernels\",\n  \"machine\": " << bench::machine_json()
        << ",\n  \"threads\": 1,\n  \"kernels\": {\"n\": 8192, \"modulus_bits\": [60, 61, 40], \"unit\": \"ns per element\", \"results\": [\n";
    for (size_t i = 0; i < k.size(); ++i)
        out << "    {\"isa\": \"" << k[i].isa << "\", \"kernel\": \"" << k[i].kernel << "\", \"ns_per_element\": "
            << k[i].ns_per_element << "}" << (i + 1 < k.size() ? "," : "") << "\n";
    out << "  ]},\n  \"ntt\": {\"unit\": \"ns per element\", \"results\": [\n";
    for (size_t i = 0; i < t.size(); ++i)
        out << "    {\"isa\": \"" << t[i].isa << "\", \"modulus_bits\": " << t[i].bits << ", \"logn\": " << t[i].logn
            << ", \"forward_ns\": " << t[i].forward_ns << ", \"inverse_ns\": " << t[i].inverse_ns << "}"
            << (i + 1 < t.size() ? "," : "") << "\n";
    out << "  ]},\n  \"fma\": {\"modulus_bits\": 60, \"unit\": \"microseconds\", \"results\": [\n";
    for (size_t i = 0; i < f.size(); ++i)
        out << "    {\"isa\": \"" << f[i].isa << "\", \"logn\": " << f[i].logn << ", \"limbs\": " << f[i].limbs
            << ", \"input_bytes\": " << f[i].bytes << ", \"fused_us\": " << f[i].fused_us
            << ", \"separate_us\": " << f[i].separate_us << "}" << (i + 1 < f.size() ? "," : "") << "\n";
    out << "  ], \"crossover_bytes\": {";
    bool first = true;
    for (const EltwiseKernels* t : tables(false)) {
        out << (first ? "" : ", ") << "\"" << t->name << "\": " << crossover_bytes(of_isa(f, t->name));
        first = false;
    }
    out << "}}\n}\n";
}

using bench::fmt;

void write_markdown(const std::string& path, const std::vector<KernelRow>& k, const std::vector<NttRow>& t,
                    const std::vector<FmaRow>& f) {
    std::ofstream out = bench::output_file(path);
    const auto names = tables();
    out << "# Element-wise kernel benchmarks\n\n"
        << "Generated by `build/bench/bench_kernels --markdown " << path << "` (do not edit by hand).\n\n"
        << "Machine: " << bench::cpu_model() << " (" << bench::cpu_flags_summary() << "), "
        << std::thread::hardware_concurrency() << " hardware threads, one thread used; " << bench::utc_now()
        << ". Medians; the machine is shared, so figures are noisy.\n\n"
        << "## (a) Kernels, ns per element (N = 8192, one prime of 60, 61 or 40 bits)\n\n| kernel |";
    for (auto* t : names) out << " " << t->name << " |";
    for (size_t i = 1; i < names.size(); ++i) out << " " << names[i]->name << " speed-up |";
    out << "\n|---|";
    for (size_t i = 0; i < 2 * names.size() - 1; ++i) out << "---:|";
    out << "\n";
    std::vector<std::string> kernels;
    for (const auto& r : k)
        if (std::find(kernels.begin(), kernels.end(), r.kernel) == kernels.end()) kernels.push_back(r.kernel);
    auto value = [&](const std::string& isa, const std::string& kn) {
        for (const auto& r : k)
            if (r.isa == isa && r.kernel == kn) return r.ns_per_element;
        return 0.0;
    };
    for (const auto& kn : kernels) {
        out << "| " << kn << " |";
        for (auto* t : names) {
            const double v = value(t->name, kn);
            out << " " << (v > 0 ? fmt("%.3f", v) : std::string("n/a")) << " |";
        }
        for (size_t i = 1; i < names.size(); ++i) {
            const double v = value(names[i]->name, kn);
            out << " " << (v > 0 ? fmt("%.2fx", value("scalar", kn) / v) : std::string("n/a")) << " |";
        }
        out << "\n";
    }
    out << "\n`dot2` is the key-switching inner product (two outputs sharing their left operand, 3 terms); "
           "`weighted_sum` and `overflow_counts` are the two halves of the centred fast base conversion (3 source "
           "limbs; the counts in double precision, with AVX-512DQ on the AVX-512 tables); `unpack_key_words` reads a "
           "switching key's limb stored in the bytes its prime needs (8 for the 60- and 61-bit primes: a copy; 5 or 6 for "
           "the 40-bit one). The 61-bit prime is the NTT prime just above 2^61 that 61-bit chains such as B1's "
           "take beside those below it. Every row is per "
           "element. The AVX2 table, which runs only on CPUs without AVX-512, has its own dot2 of 30-bit halves "
           "(eltwise_avx2.cpp says where each form measured faster), and multiplies residues of the primes below 2^50 "
           "in double precision with FMA (`mul`, `mul_add`, `tensor`: four products there). `avx512+ifma` is the AVX-512 table with IFMA products for primes "
           "below 2^50: on the 60- and 61-bit primes it runs the AVX-512 kernels. The NTT rows time one forward or inverse "
           "transform.\n\n";
    out << "## (c) The NTT by ring degree, ns per element (forward / inverse)\n\n"
        << "One transform of one limb, as the library dispatches it for the prime (`avx512+ifma`: IFMA products "
           "below 2^50 only). A limb of N = 2^16 is 512 KiB: the AVX-512 transforms run the stages whose butterfly "
           "groups fit in 2048 words block by block and the others two at a time "
           "(backend/cpu/ntt_avx512_stages.hpp).\n\n| prime | implementation |";
    for (int logn = 12; logn <= 16; ++logn) out << " N = 2^" << logn << " |";
    out << "\n|---|---|";
    for (int logn = 12; logn <= 16; ++logn) out << "---:|";
    out << "\n";
    for (int bits : {60, 40})
        for (auto* table : names) {
            bool any = false;
            std::string line = "| " + std::to_string(bits) + "-bit | " + table->name + " |";
            for (int logn = 12; logn <= 16; ++logn) {
                std::string cell = " n/a |";
                for (const auto& r : t)
                    if (r.isa == table->name && r.bits == bits && r.logn == logn) {
                        cell = " " + fmt("%.2f", r.forward_ns) + " / " + fmt("%.2f", r.inverse_ns) + " |";
                        any = true;
                    }
                line += cell;
            }
            if (any) out << line << "\n";
        }
    out << "\n";
    out << "## (b) Fused multiply-add vs multiply then add (paper 004, section 5.1)\n\n"
        << "`acc = acc + a*b mod q` over `l` limbs of `N` coefficients (60-bit primes): one kernel with one "
           "reduction (fused) against `mul` into a temporary and `add` (separate). Input size as in the paper: "
           "64*(3*N*l + l)/8 bytes. Crossover: the size from which fused is faster at every larger size (on the running median of 7 neighbouring sizes).\n\n"
        << "| ISA | crossover (bytes) | fused faster in | median separate/fused |\n|---|---:|---:|---:|\n";
    for (auto* t : names) {
        const auto rows = of_isa(f, t->name);
        if (rows.empty()) continue;
        int wins = 0;
        std::vector<double> ratio;
        for (const auto& r : rows) {
            wins += r.fused_us < r.separate_us;
            ratio.push_back(r.separate_us / r.fused_us);
        }
        std::sort(ratio.begin(), ratio.end());
        const double c = crossover_bytes(rows);
        out << "| " << t->name << " | " << (c < 0 ? std::string("none") : fmt("%.0f", c)) << " | " << wins << " of "
            << rows.size() << " | " << fmt("%.2fx", ratio[ratio.size() / 2]) << " |\n";
    }
    for (auto* t : names) {
        const auto rows = of_isa(f, t->name);
        if (rows.empty()) continue;
        out << "\n### " << t->name << ": separate / fused time (above 1: fused is faster)\n\n| logN \\ limbs |";
        int max_limbs = 0;
        for (const auto& r : rows) max_limbs = std::max(max_limbs, r.limbs);
        for (int l = 1; l <= max_limbs; ++l) out << " " << l << " |";
        out << "\n|---|";
        for (int l = 1; l <= max_limbs; ++l) out << "---:|";
        int logn = -1;
        for (const auto& r : rows) {
            if (r.logn != logn) {
                logn = r.logn;
                out << "\n| " << logn << " |";
            }
            out << " " << fmt("%.2f", r.separate_us / r.fused_us) << " |";
        }
        out << "\n";
    }
    out << "\nPlot: `bench/plot_kernels.py` draws `kernels_fma.png` from the JSON (needs matplotlib).\n";
}

}  // namespace

int main(int argc, char** argv) {
    std::string json, markdown;
    double min_seconds = 0.05;
    int max_logn = 15, max_limbs = 15;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return bench::option_value(argc, argv, i); };
        if (a == "--json") json = next();
        else if (a == "--markdown") markdown = next();
        else if (a == "--min-seconds") min_seconds = std::stod(next());
        else if (a == "--max-logn") max_logn = std::stoi(next());
        else if (a == "--max-limbs") max_limbs = std::stoi(next());
        else {
            std::fprintf(stderr,
                         "usage: bench_kernels [--json FILE] [--markdown FILE] [--min-seconds S] [--max-logn 15] "
                         "[--max-limbs 15]\n");
            return a == "--help" || a == "-h" ? 0 : 2;
        }
    }
    bench::prepare_outputs({json, markdown});
    auto k = run_kernels(min_seconds * 4, 60);
    for (const auto& r : run_kernels(min_seconds * 4, 61, true)) k.push_back(r);
    for (const auto& r : run_kernels(min_seconds * 4, 40)) k.push_back(r);
    const auto t = run_ntt(min_seconds * 4);
    const auto f = run_fma(min_seconds, max_logn, max_limbs);
    for (auto* t : tables(false)) {
        const double c = crossover_bytes(of_isa(f, t->name));
        std::printf("%-8s fused multiply-add faster from %s\n", t->name,
                    c < 0 ? "(never settles)" : (fmt("%.0f", c) + " bytes on").c_str());
    }
    if (!json.empty()) write_json(json, k, t, f);
    if (!markdown.empty()) write_markdown(markdown, k, t, f);
    return 0;
}

// GPU benchmark: paper 001's rescale table (N = 4096/8192/16384/32768 with L = 2/4/8/15 limbs),
// oboro's fused GPU rescale (backend/cuda/ntt_kernels.hpp: four launches per batch) against
// oboro's CPU rescale (ckks::rescale_poly, the Evaluator's), next to the paper's SEAL-CPU and
// naive-GPU figures. Built only when the CUDA runtime can be linked (bench/CMakeLists.txt).
//
// Without a GPU it prints "no CUDA GPU found" and exits 0 (with --cpu-only it still measures the
// CPU column). Columns, per ciphertext (2 polynomials) rescaled from L limbs to L-1:
//   cpu_us        ckks::rescale_poly on both polynomials, this machine's threads (median)
//   gpu_sync_us   one launch_rescale of the ciphertext + cudaDeviceSynchronize (median): latency
//   gpu_us        100 back-to-back launch_rescale of the ciphertext, one sync, divided by 100:
//                 device time per rescale when the queue is kept busy (DESIGN.md: no per-op sync)
//   gpu_batch_us  one launch_rescale of a batch of `--batch` ciphertexts, per ciphertext
// Usage: bench_gpu [--quick] [--cpu-only] [--batch D] [--json F]
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "oboro/backend/cuda/elementwise.hpp"
#include "oboro/backend/cuda/ntt.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/ckks/keyswitch.hpp"
#include "oboro/math/random.hpp"
#include "oboro/util/parallel.hpp"

namespace {

using namespace oboro;
namespace kernels = oboro::cuda::kernels;

struct Row {
    int log_n, limbs;
    double paper_seal_cpu_us, paper_naive_gpu_us;  // SEEDS.md 001 (Xeon E5-2690 v4; V100)
    double cpu_us = -1, gpu_sync_us = -1, gpu_us = -1, gpu_batch_us = -1;
};

// A context with `limbs` ciphertext primes (q_0: 50 bits, the rest 40) and one special prime.
// Security is not checked (SecurityLevel::none): N = 4096 with 3 primes exceeds the 128-bit bound,
// and the paper's table uses these sizes; rescale's cost does not depend on the prime sizes.
ckks::ContextPtr make_context(int log_n, int limbs) {
    ckks::Parameters p;
    p.log_n = log_n;
    p.q_bits = std::vector<int>(size_t(limbs), 40);
    p.q_bits[0] = 50;
    p.p_bits = {60};
    p.security = ckks::SecurityLevel::none;
    return ckks::Context::create(p);
}

std::vector<uint64_t> random_polys(const ckks::Context& ctx, int limbs, size_t polys) {
    const size_t n = ctx.n();
    math::Seed seed{};
    seed[0] = 1;
    math::Prng prng(seed);
    std::vector<uint64_t> v(polys * size_t(limbs) * n);
    for (size_t k = 0; k < v.size(); ++k) v[k] = prng.uniform(ctx.moduli()[(k / n) % size_t(limbs)].value);
    return v;
}

void measure_cpu(Row& row, int runs) {
    const auto ctx = make_context(row.log_n, row.limbs);
    const int level = row.limbs - 1;
    auto ct = random_polys(*ctx, row.limbs, 2);
    const size_t poly = size_t(row.limbs) * ctx->n();
    // Rescaling the same buffer again and again costs the same every time (the work does not
    // depend on the values, and the values stay valid residues), so no copy is timed.
    row.cpu_us = bench::measure([&] {
                     ckks::rescale_poly(*ctx, level, ct.data());
                     ckks::rescale_poly(*ctx, level, ct.data() + poly);
                 }, runs).median_us;
}

void measure_gpu(Row& row, int runs, uint32_t batch) {
    const auto ctx = make_context(row.log_n, row.limbs);
    const uint32_t level = uint32_t(row.limbs - 1);
    const uint64_t n = ctx->n();
    cuda::DeviceNttTables tables(ctx->ntt_tables(), size_t(row.limbs));
    std::vector<uint64_t> moduli(size_t(row.limbs));
    for (size_t j = 0; j < moduli.size(); ++j) moduli[j] = ctx->moduli()[j].value;
    cuda::DeviceRescaleLimbs limbs(moduli.data(), level, ctx->level(int(level)).inv_last.data());

    const auto host = random_polys(*ctx, row.limbs, 2 * size_t(batch));
    cuda::DeviceBuffer in(host.size() * 8), out(2 * size_t(batch) * level * n * 8),
        scratch(kernels::rescale_scratch_words(2 * batch, level, n) * 8);
    in.upload(host.data(), host.size() * 8);

    kernels::RescaleArgs args;
    args.tables = tables.views();
    args.limbs = limbs.get();
    args.last_prime = moduli[level];
    args.level = level;
    args.plan = kernels::make_ntt_plan(tables.log_n());
    args.in = kernels::RowSet{in.as<uint64_t>(), (level + 1) * n};
    args.out = kernels::RowSet{out.as<uint64_t>(), level * n};
    args.scratch = scratch.as<uint64_t>();

    args.polys = 2;  // one ciphertext
    row.gpu_sync_us = bench::measure([&] {
                          cuda::launch_rescale(args);
                          cuda::synchronize();
                      }, runs).median_us;
    const int chain = 100;
    row.gpu_us = bench::measure([&] {
                     for (int i = 0; i < chain; ++i) cuda::launch_rescale(args);
                     cuda::synchronize();
                 }, runs).median_us / chain;
    args.polys = 2 * batch;
    row.gpu_batch_us = bench::measure([&] {
                           cuda::launch_rescale(args);
                           cuda::synchronize();
                       }, runs).median_us / batch;
}

std::string cell(double us) { return us < 0 ? "-" : std::to_string(int64_t(us + 0.5)); }
std::string cell1(double us) {
    if (us < 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", us);
    return buf;
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false, cpu_only = false;
    uint32_t batch = 16;
    int runs = 11;
    std::string json_path;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") quick = true;
        else if (a == "--cpu-only") cpu_only = true;
        else if (a == "--batch") batch = uint32_t(std::stoul(bench::option_value(argc, argv, i)));
        else if (a == "--runs") runs = std::stoi(bench::option_value(argc, argv, i));
        else if (a == "--json") json_path = bench::option_value(argc, argv, i);
        else {
            std::fprintf(stderr, "usage: %s [--quick] [--cpu-only] [--batch D] [--runs N] [--json F]\n", argv[0]);
            return 2;
        }
    }
    if (batch == 0) batch = 1;

    const bool gpu = cuda::device_count() > 0;
    const std::string summary = cuda::device_summary();
    if (!gpu) {
        std::printf("no CUDA GPU found (%s): the GPU benchmark did not run%s\n", summary.c_str(),
                    cpu_only ? "; --cpu-only: CPU column only" : "");
        if (!cpu_only) return 0;
    } else {
        std::printf("CUDA: %s\n", summary.c_str());
    }

    std::vector<Row> rows = {{12, 2, 800, 17733}, {13, 4, 2520, 57447}, {14, 8, 11770, 231750}, {15, 15, 49137, 877117}};
    if (quick) rows.resize(1), runs = 3;
    for (Row& r : rows) {
        measure_cpu(r, runs);
        if (gpu) measure_gpu(r, runs, batch);
    }

    std::printf("\n# Rescale of one ciphertext (2 polynomials) from L limbs to L-1, us (median of %d runs)\n", runs);
    std::printf("# CPU: %s, %zu threads; paper 001: SEAL on a Xeon E5-2690 v4, naive GPU port on a V100\n\n",
                bench::cpu_model().c_str(), size_t(num_threads()));
    std::printf("| N | L | oboro CPU | oboro GPU sync | oboro GPU queued | oboro GPU batch of %u (per ct) | paper SEAL CPU | paper naive GPU |\n",
                batch);
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const Row& r : rows)
        std::printf("| %d | %d | %s | %s | %s | %s | %s | %s |\n", 1 << r.log_n, r.limbs, cell(r.cpu_us).c_str(),
                    cell1(r.gpu_sync_us).c_str(), cell1(r.gpu_us).c_str(), cell1(r.gpu_batch_us).c_str(),
                    cell(r.paper_seal_cpu_us).c_str(), cell(r.paper_naive_gpu_us).c_str());

    if (!json_path.empty()) {
        std::ofstream out(json_path);
        auto num = [](double v) { return v < 0 ? std::string("null") : cell1(v); };
        out << "{\n  \"benchmark\": \"bench_gpu\",\n  \"machine\": " << bench::machine_json() << ",\n  \"gpu\": \""
            << bench::json_escape(gpu ? summary : "none: " + summary) << "\",\n  \"runs\": " << runs
            << ",\n  \"batch\": " << batch << ",\n  \"unit\": \"us per ciphertext, median\",\n  \"rescale\": [\n";
        for (size_t i = 0; i < rows.size(); ++i) {
            const Row& r = rows[i];
            out << "    {\"n\": " << (1 << r.log_n) << ", \"limbs\": " << r.limbs << ", \"cpu_us\": " << num(r.cpu_us)
                << ", \"gpu_sync_us\": " << num(r.gpu_sync_us) << ", \"gpu_us\": " << num(r.gpu_us)
                << ", \"gpu_batch_us\": " << num(r.gpu_batch_us) << ", \"paper_seal_cpu_us\": " << r.paper_seal_cpu_us
                << ", \"paper_naive_gpu_us\": " << r.paper_naive_gpu_us << "}" << (i + 1 < rows.size() ? "," : "")
                << "\n";
        }
        out << "  ]\n}\n";
    }
    return 0;
}

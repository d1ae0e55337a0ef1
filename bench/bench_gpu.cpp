// GPU benchmark: paper 001's rescale table (N = 4096/8192/16384/32768 with L = 2/4/8/15 limbs),
// oboro's fused GPU rescale (backend/cuda/ntt_kernels.hpp: four launches per batch) against
// oboro's CPU rescale (ckks::rescale_poly, the Evaluator's), next to the paper's SEAL-CPU and
// naive-GPU figures. Built only when the CUDA runtime can be linked (bench/CMakeLists.txt).
//
// Without a GPU it prints "no CUDA GPU found" and exits 0 (with --cpu-only it still measures the
// CPU column). Columns, per ciphertext (2 polynomials) rescaled from L limbs to L-1:
//   cpu_us        ckks::rescale_poly on both polynomials, this machine's threads (median)
//   gpu_sync_us   one launch_divide_and_drop (the rescale) of the ciphertext + a sync (median):
//                 latency
//   gpu_us        100 back-to-back rescales of the ciphertext, one sync, divided by 100:
//                 device time per rescale when the queue is kept busy (DESIGN.md: no per-op sync)
//   gpu_batch_us  one rescale launch sequence for a batch of `--batch` ciphertexts, per ciphertext
// With a GPU it also prints:
//  - paper 000's table in spirit: S1, d = 10/100/1000 ciphertexts, add and multiply (tensor +
//    relinearize + rescale, fused), per ciphertext: (a) a loop of single-ciphertext launch sequences
//    with a sync after each, (b) the same loop with one sync at the end, (c) one batched launch
//    sequence for all d; then the same through the public API (Evaluator on the CUDA queue,
//    batches resident on the device: add, multiply_relin_rescale, and the hoisted rotate_many and
//    rotate_sum of 7 rotations (one unrolled trace iteration, paper 004), d calls on batches of one
//    with a synchronize() each, vs one call on the batch of d);
//  - per-op latency at S2 and S4 for one ciphertext at the top level (launch + sync, and queued:
//    100 launch sequences, one sync): the kernels, relinearize, rotate and multiply + relinearize +
//    rescale (backend/cuda/keyswitch.hpp);
//  - batched encoding into GPU memory at S2 and S4 (d = 100): encoded on the CPU and uploaded vs
//    encode_batch on the CUDA queue;
//  - with --bootstrap B1[,...]: the bootstrap (algorithms/bootstrap.hpp, the same code as the CPU's)
//    of a batch of d ciphertexts resident on the GPU, full slots, d = 1 and each D of --bootstrap-batch D,... (default 8):
//    the first call (keys, DFT diagonals and constants uploaded) and the median of the later ones,
//    per batch and per ciphertext, the worst and mean precision in bits over every slot of every
//    element, and the CPU's bootstrap of one ciphertext at this machine's threads in the same run;
//    with --bootstrap-profile also one profiled call per batch size: the time of each kind of
//    operation, each between two synchronisations (algorithms::OpProfile).
//  - with --ntt-plans: the NTT, the inverse NTT and the rescale at N = 2^14 and 2^16 under every
//    launch plan of a sweep (split, words per tile, threads per block) beside make_ntt_plan's
//    choice (--only-ntt-plans: that table alone; --only-bootstrap: the bootstrap's alone).
// The tables go to stdout, and with --markdown F to F (with the machine, the GPU and the date).
// Usage: bench_gpu [--quick] [--cpu-only] [--batch D] [--runs N] [--bootstrap B1] [--bootstrap-batch D]
//                  [--ntt-plans | --only-ntt-plans] [--only-bootstrap] [--bootstrap-profile] [--json F]
//                  [--markdown F]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_util.hpp"
#include "oboro/algorithms/bootstrap.hpp"
#include "oboro/backend/cuda/batch_queue.hpp"
#include "oboro/backend/cuda/elementwise.hpp"
#include "oboro/backend/cuda/keyswitch.hpp"
#include "oboro/backend/cuda/ntt.hpp"
#include "oboro/ckks/batch_encoder.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/keygen.hpp"
#include "oboro/backend/cpu/keyswitch.hpp"
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

// The first `limbs` ciphertext primes.
std::vector<uint64_t> prime_values(const ckks::Context& ctx, uint32_t limbs) {
    std::vector<uint64_t> q(limbs);
    for (uint32_t j = 0; j < limbs; ++j) q[j] = ctx.moduli()[j].value;
    return q;
}

void measure_cpu(Row& row, int runs) {
    const auto ctx = make_context(row.log_n, row.limbs);
    const int level = row.limbs - 1;
    auto ct = random_polys(*ctx, row.limbs, 2);
    const size_t poly = size_t(row.limbs) * ctx->n();
    // Rescaling the same buffer again and again costs the same every time (the work does not
    // depend on the values, and the values stay valid residues), so no copy is timed.
    row.cpu_us = bench::measure([&] {
                     backend::cpu::rescale_poly(ctx->ring(), level, ct.data());
                     backend::cpu::rescale_poly(ctx->ring(), level, ct.data() + poly);
                 }, runs).median_us;
}

// The fused rescale of up to `max_cts` ciphertexts from `limbs` limbs (make_context), on random
// residues: one launch_divide_and_drop per call.
struct DeviceRescale {
    ckks::ContextPtr ctx;
    uint32_t level;
    uint64_t n;
    cuda::DeviceNttTables tables;
    std::vector<uint64_t> moduli;
    cuda::DeviceDropLimbs limbs;
    cuda::DeviceBuffer in, out, scratch;

    DeviceRescale(int log_n, int limb_count, uint32_t max_cts)
        : ctx(make_context(log_n, limb_count)), level(uint32_t(limb_count - 1)), n(ctx->n()),
          tables(ctx->ntt_tables(), size_t(limb_count)), moduli(prime_values(*ctx, uint32_t(limb_count))),
          limbs(moduli.data(), level, moduli[level], ctx->level(int(level)).inv_last.data()),
          in(2 * size_t(max_cts) * (level + 1) * n * 8), out(2 * size_t(max_cts) * level * n * 8),
          scratch(kernels::divide_drop_scratch_words(2 * max_cts, level, n) * 8) {
        const auto host = random_polys(*ctx, limb_count, 2 * size_t(max_cts));
        in.upload(host.data(), host.size() * 8);
    }
    kernels::DivideDropArgs args(uint32_t cts, const kernels::NttPlan& plan) const {
        kernels::DivideDropArgs a;
        a.tables = tables.views();
        a.limbs = limbs.get();
        a.dropped_prime = moduli[level];
        a.dropped_table = level;
        a.kept = level;
        a.polys = 2 * cts;
        a.plan = plan;
        a.in = kernels::RowSet{in.as<uint64_t>(), (level + 1) * n};
        a.out = kernels::RowSet{out.as<uint64_t>(), level * n};
        a.scratch = scratch.as<uint64_t>();
        return a;
    }
};

void measure_gpu(Row& row, int runs, uint32_t batch) {
    const DeviceRescale r(row.log_n, row.limbs, batch);
    const auto plan = kernels::make_ntt_plan(r.tables.log_n());
    const auto one = r.args(1, plan), all = r.args(batch, plan);
    row.gpu_sync_us = bench::measure([&] {
                          cuda::launch_divide_and_drop(one);
                          cuda::synchronize();
                      }, runs).median_us;
    const int chain = 100;
    row.gpu_us = bench::measure([&] {
                     for (int i = 0; i < chain; ++i) cuda::launch_divide_and_drop(one);
                     cuda::synchronize();
                 }, runs).median_us / chain;
    row.gpu_batch_us = bench::measure([&] {
                           cuda::launch_divide_and_drop(all);
                           cuda::synchronize();
                       }, runs).median_us / batch;
}

// ---- NTT launch plans ----------------------------------------------------------------------------

// The time of a transform (or a rescale) under each launch plan (split, tile, threads per block):
// the measurements behind make_ntt_plan's choice. Queued: 20 launches, one sync, per launch.
struct PlanTiming {
    kernels::NttPlan plan;
    double us = -1;
};
struct PlanCase {
    std::string op;  // "NTT", "INTT" or "rescale"
    int log_n = 0;
    uint32_t limbs = 0, polys = 0;
    std::vector<PlanTiming> swept;  // kernels::candidate_ntt_plans
    PlanTiming chosen;              // make_ntt_plan's (tiles chosen per launch)

    // the fastest, the first of equals (the swept plans in order, then the chosen one)
    const PlanTiming& best() const {
        const PlanTiming* b = swept.empty() ? &chosen : &swept.front();
        for (const PlanTiming& t : swept)
            if (t.us < b->us) b = &t;
        return chosen.us < b->us ? chosen : *b;
    }
};

std::vector<PlanCase> ntt_plans(int runs) {
    std::vector<PlanCase> cases = {
        {"NTT", 14, 8, 2}, {"INTT", 14, 1, 2}, {"NTT", 16, 24, 2}, {"INTT", 16, 1, 2}, {"NTT", 16, 24, 6},
        {"rescale", 14, 8, 2}, {"rescale", 16, 24, 2}};
    const int chain = 20;
    for (PlanCase& c : cases) {
        std::fprintf(stderr, "[plans] %s N = 2^%d, %u x %u rows\n", c.op.c_str(), c.log_n, c.polys, c.limbs);
        // (a rescale needs a limb to drop: the transforms of one limb use a context of two)
        const DeviceRescale r(c.log_n, int(std::max(c.limbs, 2u)), c.polys / 2);
        kernels::NttArgs ntt;
        ntt.tables = r.tables.views();
        ntt.limbs = c.limbs;
        ntt.polys = c.polys;
        ntt.src = ntt.mid = ntt.dst = kernels::RowSet{r.in.as<uint64_t>(), uint64_t(c.limbs) * r.n};
        auto time = [&](const kernels::NttPlan& plan) {
            std::function<void()> f;
            if (c.op == "rescale") {
                const auto a = r.args(c.polys / 2, plan);
                f = [a] { cuda::launch_divide_and_drop(a); };
            } else {
                ntt.plan = plan;
                const bool forward = c.op == "NTT";
                f = [ntt, forward] { forward ? cuda::launch_ntt_forward(ntt) : cuda::launch_ntt_inverse(ntt); };
            }
            return PlanTiming{plan, bench::measure([&] {
                                       for (int k = 0; k < chain; ++k) f();
                                       cuda::synchronize();
                                   }, runs, 0.05).median_us / chain};
        };
        for (const kernels::NttPlan& plan : kernels::candidate_ntt_plans(uint32_t(c.log_n))) c.swept.push_back(time(plan));
        c.chosen = time(kernels::make_ntt_plan(uint32_t(c.log_n)));
    }
    return cases;
}

// ---- paper 000 (batched vs looped), kernel level ------------------------------------------------

struct BatchRow {
    std::string op;
    uint32_t d = 0;
    double looped_sync_us = -1, looped_us = -1, batched_us = -1;  // per ciphertext
    double bytes = 0;  // the least memory traffic of the op per ciphertext (0: not modelled)
};

// Device state of one context level: tables, moduli (plain and Barrett), rescale constants.
struct DeviceLevel {
    uint32_t level, limbs;
    uint64_t n;
    cuda::DeviceNttTables tables;
    cuda::DeviceBuffer moduli, barrett;
    cuda::DeviceDropLimbs rescale;
    uint64_t last_prime;

    DeviceLevel(const ckks::Context& ctx, uint32_t lvl)
        : level(lvl), limbs(lvl + 1), n(ctx.n()), tables(ctx.ntt_tables(), lvl + 1), moduli((lvl + 1) * 8),
          barrett((lvl + 1) * sizeof(math::Barrett<uint64_t>)),
          rescale(prime_values(ctx, lvl + 1).data(), lvl, ctx.moduli()[lvl].value, ctx.level(int(lvl)).inv_last.data()),
          last_prime(ctx.moduli()[lvl].value) {
        const auto q = prime_values(ctx, limbs);
        moduli.upload(q.data(), limbs * 8);
        std::vector<math::Barrett<uint64_t>> br;
        for (uint64_t m : q) br.emplace_back(m);
        barrett.upload(br.data(), br.size() * sizeof(br[0]));
    }
    uint64_t poly() const { return uint64_t(limbs) * n; }

    // out = a + b over `cts` ciphertexts of size 2
    void add(uint64_t* out, const uint64_t* a, const uint64_t* b, uint32_t cts) const {
        kernels::ModOpArgs<uint64_t> args;
        args.out = out;
        args.a = a;
        args.b = b;
        args.moduli = moduli.as<const uint64_t>();
        args.n = uint32_t(n);
        args.rows = 2 * cts * limbs;
        args.limbs = limbs;
        cuda::launch_mod_op(kernels::ModOp::add, args);
    }
    // d = a (x) b: `cts` size-3 ciphertexts at d (stride 3 polys)
    void tensor(uint64_t* d, const uint64_t* a, const uint64_t* b, uint32_t cts) const {
        kernels::TensorArgs<uint64_t> args;
        args.out = d;
        args.out_stride = 3 * poly();
        args.a = a;
        args.a_stride = 2 * poly();
        args.b = b;
        args.b_stride = 2 * poly();
        args.moduli = barrett.as<const math::Barrett<uint64_t>>();
        args.n = uint32_t(n);
        args.limbs = limbs;
        args.count = cts;
        cuda::launch_tensor(args);
    }
    // `polys` polynomials at in (limbs each) rescaled into out (level limbs each)
    void rescale_polys(uint64_t* out, uint64_t* in, uint32_t polys, uint64_t* scratch) const {
        kernels::DivideDropArgs args;
        args.tables = tables.views();
        args.limbs = rescale.get();
        args.dropped_prime = last_prime;
        args.dropped_table = level;
        args.kept = level;
        args.polys = polys;
        args.plan = kernels::make_ntt_plan(tables.log_n());
        args.in = kernels::RowSet{in, poly()};
        args.out = kernels::RowSet{out, uint64_t(level) * n};
        args.scratch = scratch;
        cuda::launch_divide_and_drop(args);
    }
};

// Key switching of up to `max_count` ciphertexts at one level: the level's constants, a key with
// random entries (the timing does not depend on them) and the scratch.
struct DeviceKeySwitch {
    cuda::DeviceKeySwitchLevel level;
    cuda::DeviceBuffer key, key_ptrs, scratch;
    uint64_t qp_limbs;

    DeviceKeySwitch(const ckks::Context& ctx, int lvl, uint32_t max_count)
        : level(ctx.ring(), lvl), scratch(kernels::key_switch_scratch(level.get(), max_count, true).total() * 8),
          qp_limbs(ctx.q_count() + ctx.p_count()) {
        const size_t digits = ctx.level(ctx.max_level()).digits.size();
        std::vector<uint64_t> k(2 * digits * qp_limbs * ctx.n());
        math::Seed seed{};
        math::Prng prng(seed);
        for (size_t r = 0; r < 2 * digits * qp_limbs; ++r) {
            const size_t i = r % qp_limbs;
            const uint64_t q = i < ctx.q_count() ? ctx.moduli()[i].value : ctx.p_moduli()[i - ctx.q_count()].value;
            for (size_t c = 0; c < ctx.n(); ++c) k[r * ctx.n() + c] = prng.uniform(q);
        }
        key = cuda::DeviceBuffer(k.size() * 8);
        key.upload(k.data(), k.size() * 8);
        const std::vector<const uint64_t*> ptrs(max_count, key.as<const uint64_t>());
        key_ptrs = cuda::DeviceBuffer(max_count * sizeof(void*));
        key_ptrs.upload(ptrs.data(), max_count * sizeof(void*));
    }
    kernels::CiphertextKeySwitchArgs args(const uint64_t* in, uint64_t* out, uint32_t count) const {
        kernels::CiphertextKeySwitchArgs a;
        a.level = level.get();
        a.in = in;
        a.out = out;
        a.keys = key_ptrs.as<const uint64_t* const>();
        a.key_qp_limbs = qp_limbs;
        a.count = count;
        a.scratch = scratch.as<uint64_t>();
        return a;
    }
    // count size-3 ciphertexts at in -> count size-2 at out
    void relinearize(uint64_t* out, const uint64_t* in, uint32_t count) const { cuda::launch_relinearize(args(in, out, count)); }
    // count products of size-2 ciphertexts a, b relinearized and rescaled (fused) into out
    void multiply_relin_rescale(uint64_t* out, const uint64_t* a, const uint64_t* b, uint32_t count) const {
        kernels::MultiplyRelinRescaleArgs m;
        m.level = level.get();
        m.a = a;
        m.b = b;
        m.b_count = count;
        m.out = out;
        m.keys = key_ptrs.as<const uint64_t* const>();
        m.key_qp_limbs = qp_limbs;
        m.count = count;
        m.scratch = scratch.as<uint64_t>();
        cuda::launch_multiply_relin_rescale(m);
    }
    // count size-2 ciphertexts at in rotated (permutation perm) into out
    void rotate(uint64_t* out, const uint64_t* in, const uint32_t* perm, uint32_t count) const {
        auto a = args(in, out, count);
        a.perm = perm;
        cuda::launch_rotate(a);
    }
};

void paper000(const std::vector<uint32_t>& ds, int runs, std::vector<BatchRow>& rows) {
    const auto ctx = ckks::Context::create(ckks::Parameters::preset("S1"));
    const DeviceLevel dl(*ctx, uint32_t(ctx->max_level()));
    const uint64_t poly = dl.poly(), n = dl.n;
    for (uint32_t d : ds) {
        const auto host = random_polys(*ctx, int(dl.limbs), 2 * size_t(d));
        cuda::DeviceBuffer a(host.size() * 8), b(host.size() * 8), sum(host.size() * 8),
            res(2 * size_t(d) * dl.level * n * 8);
        const DeviceKeySwitch ks(*ctx, int(dl.level), d);
        a.upload(host.data(), host.size() * 8);
        b.upload(host.data(), host.size() * 8);
        using Op = std::function<void(uint32_t, uint32_t)>;  // (first ciphertext, count)
        const Op add = [&](uint32_t first, uint32_t count) {
            dl.add(sum.as<uint64_t>() + first * 2 * poly, a.as<uint64_t>() + first * 2 * poly,
                   b.as<uint64_t>() + first * 2 * poly, count);
        };
        const Op mul = [&](uint32_t first, uint32_t count) {
            ks.multiply_relin_rescale(res.as<uint64_t>() + first * 2 * dl.level * n, a.as<uint64_t>() + first * 2 * poly,
                                      b.as<uint64_t>() + first * 2 * poly, count);
        };
        for (const auto& [name, op] :
             {std::pair<std::string, Op>{"add", add}, {"multiply + relinearize + rescale (fused)", mul}}) {
            BatchRow r;
            r.op = name;
            r.d = d;
            if (name == "add") r.bytes = 3.0 * 2 * double(poly) * 8;  // read two ciphertexts, write one
            r.looped_sync_us = bench::measure([&] {
                                   for (uint32_t i = 0; i < d; ++i) {
                                       op(i, 1);
                                       cuda::synchronize();
                                   }
                               }, runs).median_us / d;
            r.looped_us = bench::measure([&] {
                              for (uint32_t i = 0; i < d; ++i) op(i, 1);
                              cuda::synchronize();
                          }, runs).median_us / d;
            r.batched_us = bench::measure([&] {
                               op(0, d);
                               cuda::synchronize();
                           }, runs).median_us / d;
            rows.push_back(r);
        }
    }
}

// The same comparison through the public batch API: Evaluator on the CUDA queue with the
// batches resident on the device; (a) d batches of one ciphertext, one call + synchronize() each,
// (b) the same loop with one synchronize(), (c) one call on the batch of d.
void paper000_api(const std::vector<uint32_t>& ds, int runs, std::vector<BatchRow>& rows) {
    const auto ctx = ckks::Context::create(ckks::Parameters::preset("S1"));
    ckks::KeyGenerator keygen(ctx);
    const ckks::RelinKey rk = keygen.relin_key();
    // one iteration of an unrolled trace with h = 3 rounds (paper 004): the rotations by 1 .. 7
    const std::vector<int64_t> steps = {1, 2, 3, 4, 5, 6, 7};
    const ckks::GaloisKeys gk = keygen.galois_keys(steps);
    std::vector<int64_t> with_identity = steps;
    with_identity.insert(with_identity.begin(), 0);
    auto queue = cuda::make_cuda_queue();
    const ckks::Evaluator ev(ctx, queue);
    const int level = ctx->max_level();
    auto device_batch = [&](uint32_t d) {
        ckks::CiphertextBatch host(*ctx, d, 2, level, ctx->params().scale, ctx->max_slots());
        const auto v = random_polys(*ctx, level + 1, 2 * size_t(d));
        std::copy(v.begin(), v.end(), host.mutable_data());
        return host.to_device(queue);
    };
    for (uint32_t d : ds) {
        const auto a = device_batch(d), b = device_batch(d);
        std::vector<ckks::CiphertextBatch> as, bs;
        for (uint32_t i = 0; i < d; ++i) as.push_back(device_batch(1)), bs.push_back(device_batch(1));
        using Op = std::function<void(const ckks::CiphertextBatch&, const ckks::CiphertextBatch&)>;
        const Op add = [&](const ckks::CiphertextBatch& x, const ckks::CiphertextBatch& y) { (void)ev.add(x, y); };
        const Op mul = [&](const ckks::CiphertextBatch& x, const ckks::CiphertextBatch& y) {
            (void)ev.multiply_relin_rescale(x, y, rk);
        };
        // the hoisted key switching of paper 004 on a batch: one ModUp per element for 7 rotations
        const Op many = [&](const ckks::CiphertextBatch& x, const ckks::CiphertextBatch&) {
            (void)ev.rotate_many(x, steps, gk);
        };
        const Op sum = [&](const ckks::CiphertextBatch& x, const ckks::CiphertextBatch&) {
            (void)ev.rotate_sum(x, with_identity, gk);
        };
        for (const auto& [name, op] :
             {std::pair<std::string, Op>{"add", add}, {"multiply_relin_rescale", mul},
              {"rotate_many (7 hoisted rotations)", many}, {"rotate_sum (x + 7 hoisted rotations)", sum}}) {
            BatchRow r;
            r.op = "Evaluator " + name;
            r.d = d;
            r.looped_sync_us = bench::measure([&] {
                                   for (uint32_t i = 0; i < d; ++i) {
                                       op(as[i], bs[i]);
                                       ev.synchronize();
                                   }
                               }, runs).median_us / d;
            r.looped_us = bench::measure([&] {
                              for (uint32_t i = 0; i < d; ++i) op(as[i], bs[i]);
                              ev.synchronize();
                          }, runs).median_us / d;
            r.batched_us = bench::measure([&] {
                               op(a, b);
                               ev.synchronize();
                           }, runs).median_us / d;
            rows.push_back(r);
        }
    }
}

// ---- batched encoding (batch_encoder.hpp) ---------------------------------------------------------

// d vectors of N/2 values encoded at the top level into a plaintext batch on the GPU: (a) encoded
// on the CPU (all threads) and uploaded, (b) encode_batch on the CUDA queue (host embedding, then
// the reduction and NTT of every limb on the device; only the coefficients are uploaded).
struct EncodeRow {
    std::string preset;
    uint32_t d = 0;
    int limbs = 0;
    double host_upload_us = -1, device_us = -1;
};

void batched_encoding(const std::vector<std::string>& presets, uint32_t d, int runs, std::vector<EncodeRow>& rows) {
    auto queue = cuda::make_cuda_queue();
    for (const std::string& preset : presets) {
        const auto ctx = ckks::Context::create(ckks::Parameters::preset(preset));
        const ckks::Encoder encoder(ctx);
        std::vector<std::complex<double>> values(size_t(d) * ctx->max_slots());
        std::mt19937_64 rng(1);
        std::uniform_real_distribution<double> u(-1, 1);
        for (auto& v : values) v = {u(rng), u(rng)};
        EncodeRow r;
        r.preset = preset;
        r.d = d;
        r.limbs = ctx->max_level() + 1;
        r.host_upload_us = bench::measure([&] {
                               (void)ckks::encode_batch(encoder, values, d).to_device(queue);
                               queue->synchronize();
                           }, runs).median_us / d;
        r.device_us = bench::measure([&] {
                          (void)ckks::encode_batch(encoder, values, d, std::nullopt, std::nullopt, std::nullopt, queue);
                          queue->synchronize();
                      }, runs).median_us / d;
        rows.push_back(r);
    }
}

// ---- per-kernel latency --------------------------------------------------------------------------

struct OpRow {
    std::string preset, op;
    int log_n = 0, limbs = 0;
    double sync_us = -1, queued_us = -1;
    double bytes = 0;  // the least memory traffic of the op (0: not modelled)
};

void kernel_latency(const std::vector<std::string>& presets, int runs, std::vector<OpRow>& rows) {
    for (const std::string& preset : presets) {
        const auto ctx = ckks::Context::create(ckks::Parameters::preset(preset));
        const DeviceLevel dl(*ctx, uint32_t(ctx->max_level()));
        const uint64_t poly = dl.poly(), n = dl.n;
        const auto host = random_polys(*ctx, int(dl.limbs), 2);
        cuda::DeviceBuffer a(host.size() * 8), b(host.size() * 8), out(3 * poly * 8), rel(2 * poly * 8),
            res(2 * poly * 8), scratch(kernels::divide_drop_scratch_words(2, dl.level, n) * 8);
        const DeviceKeySwitch ks(*ctx, int(dl.level), 1);
        a.upload(host.data(), host.size() * 8);
        b.upload(host.data(), host.size() * 8);
        const auto& perm_host = ctx->automorphism_permutation(ctx->galois_element(1));
        cuda::DeviceBuffer perm(n * 4);
        perm.upload(perm_host.data(), n * 4);

        kernels::NttArgs ntt;
        ntt.tables = dl.tables.views();
        ntt.limbs = dl.limbs;
        ntt.polys = 2;
        ntt.plan = kernels::make_ntt_plan(dl.tables.log_n());
        ntt.src = ntt.mid = ntt.dst = kernels::RowSet{a.as<uint64_t>(), poly};
        kernels::PermuteArgs<uint64_t> pa;
        pa.dst = out.as<uint64_t>();
        pa.src = a.as<uint64_t>();
        pa.perm = perm.as<const uint32_t>();
        pa.n = uint32_t(n);
        pa.rows = 2 * dl.limbs;

        const std::vector<std::pair<std::string, std::function<void()>>> ops = {
            {"NTT (2 x L limbs)", [&] { cuda::launch_ntt_forward(ntt); }},
            {"INTT (2 x L limbs)", [&] { cuda::launch_ntt_inverse(ntt); }},
            {"rescale", [&] { dl.rescale_polys(out.as<uint64_t>(), a.as<uint64_t>(), 2, scratch.as<uint64_t>()); }},
            {"tensor", [&] { dl.tensor(out.as<uint64_t>(), a.as<uint64_t>(), b.as<uint64_t>(), 1); }},
            {"add", [&] { dl.add(out.as<uint64_t>(), a.as<uint64_t>(), b.as<uint64_t>(), 1); }},
            {"automorphism", [&] { cuda::launch_permute(pa); }},
            {"relinearize", [&] { ks.relinearize(rel.as<uint64_t>(), out.as<uint64_t>(), 1); }},
            {"rotate (automorphism + key switch)",
             [&] { ks.rotate(rel.as<uint64_t>(), a.as<uint64_t>(), perm.as<const uint32_t>(), 1); }},
            {"multiply + relinearize + rescale (fused)",
             [&] { ks.multiply_relin_rescale(res.as<uint64_t>(), a.as<uint64_t>(), b.as<uint64_t>(), 1); }},
        };
        for (const auto& [name, f] : ops) {
            OpRow r;
            r.preset = preset;
            r.op = name;
            r.log_n = int(dl.tables.log_n());
            r.limbs = int(dl.limbs);
            // the least traffic: each input word read once and each output word written once
            // (2 polys = 2 * poly words per ciphertext; the tensor writes 3 polys)
            const double ct_bytes = 2.0 * double(poly) * 8;
            if (name.rfind("NTT", 0) == 0 || name.rfind("INTT", 0) == 0 || name == "automorphism") r.bytes = 2 * ct_bytes;
            if (name == "add") r.bytes = 3 * ct_bytes;
            if (name == "tensor") r.bytes = 2 * ct_bytes + 1.5 * ct_bytes;
            r.sync_us = bench::measure([&] {
                            f();
                            cuda::synchronize();
                        }, runs).median_us;
            const int chain = 100;
            r.queued_us = bench::measure([&] {
                              for (int i = 0; i < chain; ++i) f();
                              cuda::synchronize();
                          }, runs).median_us / chain;
            rows.push_back(r);
        }
    }
}


// ---- bootstrapping on the GPU (algorithms/bootstrap.hpp) ------------------------------------------

// One row per preset and batch size d: full slots, values uniform in the unit disk.
struct BootstrapRow {
    std::string preset;
    uint32_t d = 0;
    size_t slots = 0;
    int output_level = 0, keys = 0;
    double first_ms = -1, median_ms = -1, min_ms = -1, cpu_ms = -1, bits = 60, mean_bits = 60;
};

// One row of a profiled bootstrap (algorithms::OpProfile): the time of one kind of operation.
struct ProfileRow {
    std::string preset, op;
    uint32_t d = 0;
    uint64_t calls = 0;
    double ms = 0, total_ms = 0;  // this kind's, and the whole profiled bootstrap's
};

void bootstrap_on_gpu(const std::vector<std::string>& presets, const std::vector<uint32_t>& ds, int runs,
                      std::vector<BootstrapRow>& rows, std::vector<ProfileRow>* profile_rows) {
    using clock = std::chrono::steady_clock;
    auto ms_since = [](clock::time_point t0) { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); };
    auto queue = cuda::make_cuda_queue();
    for (const std::string& preset : presets) {
        const auto ctx = ckks::Context::create(ckks::Parameters::preset(preset));
        std::fprintf(stderr, "[bootstrap %s] the bootstrapper's matrices and keys...\n", preset.c_str());
        const algorithms::Bootstrapper boot(ctx);
        ckks::KeyGenerator keygen(ctx);
        const ckks::PublicKey pk = keygen.public_key();
        const ckks::RelinKey rk = keygen.relin_key();
        const algorithms::BootstrapKeys bk = boot.generate_keys(keygen);
        const ckks::KeyRefs key_set(&rk, &bk.galois);
        const ckks::Evaluator cpu = ckks::Evaluator(ctx).with_keys(key_set);
        const ckks::Evaluator gpu = cpu.on(queue);
        ckks::Encoder enc(ctx);
        ckks::Encryptor encryptor(ctx, pk);
        ckks::Decryptor dec(ctx, keygen.secret_key());
        const size_t slots = boot.slots();
        std::mt19937_64 gen(11);  // inputs only
        std::uniform_real_distribution<double> angle(0, 2 * M_PI), radius(0, 1);
        auto random_values = [&] {
            std::vector<std::complex<double>> v(slots);
            for (auto& x : v) x = std::polar(std::sqrt(radius(gen)), angle(gen));
            return v;
        };
        // the CPU's bootstrap of one ciphertext, at this machine's threads (one untimed call first)
        double cpu_ms = -1;
        {
            const auto values = random_values();
            const ckks::Ciphertext in = encryptor.encrypt(enc.encode(values, 0, std::nullopt, slots));
            (void)boot.bootstrap(algorithms::CountedOps(cpu, nullptr), in, bk);
            std::vector<double> ms;
            for (int r = 0; r < std::max(1, std::min(runs, 3)); ++r) {
                const auto t0 = clock::now();
                (void)boot.bootstrap(algorithms::CountedOps(cpu, nullptr), in, bk);
                ms.push_back(ms_since(t0));
            }
            cpu_ms = bench::timing_of(ms).median_us;  // milliseconds here
        }
        for (uint32_t d : ds) {
            std::fprintf(stderr, "[bootstrap %s] a batch of %u on the GPU...\n", preset.c_str(), d);
            std::vector<std::vector<std::complex<double>>> values;
            std::vector<ckks::Ciphertext> cts;
            for (uint32_t i = 0; i < d; ++i) {
                values.push_back(random_values());
                cts.push_back(encryptor.encrypt(enc.encode(values.back(), 0, std::nullopt, slots)));
            }
            const ckks::CiphertextBatch in = ckks::CiphertextBatch::from_ciphertexts(*ctx, cts).to_device(queue);
            BootstrapRow row{preset, d, slots, boot.output_level(), int(bk.galois.keys.size()) + 1};
            row.cpu_ms = cpu_ms;
            auto t0 = clock::now();
            ckks::CiphertextBatch out = boot.bootstrap(algorithms::CountedOps(gpu, nullptr), in, bk);
            gpu.synchronize();
            row.first_ms = ms_since(t0);
            std::vector<double> ms;
            for (int r = 0; r < runs; ++r) {
                t0 = clock::now();
                out = boot.bootstrap(algorithms::CountedOps(gpu, nullptr), in, bk);
                gpu.synchronize();
                ms.push_back(ms_since(t0));
            }
            if (profile_rows) {  // one more call, each operation between two synchronisations
                algorithms::OpProfile profile;
                t0 = clock::now();
                (void)boot.bootstrap(algorithms::CountedOps(gpu, nullptr, &profile), in, bk);
                gpu.synchronize();
                const double total = ms_since(t0);
                for (const auto& [op, e] : profile.ops)
                    profile_rows->push_back({preset, op, d, e.calls, e.seconds * 1e3, total});
            }
            const bench::Timing t = bench::timing_of(ms);
            row.median_ms = t.median_us;  // milliseconds here
            row.min_ms = t.min_us;
            const auto got = dec.decrypt_decode(out, enc);
            for (uint32_t i = 0; i < d; ++i) {
                const bench::Precision p = bench::precision_of(got[i], values[i]);
                row.bits = std::min(row.bits, p.worst);
                row.mean_bits = std::min(row.mean_bits, p.mean);
            }
            std::fprintf(stderr, "[bootstrap %s] d = %u: %.1f ms per batch (first %.0f ms), %.1f bits (mean %.1f)\n",
                         preset.c_str(), d, row.median_ms, row.first_ms, row.bits, row.mean_bits);
            rows.push_back(row);
        }
    }
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
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines appear as they are printed, also in a pipe
    bool quick = false, cpu_only = false, failed = false, plans = false, plans_only = false;
    uint32_t batch = 16;
    int runs = 11;
    std::vector<std::string> bootstrap_presets;
    std::vector<uint32_t> bootstrap_batches = {8};
    bool bootstrap_only = false, bootstrap_profile = false;
    std::string json_path, md_path;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") quick = true;
        else if (a == "--cpu-only") cpu_only = true;
        else if (a == "--ntt-plans") plans = true;
        else if (a == "--only-ntt-plans") plans = plans_only = true;
        else if (a == "--batch") batch = uint32_t(std::stoul(bench::option_value(argc, argv, i)));
        else if (a == "--runs") runs = std::stoi(bench::option_value(argc, argv, i));
        else if (a == "--bootstrap") bootstrap_presets = bench::split(bench::option_value(argc, argv, i), ',');
        else if (a == "--bootstrap-batch") {
            bootstrap_batches.clear();
            for (const std::string& d : bench::split(bench::option_value(argc, argv, i), ','))
                bootstrap_batches.push_back(uint32_t(std::stoul(d)));
        } else if (a == "--only-bootstrap") bootstrap_only = true;
        else if (a == "--bootstrap-profile") bootstrap_profile = true;
        else if (a == "--json") json_path = bench::option_value(argc, argv, i);
        else if (a == "--markdown") md_path = bench::option_value(argc, argv, i);
        else {
            std::fprintf(stderr, "usage: %s [--quick] [--cpu-only] [--batch D] [--runs N] [--bootstrap B1] "
                                 "[--bootstrap-batch D,...] [--only-bootstrap] [--bootstrap-profile] [--ntt-plans | --only-ntt-plans] [--json F] [--markdown F]\n", argv[0]);
            return 2;
        }
    }
    bench::prepare_outputs({json_path, md_path});
    if (batch == 0) batch = 1;
    std::string arguments;  // this run's options, for the page's "Regenerate with"
    for (int i = 1; i < argc; ++i) arguments += std::string(" ") + argv[i];

    const bool gpu = cuda::device_count() > 0;
    const std::string summary = cuda::device_summary();
    if (!gpu) {
        std::printf("no CUDA GPU found (%s): the GPU benchmark did not run%s\n", summary.c_str(),
                    cpu_only ? "; --cpu-only: CPU column only" : "");
        if (!cpu_only) return 0;
    } else {
        std::printf("CUDA: %s; %s; peak memory bandwidth %.0f GB/s\n", summary.c_str(), cuda::version_summary().c_str(),
                    cuda::peak_memory_bandwidth_gbs());
    }

    std::vector<Row> rows = {{12, 2, 800, 17733}, {13, 4, 2520, 57447}, {14, 8, 11770, 231750}, {15, 15, 49137, 877117}};
    std::vector<uint32_t> ds = {10, 100, 1000};
    std::vector<std::string> presets = {"S2", "S4"};
    if (quick) rows.resize(1), runs = 3, ds = {10}, presets = {"S2"};
    if (plans_only || bootstrap_only) rows.clear(), ds.clear(), presets.clear();
    for (Row& r : rows) {
        measure_cpu(r, runs);
        if (gpu) measure_gpu(r, runs, batch);
    }
    std::vector<BatchRow> batch_rows;
    std::vector<OpRow> op_rows;
    std::vector<EncodeRow> encode_rows;
    std::vector<BootstrapRow> bootstrap_rows;
    std::vector<PlanCase> plan_cases;
    std::vector<ProfileRow> profile_rows;
    if (gpu) {
        if (plans) plan_cases = ntt_plans(runs);
        paper000(ds, runs, batch_rows);
        if (!ds.empty()) paper000_api(ds, runs, batch_rows);
        kernel_latency(presets, runs, op_rows);
        if (!presets.empty()) batched_encoding(presets, quick ? 10 : 100, runs, encode_rows);
        std::vector<uint32_t> bootstrap_ds = {1};
        for (uint32_t d : bootstrap_batches)
            if (d > 1) bootstrap_ds.push_back(d);
        if (!bootstrap_presets.empty()) {
            try {
                bootstrap_on_gpu(bootstrap_presets, bootstrap_ds, quick ? 3 : runs, bootstrap_rows,
                                 bootstrap_profile ? &profile_rows : nullptr);
            } catch (const std::exception& e) {  // the tables measured so far are still written
                std::fprintf(stderr, "bootstrap on the GPU failed: %s\n", e.what());
                failed = true;
            }
        }
    }

    // The tables, printed and kept for --markdown.
    std::string md;
    auto emit = [&](const char* fmt, auto... args) {
        std::string line = fmt;
        if constexpr (sizeof...(args) > 0) {
            char buf[1024];
            std::snprintf(buf, sizeof buf, fmt, args...);
            line = buf;
        }
        std::fputs(line.c_str(), stdout);
        md += line;
    };
    // (a section without rows, left out by an --only-* option, is not printed)
    if (!rows.empty()) {
        emit("\n## Rescale of one ciphertext (2 polynomials) from L limbs to L-1, us (median of %d runs)\n", runs);
        emit("CPU: %s, %zu threads; paper 001: SEAL on a Xeon E5-2690 v4, naive GPU port on a V100\n\n",
             bench::cpu_model().c_str(), size_t(num_threads()));
        emit("| N | L | oboro CPU | oboro GPU sync | oboro GPU queued | oboro GPU batch of %u (per ct) | paper SEAL CPU | "
             "paper naive GPU |\n|---|---|---|---|---|---|---|---|\n", batch);
    }
    for (const Row& r : rows)
        emit("| %d | %d | %s | %s | %s | %s | %s | %s |\n", 1 << r.log_n, r.limbs, cell(r.cpu_us).c_str(),
                    cell1(r.gpu_sync_us).c_str(), cell1(r.gpu_us).c_str(), cell1(r.gpu_batch_us).c_str(),
                    cell(r.paper_seal_cpu_us).c_str(), cell(r.paper_naive_gpu_us).c_str());

    if (gpu && !batch_rows.empty()) {
        emit("\n## Paper 000 in spirit (S1, kernel level): us per ciphertext; (a) loop with a sync per op, "
                    "(b) loop with one sync, (c) one batched launch (Evaluator rows: the public API on the CUDA queue)\n\n");
        emit("| op | d | (a) looped + sync | (b) looped | (c) batched | (a)/(c) |\n|---|---|---|---|---|---|\n");
        for (const BatchRow& r : batch_rows)
            emit("| %s | %u | %s | %s | %s | %.1fx |\n", r.op.c_str(), r.d, cell1(r.looped_sync_us).c_str(),
                        cell1(r.looped_us).c_str(), cell1(r.batched_us).c_str(), r.looped_sync_us / r.batched_us);
    }
    if (gpu && !op_rows.empty()) {
        emit("\n## Per-op latency, one ciphertext at the top level, us (launch + sync; queued: 100 launch sequences, one sync)\n\n");
        emit("| preset | N | L | op | sync | queued |\n|---|---|---|---|---|---|\n");
        for (const OpRow& r : op_rows)
            emit("| %s | %d | %d | %s | %s | %s |\n", r.preset.c_str(), 1 << r.log_n, r.limbs, r.op.c_str(),
                        cell1(r.sync_us).c_str(), cell1(r.queued_us).c_str());
        const double peak = cuda::peak_memory_bandwidth_gbs();
        emit("\n## Achieved memory bandwidth: the least traffic of the op (each input word read once, each output "
             "word written once) over its time (queued, or per ciphertext in one batched launch), against the GPU's "
             "peak of %.0f GB/s\n\n| op | time (us) | traffic (MB) | GB/s | of peak |\n|---|---|---|---|---|\n", peak);
        auto bandwidth_row = [&](const std::string& what, double us, double bytes) {
            const double gbs = bytes / (us * 1e-6) / 1e9;
            emit("| %s | %s | %.2f | %.0f | %.0f%% |\n", what.c_str(), cell1(us).c_str(), bytes / 1e6, gbs,
                 peak > 0 ? 100 * gbs / peak : 0.0);
        };
        for (const BatchRow& r : batch_rows)
            if (r.bytes > 0) bandwidth_row("S1 " + r.op + ", batched, d = " + std::to_string(r.d), r.batched_us, r.bytes);
        for (const OpRow& r : op_rows)
            if (r.bytes > 0) bandwidth_row(r.preset + " " + r.op, r.queued_us, r.bytes);
    }
    if (gpu && !encode_rows.empty()) {
        emit("\n## Encoding a batch of N/2-value vectors at the top level into GPU memory, us per vector\n\n");
        emit("| preset | L | d | encoded on the CPU, uploaded | encode_batch on the GPU | speed-up |\n|---|---|---|---|---|---|\n");
        for (const EncodeRow& r : encode_rows)
            emit("| %s | %d | %u | %s | %s | %.1fx |\n", r.preset.c_str(), r.limbs, r.d, cell1(r.host_upload_us).c_str(),
                 cell1(r.device_us).c_str(), r.host_upload_us / r.device_us);
    }
    if (gpu) {
        if (!plan_cases.empty()) {
            emit("\n## NTT launch plans: us per transform (or rescale) queued, the default plan (make_ntt_plan) against "
                 "the best of %zu plans swept (split s1 / words per tile / threads per block; all in the JSON). The default "
                 "picks its tiles per launch (backend/cuda/ntt_kernels.hpp): a rescale's launches may differ\n\n"
                 "| op | N | rows | default plan | default | best plan | best | default / best |\n"
                 "|---|---|---|---|---|---|---|---|\n", kernels::candidate_ntt_plans(16).size());
            auto plan_name = [](const kernels::NttPlan& p) {
                if (p.tile_columns == 0) return std::to_string(p.split) + " / per launch";
                return std::to_string(p.split) + " / " + std::to_string(p.tile_columns << p.split) + " / " +
                       std::to_string(p.threads);
            };
            for (const PlanCase& c : plan_cases) {
                const PlanTiming& best = c.best();
                emit("| %s | %d | %u x %u | %s | %s | %s | %s | %.2f |\n", c.op.c_str(), 1 << c.log_n, c.polys, c.limbs,
                     plan_name(c.chosen.plan).c_str(), cell1(c.chosen.us).c_str(), plan_name(best.plan).c_str(),
                     cell1(best.us).c_str(), c.chosen.us / best.us);
            }
        }
        if (!bootstrap_rows.empty()) {
            emit("\n## Bootstrapping a batch of d ciphertexts on the GPU (full slots), ms; CPU: one ciphertext at %zu threads, same run\n\n",
                 size_t(num_threads()));
            emit("| preset | slots | d | levels left | keys | first call (uploads) | per batch (median) | per ciphertext | "
                 "bits (worst) | bits (mean) | CPU per ciphertext | CPU / GPU per ciphertext |\n"
                 "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
            for (const BootstrapRow& r : bootstrap_rows)
                emit("| %s | %zu | %u | %d | %d | %s | %s | %s | %.1f | %.1f | %s | %.0fx |\n", r.preset.c_str(), r.slots, r.d,
                     r.output_level, r.keys, cell1(r.first_ms).c_str(), cell1(r.median_ms).c_str(),
                     cell1(r.median_ms / r.d).c_str(), r.bits, r.mean_bits, cell1(r.cpu_ms).c_str(),
                     r.cpu_ms / (r.median_ms / r.d));
        }
        if (!profile_rows.empty()) {
            emit("\n## Where a GPU bootstrap's time goes: one profiled call per batch size, each operation between two "
                 "synchronisations (algorithms::OpProfile), ms per batch\n\n"
                 "| preset | d | op | calls | ms | share of the profiled call | ms per ciphertext |\n"
                 "|---|---|---|---|---|---|---|\n");
            for (const ProfileRow& r : profile_rows)
                emit("| %s | %u | %s | %llu | %.1f | %.0f%% | %.1f |\n", r.preset.c_str(), r.d, r.op.c_str(),
                     (unsigned long long)r.calls, r.ms, 100 * r.ms / r.total_ms, r.ms / r.d);
        }
    }

    if (!json_path.empty()) {
        std::ofstream out = bench::output_file(json_path);
        auto num = [](double v) { return v < 0 ? std::string("null") : cell1(v); };
        out << "{\n  \"benchmark\": \"bench_gpu\",\n  \"machine\": " << bench::machine_json() << ",\n  \"gpu\": \""
            << bench::json_escape(gpu ? summary : "none: " + summary) << "\",\n  \"versions\": \""
            << bench::json_escape(cuda::version_summary()) << "\",\n  \"peak_memory_bandwidth_gbs\": "
            << cuda::peak_memory_bandwidth_gbs() << ",\n  \"runs\": " << runs
            << ",\n  \"batch\": " << batch << ",\n  \"unit\": \"us per ciphertext, median\",\n  \"rescale\": [\n";
        for (size_t i = 0; i < rows.size(); ++i) {
            const Row& r = rows[i];
            out << "    {\"n\": " << (1 << r.log_n) << ", \"limbs\": " << r.limbs << ", \"cpu_us\": " << num(r.cpu_us)
                << ", \"gpu_sync_us\": " << num(r.gpu_sync_us) << ", \"gpu_us\": " << num(r.gpu_us)
                << ", \"gpu_batch_us\": " << num(r.gpu_batch_us) << ", \"paper_seal_cpu_us\": " << r.paper_seal_cpu_us
                << ", \"paper_naive_gpu_us\": " << r.paper_naive_gpu_us << "}" << (i + 1 < rows.size() ? "," : "")
                << "\n";
        }
        out << "  ],\n  \"batched_s1\": [\n";
        for (size_t i = 0; i < batch_rows.size(); ++i) {
            const BatchRow& r = batch_rows[i];
            out << "    {\"op\": \"" << r.op << "\", \"d\": " << r.d << ", \"looped_sync_us\": " << num(r.looped_sync_us)
                << ", \"looped_us\": " << num(r.looped_us) << ", \"batched_us\": " << num(r.batched_us)
                << ", \"least_bytes\": " << r.bytes << "}"
                << (i + 1 < batch_rows.size() ? "," : "") << "\n";
        }
        out << "  ],\n  \"kernel_latency\": [\n";
        for (size_t i = 0; i < op_rows.size(); ++i) {
            const OpRow& r = op_rows[i];
            out << "    {\"preset\": \"" << r.preset << "\", \"n\": " << (1 << r.log_n) << ", \"limbs\": " << r.limbs
                << ", \"kernel\": \"" << r.op << "\", \"sync_us\": " << num(r.sync_us) << ", \"queued_us\": "
                << num(r.queued_us) << ", \"least_bytes\": " << r.bytes << "}" << (i + 1 < op_rows.size() ? "," : "") << "\n";
        }
        out << "  ],\n  \"encoding\": [\n";
        for (size_t i = 0; i < encode_rows.size(); ++i) {
            const EncodeRow& r = encode_rows[i];
            out << "    {\"preset\": \"" << r.preset << "\", \"limbs\": " << r.limbs << ", \"d\": " << r.d
                << ", \"host_upload_us\": " << num(r.host_upload_us) << ", \"device_us\": " << num(r.device_us) << "}"
                << (i + 1 < encode_rows.size() ? "," : "") << "\n";
        }
        out << "  ],\n  \"ntt_plans\": [\n";
        bool first_plan = true;  // one row per plan timed, the default (tiles per launch) last in its case
        for (const PlanCase& c : plan_cases) {
            auto row = [&](const PlanTiming& t, bool is_default) {
                out << (first_plan ? "" : ",\n") << "    {\"op\": \"" << c.op << "\", \"n\": " << (1 << c.log_n)
                    << ", \"polys\": " << c.polys << ", \"limbs\": " << c.limbs << ", \"split\": " << t.plan.split
                    << ", \"tile_columns\": " << t.plan.tile_columns << ", \"tile_chunks\": " << t.plan.tile_chunks
                    << ", \"threads\": " << t.plan.threads << ", \"default\": " << (is_default ? "true" : "false")
                    << ", \"us\": " << num(t.us) << "}";
                first_plan = false;
            };
            for (const PlanTiming& t : c.swept) row(t, false);
            row(c.chosen, true);
        }
        if (!first_plan) out << "\n";
        out << "  ],\n  \"bootstrap_profile\": [\n";
        for (size_t i = 0; i < profile_rows.size(); ++i) {
            const ProfileRow& r = profile_rows[i];
            out << "    {\"preset\": \"" << r.preset << "\", \"d\": " << r.d << ", \"op\": \"" << r.op
                << "\", \"calls\": " << r.calls << ", \"ms\": " << num(r.ms) << ", \"profiled_total_ms\": "
                << num(r.total_ms) << "}" << (i + 1 < profile_rows.size() ? "," : "") << "\n";
        }
        out << "  ],\n  \"bootstrap_ms\": [\n";
        for (size_t i = 0; i < bootstrap_rows.size(); ++i) {
            const BootstrapRow& r = bootstrap_rows[i];
            out << "    {\"preset\": \"" << r.preset << "\", \"slots\": " << r.slots << ", \"d\": " << r.d
                << ", \"output_level\": " << r.output_level << ", \"keys\": " << r.keys << ", \"first_ms\": "
                << num(r.first_ms) << ", \"median_ms\": " << num(r.median_ms) << ", \"min_ms\": " << num(r.min_ms)
                << ", \"precision_bits\": " << r.bits << ", \"mean_precision_bits\": " << r.mean_bits
                << ", \"cpu_ms\": " << num(r.cpu_ms) << ", \"cpu_threads\": " << num_threads() << "}"
                << (i + 1 < bootstrap_rows.size() ? "," : "") << "\n";
        }
        out << "  ]\n}\n";
    }
    if (!md_path.empty()) {
        std::ofstream out = bench::output_file(md_path);
        out << "# GPU benchmark (papers 000 and 001)\n\nGenerated by `bench/bench_gpu` on " << bench::utc_now() << ".\n\n"
            << "- GPU: " << (gpu ? summary : "none (" + summary + "): only the CPU column was measured") << "; "
            << cuda::version_summary() << "\n"
            << "- CPU: " << bench::cpu_model() << ", " << num_threads() << " threads\n\n"
            << "Regenerate with `bench_gpu" << arguments << "`.\n"
            << md;
    }
    return failed ? 1 : 0;
}

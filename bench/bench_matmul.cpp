// Encrypted matrix products, reproducing paper 003's tables on oboro (S2: N = 16384,
// {60,40,40,40,60}, scale 2^40), single-threaded unless --threads:
//   Table 5: op counts (Add, Rot, cMult, Mult; plus relinearizations and ModUps) of Jiang et al.
//            and of the 3-D method (paper form and fused shifts) for d = 4, 8, 16, beside the
//            paper's; BSGS and hoisting make Jiang's key switches far fewer than its Rot + Mult.
//   Table 6: median ms per product and the reduction ratio Jiang / 3-D, beside the paper's SEAL
//            figures (Apple M4) and openfhe-numpy's product on this machine class (shared/PEERS.md).
//   Table 7: accuracy, inputs uniform in [-1,1), --trials trials: the mean over trials of the max
//            and of the min absolute error against a double matmul.
//   Blocks:  64x64, 128x128, 256x256 and a rectangular product cut into blocks (both bases), ms,
//            measured op counts against the cost formula, scaling with size.
//   Transforms: a plaintext matrix of D consecutive diagonals times an encrypted vector of every
//            slot (LinearTransform, BSGS), single against double hoisting: ms, ModDowns, error.
// Writes DIR/matmul.json and DIR/matmul.md (DIR: --out, by default docs/benchmarks of the source
// tree; --quick writes nothing unless --out is given) and runs bench/plot_matmul.py for
// DIR/matmul.png (with $OBORO_PYTHON, else the Python CMake was configured with).
//
//   bench_matmul [--quick] [--threads N] [--trials N] [--runs N] [--d 4,8,16] [--methods jiang,3d,...]
//                [--no-blocks] [--no-transforms] [--out DIR]
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "bench_util.hpp"
#include "oboro/algorithms/linear_transform.hpp"
#include "oboro/algorithms/matmul_block.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/keygen.hpp"
#include "oboro/util/parallel.hpp"

#ifndef OBORO_SOURCE_DIR
#define OBORO_SOURCE_DIR "."
#endif

using namespace oboro;
using namespace oboro::ckks;
using namespace oboro::algorithms;

namespace {

// Paper 003 (SEEDS.md): Table 5 counts (Add, Rot, cMult, Mult), Table 6 ms (SEAL 4.1.2, Apple M4),
// Table 7 mean max abs error (1000 trials).
struct PaperRow {
    std::array<int, 4> ops;
    double ms, max_err;
};
const std::map<std::pair<std::string, size_t>, PaperRow> kPaper = {
    {{"jiang", 4}, {{18, 14, 19, 4}, 56.1, 1.13e-5}},  {{"jiang", 8}, {{42, 30, 36, 8}, 140, 2.10e-5}},
    {{"jiang", 16}, {{90, 62, 65, 16}, 282, 3.56e-5}}, {{"3d", 4}, {{10, 14, 3, 1}, 40.9, 1.34e-5}},
    {{"3d", 8}, {{15, 21, 3, 1}, 58.1, 2.36e-5}},      {{"3d", 16}, {{20, 28, 3, 1}, 75.1, 3.91e-5}},
};
// shared/PEERS.md, S2, openfhe-numpy 1.5.1 matrix product, 1 thread, us.
const std::map<size_t, double> kOpenfheNumpyUs = {{8, 1029233}, {16, 2302537}};

using bench::fmt;

std::vector<double> uniform_matrix(std::mt19937_64& gen, size_t rows, size_t cols) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);  // benchmark inputs, not key material
    std::vector<double> m(rows * cols);
    for (auto& x : m) x = u(gen);
    return m;
}

std::vector<double> matmul_ref(const std::vector<double>& a, const std::vector<double>& b, size_t m, size_t k, size_t n) {
    std::vector<double> c(m * n, 0.0);
    for (size_t i = 0; i < m; ++i)
        for (size_t l = 0; l < k; ++l)
            for (size_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + l] * b[l * n + j];
    return c;
}

struct Bench {
    ContextPtr ctx;
    KeyGenerator keygen;
    RelinKey rk;
    GaloisKeys gk;
    Encoder encoder;
    Encryptor encryptor;
    Decryptor decryptor;
    Evaluator eval;

    explicit Bench(ContextPtr c)
        : ctx(c), keygen(c), rk(keygen.relin_key()), encoder(c), encryptor(c, keygen.public_key()),
          decryptor(c, keygen.secret_key()), eval(c) {}

    void add_keys(const std::vector<int64_t>& steps) { keygen.add_galois_keys(gk, steps); }

    BlockGrid encrypt(const std::vector<double>& m, const BlockShape& s, size_t slots) {
        BlockGrid g{s.grid_rows(), s.grid_cols(), {}};
        for (const auto& block : split_blocks(m, s))
            g.blocks.push_back(encryptor.encrypt(encoder.encode(flatten(block, s.d, slots), std::nullopt, std::nullopt, slots)));
        return g;
    }
    std::vector<double> decrypt(const BlockGrid& g, const BlockShape& s) {
        std::vector<std::vector<double>> blocks;
        for (const auto& ct : g.blocks) blocks.push_back(unflatten(decryptor.decrypt_decode(ct, encoder), s.d));
        return join_blocks(blocks, s);
    }
};

// One single-ciphertext method of the tables: Jiang, 3-D with fused shifts, 3-D as in the paper.
struct Method {
    std::string name, label;
    BlockBase base;
    Shifts3D shifts;
};
const std::vector<Method> kMethods = {{"jiang", "Jiang et al. (BSGS, hoisted)", BlockBase::jiang, Shifts3D::hoisted},
                                      {"3d", "3-D, hoisted sums (default)", BlockBase::cube, Shifts3D::hoisted},
                                      {"3d-fused", "3-D, fused shifts", BlockBase::cube, Shifts3D::fused},
                                      {"3d-paper", "3-D, paper's 7 log d rotations", BlockBase::cube, Shifts3D::paper}};

struct SquareRow {
    std::string method;
    size_t d = 0;
    OpCounts ops;
    double ms = 0;
    double mean_max_err = 0, mean_min_err = 0;
    int trials = 0;
};

// A product of one method as a function of (A, B): Jiang et al. and Matmul3D directly (the paper's
// 3-D form is not a BlockMatmul base).
struct SquareProduct {
    std::unique_ptr<JiangMatmul> jiang;
    std::unique_ptr<Matmul3D> cube;
    size_t slots() const { return jiang ? jiang->slots() : cube->slots(); }
    std::vector<int64_t> steps() const { return jiang ? jiang->rotation_steps() : cube->rotation_steps(); }
    Ciphertext run(Bench& B, const CountedOps& ops, const Ciphertext& a, const Ciphertext& b) const {
        return jiang ? jiang->multiply(ops, a, b, B.rk, B.gk) : cube->multiply(ops, a, b, B.rk, B.gk);
    }
};

SquareRow run_square(Bench& B, const Method& m, size_t d, int runs, int trials, std::mt19937_64& gen) {
    SquareProduct p;
    if (m.base == BlockBase::jiang) p.jiang = std::make_unique<JiangMatmul>(B.ctx, d);
    else p.cube = std::make_unique<Matmul3D>(B.ctx, d, 0, m.shifts);
    B.add_keys(p.steps());
    const BlockShape s{d, d, d};
    SquareRow row{m.name, d};
    auto a = B.encrypt(uniform_matrix(gen, d, d), s, p.slots()), b = B.encrypt(uniform_matrix(gen, d, d), s, p.slots());
    p.run(B, CountedOps(B.eval, &row.ops), a.blocks[0], b.blocks[0]);
    row.ms = bench::measure([&] { p.run(B, CountedOps(B.eval, nullptr), a.blocks[0], b.blocks[0]); }, runs, 0.5).median_us /
             1e3;
    for (int t = 0; t < trials; ++t) {
        const auto ma = uniform_matrix(gen, d, d), mb = uniform_matrix(gen, d, d);
        const BlockGrid c{1, 1, {p.run(B, CountedOps(B.eval, nullptr), B.encrypt(ma, s, p.slots()).blocks[0],
                                       B.encrypt(mb, s, p.slots()).blocks[0])}};
        const auto got = B.decrypt(c, s), want = matmul_ref(ma, mb, d, d, d);
        double mx = 0, mn = INFINITY;
        for (size_t i = 0; i < got.size(); ++i) {
            const double e = std::abs(got[i] - want[i]);
            mx = std::max(mx, e);
            mn = std::min(mn, e);
        }
        row.mean_max_err += mx / trials;
        row.mean_min_err += mn / trials;
    }
    row.trials = trials;
    return row;
}

struct BlockRow {
    size_t m = 0, k = 0, n = 0, d = 0;
    std::string base;
    size_t gm = 0, gk = 0, gn = 0;
    OpCounts ops, formula;
    double ms = 0, max_err = 0;
};

BlockRow run_block(Bench& B, size_t m, size_t k, size_t n, BlockBase base, size_t d, int runs, std::mt19937_64& gen) {
    const BlockMatmul mm(B.ctx, base, d);
    B.add_keys(mm.rotation_steps());
    const BlockShape sa{m, k, d}, sb{k, n, d}, sc{m, n, d};
    BlockRow row{m, k, n, d, base == BlockBase::jiang ? "jiang" : "3d", sa.grid_rows(), sa.grid_cols(), sb.grid_cols()};
    const auto ma = uniform_matrix(gen, m, k), mb = uniform_matrix(gen, k, n);
    const BlockGrid a = B.encrypt(ma, sa, mm.slots()), b = B.encrypt(mb, sb, mm.slots());
    // the counted run is also the accuracy check and the warm-up
    const BlockGrid c = mm.multiply(CountedOps(B.eval, &row.ops), a, b, B.rk, B.gk);
    const auto got = B.decrypt(c, sc), want = matmul_ref(ma, mb, m, k, n);
    for (size_t i = 0; i < got.size(); ++i) row.max_err = std::max(row.max_err, std::abs(got[i] - want[i]));
    row.formula = mm.cost(row.gm, row.gk, row.gn);
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        mm.multiply(CountedOps(B.eval, nullptr), a, b, B.rk, B.gk);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    row.ms = ms[ms.size() / 2];
    return row;
}

struct TransformRow {
    size_t diagonals = 0, slots = 0;
    Hoisting hoisting = Hoisting::mod_up;
    OpCounts ops;
    double ms = 0, max_err = 0;
};

const char* hoisting_name(Hoisting h) { return h == Hoisting::mod_up ? "single" : "double"; }

// y = M x for M with `diagonals` consecutive random diagonals (offsets 0 .. D-1) over every slot.
TransformRow run_transform(Bench& B, size_t diagonals, Hoisting hoisting, int runs, std::mt19937_64& gen) {
    const size_t slots = B.ctx->max_slots();
    Diagonals diags;
    for (size_t k = 0; k < diagonals; ++k) diags[int64_t(k)] = uniform_matrix(gen, 1, slots);
    const LinearTransform lt(B.ctx, diags, slots, hoisting);
    B.add_keys(lt.rotation_steps());
    TransformRow row{diagonals, slots, hoisting};
    const std::vector<double> x = uniform_matrix(gen, 1, slots);
    const Ciphertext ct = B.encryptor.encrypt(B.encoder.encode(x, std::nullopt, std::nullopt, slots));
    const Ciphertext y = lt.apply(CountedOps(B.eval, &row.ops), ct, B.gk);  // also the warm-up
    const auto got = B.decryptor.decrypt_decode(y, B.encoder);
    for (size_t i = 0; i < slots; ++i) {
        double want = 0;
        for (const auto& [k, d] : diags) want += d[i] * x[(i + size_t(k)) % slots];
        row.max_err = std::max(row.max_err, std::abs(got[i] - want));
    }
    row.ms = bench::measure([&] { lt.apply(CountedOps(B.eval, nullptr), ct, B.gk); }, runs, 0.5).median_us / 1e3;
    return row;
}

std::string ops_json(const OpCounts& c) {
    std::ostringstream o;
    o << "{\"add\": " << c.add << ", \"rot\": " << c.rot << ", \"cmult\": " << c.cmult << ", \"mult\": " << c.mult
      << ", \"relin\": " << c.relin << ", \"rescale\": " << c.rescale << ", \"mod_ups\": " << c.key_switch.mod_ups
      << ", \"key_inner_products\": " << c.key_switch.inner_products << ", \"mod_downs\": " << c.key_switch.mod_downs
      << "}";
    return o.str();
}

std::string transforms_md(const std::vector<TransformRow>& rows, int threads) {
    if (rows.empty()) return "";
    std::ostringstream o;
    o << "\n## Linear transforms: single and double hoisting\n\nA plaintext matrix with D consecutive random "
         "diagonals times an encrypted vector of all "
      << rows[0].slots
      << " slots (algorithms/linear_transform.hpp, BSGS). Single hoisting shares the baby rotations' ModUp; "
         "double hoisting also keeps them over Q*P, multiplies them by diagonals encoded over Q*P and divides "
         "each giant group's sum by P once. Median ms, "
      << threads << " thread" << (threads > 1 ? "s" : "")
      << "; max error against the plain product of inputs uniform in [-1,1).\n\n"
         "| D | hoisting | Rot | ModUps | ModDowns | ms | double vs single | max error |\n"
         "|---:|---|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& r : rows) {
        std::string ratio;
        for (const auto& s : rows)
            if (r.hoisting == Hoisting::mod_up_and_mod_down && s.hoisting == Hoisting::mod_up && s.diagonals == r.diagonals)
                ratio = fmt("%.2fx", s.ms / r.ms);
        o << "| " << r.diagonals << " | " << hoisting_name(r.hoisting) << " | " << r.ops.rot << " | "
          << r.ops.key_switch.mod_ups << " | " << r.ops.key_switch.mod_downs << " | " << fmt("%.1f", r.ms) << " | "
          << ratio << " | " << fmt("%.2g", r.max_err) << " |\n";
    }
    return o.str();
}

const SquareRow* find(const std::vector<SquareRow>& rows, const std::string& m, size_t d) {
    for (const auto& r : rows)
        if (r.method == m && r.d == d) return &r;
    return nullptr;
}

std::string tables_md(const std::vector<SquareRow>& sq, const std::vector<BlockRow>& blocks, const std::vector<size_t>& ds,
                      int threads, int trials) {
    std::ostringstream o;
    o << "## Paper 003 Table 5: operations per product\n\n"
         "Counted as executed (algorithms/op_counts.hpp). Rot = rotations (each one automorphism + key switch); "
         "ModUps = key-switch decompositions: hoisted rotations of one ciphertext share one, so Jiang's key "
         "switching work is far below its Rot count. Jiang's Rot is about the paper's (BSGS for sigma/tau: "
         "~2 sqrt(2d) + 2 sqrt(d) instead of 3(d-1); phi^k takes two masked rotations each) and its Mult are "
         "summed as degree 2 and relinearized ONCE (the paper: one relinearization per Mult). Jiang's cMult are "
         "one per sigma and tau diagonal plus two per phi^k, 5d - 3 (77 against the paper's 65 at d = 16); "
         "its Add are below the paper's. The fused 3-D "
         "form does each composed shift ShiftSqrs(ShiftCols(x, 2^i), -2^i) as the one rotation it equals "
         "(5 log d Rot instead of 7 log d); the hoisted form (the default) does each log d-round shift-and-add "
         "loop as a rotate-and-sum in h hoisted iterations (ckks/trace.hpp): more Rot (key inner products) but "
         "fewer ModUps and ModDowns, which cost more.\n\n"
         "| d | method | Add | Rot | cMult | Mult | relin | ModUps | paper Add | paper Rot | paper cMult | paper Mult |\n"
         "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (size_t d : ds)
        for (const auto& m : kMethods) {
            const SquareRow* r = find(sq, m.name, d);
            if (!r) continue;
            const auto& p = kPaper.at({m.name == "jiang" ? "jiang" : "3d", d});
            o << "| " << d << " | " << m.label << " | " << r->ops.add << " | " << r->ops.rot << " | " << r->ops.cmult << " | "
              << r->ops.mult << " | " << r->ops.relin << " | " << r->ops.key_switch.mod_ups << " | " << p.ops[0] << " | "
              << p.ops[1] << " | " << p.ops[2] << " | " << p.ops[3] << " |\n";
        }
    o << "\n## Paper 003 Table 6: ms per product (" << threads << " thread" << (threads > 1 ? "s" : "")
      << ", median)\n\nPaper: SEAL 4.1.2 from Python on an Apple M4. openfhe-numpy: its matrix product at S2, 1 "
         "thread, shared/PEERS.md (same machine class, another day; the machines drift 1.3-1.8x).\n\n"
         "| d | Jiang | 3-D hoisted | 3-D fused | 3-D paper form | ratio Jiang / 3-D | paper Jiang | paper 3-D | "
         "paper ratio | openfhe-numpy | 3-D speed-up vs openfhe-numpy |\n"
         "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (size_t d : ds) {
        const SquareRow *j = find(sq, "jiang", d), *c = find(sq, "3d", d), *cf = find(sq, "3d-fused", d),
                        *cp = find(sq, "3d-paper", d);
        if (!j && !c && !cf && !cp) continue;  // a method not run (--methods) shows as "-"
        auto ms = [](const SquareRow* r) { return r ? fmt("%.1f", r->ms) : std::string("-"); };
        const auto &pj = kPaper.at({"jiang", d}), &pc = kPaper.at({"3d", d});
        const auto peer = kOpenfheNumpyUs.find(d);
        o << "| " << d << " | " << ms(j) << " | **" << ms(c) << "** | " << ms(cf) << " | " << ms(cp) << " | "
          << (j && c ? fmt("%.2f", j->ms / c->ms) : "-") << " | " << pj.ms << " | " << pc.ms << " | "
          << fmt("%.2f", pj.ms / pc.ms) << " | " << (peer == kOpenfheNumpyUs.end() ? "n/a" : fmt("%.0f", peer->second / 1e3))
          << " | " << (peer == kOpenfheNumpyUs.end() || !c ? "" : fmt("%.0fx", peer->second / 1e3 / c->ms)) << " |\n";
    }
    o << "\n## Paper 003 Table 7: absolute error against a double matmul\n\nInputs uniform in [-1,1), " << trials
      << " trials per cell (paper: 1000), public-key encryption; mean over trials of the max and of the min "
         "absolute error over the d^2 entries.\n\n"
         "| d | method | mean max error | mean min error | paper mean max error |\n|---:|---|---:|---:|---:|\n";
    for (size_t d : ds)
        for (const auto& m : kMethods) {
            const SquareRow* r = find(sq, m.name, d);
            if (!r || !r->trials) continue;
            o << "| " << d << " | " << m.label << " | " << fmt("%.3g", r->mean_max_err) << " | "
              << fmt("%.3g", r->mean_min_err) << " | " << fmt("%.3g", kPaper.at({m.name == "jiang" ? "jiang" : "3d", d}).max_err)
              << " |\n";
        }
    if (!blocks.empty()) {
        o << "\n## Block products (beyond paper 003)\n\nA (m x k) times B (k x n) cut into d x d blocks "
             "(algorithms/matmul_block.hpp): each input block transformed once, one relinearization per output "
             "block. 'formula' checks the measured counts against MatmulCost::total (docs/architecture.md). "
             "Median of the timed runs, "
          << threads << " thread" << (threads > 1 ? "s" : "") << ".\n\n"
             "'vs n/2': time against the square product of half the size with the same base (8x the "
             "block products, 4x the transforms and relinearizations).\n\n"
             "| m x k x n | base | d | grid | ms | vs n/2 | ms per output block | Rot | ModUps | Mult | relin | formula | "
             "max error |\n|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|\n";
        for (const auto& b : blocks) {
            std::string scaling;
            for (const auto& h : blocks)
                if (h.base == b.base && b.m == b.k && b.k == b.n && h.m == h.k && h.k == h.n && 2 * h.m == b.m)
                    scaling = fmt("%.1fx", b.ms / h.ms);
            o << "| " << b.m << "x" << b.k << "x" << b.n << " | " << b.base << " | " << b.d << " | " << b.gm << "x" << b.gk
              << "x" << b.gn << " | " << fmt("%.0f", b.ms) << " | " << scaling << " | " << fmt("%.1f", b.ms / double(b.gm * b.gn)) << " | "
              << b.ops.rot << " | " << b.ops.key_switch.mod_ups << " | " << b.ops.mult << " | " << b.ops.relin << " | "
              << (b.ops == b.formula ? "equal" : "DIFFERS") << " | " << fmt("%.2g", b.max_err) << " |\n";
        }
    }
    return o.str();
}


}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    int threads = 1, trials = 100, runs = 5;
    std::string out_dir;
    std::vector<size_t> ds = {4, 8, 16};
    bool blocks_wanted = true, transforms_wanted = true;
    std::vector<std::string> methods;  // empty: all
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return bench::option_value(argc, argv, i); };
        if (a == "--quick") quick = true;
        else if (a == "--threads") threads = std::stoi(next());
        else if (a == "--trials") trials = std::stoi(next());
        else if (a == "--runs") runs = std::stoi(next());
        else if (a == "--out") out_dir = next();
        else if (a == "--d") { ds.clear(); for (auto& d : bench::split(next(), ',')) ds.push_back(std::stoul(d)); }
        else if (a == "--no-blocks") blocks_wanted = false;
        else if (a == "--no-transforms") transforms_wanted = false;
        else if (a == "--methods") methods = bench::split(next(), ',');
        else {
            std::fprintf(stderr, "usage: %s [--quick] [--threads N] [--trials N] [--runs N] [--d 4,8,16] [--methods jiang,3d,3d-fused,3d-paper] [--no-blocks] [--no-transforms] [--out DIR]\n",
                         argv[0]);
            return 2;
        }
    }
    if (!quick && out_dir.empty()) out_dir = std::string(OBORO_SOURCE_DIR) + "/docs/benchmarks";
    if (!out_dir.empty()) bench::prepare_outputs({out_dir + "/matmul.json"});
    set_num_threads(threads);
    // --quick: a smoke test: d = 4 only, 2 trials, 1 run, one small block product.
    if (quick) ds = {4}, trials = 2, runs = 1;

    Bench B(Context::create(Parameters::preset("S2")));
    std::mt19937_64 gen(2026);
    std::vector<SquareRow> sq;
    for (size_t d : ds)
        for (const auto& m : kMethods) {
            if (!methods.empty() && std::find(methods.begin(), methods.end(), m.name) == methods.end()) continue;
            sq.push_back(run_square(B, m, d, runs, trials, gen));
            std::fprintf(stderr, "d=%zu %s: %.1f ms\n", d, m.name.c_str(), sq.back().ms);
        }
    // (m, k, n, base, d)
    struct BlockCase {
        size_t m, k, n;
        BlockBase base;
        size_t d;
    };
    std::vector<BlockCase> cases = {{64, 64, 64, BlockBase::jiang, 64},    {64, 64, 64, BlockBase::cube, 16},
                                    {128, 128, 128, BlockBase::jiang, 64}, {128, 128, 128, BlockBase::cube, 16},
                                    {256, 256, 256, BlockBase::jiang, 64}, {256, 256, 256, BlockBase::cube, 16},
                                    {100, 200, 50, BlockBase::jiang, 64}};
    if (quick) cases = {{12, 8, 4, BlockBase::cube, 4}};
    if (!blocks_wanted) cases.clear();
    std::vector<BlockRow> blocks;
    for (const auto& c : cases) {
        const bool big = c.m * c.k * c.n >= 128u * 128u * 128u;
        blocks.push_back(run_block(B, c.m, c.k, c.n, c.base, c.d, big ? 1 : std::min(runs, 3), gen));
        std::fprintf(stderr, "block %zux%zux%zu %s d=%zu: %.0f ms\n", c.m, c.k, c.n, blocks.back().base.c_str(), c.d,
                     blocks.back().ms);
    }

    std::vector<size_t> transform_sizes = {16, 64, 256};
    if (quick) transform_sizes = {16};
    if (!transforms_wanted) transform_sizes.clear();
    std::vector<TransformRow> transforms;
    for (size_t D : transform_sizes)
        for (const Hoisting h : {Hoisting::mod_up, Hoisting::mod_up_and_mod_down}) {
            transforms.push_back(run_transform(B, D, h, runs, gen));
            std::fprintf(stderr, "transform D=%zu %s hoisting: %.1f ms\n", D, hoisting_name(h), transforms.back().ms);
        }

    const std::string tables = tables_md(sq, blocks, ds, threads, trials) + transforms_md(transforms, threads);
    std::printf("%s", tables.c_str());
    if (out_dir.empty()) return 0;

    std::ofstream js = bench::output_file(out_dir + "/matmul.json");
    js << "{\n  \"benchmark\": \"bench_matmul\",\n  \"machine\": " << bench::machine_json() << ",\n  \"preset\": \"S2\",\n"
       << "  \"threads\": " << threads << ",\n  \"trials\": " << trials << ",\n  \"square\": [\n";
    for (size_t i = 0; i < sq.size(); ++i) {
        const auto& r = sq[i];
        const auto& p = kPaper.at({r.method == "jiang" ? "jiang" : "3d", r.d});
        js << "    {\"method\": \"" << r.method << "\", \"d\": " << r.d << ", \"ms\": " << fmt("%.2f", r.ms)
           << ", \"ops\": " << ops_json(r.ops) << ", \"mean_max_err\": " << fmt("%.4g", r.mean_max_err)
           << ", \"mean_min_err\": " << fmt("%.4g", r.mean_min_err) << ", \"paper_ms\": " << p.ms
           << ", \"paper_mean_max_err\": " << p.max_err << "}" << (i + 1 < sq.size() ? "," : "") << "\n";
    }
    js << "  ],\n  \"openfhe_numpy_ms\": {\"8\": " << kOpenfheNumpyUs.at(8) / 1e3 << ", \"16\": " << kOpenfheNumpyUs.at(16) / 1e3
       << "},\n  \"block\": [\n";
    for (size_t i = 0; i < blocks.size(); ++i) {
        const auto& b = blocks[i];
        js << "    {\"m\": " << b.m << ", \"k\": " << b.k << ", \"n\": " << b.n << ", \"base\": \"" << b.base
           << "\", \"d\": " << b.d << ", \"grid\": [" << b.gm << ", " << b.gk << ", " << b.gn << "], \"ms\": "
           << fmt("%.1f", b.ms) << ", \"ops\": " << ops_json(b.ops) << ", \"formula_matches\": "
           << (b.ops == b.formula ? "true" : "false") << ", \"max_err\": " << fmt("%.3g", b.max_err) << "}"
           << (i + 1 < blocks.size() ? "," : "") << "\n";
    }
    js << "  ],\n  \"transform\": [\n";
    for (size_t i = 0; i < transforms.size(); ++i) {
        const auto& t = transforms[i];
        js << "    {\"diagonals\": " << t.diagonals << ", \"slots\": " << t.slots << ", \"hoisting\": \""
           << hoisting_name(t.hoisting) << "\", \"ms\": " << fmt("%.2f", t.ms) << ", \"ops\": " << ops_json(t.ops)
           << ", \"max_err\": " << fmt("%.3g", t.max_err) << "}" << (i + 1 < transforms.size() ? "," : "") << "\n";
    }
    js << "  ]\n}\n";
    js.close();
    std::ofstream md = bench::output_file(out_dir + "/matmul.md");
    md << "# Encrypted matrix products (paper 003)\n\nGenerated by `build/bench/bench_matmul` on " << bench::utc_now() << " ("
       << bench::cpu_model() << ", " << std::thread::hardware_concurrency() << " hardware threads, "
       << bench::cpu_flags_summary() << "), S2 (N = 16384, {60,40,40,40,60} bits, scale 2^40). The machine is shared: "
       << "figures are noisy.\n\n![ms per product](matmul.png)\n\n"
       << tables;
    md.close();
    bench::run_plot("plot_matmul.py", "\"" + out_dir + "/matmul.json\" --out \"" + out_dir + "/matmul.png\"");
    std::fprintf(stderr, "bench_matmul: wrote %s/matmul.{json,md,png}\n", out_dir.c_str());
    return 0;
}

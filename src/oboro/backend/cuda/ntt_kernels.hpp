// Per-phase bodies of the batched multi-limb NTT kernels and of the fused rescale (host and
// device code; the CUDA kernels are in ntt.cu, the CPU emulation in grid_emulator.hpp).
//
// What one launch transforms: `rows = polys x limbs` rows of n = 2^log_n words. Row r is limb
// (r % limbs) of polynomial (r / limbs), found at data + poly * poly_stride + limb * n (a RowSet),
// and uses the tables tables[first_table + limb]. A batch of d ciphertexts of size s at level l
// is polys = d*s, limbs = l+1, poly_stride = (l+1)*n; "the last limb of every polynomial" is
// limbs = 1, first_table = l, data + l*n. So one launch covers every limb of a whole batch.
//
// The 2-kernel design (the usual one for n up to 2^17; SEEDS.md 000/001). Write n = 2^s1 * n2.
// The forward transform's first s1 stages (butterfly distances n/2 .. n2) only combine elements
// whose indices are equal mod n2: the n2 "columns" of 2^s1 elements (stride n2) are independent
// there. The last log_n - s1 stages (distances n2/2 .. 1) only combine elements of the same
// contiguous "chunk" of n2 elements. So:
//   pass 1 (columns): a block loads a tile of C adjacent columns (C consecutive words per column
//                     element: coalesced loads), runs the s1 stages in shared memory, stores;
//   pass 2 (chunks):  a block loads C adjacent chunks, runs the remaining stages, stores.
// The inverse transform is the mirror image: chunks first (distances 1 .. n2/2), then columns
// (n2 .. n/2, the last stage with n^{-1} folded in). Each pass reads global memory once and writes
// it once; every stage in between stays in shared memory.
//
// Phases: phase p of a pass runs stage p of that pass; a barrier separates phases. A thread loops
// over butterflies (tile butterflies / block threads of them); each butterfly reads its two
// elements (phase 0: from global memory) and writes them back (last phase: to global memory),
// so no element is touched by two threads within a phase. Butterflies and twiddles are exactly
// those of math::ntt_forward / ntt_inverse (math/ntt_butterfly.hpp, NttTables' psi_rev tables in
// the same indexing), so the result is bit for bit the CPU's.
//
// Fused rescale (paper 001 Algorithm 2.1, in oboro's exact divide_and_drop order, keyswitch.cpp),
// and in the same way ModDown with one special prime (a division by one dropped prime p):
//   1. inverse NTT of the dropped limb of every polynomial (2 launches), into scratch;
//   2. forward NTT of the kept limbs (2 launches) whose pass 1 does not read a row: it converts
//      the dropped limb's coefficient (centred, mod p) to the row's prime while loading, and whose
//      pass 2 does not store the NTT: it stores (x - ntt) * p^{-1} mod q_j, x the input limb.
// Four launches for any batch, and the converted limbs never exist in global memory in
// coefficient form.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "oboro/backend/cuda/thread_index.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/math/ntt_butterfly.hpp"
#include "oboro/util/error.hpp"

namespace oboro::cuda::kernels {

// The tables of one prime as the kernels read them: device pointers on the GPU, or pointers into
// a math::NttTables in the emulator (host_table_view).
struct NttTableView {
    uint64_t q = 0;
    const uint64_t* psi_rev = nullptr;
    const uint64_t* psi_rev_shoup = nullptr;
    const uint64_t* psi_inv_rev = nullptr;
    const uint64_t* psi_inv_rev_shoup = nullptr;
    uint64_t n_inv = 0, n_inv_shoup = 0, last_inv = 0, last_inv_shoup = 0;
};

inline NttTableView host_table_view(const math::NttTables& t) {
    NttTableView v;
    v.q = t.q;
    v.psi_rev = t.psi_rev.data();
    v.psi_rev_shoup = t.psi_rev_shoup.data();
    v.psi_inv_rev = t.psi_inv_rev.data();
    v.psi_inv_rev_shoup = t.psi_inv_rev_shoup.data();
    v.n_inv = t.n_inv;
    v.n_inv_shoup = t.n_inv_shoup;
    v.last_inv = t.last_inv;
    v.last_inv_shoup = t.last_inv_shoup;
    return v;
}

// Rows (poly, limb) at data + poly * poly_stride + limb * n.
struct RowSet {
    uint64_t* data = nullptr;
    uint64_t poly_stride = 0;
};

// How the transform is cut into passes and tiles (make_ntt_plan). tile_columns = tile_chunks =
// threads = 0: chosen per launch from its size (resolve_ntt_plan).
struct NttPlan {
    uint32_t log_n = 0;
    uint32_t split = 0;         // s1: stages of the columns pass; log_n - s1 in the chunks pass
    uint32_t tile_columns = 0;  // C of the columns pass (adjacent columns per block)
    uint32_t tile_chunks = 0;   // C of the chunks pass (adjacent chunks per block)
    uint32_t threads = 0;       // most threads per block
};

// Words of shared memory a tile holds at most: 4096 words = 32 KiB, within the 48 KiB a block
// gets without opt-in.
inline constexpr uint32_t ntt_tile_words = 4096;
inline constexpr uint32_t ntt_block_threads = 256;

// The tiles a plan chosen per launch uses (bench_gpu --ntt-plans on an H200, docs/benchmarks/gpu.md
// "NTT launch plans"). Each stage waits on the twiddle's and the shared memory's latency, so a
// launch of few words, whose blocks do not fill the GPU, is fastest with one butterfly per thread
// and stage (tiles of 512 words, 256 threads: the most blocks): 1.4-2x faster than tiles of 2048
// for the rescale of one ciphertext at N = 2^14 and the transform of one limb per polynomial.
// A launch of many words is fastest with four butterflies per thread (tiles of 1024 words, 128
// threads): the blocks fill the GPU many times over, and fewer of them share the per-block work;
// one butterfly per thread there is 20-25% slower. The sweep measured 2^18 words (small wins) and
// 3 x 2^20 (large wins), nothing in between; a launch switches at 2^20.
inline constexpr uint32_t ntt_small_launch_tile_words = 512, ntt_small_launch_threads = 256;
inline constexpr uint32_t ntt_large_launch_tile_words = 1024, ntt_large_launch_threads = 128;
inline constexpr uint64_t ntt_small_launch_max_words = uint64_t(1) << 20;
// With the default split a group (column or chunk) has at most 2^12 words = 32 KiB of shared
// memory, within the 48 KiB a block may use without opting in.
inline constexpr uint32_t ntt_max_log_n = 24;

// log2 of a power of two. The kernels index with shifts and masks, not divisions (an integer
// division by a run-time value costs tens of instructions on a GPU).
OBORO_HD uint32_t log2_pow2(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return uint32_t(__ffs(int(x)) - 1);
#else
    return uint32_t(std::countr_zero(x));
#endif
}

// split = 0 picks s1 = log_n / 2 (columns of 2^s1 <= chunks of 2^(log_n-s1)); otherwise
// 1 <= split <= log_n - 1. log_n >= 2. tile_words = 0 (the default): tiles and threads chosen per
// launch (resolve_ntt_plan); otherwise tile_words (at most ntt_tile_words) is rounded down to a power
// of two, so that the groups per tile are one too, and threads (at most ntt_block_threads) > 0.
inline NttPlan make_ntt_plan(uint32_t log_n, uint32_t split = 0, uint32_t tile_words = 0,
                             uint32_t threads = ntt_block_threads) {
    if (log_n < 2 || log_n > ntt_max_log_n) raise<ValueError>("NTT plan: log_n = ", log_n, " is not in [2, ", ntt_max_log_n, "]");
    if (split >= log_n) raise<ValueError>("NTT plan: split ", split, " must be below log_n = ", log_n);
    NttPlan p;
    p.log_n = log_n;
    p.split = split ? split : log_n / 2;
    if (tile_words == 0) return p;
    if (tile_words < 2 || tile_words > ntt_tile_words || threads == 0 || threads > ntt_block_threads)
        raise<ValueError>("NTT plan: tiles of ", tile_words, " words (2 to ", ntt_tile_words, "), ", threads,
                          " threads (1 to ", ntt_block_threads, ")");
    tile_words = std::bit_floor(tile_words);
    const uint32_t col_len = 1u << p.split, chunk_len = 1u << (log_n - p.split);
    // As many whole groups per tile as fit (at least one); a tile never exceeds the row.
    auto groups = [&](uint32_t len, uint32_t count) {
        uint32_t c = tile_words / len;
        if (c == 0) c = 1;
        return c < count ? c : count;
    };
    p.tile_columns = groups(col_len, chunk_len);  // there are n2 = chunk_len columns
    p.tile_chunks = groups(chunk_len, col_len);   // and 2^s1 = col_len chunks
    p.threads = threads;
    return p;
}

// The plan of a launch of `rows` rows: `plan` itself where its tiles are set, else the tiles for
// the launch's size (ntt_small_launch_* / ntt_large_launch_*).
inline NttPlan resolve_ntt_plan(const NttPlan& plan, uint64_t rows) {
    if (plan.tile_columns != 0) return plan;
    const bool small = (rows << plan.log_n) <= ntt_small_launch_max_words;
    return make_ntt_plan(plan.log_n, plan.split, small ? ntt_small_launch_tile_words : ntt_large_launch_tile_words,
                         small ? ntt_small_launch_threads : ntt_large_launch_threads);
}

// The launch plans bench_gpu --ntt-plans times (and test_cuda_device checks on the GPU): splits
// log_n/2 and log_n/2 - 1, tiles of 256 to 4096 words, 64 to 256 threads (at most one per butterfly
// of a tile).
inline std::vector<NttPlan> candidate_ntt_plans(uint32_t log_n) {
    std::vector<NttPlan> plans;
    for (uint32_t split : {log_n / 2, log_n / 2 - 1})
        for (uint32_t tile : {256u, 512u, 1024u, 2048u, 4096u})
            for (uint32_t threads : {64u, 128u, 256u})
                if (split >= 1 && threads <= tile / 2) plans.push_back(make_ntt_plan(log_n, split, tile, threads));
    return plans;
}

enum class NttPass : uint32_t { forward_columns, forward_chunks, inverse_chunks, inverse_columns };

OBORO_HD constexpr bool is_columns_pass(NttPass p) {
    return p == NttPass::forward_columns || p == NttPass::inverse_columns;
}
OBORO_HD constexpr bool is_forward_pass(NttPass p) {
    return p == NttPass::forward_columns || p == NttPass::forward_chunks;
}

// Per kept limb j of a division by one dropped prime p (rescale: p = q_l; ModDown with one
// special prime: p = P): Barrett of q_j, p mod q_j, p^{-1} mod q_j and its Shoup companion.
struct DropLimb {
    math::Barrett<uint64_t> br;
    uint64_t dropped_mod_q = 0;
    uint64_t inv = 0, inv_shoup = 0;
};

// kept_moduli: q_0 .. q_{kept-1}; inverses: p^{-1} mod q_j (backend::LevelConstants::inv_last for a
// rescale, p_inv for ModDown). out: `kept` entries.
inline void make_drop_limbs(const uint64_t* kept_moduli, uint32_t kept, uint64_t dropped_prime, const uint64_t* inverses,
                            DropLimb* out) {
    for (uint32_t j = 0; j < kept; ++j) {
        out[j].br = math::Barrett<uint64_t>(kept_moduli[j]);
        out[j].dropped_mod_q = out[j].br.reduce_word(dropped_prime);
        out[j].inv = inverses[j];
        out[j].inv_shoup = math::shoup_precompute(inverses[j], kept_moduli[j]);
    }
}

struct NttArgs {
    const NttTableView* tables = nullptr;
    uint32_t first_table = 0;
    uint32_t limbs = 1;       // limbs per polynomial in this row set
    uint32_t polys = 0;
    uint32_t row_offset = 0;  // first row of this launch (a launch covers at most max_grid_yz rows)
    NttPlan plan;
    // Pass 1 reads src and writes mid; pass 2 reads mid and writes dst. Any of them may be the
    // same rows (in place); mid = dst is the usual choice.
    RowSet src, mid, dst;

    // Forward only, fused rescale (both null for a plain transform):
    // - convert_src: pass 1 reads, for row (poly, limb), element k of the coefficient row
    //   convert_src + poly * convert_stride (values mod convert_prime), converted centred to the
    //   row's prime with drop[limb], instead of reading src;
    // - sub_from: pass 2 stores (x - y) * drop[limb].inv mod q, y the canonical NTT output and x
    //   the row of sub_from (same RowSet shape), instead of y.
    const uint64_t* convert_src = nullptr;
    uint64_t convert_stride = 0;
    uint64_t convert_prime = 0;
    RowSet sub_from;
    const DropLimb* drop = nullptr;  // `limbs` entries
};

// A plain transform of polys x limbs rows (tables first_table + limb), src -> dst (mid = dst).
inline NttArgs ntt_args(const NttTableView* tables, uint32_t first_table, uint32_t limbs, uint32_t polys,
                        const NttPlan& plan, RowSet src, RowSet dst) {
    NttArgs a;
    a.tables = tables;
    a.first_table = first_table;
    a.limbs = limbs;
    a.polys = polys;
    a.plan = plan;
    a.src = src;
    a.mid = a.dst = dst;
    return a;
}

// ---- pass geometry ------------------------------------------------------------------------------

OBORO_HD uint32_t pass_group_log(const NttPlan& p, NttPass pass) {
    return is_columns_pass(pass) ? p.split : p.log_n - p.split;
}
OBORO_HD uint32_t pass_tile_groups(const NttPlan& p, NttPass pass) {
    return is_columns_pass(pass) ? p.tile_columns : p.tile_chunks;
}
// Barrier-separated phases of a pass: one per stage.
inline uint32_t pass_phases(const NttPlan& p, NttPass pass) { return pass_group_log(p, pass); }
// Shared memory of a pass (words): one tile.
inline size_t pass_shared_words(const NttPlan& p, NttPass pass) {
    return size_t(pass_tile_groups(p, pass)) << pass_group_log(p, pass);
}
inline LaunchShape pass_shape(const NttPlan& p, NttPass pass, uint32_t rows) {
    const uint32_t group_log = pass_group_log(p, pass), groups = pass_tile_groups(p, pass);
    const uint32_t tile_butterflies = (groups << group_log) / 2;
    // There are 2^(log_n - group_log) groups in a row (columns: n2 of them; chunks: 2^s1).
    const uint32_t tiles = (1u << (p.log_n - group_log)) / groups;
    LaunchShape s;
    s.block = Dim3{tile_butterflies < p.threads ? tile_butterflies : p.threads, 1, 1};
    s.grid = Dim3{tiles, rows, 1};
    return s;
}

// ---- the per-phase body --------------------------------------------------------------------------

template <NttPass Pass>
OBORO_HD void ntt_phase(const ThreadIndex& t, uint64_t* shared, uint32_t phase, const NttArgs& a) {
    constexpr bool columns = is_columns_pass(Pass), forward = is_forward_pass(Pass);
    const NttPlan& plan = a.plan;
    const uint32_t log_n = plan.log_n, n2_log = log_n - plan.split;
    const uint64_t n = uint64_t(1) << log_n, n2 = uint64_t(1) << n2_log;
    const uint32_t group_log = columns ? plan.split : n2_log;  // a group: 2^group_log elements
    const uint32_t len = 1u << group_log, half = len >> 1;
    const uint32_t groups = columns ? plan.tile_columns : plan.tile_chunks;  // a power of two
    const uint32_t groups_log = log2_pow2(groups);
    const uint32_t g0 = t.block.x * groups;  // first column / chunk of this block's tile
    const bool first = phase == 0, last = phase + 1 == group_log;

    const uint32_t row = a.row_offset + t.block.y;
    const uint32_t poly = row / a.limbs, limb = row % a.limbs;
    const NttTableView& tb = a.tables[a.first_table + limb];
    const uint64_t q = tb.q;

    // Which RowSets this pass reads (phase 0) and writes (last phase).
    const RowSet& in = columns == forward ? a.src : a.mid;
    const RowSet& out = columns == forward ? a.mid : a.dst;
    const uint64_t in_row = poly * in.poly_stride + limb * n, out_row = poly * out.poly_stride + limb * n;

    // Stage distance inside a group: forward halves it every stage, inverse doubles it.
    const uint32_t dist_log = forward ? group_log - 1 - phase : phase;
    const uint32_t dist = 1u << dist_log;

    for (uint32_t beta = t.thread.x; beta < groups * half; beta += t.block_dim.x) {
        // Columns: consecutive threads take adjacent columns (coalesced); chunks: adjacent
        // butterflies of one chunk.
        const uint32_t g = columns ? beta & (groups - 1) : beta >> (group_log - 1);
        const uint32_t b = columns ? beta >> groups_log : beta & (half - 1);
        const uint32_t i_loc = b >> dist_log, j = b & (dist - 1);
        const uint32_t ax = (i_loc << (dist_log + 1)) + j, ay = ax + dist;  // positions in the group
        const uint64_t gx = columns ? uint64_t(ax) * n2 + g0 + g : (uint64_t(g0 + g) << group_log) + ax;
        const uint64_t gy = columns ? uint64_t(ay) * n2 + g0 + g : (uint64_t(g0 + g) << group_log) + ay;
        const uint32_t sx = columns ? (ax << groups_log) + g : (g << group_log) + ax;
        const uint32_t sy = columns ? (ay << groups_log) + g : (g << group_log) + ay;

        uint64_t x, y;
        if (!first) {
            x = shared[sx];
            y = shared[sy];
        } else if (Pass == NttPass::forward_columns && a.convert_src != nullptr) {
            const uint64_t* c = a.convert_src + poly * a.convert_stride;
            const DropLimb& dl = a.drop[limb];
            x = math::convert_from_one_prime(c[gx], a.convert_prime, dl.dropped_mod_q, true, dl.br);
            y = math::convert_from_one_prime(c[gy], a.convert_prime, dl.dropped_mod_q, true, dl.br);
        } else {
            x = in.data[in_row + gx];
            y = in.data[in_row + gy];
        }

        if constexpr (forward) {
            // global stage m = 2^(stage number), twiddle psi_rev[m + i], i = global pair block
            const uint32_t m = columns ? 1u << phase : 1u << (plan.split + phase);
            const uint32_t i = columns ? i_loc : ((g0 + g) << phase) + i_loc;
            math::ntt_forward_butterfly(x, y, tb.psi_rev[m + i], tb.psi_rev_shoup[m + i], q);
        } else if (columns && last) {
            math::ntt_inverse_last_butterfly(x, y, tb.n_inv, tb.n_inv_shoup, tb.last_inv, tb.last_inv_shoup, q);
        } else {
            // global half-size h = n / (2 * distance), twiddle psi_inv_rev[h + i]
            const uint32_t h = columns ? len >> (phase + 1) : uint32_t(n >> (phase + 1));
            const uint32_t i = columns ? i_loc : (g0 + g) * (len >> (phase + 1)) + i_loc;
            math::ntt_inverse_butterfly(x, y, tb.psi_inv_rev[h + i], tb.psi_inv_rev_shoup[h + i], q);
        }

        if (!last) {
            shared[sx] = x;
            shared[sy] = y;
        } else if (Pass == NttPass::forward_chunks) {
            x = math::ntt_forward_final_reduce(x, q);
            y = math::ntt_forward_final_reduce(y, q);
            if (a.sub_from.data != nullptr) {
                // divide_and_drop's sub_mul_scalar: (x - conv + q) * p^{-1}, Shoup
                const DropLimb& dl = a.drop[limb];
                const uint64_t* s = a.sub_from.data + poly * a.sub_from.poly_stride + limb * n;
                x = math::mul_shoup(s[gx] - x + q, dl.inv, dl.inv_shoup, q);
                y = math::mul_shoup(s[gy] - y + q, dl.inv, dl.inv_shoup, q);
            }
            out.data[out_row + gx] = x;
            out.data[out_row + gy] = y;
        } else {
            out.data[out_row + gx] = x;
            out.data[out_row + gy] = y;
        }
    }
}

// ---- pass sequences (shared by the CUDA launchers and the emulator) ----------------------------

// Calls run(pass, shape, shared_words, phases, args) for every launch of a forward (or inverse)
// transform, in order: pass 1 then pass 2, each split into launches of at most max_grid_yz rows
// (none for no rows).
template <typename Run> void for_each_ntt_launch(const NttArgs& args, bool forward, Run&& run) {
    const uint64_t rows = uint64_t(args.polys) * args.limbs;
    if (rows == 0) return;
    const NttPlan plan = resolve_ntt_plan(args.plan, rows);
    if (plan.threads > ntt_block_threads)
        raise<ValueError>("NTT launch: ", plan.threads, " threads per block exceed ", ntt_block_threads);
    const NttPass passes[2] = {forward ? NttPass::forward_columns : NttPass::inverse_chunks,
                               forward ? NttPass::forward_chunks : NttPass::inverse_columns};
    for (NttPass pass : passes)
        for (uint64_t r0 = 0; r0 < rows; r0 += max_grid_yz) {
            NttArgs part = args;
            part.row_offset = uint32_t(r0);
            const uint32_t count = uint32_t(rows - r0 < max_grid_yz ? rows - r0 : max_grid_yz);
            part.plan = plan;
            run(pass, pass_shape(plan, pass, count), pass_shared_words(plan, pass), pass_phases(plan, pass),
                static_cast<const NttArgs&>(part));
        }
}

// Division by one dropped prime p with rounding, backend::cpu divide_and_drop's algorithm, for `polys`
// polynomials in NTT form of kept+1 limbs: the kept limbs (primes q_0 .. q_{kept-1}, tables 0 ..
// kept-1) followed by the dropped one (table dropped_table). Output: kept limbs per polynomial,
// round(x / p) over the kept primes.
//  - rescale from level l: kept = l, dropped_table = l, inverses inv_last;
//  - ModDown with one special prime (an extended polynomial of l+1 limbs and P): kept = l+1,
//    dropped_table = the index of P's table (after all q tables), inverses p_inv.
struct DivideDropArgs {
    const NttTableView* tables = nullptr;  // tables 0 .. kept-1 and dropped_table
    const DropLimb* limbs = nullptr;       // `kept` entries (make_drop_limbs)
    uint64_t dropped_prime = 0;
    uint32_t dropped_table = 0;
    uint32_t kept = 0;                     // >= 1
    uint32_t polys = 0;
    NttPlan plan;
    RowSet in;   // kept+1 limbs per polynomial (the dropped limb at kept*n); not modified unless out aliases it
    RowSet out;  // kept limbs per polynomial; either `in` itself (same stride: in place) or disjoint from it
    uint64_t* scratch = nullptr;  // divide_drop_scratch_words(polys, kept, n) words
};

inline size_t divide_drop_scratch_words(uint32_t polys, uint32_t kept, uint64_t n) {
    return size_t(polys) * (kept + 1) * n;
}

// The two transforms of a division (see the top of this file): run(args, forward) for each.
template <typename Run> void for_each_divide_drop_transform(const DivideDropArgs& r, Run&& run) {
    if (r.kept == 0) raise<ValueError>("divide and drop: no limb is kept");
    const uint64_t n = uint64_t(1) << r.plan.log_n;
    uint64_t* dropped_coeffs = r.scratch;                  // polys x n
    uint64_t* converted = r.scratch + uint64_t(r.polys) * n;  // polys x kept x n, pass-1 output

    NttArgs inv;
    inv.tables = r.tables;
    inv.first_table = r.dropped_table;
    inv.limbs = 1;
    inv.polys = r.polys;
    inv.plan = r.plan;
    inv.src = RowSet{r.in.data + r.kept * n, r.in.poly_stride};
    inv.mid = inv.dst = RowSet{dropped_coeffs, n};
    run(static_cast<const NttArgs&>(inv), false);

    NttArgs fwd;
    fwd.tables = r.tables;
    fwd.first_table = 0;
    fwd.limbs = r.kept;
    fwd.polys = r.polys;
    fwd.plan = r.plan;
    fwd.convert_src = dropped_coeffs;
    fwd.convert_stride = n;
    fwd.convert_prime = r.dropped_prime;
    fwd.drop = r.limbs;
    fwd.mid = RowSet{converted, r.kept * n};
    fwd.sub_from = r.in;
    fwd.dst = r.out;
    run(static_cast<const NttArgs&>(fwd), true);
}

}  // namespace oboro::cuda::kernels

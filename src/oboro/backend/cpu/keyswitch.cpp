#include "oboro/backend/cpu/keyswitch.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <cstring>
#include <vector>

#include "oboro/backend/cpu/eltwise.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/util/buffer.hpp"
#include "oboro/util/error.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::backend::cpu {

namespace {
// The most limbs an extended polynomial can have: the security bound (3523 bits at logN 17) with
// primes of at least 20 bits allows 176, so pointer tables of this size live on the stack.
constexpr size_t kMaxExtLimbs = 256;
// Coefficients per block of key_inner_products' permuted digits and unpacked or drawn key words:
// in-process A/B against blocks of 1024 and 2048 and against whole permuted limbs (AMD EPYC, one
// thread, 4 rotations' products at the top level, whole keys): about 0.89 of whole limbs' time at
// B1 and 0.93 at S4 (0.93 at B1 with seeded keys), the same at S1 and S2, whose limbs fit in cache
// (docs/benchmarks/key_inner_blocks_ab.json).
constexpr size_t kUnpackBlock = 4096;
// A key limb of 8-byte words (key_switch_key.hpp) read in place.
const uint64_t* key_words(const uint8_t* limb) { return reinterpret_cast<const uint64_t*>(limb); }
}  // namespace

void mod_up(const Ring& ring, const LevelConstants& lc, const uint64_t* c, uint64_t* digits_out, Workspace& ws) {
    const size_t n = ring.n(), nq = size_t(lc.level + 1), ne = lc.ext_limbs();
    const auto& digits = lc.digits;
    if (ne > kMaxExtLimbs) raise<ParameterError>("mod_up: ", ne, " limbs exceed the supported ", kMaxExtLimbs);
    Workspace::Scope scope(ws);

    // Coefficient form of every limb, shared by all digits: each limb copied and transformed while
    // the copy is still in cache.
    uint64_t* coeff = ws.take(nq * n);
    parallel_for(nq, [&](size_t i) {
        std::memcpy(coeff + i * n, c + i * n, n * sizeof(uint64_t));
        ntt_inverse_limb(coeff + i * n, ring.ntt_tables()[i]);
    });
    // One base-conversion scratch per digit, taken here because the digits run in parallel.
    const size_t per_digit = base_convert_scratch_words(ring.max_digit_primes(), n);
    uint64_t* scratch = ws.take(digits.size() * per_digit);

    // Each digit's own limbs are c itself (already in NTT form); its conversion's inputs are
    // prepared once for all of its target limbs.
    parallel_for(digits.size(), [&](size_t j) {
        const DigitConversion& d = digits[j];
        uint64_t* ext = digits_out + j * ne * n;
        std::memcpy(ext + d.begin * n, c + d.begin * n, (d.end - d.begin) * n * sizeof(uint64_t));
        base_convert_prepare(d.to_others, coeff + d.begin * n, n, n, scratch + j * per_digit, true);
    });
    // Every other limb of every digit: its base conversion, then its NTT. The (digit, limb) pairs
    // are the parallel items, not the digits, so that the threads share the work evenly whatever
    // the number of digits.
    // Target t of digit j is the t-th limb of Q_level * P outside the digit, in order.
    std::array<size_t, kMaxExtLimbs + 1> first_item;  // digits <= limbs <= kMaxExtLimbs
    first_item[0] = 0;
    for (size_t j = 0; j < digits.size(); ++j)
        first_item[j + 1] = first_item[j] + ne - (digits[j].end - digits[j].begin);
    parallel_for(first_item[digits.size()], [&](size_t item) {
        size_t j = 0;
        while (item >= first_item[j + 1]) ++j;
        const DigitConversion& d = digits[j];
        const size_t t = item - first_item[j], i = t < d.begin ? t : t + (d.end - d.begin);
        uint64_t* limb = digits_out + (j * ne + i) * n;
        base_convert_limb(d.to_others, t, coeff + d.begin * n, scratch + j * per_digit, limb, n, true);
        ntt_forward_limb(limb, i < nq ? ring.ntt_tables()[i] : ring.p_ntt_tables()[i - nq]);
    });
}

void mod_up(const Ring& ring, const LevelConstants& lc, const uint64_t* c, uint64_t* digits_out) {
    auto ws = scratch_pool().acquire();
    mod_up(ring, lc, c, digits_out, *ws);
}

void key_inner_products(const Ring& ring, const LevelConstants& lc, const uint64_t* digits, size_t count,
                        const uint32_t* const* perms, const KeySwitchKeyView* const* keys, uint64_t* const* acc0s,
                        uint64_t* const* acc1s, bool accumulate) {
    const int level = lc.level;
    const size_t n = ring.n(), nq = size_t(level + 1), ne = lc.ext_limbs();
    const size_t beta = lc.digits.size();
    const EltwiseKernels& kn = eltwise_active();
    parallel_for(ne, [&](size_t i) {
        const math::Modulus& m = i < nq ? ring.moduli()[i] : ring.p_moduli()[i - nq];
        // A block of coefficients at a time wherever a product needs more than its operands'
        // words in place: each digit's block permuted for a rotation, and the key's (b_j, a_j)
        // words unpacked (key_switch_key.hpp) or drawn from its seed, small enough to stay in the
        // second-level cache with the digits' block they multiply (whole permuted limbs would be
        // written and read back through the last-level cache: 3 MiB a product at N = 2^16 with 6
        // digits).
        const size_t block = std::min(n, kUnpackBlock);
        uint64_t* permuted = nullptr;  // taken at the first rotation
        uint64_t* unpacked = nullptr;  // taken at the first packed or seeded limb
        // A workspace of its own, leased inside the caller's: the pool lends its largest idle one
        // first (util/workspace.hpp), so the operations keep taking the same large one and this
        // lease grows its own only to the blocks.
        std::optional<WorkspacePool::Lease> ws;
        std::optional<Workspace::Scope> scope;
        auto take = [&](size_t words) {
            if (!ws) {
                ws.emplace(scratch_pool().acquire());
                scope.emplace(**ws);
            }
            return (*ws)->take(words);
        };
        std::vector<math::Prng> a_streams;  // for keys whose a_j are drawn from their seed
        DotTerm terms[kMaxDotTerms];
        // Every product of this limb before the next limb: its beta digit limbs are read from
        // memory once and stay in cache for the other products.
        for (size_t r = 0; r < count; ++r) {
            const KeySwitchKeyView& key = *keys[r];
            // limb i of the extended basis is limb `ki` of the key (which spans Q*P', or Q_l'*P')
            const size_t ki = key.key_limb(i, level);
            const uint32_t* perm = perms ? perms[r] : nullptr;
            const uint32_t width = key.word_bytes(ki);
            const bool seeded = !key.a_stored(), in_place = width == 8 && !seeded;
            // beta <= 64 = kMaxDotTerms: the parameters allow at most 64 primes in the chain.
            // Fused multiply-add with a single reduction (paper 004): the beta products are
            // summed in 128 bits and reduced once, in the SIMD table of this CPU.
            const bool acc = accumulate || (r > 0 && acc0s[r] == acc0s[0]);
            if (!perm && in_place) {  // every operand read in place, in one pass
                for (size_t j = 0; j < beta; ++j)
                    terms[j] = {digits + (j * ne + i) * n, key_words(key.limb(j, 0, ki)), key_words(key.limb(j, 1, ki))};
                kn.dot2(acc0s[r] + i * n, acc1s[r] + i * n, terms, beta, acc, m, n);
                continue;
            }
            if (perm && !permuted) permuted = take(beta * block);
            if (!in_place && !unpacked) unpacked = take(2 * beta * block);
            // Seeded a_j: each digit's generator at the start of this limb, drawing it a block at
            // a time in order.
            a_streams.clear();
            if (seeded) {
                a_streams.reserve(beta);  // no move of a generator (each wipes its state)
                for (size_t j = 0; j < beta; ++j) a_streams.push_back(key.a_stream(j, ki));
            }
            for (size_t c = 0; c < n; c += block) {
                for (size_t j = 0; j < beta; ++j) {
                    const uint64_t* x = digits + (j * ne + i) * n;
                    if (perm) {
                        // the automorphism's permutation maps aligned groups of 8 onto aligned
                        // groups (eltwise.hpp), so a block of it reads whole groups of x
                        kn.permute_automorphism(permuted + j * block, x, perm + c, block);
                        x = permuted + j * block;
                    } else {
                        x += c;
                    }
                    // b_j and a_j in place where stored as 8-byte words, else into this digit's
                    // two unpacked blocks
                    uint64_t* u = in_place ? nullptr : unpacked + 2 * j * block;
                    const uint64_t* b = u;
                    if (width == 8) b = key_words(key.limb(j, 0, ki)) + c;
                    else kn.unpack_key_words(u, key.limb(j, 0, ki), n, width, c, block);
                    const uint64_t* a = in_place ? key_words(key.limb(j, 1, ki)) + c : u + block;
                    if (seeded) a_streams[j].uniform_fill(key.moduli[ki], u + block, block);
                    else if (!in_place) kn.unpack_key_words(u + block, key.limb(j, 1, ki), n, width, c, block);
                    terms[j] = {x, b, a};
                }
                kn.dot2(acc0s[r] + i * n + c, acc1s[r] + i * n + c, terms, beta, acc, m, block);
            }
        }
    });
}

void key_inner_product(const Ring& ring, const LevelConstants& lc, const uint64_t* digits, const KeySwitchKeyView& key,
                       uint64_t* acc0, uint64_t* acc1, bool accumulate, const uint32_t* perm) {
    const KeySwitchKeyView* keys[1] = {&key};
    const uint32_t* perms[1] = {perm};
    key_inner_products(ring, lc, digits, 1, perm ? perms : nullptr, keys, &acc0, &acc1, accumulate);
}

namespace {
enum class Dropped { p, last_q_and_p, last_q };

// Divides x (NTT form over Q_level, followed by the special limbs when P is dropped) by the
// product D of the dropped primes with rounding: the dropped limbs, in coefficient form, are
// converted (centred, so the division rounds) to the kept primes and subtracted, then the
// difference is multiplied by D^{-1}. `dropped` holds the dropped limbs (normally the tail of x)
// and is taken to coefficient form in place; x's kept limbs are only read. `out` may alias the
// front of x.
void divide_and_drop(const Ring& ring, const LevelConstants& lc, const uint64_t* x, uint64_t* dropped_data,
                     uint64_t* out, Dropped dropped, Workspace& ws) {
    const int level = lc.level;
    const size_t n = ring.n(), nq = size_t(level + 1), k = lc.special;
    const bool drop_q = dropped != Dropped::p, drop_p = dropped != Dropped::last_q;
    const size_t kept = drop_q ? nq - 1 : nq, dropped_limbs = (drop_q ? 1 : 0) + (drop_p ? k : 0);
    // The dropped limbs to coefficient form: the last q (when dropped) first, then P.
    parallel_for(dropped_limbs, [&](size_t t) {
        const bool q_limb = drop_q && t == 0;
        ntt_inverse_limb(dropped_data + t * n,
                         q_limb ? ring.ntt_tables()[level] : ring.p_ntt_tables()[t - (drop_q ? 1 : 0)]);
    });
    const math::BaseConverter& converter =
        dropped == Dropped::p ? lc.p_to_q : dropped == Dropped::last_q_and_p ? lc.qlp_to_q : lc.ql_to_q;
    const std::vector<uint64_t>& inverse =
        dropped == Dropped::p ? lc.p_inv : dropped == Dropped::last_q_and_p ? lc.qlp_inv : lc.inv_last;
    Workspace::Scope scope(ws);
    uint64_t* conv = ws.take(kept * n);
    uint64_t* scratch = ws.take(base_convert_scratch_words(dropped_limbs, n));
    base_convert_prepare(converter, dropped_data, n, n, scratch, true);
    // Each kept limb in one go while it is in cache, one limb per parallel item: its conversion
    // (about a third of a ModDown's work), its NTT and the division.
    parallel_for(kept, [&](size_t i) {
        uint64_t* limb = conv + i * n;
        base_convert_limb(converter, i, dropped_data, scratch, limb, n, true);
        ntt_forward_limb(limb, ring.ntt_tables()[i]);
        sub_mul_scalar(out + i * n, x + i * n, limb, inverse.data() + i, ring.moduli() + i, 1, n);
    });
}
}  // namespace

void mod_down(const Ring& ring, const LevelConstants& lc, uint64_t* ext, uint64_t* out, Workspace& ws) {
    divide_and_drop(ring, lc, ext, ext + size_t(lc.level + 1) * ring.n(), out, Dropped::p, ws);
}

void mod_down(const Ring& ring, const LevelConstants& lc, const uint64_t* q_limbs, uint64_t* special, uint64_t* out,
              Workspace& ws) {
    divide_and_drop(ring, lc, q_limbs, special, out, Dropped::p, ws);
}

void mod_down(const Ring& ring, const LevelConstants& lc, uint64_t* ext, uint64_t* out) {
    auto ws = scratch_pool().acquire();
    mod_down(ring, lc, ext, out, *ws);
}

void mod_down_rescale(const Ring& ring, const LevelConstants& lc, uint64_t* ext, uint64_t* out, Workspace& ws) {
    divide_and_drop(ring, lc, ext, ext + size_t(lc.level) * ring.n(), out, Dropped::last_q_and_p, ws);
}

void mod_down_rescale(const Ring& ring, const LevelConstants& lc, const uint64_t* kept, uint64_t* dropped,
                      uint64_t* out, Workspace& ws) {
    divide_and_drop(ring, lc, kept, dropped, out, Dropped::last_q_and_p, ws);
}

void rescale_poly(const Ring& ring, int level, uint64_t* poly, Workspace& ws) {
    divide_and_drop(ring, ring.level(level), poly, poly + size_t(level) * ring.n(), poly, Dropped::last_q, ws);
}

void rescale_poly(const Ring& ring, int level, const uint64_t* in, uint64_t* out, Workspace& ws) {
    const size_t n = ring.n();
    Workspace::Scope scope(ws);
    uint64_t* last = ws.take(n);  // the dropped limb goes to coefficient form: work on a copy
    std::memcpy(last, in + size_t(level) * n, n * sizeof(uint64_t));
    divide_and_drop(ring, ring.level(level), in, last, out, Dropped::last_q, ws);
}

void rescale_poly(const Ring& ring, int level, uint64_t* poly) {
    auto ws = scratch_pool().acquire();
    rescale_poly(ring, level, poly, *ws);
}

void key_switch(const Ring& ring, int level, const uint64_t* c, const KeySwitchKeyView& key, uint64_t* out0,
                uint64_t* out1, Workspace& ws) {
    const LevelConstants& lc = switch_level(ring, level, key);
    const size_t n = ring.n(), ne = lc.ext_limbs();
    Workspace::Scope scope(ws);
    uint64_t* digits = ws.take(lc.digits.size() * ne * n);
    uint64_t* acc = ws.take(2 * ne * n);
    mod_up(ring, lc, c, digits, ws);
    key_inner_product(ring, lc, digits, key, acc, acc + ne * n);
    mod_down(ring, lc, acc, out0, ws);
    mod_down(ring, lc, acc + ne * n, out1, ws);
}

void key_switch(const Ring& ring, int level, const uint64_t* c, const KeySwitchKeyView& key, uint64_t* out0,
                uint64_t* out1) {
    auto ws = scratch_pool().acquire();
    key_switch(ring, level, c, key, out0, out1, *ws);
}

}  // namespace oboro::backend::cpu

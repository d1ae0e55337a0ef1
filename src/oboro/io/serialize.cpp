// Payload layouts (after the record header, all little-endian; "poly(L)" is L limbs, limb i
// bit-packed at bit_width(q_i) bits where q_i is the context's i-th modulus, Q first then P):
//
//   context      str label, i32 log_n, u32 #q, i32 q_bits[], u32 #p, i32 p_bits[], i32 dnum,
//                from version 10 u32 #digits, i32 primes of each key-switching digit[] (before:
//                the uniform split, legacy_digits), f64 scale, u8 secret distribution, i32 hamming
//                weight, u8 security, u32 #primes, u64 primes[] (Q then P)
//   plaintext    i32 level, f64 scale, u64 slots, poly(level+1), array info
//   ciphertext   u32 polys, i32 level, f64 scale, u64 slots, u8 flags (1 = seeded), [32-byte seed],
//                poly(level+1) for each polynomial (polynomial 1 omitted when seeded), array info
//   array info   u64 key id, u32 ndim, u64 shape[ndim], u8 complex
//   ciphertext batch (format version 2)
//                u64 count, u32 polys, i32 level, f64 scale, u64 slots, u8 flags (1 = seeds), then
//                per element: [u8 flags, [32-byte seed] when the batch has seeds], poly(level+1) for
//                each polynomial (polynomial 1 omitted when the element is seeded); array info of
//                one element
//   encrypted matrix (format version 2)
//                u8 method (0 jiang, 1 3d, 2 block), u64 rows, u64 cols, u64 d, u32 grid rows,
//                u32 grid cols, u64 key id, then grid rows x grid cols whole ciphertext records
//                (row-major, each with its own header and checksum)
//   public key   u8 flags, [seed], b = poly(#q+#p), [a = poly(#q+#p) unless seeded]
//   relin key    switching key: u32 digits, u8 flags, [seed], b_j for each digit, [a_j unless seeded]
//   Galois keys  u32 count, then per key: u64 Galois element, switching key (as above)
//   secret key   n coefficients at 2 bits each (0 -> 0, 1 -> +1, 2 -> -1)
//   bundle       u32 count, then whole records
#include "oboro/io/serialize.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <span>

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/ckks/sampling.hpp"
#include "oboro/io/checksum.hpp"
#include "oboro/util/error.hpp"

namespace oboro::io {

using namespace oboro::ckks;

namespace {

constexpr uint8_t kSeeded = 1;
constexpr size_t kMaxLabel = 1024;
constexpr size_t kMaxDims = 32;

size_t qp_limbs(const Context& ctx) { return ctx.q_count() + ctx.p_count(); }

// A polynomial's limbs are packed with the bits of their moduli: the first `limbs` moduli of the
// context (Q, then P), or an explicit basis (a switching key made at a lower level: keys.hpp).
size_t poly_bytes(const Context& ctx, std::span<const math::Modulus> basis) {
    size_t total = 0;
    for (const math::Modulus& m : basis) total += packed_size(ctx.n(), residue_bits(m.value));
    return total;
}
size_t poly_bytes(const Context& ctx, size_t limbs) { return poly_bytes(ctx, std::span(ctx.moduli(), limbs)); }

void write_poly(Writer& w, const Context& ctx, const uint64_t* poly, std::span<const math::Modulus> basis) {
    for (size_t i = 0; i < basis.size(); ++i) w.packed(poly + i * ctx.n(), ctx.n(), residue_bits(basis[i].value));
}
void write_poly(Writer& w, const Context& ctx, const uint64_t* poly, size_t limbs) {
    write_poly(w, ctx, poly, std::span(ctx.moduli(), limbs));
}

void read_poly(Reader& r, const Context& ctx, uint64_t* out, std::span<const math::Modulus> basis, const char* field) {
    for (size_t i = 0; i < basis.size(); ++i) r.packed(out + i * ctx.n(), ctx.n(), basis[i].value, field);
}
void read_poly(Reader& r, const Context& ctx, uint64_t* out, size_t limbs, const char* field) {
    read_poly(r, ctx, out, std::span(ctx.moduli(), limbs), field);
}

// Fails unless `bytes` more are available: called before allocating for them.
void require(Reader& r, size_t bytes, const char* field) {
    if (bytes > r.remaining())
        r.fail(oboro::detail::concat("truncated data: ", field, " needs ", bytes, " bytes but only ", r.remaining(),
                              " are left"));
}

// Objects over the extended basis Q_level * P are intermediates of double hoisting, not data.
void check_basis(const char* what, Basis basis) {
    if (basis != Basis::q)
        raise<ValueError>("serialize: the ", what, " is over the extended basis Q_level * P (an intermediate of "
                          "double hoisting); mod_down it before serializing");
}

void check_owner(uint64_t object_id, const Context& ctx, const char* what) {
    if (object_id != ctx.id())
        raise<ContextMismatch>("serialize: the ", what, " belongs to another parameter set than the context given");
}

// The record of the expected type spanning all of `data`, for `ctx` (nullptr: no context check).
RecordView open(ByteView data, ObjectType expected, const Context* ctx) {
    const std::string what = to_string(expected);
    const RecordView v = read_record(data, what);
    if (v.type != expected)
        raise<SerializationError>("deserialize ", what, ": the data holds a ", to_string(v.type), ", not a ", what);
    if (v.size != data.size())
        raise<SerializationError>("deserialize ", what, ": ", data.size() - v.size,
                                  " unexpected bytes after the end of the record");
    if (ctx && v.context_id != ctx->id())
        raise<SerializationError>("deserialize ", what, ": the data was written for other parameters (context id ",
                                  std::hex, v.context_id, ", this context has ", ctx->id(), ")");
    return v;
}

Bytes finish(Bytes& out, Writer& w, size_t start) {
    finish_record(w, start);
    return std::move(out);
}

// ---- the seed of a uniform half: a flags byte (kSeeded or 0), then the seed when set ----

void write_seed(Writer& w, const std::optional<math::Seed>& seed) {
    w.u8(seed ? kSeeded : 0);
    if (seed) w.raw(seed->data(), seed->size());
}

std::optional<math::Seed> read_seed(Reader& r) {
    const uint8_t flags = r.u8("the flags");
    if (flags & ~kSeeded) r.fail(oboro::detail::concat("unknown flags 0x", std::hex, int(flags)));
    if (!(flags & kSeeded)) return std::nullopt;
    math::Seed seed;
    r.raw(seed.data(), seed.size(), "the seed");
    return seed;
}

// ---- switching keys (relinearization and Galois) ----

// A switching key: u32 digits, u8 flags (kSeeded; kKeyLevel when the key was made below the top
// level; kKeySpecial when over fewer special primes than the parameters'), [u32 level], [u32
// special primes], [seed], the b_j, [the a_j unless seeded]. Keys of the top level over all of P
// are written exactly as before levels existed.
constexpr uint8_t kKeyLevel = 2;
constexpr uint8_t kKeySpecial = 4;

void write_switching_key(Writer& w, const Context& ctx, const KeySwitchKey& key, bool compress) {
    check_owner(key.context_id, ctx, "key");
    const int level = key_level(key);
    if (level < 0 || level > ctx.max_level() || key.special < 1 || key.special > ctx.p_count() ||
        key.digits != ctx.ring().digits_at(level) || key.n != ctx.n())
        raise<ValueError>("serialize: the switching key has ", key.digits, " digits of ", key.qp_limbs, " limbs (",
                          key.special, " special), which is no level of these parameters (", ctx.num_digits(),
                          " digits of ", qp_limbs(ctx), " limbs at the top level)");
    const bool seeded = compress && key.a_seed.has_value();
    const bool reduced = level != ctx.max_level(), partial = key.special != ctx.p_count();
    const std::vector<math::Modulus> basis = key_basis(ctx, level, key.special);
    w.u32(uint32_t(key.digits));
    w.u8(uint8_t((seeded ? kSeeded : 0) | (reduced ? kKeyLevel : 0) | (partial ? kKeySpecial : 0)));
    if (reduced) w.u32(uint32_t(level));
    if (partial) w.u32(uint32_t(key.special));
    if (seeded) w.raw(key.a_seed->data(), key.a_seed->size());
    AlignedBuffer<uint64_t> words(key.qp_limbs * key.n);
    for (size_t half = 0; half < (seeded ? 1 : 2); ++half)
        for (size_t j = 0; j < key.digits; ++j) {
            key.load(j, half, words.data());
            write_poly(w, ctx, words.data(), basis);
        }
}

// keep_seeded: a key stored as its seed keeps its a_j as that seed in memory too
// (KeySwitchKey::seed_a_halves), without storing them first; a key stored whole stays whole.
KeySwitchKey read_switching_key(Reader& r, const Context& ctx, bool keep_seeded = false) {
    const size_t n = ctx.n();
    const uint32_t digits = r.u32("the digit count");
    const uint8_t flags = r.u8("the flags");
    if (flags & ~(kSeeded | kKeyLevel | kKeySpecial)) r.fail(oboro::detail::concat("unknown flags 0x", std::hex, int(flags)));
    int level = ctx.max_level();
    if (flags & kKeyLevel) {
        const uint32_t l = r.u32("the key's level");
        if (l >= uint32_t(ctx.max_level()))
            r.fail(oboro::detail::concat("a key level of ", l, " is not below the top level ", ctx.max_level()));
        level = int(l);
    }
    size_t special = ctx.p_count();
    if (flags & kKeySpecial) {
        const uint32_t k = r.u32("the key's special primes");
        if (k < 1 || k >= ctx.p_count())
            r.fail(oboro::detail::concat("a key over ", k, " special primes is not over 1..", ctx.p_count() - 1));
        special = k;
    }
    if (digits != ctx.ring().digits_at(level))
        r.fail(oboro::detail::concat("the key has ", digits, " digits but these parameters use ", ctx.ring().digits_at(level),
                              " at level ", level));
    const std::vector<math::Modulus> basis = key_basis(ctx, level, special);
    std::optional<math::Seed> seed;
    if (flags & kSeeded) {
        seed.emplace();
        r.raw(seed->data(), seed->size(), "the seed");
    }
    require(r, (seed ? 1 : 2) * digits * poly_bytes(ctx, basis), "the key polynomials");
    const size_t limbs = basis.size();
    KeySwitchKey key = KeySwitchKey::allocate(basis, special, digits, n);
    key.context_id = ctx.id();
    key.a_seed = seed;
    // read_poly checks that every word is below its prime, as the packed limbs need
    AlignedBuffer<uint64_t> words(limbs * n);
    for (size_t j = 0; j < digits; ++j) {
        read_poly(r, ctx, words.data(), basis, "a key polynomial b");
        key.store(j, 0, words.data());
    }
    if (seed) key.a_positions.resize(digits * limbs);
    const bool store_a = !(seed && keep_seeded);
    for (size_t j = 0; j < digits; ++j) {
        if (seed) expand_uniform(*seed, j, words.data(), basis.data(), limbs, n, key.a_positions.data() + j * limbs);
        else read_poly(r, ctx, words.data(), basis, "a key polynomial a");
        if (store_a) key.store(j, 1, words.data());
    }
    if (!store_a) key.seed_a_halves();
    key.name_words();
    return key;
}

int32_t checked_i32(Reader& r, const char* field, int32_t lo, int32_t hi) {
    const int32_t v = r.i32(field);
    if (v < lo || v > hi) r.fail(oboro::detail::concat(field, " = ", v, " is outside ", lo, "..", hi));
    return v;
}

void check_slots(Reader& r, uint64_t slots, const Context& ctx) {
    if (slots == 0 || !std::has_single_bit(slots) || slots > ctx.max_slots())
        r.fail(oboro::detail::concat("slots = ", slots, " is not a power of two in 1..", ctx.max_slots()));
}

void check_info(const ArrayInfo& info) {
    if (info.shape.size() > kMaxDims)
        raise<ValueError>("serialize: a shape of ", info.shape.size(), " dimensions (at most ", kMaxDims, ")");
}

void write_info(Writer& w, const ArrayInfo& info) {
    w.u64(info.key_id);
    w.u32(uint32_t(info.shape.size()));
    for (uint64_t d : info.shape) w.u64(d);
    w.u8(info.is_complex ? 1 : 0);
}

ArrayInfo read_info(Reader& r, uint64_t slots) {
    ArrayInfo meta;
    meta.key_id = r.u64("the key id");
    const uint32_t ndim = r.u32("the number of dimensions");
    if (ndim > kMaxDims) r.fail(oboro::detail::concat(ndim, " dimensions (at most ", kMaxDims, ")"));
    uint64_t count = 1;
    for (uint32_t i = 0; i < ndim; ++i) {
        const uint64_t d = r.u64("a dimension");
        if (d == 0 || d > slots || count * d > slots)
            r.fail(oboro::detail::concat("the shape does not fit into the ", slots, " slots"));
        count *= d;
        meta.shape.push_back(d);
    }
    const uint8_t is_complex = r.u8("the complex flag");
    if (is_complex > 1) r.fail(oboro::detail::concat("complex flag ", int(is_complex), " is not 0 or 1"));
    meta.is_complex = is_complex;
    return meta;
}

double read_scale(Reader& r) {
    const double scale = r.f64("the scale");
    if (!(std::isfinite(scale) && scale > 0)) r.fail(oboro::detail::concat("the scale ", scale, " is not a positive number"));
    return scale;
}

// The fields a ciphertext and a batch's elements share: u32 polys, i32 level, f64 scale, u64 slots.
struct CiphertextFields {
    uint32_t polys = 0;
    int level = 0;
    double scale = 0;
    uint64_t slots = 0;
};

void write_fields(Writer& w, size_t polys, int level, double scale, size_t slots) {
    w.u32(uint32_t(polys));
    w.i32(level);
    w.f64(scale);
    w.u64(slots);
}

CiphertextFields read_fields(Reader& r, const Context& ctx) {
    CiphertextFields f;
    f.polys = r.u32("the polynomial count");
    if (f.polys < 2 || f.polys > 3) r.fail(oboro::detail::concat("a ciphertext of ", f.polys, " polynomials (2 or 3 expected)"));
    f.level = checked_i32(r, "the level", 0, ctx.max_level());
    f.scale = read_scale(r);
    f.slots = r.u64("the slot count");
    check_slots(r, f.slots, ctx);
    return f;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Context

namespace {
// The key-switching digits of a context stored before version 10: runs of ceil(#q / dnum) primes,
// with dnum == 0 the fewest such digits that each fit under P (empty when none does: validate()
// then refuses the parameters).
std::vector<int> legacy_digits(const Parameters& p) {
    if (p.dnum > 0) return uniform_digits(p.q_bits.size(), p.dnum);
    return fewest_uniform_digits(p);
}
}  // namespace

Bytes serialize(const Context& ctx, const std::string& label) {
    if (label.size() > kMaxLabel) raise<ValueError>("serialize: the label has ", label.size(), " bytes (at most ", kMaxLabel, ")");
    Bytes out;
    Writer w(out);
    const size_t start = begin_record(w, ObjectType::context, ctx.id());
    const Parameters& p = ctx.params();
    w.str(label);
    w.i32(p.log_n);
    w.u32(uint32_t(p.q_bits.size()));
    for (int b : p.q_bits) w.i32(b);
    w.u32(uint32_t(p.p_bits.size()));
    for (int b : p.p_bits) w.i32(b);
    w.i32(p.dnum);
    w.u32(uint32_t(ctx.num_digits()));
    for (size_t d : ctx.digit_primes()) w.i32(int32_t(d));
    w.f64(p.scale);
    w.u8(uint8_t(p.secret));
    w.i32(p.hamming_weight);
    w.u8(uint8_t(p.security));
    w.u32(uint32_t(qp_limbs(ctx)));
    for (uint64_t q : ctx.q()) w.u64(q);
    for (uint64_t q : ctx.p()) w.u64(q);
    return finish(out, w, start);
}

ContextPtr load_context(ByteView data, std::string* label) {
    const RecordView v = open(data, ObjectType::context, nullptr);
    Reader r(v.payload, "context", kHeaderSize);
    const std::string text = r.str("the label", kMaxLabel);
    Parameters p;
    p.log_n = checked_i32(r, "log_n", 1, 17);
    const uint32_t nq = r.u32("the number of ciphertext primes");
    if (nq == 0 || nq > 64) r.fail(oboro::detail::concat(nq, " ciphertext primes is outside 1..64"));
    for (uint32_t i = 0; i < nq; ++i) p.q_bits.push_back(checked_i32(r, "a prime size", 1, 64));
    const uint32_t np = r.u32("the number of special primes");
    if (np == 0 || np > 64) r.fail(oboro::detail::concat(np, " special primes is outside 1..64"));
    for (uint32_t i = 0; i < np; ++i) p.p_bits.push_back(checked_i32(r, "a prime size", 1, 64));
    p.dnum = checked_i32(r, "dnum", 0, 64);
    if (v.version >= 10) {
        const uint32_t digits = r.u32("the number of key-switching digits");
        if (digits == 0 || digits > nq) r.fail(oboro::detail::concat(digits, " key-switching digits for ", nq, " primes"));
        for (uint32_t j = 0; j < digits; ++j) p.digit_primes.push_back(checked_i32(r, "a digit's prime count", 1, 64));
    } else {
        p.digit_primes = legacy_digits(p);
    }
    p.scale = r.f64("the scale");
    const uint8_t secret = r.u8("the secret distribution");
    if (secret > uint8_t(SecretDistribution::sparse_ternary)) r.fail(oboro::detail::concat("unknown secret distribution ", int(secret)));
    p.secret = SecretDistribution(secret);
    p.hamming_weight = checked_i32(r, "the Hamming weight", 0, 1 << 17);
    const uint8_t security = r.u8("the security level");
    if (security > uint8_t(SecurityLevel::none)) r.fail(oboro::detail::concat("unknown security level ", int(security)));
    p.security = SecurityLevel(security);
    const uint32_t nprimes = r.u32("the prime count");
    if (nprimes != nq + np) r.fail(oboro::detail::concat(nprimes, " primes stored for ", nq, " + ", np, " prime sizes"));
    std::vector<uint64_t> primes(nprimes);
    for (auto& q : primes) q = r.u64("a prime");
    r.expect_end();
    // The context is built on the stored primes themselves, so a change of the prime search never
    // makes stored data unreadable; validate() checks they agree with the stored sizes.
    p.q_primes.assign(primes.begin(), primes.begin() + nq);
    p.p_primes.assign(primes.begin() + nq, primes.end());
    ContextPtr ctx;
    try {
        p.validate();
        ctx = Context::create(p);
    } catch (const SerializationError&) {
        throw;
    } catch (const Error& e) {
        r.fail(oboro::detail::concat("the stored parameters are not valid: ", e.what()));
    }
    std::vector<uint64_t> actual(ctx->q());
    actual.insert(actual.end(), ctx->p().begin(), ctx->p().end());
    if (actual != primes || ctx->id() != v.context_id)
        r.fail("the stored primes do not give the record's context id (corrupted data)");
    if (label) *label = text;
    return ctx;
}

// ------------------------------------------------------------------------------------------------
// Plaintexts and ciphertexts
// ------------------------------------------------------------------------------------------------

Bytes serialize(const Context& ctx, const Plaintext& pt, const ArrayInfo& info) {
    check_owner(pt.context_id(), ctx, "plaintext");
    check_basis("plaintext", pt.basis());
    check_info(info);
    Bytes out;
    Writer w(out);
    w.reserve_more(kHeaderSize + 32 + poly_bytes(ctx, pt.limbs()));
    const size_t start = begin_record(w, ObjectType::plaintext, ctx.id());
    w.i32(pt.level());
    w.f64(pt.scale());
    w.u64(pt.slots());
    write_poly(w, ctx, pt.poly(0), pt.limbs());
    write_info(w, info);
    return finish(out, w, start);
}

Plaintext load_plaintext(const Context& ctx, ByteView data, ArrayInfo* info) {
    const RecordView v = open(data, ObjectType::plaintext, &ctx);
    Reader r(v.payload, "plaintext", kHeaderSize);
    const int level = checked_i32(r, "the level", 0, ctx.max_level());
    const double scale = read_scale(r);
    const uint64_t slots = r.u64("the slot count");
    check_slots(r, slots, ctx);
    require(r, poly_bytes(ctx, size_t(level) + 1), "the polynomial");
    Plaintext pt(ctx, level, scale, size_t(slots));
    read_poly(r, ctx, pt.mutable_poly(0), pt.limbs(), "the polynomial");
    ArrayInfo meta = read_info(r, slots);
    r.expect_end();
    if (info) *info = std::move(meta);
    return pt;
}

Bytes serialize(const Context& ctx, const Ciphertext& ct, const ArrayInfo& info, bool compress) {
    check_owner(ct.context_id(), ctx, "ciphertext");
    check_basis("ciphertext", ct.basis());
    check_info(info);
    const bool seeded = compress && ct.size() == 2 && ct.uniform_seed().has_value();
    Bytes out;
    Writer w(out);
    w.reserve_more(kHeaderSize + 128 + (ct.size() - seeded) * poly_bytes(ctx, ct.limbs()));
    const size_t start = begin_record(w, ObjectType::ciphertext, ctx.id());
    write_fields(w, ct.size(), ct.level(), ct.scale(), ct.slots());
    write_seed(w, seeded ? ct.uniform_seed() : std::nullopt);
    for (size_t j = 0; j < ct.size(); ++j)
        if (!(seeded && j == 1)) write_poly(w, ctx, ct.poly(j), ct.limbs());
    write_info(w, info);
    return finish(out, w, start);
}

Ciphertext load_ciphertext(const Context& ctx, ByteView data, ArrayInfo* info) {
    const RecordView v = open(data, ObjectType::ciphertext, &ctx);
    Reader r(v.payload, "ciphertext", kHeaderSize);
    const auto [polys, level, scale, slots] = read_fields(r, ctx);
    const std::optional<math::Seed> seed = read_seed(r);
    const bool seeded = seed.has_value();
    if (seeded && polys != 2) r.fail("only a 2-polynomial ciphertext can be stored with a seed");
    const size_t limbs = size_t(level) + 1;
    require(r, (polys - (seeded ? 1 : 0)) * poly_bytes(ctx, limbs), "the polynomials");
    Ciphertext ct(ctx, polys, level, scale, size_t(slots));
    for (size_t j = 0; j < polys; ++j) {
        if (seeded && j == 1) expand_uniform(*seed, 0, ct.mutable_poly(1), ctx.moduli(), limbs, ctx.n());
        else read_poly(r, ctx, ct.mutable_poly(j), limbs, "a polynomial");
    }
    if (seeded) ct.set_uniform_seed(*seed);
    ArrayInfo meta = read_info(r, slots);
    r.expect_end();
    if (info) *info = std::move(meta);
    return ct;
}

// ------------------------------------------------------------------------------------------------
// Batches and encrypted matrices
// ------------------------------------------------------------------------------------------------

Bytes serialize(const Context& ctx, const CiphertextBatch& batch, const ArrayInfo& info, bool compress) {
    check_owner(batch.context_id(), ctx, "ciphertext batch");
    check_basis("ciphertext batch", batch.basis());
    check_info(info);
    if (batch.empty()) raise<ValueError>("serialize: the batch is empty");
    if (batch.device()) return serialize(ctx, batch.to_host(), info, compress);  // one download, seeds kept
    bool seeded = false;  // any element stored with its seed
    for (size_t c = 0; c < batch.count(); ++c) seeded = seeded || batch.uniform_seed(c).has_value();
    seeded = seeded && compress && batch.size() == 2;
    Bytes out;
    Writer w(out);
    w.reserve_more(kHeaderSize + 128 + batch.count() * (33 + batch.size() * poly_bytes(ctx, batch.limbs())));
    const size_t start = begin_record(w, ObjectType::ciphertext_batch, ctx.id());
    w.u64(batch.count());
    write_fields(w, batch.size(), batch.level(), batch.scale(), batch.slots());
    w.u8(seeded ? kSeeded : 0);
    for (size_t c = 0; c < batch.count(); ++c) {
        const std::optional<math::Seed> seed = seeded ? batch.uniform_seed(c) : std::nullopt;
        if (seeded) write_seed(w, seed);
        for (size_t j = 0; j < batch.size(); ++j)
            if (!(seed && j == 1)) write_poly(w, ctx, batch.poly(c, j), batch.limbs());
    }
    write_info(w, info);
    return finish(out, w, start);
}

CiphertextBatch load_ciphertext_batch(const Context& ctx, ByteView data, ArrayInfo* info) {
    const RecordView v = open(data, ObjectType::ciphertext_batch, &ctx);
    Reader r(v.payload, "ciphertext batch", kHeaderSize);
    const uint64_t count = r.u64("the element count");
    const auto [polys, level, scale, slots] = read_fields(r, ctx);
    const uint8_t flags = r.u8("the flags");
    if (flags & ~kSeeded) r.fail(oboro::detail::concat("unknown flags 0x", std::hex, int(flags)));
    const bool with_seeds = flags & kSeeded;
    if (with_seeds && polys != 2) r.fail("only 2-polynomial elements can be stored with seeds");
    // The count bounds the allocation: it must be backed by the bytes that are actually there
    // (an element takes at least its flags byte and one polynomial when seeds are stored).
    const size_t limbs = size_t(level) + 1;
    const size_t min_element = with_seeds ? 1 + poly_bytes(ctx, limbs) : polys * poly_bytes(ctx, limbs);
    if (count == 0 || count > r.remaining() / min_element)
        r.fail(oboro::detail::concat(count, " elements announced but the data holds at most ", r.remaining() / min_element));
    CiphertextBatch batch(ctx, size_t(count), polys, level, scale, size_t(slots));
    std::vector<std::optional<math::Seed>> seeds(count);
    for (size_t c = 0; c < count; ++c) {
        if (with_seeds) seeds[c] = read_seed(r);
        for (size_t j = 0; j < polys; ++j) {
            if (seeds[c] && j == 1) expand_uniform(*seeds[c], 0, batch.mutable_poly(c, 1), ctx.moduli(), limbs, ctx.n());
            else read_poly(r, ctx, batch.mutable_poly(c, j), limbs, "a polynomial");
        }
    }
    for (size_t c = 0; c < count; ++c)  // after the writes, which forget seeds
        if (seeds[c]) batch.set_uniform_seed(c, *seeds[c]);
    ArrayInfo meta = read_info(r, slots);
    r.expect_end();
    if (info) *info = std::move(meta);
    return batch;
}

namespace {

// What is wrong with a matrix layout for these parameters (empty: nothing).
std::string layout_problem(const MatrixLayout& m, size_t max_slots) {
    if (uint8_t(m.method) > uint8_t(MatrixMethod::block)) return oboro::detail::concat("unknown method ", int(m.method));
    if (m.d < 2 || !std::has_single_bit(m.d) || m.d > max_slots / m.d)
        return oboro::detail::concat("d = ", m.d, " is not a power of two >= 2 with d^2 <= ", max_slots, " slots");
    if (m.rows == 0 || m.cols == 0) return oboro::detail::concat("the shape (", m.rows, ", ", m.cols, ") is empty");
    const uint64_t grid_rows = (m.rows - 1) / m.d + 1, grid_cols = (m.cols - 1) / m.d + 1;
    if (m.grid_rows != grid_rows || m.grid_cols != grid_cols)
        return oboro::detail::concat("a (", m.rows, ", ", m.cols, ") matrix in ", m.d, " x ", m.d, " blocks needs a (",
                              grid_rows, ", ", grid_cols, ") grid, not (", m.grid_rows, ", ", m.grid_cols, ")");
    if (m.method != MatrixMethod::block && (grid_rows != 1 || grid_cols != 1))
        return oboro::detail::concat("a (", m.rows, ", ", m.cols, ") matrix does not fit one ", m.d, " x ", m.d,
                              " block (only method 'block' has a grid)");
    return {};
}

}  // namespace

Bytes serialize_matrix(const Context& ctx, const MatrixLayout& layout, std::span<const Ciphertext> blocks,
                       bool compress) {
    if (const std::string problem = layout_problem(layout, ctx.max_slots()); !problem.empty())
        raise<ValueError>("serialize: ", problem);
    if (blocks.size() != size_t(layout.grid_rows) * layout.grid_cols)
        raise<ValueError>("serialize: ", blocks.size(), " blocks for a grid of ", layout.grid_rows, " x ",
                          layout.grid_cols);
    std::vector<Bytes> parts;
    size_t total = kHeaderSize + 64 + kChecksumSize;
    for (const Ciphertext& ct : blocks) {
        if (ct.level() != blocks[0].level() || ct.slots() != blocks[0].slots())
            raise<ValueError>("serialize: the matrix blocks differ in level or slots");
        parts.push_back(serialize(ctx, ct, ArrayInfo{layout.key_id, {}, false}, compress));
        total += parts.back().size();
    }
    Bytes out;
    out.reserve(total);
    Writer w(out);
    const size_t start = begin_record(w, ObjectType::encrypted_matrix, ctx.id());
    w.u8(uint8_t(layout.method));
    w.u64(layout.rows);
    w.u64(layout.cols);
    w.u64(layout.d);
    w.u32(layout.grid_rows);
    w.u32(layout.grid_cols);
    w.u64(layout.key_id);
    for (const Bytes& part : parts) w.raw(part.data(), part.size());
    return finish(out, w, start);
}

std::vector<Ciphertext> load_matrix(const Context& ctx, ByteView data, MatrixLayout* layout) {
    const RecordView v = open(data, ObjectType::encrypted_matrix, &ctx);
    Reader r(v.payload, "encrypted matrix", kHeaderSize);
    MatrixLayout m;
    m.method = MatrixMethod(r.u8("the method"));
    m.rows = r.u64("the row count");
    m.cols = r.u64("the column count");
    m.d = r.u64("the block size d");
    m.grid_rows = r.u32("the grid rows");
    m.grid_cols = r.u32("the grid columns");
    m.key_id = r.u64("the key id");
    if (const std::string problem = layout_problem(m, ctx.max_slots()); !problem.empty()) r.fail(problem);
    // Every block is at least an empty record: a bound on the count before anything is allocated.
    const uint64_t count = uint64_t(m.grid_rows) * m.grid_cols;
    if (count > r.remaining() / (kHeaderSize + kChecksumSize))
        r.fail(oboro::detail::concat(count, " blocks announced in ", r.remaining(), " bytes"));
    std::vector<Ciphertext> blocks;
    blocks.reserve(size_t(count));
    for (uint64_t i = 0; i < count; ++i) {
        const size_t offset = kHeaderSize + r.position();
        const RecordView part = read_record(v.payload.subspan(r.position()), "matrix block", offset);
        ArrayInfo info;
        blocks.push_back(load_ciphertext(ctx, r.view(part.size, "a block"), &info));
        const Ciphertext& ct = blocks.back();
        if (ct.size() != 2 || ct.level() != blocks[0].level() || ct.slots() != blocks[0].slots() ||
            ct.slots() < m.d * m.d || info.key_id != m.key_id)
            r.fail(oboro::detail::concat("block ", i, " (", ct.size(), " polynomials, level ", ct.level(), ", ", ct.slots(),
                                  " slots) does not match the matrix (level ", blocks[0].level(), ", at least ",
                                  m.d * m.d, " slots, the matrix's key id)"));
    }
    r.expect_end();
    if (layout) *layout = m;
    return blocks;
}

// ------------------------------------------------------------------------------------------------
// Keys
// ------------------------------------------------------------------------------------------------

Bytes serialize(const Context& ctx, const PublicKey& pk, bool compress) {
    check_owner(pk.context_id, ctx, "public key");
    const size_t limbs = qp_limbs(ctx);
    const bool seeded = compress && pk.a_seed.has_value();
    Bytes out;
    Writer w(out);
    w.reserve_more(kHeaderSize + 64 + (seeded ? 1 : 2) * poly_bytes(ctx, limbs));
    const size_t start = begin_record(w, ObjectType::public_key, ctx.id());
    write_seed(w, seeded ? pk.a_seed : std::nullopt);
    write_poly(w, ctx, pk.b(), limbs);
    if (!seeded) write_poly(w, ctx, pk.a(limbs, ctx.n()), limbs);
    return finish(out, w, start);
}

PublicKey load_public_key(const Context& ctx, ByteView data) {
    const RecordView v = open(data, ObjectType::public_key, &ctx);
    Reader r(v.payload, "public key", kHeaderSize);
    const size_t limbs = qp_limbs(ctx), n = ctx.n();
    PublicKey pk;
    pk.a_seed = read_seed(r);
    require(r, (pk.a_seed ? 1 : 2) * poly_bytes(ctx, limbs), "the key polynomials");
    pk.data = AlignedBuffer<uint64_t>(2 * limbs * n);
    pk.context_id = ctx.id();
    uint64_t* a = pk.data.data() + limbs * n;
    read_poly(r, ctx, pk.data.data(), limbs, "the polynomial b");
    if (pk.a_seed) expand_uniform(*pk.a_seed, 0, a, ctx.moduli(), limbs, n);
    else read_poly(r, ctx, a, limbs, "the polynomial a");
    r.expect_end();
    return pk;
}

Bytes serialize_relin_key(const Context& ctx, const RelinKey& rk, bool compress) {
    Bytes out;
    Writer w(out);
    w.reserve_more(kHeaderSize + 64 + 2 * rk.digits * poly_bytes(ctx, qp_limbs(ctx)));
    const size_t start = begin_record(w, ObjectType::relin_key, ctx.id());
    write_switching_key(w, ctx, rk, compress);
    return finish(out, w, start);
}

RelinKey load_relin_key(const Context& ctx, ByteView data) {
    const RecordView v = open(data, ObjectType::relin_key, &ctx);
    Reader r(v.payload, "relinearization key", kHeaderSize);
    RelinKey rk = read_switching_key(r, ctx);
    r.expect_end();
    return rk;
}

namespace {

// A Galois key set's body: u32 count, then (u64 element, switching key) in increasing elements.
void write_galois_body(Writer& w, const Context& ctx, const GaloisKeys& gk, bool compress) {
    w.u32(uint32_t(gk.keys.size()));
    for (const auto& [element, key] : gk.keys) {  // std::map: ascending elements
        w.u64(element);
        write_switching_key(w, ctx, *key, compress);
    }
}

// keep_seeded: as read_switching_key's, for each key.
GaloisKeys read_galois_body(Reader& r, const Context& ctx, bool keep_seeded = false) {
    const uint32_t count = r.u32("the key count");
    // Each key needs at least its b polynomials (a key of level 0 is the smallest): a bound on the
    // count before the loop.
    const size_t min_key = ctx.ring().digits_at(0) * poly_bytes(ctx, key_basis(ctx, 0, 1));
    if (count > ctx.n() || size_t(count) * min_key > r.remaining())
        r.fail(oboro::detail::concat(count, " keys announced but the data can hold at most ", r.remaining() / min_key));
    GaloisKeys gk;
    gk.context_id = ctx.id();
    uint64_t previous = 1;
    for (uint32_t i = 0; i < count; ++i) {
        const uint64_t element = r.u64("a Galois element");
        if ((element & 1) == 0 || element >= 2 * ctx.n() || element <= previous)
            r.fail(oboro::detail::concat("Galois element ", element, " is not an odd number in ", previous + 1, "..",
                                  2 * ctx.n() - 1, " (elements are stored in increasing order)"));
        previous = element;
        gk.add(element, read_switching_key(r, ctx, keep_seeded));
    }
    return gk;
}

}  // namespace

Bytes serialize(const Context& ctx, const GaloisKeys& gk, bool compress) {
    if (!gk.keys.empty()) check_owner(gk.context_id, ctx, "Galois key set");
    Bytes out;
    Writer w(out);
    w.reserve_more(kHeaderSize + 64 + gk.keys.size() * 2 * ctx.num_digits() * poly_bytes(ctx, qp_limbs(ctx)));
    const size_t start = begin_record(w, ObjectType::galois_keys, ctx.id());
    write_galois_body(w, ctx, gk, compress);
    return finish(out, w, start);
}

GaloisKeys load_galois_keys(const Context& ctx, ByteView data) {
    const RecordView v = open(data, ObjectType::galois_keys, &ctx);
    Reader r(v.payload, "Galois keys", kHeaderSize);
    GaloisKeys gk = read_galois_body(r, ctx);
    r.expect_end();
    return gk;
}

// ---- bootstrap keys ----
// A plan within 2^10 of the least cost is no plan anyone means: a damaged record
constexpr double kMaxKeySavingTolerance = 1024;
// No circuit reads a key this often a pass: a damaged record
constexpr double kMaxWholeKeyReads = 65536;

// u32 slots (0: all), i32 CoeffsToSlots levels, i32 SlotsToCoeffs levels, i32 double angles (-1:
// automatic), i32 cosine degree (-1: automatic), i32 message ratio bits (-1: automatic; version 4),
// i32 ephemeral weight, and from version 4 i32 iterations (-1: automatic) and u32 the order (0:
// CoeffsToSlots first, 1: SlotsToCoeffs first), from version 5 the memory policy (f64 the plans'
// key-saving tolerance, u8 flags: 1 when the diagonals are encoded at each use, from version 8
// 2 when the keys keep their uniform halves as seeds; from version 9 then f64 the reads a pass
// from which a seeded policy stores a key whole, 0: never), from version 6 u8
// EvalMod's terms (1 or 2; from version 7 also 0: automatic); the Galois key set's
// body; u8 1 when the encapsulation keys follow: u32 their ephemeral weight, the key to the
// ephemeral secret, the key back. A version-3 record has neither and stands for the automatic
// iterations, CoeffsToSlots first; a version 3 or 4 record for the memory policy of least
// modelled cost (MemoryPolicy{}, the default of those versions), and
// one before version 6 for EvalMod's one term (the automatic choice of those versions).

Bytes serialize(const Context& ctx, const algorithms::BootstrapConfig& config, const algorithms::BootstrapKeys& keys,
                bool compress) {
    if (!keys.galois.keys.empty()) check_owner(keys.galois.context_id, ctx, "bootstrap key set");
    Bytes out;
    Writer w(out);
    const size_t start = begin_record(w, ObjectType::bootstrap_keys, ctx.id());
    w.u32(uint32_t(config.slots.value_or(0)));
    for (int v : {config.coeffs_to_slots_levels, config.slots_to_coeffs_levels, config.double_angles.value_or(-1),
                  config.cosine_degree.value_or(-1), config.message_ratio_bits.value_or(-1),
                  config.ephemeral_hamming_weight, config.iterations.value_or(-1)})
        w.u32(uint32_t(v));
    w.u32(config.order == algorithms::BootstrapOrder::slots_to_coeffs_first ? 1 : 0);
    w.f64(config.memory.key_saving_tolerance);
    w.u8(uint8_t((config.memory.encode_on_use ? 1 : 0) | (config.memory.seeded_keys ? 2 : 0)));
    w.f64(config.memory.whole_key_reads);
    w.u8(uint8_t(config.eval_mod_terms.value_or(0)));
    write_galois_body(w, ctx, keys.galois, compress);
    w.u8(keys.encapsulation ? 1 : 0);
    if (keys.encapsulation) {
        w.u32(uint32_t(keys.encapsulation->ephemeral_hamming_weight));
        write_switching_key(w, ctx, keys.encapsulation->to_ephemeral, compress);
        write_switching_key(w, ctx, keys.encapsulation->from_ephemeral, compress);
    }
    return finish(out, w, start);
}

std::pair<algorithms::BootstrapConfig, algorithms::BootstrapKeys> load_bootstrap_keys(const Context& ctx,
                                                                                      ByteView data) {
    const RecordView v = open(data, ObjectType::bootstrap_keys, &ctx);
    Reader r(v.payload, "bootstrap keys", kHeaderSize);
    algorithms::BootstrapConfig config;
    const uint32_t slots = r.u32("the slot count");
    if (slots != 0) {
        if (slots < 2 || slots > ctx.max_slots() || (slots & (slots - 1)) != 0)
            r.fail(oboro::detail::concat("a slot count of ", slots, " is not a power of two in 2..", ctx.max_slots()));
        config.slots = slots;
    }
    // the ranges a Bootstrapper accepts (bootstrap.hpp, eval_mod.hpp), so that a damaged or hostile
    // configuration is refused here rather than when the bootstrapper is made from it
    const auto in_range = [&](const char* what, int lo, int hi) {
        const int32_t x = int32_t(r.u32(what));
        if (x < lo || x > hi) r.fail(oboro::detail::concat(what, " = ", x, " is outside ", lo, "..", hi));
        return int(x);
    };
    config.coeffs_to_slots_levels = in_range("the CoeffsToSlots levels", 1, 17);
    config.slots_to_coeffs_levels = in_range("the SlotsToCoeffs levels", 1, 17);
    const int double_angles = in_range("the double angles", -1, 8);
    if (double_angles >= 0) config.double_angles = double_angles;
    const int degree = in_range("the cosine degree", -1, 1023);
    if (degree == 0) r.fail("a cosine degree of 0");
    if (degree > 0) config.cosine_degree = degree;
    const bool v4 = v.version >= 4;
    const int ratio = in_range("the message ratio", v4 ? -1 : 4, 40);
    if (ratio >= 0 && ratio < 4) r.fail(oboro::detail::concat("the message ratio = ", ratio, " is outside 4..40"));
    if (ratio > 0) config.message_ratio_bits = ratio;
    config.ephemeral_hamming_weight = in_range("the ephemeral weight", 1, 64);
    if (v4) {
        const int iterations = in_range("the iterations", -1, 2);
        if (iterations == 0) r.fail("0 iterations");
        if (iterations > 0) config.iterations = iterations;
        config.order = in_range("the order", 0, 1) == 1 ? algorithms::BootstrapOrder::slots_to_coeffs_first
                                                        : algorithms::BootstrapOrder::coeffs_to_slots_first;
    }
    // Before version 5 the keys were made with the plans of least modelled cost (MemoryPolicy{}),
    // the default of those versions, whatever BootstrapConfig's default is now.
    config.memory = algorithms::MemoryPolicy{};
    if (v.version >= 5) {
        const double tolerance = r.f64("the key-saving tolerance");
        if (!(tolerance >= 0 && tolerance <= kMaxKeySavingTolerance))
            r.fail(oboro::detail::concat("a key-saving tolerance of ", tolerance, " is outside 0..",
                                         kMaxKeySavingTolerance));
        config.memory.key_saving_tolerance = tolerance;
        const uint8_t flags = r.u8("the memory flags");
        const uint8_t known = v.version >= 8 ? 3 : 1;
        if (flags & ~known) r.fail(oboro::detail::concat("memory flags 0x", std::hex, int(flags)));
        config.memory.encode_on_use = (flags & 1) != 0;
        config.memory.seeded_keys = (flags & 2) != 0;
    }
    if (v.version >= 9) {
        const double reads = r.f64("the reads from which a key is stored whole");
        if (!(reads >= 0 && reads <= kMaxWholeKeyReads))
            r.fail(oboro::detail::concat("keys stored whole from ", reads, " reads a pass (0..", kMaxWholeKeyReads, ")"));
        config.memory.whole_key_reads = reads;
    }
    if (v.version >= 6) {
        const uint8_t terms = r.u8("EvalMod's terms");
        const int least = v.version >= 7 ? 0 : 1;
        if (terms < least || terms > 2)
            r.fail(oboro::detail::concat("EvalMod's terms = ", int(terms), least == 0 ? " (0: automatic, 1 or 2)" : " (1 or 2)"));
        if (terms > 0) config.eval_mod_terms = terms;
    } else {
        config.eval_mod_terms = 1;  // the only choice before version 6
    }
    algorithms::BootstrapKeys keys;
    // keys written with their seeds are seeded again (written whole, they have no seed to keep)
    const bool keep_seeded = config.memory.seeded_keys;
    keys.galois = read_galois_body(r, ctx, keep_seeded);
    const uint8_t has_encapsulation = r.u8("the encapsulation flag");
    if (has_encapsulation > 1) r.fail(oboro::detail::concat("an encapsulation flag of ", int(has_encapsulation)));
    if (has_encapsulation) {
        ckks::EncapsulationKeys e;
        e.ephemeral_hamming_weight = in_range("the encapsulation keys' ephemeral weight", 1, int(ctx.n()));
        e.to_ephemeral = read_switching_key(r, ctx, keep_seeded);
        e.from_ephemeral = read_switching_key(r, ctx, keep_seeded);
        keys.encapsulation = std::move(e);
    }
    r.expect_end();
    return {config, std::move(keys)};
}

Bytes serialize_secret_key(const Context& ctx, const SecretKey& sk) {
    check_owner(sk.context_id, ctx, "secret key");
    if (sk.coeffs.size() != ctx.n())
        raise<ValueError>("serialize: the secret key has ", sk.coeffs.size(), " coefficients, not N = ", ctx.n());
    Bytes out;
    // reserved whole, so that growing it leaves no partial copy of the key in freed memory (the
    // bytes returned are the caller's to wipe)
    out.reserve(kHeaderSize + (2 * ctx.n() + 7) / 8 + 64 + kChecksumSize);
    Writer w(out);
    const size_t start = begin_record(w, ObjectType::secret_key, ctx.id());
    SecretVector<uint64_t> codes(ctx.n());  // the secret, recoded: wiped when it goes
    for (size_t i = 0; i < codes.size(); ++i) codes[i] = sk.coeffs[i] == 0 ? 0 : (sk.coeffs[i] > 0 ? 1 : 2);
    w.packed(codes.data(), codes.size(), 2);
    return finish(out, w, start);
}

SecretKeyPtr load_secret_key(const Context& ctx, ByteView data) {
    const RecordView v = open(data, ObjectType::secret_key, &ctx);
    Reader r(v.payload, "secret key", kHeaderSize);
    const size_t n = ctx.n();
    SecretVector<uint64_t> codes(n);
    r.packed(codes.data(), n, 3, "the coefficients");  // codes 0, 1, 2 are below 3
    r.expect_end();
    SecretVector<int8_t> coeffs(n);
    for (size_t i = 0; i < n; ++i) coeffs[i] = int8_t(codes[i] == 2 ? -1 : int(codes[i]));
    return secret_key_from_coefficients(ctx, std::move(coeffs));
}

// ------------------------------------------------------------------------------------------------
// Bundles, type, key id, files
// ------------------------------------------------------------------------------------------------

Bytes make_bundle(const std::vector<Bytes>& records) {
    size_t total = kHeaderSize + 4 + kChecksumSize;
    for (const Bytes& r : records) total += r.size();
    Bytes out;
    out.reserve(total);
    Writer w(out);
    const size_t start = begin_record(w, ObjectType::bundle, 0);
    w.u32(uint32_t(records.size()));
    for (const Bytes& rec : records) {
        (void)read_record(rec, "bundle part");  // only whole, valid records go in
        w.raw(rec.data(), rec.size());
    }
    return finish(out, w, start);
}

std::vector<ByteView> split_bundle(ByteView data) {
    const RecordView v = open(data, ObjectType::bundle, nullptr);
    Reader r(v.payload, "bundle", kHeaderSize);
    const uint32_t count = r.u32("the record count");
    if (size_t(count) * (kHeaderSize + kChecksumSize) > r.remaining())
        r.fail(oboro::detail::concat(count, " records announced in ", r.remaining(), " bytes"));
    std::vector<ByteView> parts;
    for (uint32_t i = 0; i < count; ++i) {
        const size_t offset = kHeaderSize + r.position();
        const RecordView part = read_record(v.payload.subspan(r.position()), "bundle part", offset);
        if (part.type == ObjectType::bundle) r.fail("a bundle inside a bundle is not allowed");
        parts.push_back(r.view(part.size, "a record"));
    }
    r.expect_end();
    return parts;
}

ObjectType peek_type(ByteView data) { return read_record(data, "data").type; }

namespace {

// The fields before the nested records of a bundle (u32 count) and of an encrypted matrix (u8
// method, u64 rows, cols, d, u32 grid rows, cols, u64 key id): see make_bundle, serialize_matrix.
constexpr size_t kBundlePrefix = 4;
constexpr size_t kMatrixPrefix = 1 + 3 * 8 + 2 * 4 + 8;

// Recomputes the checksum of a record whose payload size field already matches its span.
void seal(std::span<uint8_t> record) {
    const uint64_t sum = xxh64(record.data(), record.size() - kChecksumSize);
    std::memcpy(record.data() + record.size() - kChecksumSize, &sum, kChecksumSize);
}

}  // namespace

void reseal(std::span<uint8_t> record) {
    if (record.size() < kHeaderSize + kChecksumSize) return;
    const uint64_t payload = record.size() - kHeaderSize - kChecksumSize;
    std::memcpy(record.data() + 24, &payload, 8);
    uint16_t type;
    std::memcpy(&type, record.data() + 10, 2);
    const size_t prefix = type == uint16_t(ObjectType::bundle)             ? kBundlePrefix
                          : type == uint16_t(ObjectType::encrypted_matrix) ? kMatrixPrefix
                                                                           : payload + 1;
    if (prefix <= payload) {
        // The nested records first: the outer checksum covers their bytes.
        std::span<uint8_t> rest = record.subspan(kHeaderSize + prefix, size_t(payload) - prefix);
        while (rest.size() >= kHeaderSize + kChecksumSize) {
            uint64_t inner;
            std::memcpy(&inner, rest.data() + 24, 8);
            if (inner > rest.size() - kHeaderSize - kChecksumSize) break;
            const std::span<uint8_t> part = rest.first(kHeaderSize + size_t(inner) + kChecksumSize);
            seal(part);
            rest = rest.subspan(part.size());
        }
    }
    seal(record);
}

uint64_t key_id(const PublicKey& pk) {
    if (pk.data.empty()) return 0;
    return xxh64(pk.data.data(), pk.data.size() / 2 * sizeof(uint64_t));
}

void write_file(const std::string& path, const Bytes& data) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    fs::path tmp = target;
    tmp += ".tmp" + std::to_string(uint64_t(std::hash<std::string>{}(path) ^ uint64_t(data.size())));
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) raise<Error>("save: cannot open ", tmp.string(), " for writing");
        f.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
        f.flush();
        if (!f) {
            std::error_code ignored;
            fs::remove(tmp, ignored);
            raise<Error>("save: writing ", data.size(), " bytes to ", tmp.string(), " failed (disk full?)");
        }
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        raise<Error>("save: cannot rename ", tmp.string(), " to ", path, ": ", ec.message());
    }
}

Bytes read_file(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) raise<Error>("load: cannot read ", path, ": ", ec.message());
    std::ifstream f(path, std::ios::binary);
    if (!f) raise<Error>("load: cannot open ", path);
    Bytes data(static_cast<size_t>(size));
    f.read(reinterpret_cast<char*>(data.data()), std::streamsize(size));
    if (!f || size_t(f.gcount()) != data.size()) raise<Error>("load: reading ", path, " failed");
    return data;
}

}  // namespace oboro::io

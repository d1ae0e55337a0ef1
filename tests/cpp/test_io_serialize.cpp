// Serialization: round trips of every object (bit-identical data, working keys), seeded
// compression and its size saving, and a typed, descriptive SerializationError for every kind of
// bad data (wrong type, other parameters, truncation, corruption, wrong version, trailing bytes,
// out-of-range residues and fields).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "io_test_util.hpp"
#include "oboro/io/byte_stream.hpp"
#include "oboro/io/checksum.hpp"
#include "oboro/io/serialize.hpp"
#include "oboro/math/primes.hpp"

namespace oboro::test {
namespace {

using io::Bytes;

bool same_words(const uint64_t* a, const uint64_t* b, size_t n) { return std::memcmp(a, b, n * sizeof(uint64_t)) == 0; }

bool same_ciphertext(const Ciphertext& a, const Ciphertext& b) {
    return a.size() == b.size() && a.level() == b.level() && a.scale() == b.scale() && a.slots() == b.slots() &&
           a.context_id() == b.context_id() && same_words(a.data(), b.data(), a.word_count());
}

bool same_key(const KeySwitchKey& a, const KeySwitchKey& b) {
    if (!(a.digits == b.digits && a.qp_limbs == b.qp_limbs && a.n == b.n && a.data.size() == b.data.size())) return false;
    const auto wa = a.words(), wb = b.words();
    return same_words(wa.data(), wb.data(), wa.size());
}

TEST(Checksum, Xxh64KnownVectors) {
    EXPECT_EQ(io::xxh64("", 0), 0xEF46DB3751D8E999ull);
    EXPECT_EQ(io::xxh64("a", 1), 0xD24EC4F1A98C6E5Bull);
    EXPECT_EQ(io::xxh64("abc", 3), 0x44BC2CF5AD770999ull);
    // Every length 0..100 differs from its neighbours and from a one-bit change.
    std::vector<uint8_t> buf(100, 0x5a);
    for (size_t len = 1; len < buf.size(); ++len) {
        const uint64_t h = io::xxh64(buf.data(), len);
        EXPECT_NE(h, io::xxh64(buf.data(), len - 1));
        buf[len / 2] ^= 1;
        EXPECT_NE(h, io::xxh64(buf.data(), len));
        buf[len / 2] ^= 1;
    }
}

TEST(BytePacking, RoundTripEveryWidthAndOddLength) {
    for (uint64_t q : {3ull, 0xfffull, (1ull << 40) - 87, (1ull << 61) - 1, (1ull << 62) - 57}) {
        for (size_t n : {1, 7, 64, 1001}) {
            std::vector<uint64_t> v(n);
            for (size_t i = 0; i < n; ++i) v[i] = (i * 0x9E3779B97F4A7C15ull) % q;
            v[0] = q - 1;
            Bytes b;
            io::Writer w(b);
            w.packed(v.data(), n, io::residue_bits(q));
            ASSERT_EQ(b.size(), io::packed_size(n, io::residue_bits(q)));
            io::Reader r(b, "test");
            std::vector<uint64_t> out(n);
            r.packed(out.data(), n, q, "values");
            EXPECT_TRUE(r.at_end());
            EXPECT_EQ(out, v) << "q = " << q << ", n = " << n;
        }
    }
}

TEST(BytePacking, RejectsResidueNotBelowModulus) {
    const uint64_t q = 1000;  // 10 bits: the value 1000..1023 fits in the field but is not a residue
    std::vector<uint64_t> v = {1, 999, 1000, 5};
    Bytes b;
    io::Writer w(b);
    w.packed(v.data(), v.size(), io::residue_bits(q));
    io::Reader r(b, "test");
    std::vector<uint64_t> out(v.size());
    EXPECT_ERROR(SerializationError, r.packed(out.data(), out.size(), q, "values"), "1000", "index 2", "modulus");
}

TEST(BytePacking, ReaderNeverReadsPastTheEnd) {
    Bytes b = {1, 2, 3};
    io::Reader r(b, "thing");
    EXPECT_EQ(r.u16("a"), 0x0201);
    EXPECT_ERROR(SerializationError, r.u32("the count"), "thing", "truncated", "the count", "4 bytes", "1 are left");
}

class SerializeRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(SerializeRoundTrip, Context) {
    Keys& k = Keys::get(GetParam());
    const Bytes b = io::serialize(*k.ctx, GetParam());
    std::string label;
    ContextPtr ctx = io::load_context(b, &label);
    EXPECT_EQ(label, GetParam());
    EXPECT_EQ(ctx->id(), k.ctx->id());
    EXPECT_EQ(ctx->params().describe(), k.ctx->params().describe());
    EXPECT_EQ(io::peek_type(b), io::ObjectType::context);
}

TEST_P(SerializeRoundTrip, SeededCiphertextIsHalfTheSizeAndIdentical) {
    Keys& k = Keys::get(GetParam());
    const auto values = random_complex(k.ctx->max_slots(), 1.0, 11);
    const Ciphertext ct = k.encrypt(values, std::nullopt, /*with_public_key=*/false);
    ASSERT_TRUE(ct.uniform_seed().has_value());
    const Bytes seeded = io::serialize(*k.ctx, ct);
    const Bytes full = io::serialize(*k.ctx, ct, {}, /*compress=*/false);
    const size_t raw = ct.word_count() * 8;
    std::printf("[ size ] %s ciphertext, level %d: in memory %zu B, packed %zu B (%.1f%%), seeded %zu B (%.1f%%)\n",
                GetParam().c_str(), ct.level(), raw, full.size(), 100.0 * double(full.size()) / double(raw),
                seeded.size(), 100.0 * double(seeded.size()) / double(raw));
    EXPECT_LT(double(seeded.size()), 0.51 * double(full.size()));
    EXPECT_LT(full.size(), raw);  // bit-packing: 40-bit residues take 5 bytes, not 8
    for (const Bytes* b : {&seeded, &full}) {
        const Ciphertext back = io::load_ciphertext(*k.ctx, *b);
        EXPECT_TRUE(same_ciphertext(back, ct));
        EXPECT_GE(precision_bits(k.decrypt(back), values), 25);
    }
    // A loaded seeded ciphertext is again compressible; after an operation it is not.
    Ciphertext back = io::load_ciphertext(*k.ctx, seeded);
    EXPECT_EQ(io::serialize(*k.ctx, back).size(), seeded.size());
    k.eval->add_inplace(back, back);
    EXPECT_FALSE(back.uniform_seed().has_value());
    EXPECT_EQ(io::serialize(*k.ctx, back).size(), full.size());
}

// Reading a ciphertext's words, through a non-const object too, keeps its seed (and so its half
// size on the wire); only the write accessors forget it.
TEST_P(SerializeRoundTrip, ReadingKeepsTheSeedAndWritingForgetsIt) {
    Keys& k = Keys::get(GetParam());
    Ciphertext ct = k.encrypt(random_real(8, 1.0, 13), std::nullopt, /*with_public_key=*/false);
    const size_t seeded = io::serialize(*k.ctx, ct).size();
    uint64_t sum = 0;
    for (size_t j = 0; j < ct.size(); ++j) sum += ct.poly(j)[0];
    sum += ct.data()[1];
    EXPECT_TRUE(ct.uniform_seed().has_value()) << sum;
    EXPECT_EQ(io::serialize(*k.ctx, ct).size(), seeded);
    Ciphertext written = ct;
    written.mutable_poly(0)[0] = written.poly(0)[0];  // the same word, but through write access
    EXPECT_FALSE(written.uniform_seed().has_value());
    Ciphertext written_data = ct;
    (void)written_data.mutable_data();
    EXPECT_FALSE(written_data.uniform_seed().has_value());
    EXPECT_GT(io::serialize(*k.ctx, written).size(), seeded);

    CiphertextBatch batch = CiphertextBatch::from_ciphertexts(*k.ctx, std::vector<Ciphertext>{ct, ct});
    sum += batch.poly(1, 1)[0] + batch.data()[0];
    EXPECT_TRUE(batch.uniform_seed(1).has_value()) << sum;
    (void)batch.mutable_poly(0, 0);
    EXPECT_FALSE(batch.uniform_seed(0).has_value());
    EXPECT_FALSE(batch.uniform_seed(1).has_value());  // one write access to the batch forgets all its seeds
}

TEST_P(SerializeRoundTrip, CiphertextsOfEveryShape) {
    Keys& k = Keys::get(GetParam());
    const auto values = random_real(8, 1.0, 12);
    // public-key ciphertext (no seed), size 3, level 0, few slots, and info
    Ciphertext pk_ct = k.encrypt(values, std::nullopt, true, 8);
    EXPECT_FALSE(pk_ct.uniform_seed().has_value());
    Ciphertext prod = k.eval->multiply(pk_ct, pk_ct);
    Ciphertext low = k.encrypt(values, 0, false, 8);
    io::ArrayInfo info{0x1234abcd, {2, 4}, true};
    for (const Ciphertext* ct : {&pk_ct, &prod, &low}) {
        io::ArrayInfo got;
        const Ciphertext back = io::load_ciphertext(*k.ctx, io::serialize(*k.ctx, *ct, info), &got);
        EXPECT_TRUE(same_ciphertext(back, *ct));
        EXPECT_EQ(got.key_id, info.key_id);
        EXPECT_EQ(got.shape, info.shape);
        EXPECT_TRUE(got.is_complex);
    }
}

TEST_P(SerializeRoundTrip, Plaintext) {
    Keys& k = Keys::get(GetParam());
    const Plaintext pt = k.encoder->encode(random_complex(16, 1.0, 13), 0, std::nullopt, 16);
    io::ArrayInfo info;
    const Plaintext back = io::load_plaintext(*k.ctx, io::serialize(*k.ctx, pt, {0, {4, 4}, true}), &info);
    EXPECT_EQ(info.shape, (std::vector<uint64_t>{4, 4}));
    EXPECT_TRUE(info.is_complex);
    EXPECT_EQ(back.level(), pt.level());
    EXPECT_EQ(back.scale(), pt.scale());
    EXPECT_EQ(back.slots(), pt.slots());
    EXPECT_TRUE(same_words(back.data(), pt.data(), pt.word_count()));
}

TEST_P(SerializeRoundTrip, KeysAreIdenticalAndWork) {
    Keys& k = Keys::get(GetParam());
    const Bytes pk_seeded = io::serialize(*k.ctx, k.pk), pk_full = io::serialize(*k.ctx, k.pk, false);
    const Bytes rk_seeded = io::serialize_relin_key(*k.ctx, k.rk), rk_full = io::serialize_relin_key(*k.ctx, k.rk, false);
    const Bytes gk_seeded = io::serialize(*k.ctx, k.gk), gk_full = io::serialize(*k.ctx, k.gk, false);
    std::printf("[ size ] %s public key %zu -> %zu B, relin key %zu -> %zu B, %zu Galois keys %zu -> %zu B\n",
                GetParam().c_str(), pk_full.size(), pk_seeded.size(), rk_full.size(), rk_seeded.size(), k.gk.keys.size(),
                gk_full.size(), gk_seeded.size());
    EXPECT_LT(double(pk_seeded.size()), 0.51 * double(pk_full.size()));
    EXPECT_LT(double(rk_seeded.size()), 0.51 * double(rk_full.size()));
    EXPECT_LT(double(gk_seeded.size()), 0.51 * double(gk_full.size()));
    for (const Bytes* b : {&pk_seeded, &pk_full}) {
        const PublicKey pk = io::load_public_key(*k.ctx, *b);
        EXPECT_TRUE(same_words(pk.data.data(), k.pk.data.data(), k.pk.data.size()));
        EXPECT_EQ(io::key_id(pk), io::key_id(k.pk));
    }
    for (const Bytes* b : {&rk_seeded, &rk_full}) EXPECT_TRUE(same_key(io::load_relin_key(*k.ctx, *b), k.rk));
    for (const Bytes* b : {&gk_seeded, &gk_full}) {
        const GaloisKeys gk = io::load_galois_keys(*k.ctx, *b);
        ASSERT_EQ(gk.keys.size(), k.gk.keys.size());
        for (const auto& [g, key] : k.gk.keys) EXPECT_TRUE(same_key(gk.at(g), *key)) << "element " << g;
    }
    // The loaded keys compute: encrypt with the loaded public key, multiply, rotate.
    const PublicKey pk = io::load_public_key(*k.ctx, pk_seeded);
    const RelinKey rk = io::load_relin_key(*k.ctx, rk_seeded);
    const GaloisKeys gk = io::load_galois_keys(*k.ctx, gk_seeded);
    Encryptor enc(k.ctx, pk);
    const auto values = random_complex(k.ctx->max_slots(), 1.0, 14);
    const Ciphertext ct = enc.encrypt(k.encoder->encode(values));
    const Ciphertext y = k.eval->rotate(k.eval->multiply_relin_rescale(ct, ct, rk), 1, gk);
    std::vector<cplx> want(values.size());
    for (size_t i = 0; i < values.size(); ++i) want[i] = values[(i + 1) % values.size()] * values[(i + 1) % values.size()];
    EXPECT_GE(precision_bits(k.decrypt(y), want), 20);
}

TEST_P(SerializeRoundTrip, SecretKeyAndBundle) {
    Keys& k = Keys::get(GetParam());
    const SecretKey& sk = *k.keygen->secret_key();
    const Bytes b = io::serialize_secret_key(*k.ctx, sk);
    EXPECT_EQ(b.size(), io::kHeaderSize + k.ctx->n() / 4 + io::kChecksumSize);
    const SecretKeyPtr back = io::load_secret_key(*k.ctx, b);
    EXPECT_EQ(back->coeffs, sk.coeffs);
    EXPECT_EQ(back->context_id, k.ctx->id());
    EXPECT_TRUE(same_words(back->ntt.data(), sk.ntt.data(), sk.ntt.size()));
    // The loaded key decrypts what the original encrypted, and serializes to the same bytes.
    const auto values = random_complex(k.ctx->max_slots(), 1.0, 15);
    const Ciphertext ct = k.encrypt(values, std::nullopt, false);
    EXPECT_GE(precision_bits(Decryptor(k.ctx, back).decrypt_decode(ct, *k.encoder), values), 25.0);
    EXPECT_EQ(io::serialize_secret_key(*k.ctx, *back), b);

    const Bytes ctx_bytes = io::serialize(*k.ctx, "x"), pk_bytes = io::serialize(*k.ctx, k.pk);
    const Bytes bundle = io::make_bundle({ctx_bytes, pk_bytes, b});
    const auto parts = io::split_bundle(bundle);
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_TRUE(std::equal(parts[0].begin(), parts[0].end(), ctx_bytes.begin(), ctx_bytes.end()));
    EXPECT_EQ(io::peek_type(parts[1]), io::ObjectType::public_key);
    EXPECT_EQ(io::load_secret_key(*k.ctx, parts[2])->coeffs, sk.coeffs);
}

INSTANTIATE_TEST_SUITE_P(Presets, SerializeRoundTrip, ::testing::Values("S1", "S2"));

// ---- bad data ----

struct Tiny {
    ContextPtr ctx = Context::create(tiny_parameters());
    KeyGenerator keygen{ctx};
    Encoder encoder{ctx};
    Ciphertext ct() {
        Encryptor enc(ctx, keygen.secret_key());
        return enc.encrypt(encoder.encode(std::vector<cplx>(4, cplx(0.5, 0)), std::nullopt, std::nullopt, 4));
    }
};

TEST(SerializeErrors, WrongTypeAndWrongParameters) {
    Tiny t;
    const Bytes pk = io::serialize(*t.ctx, t.keygen.public_key());
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, pk), "deserialize ciphertext", "public key");
    Keys& s1 = Keys::get("S1");
    const Bytes ct = io::serialize(*s1.ctx, s1.encrypt({1.0}));
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, ct), "other parameters");
    EXPECT_ERROR(ContextMismatch, io::serialize(*t.ctx, s1.encrypt({1.0})), "another parameter set");
}

TEST(SerializeErrors, TruncatedAtEveryPositionOfTheHeader) {
    Tiny t;
    const Bytes full = io::serialize(*t.ctx, t.ct());
    for (size_t cut : {size_t(0), size_t(5), size_t(8), size_t(31), size_t(32), size_t(33), full.size() / 2,
                       full.size() - 9, full.size() - 1}) {
        const Bytes b(full.begin(), full.begin() + long(cut));
        EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, b), "truncated");
    }
    // Truncated, then re-sealed: the header agrees with the length, the payload is short.
    Bytes b(full.begin(), full.end() - 100);
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, b), "truncated");
}

TEST(SerializeErrors, CorruptionVersionTrailingBytesAndSizes) {
    Tiny t;
    const Bytes good = io::serialize(*t.ctx, t.ct());
    Bytes b = good;
    b[b.size() / 2] ^= 0x10;
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, b), "checksum");
    b = good;
    b[0] = 'X';
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, b), "magic");
    b = good;
    b[8] = uint8_t(io::kFormatVersion + 1);  // a version from the future
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, b), "version " + std::to_string(io::kFormatVersion), "newer");
    b = good;
    b.push_back(0);
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, b), "unexpected bytes");
    b = good;
    const uint64_t huge = uint64_t(1) << 60;  // an announced payload far larger than the data
    std::memcpy(b.data() + 24, &huge, 8);
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, b), "truncated");
    b = good;
    b[12] = 1;  // reserved flags
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, b), "flags");
}

// io::reseal (tests and fuzzers): a changed record passes its checksum again, and so do the records
// nested in a bundle or a matrix, so that loading reaches the field checks behind the checksums.
TEST(SerializeErrors, ResealReachesTheFieldsOfNestedRecords) {
    Tiny t;
    const Bytes ct = io::serialize(*t.ctx, t.ct(), {}, /*compress=*/false);
    const uint32_t polys = 7;
    Bytes b = ct;
    std::memcpy(b.data() + io::kHeaderSize, &polys, 4);
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, b), "checksum");
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, b), "7 polynomials");

    // the same ciphertext as the second record of a bundle: both checksums are fixed
    const Bytes ctx_record = io::serialize(*t.ctx);
    const Bytes bundle = io::make_bundle({ctx_record, ct});
    const size_t at = io::kHeaderSize + 4 + ctx_record.size();  // the bundle's count, the first record
    b = bundle;
    std::memcpy(b.data() + at + io::kHeaderSize, &polys, 4);
    EXPECT_ERROR(SerializationError, io::split_bundle(b), "checksum");
    reseal(b);
    const std::vector<io::ByteView> parts = io::split_bundle(b);
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, parts[1]), "7 polynomials");

    // a matrix block: after the layout (u8 method, u64 rows, cols, d, u32 grid rows, cols, u64 key id)
    const Bytes matrix = io::serialize_matrix(*t.ctx, {io::MatrixMethod::jiang, 2, 2, 2, 1, 1, 0}, std::vector{t.ct()},
                                              /*compress=*/false);
    b = matrix;
    std::memcpy(b.data() + io::kHeaderSize + 41 + io::kHeaderSize, &polys, 4);
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_matrix(*t.ctx, b, nullptr), "7 polynomials");

    // a nested record whose announced size overruns the data: the walk stops there, the outer record
    // is still sealed, and the loader reports the truncation
    b = bundle;
    const uint64_t huge = uint64_t(1) << 40;
    std::memcpy(b.data() + at + 24, &huge, 8);
    reseal(b);
    EXPECT_ERROR(SerializationError, io::split_bundle(b), "truncated");
    // shorter than a header and a checksum: left alone
    Bytes stub(io::kHeaderSize + io::kChecksumSize - 1, 0xab);
    reseal(stub);
    EXPECT_EQ(stub, Bytes(io::kHeaderSize + io::kChecksumSize - 1, 0xab));
}

TEST(SerializeErrors, FieldsOutOfRange) {
    Tiny t;
    const Bytes good = io::serialize(*t.ctx, t.ct(), {}, /*compress=*/false);
    const size_t p = io::kHeaderSize;  // payload: u32 polys, i32 level, f64 scale, u64 slots, u8 flags
    auto patched = [&](size_t offset, const void* v, size_t len) {
        Bytes b = good;
        std::memcpy(b.data() + offset, v, len);
        reseal(b);
        return b;
    };
    const uint32_t polys = 7;
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, patched(p, &polys, 4)), "7 polynomials");
    const int32_t level = 9;
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, patched(p + 4, &level, 4)), "level", "0..2");
    const double scale = -1;
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, patched(p + 8, &scale, 8)), "scale");
    const uint64_t slots = 3;
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, patched(p + 16, &slots, 8)), "slots = 3");
    // A residue at or above its modulus: all ones in the first packed value.
    const uint64_t ones = ~uint64_t(0);
    EXPECT_ERROR(SerializationError, io::load_ciphertext(*t.ctx, patched(p + 25, &ones, 8)), "not below the modulus");

    Bytes sk = io::serialize_secret_key(*t.ctx, *t.keygen.secret_key());
    sk[io::kHeaderSize] = 0xff;  // code 3 is not a ternary value
    reseal(sk);
    EXPECT_ERROR(SerializationError, io::load_secret_key(*t.ctx, sk), "not below the modulus 3");

    GaloisKeys gk = t.keygen.galois_keys({1});
    Bytes g = io::serialize(*t.ctx, gk);
    const uint32_t many = 1u << 30;
    std::memcpy(g.data() + io::kHeaderSize, &many, 4);
    reseal(g);
    EXPECT_ERROR(SerializationError, io::load_galois_keys(*t.ctx, g), "keys announced");
    g = io::serialize(*t.ctx, gk);
    const uint64_t even = 4;
    std::memcpy(g.data() + io::kHeaderSize + 4, &even, 8);
    reseal(g);
    EXPECT_ERROR(SerializationError, io::load_galois_keys(*t.ctx, g), "Galois element 4");
}

// A context on primes that the prime search does not pick loads with those very primes: stored
// contexts do not depend on the search reproducing them.
// A context stored before format version 10 has no digits field: it was made with the uniform
// split of its dnum, and loads with that split and its own context id, so that its keys (made over
// those digits) and ciphertexts stay valid; a version-10 record keeps the balanced split.
TEST(Serialize, ContextOfVersion9KeepsItsUniformDigits) {
    Parameters p = tiny_parameters();
    p.q_bits = {50, 20, 20, 20, 50, 50};
    p.p_bits = {60};
    const ContextPtr balanced = Context::create(p);
    ASSERT_EQ(balanced->digit_primes(), (std::vector<size_t>{1, 3, 1, 1}));
    Parameters old = p;
    old.digit_primes = {1, 1, 1, 1, 1, 1};  // what dnum = 0 gave before: the fewest equal digits under 60 bits
    const ContextPtr uniform = Context::create(old);
    EXPECT_EQ(uniform->q(), balanced->q());
    EXPECT_NE(uniform->id(), balanced->id());

    const ContextPtr again = io::load_context(io::serialize(*balanced));
    EXPECT_EQ(again->digit_primes(), balanced->digit_primes());
    EXPECT_EQ(again->id(), balanced->id());

    // The version-9 layout of the same record: no digits field, the header's version 9 and the id
    // the context had then.
    Bytes b = io::serialize(*uniform);
    const size_t digits_at = io::kHeaderSize + 2 + 4 + 4 + 6 * 4 + 4 + 4 + 4;  // after dnum
    uint32_t stored_digits = 0;
    std::memcpy(&stored_digits, b.data() + digits_at, 4);
    ASSERT_EQ(stored_digits, 6u);
    b.erase(b.begin() + long(digits_at), b.begin() + long(digits_at + 4 + 6 * 4));
    const uint16_t version = 9;
    std::memcpy(b.data() + 8, &version, 2);
    reseal(b);
    const ContextPtr loaded = io::load_context(b);
    EXPECT_EQ(loaded->digit_primes(), uniform->digit_primes());
    EXPECT_EQ(loaded->id(), uniform->id());
    // and a key made over the uniform digits loads there, but not into the balanced context
    KeyGenerator keygen(uniform);
    const Bytes rk = io::serialize_relin_key(*uniform, keygen.relin_key());
    EXPECT_NO_THROW(io::load_relin_key(*loaded, rk));
    EXPECT_THROW(io::load_relin_key(*balanced, rk), SerializationError);
}

TEST(Serialize, ContextOnExplicitPrimesLoadsWithThem) {
    Parameters p = tiny_parameters();
    const ContextPtr searched = Context::create(p);
    std::vector<uint64_t> used(searched->q());
    used.insert(used.end(), searched->p().begin(), searched->p().end());
    std::vector<uint64_t> q, special;
    for (const int bits : p.q_bits) {
        q.push_back(oboro::math::generate_ntt_primes(bits, searched->n(), 1, used)[0]);
        used.push_back(q.back());
    }
    for (const int bits : p.p_bits) {
        special.push_back(oboro::math::generate_ntt_primes(bits, searched->n(), 1, used)[0]);
        used.push_back(special.back());
    }
    p.use_primes(q, special);
    const ContextPtr ctx = Context::create(p);
    const ContextPtr loaded = io::load_context(io::serialize(*ctx));
    EXPECT_EQ(loaded->q(), q);
    EXPECT_EQ(loaded->p(), special);
    EXPECT_EQ(loaded->id(), ctx->id());
    EXPECT_NE(loaded->id(), searched->id());
    // and its ciphertexts load into the loaded context
    KeyGenerator keygen(ctx);
    Encoder encoder(ctx);
    const Ciphertext ct = Encryptor(ctx, keygen.secret_key()).encrypt(encoder.encode(std::vector<cplx>(4, cplx(0.5, 0)), std::nullopt, std::nullopt, 4));
    EXPECT_NO_THROW(io::load_ciphertext(*loaded, io::serialize(*ctx, ct)));
}

TEST(SerializeErrors, ContextWithInvalidOrForeignParameters) {
    Tiny t;
    Bytes b = io::serialize(*t.ctx);
    // label "" (2 bytes), then log_n: make it 30
    const int32_t log_n = 30;
    std::memcpy(b.data() + io::kHeaderSize + 2, &log_n, 4);
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_context(b), "log_n = 30");
    // A stored prime that is not of its stored size, one that is no NTT prime, and a valid other
    // prime that does not give the record's context id.
    const size_t last_prime = b.size() - 8 - 8;  // the checksum's 8 bytes follow it
    b = io::serialize(*t.ctx);
    b[last_prime + 7] ^= 1;  // its most significant byte
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_context(b), "not valid", "special prime", "is not of its size");
    b = io::serialize(*t.ctx);
    b[last_prime] ^= 2;
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_context(b), "not valid", "is not 1 mod 2N");
    b = io::serialize(*t.ctx);
    std::vector<uint64_t> used(t.ctx->q());
    used.insert(used.end(), t.ctx->p().begin(), t.ctx->p().end());
    const uint64_t other = oboro::math::generate_ntt_primes(int(t.ctx->params().p_bits.back()), t.ctx->n(), 1, used)[0];
    std::memcpy(b.data() + last_prime, &other, 8);
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_context(b), "context id");
    // 128-bit security asked for parameters that do not meet it.
    b = io::serialize(*t.ctx);
    const size_t security_at = io::kHeaderSize + 2 + 4 + 4 + 3 * 4 + 4 + 4 + 4 + (4 + 3 * 4) + 8 + 1 + 4;
    b[security_at] = uint8_t(SecurityLevel::k128);
    reseal(b);
    EXPECT_ERROR(SerializationError, io::load_context(b), "not valid", "security");
}

TEST(SerializeFiles, AtomicWriteAndRead) {
    Tiny t;
    const auto dir = std::filesystem::temp_directory_path() / "oboro_io_test";
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "ct.bin").string();
    const Bytes b = io::serialize(*t.ctx, t.ct());
    io::write_file(path, b);
    EXPECT_EQ(io::read_file(path), b);
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);  // no temporary left
    EXPECT_ERROR(Error, io::read_file((dir / "missing.bin").string()), "missing.bin");
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace oboro::test

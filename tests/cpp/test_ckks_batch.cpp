// Batched evaluation (ckks/batch.hpp, batch_evaluator.hpp): every batched op against the
// single-ciphertext Evaluator on each element, bit for bit (the kernels are the same), plus
// decryption against a double reference, edge cases and every error.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ckks_test_util.hpp"
#include "error_test_util.hpp"
#include "forwarding_queue.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/batch_encoder.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/trace.hpp"
#include "oboro/util/parallel.hpp"
#include "oboro/util/workspace.hpp"

namespace oboro::test {
namespace {

// Every element of `batch` equals want[c] word for word, with the same level, size and scale.
void expect_elements(const CiphertextBatch& batch, const std::vector<Ciphertext>& want) {
    ASSERT_EQ(batch.count(), want.size());
    for (size_t c = 0; c < want.size(); ++c) {
        const Ciphertext got = batch.at(c);
        EXPECT_TRUE(same_words(got, want[c])) << "element " << c << ": size " << got.size() << "/" << want[c].size()
                                              << " level " << got.level() << "/" << want[c].level() << " scale "
                                              << got.scale() << "/" << want[c].scale() << " slots " << got.slots()
                                              << "/" << want[c].slots() << " words " << got.word_count() << "/"
                                              << want[c].word_count();
    }
}

bool same_batch(const CiphertextBatch& a, const CiphertextBatch& b) {
    return a.count() == b.count() && a.size() == b.size() && a.level() == b.level() && a.scale() == b.scale() &&
           a.word_count() == b.word_count() && std::memcmp(a.data(), b.data(), a.word_count() * sizeof(uint64_t)) == 0;
}

struct Inputs {
    std::vector<std::vector<cplx>> values;
    std::vector<Ciphertext> cts;
};

Inputs encrypt_many(Keys& k, size_t d, uint64_t seed, std::optional<int> level = std::nullopt) {
    Inputs in;
    for (size_t c = 0; c < d; ++c) {
        in.values.push_back(random_complex(k.ctx->max_slots(), 1.0, seed + c));
        in.cts.push_back(k.encrypt(in.values.back(), level));
    }
    return in;
}

class BatchTest : public ::testing::TestWithParam<std::string> {
protected:
    Keys& k() { return Keys::get(GetParam()); }
};

TEST_P(BatchTest, LayoutAndRoundTrip) {
    auto in = encrypt_many(k(), 3, 100);
    const auto batch = CiphertextBatch::from_ciphertexts(*k().ctx, in.cts);
    EXPECT_EQ(batch.count(), 3u);
    EXPECT_EQ(batch.size(), 2u);
    EXPECT_EQ(batch.word_count(), 3 * 2 * batch.limbs() * batch.n());  // one allocation d x size x limbs x N
    for (size_t c = 0; c < 3; ++c)
        for (size_t j = 0; j < 2; ++j)
            EXPECT_EQ(batch.poly(c, j), batch.data() + (c * 2 + j) * batch.limbs() * batch.n());
    expect_elements(batch, in.cts);
    const auto back = batch.to_ciphertexts();
    for (size_t c = 0; c < 3; ++c) EXPECT_TRUE(same_words(back[c], in.cts[c]));
    // from pointers (Python's list of Ciphertexts): the same batch, in the order given
    const std::vector<const Ciphertext*> pointers{&in.cts[2], &in.cts[0], &in.cts[1]};
    expect_elements(CiphertextBatch::from_ciphertexts(*k().ctx, std::span(pointers)),
                    {in.cts[2], in.cts[0], in.cts[1]});
    const std::vector<const Ciphertext*> with_null{&in.cts[0], nullptr};
    EXPECT_ERROR(ValueError, CiphertextBatch::from_ciphertexts(*k().ctx, std::span(with_null)), "element 1",
                 "null pointer");
}

// batch[indices]: the selected elements word for word, in the order given, with their seeds; a
// run of consecutive indices (one copy) and repeats; errors.
TEST_P(BatchTest, SelectElements) {
    std::vector<Ciphertext> cts;
    for (size_t c = 0; c < 5; ++c)
        cts.push_back(k().encrypt(random_complex(8, 1.0, 150 + c), std::nullopt, /*with_public_key=*/c % 2 == 1));
    const auto batch = CiphertextBatch::from_ciphertexts(*k().ctx, cts);
    const std::vector<size_t> picks{1, 2, 3, 0, 0, 4};
    const auto sel = batch.select(*k().ctx, picks);
    std::vector<Ciphertext> want;
    for (size_t c : picks) want.push_back(cts[c]);
    expect_elements(sel, want);
    for (size_t k2 = 0; k2 < picks.size(); ++k2)
        EXPECT_EQ(sel.uniform_seed(k2).has_value(), picks[k2] % 2 == 0) << "element " << k2;  // secret-key ones
    EXPECT_ERROR(ValueError, batch.select(*k().ctx, std::vector<size_t>{}), "no element");
    EXPECT_ERROR(ValueError, batch.select(*k().ctx, std::vector<size_t>{0, 5}), "index 5", "batch of 5");
    Keys& other = Keys::get(GetParam() == std::string("S1") ? "S2" : "S1");
    EXPECT_ERROR(ContextMismatch, batch.select(*other.ctx, std::vector<size_t>{0}), "another parameter set");
}

// concatenate: the elements of every part in order, with their seeds; parts that disagree are
// refused with the part named.
TEST_P(BatchTest, ConcatenateBatches) {
    std::vector<Ciphertext> cts;
    for (size_t c = 0; c < 5; ++c)
        cts.push_back(k().encrypt(random_complex(8, 1.0, 160 + c), std::nullopt, /*with_public_key=*/c % 2 == 1));
    const auto a = CiphertextBatch::from_ciphertexts(*k().ctx, std::span(cts.data(), 2));
    const auto b = CiphertextBatch::from_ciphertexts(*k().ctx, std::span(cts.data() + 2, 3));
    const CiphertextBatch* parts[] = {&a, &b, &a};
    const auto joined = CiphertextBatch::concatenate(*k().ctx, parts);
    std::vector<Ciphertext> want{cts[0], cts[1], cts[2], cts[3], cts[4], cts[0], cts[1]};
    expect_elements(joined, want);
    for (size_t c = 0; c < want.size(); ++c)
        EXPECT_EQ(joined.uniform_seed(c).has_value(), want[c].uniform_seed().has_value()) << "element " << c;

    const auto low = CiphertextBatch::from_ciphertexts(*k().ctx, std::vector<Ciphertext>{k().encrypt({{1.0, 0.0}}, 0)});
    const CiphertextBatch* mixed[] = {&a, &low};
    EXPECT_ERROR(LevelMismatch, CiphertextBatch::concatenate(*k().ctx, mixed), "concatenate", "batch 1");
    const auto squared = Evaluator(k().ctx).multiply(a, a);  // the square scale (and 3 polynomials)
    const CiphertextBatch* scales[] = {&a, &squared};
    EXPECT_ERROR(ScaleMismatch, CiphertextBatch::concatenate(*k().ctx, scales), "concatenate", "batch 1");
    EXPECT_ERROR(ValueError, CiphertextBatch::concatenate(*k().ctx, std::span<const CiphertextBatch* const>()), "empty");
}

TEST_P(BatchTest, AddSubNegateConstantsBitExact) {
    const Evaluator& ev = *k().eval;
    const Evaluator bev(k().ctx);
    auto a = encrypt_many(k(), 4, 200), b = encrypt_many(k(), 4, 300);
    const auto A = CiphertextBatch::from_ciphertexts(*k().ctx, a.cts);
    const auto B = CiphertextBatch::from_ciphertexts(*k().ctx, b.cts);
    std::vector<Ciphertext> sum, diff, neg, plus_c, minus_c, times_c, times_int, bcast;
    for (size_t c = 0; c < 4; ++c) {
        sum.push_back(ev.add(a.cts[c], b.cts[c]));
        diff.push_back(ev.sub(a.cts[c], b.cts[c]));
        neg.push_back(ev.negate(a.cts[c]));
        plus_c.push_back(ev.add(a.cts[c], 0.25));
        minus_c.push_back(ev.sub(a.cts[c], 0.25));
        times_c.push_back(ev.multiply(a.cts[c], -1.5));
        times_int.push_back(ev.multiply_integer(a.cts[c], -7));
        bcast.push_back(ev.add(a.cts[c], b.cts[0]));
    }
    expect_elements(bev.add(A, B), sum);
    expect_elements(bev.sub(A, B), diff);
    expect_elements(bev.negate(A), neg);
    expect_elements(bev.add(A, 0.25), plus_c);
    // one element on the right is combined with every element on the left
    expect_elements(bev.add(A, CiphertextBatch::from_ciphertexts(*k().ctx, std::span(b.cts.data(), 1))), bcast);

    CiphertextBatch X = A;
    bev.add_inplace(X, B);
    expect_elements(X, sum);
    X = A;
    bev.sub_inplace(X, B);
    expect_elements(X, diff);
    X = A;
    bev.negate_inplace(X);
    expect_elements(X, neg);
    X = A;
    bev.add_inplace(X, 0.25);
    expect_elements(X, plus_c);
    X = A;
    bev.sub_inplace(X, 0.25);
    expect_elements(X, minus_c);
    X = A;
    bev.multiply_inplace(X, -1.5);
    expect_elements(X, times_c);
    X = A;
    bev.multiply_integer_inplace(X, -7);
    expect_elements(X, times_int);

    // sizes may differ, as for single ciphertexts: size 2 + size 3 is size 3
    std::vector<Ciphertext> prods, mixed_sum, mixed_diff;
    for (size_t c = 0; c < 4; ++c) {
        prods.push_back(ev.multiply(a.cts[c], b.cts[c]));
        prods.back().set_scale(a.cts[c].scale());
        mixed_sum.push_back(ev.add(a.cts[c], prods[c]));
        mixed_diff.push_back(ev.sub(a.cts[c], prods[c]));
    }
    const auto P3 = CiphertextBatch::from_ciphertexts(*k().ctx, prods);
    expect_elements(bev.add(A, P3), mixed_sum);
    expect_elements(bev.sub(A, P3), mixed_diff);
    X = A;
    bev.add_inplace(X, P3);
    EXPECT_EQ(X.size(), 3u);
    expect_elements(X, mixed_sum);
}

TEST_P(BatchTest, PlaintextOpsBitExact) {
    const Evaluator& ev = *k().eval;
    const Evaluator bev(k().ctx);
    auto a = encrypt_many(k(), 3, 400);
    const auto A = CiphertextBatch::from_ciphertexts(*k().ctx, a.cts);
    std::vector<Plaintext> pts;
    for (size_t c = 0; c < 3; ++c) pts.push_back(k().encoder->encode(random_real(8, 1.0, 500 + c)));
    const auto P = PlaintextBatch::from_plaintexts(*k().ctx, pts);
    const auto P1 = PlaintextBatch::from_plaintexts(*k().ctx, std::span(pts.data(), 1));
    std::vector<Ciphertext> sum, diff, prod, prod1;
    for (size_t c = 0; c < 3; ++c) {
        sum.push_back(ev.add(a.cts[c], pts[c]));
        diff.push_back(ev.sub(a.cts[c], pts[c]));
        prod.push_back(ev.multiply(a.cts[c], pts[c]));
        prod1.push_back(ev.multiply(a.cts[c], pts[0]));
    }
    expect_elements(bev.add(A, P), sum);
    expect_elements(bev.sub(A, P), diff);
    expect_elements(bev.multiply(A, P), prod);
    expect_elements(bev.multiply(A, P1), prod1);
    CiphertextBatch X = A;
    bev.add_inplace(X, P);
    expect_elements(X, sum);
    X = A;
    bev.sub_inplace(X, P);
    expect_elements(X, diff);
    X = A;
    bev.multiply_inplace(X, P);
    expect_elements(X, prod);
}

TEST_P(BatchTest, MultiplyRelinearizeRescaleBitExact) {
    const Evaluator& ev = *k().eval;
    const Evaluator bev(k().ctx);
    auto a = encrypt_many(k(), 3, 600), b = encrypt_many(k(), 3, 700);
    const auto A = CiphertextBatch::from_ciphertexts(*k().ctx, a.cts);
    const auto B = CiphertextBatch::from_ciphertexts(*k().ctx, b.cts);
    std::vector<Ciphertext> tensor, relin, rescaled, fused;
    for (size_t c = 0; c < 3; ++c) {
        tensor.push_back(ev.multiply(a.cts[c], b.cts[c]));
        relin.push_back(ev.relinearize(tensor.back(), k().rk));
        rescaled.push_back(ev.rescale(relin.back()));
        fused.push_back(ev.multiply_relin_rescale(a.cts[c], b.cts[c], k().rk));
    }
    const auto T = bev.multiply(A, B);
    EXPECT_EQ(T.size(), 3u);
    expect_elements(T, tensor);
    const auto R = bev.relinearize(T, k().rk);
    expect_elements(R, relin);
    expect_elements(bev.rescale(R), rescaled);
    const auto F = bev.multiply_relin_rescale(A, B, k().rk);
    expect_elements(F, fused);
    // the _into forms give the same and keep a fitting output allocation
    CiphertextBatch out;
    bev.multiply_relin_rescale_into(A, B, k().rk, out);
    expect_elements(out, fused);
    const uint64_t* kept = out.data();
    bev.multiply_relin_rescale_into(A, B, k().rk, out);
    EXPECT_EQ(out.data(), kept);
    expect_elements(out, fused);
    bev.multiply_into(A, B, out);  // another shape: reallocated
    expect_elements(out, tensor);
    bev.add_into(A, B, out);
    std::vector<Ciphertext> sums;
    for (size_t c = 0; c < 3; ++c) sums.push_back(ev.add(a.cts[c], b.cts[c]));
    expect_elements(out, sums);
    EXPECT_ERROR(ValueError, bev.add_into(A, B, const_cast<CiphertextBatch&>(A)), "add", "output");
    // and the decrypted products are right
    for (size_t c = 0; c < 3; ++c) {
        std::vector<cplx> want(a.values[c].size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = a.values[c][i] * b.values[c][i];
        EXPECT_GE(precision_bits(k().decrypt(F.at(c)), want), 18.0) << "element " << c;
    }
}

TEST_P(BatchTest, RotationsBitExact) {
    const Evaluator& ev = *k().eval;
    const Evaluator bev(k().ctx);
    auto a = encrypt_many(k(), 4, 800);
    const auto A = CiphertextBatch::from_ciphertexts(*k().ctx, a.cts);
    std::vector<Ciphertext> same, each, conj;
    const std::vector<int64_t> steps = {1, 0, -1, 5};
    for (size_t c = 0; c < 4; ++c) {
        same.push_back(ev.rotate(a.cts[c], 5, k().gk));
        each.push_back(ev.rotate(a.cts[c], steps[c], k().gk));
        conj.push_back(ev.conjugate(a.cts[c], k().gk));
    }
    expect_elements(bev.rotate(A, 5, k().gk), same);
    const auto C = bev.conjugate(A, k().gk);
    expect_elements(C, conj);
    const auto E = bev.rotate(A, steps, k().gk);
    expect_elements(E, each);
    for (size_t c = 0; c < 4; ++c) {
        const size_t slots = a.values[c].size();
        std::vector<cplx> want(slots);
        for (size_t i = 0; i < slots; ++i) want[i] = a.values[c][(i + size_t(steps[c] + int64_t(slots))) % slots];
        EXPECT_GE(precision_bits(k().decrypt(E.at(c)), want), 18.0) << "element " << c;
        for (size_t i = 0; i < slots; ++i) want[i] = std::conj(a.values[c][i]);
        EXPECT_GE(precision_bits(k().decrypt(C.at(c)), want), 18.0) << "conjugate, element " << c;
    }
}

// Hoisted rotations of a batch: output r equals Evaluator::rotate_many's rotation r of every
// element, bit for bit (step 0: a copy), including the largest step.
TEST_P(BatchTest, RotateManyAndRotateSumBitExact) {
    const Evaluator& ev = *k().eval;
    const Evaluator bev(k().ctx);
    auto a = encrypt_many(k(), 3, 850);
    const auto A = CiphertextBatch::from_ciphertexts(*k().ctx, a.cts);
    const int64_t slots = int64_t(k().ctx->max_slots());
    const std::vector<int64_t> steps = {1, 0, -1, 5, slots - 1};
    const std::vector<CiphertextBatch> got = bev.rotate_many(A, steps, k().gk);
    ASSERT_EQ(got.size(), steps.size());
    std::vector<std::vector<Ciphertext>> want(steps.size());
    for (size_t c = 0; c < a.cts.size(); ++c) {
        const auto r = ev.rotate_many(a.cts[c], steps, k().gk);
        for (size_t i = 0; i < steps.size(); ++i) want[i].push_back(r[i]);
    }
    for (size_t i = 0; i < steps.size(); ++i) {
        SCOPED_TRACE("step " + std::to_string(steps[i]));
        expect_elements(got[i], want[i]);
    }
    // the hoisted sum: Evaluator::rotate_sum on every element, identities included
    const std::vector<int64_t> sum_steps = {0, 1, 5, 0, -1};
    std::vector<Ciphertext> sums, only_identities;
    for (const auto& ct : a.cts) {
        sums.push_back(ev.rotate_sum(ct, sum_steps, k().gk));
        only_identities.push_back(ev.rotate_sum(ct, {0, 0, 0}, k().gk));
    }
    expect_elements(bev.rotate_sum(A, sum_steps, k().gk), sums);
    expect_elements(bev.rotate_sum(A, {0, 0, 0}, k().gk), only_identities);
    EXPECT_TRUE(bev.rotate_many(A, {}, k().gk).empty());
    const auto zeros = bev.rotate_many(A, {0}, k().gk);  // no key switch at all: a copy
    EXPECT_TRUE(same_batch(zeros.at(0), A));
}

// The batched rotate-and-sum equals rotate_and_sum on each element, bit for bit, for every
// strategy (doubling: one batched rotation per round; hoisted and automatic: one batched hoisted
// sum per iteration), and checks its spec, size and keys before any work.
TEST_P(BatchTest, RotateAndSumBitExact) {
    const Evaluator bev(k().ctx);
    auto a = encrypt_many(k(), 3, 900);
    const auto A = CiphertextBatch::from_ciphertexts(*k().ctx, a.cts);
    const int64_t slots = int64_t(k().ctx->max_slots());
    // stride 1 x 2 terms (key 1), and stride slots/2 x 2 terms (key slots/2): the keys of Keys
    for (const SumSpec& spec : {SumSpec::strided(1, 2), SumSpec::strided(slots / 2, 2), SumSpec::strided(1, 1)})
        for (const auto& [strategy, h] : {std::pair{SumStrategy::doubling, 0}, std::pair{SumStrategy::hoisted, 1},
                                          std::pair{SumStrategy::automatic, 0}}) {
            if (spec.rounds == 0 && strategy == SumStrategy::hoisted) continue;  // h = 1 needs a round
            SCOPED_TRACE(std::string(to_string(strategy)) + ", stride " + std::to_string(spec.stride));
            std::vector<Ciphertext> want;
            for (const Ciphertext& ct : a.cts) want.push_back(rotate_and_sum(*k().eval, ct, spec, k().gk, strategy, h));
            const CiphertextBatch got = rotate_and_sum(bev, A, spec, k().gk, strategy, h);
            expect_elements(got, want);
            for (size_t c = 0; c < 3 && spec.rounds == 1; ++c) {
                std::vector<cplx> pair_sum(static_cast<size_t>(slots));
                for (int64_t i = 0; i < slots; ++i)
                    pair_sum[size_t(i)] = a.values[c][size_t(i)] + a.values[c][size_t((i + spec.stride) % slots)];
                EXPECT_GE(precision_bits(k().decrypt(got.at(c)), pair_sum), 18.0) << "element " << c;
            }
        }
    EXPECT_ERROR(MissingKey, rotate_and_sum(bev, A, SumSpec::blocks(4), k().gk, SumStrategy::doubling),
                 "rotations by 2");
    EXPECT_ERROR(MissingKey, rotate_and_sum(bev, A, SumSpec::blocks(4), k().gk), "automatic choice");
    EXPECT_ERROR(ValueError, rotate_and_sum(bev, A, SumSpec::strided(1, 2), k().gk, SumStrategy::hoisted, 2), "h");
    EXPECT_ERROR(ValueError, rotate_and_sum(bev, A, SumSpec::blocks(2 * size_t(slots)), k().gk), "does not fit");
    const CiphertextBatch sq = bev.multiply(A, A);
    EXPECT_ERROR(ValueError, rotate_and_sum(bev, sq, SumSpec::strided(1, 2), k().gk), "relinearize it first");
}

TEST_P(BatchTest, DropToLevelBitExact) {
    const Evaluator& ev = *k().eval;
    const Evaluator bev(k().ctx);
    auto a = encrypt_many(k(), 2, 900);
    const auto A = CiphertextBatch::from_ciphertexts(*k().ctx, a.cts);
    std::vector<Ciphertext> want;
    for (auto& ct : a.cts) want.push_back(ev.drop_to_level(ct, 0));
    expect_elements(bev.drop_to_level(A, 0), want);
    std::vector<Ciphertext> aligned;
    const double target = a.cts[0].scale() * 0.75;
    for (auto& ct : a.cts) aligned.push_back(ev.rescale_to(ct, 0, target));
    expect_elements(bev.rescale_to(A, 0, target), aligned);
    EXPECT_ERROR(LevelMismatch, bev.rescale_to(bev.drop_to_level(A, 0), 0, target), "rescale_to", "target level 0");
}

// Batched encryption (public and secret key) and batched decryption, in parallel: the values
// come back to the precision of single encryptions, every element has its own randomness, the
// secret-key elements keep their seeds, and the batched decryption equals the single one.
TEST_P(BatchTest, EncryptAndDecryptBatches) {
    const size_t d = 5;
    std::vector<cplx> values;
    for (size_t c = 0; c < d; ++c) {
        const auto row = random_complex(k().ctx->max_slots(), 1.0, 1800 + c % 3);  // rows 0 and 3 are equal
        values.insert(values.end(), row.begin(), row.end());
    }
    const PlaintextBatch P = encode_batch(*k().encoder, values, d);
    for (const bool public_key : {true, false}) {
        Encryptor& enc = public_key ? *k().pk_encryptor : *k().sk_encryptor;
        const CiphertextBatch X = enc.encrypt_batch(P);
        ASSERT_EQ(X.count(), d);
        EXPECT_EQ(X.level(), k().ctx->max_level());
        EXPECT_EQ(X.scale(), P.scale());
        const auto batched = k().decryptor->decrypt_decode(X, *k().encoder);
        ASSERT_EQ(batched.size(), d);
        for (size_t c = 0; c < d; ++c) {
            const Ciphertext ct = X.at(c);
            const auto single = k().decrypt(ct);
            EXPECT_EQ(batched[c], single) << "element " << c;
            const std::vector<cplx> want(values.begin() + long(c * k().ctx->max_slots()),
                                         values.begin() + long((c + 1) * k().ctx->max_slots()));
            EXPECT_GE(precision_bits(single, want), public_key ? public_key_fresh_bits_bound(k().ctx->n()) : 25.0)
                << "element " << c << " public key " << public_key;
            EXPECT_EQ(X.uniform_seed(c).has_value(), !public_key) << "element " << c;
        }
        // the same plaintext, encrypted twice in one call: different randomness
        EXPECT_NE(std::memcmp(X.poly(0, 0), X.poly(3, 0), X.limbs() * X.n() * sizeof(uint64_t)), 0);
        if (!public_key) EXPECT_NE(*X.uniform_seed(0), *X.uniform_seed(3));
        // and two calls on the same plaintexts: different randomness again
        const CiphertextBatch Y = enc.encrypt_batch(P);
        EXPECT_NE(std::memcmp(X.poly(0, 0), Y.poly(0, 0), X.limbs() * X.n() * sizeof(uint64_t)), 0);
    }
}

// encrypt_batch(encoder, values, rows) encodes and encrypts each row in one step: with the same
// generator state it gives what encode_batch + encrypt_batch give (c0 + c1*s word for word), at
// the top level and at level 0 with sparse slots.
TEST_P(BatchTest, OneStepBatchEncryptionEqualsEncodeThenEncrypt) {
    const size_t d = 3;
    for (const bool public_key : {true, false}) {
        Encryptor& enc = public_key ? *k().pk_encryptor : *k().sk_encryptor;
        for (const auto& [level, slots] : {std::pair{k().ctx->max_level(), k().ctx->max_slots()}, std::pair{0, size_t(8)}}) {
            SCOPED_TRACE(testing::Message() << "public key " << public_key << ", level " << level << ", " << slots
                                            << " slots");
            std::vector<cplx> values;
            for (size_t c = 0; c < d; ++c) {
                const auto row = random_complex(slots, 1.0, 1900 + c);
                values.insert(values.end(), row.begin(), row.end());
            }
            const math::Seed seed{9, 9};
            enc.reseed_for_testing(seed);
            const CiphertextBatch one = enc.encrypt_batch(*k().encoder, values, d, level, std::nullopt, slots);
            enc.reseed_for_testing(seed);
            const CiphertextBatch two = enc.encrypt_batch(encode_batch(*k().encoder, values, d, level, std::nullopt, slots));
            ASSERT_EQ(one.count(), d);
            EXPECT_EQ(one.level(), level);
            EXPECT_EQ(one.scale(), two.scale());
            EXPECT_EQ(one.slots(), slots);
            for (size_t c = 0; c < d; ++c) {
                const Plaintext a = k().decryptor->decrypt(one.at(c)), b = k().decryptor->decrypt(two.at(c));
                EXPECT_TRUE(std::equal(a.poly(0), a.poly(0) + a.limbs() * k().ctx->n(), b.poly(0))) << "element " << c;
                EXPECT_EQ(one.uniform_seed(c).has_value(), !public_key) << "element " << c;
            }
        }
    }
    // encode's errors, naming the row
    std::vector<cplx> bad(2 * k().ctx->max_slots(), cplx(0.5, 0));
    bad[k().ctx->max_slots() + 3] = cplx(1e300, 0);
    EXPECT_ERROR(ValueError, k().pk_encryptor->encrypt_batch(*k().encoder, bad, 2), "encrypt_batch", "row 1");
    EXPECT_ERROR(ValueError, k().pk_encryptor->encrypt_batch(*k().encoder, bad, 3), "equal rows");
    EXPECT_ERROR(ValueError, k().pk_encryptor->encrypt_batch(*k().encoder, bad, 0), "at least one row");
    EXPECT_ERROR(ContextMismatch, k().pk_encryptor->encrypt_batch(*Keys::get(GetParam() == "S1" ? "S2" : "S1").encoder, bad, 2),
                 "another parameter set");
}

INSTANTIATE_TEST_SUITE_P(Presets, BatchTest, ::testing::Values("S1", "S2"));

// ---- edge cases ----------------------------------------------------------------------------------

TEST(BatchEdges, OneElementAndLevelZero) {
    Keys& k = Keys::get("S1");
    const Evaluator& ev = *k.eval;
    const Evaluator bev(k.ctx);
    auto a = encrypt_many(k, 1, 1000, 0), b = encrypt_many(k, 1, 1100, 0);
    const auto A = CiphertextBatch::from_ciphertexts(*k.ctx, a.cts);
    const auto B = CiphertextBatch::from_ciphertexts(*k.ctx, b.cts);
    EXPECT_EQ(A.level(), 0);
    expect_elements(bev.add(A, B), {ev.add(a.cts[0], b.cts[0])});
    expect_elements(bev.sub(A, B), {ev.sub(a.cts[0], b.cts[0])});
    expect_elements(bev.rotate(A, -1, k.gk), {ev.rotate(a.cts[0], -1, k.gk)});
    expect_elements(bev.rotate(A, std::vector<int64_t>{0}, k.gk), {a.cts[0]});
    // S1's level 0 is one 60-bit prime: a product at scale 2^80 does not fit, in both evaluators
    EXPECT_THROW(ev.multiply(a.cts[0], b.cts[0]), ScaleMismatch);
    EXPECT_ERROR(ScaleMismatch, bev.multiply(A, B), "multiply", "exceeds the modulus");
    EXPECT_ERROR(LevelMismatch, bev.rescale(A), "rescale", "level 0");
    EXPECT_ERROR(LevelMismatch, bev.multiply_relin_rescale(A, B, k.rk), "multiply_relin_rescale", "level 0");
}

TEST(BatchEdges, SameResultWithOneAndTwoThreads) {
    Keys& k = Keys::get("S1");
    const Evaluator bev(k.ctx);
    auto a = encrypt_many(k, 5, 1200), b = encrypt_many(k, 5, 1300);
    const auto A = CiphertextBatch::from_ciphertexts(*k.ctx, a.cts);
    const auto B = CiphertextBatch::from_ciphertexts(*k.ctx, b.cts);
    const int before = num_threads();
    set_num_threads(1);
    const auto f1 = bev.multiply_relin_rescale(A, B, k.rk);
    const auto r1 = bev.rotate(A, std::vector<int64_t>{1, -1, 5, 0, 1}, k.gk);
    set_num_threads(2);
    const auto f2 = bev.multiply_relin_rescale(A, B, k.rk);
    const auto r2 = bev.rotate(A, std::vector<int64_t>{1, -1, 5, 0, 1}, k.gk);
    set_num_threads(before);
    EXPECT_TRUE(same_batch(f1, f2));
    EXPECT_TRUE(same_batch(r1, r2));
}

// A batch whose output reaches kStreamingBytes is written with streaming stores (add, sub,
// tensor, plaintext product): the same words as the single-ciphertext ops, which store normally.
TEST(BatchEdges, LargeBatchesStreamTheSameWords) {
    Keys& k = Keys::get("S1");
    const Evaluator& ev = *k.eval;
    const Evaluator bev(k.ctx);
    auto a = encrypt_many(k, 4, 1500), b = encrypt_many(k, 4, 1600);
    const Plaintext pt = k.encoder->encode(random_real(8, 1.0, 1700));
    const size_t d = 40;  // 40 S1 ciphertexts of 256 KiB: a 10 MiB sum and a 15 MiB tensor product
    std::vector<Ciphertext> as, bs, sum, diff, tensor, prod;
    for (size_t c = 0; c < d; ++c) {
        as.push_back(a.cts[c % 4]);
        bs.push_back(b.cts[(c / 4) % 4]);
        sum.push_back(ev.add(as[c], bs[c]));
        diff.push_back(ev.sub(as[c], bs[c]));
        tensor.push_back(ev.multiply(as[c], bs[c]));
        prod.push_back(ev.multiply(as[c], pt));
    }
    const auto A = CiphertextBatch::from_ciphertexts(*k.ctx, as);
    const auto B = CiphertextBatch::from_ciphertexts(*k.ctx, bs);
    const auto P = PlaintextBatch::from_plaintexts(*k.ctx, std::span(&pt, 1));
    ASSERT_GE(A.word_count() * sizeof(uint64_t), backend::cpu::kStreamingBytes);
    for (int threads : {1, 2}) {
        const int before = num_threads();
        set_num_threads(threads);
        expect_elements(bev.add(A, B), sum);
        expect_elements(bev.sub(A, B), diff);
        expect_elements(bev.multiply(A, B), tensor);
        expect_elements(bev.multiply(A, P), prod);
        set_num_threads(before);
    }
}

// Flooded batched decryption: each element gets fresh noise of the requested size (element 0 and
// element 1 hold the same ciphertext, and two calls differ too), and bad batches are refused.
TEST(BatchEdges, BatchDecryptionFloodsEveryElement) {
    Keys& k = Keys::get("S1");
    const auto v = random_complex(k.ctx->max_slots(), 1.0, 1900);
    const Ciphertext ct = k.encrypt(v, std::nullopt, false);
    const std::vector<Ciphertext> cts{ct, ct};
    const auto X = CiphertextBatch::from_ciphertexts(*k.ctx, cts);
    Decryptor flooded(k.ctx, k.keygen->secret_key());
    flooded.set_noise_flooding(20);
    const auto first = flooded.decrypt_decode(X, *k.encoder), second = flooded.decrypt_decode(X, *k.encoder);
    EXPECT_NE(first[0], first[1]);
    EXPECT_NE(first[0], second[0]);
    const double plain = precision_bits(k.decrypt(ct), v);
    for (const auto& got : {first[0], first[1], second[0]}) {
        const double noisy = precision_bits(got, v);  // as NoiseFloodingAddsTheRequestedNoise: ~11.5 bits
        EXPECT_LT(noisy, plain - 10);
        EXPECT_GT(noisy, 9.0);
        EXPECT_LT(noisy, 14.0);
    }
    Keys& other = Keys::get("S2");
    EXPECT_ERROR(ContextMismatch, other.decryptor->decrypt_decode(X, *other.encoder), "decrypt", "batch",
                 "another parameter set");
    EXPECT_ERROR(ContextMismatch, other.sk_encryptor->encrypt_batch(encode_batch(*k.encoder, v, 1)), "encrypt_batch",
                 "another parameter set");
    EXPECT_ERROR(ValueError, k.sk_encryptor->encrypt_batch(PlaintextBatch()), "encrypt_batch");
}

TEST(BatchEdges, KeySwitchingScratchIsReused) {
    Keys& k = Keys::get("S1");
    const Evaluator bev(k.ctx);
    auto a = encrypt_many(k, 6, 1400);
    const auto A = CiphertextBatch::from_ciphertexts(*k.ctx, a.cts);
    const auto T = bev.multiply(A, A);
    const int before = num_threads();
    set_num_threads(1);  // deterministic: which pool threads take part varies from run to run
    // the hoisted rotations (one ModUp for several keys) take their digits from the same workspaces
    const std::vector<int64_t> steps{1, -1, 5};
    const auto ops = [&] {
        (void)bev.multiply_relin_rescale(A, A, k.rk);
        (void)bev.relinearize(T, k.rk);
        (void)bev.rotate(A, 1, k.gk);
        (void)bev.rotate_many(A, steps, k.gk);
        (void)bev.rotate_many_extended(A, steps, k.gk);
        (void)bev.rotate_sum(A, steps, k.gk);
    };
    ops();  // grows the workspaces to what these ops need
    const size_t workspaces = scratch_pool().idle_count(), words = scratch_pool().idle_capacity_words();
    EXPECT_GE(workspaces, 1u);
    ops();
    set_num_threads(before);
    EXPECT_EQ(scratch_pool().idle_count(), workspaces);
    EXPECT_EQ(scratch_pool().idle_capacity_words(), words);  // nothing was allocated again
}

// ---- the queue contract (backend/queue.hpp): one kernel per batched op, no waiting --------------

// Forwards every kernel to the CPU queue and counts the calls: what a GPU backend would launch.
class CountingQueue final : public ForwardingQueue {
public:
    int kernels = 0, syncs = 0;
    const char* device_name() const override { return "counting"; }
    void synchronize() override { ++syncs; }

protected:
    void on_kernel() override { ++kernels; }
};

TEST(BatchQueueContract, OneKernelPerOpAndNoWaiting) {
    Keys& k = Keys::get("S1");
    const auto queue = std::make_shared<CountingQueue>();
    CountingQueue& q = *queue;
    const Evaluator bev(k.ctx, queue);
    EXPECT_STREQ(bev.queue().device_name(), "counting");
    auto a = encrypt_many(k, 5, 1900), b = encrypt_many(k, 5, 2000);
    const auto A = CiphertextBatch::from_ciphertexts(*k.ctx, a.cts);
    const auto B = CiphertextBatch::from_ciphertexts(*k.ctx, b.cts);
    std::vector<Plaintext> pts;
    for (size_t c = 0; c < 5; ++c) pts.push_back(k.encoder->encode(random_real(8, 1.0, 2100 + c)));
    const auto P = PlaintextBatch::from_plaintexts(*k.ctx, pts);
    const auto T = bev.multiply(A, B);
    CiphertextBatch out;
    const std::pair<const char*, std::function<void()>> ops[] = {
        {"add", [&] { (void)bev.add(A, B); }},
        {"add_into", [&] { bev.add_into(A, B, out); }},
        {"sub", [&] { (void)bev.sub(A, B); }},
        {"negate", [&] { (void)bev.negate(A); }},
        {"add constant", [&] { (void)bev.add(A, 0.5); }},
        {"add plaintext", [&] { (void)bev.add(A, P); }},
        {"multiply plaintext", [&] { (void)bev.multiply(A, P); }},
        {"multiply", [&] { (void)bev.multiply(A, B); }},
        {"relinearize", [&] { (void)bev.relinearize(T, k.rk); }},
        {"rescale", [&] { (void)bev.rescale(A); }},
        {"multiply_relin_rescale", [&] { (void)bev.multiply_relin_rescale(A, B, k.rk); }},
        {"drop_to_level", [&] { (void)bev.drop_to_level(A, 0); }},
        {"rotate", [&] { (void)bev.rotate(A, 1, k.gk); }},
        {"rotate per element", [&] { (void)bev.rotate(A, std::vector<int64_t>{1, 0, -1, 5, 1}, k.gk); }},
        {"rotate_many (hoisted)", [&] { (void)bev.rotate_many(A, {1, 0, -1, 5}, k.gk); }},
        {"rotate_sum (hoisted)", [&] { (void)bev.rotate_sum(A, {0, 1, -1, 5}, k.gk); }},
        {"conjugate", [&] { (void)bev.conjugate(A, k.gk); }},
        {"encode_batch", [&] { (void)encode_batch(*k.encoder, random_complex(5 * 8, 1.0, 2200), 5, std::nullopt, std::nullopt, std::nullopt, queue); }},
    };
    for (const auto& [name, op] : ops) {
        q.kernels = 0;
        op();
        EXPECT_EQ(q.kernels, 1) << name << ": one kernel for all 5 elements";
    }
    EXPECT_EQ(q.syncs, 0);  // operations never wait; only the caller's synchronize() does
    bev.synchronize();
    EXPECT_EQ(q.syncs, 1);
}

// ---- errors ----------------------------------------------------------------------------------------

TEST(BatchErrors, FromCiphertexts) {
    Keys& k = Keys::get("S1");
    auto a = encrypt_many(k, 2, 1500);
    EXPECT_ERROR(ValueError, CiphertextBatch::from_ciphertexts(*k.ctx, std::vector<Ciphertext>{}), "from_ciphertexts",
                 "empty");
    std::vector<Ciphertext> mixed_level = {a.cts[0], k.eval->drop_to_level(a.cts[1], 0)};
    EXPECT_ERROR(LevelMismatch, CiphertextBatch::from_ciphertexts(*k.ctx, mixed_level), "from_ciphertexts",
                 "element 1", "level 0", "level 1");
    Ciphertext other_scale = a.cts[1];
    other_scale.set_scale(a.cts[1].scale() * 2);
    std::vector<Ciphertext> mixed_scale = {a.cts[0], other_scale};
    EXPECT_ERROR(ScaleMismatch, CiphertextBatch::from_ciphertexts(*k.ctx, mixed_scale), "from_ciphertexts",
                 "element 1", "2^41");
    std::vector<Ciphertext> mixed_size = {a.cts[0], k.eval->multiply(a.cts[1], a.cts[1])};
    mixed_size[1].set_scale(a.cts[0].scale());
    EXPECT_ERROR(ValueError, CiphertextBatch::from_ciphertexts(*k.ctx, mixed_size), "from_ciphertexts", "element 1",
                 "3 polynomials");
    std::vector<Ciphertext> with_empty = {a.cts[0], Ciphertext()};
    EXPECT_ERROR(ValueError, CiphertextBatch::from_ciphertexts(*k.ctx, with_empty), "element 1", "empty");
    Parameters p;
    p.log_n = 13;
    p.q_bits = {50, 40};
    p.p_bits = {60};
    p.scale = 0x1p40;
    const auto other = Context::create(p);
    EXPECT_ERROR(ContextMismatch, CiphertextBatch::from_ciphertexts(*other, a.cts), "from_ciphertexts", "element 0",
                 "another parameter set");
    const auto A = CiphertextBatch::from_ciphertexts(*k.ctx, a.cts);
    EXPECT_ERROR(ValueError, A.at(2), "index 2", "batch of 2");
    // plaintext batches share the checks
    std::vector<Plaintext> pts = {k.encoder->encode(random_real(8, 1.0, 1)), k.encoder->encode(random_real(8, 1.0, 2), 0)};
    EXPECT_ERROR(LevelMismatch, PlaintextBatch::from_plaintexts(*k.ctx, pts), "from_plaintexts", "element 1");
    EXPECT_ERROR(ValueError, PlaintextBatch::from_plaintexts(*k.ctx, std::vector<Plaintext>{}), "from_plaintexts",
                 "empty");
}

TEST(BatchErrors, OperandsCheckedBeforeAnyWork) {
    Keys& k = Keys::get("S1");
    const Evaluator bev(k.ctx);
    auto a = encrypt_many(k, 3, 1600), b = encrypt_many(k, 2, 1700);
    const auto A = CiphertextBatch::from_ciphertexts(*k.ctx, a.cts);
    const auto B2 = CiphertextBatch::from_ciphertexts(*k.ctx, b.cts);
    const auto low = bev.drop_to_level(A, 0);
    auto scaled = A, huge = A;
    scaled.set_scale(A.scale() * 2);
    huge.set_scale(A.scale() * 0x1p20);
    const auto T = bev.multiply(A, A);

    CiphertextBatch X = A;
    EXPECT_ERROR(ValueError, bev.add_inplace(X, B2), "add", "batch of 3", "batch of 2");
    EXPECT_ERROR(LevelMismatch, bev.add_inplace(X, low), "add", "level 1", "level 0");
    EXPECT_ERROR(ScaleMismatch, bev.sub_inplace(X, scaled), "sub", "2^41");
    // one size-3 ciphertext combined with every size-2 element: relinearize it first
    auto T1 = bev.multiply(CiphertextBatch::from_ciphertexts(*k.ctx, std::vector<Ciphertext>{a.cts[0]}),
                           CiphertextBatch::from_ciphertexts(*k.ctx, std::vector<Ciphertext>{a.cts[0]}));
    T1.set_scale(A.scale());
    EXPECT_ERROR(ValueError, bev.add_inplace(X, T1), "add", "3 polynomials", "relinearize 'b' first");
    EXPECT_ERROR(ValueError, bev.add_inplace(X, 1e20), "add", "does not fit");
    EXPECT_TRUE(same_batch(X, A));  // the in-place operand is unchanged after every error

    EXPECT_ERROR(ValueError, bev.multiply(T, A), "multiply", "'a'", "3 polynomials");
    EXPECT_ERROR(LevelMismatch, bev.multiply(A, low), "multiply", "level 1", "level 0");
    EXPECT_ERROR(ScaleMismatch, bev.multiply(huge, huge), "multiply", "exceeds the modulus");
    EXPECT_TRUE(same_batch(bev.relinearize(A, k.rk), A));  // size 2 already: unchanged, as for a Ciphertext
    EXPECT_ERROR(MissingKey, bev.relinearize(T, RelinKey{}), "relinearize", "no relinearization key");
    EXPECT_ERROR(MissingKey, bev.multiply_relin_rescale(A, A, RelinKey{}), "multiply_relin_rescale",
                 "no relinearization key");
    EXPECT_ERROR(LevelMismatch, bev.rescale(low), "rescale", "level 0");
    EXPECT_ERROR(LevelMismatch, bev.drop_to_level(low, 1), "drop_to_level", "level 1");

    EXPECT_ERROR(MissingKey, bev.rotate(A, std::vector<int64_t>{2, 1, 3}, k.gk), "rotate", "2, 3");
    EXPECT_ERROR(MissingKey, bev.rotate(A, 2, k.gk), "rotate", "by 2");
    EXPECT_ERROR(ValueError, bev.rotate(A, std::vector<int64_t>{1, 1}, k.gk), "rotate", "2 steps", "one per element");
    const int64_t slots = int64_t(A.slots());
    EXPECT_ERROR(ValueError, bev.rotate(A, slots, k.gk), "rotate", "out of range");
    EXPECT_ERROR(ValueError, bev.rotate(T, 1, k.gk), "rotate", "3 polynomials");
    EXPECT_ERROR(MissingKey, bev.rotate_many(A, {1, 2, 3, 2}, k.gk), "rotate_many", "2, 3");
    EXPECT_ERROR(ValueError, bev.rotate_many(A, {1, -slots}, k.gk), "rotate_many", "step 1", "out of range");
    EXPECT_ERROR(ValueError, bev.rotate_many(T, {1}, k.gk), "rotate_many", "3 polynomials");
    EXPECT_ERROR(ValueError, bev.rotate_sum(A, {}, k.gk), "rotate_sum", "no steps");
    EXPECT_ERROR(MissingKey, bev.rotate_sum(A, {0, 2}, k.gk), "rotate_sum", "by 2");
    EXPECT_ERROR(ValueError, bev.conjugate(T, k.gk), "conjugate", "3 polynomials");
    EXPECT_ERROR(MissingKey, bev.conjugate(A, k.keygen->galois_keys({1})), "conjugate", "no conjugation key");
    X = A;
    EXPECT_ERROR(ValueError, bev.multiply_inplace(X, 1e20), "multiply", "does not fit");
    EXPECT_TRUE(same_batch(X, A));
}

TEST(BatchErrors, ForeignContextAndKeys) {
    Keys& k = Keys::get("S1");
    const Evaluator bev(k.ctx);
    Parameters p;
    p.log_n = 13;
    p.q_bits = {50, 40};
    p.p_bits = {60};
    p.scale = 0x1p40;
    Keys other(p);
    auto a = encrypt_many(k, 2, 1800);
    const auto A = CiphertextBatch::from_ciphertexts(*k.ctx, a.cts);
    std::vector<Ciphertext> foreign_cts = {other.encrypt(random_real(4, 1, 1)), other.encrypt(random_real(4, 1, 2))};
    const auto F = CiphertextBatch::from_ciphertexts(*other.ctx, foreign_cts);
    EXPECT_ERROR(ContextMismatch, bev.add(A, F), "add", "'b'", "another parameter set");
    EXPECT_ERROR(ContextMismatch, bev.multiply_relin_rescale(A, A, other.rk), "multiply_relin_rescale", "key");
    EXPECT_ERROR(ContextMismatch, bev.rotate(A, 1, other.gk), "rotate", "Galois keys");
    EXPECT_ERROR(ContextMismatch, bev.conjugate(A, other.gk), "conjugate", "Galois keys");
}

}  // namespace
}  // namespace oboro::test

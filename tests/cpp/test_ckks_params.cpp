// Parameters::validate and Context construction: presets, the HE-standard security bounds,
// malformed parameter sets (each a ParameterError that says what is wrong and what the limit
// is), and the properties of the primes and Galois elements of a built context.
//
// Contexts are only built for small rings (S1, S2 and custom sets up to N = 2^13), except one
// N = 2^16 set that must be rejected.
#include "error_test_util.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <typeinfo>
#include <vector>

#include "oboro/ckks/context.hpp"
#include "oboro/ckks/parameters.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/math/primes.hpp"
#include "oboro/util/error.hpp"

using namespace oboro::ckks;
using oboro::ParameterError;

using oboro::test::message_of;
using oboro::test::expect_mentions;

namespace {


Parameters make(int log_n, std::vector<int> q, std::vector<int> p, SecurityLevel sec = SecurityLevel::k128) {
    Parameters params;
    params.log_n = log_n;
    params.q_bits = std::move(q);
    params.p_bits = std::move(p);
    params.security = sec;
    return params;
}

// A valid small set (N = 2^12, log2(QP) = 100 <= 109).
Parameters small() { return make(12, {30, 30}, {40}); }

}  // namespace

// ---- presets ------------------------------------------------------------------------------------

TEST(ParamsPresets, AllValidateAndDescribeThemselves) {
    struct Want { const char* name; int log_n; int log_qp; int levels; };
    for (const Want& w : {Want{"S1", 13, 160, 1}, Want{"S2", 14, 240, 3}, Want{"S3", 15, 820, 9},
                          Want{"S4", 16, 1220, 20}}) {
        SCOPED_TRACE(w.name);
        const Parameters p = Parameters::preset(w.name);
        EXPECT_NO_THROW(p.validate());
        EXPECT_EQ(p.log_n, w.log_n);
        EXPECT_EQ(p.log_qp(), w.log_qp);
        EXPECT_EQ(p.max_level(), w.levels);
        EXPECT_EQ(p.scale, 0x1p40);
        EXPECT_LE(p.log_qp(), max_log_qp(p.log_n, SecurityLevel::k128));
        const std::string d = p.describe();
        expect_mentions(d, {"N=2^" + std::to_string(w.log_n), "log2(QP)=" + std::to_string(w.log_qp), "128-bit"});
    }
    const auto names = Parameters::preset_names();
    EXPECT_EQ(names, (std::vector<std::string>{"S1", "S2", "S3", "S4", "B1", "B2", "BT"}));
    EXPECT_ERROR(ParameterError, Parameters::preset("S9"), "S9");
    EXPECT_ERROR(ParameterError, Parameters::preset(""), "preset");
}

// The bootstrappable presets: B1 and B2 within the sparse-secret bound of 2^16 (1555 bits, weight
// 192), BT B1's circuit shape in an insecure test ring.
TEST(ParamsPresets, Bootstrappable) {
    const Parameters b1 = Parameters::preset("B1");
    EXPECT_NO_THROW(b1.validate());
    EXPECT_EQ(b1.log_n, 16);
    EXPECT_EQ(b1.secret, SecretDistribution::sparse_ternary);
    EXPECT_EQ(b1.hamming_weight, 192);
    EXPECT_EQ(b1.security, SecurityLevel::k128);
    EXPECT_EQ(b1.log_qp(), 1550);
    EXPECT_LE(b1.log_qp(), max_log_qp(b1));
    EXPECT_EQ(max_log_qp(b1), 1555);
    // B2: B1's circuit with EvalMod's one term (two iterations: automatic at its scale) under 9
    // residual levels of 48 bits, at the default scale 2^48;
    // q_0 of 60 bits, as the key to the ephemeral secret needs (q_0 and one special prime <= 121 bits)
    const Parameters b2 = Parameters::preset("B2");
    EXPECT_NO_THROW(b2.validate());
    EXPECT_EQ(b2.security, SecurityLevel::k128);
    EXPECT_EQ(b2.hamming_weight, 192);
    EXPECT_EQ(b2.log_qp(), 1542);
    EXPECT_LE(b2.log_qp(), max_log_qp(b2));
    EXPECT_EQ(b2.scale, 0x1p48);
    EXPECT_EQ(b2.max_level(), b1.max_level() - 2);
    EXPECT_LE(b2.q_bits[0] + b2.p_bits[0], max_log_q_sparse_sample(16, 32));
    const Parameters bt = Parameters::preset("BT");
    EXPECT_NO_THROW(bt.validate());
    EXPECT_EQ(bt.security, SecurityLevel::none);
    EXPECT_EQ(bt.max_level(), b1.max_level() - 8);  // 8 fewer residual levels, the same circuit levels
    EXPECT_NE(bt.describe().find("INSECURE"), std::string::npos);
}

// A sparse secret is checked against the sparse bound (weight >= 192, 128-bit) or refused with a
// message that says what is known; security none is explicit.
TEST(ParamsSecurity, SparseSecretBound) {
    Parameters p = Parameters::preset("B1");
    p.q_bits.push_back(50);  // 1560 bits: within the ternary table, above the sparse bound
    EXPECT_LE(p.log_qp(), max_log_qp(16, SecurityLevel::k128));
    EXPECT_ERROR(ParameterError, p.validate(), "1555", "sparse");
    p.q_bits.pop_back();
    p.hamming_weight = 64;  // no bound known for this weight
    EXPECT_ERROR(ParameterError, p.validate(), "hamming_weight 64", "none");
    p.security = SecurityLevel::none;
    EXPECT_NO_THROW(p.validate());
    p.hamming_weight = 192;
    p.security = SecurityLevel::k192;  // no 192-bit sparse bound
    EXPECT_ERROR(ParameterError, p.validate(), "192-bit");
    EXPECT_EQ(max_log_q_sparse_sample(16, 32), 121);
    EXPECT_EQ(max_log_q_sparse_sample(15, 32), 0);
    EXPECT_EQ(max_log_q_sparse_sample(16, 16), 0);
}

TEST(ParamsPresets, EffectiveDnum) {
    EXPECT_EQ(Parameters::preset("S1").effective_dnum(), 2);
    EXPECT_EQ(Parameters::preset("S2").effective_dnum(), 4);
    EXPECT_EQ(Parameters::preset("S4").effective_dnum(), 3);
    EXPECT_EQ(Context(Parameters::preset("S1")).dnum(), 2);
    EXPECT_EQ(Context(Parameters::preset("S2")).dnum(), 4);
}

// ---- key-switching digits ------------------------------------------------------------------------

// The presets' digits: the uniform split where the primes are of one size beside q_0 (so their
// context ids are those they had before the split was balanced: S1-S4 and B2), and for B1 and BT
// the 40- and 45-bit primes packed more to a digit than the 61-bit ones, each digit at most P's
// 244 bits.
TEST(ParamsDigits, Presets) {
    for (const char* name : {"S1", "S2", "S3", "S4"}) {
        const Parameters p = Parameters::preset(name);
        EXPECT_EQ(p.digit_partition(), uniform_digits(p.q_bits.size(), p.effective_dnum())) << name;
    }
    EXPECT_EQ(Parameters::preset("B1").digit_partition(), (std::vector<int>{5, 5, 5, 4, 4, 3}));
    EXPECT_EQ(Parameters::preset("B2").digit_partition(), (std::vector<int>{4, 4, 4, 4, 4, 4}));
    EXPECT_EQ(Parameters::preset("BT").digit_partition(), (std::vector<int>{5, 4, 3, 3, 3}));
    for (const char* name : {"B1", "B2", "BT"}) {
        const Parameters p = Parameters::preset(name);
        EXPECT_LE(widest_digit_bits(p.q_bits, p.digit_partition()), 244) << name;
        const Context ctx(p);
        EXPECT_EQ(ctx.dnum(), int(p.digit_partition().size())) << name;
        size_t begin = 0;
        for (size_t j = 0; j < ctx.num_digits(); ++j) {  // the ring's digits at the top level are the split
            EXPECT_EQ(ctx.level(ctx.max_level()).digits[j].begin, begin) << name;
            begin += ctx.digit_primes()[j];
            EXPECT_EQ(ctx.level(ctx.max_level()).digits[j].end, begin) << name;
        }
    }
    // B1's levels 8 and 9 meet two digits where equal counts met three, level 4 one where they met
    // two, and its top level six where they met seven
    const Context b1(Parameters::preset("B1"));
    EXPECT_EQ(b1.ring().digits_at(9), 2u);
    EXPECT_EQ(b1.ring().digits_at(4), 1u);
    EXPECT_EQ(b1.ring().digits_at(b1.max_level()), 6u);
}

// balanced_digits against every split of small chains into consecutive runs: its widest digit is
// the least of all splits into at most dnum digits, and among the splits of that width it has the
// least sum of squared digit bits, ties to the lexicographically largest digit counts.
TEST(ParamsDigits, BalancedIsTheNarrowestMostEvenSplit) {
    const std::vector<std::vector<int>> chains = {{60, 40, 40, 40, 45, 61, 61}, {30, 25, 25, 25, 25, 25},
                                                  {20, 20, 20, 50, 30, 30}, {61, 20, 61, 20, 20, 61, 40, 40},
                                                  {40}, {50, 50, 50}, {60, 40, 40, 40, 40, 40, 40, 61, 61}};
    const auto square_bits = [](const std::vector<int>& q, const std::vector<int>& split) {
        int64_t sum = 0;
        size_t i = 0;
        for (int d : split) {
            int64_t bits = 0;
            for (int k = 0; k < d; ++k) bits += q[i++];
            sum += bits * bits;
        }
        return sum;
    };
    for (const auto& q : chains)
        for (int dnum = 1; dnum <= int(q.size()); ++dnum) {
            const std::vector<int> got = balanced_digits(q, dnum);
            ASSERT_LE(got.size(), size_t(dnum));
            ASSERT_EQ(std::accumulate(got.begin(), got.end(), size_t(0)), q.size());
            const int widest = widest_digit_bits(q, got);
            const int64_t cost = square_bits(q, got);
            // every split: a bit per gap between consecutive primes
            const size_t gaps = q.size() - 1;
            for (uint32_t cuts = 0; cuts < (1u << gaps); ++cuts) {
                std::vector<int> split = {1};
                for (size_t g = 0; g < gaps; ++g) {
                    if (cuts >> g & 1) split.push_back(1);
                    else ++split.back();
                }
                if (split.size() > size_t(dnum)) continue;
                const int w = widest_digit_bits(q, split);
                ASSERT_GE(w, widest) << "a narrower split exists for dnum " << dnum;
                if (w > widest) continue;
                const int64_t c = square_bits(q, split);
                ASSERT_GE(c, cost) << "a more even split exists for dnum " << dnum;
                if (c == cost) ASSERT_GE(got, split) << "dnum " << dnum;
            }
        }
}

TEST(ParamsMalformed, DigitPrimes) {
    Parameters p = make(12, {30, 20, 20, 30}, {50}, SecurityLevel::none);
    p.digit_primes = {1, 2, 1};
    EXPECT_NO_THROW(p.validate());
    EXPECT_EQ(Context(p).digit_primes(), (std::vector<size_t>{1, 2, 1}));
    p.dnum = 2;
    EXPECT_ERROR(ParameterError, p.validate(), "dnum = 2", "3 digits");
    p.dnum = 4;  // dnum is the most digits
    EXPECT_NO_THROW(p.validate());
    p.dnum = 0;
    p.digit_primes = {1, 2};
    EXPECT_ERROR(ParameterError, p.validate(), "covers 3 primes", "4");
    p.digit_primes = {1, 0, 2, 1};
    EXPECT_ERROR(ParameterError, p.validate(), "digit of 0 primes");
    p.digit_primes = {1, 3};  // 70 bits under 50 bits of special primes
    EXPECT_ERROR(ParameterError, p.validate(), "70 bits", "50");
}

// ---- the security bound -------------------------------------------------------------------------

TEST(ParamsSecurity, MaxLogQpTable128) {
    const std::vector<std::pair<int, int>> table = {{12, 109}, {13, 218}, {14, 438}, {15, 881}, {16, 1747}, {17, 3523}};
    for (auto [log_n, bits] : table) EXPECT_EQ(max_log_qp(log_n, SecurityLevel::k128), bits) << "log_n " << log_n;
    // 192 and 256 bits allow less, and nothing where the standard gives no bound.
    for (int log_n = 10; log_n <= 15; ++log_n) {
        EXPECT_LT(max_log_qp(log_n, SecurityLevel::k192), max_log_qp(log_n, SecurityLevel::k128)) << log_n;
        EXPECT_LT(max_log_qp(log_n, SecurityLevel::k256), max_log_qp(log_n, SecurityLevel::k192)) << log_n;
        EXPECT_GT(max_log_qp(log_n, SecurityLevel::k256), 0) << log_n;
    }
    EXPECT_EQ(max_log_qp(13, SecurityLevel::k192), 152);
    EXPECT_EQ(max_log_qp(13, SecurityLevel::k256), 118);
    EXPECT_EQ(max_log_qp(18, SecurityLevel::k128), 0);
    EXPECT_EQ(max_log_qp(9, SecurityLevel::k128), 0);
    EXPECT_EQ(max_log_qp(13, SecurityLevel::none), 0);
}

TEST(ParamsSecurity, InsecureSetIsRejectedWithTheLimit) {
    const Parameters p = make(13, {60, 60, 60}, {60});  // 240 > 218
    EXPECT_ERROR(ParameterError, p.validate(), "218", "240", "128-bit", "2^13");
    EXPECT_ERROR(ParameterError, Context::create(p), "218");
    // One bit over the limit is already too much; exactly at the limit is fine.
    EXPECT_ERROR(ParameterError, make(13, {59, 50, 50}, {60}).validate(), "219", "218");
    EXPECT_NO_THROW(make(13, {58, 50, 50}, {60}).validate());
    EXPECT_ERROR(ParameterError, make(12, {35, 35}, {40}).validate(), "110", "109");
}

TEST(ParamsSecurity, NoSecurityIsAcceptedWhenAskedFor) {
    const Parameters p = make(13, {60, 60, 60}, {60}, SecurityLevel::none);
    EXPECT_NO_THROW(p.validate());
    const std::string d = p.describe();
    EXPECT_NE(d.find("INSECURE"), std::string::npos) << d;
    ContextPtr ctx;
    ASSERT_NO_THROW(ctx = Context::create(p));
    EXPECT_EQ(ctx->q_count(), 3u);
    // Without a bound, N = 2^18 is still out of range.
    EXPECT_THROW(make(18, {60}, {60}, SecurityLevel::none).validate(), ParameterError);
}

TEST(ParamsSecurity, HigherLevelsEnforceLowerLimits) {
    const Parameters s1 = Parameters::preset("S1");  // 160 bits at N = 2^13
    Parameters p = s1;
    p.security = SecurityLevel::k192;
    EXPECT_ERROR(ParameterError, p.validate(), "152", "192-bit");
    p.security = SecurityLevel::k256;
    EXPECT_ERROR(ParameterError, p.validate(), "118", "256-bit");
    // 120 bits: fine for 128 and 192, not for 256.
    EXPECT_NO_THROW(make(13, {40, 40}, {40}, SecurityLevel::k128).validate());
    EXPECT_NO_THROW(make(13, {40, 40}, {40}, SecurityLevel::k192).validate());
    EXPECT_ERROR(ParameterError, make(13, {40, 40}, {40}, SecurityLevel::k256).validate(), "118");
    EXPECT_NO_THROW(make(13, {40, 38}, {40}, SecurityLevel::k256).validate());
    // No 192-bit bound in the table for N = 2^16: rejected, not waved through.
    EXPECT_ERROR(ParameterError, make(16, {60, 40}, {60}, SecurityLevel::k192).validate(), "192-bit", "2^16");
}

// ---- malformed sets -----------------------------------------------------------------------------

TEST(ParamsMalformed, RingDegreeOutOfRange) {
    for (int log_n : {0, -1, 18, 30}) {
        SCOPED_TRACE(log_n);
        Parameters p = small();
        p.log_n = log_n;
        EXPECT_ERROR(ParameterError, p.validate(), "2^" + std::to_string(log_n), "power of two");
        p.security = SecurityLevel::none;
        EXPECT_ERROR(ParameterError, p.validate(), "2^" + std::to_string(log_n));
    }
}

// N = 2^log_n cannot be a non-power of two; the APIs that take a degree directly must refuse one.
TEST(ParamsMalformed, NonPowerOfTwoDegree) {
    const uint64_t q = 12289;  // 3 * 2^12 + 1: 1 mod 2048, not 1 mod 8192
    EXPECT_ERROR(ParameterError, oboro::math::NttTables(q, 1000), "NTT", "1000", "power of two");
    EXPECT_ERROR(ParameterError, oboro::math::NttTables(q, 0), "NTT", "power of two");
    EXPECT_ERROR(ParameterError, oboro::math::NttTables(q, 1), "NTT", "power of two");
    EXPECT_ERROR(ParameterError, oboro::math::NttTables(q, 1536), "NTT", "1536");
    EXPECT_NO_THROW(oboro::math::NttTables(q, 1024));
    // A modulus that is not 1 mod 2n has no negacyclic NTT of that length.
    EXPECT_THROW(oboro::math::NttTables(q, 1u << 12), ParameterError);
    // A modulus wider than the 62 bits the lazy arithmetic allows.
    EXPECT_ERROR(ParameterError, oboro::math::NttTables((uint64_t(1) << 62) + 1, 1024), "NTT", "62");
}

TEST(ParamsMalformed, PrimeSizes) {
    EXPECT_ERROR(ParameterError, make(13, {63, 40}, {60}, SecurityLevel::none).validate(), "63", "62");
    EXPECT_ERROR(ParameterError, make(13, {60, 40}, {63}, SecurityLevel::none).validate(), "63", "special");
    EXPECT_ERROR(ParameterError, make(13, {64, 40}, {60}, SecurityLevel::none).validate(), "64");
    EXPECT_ERROR(ParameterError, make(13, {60, 10}, {60}).validate(), "10", "20");
    EXPECT_ERROR(ParameterError, make(13, {60, 40}, {10}).validate(), "10", "special");
    EXPECT_ERROR(ParameterError, make(13, {60, 0}, {60}).validate(), "0-bit");
    EXPECT_ERROR(ParameterError, make(13, {60, -5}, {60}).validate(), "-5");
    EXPECT_NO_THROW(make(13, {62, 20}, {62}).validate());  // the extremes are allowed
    EXPECT_ERROR(ParameterError, oboro::math::generate_ntt_primes(63, 1024, 1), "63");
    EXPECT_ERROR(ParameterError, oboro::math::generate_ntt_primes_near(63, 1024, 1), "63");
}

TEST(ParamsMalformed, EmptyChainAndNoSpecialPrimes) {
    EXPECT_ERROR(ParameterError, make(13, {}, {60}).validate(), "q_bits", "empty");
    EXPECT_ERROR(ParameterError, make(13, {60, 40}, {}).validate(), "special prime");
    EXPECT_ERROR(ParameterError, Context::create(make(13, {}, {60})), "empty");
    EXPECT_ERROR(ParameterError, Context::create(make(13, {60, 40}, {})), "special prime");
}

TEST(ParamsMalformed, ChainTooLong) {
    // More than 64 primes.
    EXPECT_ERROR(ParameterError, make(17, std::vector<int>(65, 20), {60}).validate(), "65", "64");
    EXPECT_ERROR(ParameterError, make(17, std::vector<int>(65, 20), {60}, SecurityLevel::none).validate(), "64");
    EXPECT_NO_THROW(make(17, std::vector<int>(64, 20), {60, 60, 60, 60, 60, 60, 60}).validate());
}

// N = 2^16 needs q = 1 mod 2^17: only a handful of such primes have 20 bits, far fewer than 60.
// The context must refuse rather than silently substitute larger primes (which would break the
// scale management and make the security check count bits that are not there).
TEST(ParamsMalformed, MorePrimesOfASizeThanExist) {
    const Parameters p = make(16, std::vector<int>(60, 20), {60});
    // (One attempt only: building the context, if it wrongly succeeds, takes a while.)
    expect_mentions(message_of<ParameterError>([&] { Context::create(p); }), {"20"});
    // The generators themselves say so.
    EXPECT_ERROR(ParameterError, oboro::math::generate_ntt_primes(20, 1u << 16, 60), "20");
    EXPECT_THROW(oboro::math::generate_ntt_primes_near(20, 1u << 16, 60), ParameterError);
}

// Whatever primes the context picks, the real log2(Q*P) must respect the bound that validate()
// checked with the nominal sizes: a set exactly at the 218-bit limit for N = 2^13 either gets
// primes that fit, or is rejected.
TEST(ParamsMalformed, ActualModulusRespectsTheSecurityBound) {
    const Parameters p = make(13, std::vector<int>(8, 22), {42});  // 8*22 + 42 = 218
    ASSERT_NO_THROW(p.validate());
    ContextPtr ctx;
    try {
        ctx = Context::create(p);
    } catch (const ParameterError&) {
        return;  // refusing is correct
    }
    double bits = 0;
    for (uint64_t q : ctx->q()) bits += std::log2(double(q));
    for (uint64_t q : ctx->p()) bits += std::log2(double(q));
    EXPECT_LE(bits, 218.0) << "log2(QP) of the primes actually chosen exceeds the 128-bit bound for N = 2^13";
}

TEST(ParamsMalformed, Dnum) {
    Parameters p = Parameters::preset("S1");  // 2 ciphertext primes
    p.dnum = -1;
    EXPECT_ERROR(ParameterError, p.validate(), "dnum", "-1");
    p.dnum = 3;
    EXPECT_ERROR(ParameterError, p.validate(), "dnum", "3");
    p.dnum = 2;
    EXPECT_NO_THROW(p.validate());
    // dnum = 1: one 100-bit digit but only 60 bits of special primes.
    p.dnum = 1;
    EXPECT_ERROR(ParameterError, p.validate(), "dnum", "100", "60");
    EXPECT_ERROR(ParameterError, Context::create(p), "dnum");
    Parameters s2 = Parameters::preset("S2");
    s2.dnum = 2;  // digits {60,40} and {40,40}: 100 bits > 60
    EXPECT_ERROR(ParameterError, s2.validate(), "dnum", "100");
    // Automatic dnum: even a single 60-bit prime per digit exceeds 40 bits of special primes.
    const Parameters no_fit = make(13, {60, 60}, {40});
    EXPECT_ERROR(ParameterError, no_fit.validate(), "40", "special");
    EXPECT_THROW(no_fit.effective_dnum(), ParameterError);
}

TEST(ParamsMalformed, SparseTernaryHammingWeight) {
    Parameters p = small();
    p.secret = SecretDistribution::sparse_ternary;
    p.security = SecurityLevel::none;  // no sparse bound at 2^12 (ParamsSecurity.SparseSecretBound)
    for (int h : {0, -3, int(p.n()) + 1}) {
        p.hamming_weight = h;
        EXPECT_ERROR(ParameterError, p.validate(), "hamming_weight", std::to_string(h));
    }
    p.hamming_weight = int(p.n());
    EXPECT_NO_THROW(p.validate());
    p.hamming_weight = 64;
    EXPECT_NO_THROW(p.validate());
    // Irrelevant for a uniform ternary secret.
    p.secret = SecretDistribution::ternary;
    p.hamming_weight = 0;
    EXPECT_NO_THROW(p.validate());
}

TEST(ParamsMalformed, Scale) {
    Parameters p = small();
    for (double bad : {-1.0, 0.5, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
        SCOPED_TRACE(bad);
        p.scale = bad;
        EXPECT_ERROR(ParameterError, p.validate(), "scale");
    }
    p.scale = 0;  // automatic
    EXPECT_NO_THROW(p.validate());
    p.scale = 0x1p30;
    EXPECT_NO_THROW(p.validate());
}

// ---- a built context ----------------------------------------------------------------------------

class ContextProps : public ::testing::TestWithParam<std::string> {};

TEST_P(ContextProps, Primes) {
    const Parameters params = Parameters::preset(GetParam());
    const Context ctx(params);
    const uint64_t two_n = 2 * ctx.n();
    ASSERT_EQ(ctx.q_count(), params.q_bits.size());
    ASSERT_EQ(ctx.p_count(), params.p_bits.size());
    std::set<uint64_t> all;
    for (size_t i = 0; i < ctx.q_count(); ++i) {
        const uint64_t q = ctx.q()[i];
        EXPECT_TRUE(oboro::math::is_prime(q)) << q;
        EXPECT_EQ(q % two_n, 1u) << q;
        const double ratio = double(q) / std::ldexp(1.0, params.q_bits[i]);
        EXPECT_LT(std::fabs(ratio - 1.0), 0x1p-10) << "q_" << i << " = " << q << " is not near 2^" << params.q_bits[i];
        all.insert(q);
    }
    for (size_t j = 0; j < ctx.p_count(); ++j) {
        const uint64_t p = ctx.p()[j];
        EXPECT_TRUE(oboro::math::is_prime(p)) << p;
        EXPECT_EQ(p % two_n, 1u) << p;
        EXPECT_LT(p, uint64_t(1) << params.p_bits[j]) << p;
        EXPECT_GT(p, uint64_t(1) << (params.p_bits[j] - 1)) << p;
        all.insert(p);
    }
    EXPECT_EQ(all.size(), ctx.q_count() + ctx.p_count()) << "the primes are not distinct";
    EXPECT_NEAR(ctx.log2_q(ctx.max_level()), double(params.log_qp() - std::accumulate(params.p_bits.begin(),
                                                                                        params.p_bits.end(), 0)),
                0.02);
    EXPECT_EQ(ctx.default_scale(), 0x1p40);
    EXPECT_EQ(ctx.max_slots(), ctx.n() / 2);
    EXPECT_EQ(ctx.max_level(), params.max_level());
}

TEST_P(ContextProps, GaloisElements) {
    const Context ctx(Parameters::preset(GetParam()));
    const uint64_t two_n = 2 * ctx.n();
    const int64_t slots = int64_t(ctx.max_slots());
    EXPECT_EQ(ctx.galois_element(0), 1u);
    EXPECT_EQ(ctx.galois_element(1), 5u);
    EXPECT_EQ(ctx.galois_element(2), 25u);
    EXPECT_EQ(ctx.galois_element(-1) * 5 % two_n, 1u);
    EXPECT_EQ(ctx.galois_element(-3) * 125 % two_n, 1u);
    EXPECT_EQ(ctx.galois_element(slots), 1u);  // 5 has order N/2
    EXPECT_EQ(ctx.galois_element(slots - 1), ctx.galois_element(-1));
    EXPECT_EQ(ctx.galois_element(slots + 3), ctx.galois_element(3));
    EXPECT_EQ(ctx.conjugation_element(), two_n - 1);
    // 5^s by squaring equals s repeated products, for every step
    uint64_t power = 1;
    for (int64_t s = 0; s < slots; ++s, power = power * 5 % two_n) ASSERT_EQ(ctx.galois_element(s), power) << s;
    for (int64_t s : std::vector<int64_t>{1, 7, -1, -9, slots / 2}) {
        const uint64_t g = ctx.galois_element(s);
        EXPECT_EQ(g % 2, 1u);
        EXPECT_LT(g, two_n);
        EXPECT_NE(g, ctx.conjugation_element());
    }
}

TEST_P(ContextProps, IdIsAFingerprintOfThePrimes) {
    const Parameters params = Parameters::preset(GetParam());
    const Context a(params), b(params);
    EXPECT_EQ(a.id(), b.id());
    Parameters other_scale = params;
    other_scale.scale = 0x1p30;  // scale is per ciphertext, not part of the fingerprint
    EXPECT_EQ(Context(other_scale).id(), a.id());
    Parameters other_primes = params;
    other_primes.q_bits[0] = 50;
    EXPECT_NE(Context(other_primes).id(), a.id());
}

INSTANTIATE_TEST_SUITE_P(Small, ContextProps, ::testing::Values("S1", "S2"));

TEST(ContextConstruction, DefaultScaleAndInvalidParameters) {
    Parameters p = small();
    EXPECT_EQ(Context(p).default_scale(), 0x1p30);  // 2^(bits of q_1)
    p.q_bits = {40};
    p.p_bits = {40};
    EXPECT_EQ(Context(p).default_scale(), 0x1p40);  // single prime: 2^(bits of q_0)
    // Construction validates.
    EXPECT_ERROR(ParameterError, Context(make(13, {60, 60, 60}, {60})), "218");
    EXPECT_ERROR(ParameterError, Context(make(0, {60}, {60})), "2^0");
    Parameters sparse = small();
    sparse.secret = SecretDistribution::sparse_ternary;
    EXPECT_ERROR(ParameterError, Context::create(sparse), "hamming_weight");
}

// ---- explicit primes (Parameters::q_primes / p_primes) ------------------------------------------

// The primes of a searched context, given back explicitly, build the very same context; other valid
// primes build another one that works the same.
TEST(ExplicitPrimes, SameContextAsTheSearchAndOtherPrimesToo) {
    const Parameters searched = make(13, {50, 40, 40}, {60});
    const ContextPtr a = Context::create(searched);
    Parameters given = searched;
    given.use_primes(a->q(), a->p());
    EXPECT_EQ(given.q_bits, searched.q_bits);
    EXPECT_EQ(given.p_bits, searched.p_bits);
    const ContextPtr b = Context::create(given);
    EXPECT_EQ(b->q(), a->q());
    EXPECT_EQ(b->p(), a->p());
    EXPECT_EQ(b->id(), a->id());

    // Other primes of the same sizes, which the search does not pick: the next ones below 2^bits.
    const uint64_t n = 1u << 13;
    std::vector<uint64_t> all(a->q());
    all.insert(all.end(), a->p().begin(), a->p().end());
    std::vector<uint64_t> q = {oboro::math::generate_ntt_primes(50, n, 1, all)[0]};
    all.push_back(q[0]);
    for (const uint64_t x : oboro::math::generate_ntt_primes(40, n, 2, all)) q.push_back(x);
    Parameters other = searched;
    other.use_primes(q, {oboro::math::generate_ntt_primes(60, n, 1, all)[0]});
    const ContextPtr c = Context::create(other);
    EXPECT_EQ(c->q(), q);
    EXPECT_NE(c->id(), a->id());
}

TEST(ExplicitPrimes, RefusedWithAReason) {
    const ContextPtr a = Context::create(make(13, {50, 40}, {60}));
    const auto with = [&](std::vector<uint64_t> q, std::vector<uint64_t> p) {
        Parameters params = make(13, {50, 40}, {60});
        params.q_primes = std::move(q);
        params.p_primes = std::move(p);
        return params;
    };
    const uint64_t q0 = a->q()[0], q1 = a->q()[1], p0 = a->p()[0];
    EXPECT_ERROR(ParameterError, with({q0}, {p0}).validate(), "1 + 1 explicit primes for 2 + 1 prime sizes");
    EXPECT_ERROR(ParameterError, with({q0, q1 + 2 * 8192}, {p0}).validate(), "is not prime");  // = 1 mod 2N, odd
    EXPECT_ERROR(ParameterError, with({q0, q1 + 2}, {p0}).validate(), "is not 1 mod 2N = 16384");
    EXPECT_ERROR(ParameterError, with({q0, q0}, {p0}).validate(), "is not of its size, 40 bits");
    EXPECT_ERROR(ParameterError, with({q0, q1}, {q1}).validate(), "is not of its size, 60 bits");
    Parameters twice = make(13, {40, 40}, {60});
    twice.q_primes = {q1, q1};
    twice.p_primes = {p0};
    EXPECT_ERROR(ParameterError, twice.validate(), "appears twice");
    // The security bound applies to the primes' real size: at N = 2^12 (109 bits at 128-bit
    // security) primes just above 2^50 and 2^59 are nominally 50 + 59 = 109 bits, really a hair more.
    Parameters wide = make(12, {50}, {59});
    ASSERT_NO_THROW(wide.validate());
    const uint64_t q_above = oboro::math::generate_ntt_primes_near(50, 4096, 2)[1];
    const uint64_t p_above = oboro::math::generate_ntt_primes_near(59, 4096, 2, {q_above})[1];
    ASSERT_GT(q_above, uint64_t(1) << 50);
    ASSERT_GT(p_above, uint64_t(1) << 59);
    wide.use_primes({q_above}, {p_above});
    EXPECT_EQ(wide.log_qp(), 109);
    EXPECT_ERROR(ParameterError, wide.validate(), "exceeds the 128-bit security limit of 109 bits");
}

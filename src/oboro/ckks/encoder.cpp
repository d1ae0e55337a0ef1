#include "oboro/ckks/encoder.hpp"

#include <algorithm>
#include <cmath>

#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/backend/cpu/encode.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/util/error.hpp"
#include "oboro/util/secret_memory.hpp"

namespace oboro::ckks {

namespace cpu = backend::cpu;
using cplx = std::complex<double>;

void bit_reverse_permute(std::vector<cplx>& v) {
    const size_t n = v.size();
    for (size_t i = 1, j = 0; i < n; ++i) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) std::swap(v[i], v[j]);
    }
}

namespace {
// x * t, written out as std::complex's operator* computes it (real: xr tr - xi ti, imaginary:
// xr ti + xi tr), without its NaN recovery: the encoder refuses non-finite results anyway, and the
// plain form lets the compiler keep the butterflies in vector registers.
inline void multiply(double xr, double xi, const cplx& t, double& re, double& im) {
    re = xr * t.real() - xi * t.imag();
    im = xr * t.imag() + xi * t.real();
}

// std::round (halves away from zero) of two doubles, to the bit and with the sign of zero, with
// no branch (a branch per value on its rounding direction mispredicts every other value) and no
// conversion to integers (SSE2 has none for 64-bit ones): below 2^52, adding and taking away 2^52
// rounds |x| to an integer exactly, one less where that went up truncates it, and the exact rest
// decides the half; from 2^52 on every double is already an integer (infinities and NaN stay as
// they are). GCC's and Clang's vector extensions, in SSE2's width (any target has 16 bytes).
using Doubles2 = double __attribute__((vector_size(16)));
using Words2 = int64_t __attribute__((vector_size(16)));
inline Doubles2 round_half_away(Doubles2 x) {
    const Words2 sign = Words2{} + std::numeric_limits<int64_t>::min(), one = Words2{} + 0x3FF0000000000000;
    const Doubles2 a = (Doubles2)((Words2)x & ~sign);
    Doubles2 r = (a + 0x1p52) - 0x1p52;
    r -= (Doubles2)((r > a) & one);
    r += (Doubles2)(((a - r) >= 0.5) & one);
    const Words2 small = a < 0x1p52;
    return (Doubles2)((small & ((Words2)r | ((Words2)x & sign))) | (~small & (Words2)x));
}
}  // namespace

Encoder::Encoder(ContextPtr ctx) : ctx_(std::move(ctx)) {
    const size_t n = ctx_->n(), m = 2 * n;
    std::vector<cplx> roots(m + 1);  // exp(2 pi i k / 2N)
    for (size_t k = 0; k <= m; ++k) {
        const double angle = 2 * M_PI * double(k) / double(m);
        roots[k] = cplx(std::cos(angle), std::sin(angle));
    }
    // The stage of butterflies `half` apart uses twiddle j (j < half) = zeta^(5^j mod 4 half) with
    // zeta = exp(2 pi i / (8 half)): one contiguous run of `half` roots per stage, at offset half - 1.
    std::vector<uint64_t> rot_group(n / 2);  // 5^j mod 2N
    uint64_t g = 1;
    for (size_t j = 0; j < n / 2; ++j) {
        rot_group[j] = g;
        g = (g * 5) % m;
    }
    twiddles_.resize(n / 2);
    inverse_twiddles_.resize(n / 2);
    for (size_t half = 1; 2 * half <= n / 2; half <<= 1) {
        const size_t lenq = 8 * half, gap = m / lenq;
        for (size_t j = 0; j < half; ++j) {
            twiddles_[half - 1 + j] = roots[(rot_group[j] % lenq) * gap];
            inverse_twiddles_[half - 1 + j] = roots[(lenq - rot_group[j] % lenq) * gap];
        }
    }
}

// Evaluates the "twisted" polynomial at the slot roots: a radix-2 FFT whose twiddles follow the
// rotation group 5^j instead of consecutive powers.
void Encoder::embed(std::vector<cplx>& v) const {
    const size_t size = v.size();
    bit_reverse_permute(v);
    double* d = reinterpret_cast<double*>(v.data());  // std::complex<double> is two doubles, real first
    for (size_t half = 1; half < size; half <<= 1) {
        const cplx* t = twiddles_.data() + half - 1;
        for (size_t i = 0; i < size; i += 2 * half) {
            double* a = d + 2 * i;
            double* b = a + 2 * half;
            for (size_t j = 0; j < half; ++j) {
                double wr, wi;
                multiply(b[2 * j], b[2 * j + 1], t[j], wr, wi);
                const double ur = a[2 * j], ui = a[2 * j + 1];
                a[2 * j] = ur + wr;
                a[2 * j + 1] = ui + wi;
                b[2 * j] = ur - wr;
                b[2 * j + 1] = ui - wi;
            }
        }
    }
}

void Encoder::embed_inverse(std::vector<cplx>& v) const {
    const size_t size = v.size();
    double* d = reinterpret_cast<double*>(v.data());
    for (size_t half = size / 2; half >= 1; half >>= 1) {
        const cplx* t = inverse_twiddles_.data() + half - 1;
        for (size_t i = 0; i < size; i += 2 * half) {
            double* a = d + 2 * i;
            double* b = a + 2 * half;
            for (size_t j = 0; j < half; ++j) {
                const double ar = a[2 * j], ai = a[2 * j + 1], br = b[2 * j], bi = b[2 * j + 1];
                a[2 * j] = ar + br;
                a[2 * j + 1] = ai + bi;
                multiply(ar - br, ai - bi, t[j], b[2 * j], b[2 * j + 1]);
            }
        }
    }
    bit_reverse_permute(v);
    const double inv = 1.0 / double(size);
    for (auto& x : v) x *= inv;
}

void Encoder::check_slots(const char* op, size_t slots, size_t count) const {
    if (!is_power_of_two(slots) || slots > ctx_->max_slots())
        raise<ValueError>(op, ": slots = ", slots, " must be a power of two <= N/2 = ", ctx_->max_slots());
    if (count > slots)
        raise<ValueError>(op, ": ", count, " values do not fit into ", slots, " slots");
}

EncodingShape Encoder::encoding_shape(const char* op, size_t value_count, std::optional<int> level_arg,
                                      std::optional<double> scale_arg, std::optional<size_t> slots_arg) const {
    const Context& ctx = *ctx_;
    const int level = level_arg.value_or(ctx.max_level());
    if (level < 0 || level > ctx.max_level())
        raise<LevelMismatch>(op, ": level ", level, " is outside 0..", ctx.max_level(), " (leave it out for the top level)");
    const double scale = scale_arg.value_or(ctx.default_scale());
    if (!(scale >= 1) || !std::isfinite(scale))
        raise<ValueError>(op, ": scale ", scale, " must be finite and >= 1 (leave it out for the default scale)");
    const size_t slots = slots_arg.value_or(ctx.max_slots());
    check_slots(op, slots, value_count);
    return EncodingShape{level, scale, slots};
}

void Encoder::scaled_coefficients(const char* op, const cplx* values, size_t count, const EncodingShape& shape,
                                  double* out) const {
    std::vector<cplx> w(shape.slots, cplx(0, 0));
    std::copy(values, values + count, w.begin());
    embed_inverse(w);
    double log2_q = ctx_->log2_q(shape.level);
    if (shape.basis == Basis::qp) log2_q += ctx_->log2_p();
    const double limit = std::exp2(log2_q - encoding_headroom_bits);
    // Scale and round every value first (a loop without calls or divisions), then look for the
    // first value that is not finite or too large only if there is one.
    // Slot by slot (re, im): the real parts go to out[0, slots), the imaginary ones to out[slots, 2 slots).
    const double* parts = reinterpret_cast<const double*>(w.data());
    const size_t slots = shape.slots;
    Words2 outside = {};
    for (size_t i = 0; i < slots; ++i) {
        Doubles2 x;
        std::memcpy(&x, parts + 2 * i, sizeof x);
        const Doubles2 c = round_half_away(x * shape.scale);
        const Doubles2 magnitude = (Doubles2)((Words2)c & std::numeric_limits<int64_t>::max());
        outside |= !(magnitude < limit);  // also NaN and infinity
        out[i] = c[0];
        out[slots + i] = c[1];
    }
    const bool refused = (outside[0] | outside[1]) != 0;
    if (!refused) return;
    for (size_t i = 0; i < 2 * shape.slots; ++i) {
        const double c = out[i];
        if (!std::isfinite(c))
            raise<ValueError>(op, ": a value is not finite (NaN or infinity) after scaling by 2^", std::log2(shape.scale));
        if (std::fabs(c) >= limit)
            raise<ValueError>(op, ": a value times the scale 2^", std::log2(shape.scale), " reaches 2^",
                              std::log2(std::fabs(c)), ", beyond the modulus 2^", log2_q, " at level ", shape.level,
                              " less its ", encoding_headroom_bits, " bits of headroom (2^", std::log2(limit),
                              "); use smaller values, a smaller scale or a higher level");
    }
}

EncodingShape Encoder::shaped_coefficients(const char* op, const std::vector<cplx>& values, std::optional<int> level,
                                           std::optional<double> scale, std::optional<size_t> slots, Basis basis,
                                           std::vector<double>& coefficients) const {
    EncodingShape shape = encoding_shape(op, values.size(), level, scale, slots);
    shape.basis = basis;
    coefficients.resize(2 * shape.slots);
    scaled_coefficients(op, values.data(), values.size(), shape, coefficients.data());
    return shape;
}

Plaintext Encoder::encode_in(const char* op, const std::vector<cplx>& values, std::optional<int> level,
                             std::optional<double> scale, std::optional<size_t> slots, Basis basis) const {
    std::vector<double> coefficients;
    const EncodingShape shape = shaped_coefficients(op, values, level, scale, slots, basis, coefficients);
    Plaintext pt(*ctx_, shape.level, shape.scale, shape.slots, basis);
    cpu::write_plaintext(ctx_->ring(), coefficients.data(), shape.slots, shape.level, pt.mutable_poly(0),
                         pt.special_limbs());
    return pt;
}

CompactPlaintext Encoder::encode_compact(const std::vector<cplx>& values, int level, double scale, size_t slots,
                                         Basis basis) const {
    std::vector<double> coefficients;
    const EncodingShape shape = shaped_coefficients("encode_compact", values, level, scale, slots, basis, coefficients);
    CompactPlaintext pt(*ctx_, shape.level, shape.scale, shape.slots, basis, ctx_->n() / (2 * shape.slots));
    cpu::write_plaintext_runs(ctx_->ring(), coefficients.data(), shape.slots, shape.level, pt.mutable_poly(0),
                              pt.special_limbs());
    return pt;
}

CompactPlaintext Encoder::encode_compact(const std::vector<double>& values, int level, double scale, size_t slots,
                                         Basis basis) const {
    return encode_compact(std::vector<cplx>(values.begin(), values.end()), level, scale, slots, basis);
}

Plaintext Encoder::encode(const std::vector<cplx>& values, std::optional<int> level, std::optional<double> scale,
                          std::optional<size_t> slots) const {
    return encode_in("encode", values, level, scale, slots, Basis::q);
}

Plaintext Encoder::encode_extended(const std::vector<cplx>& values, int level, double scale, size_t slots) const {
    return encode_in("encode_extended", values, level, scale, slots, Basis::qp);
}

Plaintext Encoder::encode(const std::vector<double>& values, std::optional<int> level, std::optional<double> scale,
                          std::optional<size_t> slots) const {
    return encode(std::vector<cplx>(values.begin(), values.end()), level, scale, slots);
}

Plaintext Encoder::encode_extended(const std::vector<double>& values, int level, double scale, size_t slots) const {
    return encode_extended(std::vector<cplx>(values.begin(), values.end()), level, scale, slots);
}

Plaintext Encoder::encode_constant(cplx value, std::optional<int> level, std::optional<double> scale,
                                   std::optional<size_t> slots) const {
    const size_t n = slots.value_or(ctx_->max_slots());
    check_slots("encode", n, 1);
    return encode(std::vector<cplx>(n, value), level, scale, n);
}

void Encoder::check_not_wrapped(const double* coefficients, size_t count, int level, double scale) const {
    double largest = 0;
    for (size_t i = 0; i < count; ++i) largest = std::max(largest, std::fabs(coefficients[i]));
    const double log2_q = ctx_->log2_q(level), log2_scale = std::log2(scale);
    const double log2_bound = log2_q - overflow_headroom_bits;
    if (largest * scale <= std::exp2(log2_bound)) return;
    raise<ModulusOverflow>(
        "decrypt: the result has most likely wrapped around the modulus: a coefficient reaches 2^",
        log2_scale + std::log2(largest), " of the modulus 2^", log2_q, " at level ", level, " (scale 2^", log2_scale,
        "), beyond the 2^", log2_bound, " that a result may reach. The values are too large for their scale: at this "
        "level and scale every value must stay below 2^", log2_bound - log2_scale, " in magnitude. Scale the inputs "
        "down, use a smaller scale, or keep more levels (level 0 has only the bits of q0)");
}

std::vector<cplx> Encoder::decode_poly(uint64_t* poly, int level, double scale, size_t slots) const {
    const Context& ctx = *ctx_;
    const size_t n = ctx.n(), half_n = n / 2, gap = half_n / slots, limbs = size_t(level + 1);
    cpu::ntt_inverse(poly, ctx.ntt_tables(), limbs);
    // Only the coefficients of the subring are needed: real parts and imaginary parts. With full
    // slots they are every coefficient, in order (the CRT reads the polynomial itself); with fewer
    // they are picked out. Both hold the decrypted message and noise (a function of the secret
    // key): secret memory, wiped.
    SecretVector<uint64_t> picked;
    const uint64_t* coefficients = poly;
    size_t stride = n;
    if (gap > 1) {
        picked = SecretVector<uint64_t>(limbs * 2 * slots);
        for (size_t i = 0; i < limbs; ++i)
            for (size_t s = 0; s < slots; ++s) {
                picked[i * 2 * slots + s] = poly[i * n + s * gap];
                picked[i * 2 * slots + slots + s] = poly[i * n + half_n + s * gap];
            }
        coefficients = picked.data();
        stride = 2 * slots;
    }
    SecretVector<double> real(2 * slots);
    ctx.crt(level).to_double(coefficients, stride, 2 * slots, 1.0 / scale, real.data());
    check_not_wrapped(real.data(), real.size(), level, scale);
    std::vector<cplx> v(slots);
    for (size_t s = 0; s < slots; ++s) v[s] = cplx(real[s], real[slots + s]);
    embed(v);
    return v;
}

std::vector<cplx> Encoder::decode(const Plaintext& pt) const {
    if (pt.context_id() != ctx_->id()) raise<ContextMismatch>("decode: the plaintext belongs to another parameter set");
    Plaintext copy = pt;
    return decode_poly(copy.mutable_poly(0), copy.level(), copy.scale(), copy.slots());
}

std::vector<double> Encoder::decode_real(const Plaintext& pt) const {
    const auto v = decode(pt);
    std::vector<double> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = v[i].real();
    return out;
}

}  // namespace oboro::ckks

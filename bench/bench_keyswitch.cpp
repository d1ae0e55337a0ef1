// Key switching at its bound: a cost model built from the measured times of the kernels each
// key-switching operation runs, printed beside the measured time of the operation itself.
//
// For each preset, at the top level and on one thread, the benchmark times every kernel at the
// sizes the operations call it with (per limb for the NTTs, per digit for the base conversions,
// the whole key inner product, the automorphism's permutation, the element-wise passes), then adds
// them up in the order the operations run them (backend/cpu/keyswitch.cpp, ciphertext_ops.cpp,
// hoisting.cpp):
//   ModUp     = copy + INTT of the l+1 limbs; per digit: copy of its limbs, base conversion to the
//               other limbs of Q_l*P, NTT of those limbs
//   inner     = the key inner product (dot2: beta digits x (l+1+k) limbs, one reduction)
//   ModDown   = INTT of the k special limbs, base conversion P -> Q_l, NTT of l+1 limbs, (x - y) / P
//   key switch              = ModUp + inner + 2 ModDown
//   relinearize             = key switch + 2 additions
//   rotate                  = permutation of c1 + key switch + permutation of c0 + 1 addition
//   multiply+relin+rescale  = tensor + ModUp + inner + 2 (P*d + ModDown fused with the rescale)
//   hoisted sum of r rotations = r permutations of c0 and r-1 additions + ModUp
//                                + r inner products (each permuting the digits as it reads them, with
//                                the next key) + 2 ModDown + 1 addition
// The measured operations go through the public Evaluator (result allocation included); the ratio
// measured / model says how much of an operation is not its kernels (allocation, page faults, a
// working set that leaves the caches). The target is a ratio of at most 1.3.
//
// The other primitives (encoding, encryption, decryption, additions, plaintext products, key
// generation) are set beside their bound: the kernels no implementation of the operation can
// leave out, each timed alone. The ratio measured / bound says how close each is to it (the rest is rounding, limb
// conversions, packing, allocation):
//   encode                  = FFT slots -> coefficients + NTT of the l+1 limbs
//   decrypt + decode        = product and addition over l+1 limbs + INTT of the l+1 limbs + CRT
//                             of the subring's coefficients to doubles + FFT coefficients -> slots
//   encrypt (secret key)    = uniform sampling of l+1 limbs + Gaussian sampling + NTT of the l+1
//                             limbs + product and subtraction over l+1 limbs
//   encrypt (public key)    = ternary and 2 Gaussian samplings + NTT of u over l+1+k limbs + 2
//                             products over l+1+k limbs + 2 ModDown (the errors need no NTT)
//   encode + encrypt (public key, one step) = the FFT + encrypt (public key) (the message joins
//                             the division by P in coefficient form: no NTT of its own)
//   add                     = 2 additions over l+1 limbs (streamed: memory traffic beyond the caches)
//   ct x pt                 = its memory traffic: 5 streams of l+1 limbs at the addition's speed
//                             (5/3 additions); in the caches (S1, S2) its products bound it instead
//   relinearization key     = per digit: uniform sampling of l+1+k limbs, Gaussian sampling,
//                             NTT of the error over l+1+k limbs, product and subtraction
//   rotation key            = the same and the permutation of s over l+1+k limbs Kernels and
// operations run in interleaved rounds, each timed call after an untimed one of the same function,
// so that a slow spell of the machine falls on both and each call finds its data in the caches as
// it would inside an operation.
//
// Writes JSON (--json) and Markdown (--markdown) with the machine and date.
//
//   bench_keyswitch [--presets S1,S2,S4] [--sums 3,15] [--seconds 3] [--json F] [--markdown F]
//                   [--quick]
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "oboro/backend/cpu/keyswitch.hpp"
#include "oboro/backend/cpu/poly_ops.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keygen.hpp"
#include "oboro/ckks/sampling.hpp"
#include "oboro/math/random.hpp"
#include "oboro/util/buffer.hpp"
#include "oboro/util/parallel.hpp"

using namespace oboro;
using namespace oboro::ckks;
using namespace oboro::backend;

namespace {

struct Options {
    std::vector<std::string> presets = {"S1", "S2", "S4"};
    std::vector<int> sums = {3, 15};
    double seconds = 3;  // per preset, for all its kernels and operations together
    double bound = 1.3;
    std::string json, markdown;
};

// One kernel of the model and its time per call.
struct Kernel {
    std::string name;
    double us = 0;
};

// Key switching: a model of its kernels with a target ratio; the other primitives: their bound.
enum class OpKind { key_switching, other };

struct OpRow {
    std::string op;
    OpKind kind = OpKind::key_switching;
    double measured_us = 0, model_us = 0;
    std::vector<std::pair<std::string, double>> parts;  // the model's terms, in us
    double ratio() const { return measured_us / model_us; }
};

struct PresetResult {
    std::string preset;
    size_t n = 0, limbs = 0, special = 0, digits = 0;
    std::vector<Kernel> kernels;
    std::vector<OpRow> ops;
};

// Random canonical residues in every limb of `data` (limb i modulo mods[i]).
void fill(uint64_t* data, const math::Modulus* const* mods, size_t limbs, size_t n, std::mt19937_64& gen) {
    for (size_t i = 0; i < limbs; ++i)
        for (size_t k = 0; k < n; ++k) data[i * n + k] = gen() % mods[i]->value;
}

// The kernels and the operations of one preset, timed together in interleaved rounds
// (bench::measure_interleaved): a slow spell of the shared machine falls on an operation and on
// its kernels alike, so their ratio stays meaningful.
class PresetBench {
public:
    PresetBench(const std::string& name, const Options& o)
        : o_(o), ctx_(Context::create(Parameters::preset(name))), ring_(ctx_->ring()), level_(ring_.max_level()),
          lc_(ring_.level(level_)), n_(ring_.n()), nq_(size_t(level_ + 1)), k_(ring_.p_count()), ne_(lc_.ext_limbs()),
          beta_(lc_.digits.size()) {
        result_.preset = name;
        result_.n = n_;
        result_.limbs = nq_;
        result_.special = k_;
        result_.digits = beta_;
        for (size_t i = 0; i < ne_; ++i) ext_mods_.push_back(i < nq_ ? &ring_.moduli()[i] : &ring_.p_moduli()[i - nq_]);
    }

    PresetResult run() {
        std::fprintf(stderr, "[%s] N = %zu, %zu + %zu limbs, %zu digits: keys...\n", result_.preset.c_str(), n_, nq_, k_,
                     beta_);
        KeyGenerator keygen(ctx_);
        rk_ = keygen.relin_key();
        rk_seeded_ = rk_;
        rk_seeded_.seed_a_halves();
        std::vector<int64_t> steps;
        for (int s = 1; s <= *std::max_element(o_.sums.begin(), o_.sums.end()); ++s) steps.push_back(s);
        gk_ = keygen.galois_keys(steps);
        add_kernels();
        add_ops(keygen);
        std::fprintf(stderr, "[%s] timing %zu kernels and %zu operations in interleaved rounds...\n",
                     result_.preset.c_str(), kernel_names_.size(), ops_.size());
        std::vector<std::function<void()>> fs = kernel_fns_;
        for (const PendingOp& op : ops_) fs.push_back(op.f);
        const std::vector<bench::Timing> t = bench::measure_interleaved(fs, 7, o_.seconds, 1000, 1);
        for (size_t i = 0; i < kernel_names_.size(); ++i) {
            kernels_[kernel_names_[i]] = t[i].median_us;
            result_.kernels.push_back({kernel_names_[i], t[i].median_us});
            std::printf("  %-52s %10.1f us\n", kernel_names_[i].c_str(), t[i].median_us);
        }
        for (size_t i = 0; i < ops_.size(); ++i) {
            OpRow row{ops_[i].name, ops_[i].kind, t[kernel_names_.size() + i].median_us, 0, {}};
            for (const auto& [part, terms] : ops_[i].parts) {
                double us = 0;
                for (const auto& [count, kernel] : terms) us += count * kernels_.at(kernel);
                row.parts.push_back({part, us});
                row.model_us += us;
            }
            const bool ks = row.kind == OpKind::key_switching;
            std::printf("%-4s %-40s measured %10.1f us  %s %10.1f us  ratio %.2f%s\n", result_.preset.c_str(),
                        row.op.c_str(), row.measured_us, ks ? "model" : "bound", row.model_us, row.ratio(),
                        ks && row.ratio() > o_.bound ? "  ABOVE THE TARGET" : "");
            result_.ops.push_back(std::move(row));
        }
        std::fflush(stdout);
        return result_;
    }

private:
    // A model term: `count` calls of the named kernel.
    using Terms = std::vector<std::pair<double, std::string>>;
    struct PendingOp {
        std::string name;
        std::function<void()> f;
        std::vector<std::pair<std::string, Terms>> parts;
        OpKind kind = OpKind::key_switching;
    };

    void kernel(const std::string& name, std::function<void()> f) {
        kernel_names_.push_back(name);
        kernel_fns_.push_back(std::move(f));
    }
    uint64_t* buffer(size_t limbs) {
        buffers_.emplace_back(limbs * n_);
        return buffers_.back().data();
    }
    // `polys` extended polynomials (l+1+k limbs each) of random residues.
    uint64_t* random_ext(size_t polys) {
        uint64_t* b = buffer(polys * ne_);
        for (size_t p = 0; p < polys; ++p) fill(b + p * ne_ * n_, ext_mods_.data(), ne_, n_, gen_);
        return b;
    }
    // `limbs` limbs of random residues, limb i modulo q_(i mod (l+1)) (several ciphertext polynomials).
    uint64_t* random_q(size_t limbs) {
        uint64_t* b = buffer(limbs);
        for (size_t i = 0; i < limbs; ++i) fill(b + i * n_, &ext_mods_[i % nq_], 1, n_, gen_);
        return b;
    }

    // The NTT of the limbs `limbs` (indices into Q_l*P) of a buffer of that many limbs.
    void ntt_kernel(const std::string& name, const std::vector<size_t>& limbs, bool forward) {
        uint64_t* b = buffer(limbs.size());
        for (size_t t = 0; t < limbs.size(); ++t) fill(b + t * n_, &ext_mods_[limbs[t]], 1, n_, gen_);
        std::vector<const math::NttTables*> tables;
        for (size_t i : limbs) tables.push_back(i < nq_ ? &ring_.ntt_tables()[i] : &ring_.p_ntt_tables()[i - nq_]);
        kernel(name, [this, b, tables, forward] {
            for (size_t t = 0; t < tables.size(); ++t) {
                if (forward) cpu::ntt_forward_limb(b + t * n_, *tables[t]);
                else cpu::ntt_inverse_limb(b + t * n_, *tables[t]);
            }
        });
    }

    // The base conversions with the given converters, one after the other (centred, as key
    // switching runs them).
    void convert_kernel(const std::string& name, std::vector<const math::BaseConverter*> convs) {
        struct Conversion {
            const math::BaseConverter* conv;
            uint64_t* in;
            uint64_t* scratch;
            std::vector<uint64_t*> outs;
        };
        std::vector<Conversion> list;
        for (const math::BaseConverter* conv : convs) {
            const size_t from = conv->from().size(), to = conv->to().size();
            Conversion c{conv, buffer(from), nullptr, {}};
            c.scratch = buffer((cpu::base_convert_scratch_words(from, n_) + n_ - 1) / n_);
            for (size_t i = 0; i < from; ++i)
                for (size_t k = 0; k < n_; ++k) c.in[i * n_ + k] = gen_() % conv->from()[i];
            uint64_t* out = buffer(to);
            for (size_t j = 0; j < to; ++j) c.outs.push_back(out + j * n_);
            list.push_back(std::move(c));
        }
        kernel(name, [this, list] {
            for (const Conversion& c : list) cpu::base_convert(*c.conv, c.in, n_, c.outs.data(), n_, c.scratch, true);
        });
    }

    void add_kernels() {
        const math::Modulus* mods = ring_.moduli();
        const size_t n = n_, nq = nq_;
        std::vector<size_t> q_limbs(nq_), p_limbs(k_), q_last{nq_ - 1}, q_front(nq_ - 1), digit_others;
        for (size_t i = 0; i < nq_; ++i) q_limbs[i] = i;
        for (size_t j = 0; j < k_; ++j) p_limbs[j] = nq_ + j;
        for (size_t i = 0; i + 1 < nq_; ++i) q_front[i] = i;
        std::vector<const math::BaseConverter*> digit_convs;
        size_t own_limbs = 0;
        for (const DigitConversion& d : lc_.digits) {
            for (size_t i = 0; i < ne_; ++i)
                if (i < d.begin || i >= d.end) digit_others.push_back(i);
            digit_convs.push_back(&d.to_others);
            own_limbs += d.end - d.begin;
        }
        uint64_t *a = random_q(nq_), *b = random_q(nq_), *dst = buffer(nq_);

        kernel("copy of the l+1 limbs", [=] { std::memcpy(dst, a, nq * n * sizeof(uint64_t)); });
        ntt_kernel("INTT of the l+1 limbs", q_limbs, false);
        ntt_kernel("NTT of the l+1 limbs", q_limbs, true);
        ntt_kernel("INTT of the k special limbs", p_limbs, false);
        kernel("ModUp: digits' own limbs copied (all digits)",
               [=] { std::memcpy(dst, a, own_limbs * n * sizeof(uint64_t)); });
        convert_kernel("ModUp: base conversions (all digits)", digit_convs);
        ntt_kernel("ModUp: NTTs of the converted limbs (all digits)", digit_others, true);
        convert_kernel("ModDown: base conversion P -> Q_l", {&lc_.p_to_q});
        const uint64_t* p_inv = lc_.p_inv.data();
        kernel("ModDown: (x - y) * P^-1 over l+1 limbs", [=] { cpu::sub_mul_scalar(dst, a, b, p_inv, mods, nq, n); });
        {
            uint64_t *digits = random_ext(beta_), *acc = buffer(2 * ne_);
            const KeySwitchKeyView key = rk_.view();
            const Ring& ring = ring_;
            const LevelConstants& lc = lc_;
            const size_t ne = ne_;
            kernel("key inner product (beta digits, l+1+k limbs)",
                   [=, &ring, &lc] { cpu::key_inner_product(ring, lc, digits, key, acc, acc + ne * n); });
            // the same key with its uniform halves drawn again from their seed (seeded keys,
            // bootstrapping's default): the difference is the ChaCha20 stream of the a_j
            const KeySwitchKeyView seeded = rk_seeded_.view();
            kernel("key inner product, a_j drawn from the key's seed",
                   [=, &ring, &lc] { cpu::key_inner_product(ring, lc, digits, seeded, acc, acc + ne * n); });
            // A hoisted sum reads a different key for each rotation, from memory: so does this
            // kernel (the next of the Galois keys at each call).
            std::vector<KeySwitchKeyView> keys;
            for (const auto& [galois, k] : gk_.keys) keys.push_back(k->view());
            auto next = std::make_shared<size_t>(0);
            // ... and permutes the digits as it reads them (hoisting.hpp)
            const uint32_t* perm = ring_.automorphism_permutation(ctx_->galois_element(1)).data();
            kernel("key inner product, digits permuted, accumulating, next key",
                   [=, &ring, &lc] {
                       const KeySwitchKeyView& k = keys[(*next)++ % keys.size()];
                       cpu::key_inner_product(ring, lc, digits, k, acc, acc + ne * n, true, perm);
                   });
            kernel("permutation of the l+1 limbs", [=] { cpu::permute(dst, a, perm, nq, n); });
        }
        kernel("addition over l+1 limbs", [=] { cpu::add(dst, a, b, mods, nq, n); });
        {
            uint64_t *in = random_q(4 * nq_), *out = buffer(3 * nq_);
            const size_t s = nq_ * n_;
            kernel("tensor product over l+1 limbs",
                   [=] { cpu::tensor(out, out + s, out + 2 * s, in, in + s, in + 2 * s, in + 3 * s, mods, nq, n); });
        }
        const uint64_t* p_mod_q = lc_.p_mod_q.data();
        kernel("P * d added over l+1 limbs", [=] { cpu::mul_scalar_add(dst, a, p_mod_q, mods, nq, n); });
        // ModDown fused with the rescale: the dropped q_l and the special limbs go back to
        // coefficients, convert to Q_{l-1}, NTT there, (x - y) / (q_l P).
        ntt_kernel("ModDown+rescale: INTT of q_l", q_last, false);
        convert_kernel("ModDown+rescale: base conversion {q_l} u P -> Q_l-1", {&lc_.qlp_to_q});
        ntt_kernel("ModDown+rescale: NTT of the l limbs", q_front, true);
        const uint64_t* qlp_inv = lc_.qlp_inv.data();
        kernel("ModDown+rescale: (x - y) * (q_l P)^-1 over l limbs",
               [=] { cpu::sub_mul_scalar(dst, a, b, qlp_inv, mods, nq - 1, n); });
        add_other_kernels(a, b, dst);
    }

    // The kernels of the other primitives' bounds (the header comment lists them).
    void add_other_kernels(const uint64_t* a, const uint64_t* b, uint64_t* dst) {
        const math::Modulus* mods = ring_.moduli();
        const size_t n = n_, nq = nq_, ne = ne_, slots = ctx_->max_slots();
        std::vector<size_t> ext_limbs(ne_);
        for (size_t i = 0; i < ne_; ++i) ext_limbs[i] = i;
        ntt_kernel("NTT of the l+1+k limbs", ext_limbs, true);
        kernel("product over l+1 limbs", [=] { cpu::mul(dst, a, b, mods, nq, n); });
        {
            // the ext limbs' moduli in one array, as the encryption's and the keys' products take them
            auto ext = std::make_shared<std::vector<math::Modulus>>();
            for (const math::Modulus* m : ext_mods_) ext->push_back(*m);
            uint64_t *x = random_ext(1), *y = random_ext(1), *z = buffer(ne_);
            kernel("product over l+1+k limbs", [=] { cpu::mul(z, x, y, ext->data(), ne, n); });
            kernel("uniform sampling of l+1+k limbs", [=] {
                expand_uniform(math::Seed{1, 2}, 0, z, ext->data(), ne, n);
            });
            kernel("uniform sampling of l+1 limbs", [=] { expand_uniform(math::Seed{1, 2}, 0, z, mods, nq, n); });
        }
        auto prng = std::make_shared<math::Prng>(math::Seed{3, 4});
        kernel("Gaussian sampling of N coefficients", [=] { (void)sample_gaussian(*prng, n); });
        kernel("ternary sampling of N coefficients", [=] { (void)sample_ternary(*prng, n); });
        {
            // the FFTs on a fresh copy of one input each time (the transform is in place)
            auto values = std::make_shared<std::vector<std::complex<double>>>(bench::random_slots(slots));
            auto work = std::make_shared<std::vector<std::complex<double>>>(slots);
            auto encoder = std::make_shared<Encoder>(ctx_);
            kernel("FFT slots -> coefficients (N/2 slots, with a copy in)", [=] {
                std::copy(values->begin(), values->end(), work->begin());
                encoder->embed_inverse(*work);
            });
            kernel("FFT coefficients -> slots (N/2 slots, with a copy in)", [=] {
                std::copy(values->begin(), values->end(), work->begin());
                encoder->embed(*work);
            });
        }
        {
            // a message's coefficients (small against Q, as decoding finds them; full slots: the
            // subring's coefficients are all N of them, in order)
            const math::CrtReconstructor& crt = ctx_->crt(level_);
            auto out = std::make_shared<std::vector<double>>(2 * slots);
            const Plaintext message = Encoder(ctx_).encode(bench::random_slots(slots));
            uint64_t* coefficients = buffer(nq_);
            std::memcpy(coefficients, message.poly(0), nq_ * n_ * sizeof(uint64_t));
            cpu::ntt_inverse(coefficients, ring_.ntt_tables(), nq_);
            kernel("CRT of a message's coefficients to doubles (l+1 limbs)",
                   [=, &crt] { crt.to_double(coefficients, n, n, 1.0, out->data()); });
        }
        const uint32_t* s_perm = ring_.automorphism_permutation(ctx_->galois_element(1)).data();
        uint64_t* s = random_ext(1);
        uint64_t* s_out = buffer(ne_);
        kernel("permutation of the l+1+k limbs", [=] { cpu::permute(s_out, s, s_perm, ne, n); });
    }

    static Terms mod_up() {
        return {{1, "copy of the l+1 limbs"},
                {1, "INTT of the l+1 limbs"},
                {1, "ModUp: digits' own limbs copied (all digits)"},
                {1, "ModUp: base conversions (all digits)"},
                {1, "ModUp: NTTs of the converted limbs (all digits)"}};
    }
    static Terms mod_downs(double count) {
        return {{count, "INTT of the k special limbs"},
                {count, "ModDown: base conversion P -> Q_l"},
                {count, "NTT of the l+1 limbs"},
                {count, "ModDown: (x - y) * P^-1 over l+1 limbs"}};
    }

    void add_ops(KeyGenerator& keygen) {
        encoder_ = std::make_unique<Encoder>(ctx_);
        eval_ = std::make_unique<Evaluator>(ctx_);
        Encryptor encryptor(ctx_, keygen.public_key());
        const Plaintext pt = encoder_->encode(bench::random_slots(ctx_->max_slots()));
        a_ = encryptor.encrypt(pt);
        b_ = encryptor.encrypt(pt);
        product_ = eval_->multiply(a_, b_);
        const Terms ip{{1, "key inner product (beta digits, l+1+k limbs)"}};

        uint64_t *c = random_q(nq_), *out = buffer(2 * nq_);
        const KeySwitchKeyView key = rk_.view();
        ops_.push_back({"key switch (backend call)",
                        [this, c, out, key] { cpu::key_switch(ring_, level_, c, key, out, out + nq_ * n_); },
                        {{"ModUp", mod_up()}, {"inner product", ip}, {"2 ModDown", mod_downs(2)}}});
        ops_.push_back({"relinearize",
                        [this] { (void)eval_->relinearize(product_, rk_); },
                        {{"ModUp", mod_up()},
                         {"inner product", ip},
                         {"2 ModDown", mod_downs(2)},
                         {"2 additions", {{2, "addition over l+1 limbs"}}}}});
        ops_.push_back({"rotate by 1",
                        [this] { (void)eval_->rotate(a_, 1, gk_); },
                        {{"ModUp", mod_up()},
                         {"inner product", ip},
                         {"2 ModDown", mod_downs(2)},
                         {"2 permutations", {{2, "permutation of the l+1 limbs"}}},
                         {"1 addition", {{1, "addition over l+1 limbs"}}}}});
        ops_.push_back({"multiply + relinearize + rescale",
                        [this] { (void)eval_->multiply_relin_rescale(a_, b_, rk_); },
                        {{"tensor", {{1, "tensor product over l+1 limbs"}}},
                         {"ModUp", mod_up()},
                         {"inner product", ip},
                         {"2 ModDown+rescale",
                          {{2, "P * d added over l+1 limbs"},
                           {2, "ModDown+rescale: INTT of q_l"},
                           {2, "INTT of the k special limbs"},
                           {2, "ModDown+rescale: base conversion {q_l} u P -> Q_l-1"},
                           {2, "ModDown+rescale: NTT of the l limbs"},
                           {2, "ModDown+rescale: (x - y) * (q_l P)^-1 over l limbs"}}}}});
        for (int r : o_.sums) {
            std::vector<int64_t> steps;
            for (int s = 1; s <= r; ++s) steps.push_back(s);
            const double rd = r;
            ops_.push_back({"hoisted sum of " + std::to_string(r) + " rotations",
                            [this, steps] { (void)eval_->rotate_sum(a_, steps, gk_); },
                            {{"ModUp", mod_up()},
                             {"inner products", {{rd, "key inner product, digits permuted, accumulating, next key"}}},
                             {"2 ModDown", mod_downs(2)},
                             {"c0 permutations", {{rd, "permutation of the l+1 limbs"}}},
                             {"additions", {{rd, "addition over l+1 limbs"}}}}});
        }
        add_other_ops(keygen);
    }

    void add_other_ops(KeyGenerator& keygen) {
        const OpKind other = OpKind::other;
        const double digits = double(beta_);
        pt_ = encoder_->encode(bench::random_slots(ctx_->max_slots()));
        values_ = bench::random_slots(ctx_->max_slots());
        sk_encryptor_ = std::make_unique<Encryptor>(ctx_, keygen.secret_key());
        pk_encryptor_ = std::make_unique<Encryptor>(ctx_, keygen.public_key());
        decryptor_ = std::make_unique<Decryptor>(ctx_, keygen.secret_key());
        keygen_ = &keygen;
        const Terms fft_in{{1, "FFT slots -> coefficients (N/2 slots, with a copy in)"}};
        const std::pair<std::string, Terms> pk_terms[] = {
            {"sampling", {{1, "ternary sampling of N coefficients"}, {2, "Gaussian sampling of N coefficients"}}},
            {"NTT of u", {{1, "NTT of the l+1+k limbs"}}},
            {"2 products", {{2, "product over l+1+k limbs"}}},
            {"2 ModDown", mod_downs(2)}};
        ops_.push_back({"encode", [this] { (void)encoder_->encode(values_); },
                        {{"FFT", fft_in}, {"NTT", {{1, "NTT of the l+1 limbs"}}}}, other});
        ops_.push_back({"decrypt + decode", [this] { (void)decryptor_->decrypt_decode(a_, *encoder_); },
                        {{"c0 + c1 s", {{1, "product over l+1 limbs"}, {1, "addition over l+1 limbs"}}},
                         {"INTT", {{1, "INTT of the l+1 limbs"}}},
                         {"CRT", {{1, "CRT of a message's coefficients to doubles (l+1 limbs)"}}},
                         {"FFT", {{1, "FFT coefficients -> slots (N/2 slots, with a copy in)"}}}},
                        other});
        ops_.push_back({"encrypt (secret key)", [this] { (void)sk_encryptor_->encrypt(pt_); },
                        {{"sampling", {{1, "uniform sampling of l+1 limbs"}, {1, "Gaussian sampling of N coefficients"}}},
                         {"NTT", {{1, "NTT of the l+1 limbs"}}},
                         {"a s", {{1, "product over l+1 limbs"}, {1, "addition over l+1 limbs"}}}},
                        other});
        ops_.push_back({"encrypt (public key)", [this] { (void)pk_encryptor_->encrypt(pt_); },
                        {std::begin(pk_terms), std::end(pk_terms)}, other});
        std::vector<std::pair<std::string, Terms>> one_step{{"FFT", fft_in}};
        one_step.insert(one_step.end(), std::begin(pk_terms), std::end(pk_terms));
        ops_.push_back({"encode + encrypt (public key, one step)",
                        [this] { (void)pk_encryptor_->encrypt(*encoder_, values_); }, one_step, other});
        ops_.push_back({"add", [this] { (void)eval_->add(a_, b_); },
                        {{"2 additions", {{2, "addition over l+1 limbs"}}}}, other});
        // its 5 limb streams at the addition's speed (3 streams per addition)
        ops_.push_back({"ct x pt", [this] { (void)eval_->multiply(a_, pt_); },
                        {{"memory traffic", {{5.0 / 3.0, "addition over l+1 limbs"}}}}, other});
        const std::pair<std::string, Terms> key_terms[] = {
            {"sampling", {{digits, "uniform sampling of l+1+k limbs"}, {digits, "Gaussian sampling of N coefficients"}}},
            {"NTT of the errors", {{digits, "NTT of the l+1+k limbs"}}},
            {"a s", {{digits, "product over l+1+k limbs"}}}};
        ops_.push_back({"relinearization key", [this] { (void)keygen_->relin_key(); },
                        {std::begin(key_terms), std::end(key_terms)}, other});
        std::vector<std::pair<std::string, Terms>> rotation{std::begin(key_terms), std::end(key_terms)};
        rotation.push_back({"permutation of s", {{1, "permutation of the l+1+k limbs"}}});
        const uint64_t g = ctx_->galois_element(1);
        ops_.push_back({"rotation key", [this, g] { (void)keygen_->galois_key(g); }, rotation, other});
    }

    const Options& o_;
    ContextPtr ctx_;
    const Ring& ring_;
    int level_;
    const LevelConstants& lc_;
    size_t n_, nq_, k_, ne_, beta_;
    std::vector<const math::Modulus*> ext_mods_;
    std::deque<AlignedBuffer<uint64_t>> buffers_;  // a deque: the kernels hold pointers into it
    std::vector<std::string> kernel_names_;
    std::vector<std::function<void()>> kernel_fns_;
    std::vector<PendingOp> ops_;
    std::map<std::string, double> kernels_;
    RelinKey rk_;
    RelinKey rk_seeded_;  // rk_ with its a_j drawn from its seed at each use (seed_a_halves)
    GaloisKeys gk_;
    std::unique_ptr<Encoder> encoder_;
    std::unique_ptr<Evaluator> eval_;
    Ciphertext a_, b_, product_;
    Plaintext pt_;
    std::vector<std::complex<double>> values_;
    std::unique_ptr<Encryptor> sk_encryptor_, pk_encryptor_;
    std::unique_ptr<Decryptor> decryptor_;
    KeyGenerator* keygen_ = nullptr;  // run()'s, alive while the operations are timed
    PresetResult result_;
    std::mt19937_64 gen_{7};
};

using bench::fmt;

void write_json(const std::string& path, const Options& o, const std::vector<PresetResult>& results) {
    std::ofstream out = bench::output_file(path);
    out << "{\n  \"benchmark\": \"bench_keyswitch\",\n  \"machine\": " << bench::machine_json()
        << ",\n  \"threads\": 1,\n  \"bound\": " << o.bound << ",\n  \"presets\": [\n";
    for (size_t p = 0; p < results.size(); ++p) {
        const PresetResult& r = results[p];
        out << "    {\"preset\": \"" << r.preset << "\", \"n\": " << r.n << ", \"limbs\": " << r.limbs
            << ", \"special\": " << r.special << ", \"digits\": " << r.digits << ",\n     \"kernels_us\": {";
        for (size_t i = 0; i < r.kernels.size(); ++i)
            out << (i ? ", " : "") << "\"" << bench::json_escape(r.kernels[i].name) << "\": " << fmt("%.2f", r.kernels[i].us);
        out << "},\n     \"ops\": [\n";
        for (size_t i = 0; i < r.ops.size(); ++i) {
            const OpRow& op = r.ops[i];
            out << "       {\"op\": \"" << op.op << "\", \"kind\": \""
                << (op.kind == OpKind::key_switching ? "key switching\", \"model_us\": " : "other\", \"bound_us\": ")
                << fmt("%.2f", op.model_us) << ", \"measured_us\": " << fmt("%.2f", op.measured_us)
                << ", \"ratio\": " << fmt("%.3f", op.ratio())
                << ", \"parts_us\": {";
            for (size_t j = 0; j < op.parts.size(); ++j)
                out << (j ? ", " : "") << "\"" << op.parts[j].first << "\": " << fmt("%.2f", op.parts[j].second);
            out << "}}" << (i + 1 < r.ops.size() ? "," : "") << "\n";
        }
        out << "     ]}" << (p + 1 < results.size() ? "," : "") << "\n";
    }
    out << "  ]\n}\n";
}

std::string us_text(double us) { return us >= 1000 ? fmt("%.2f ms", us / 1000) : fmt("%.1f us", us); }

// One table of a preset's operations of one kind.
void write_table(std::ostream& out, const Options& o, const PresetResult& r, OpKind kind) {
    const bool ks = kind == OpKind::key_switching;
    out << (ks ? "| operation | measured | model | ratio | model's terms |\n"
               : "| operation | measured | bound | ratio | bound's terms |\n")
        << "|---|---:|---:|---:|---|\n";
    for (const OpRow& op : r.ops) {
        if (op.kind != kind) continue;
        out << "| " << op.op << " | " << us_text(op.measured_us) << " | " << us_text(op.model_us) << " | "
            << fmt("%.2f", op.ratio()) << (ks && op.ratio() > o.bound ? " **above**" : "") << " | ";
        for (size_t j = 0; j < op.parts.size(); ++j)
            out << (j ? ", " : "") << op.parts[j].first << " " << fmt("%.0f%%", 100 * op.parts[j].second / op.model_us);
        out << " |\n";
    }
}

void write_markdown(const std::string& path, const Options& o, const std::vector<PresetResult>& results) {
    std::ofstream out = bench::output_file(path);
    out << "# Operations at their bound\n\nGenerated by `build/bench/bench_keyswitch` on " << bench::utc_now() << " ("
        << bench::cpu_model() << ", " << std::thread::hardware_concurrency() << " hardware threads, "
        << bench::cpu_flags_summary() << "), one thread, top level of each preset. Medians.\n\n"
        << "**Key switching.** Each operation's model is the sum of the measured times of the kernels it runs, at the "
           "sizes it runs them (bench/bench_keyswitch.cpp says which; docs/architecture.md describes the operations). "
           "'ratio' is the measured time of the operation over its model: what the operation spends outside its "
           "kernels (allocating its result, page faults, data that left the caches between kernels). The target "
           "is a ratio of at most "
        << fmt("%.1f", o.bound) << ".\n\n"
        << "**The other primitives.** Each operation's bound is the time of the kernels no implementation of it can "
           "leave out (FFTs, NTTs, sampling, the CRT of decoding, the products with the secret or the public key, "
           "the element-wise passes), each timed alone (bench/bench_keyswitch.cpp lists the terms; beyond the caches "
           "the element-wise kernels stream at the speed of memory, as the copy kernel shows). 'ratio' is the measured time over the bound: how close the "
           "operation is to it; what is above it is rounding, limb conversions, packing and allocation.\n";
    for (const PresetResult& r : results) {
        out << "\n## " << r.preset << ": N = " << r.n << ", " << r.limbs << " ciphertext limbs, " << r.special
            << " special, " << r.digits << " digits\n\n";
        write_table(out, o, r, OpKind::key_switching);
        out << "\n";
        write_table(out, o, r, OpKind::other);
        out << "\n<details><summary>kernel times</summary>\n\n| kernel | time |\n|---|---:|\n";
        for (const Kernel& k : r.kernels) out << "| " << k.name << " | " << us_text(k.us) << " |\n";
        out << "\n</details>\n";
    }
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto next = [&] { return bench::option_value(argc, argv, i); };
        if (arg == "--presets") o.presets = bench::split(next(), ',');
        else if (arg == "--sums") {
            o.sums.clear();
            for (const std::string& s : bench::split(next(), ',')) o.sums.push_back(std::stoi(s));
        } else if (arg == "--seconds") o.seconds = std::stod(next());
        else if (arg == "--json") o.json = next();
        else if (arg == "--markdown") o.markdown = next();
        else if (arg == "--quick") {
            o.presets = {"S1"};
            o.sums = {3};
            o.seconds = 0.05;
        } else {
            std::printf("usage: %s [--presets S1,S2,S4] [--sums 3,15] [--seconds S] [--json F] [--markdown F] [--quick]\n",
                        argv[0]);
            return arg == "--help" || arg == "-h" ? 0 : 2;
        }
    }
    bench::prepare_outputs({o.json, o.markdown});
    set_num_threads(1);
    std::vector<PresetResult> results;
    for (const std::string& p : o.presets) results.push_back(PresetBench(p, o).run());
    if (!o.json.empty()) write_json(o.json, o, results);
    if (!o.markdown.empty()) write_markdown(o.markdown, o, results);
    return 0;
}

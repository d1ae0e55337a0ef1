// The device queue (backend/queue.hpp) of the CUDA backend, written once over a device policy:
// which kernels run with which arguments (the argument structs, the launch sequences
// kernels::for_each_*_step), the constants a device caches (a ring's tables by its id, the
// constants of each level, keys by uid, automorphism permutations) and the scratch each op
// takes. Every batched op is one launch (element-wise) or one fixed launch sequence (rescale,
// key switching) for the whole batch; nothing waits but synchronize() and copy_to_host().
//
// The policy says where memory is and how a kernel runs. DeviceQueue<Device> needs:
//   using Memory                  the memory of the cached constants (device_buffer.hpp:
//                                 static allocate / release / upload / download)
//   synchronize()                 waits for every launch and copy enqueued so far
//   allocate(words)               uint64_t* of device memory in queue order (nullptr for 0 words)
//   releaser()                    a copyable callable(uint64_t*) that gives an allocate()d pointer
//                                 (or nullptr) back in queue order; it must not need the Device
//                                 object itself (a batch may outlive the queue's last reference)
//   copy_to_device(dst, host, bytes)   enqueued; the host memory may be reused on return
//   copy_on_device(dst, src, bytes)    enqueued
//   zero_on_device(dst, bytes)         enqueued: the bytes set to zero
//   copy_to_host(host, src, bytes)     synchronous (the queue has been synchronized before)
//   the launches of every kernel kind: elementwise(BatchOp, BatchEltArgs),
//   product_sum(ProductSumArgs), encode(EncodeArgs) and
//   the ops of the launch sequences (ntt, digit_copy, base_conversion, inner_product,
//   divide_drop, permute, strided_add, tensor, fold): CudaLaunches (cuda_launches.hpp) or
//   EmulatedLaunches (emulated_launches.hpp).
// The CUDA device is in batch_queue.cu (make_cuda_queue), the emulated one in emulated_queue.cpp
// (make_emulated_queue). Plain C++: no CUDA headers, so that nvcc and the host compiler both
// instantiate it.
//
// Thread safety: the caches are guarded by one mutex per queue, so that batches on one queue
// may be evaluated from several threads (each op is enqueued as a whole).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "oboro/backend/cuda/batch_kernels.hpp"
#include "oboro/backend/cuda/device_constants.hpp"
#include "oboro/backend/cuda/keyswitch_kernels.hpp"
#include "oboro/backend/cuda/ntt_kernels.hpp"
#include "oboro/backend/key_switch_key.hpp"
#include "oboro/backend/queue.hpp"
#include "oboro/backend/ring.hpp"
#include "oboro/math/modarith.hpp"
#include "oboro/util/error.hpp"

namespace oboro::cuda {

template <typename Device> class DeviceQueue final : public backend::Queue {
    using BatchSpan = backend::BatchSpan;
    using ConstBatchSpan = backend::ConstBatchSpan;
    using KeySwitchKeyView = backend::KeySwitchKeyView;
    using BatchOp = kernels::BatchOp;
    using Lock = std::lock_guard<std::mutex>;
    using Memory = typename Device::Memory;
    using Buffer = BasicDeviceBuffer<Memory>;
    using DropLimbs = BasicDeviceDropLimbs<Memory>;

public:
    // name: the device_name(); device_args: the Device's constructor arguments.
    template <typename... Args>
    explicit DeviceQueue(std::string name, Args&&... device_args)
        : device_(std::forward<Args>(device_args)...), name_(std::move(name)) {}

    const char* device_name() const override { return name_.c_str(); }
    void synchronize() override { device_.synchronize(); }

    // ---- memory: batches live on the device ----
    bool host_memory() const override { return false; }
    std::shared_ptr<uint64_t> allocate(size_t words) override {
        const Lock lock(mutex_);
        return std::shared_ptr<uint64_t>(device_.allocate(words), device_.releaser());
    }
    void copy_to_device(uint64_t* dst, const uint64_t* src, size_t words) override {
        const Lock lock(mutex_);
        device_.copy_to_device(dst, src, words * 8);
    }
    void copy_on_device(uint64_t* dst, const uint64_t* src, size_t words) override {
        const Lock lock(mutex_);
        device_.copy_on_device(dst, src, words * 8);
    }
    // zeros written by the device in queue order (Queue's default uploads them from the host and
    // waits for the copy)
    void fill_zero(BatchSpan out) override {
        const Lock lock(mutex_);
        device_.zero_on_device(out.data, out.words() * 8);
    }
    size_t cached_key_bytes() const override {
        const Lock lock(mutex_);
        size_t bytes = 0;
        for (const auto& [uid, key] : keys_) bytes += key.words.bytes();
        return bytes;
    }
    void copy_to_host(uint64_t* dst, const uint64_t* src, size_t words) override {
        const Lock lock(mutex_);
        device_.synchronize();
        device_.copy_to_host(dst, src, words * 8);
    }

    // ---- element-wise ----
    void add(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) override {
        elementwise(ring, BatchOp::add, out, a, b, nullptr);
    }
    void sub(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) override {
        elementwise(ring, BatchOp::sub, out, a, b, nullptr);
    }
    void negate(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a) override {
        elementwise(ring, BatchOp::negate, out, a, {}, nullptr);
    }
    void add_scalar(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a, const uint64_t* s) override {
        elementwise(ring, BatchOp::add_scalar, out, a, {}, s);
    }
    void mul_scalar(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a, const uint64_t* s) override {
        elementwise(ring, BatchOp::mul_scalar, out, a, {}, s);
    }
    void mul_plain(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) override {
        elementwise(ring, BatchOp::mul_plain, out, a, b, nullptr);
    }
    void drop_limbs(BatchSpan out, ConstBatchSpan a) override {
        const Lock lock(mutex_);
        device_.elementwise(BatchOp::drop_limbs, shape(out, a));
    }
    void tensor(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) override {
        tensor_into(ring, out, a, b, false);
    }

    // ---- multiply-accumulate: one launch each ----
    void mul_plain_add(const backend::Ring& ring, BatchSpan acc, ConstBatchSpan a, ConstBatchSpan b) override {
        elementwise(ring, BatchOp::mul_plain_add, acc, a, b, nullptr);
    }
    void mul_scalar_add(const backend::Ring& ring, BatchSpan acc, ConstBatchSpan a, const uint64_t* s) override {
        elementwise(ring, BatchOp::mul_scalar_add, acc, a, {}, s);
    }
    void tensor_add(const backend::Ring& ring, BatchSpan acc, ConstBatchSpan a, ConstBatchSpan b) override {
        tensor_into(ring, acc, a, b, true);
    }
    // ---- sums of products: one launch each (Queue's defaults: one launch per term, each reading
    // and writing the whole sum) ----
    // Whole plaintexts of out's limbs, all of one count (compact ones and mixed counts take the
    // default, which refuses compact ones).
    void mul_plain_sum(const backend::Ring& ring, BatchSpan out, const ConstBatchSpan* a, const ConstBatchSpan* b,
                       size_t terms) override {
        for (size_t t = 0; t < terms; ++t)
            if (b[t].n != out.n || b[t].polys != 1 || b[t].limbs != out.limbs || b[t].count != b[0].count ||
                a[t].count != out.count || a[t].polys != out.polys || a[t].limbs != out.limbs)
                return Queue::mul_plain_sum(ring, out, a, b, terms);
        product_sum(ring, out, a, b, nullptr, terms, false);
    }
    void mul_scalar_sum(const backend::Ring& ring, BatchSpan acc, const ConstBatchSpan* a, const uint64_t* const* per_limb,
                        size_t terms) override {
        product_sum(ring, acc, a, nullptr, per_limb, terms, true);
    }

    // ---- encoding: the coefficients go up (2 slots doubles per element), one launch reduces
    // them modulo every prime, one batched NTT transforms every limb ----
    void encode(const backend::Ring& ring, BatchSpan out, const double* coefficients, size_t slots) override {
        const Lock lock(mutex_);
        DeviceContext& d = context(ring);
        const Scratch upload(device_, coefficients, out.count * 2 * slots);
        kernels::EncodeArgs e;
        e.out = out.data;
        e.coefficients = upload.template as<const double>();
        e.moduli = d.barrett.template as<const math::Barrett<uint64_t>>();
        e.n = uint32_t(out.n);
        e.count = uint32_t(out.count);
        e.limbs = uint32_t(out.limbs);
        e.slots = uint32_t(slots);
        device_.encode(e);
        const kernels::RowSet rows{out.data, out.limbs * out.n};
        device_.ntt(kernels::ntt_args(d.q_tables->views(), 0, e.limbs, e.count, kernels::make_ntt_plan(d.q_tables->log_n()),
                                      rows, rows),
                    true);
    }

    // ---- rescaling: polys polynomials of level+1 limbs -> level limbs, one fused division ----
    void rescale(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a) override {
        const Lock lock(mutex_);
        const int level = int(a.limbs) - 1;
        const uint32_t polys = uint32_t(a.count * a.polys);
        DeviceContext& d = context(ring);
        auto& limbs = d.rescale[level];
        if (!limbs) {
            std::vector<uint64_t> q(ring.q().begin(), ring.q().begin() + level);
            limbs = std::make_unique<DropLimbs>(q.data(), uint32_t(level), ring.q()[size_t(level)],
                                                ring.level(level).inv_last.data());
        }
        const uint64_t n = ring.n();
        Scratch scratch(device_, kernels::divide_drop_scratch_words(polys, uint32_t(level), n));
        kernels::DivideDropArgs r;
        r.tables = d.q_tables->views();
        r.limbs = limbs->get();
        r.dropped_prime = ring.q()[size_t(level)];
        r.dropped_table = uint32_t(level);
        r.kept = uint32_t(level);
        r.polys = polys;
        r.plan = kernels::make_ntt_plan(d.q_tables->log_n());
        r.in = kernels::RowSet{const_cast<uint64_t*>(a.data), uint64_t(level + 1) * n};  // read only
        r.out = kernels::RowSet{out.data, uint64_t(level) * n};
        r.scratch = scratch.get();
        device_.divide_drop(r);
    }

    // ---- bootstrapping: ModRaise on the device, cpu::mod_raise_poly's centred lift bit for bit:
    // limb 0 copied, the inverse NTT of every polynomial's limb into scratch, and one forward NTT
    // of limbs 1 .. L-1 whose first pass reads each coefficient lifted from q_0 to the row's prime
    // (the fused rescale's conversion, NttArgs::convert_src). Four launches and a copy per
    // polynomial, where the default (backend::Queue) takes the batch to the host and back ----
    void mod_raise(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a) override {
        const Lock lock(mutex_);
        const uint64_t n = a.n;
        const uint32_t polys = uint32_t(a.count * a.polys), limbs = uint32_t(out.limbs);
        for (uint64_t p = 0; p < polys; ++p)
            device_.copy_on_device(out.data + p * limbs * n, a.data + p * a.limbs * n, n * 8);
        if (limbs == 1) return;
        DeviceContext& d = context(ring);
        auto& lift = d.raise[limbs];
        if (!lift) {  // per raised limb: the Barrett of q_i and q_0 mod q_i (no division: no inverses)
            const std::vector<uint64_t> q(ring.q().begin() + 1, ring.q().begin() + limbs), unused(limbs - 1, 0);
            lift = std::make_unique<DropLimbs>(q.data(), limbs - 1, ring.q()[0], unused.data());
        }
        const Scratch coefficients(device_, size_t(polys) * n);
        const auto plan = kernels::make_ntt_plan(d.q_tables->log_n());
        device_.ntt(kernels::ntt_args(d.q_tables->views(), 0, 1, polys, plan,
                                      kernels::RowSet{const_cast<uint64_t*>(a.data), a.limbs * n},  // read only
                                      kernels::RowSet{coefficients.get(), n}),
                    false);
        kernels::NttArgs raise = kernels::ntt_args(d.q_tables->views(), 1, limbs - 1, polys, plan, kernels::RowSet{},
                                                   kernels::RowSet{out.data + n, uint64_t(limbs) * n});
        raise.convert_src = coefficients.get();
        raise.convert_stride = n;
        raise.convert_prime = ring.q()[0];
        raise.drop = lift->get();
        device_.ntt(raise, true);
    }

    // ---- key switching ----
    void relinearize(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a, const KeySwitchKeyView& rk) override {
        const Lock lock(mutex_);
        transient_keys_.clear();
        const kernels::KeySwitchLevel& L = key_level(ring, int(a.limbs) - 1, rk.special);
        Scratch scratch(device_, kernels::key_switch_scratch(L, uint32_t(a.count)).total());
        const auto keys = same_key_array(rk, a.count);
        kernels::for_each_relinearize_step(
            ks_args(L, a.data, out.data, keys->template as<const uint64_t* const>(), rk.qp_limbs, uint32_t(a.count),
                    scratch.get()),
            device_);
    }
    void multiply_relin_rescale(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b,
                                const KeySwitchKeyView& rk) override {
        multiply_relin_rescale_with(ring, out, a, b, nullptr, rk);
    }
    void multiply_add_relin_rescale(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b,
                                    ConstBatchSpan c, const KeySwitchKeyView& rk) override {
        multiply_relin_rescale_with(ring, out, a, b, &c, rk);
    }
    // a * b (+ c when given) relinearized and rescaled: one fused launch sequence.
    void multiply_relin_rescale_with(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b,
                                     const ConstBatchSpan* c, const KeySwitchKeyView& rk) {
        const Lock lock(mutex_);
        transient_keys_.clear();
        const kernels::KeySwitchLevel& L = key_level(ring, int(a.limbs) - 1, rk.special);
        Scratch scratch(device_, kernels::key_switch_scratch(L, uint32_t(a.count), true).total());
        const auto keys = same_key_array(rk, a.count);
        kernels::MultiplyRelinRescaleArgs m;
        m.level = L;
        m.a = a.data;
        m.b = b.data;
        m.b_count = uint32_t(b.count);
        if (c) {
            m.c = c->data;
            m.c_count = uint32_t(c->count);
            m.c_polys = uint32_t(c->polys);
        }
        m.out = out.data;
        m.keys = keys->template as<const uint64_t* const>();
        m.key_qp_limbs = rk.qp_limbs;
        m.count = uint32_t(a.count);
        m.scratch = scratch.get();
        kernels::for_each_multiply_relin_rescale_step(m, device_);
    }
    // Element c is rotated by its own permutation and key; elements without one (rotation by 0)
    // are copied. Each maximal run of consecutive rotated elements (with keys of one basis) is one
    // batched key switch (a fixed launch sequence), each run of copies one copy: no key switch is spent on an element
    // that does not rotate, and no element is moved to make the runs contiguous.
    void apply_galois(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a, const uint32_t* const* perms,
                      const KeySwitchKeyView* const* keys) override {
        const Lock lock(mutex_);
        transient_keys_.clear();
        const uint64_t words = a.polys * a.limbs * a.n;
        for (size_t begin = 0; begin < a.count;) {
            const bool rotates = perms[begin] != nullptr;
            size_t end = begin + 1;
            while (end < a.count && (perms[end] != nullptr) == rotates &&
                   (!rotates || (keys[end]->qp_limbs == keys[begin]->qp_limbs &&
                                 keys[end]->special == keys[begin]->special)))
                ++end;
            if (rotates)
                rotate_run(ring, int(a.limbs) - 1, a.data + begin * words, out.data + begin * words, end - begin,
                           perms + begin, keys + begin);
            else
                device_.copy_on_device(out.data + begin * words, a.data + begin * words, (end - begin) * words * 8);
            begin = end;
        }
    }

    // One ModUp of every element's c1, then per rotation the inner product through its
    // permutation, ModDown, permutation and addition (for_each_hoisted_rotation_step).
    void rotate_hoisted(const backend::Ring& ring, const BatchSpan* outs, size_t rotations, ConstBatchSpan a,
                        const uint32_t* const* perms, const KeySwitchKeyView* const* keys) override {
        hoisted_rotations(ring, outs, rotations, a, perms, keys, [&](const auto&... args) {
            kernels::for_each_hoisted_rotation_step(args..., device_);
        });
    }
    // One ModUp, the inner products accumulated, one ModDown (for_each_hoisted_sum_step).
    void rotate_sum_hoisted(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a, size_t rotations,
                            const uint32_t* const* perms, const KeySwitchKeyView* const* keys,
                            size_t identities) override {
        const Lock lock(mutex_);
        transient_keys_.clear();
        if (rotations == 0 || a.count == 0) return;
        const kernels::KeySwitchLevel& L = key_level(ring, int(a.limbs) - 1, keys[0]->special);
        const RotationSet set(*this, ring, a.count, rotations, perms, keys);
        Scratch scratch(device_, kernels::key_switch_scratch(L, uint32_t(a.count)).total());
        Scratch tmp(device_, a.count * 2 * a.limbs * a.n);
        const auto args = ks_args(L, a.data, out.data, nullptr, 0, uint32_t(a.count), scratch.get());
        kernels::for_each_hoisted_sum_step(args, set.rotations.data(), uint32_t(rotations), uint32_t(identities),
                                           tmp.get(), device_);
    }

    // ---- the extended basis Q_level * P (double hoisting) ----
    bool extended_basis() const override { return true; }

    // One launch: P mod q_i times limb i < nq, zeros on the special limbs.
    void extend(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a) override {
        const Lock lock(mutex_);
        const kernels::KeySwitchLevel& L = key_level(ring, int(a.limbs) - 1);
        kernels::BatchEltArgs p = shape(out, a);
        p.moduli = L.ext_moduli;
        p.scalar = L.p_mod_q;
        p.scalar_shoup = L.p_mod_q_shoup;
        device_.elementwise(BatchOp::extend, p);
    }
    // The ModDown of key switching over every polynomial of the batch at once.
    void mod_down(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a) override {
        const Lock lock(mutex_);
        const kernels::KeySwitchLevel& L = key_level(ring, int(out.limbs) - 1);
        const uint32_t polys = uint32_t(a.count * a.polys);
        Scratch scratch(device_, kernels::mod_down_scratch_words(L, polys));
        kernels::mod_down_polys(L, a.data, out.data, polys, scratch.get(), device_);
    }
    // One ModUp of every element's c1, then per rotation the inner product into outs[r] and
    // P sigma_r(c0) added (for_each_hoisted_extended_rotation_step).
    void rotate_hoisted_extended(const backend::Ring& ring, const BatchSpan* outs, size_t rotations,
                                 ConstBatchSpan a, const uint32_t* const* perms,
                                 const KeySwitchKeyView* const* keys) override {
        hoisted_rotations(ring, outs, rotations, a, perms, keys, [&](const auto&... args) {
            kernels::for_each_hoisted_extended_rotation_step(args..., device_);
        });
    }
    // An operand over Q*P: its c1's alone divided by P, one ModUp, per rotation the inner product
    // and sigma_r(c0) added on every limb (for_each_hoisted_from_extended_rotation_step).
    void rotate_hoisted_from_extended(const backend::Ring& ring, const BatchSpan* outs, size_t rotations,
                                      ConstBatchSpan a, const uint32_t* const* perms,
                                      const KeySwitchKeyView* const* keys) override {
        hoisted_rotations(ring, outs, rotations, a, perms, keys, [&](const auto&... args) {
            kernels::for_each_hoisted_from_extended_rotation_step(args..., device_);
        });
    }
    // The ModDown and the rescale of an operand over Q*P in one division by q_level * P.
    void mod_down_rescale(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a) override {
        const Lock lock(mutex_);
        const kernels::KeySwitchLevel& L = key_level(ring, int(a.q_limbs()) - 1);
        const uint32_t polys = uint32_t(a.count * a.polys);
        Scratch scratch(device_, kernels::divide_scratch_words(polys, L.nq - 1, L.k + 1, a.n));
        kernels::mod_down_rescale_polys(L, a.data, out.data, polys, scratch.get(), device_);
    }

private:
    static size_t words_for(size_t bytes) { return (bytes + 7) / 8; }

    // Words of the device's queue-ordered memory, given back in queue order when this goes out of
    // scope: the ops enqueued meanwhile still see it, and the next op reuses it without a sync.
    class Scratch {
    public:
        Scratch(Device& device, size_t words) : release_(device.releaser()), ptr_(device.allocate(words)) {}
        // Holding `count` host values (copied in queue order: host may be reused on return).
        template <typename T>
        Scratch(Device& device, const T* host, size_t count) : Scratch(device, words_for(count * sizeof(T))) {
            device.copy_to_device(ptr_, host, count * sizeof(T));
        }
        ~Scratch() { release_(ptr_); }
        Scratch(const Scratch&) = delete;
        Scratch& operator=(const Scratch&) = delete;
        uint64_t* get() const { return ptr_; }
        template <typename T> T* as() const { return reinterpret_cast<T*>(ptr_); }

    private:
        decltype(std::declval<Device&>().releaser()) release_;
        uint64_t* ptr_ = nullptr;
    };

    // A ring's constants on the device, uploaded when first needed.
    struct DeviceContext {
        std::unique_ptr<BasicDeviceNttTables<Memory>> q_tables;
        Buffer barrett;  // q_count Barretts
        // by (level, special primes)
        std::map<std::pair<int, size_t>, std::unique_ptr<BasicDeviceKeySwitchLevel<Memory>>> key_switch;
        std::map<int, std::unique_ptr<DropLimbs>> rescale;
        std::map<uint32_t, std::unique_ptr<DropLimbs>> raise;  // by the limbs raised to
        // Automorphism permutations (Ring::automorphism_permutation) by their first entry, which
        // names the Galois element g (entry 0 is bit_reverse((g - 1) / 2), one per g). Not by the
        // host table's address: contexts of the same parameters share this DeviceContext (a ring's
        // id is a hash of its parameters), and a later context's table can sit where an earlier
        // one's, for another element, was (seen on an H200: a rotation in a long test process read
        // a stale permutation and returned garbage).
        std::map<uint32_t, Buffer> perms;

        explicit DeviceContext(const backend::Ring& ring) {
            q_tables = std::make_unique<BasicDeviceNttTables<Memory>>(ring.ntt_tables(), ring.q_count());
            std::vector<math::Barrett<uint64_t>> br;
            for (size_t i = 0; i < ring.q_count(); ++i) br.push_back(ring.moduli()[i].barrett);
            barrett = detail::to_device<Memory>(br);
        }
    };

    DeviceContext& context(const backend::Ring& ring) {
        auto& slot = contexts_[ring.id()];
        if (!slot) slot = std::make_unique<DeviceContext>(ring);
        return *slot;
    }
    // The key-switching constants of `level` over `special` special primes (0: all of the ring's).
    const kernels::KeySwitchLevel& key_level(const backend::Ring& ring, int level, size_t special = 0) {
        if (special == 0) special = ring.p_count();
        auto& slot = context(ring).key_switch[{level, special}];
        if (!slot)
            slot = std::make_unique<BasicDeviceKeySwitchLevel<Memory>>(ring, ring.key_switch_level(level, special));
        return slot->get();
    }
    // The key in device memory: uploaded once per uid, kept while a copy of the key lives; a key
    // without a uid is uploaded for this operation (given back in queue order when the next
    // key-switching operation starts).
    const uint64_t* device_key(const KeySwitchKeyView& key) {
        if (key.uid == 0) {
            // the device holds the words whole, unpacked on the host
            const std::vector<uint64_t> words = key.unpacked();
            transient_keys_.push_back(std::make_unique<Scratch>(device_, words.data(), words.size()));
            return transient_keys_.back()->template as<const uint64_t>();
        }
        auto it = keys_.find(key.uid);
        if (it == keys_.end()) {
            // Before another key takes device memory, the copies of keys that are gone go: a
            // process making keys again and again (contexts per session, a test suite) would
            // otherwise fill the device. Freeing waits for the device, so no enqueued op still
            // reads them.
            std::erase_if(keys_, [](const auto& entry) { return entry.second.alive.expired(); });
            it = keys_.emplace(key.uid, CachedKey{Buffer(key.words() * 8), key.alive}).first;
            it->second.words.upload(key.unpacked().data(), key.words() * 8);
        }
        return it->second.words.template as<const uint64_t>();
    }
    // A device array of `count` pointers to the device copy of `key` (every element switched
    // with the same key).
    std::unique_ptr<Scratch> same_key_array(const KeySwitchKeyView& key, size_t count) {
        const std::vector<const uint64_t*> ptrs(count, device_key(key));
        return std::make_unique<Scratch>(device_, ptrs.data(), ptrs.size());
    }
    const uint32_t* device_perm(const backend::Ring& ring, const uint32_t* host) {
        auto& slot = context(ring).perms[host[0]];
        if (slot.bytes() == 0) {
            slot = Buffer(ring.n() * 4);
            slot.upload(host, ring.n() * 4);
        }
        return slot.template as<const uint32_t>();
    }
    static kernels::CiphertextKeySwitchArgs ks_args(const kernels::KeySwitchLevel& L, const uint64_t* in, uint64_t* out,
                                                    const uint64_t* const* keys, uint64_t qp_limbs, uint32_t count,
                                                    uint64_t* scratch) {
        return kernels::CiphertextKeySwitchArgs{.level = L, .in = in, .out = out, .keys = keys,
                                                .key_qp_limbs = qp_limbs, .count = count, .scratch = scratch};
    }

    // count consecutive elements (2 polynomials of level + 1 limbs each) at in, element c
    // rotated by perms[c] (none null) with *keys[c], into out: one batched key switch.
    void rotate_run(const backend::Ring& ring, int level, const uint64_t* in, uint64_t* out, size_t count,
                    const uint32_t* const* perms, const KeySwitchKeyView* const* keys) {
        std::vector<const uint64_t*> key_ptrs(count);
        std::vector<const uint32_t*> dev_perms(count);
        bool same_perm = true;
        for (size_t c = 0; c < count; ++c) {
            key_ptrs[c] = device_key(*keys[c]);
            dev_perms[c] = device_perm(ring, perms[c]);
            same_perm &= dev_perms[c] == dev_perms[0];
        }
        // per-element permutations: a table of pointers to the cached device permutations (one
        // upload of count pointers, no copy of the permutations themselves)
        const Scratch perm_table(device_, dev_perms.data(), same_perm ? 0 : count);
        const Scratch key_array(device_, key_ptrs.data(), count);
        const kernels::KeySwitchLevel& L = key_level(ring, level, keys[0]->special);
        Scratch scratch(device_, kernels::key_switch_scratch(L, uint32_t(count)).total());
        auto args = ks_args(L, in, out, key_array.template as<const uint64_t* const>(), keys[0]->qp_limbs,
                            uint32_t(count), scratch.get());
        args.perm = dev_perms[0];
        if (!same_perm) args.perm_table = perm_table.template as<const uint32_t* const>();
        kernels::for_each_rotate_step(args, device_);
    }

    // Per rotation, its device permutation and a device array of `count` pointers to its key (the
    // inner product reads element c's key from it), with the key's limb count.
    struct RotationSet {
        std::vector<kernels::HoistedRotation> rotations;
        std::vector<std::unique_ptr<Scratch>> key_arrays;
        RotationSet(DeviceQueue& q, const backend::Ring& ring, size_t count, size_t rotation_count,
                    const uint32_t* const* host_perms, const KeySwitchKeyView* const* host_keys) {
            for (size_t r = 0; r < rotation_count; ++r) {
                key_arrays.push_back(q.same_key_array(*host_keys[r], count));
                rotations.push_back({q.device_perm(ring, host_perms[r]),
                                     key_arrays.back()->template as<const uint64_t* const>(),
                                     host_keys[r]->qp_limbs});
            }
        }
    };

    // Rotations of every element of a into outs (one per rotation): run(args, rotations, out
    // pointers, count) enqueues the launch sequence, after the keys and permutations are on the
    // device and the scratch is allocated.
    template <typename Sequence>
    void hoisted_rotations(const backend::Ring& ring, const BatchSpan* outs, size_t rotations, ConstBatchSpan a,
                           const uint32_t* const* perms, const KeySwitchKeyView* const* keys, Sequence&& run) {
        const Lock lock(mutex_);
        transient_keys_.clear();
        if (rotations == 0 || a.count == 0) return;
        const kernels::KeySwitchLevel& L = key_level(ring, int(a.q_limbs()) - 1, keys[0]->special);
        const RotationSet set(*this, ring, a.count, rotations, perms, keys);
        std::vector<uint64_t*> out_ptrs(rotations);
        for (size_t r = 0; r < rotations; ++r) out_ptrs[r] = outs[r].data;
        Scratch scratch(device_, kernels::key_switch_scratch(L, uint32_t(a.count)).total());
        const auto args = ks_args(L, a.data, nullptr, nullptr, 0, uint32_t(a.count), scratch.get());
        run(args, set.rotations.data(), static_cast<uint64_t* const*>(out_ptrs.data()), uint32_t(rotations));
    }

    static kernels::BatchEltArgs shape(BatchSpan out, ConstBatchSpan a) {
        kernels::BatchEltArgs p;
        p.out = out.data;
        p.a = a.data;
        p.n = uint32_t(a.n);
        p.count = uint32_t(a.count);
        p.polys = uint32_t(a.polys);
        p.limbs = uint32_t(a.limbs);
        p.out_limbs = uint32_t(out.limbs);
        return p;
    }
    // The device moduli of a span's limbs: over Q_level * P (a.special) the level's extended ones.
    const math::Barrett<uint64_t>* moduli_of(const backend::Ring& ring, ConstBatchSpan a) {
        return a.special ? key_level(ring, int(a.q_limbs()) - 1).ext_moduli
                         : context(ring).barrett.template as<const math::Barrett<uint64_t>>();
    }
    // Scalars exist for the ciphertext limbs only (the evaluator refuses constants over Q * P).
    void elementwise(const backend::Ring& ring, BatchOp op, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b,
                     const uint64_t* per_limb) {
        const Lock lock(mutex_);
        if (per_limb && a.special) raise<Error>("the scalar operations take no operand over Q * P");
        kernels::BatchEltArgs p = shape(out, a);
        p.b = b.data;
        p.b_count = uint32_t(b.count);
        p.b_polys = uint32_t(b.polys);
        p.moduli = moduli_of(ring, a);
        std::vector<uint64_t> scalars;  // per limb, then their Shoup companions
        if (per_limb) {
            scalars.assign(per_limb, per_limb + a.limbs);
            for (size_t i = 0; i < a.limbs; ++i) scalars.push_back(math::shoup_precompute(per_limb[i], ring.q()[i]));
        }
        const Scratch device_scalars(device_, scalars.data(), scalars.size());
        if (per_limb) {
            p.scalar = device_scalars.template as<const uint64_t>();
            p.scalar_shoup = p.scalar + a.limbs;
        }
        device_.elementwise(op, p);
    }
    // out [+]= sum_t a[t] * (b[t], or the scalars per_limb[t][i] on limb i) in one launch
    // (kernels::product_sum_thread), its tables of operands uploaded for it.
    void product_sum(const backend::Ring& ring, BatchSpan out, const ConstBatchSpan* a, const ConstBatchSpan* b,
                     const uint64_t* const* per_limb, size_t terms, bool accumulate) {
        if (terms == 0) return;
        const Lock lock(mutex_);
        if (per_limb && out.special) raise<Error>("the scalar operations take no operand over Q * P");
        // one upload: the operands' addresses, then the plaintexts' or the scalars, then the
        // operands' limbs (32 bits each, two to a word)
        std::vector<uint64_t> table;
        for (size_t t = 0; t < terms; ++t) table.push_back(reinterpret_cast<uint64_t>(a[t].data));
        const size_t second = table.size();
        for (size_t t = 0; t < terms; ++t) {
            if (b) table.push_back(reinterpret_cast<uint64_t>(b[t].data));
            else table.insert(table.end(), per_limb[t], per_limb[t] + out.limbs);
        }
        const size_t third = table.size();
        std::vector<uint32_t> limbs(terms);
        for (size_t t = 0; t < terms; ++t) limbs[t] = uint32_t(a[t].limbs);
        table.resize(third + (terms + 1) / 2, 0);
        std::memcpy(table.data() + third, limbs.data(), terms * sizeof(uint32_t));
        const Scratch device_table(device_, table.data(), table.size());
        const uint64_t* base = device_table.template as<const uint64_t>();
        kernels::ProductSumArgs p;
        p.out = out.data;
        p.a = reinterpret_cast<const uint64_t* const*>(base);
        if (b) p.b = reinterpret_cast<const uint64_t* const*>(base + second);
        else p.scalars = base + second;
        p.a_limbs = reinterpret_cast<const uint32_t*>(base + third);
        p.moduli = moduli_of(ring, out.as_const());
        p.terms = uint32_t(terms);
        p.n = uint32_t(out.n);
        p.count = uint32_t(out.count);
        p.polys = uint32_t(out.polys);
        p.limbs = uint32_t(out.limbs);
        p.b_broadcast = b && b[0].count == 1 && out.count != 1;
        p.accumulate = accumulate;
        device_.product_sum(p);
    }
    // The tensor product of a and b into out, or added to it (accumulate).
    void tensor_into(const backend::Ring& ring, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b, bool accumulate) {
        const Lock lock(mutex_);
        const uint64_t poly = a.limbs * a.n;
        kernels::TensorArgs<uint64_t> t;
        t.out = out.data;
        t.out_stride = 3 * poly;
        t.a = a.data;
        t.a_stride = 2 * poly;
        t.b = b.data;
        t.b_stride = b.count == 1 ? 0 : 2 * poly;  // one right operand: broadcast
        t.moduli = context(ring).barrett.template as<const math::Barrett<uint64_t>>();
        t.n = uint32_t(a.n);
        t.limbs = uint32_t(a.limbs);
        t.count = uint32_t(a.count);
        t.accumulate = accumulate;
        device_.tensor(t);
    }

    Device device_;  // first: constructed before and destroyed after everything that uses it
    std::string name_;
    mutable std::mutex mutex_;
    std::map<uint64_t, std::unique_ptr<DeviceContext>> contexts_;  // by ring id
    struct CachedKey {
        Buffer words;
        std::weak_ptr<const void> alive;  // the key's (KeySwitchKeyView::alive)
    };
    std::map<uint64_t, CachedKey> keys_;                           // by uid
    std::vector<std::unique_ptr<Scratch>> transient_keys_;         // keys without a uid, this op's
};

}  // namespace oboro::cuda

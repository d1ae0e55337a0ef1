// CudaBatchQueue: the batch backend contract on a CUDA stream (batch_queue.hpp). Thin host code:
// the per-thread bodies and launch sequences it runs are the emulated-tested ones
// (batch_kernels.hpp, elementwise_kernels.hpp, ntt_kernels.hpp, keyswitch_kernels.hpp).
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "oboro/backend/cuda/batch_kernels.hpp"
#include "oboro/backend/cuda/batch_queue.hpp"
#include "oboro/backend/cuda/cuda_check.cuh"
#include "oboro/backend/cuda/elementwise.hpp"
#include "oboro/backend/cuda/keyswitch.hpp"
#include "oboro/backend/cuda/ntt.hpp"

namespace oboro::cuda {

namespace {

using backend::BatchSpan;
using backend::ConstBatchSpan;
using backend::KeySwitchKeyView;
using kernels::BatchOp;

template <BatchOp Op> __global__ void batch_elt_kernel(const kernels::BatchEltArgs args) {
    kernels::batch_elt_thread<Op>(detail::this_thread(), args);
}

__global__ void encode_kernel(const kernels::EncodeArgs args) { kernels::encode_thread(detail::this_thread(), args); }

// Words from the device's stream-ordered pool, given back on the stream when this goes out of
// scope: the ops enqueued meanwhile still see it, and the next op reuses it without a sync.
class StreamScratch {
public:
    StreamScratch(size_t words, cudaStream_t stream) : stream_(stream) {
        if (words) detail::check(cudaMallocAsync(reinterpret_cast<void**>(&ptr_), words * 8, stream), "cudaMallocAsync");
    }
    ~StreamScratch() {
        if (ptr_) cudaFreeAsync(ptr_, stream_);
    }
    StreamScratch(const StreamScratch&) = delete;
    StreamScratch& operator=(const StreamScratch&) = delete;
    uint64_t* get() const { return ptr_; }
    // Copies host words in on the stream (pageable memory: staged before the call returns).
    template <typename T> T* fill(const T* host, size_t count) {
        detail::check(cudaMemcpyAsync(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
        return reinterpret_cast<T*>(ptr_);
    }

private:
    uint64_t* ptr_ = nullptr;
    cudaStream_t stream_;
};

size_t words_for(size_t bytes) { return (bytes + 7) / 8; }

// A context's constants on the device, uploaded when first needed.
struct DeviceContext {
    std::unique_ptr<DeviceNttTables> q_tables;
    DeviceBuffer barrett;  // q_count Barretts
    std::map<int, std::unique_ptr<DeviceKeySwitchLevel>> key_switch;
    std::map<int, std::unique_ptr<DeviceDropLimbs>> rescale;
    std::map<const uint32_t*, DeviceBuffer> perms;  // by the context's own host permutation

    explicit DeviceContext(const backend::Ring& ctx) {
        q_tables = std::make_unique<DeviceNttTables>(ctx.ntt_tables(), ctx.q_count());
        std::vector<math::Barrett<uint64_t>> br;
        for (size_t i = 0; i < ctx.q_count(); ++i) br.push_back(ctx.moduli()[i].barrett);
        barrett = DeviceBuffer(br.size() * sizeof(br[0]));
        barrett.upload(br.data(), br.size() * sizeof(br[0]));
    }
};

class CudaBatchQueue final : public backend::Queue {
public:
    explicit CudaBatchQueue(int device) : name_("cuda:" + std::to_string(device)) {
        detail::check(cudaSetDevice(device), "cudaSetDevice");
        detail::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        // keep freed pool memory for reuse instead of returning it at each synchronisation
        cudaMemPool_t pool;
        detail::check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
        uint64_t keep = UINT64_MAX;
        detail::check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
    }
    ~CudaBatchQueue() override {
        cudaStreamSynchronize(stream_);
        cudaStreamDestroy(stream_);
    }

    const char* device_name() const override { return name_.c_str(); }
    void synchronize() override { detail::check(cudaStreamSynchronize(stream_), "CudaBatchQueue::synchronize"); }

    // ---- memory: batches live on the device, allocated from the stream-ordered pool ----
    bool host_memory() const override { return false; }
    std::shared_ptr<uint64_t> allocate(size_t words) override {
        uint64_t* p = nullptr;
        if (words) detail::check(cudaMallocAsync(reinterpret_cast<void**>(&p), words * 8, stream_), "cudaMallocAsync (batch)");
        const cudaStream_t stream = stream_;
        return std::shared_ptr<uint64_t>(p, [stream](uint64_t* q) {
            if (q) cudaFreeAsync(q, stream);
        });
    }
    void copy_to_device(uint64_t* dst, const uint64_t* src, size_t words) override {
        detail::check(cudaMemcpyAsync(dst, src, words * 8, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (upload)");
    }
    void copy_on_device(uint64_t* dst, const uint64_t* src, size_t words) override {
        detail::check(cudaMemcpyAsync(dst, src, words * 8, cudaMemcpyDeviceToDevice, stream_), "cudaMemcpyAsync (copy)");
    }
    void copy_to_host(uint64_t* dst, const uint64_t* src, size_t words) override {
        synchronize();
        detail::check(cudaMemcpy(dst, src, words * 8, cudaMemcpyDeviceToHost), "cudaMemcpy (download)");
    }

    // ---- element-wise ----
    void add(const backend::Ring& ctx, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) override {
        elementwise(ctx, BatchOp::add, out, a, b, nullptr);
    }
    void sub(const backend::Ring& ctx, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) override {
        elementwise(ctx, BatchOp::sub, out, a, b, nullptr);
    }
    void negate(const backend::Ring& ctx, BatchSpan out, ConstBatchSpan a) override {
        elementwise(ctx, BatchOp::negate, out, a, {}, nullptr);
    }
    void add_scalar(const backend::Ring& ctx, BatchSpan out, ConstBatchSpan a, const uint64_t* s) override {
        elementwise(ctx, BatchOp::add_scalar, out, a, {}, s);
    }
    void mul_scalar(const backend::Ring& ctx, BatchSpan out, ConstBatchSpan a, const uint64_t* s) override {
        elementwise(ctx, BatchOp::mul_scalar, out, a, {}, s);
    }
    void mul_plain(const backend::Ring& ctx, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) override {
        elementwise(ctx, BatchOp::mul_plain, out, a, b, nullptr);
    }
    void drop_limbs(BatchSpan out, ConstBatchSpan a) override {
        kernels::BatchEltArgs p = shape(out, a);
        launch(BatchOp::drop_limbs, p);
    }
    void tensor(const backend::Ring& ctx, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b) override {
        const uint64_t poly = a.limbs * a.n;
        kernels::TensorArgs<uint64_t> t;
        t.out = out.data;
        t.out_stride = 3 * poly;
        t.a = a.data;
        t.a_stride = 2 * poly;
        t.b = b.data;
        t.b_stride = b.count == 1 ? 0 : 2 * poly;  // one right operand: broadcast
        t.moduli = dctx(ctx).barrett.as<const math::Barrett<uint64_t>>();
        t.n = uint32_t(a.n);
        t.limbs = uint32_t(a.limbs);
        t.count = uint32_t(a.count);
        launch_tensor(t, stream_);
    }

    // ---- encoding: the coefficients go up (2 slots doubles per element), one launch reduces
    // them modulo every prime, one batched NTT transforms every limb ----
    void encode(const backend::Ring& ctx, BatchSpan out, const double* coefficients, size_t slots) override {
        StreamScratch upload(out.count * 2 * slots, stream_);
        kernels::EncodeArgs e;
        e.out = out.data;
        e.coefficients = upload.fill(coefficients, out.count * 2 * slots);
        e.moduli = dctx(ctx).barrett.as<const math::Barrett<uint64_t>>();
        e.n = uint32_t(out.n);
        e.count = uint32_t(out.count);
        e.limbs = uint32_t(out.limbs);
        e.slots = uint32_t(slots);
        const LaunchShape s = kernels::elementwise_shape(e.n, e.count * e.limbs);
        encode_kernel<<<detail::to_dim3(s.grid), detail::to_dim3(s.block), 0, stream_>>>(e);
        detail::check(cudaGetLastError(), "CudaBatchQueue: encode launch");
        DeviceContext& d = dctx(ctx);
        const kernels::RowSet rows{out.data, out.limbs * out.n};
        launch_ntt_forward(kernels::ntt_args(d.q_tables->views(), 0, e.limbs, e.count,
                                             kernels::make_ntt_plan(d.q_tables->log_n()), rows, rows),
                           stream_);
    }

    // ---- rescaling ----
    void rescale(const backend::Ring& ctx, BatchSpan out, ConstBatchSpan a) override {
        rescale_rows(ctx, out.data, a.data, uint32_t(a.count * a.polys), int(a.limbs) - 1);
    }

    // ---- key switching ----
    void relinearize(const backend::Ring& ctx, BatchSpan out, ConstBatchSpan a, const KeySwitchKeyView& rk) override {
        transient_keys_.clear();
        const int level = int(a.limbs) - 1;
        StreamScratch scratch(kernels::key_switch_scratch(key_level(ctx, level), uint32_t(a.count)).total(), stream_);
        const std::vector<const uint64_t*> keys(a.count, device_key(rk));
        StreamScratch key_ptrs(words_for(keys.size() * sizeof(void*)), stream_);
        launch_relinearize(ks_args(ctx, level, a.data, out.data, key_ptrs.fill(keys.data(), keys.size()), rk.qp_limbs,
                                   uint32_t(a.count), scratch.get()),
                           stream_);
    }
    void multiply_relin_rescale(const backend::Ring& ctx, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b,
                                const KeySwitchKeyView& rk) override {
        transient_keys_.clear();
        const int level = int(a.limbs) - 1;
        StreamScratch scratch(kernels::key_switch_scratch(key_level(ctx, level), uint32_t(a.count), true).total(), stream_);
        const std::vector<const uint64_t*> keys(a.count, device_key(rk));
        StreamScratch key_ptrs(words_for(keys.size() * sizeof(void*)), stream_);
        kernels::MultiplyRelinRescaleArgs m;
        m.level = key_level(ctx, level);
        m.a = a.data;
        m.b = b.data;
        m.b_count = uint32_t(b.count);
        m.out = out.data;
        m.keys = key_ptrs.fill(keys.data(), keys.size());
        m.key_qp_limbs = rk.qp_limbs;
        m.count = uint32_t(a.count);
        m.scratch = scratch.get();
        launch_multiply_relin_rescale(m, stream_);
    }
    // Element c is rotated by its own permutation and key; elements without one (rotation by 0)
    // are copied. Each maximal run of consecutive rotated elements is one batched key switch (a
    // fixed launch sequence), each run of copies one copy: no key switch is spent on an element
    // that does not rotate, and no element is moved to make the runs contiguous.
    void apply_galois(const backend::Ring& ctx, BatchSpan out, ConstBatchSpan a, const uint32_t* const* perms,
                      const KeySwitchKeyView* const* keys) override {
        transient_keys_.clear();
        const uint64_t words = a.polys * a.limbs * a.n;
        for (size_t begin = 0; begin < a.count;) {
            const bool rotates = perms[begin] != nullptr;
            size_t end = begin + 1;
            while (end < a.count && (perms[end] != nullptr) == rotates) ++end;
            if (rotates)
                rotate_run(ctx, int(a.limbs) - 1, a.data + begin * words, out.data + begin * words, end - begin,
                           perms + begin, keys + begin);
            else
                detail::check(cudaMemcpyAsync(out.data + begin * words, a.data + begin * words,
                                              (end - begin) * words * 8, cudaMemcpyDeviceToDevice, stream_),
                              "cudaMemcpyAsync");
            begin = end;
        }
    }

    // One ModUp of every element's c1, then per rotation the inner product through its
    // permutation, ModDown, permutation and addition (for_each_hoisted_rotation_step).
    void rotate_hoisted(const backend::Ring& ctx, const BatchSpan* outs, size_t rotations, ConstBatchSpan a,
                        const uint32_t* const* perms, const KeySwitchKeyView* const* keys) override {
        transient_keys_.clear();
        if (rotations == 0 || a.count == 0) return;
        const int level = int(a.limbs) - 1;
        const RotationSet set(*this, ctx, a.count, rotations, perms, keys);
        std::vector<uint64_t*> out_ptrs(rotations);
        for (size_t r = 0; r < rotations; ++r) out_ptrs[r] = outs[r].data;
        StreamScratch scratch(kernels::key_switch_scratch(key_level(ctx, level), uint32_t(a.count)).total(), stream_);
        const auto args = ks_args(ctx, level, a.data, nullptr, nullptr, keys[0]->qp_limbs, uint32_t(a.count),
                                  scratch.get());
        launch_hoisted_rotations(args, set.perms.data(), set.keys.data(), out_ptrs.data(), uint32_t(rotations),
                                 stream_);
    }
    // One ModUp, the inner products accumulated, one ModDown (for_each_hoisted_sum_step).
    void rotate_sum_hoisted(const backend::Ring& ctx, BatchSpan out, ConstBatchSpan a, size_t rotations,
                            const uint32_t* const* perms, const KeySwitchKeyView* const* keys,
                            size_t identities) override {
        transient_keys_.clear();
        if (rotations == 0 || a.count == 0) return;
        const int level = int(a.limbs) - 1;
        const RotationSet set(*this, ctx, a.count, rotations, perms, keys);
        StreamScratch scratch(kernels::key_switch_scratch(key_level(ctx, level), uint32_t(a.count)).total(), stream_);
        StreamScratch tmp(a.count * 2 * a.limbs * a.n, stream_);
        const auto args = ks_args(ctx, level, a.data, out.data, nullptr, keys[0]->qp_limbs, uint32_t(a.count),
                                  scratch.get());
        launch_hoisted_sum(args, set.perms.data(), set.keys.data(), uint32_t(rotations), uint32_t(identities),
                           tmp.get(), stream_);
    }

private:
    DeviceContext& dctx(const backend::Ring& ctx) {
        auto& slot = contexts_[ctx.id()];
        if (!slot) slot = std::make_unique<DeviceContext>(ctx);
        return *slot;
    }
    const kernels::KeySwitchLevel& key_level(const backend::Ring& ctx, int level) {
        auto& slot = dctx(ctx).key_switch[level];
        if (!slot) slot = std::make_unique<DeviceKeySwitchLevel>(ctx, level);
        return slot->get();
    }
    // The key in device memory: uploaded once per uid; a key without a uid is uploaded for this
    // operation (freed in stream order when the next key-switching operation starts).
    const uint64_t* device_key(const KeySwitchKeyView& key) {
        if (key.uid == 0) {
            transient_keys_.push_back(std::make_unique<StreamScratch>(key.words(), stream_));
            return transient_keys_.back()->fill(key.data, key.words());
        }
        auto& slot = keys_[key.uid];
        if (slot.bytes() == 0) {
            slot = DeviceBuffer(key.words() * 8);
            slot.upload(key.data, key.words() * 8);
        }
        return slot.as<const uint64_t>();
    }
    const uint32_t* device_perm(const backend::Ring& ctx, const uint32_t* host) {
        auto& slot = dctx(ctx).perms[host];
        if (slot.bytes() == 0) {
            slot = DeviceBuffer(ctx.n() * 4);
            slot.upload(host, ctx.n() * 4);
        }
        return slot.as<const uint32_t>();
    }
    kernels::CiphertextKeySwitchArgs ks_args(const backend::Ring& ctx, int level, const uint64_t* in, uint64_t* out,
                                             const uint64_t* const* keys, uint64_t qp_limbs, uint32_t count,
                                             uint64_t* scratch) {
        kernels::CiphertextKeySwitchArgs args;
        args.level = key_level(ctx, level);
        args.in = in;
        args.out = out;
        args.keys = keys;
        args.key_qp_limbs = qp_limbs;
        args.count = count;
        args.scratch = scratch;
        return args;
    }

    // count consecutive elements (2 polynomials of level + 1 limbs each) at in, element c
    // rotated by perms[c] (none null) with *keys[c], into out: one batched key switch.
    void rotate_run(const backend::Ring& ctx, int level, const uint64_t* in, uint64_t* out, size_t count,
                    const uint32_t* const* perms, const KeySwitchKeyView* const* keys) {
        std::vector<const uint64_t*> key_ptrs(count);
        std::vector<const uint32_t*> dev_perms(count);
        bool same_perm = true;
        for (size_t c = 0; c < count; ++c) {
            key_ptrs[c] = device_key(*keys[c]);
            dev_perms[c] = device_perm(ctx, perms[c]);
            same_perm &= dev_perms[c] == dev_perms[0];
        }
        // per-element permutations: a table of pointers to the cached device permutations (one
        // upload of count pointers, no copy of the permutations themselves)
        StreamScratch perm_table(same_perm ? 0 : words_for(count * sizeof(void*)), stream_);
        StreamScratch key_array(words_for(count * sizeof(void*)), stream_);
        StreamScratch scratch(kernels::key_switch_scratch(key_level(ctx, level), uint32_t(count)).total(), stream_);
        auto args = ks_args(ctx, level, in, out, key_array.fill(key_ptrs.data(), key_ptrs.size()), keys[0]->qp_limbs,
                            uint32_t(count), scratch.get());
        args.perm = dev_perms[0];
        if (!same_perm) args.perm_table = perm_table.fill(dev_perms.data(), dev_perms.size());
        launch_rotate(args, stream_);
    }

    // The device permutations of `rotations` automorphisms and, per rotation, a device array of
    // `count` pointers to its key (the inner product reads element c's key from it).
    struct RotationSet {
        std::vector<const uint32_t*> perms;
        std::vector<const uint64_t* const*> keys;
        std::vector<std::unique_ptr<StreamScratch>> key_arrays;
        RotationSet(CudaBatchQueue& q, const backend::Ring& ctx, size_t count, size_t rotations,
                    const uint32_t* const* host_perms, const KeySwitchKeyView* const* host_keys) {
            for (size_t r = 0; r < rotations; ++r) {
                perms.push_back(q.device_perm(ctx, host_perms[r]));
                const std::vector<const uint64_t*> ptrs(count, q.device_key(*host_keys[r]));
                key_arrays.push_back(std::make_unique<StreamScratch>(words_for(count * sizeof(void*)), q.stream_));
                keys.push_back(key_arrays.back()->fill(ptrs.data(), ptrs.size()));
            }
        }
    };

    // polys polynomials of level+1 limbs at in -> level limbs at out (may be in).
    void rescale_rows(const backend::Ring& ctx, uint64_t* out, const uint64_t* in, uint32_t polys, int level) {
        DeviceContext& d = dctx(ctx);
        auto& limbs = d.rescale[level];
        if (!limbs) {
            std::vector<uint64_t> q(ctx.q().begin(), ctx.q().begin() + level);
            limbs = std::make_unique<DeviceDropLimbs>(q.data(), uint32_t(level), ctx.q()[size_t(level)],
                                                      ctx.level(level).inv_last.data());
        }
        const uint64_t n = ctx.n();
        StreamScratch scratch(kernels::divide_drop_scratch_words(polys, uint32_t(level), n), stream_);
        kernels::DivideDropArgs r;
        r.tables = d.q_tables->views();
        r.limbs = limbs->get();
        r.dropped_prime = ctx.q()[size_t(level)];
        r.dropped_table = uint32_t(level);
        r.kept = uint32_t(level);
        r.polys = polys;
        r.plan = kernels::make_ntt_plan(d.q_tables->log_n());
        r.in = kernels::RowSet{const_cast<uint64_t*>(in), uint64_t(level + 1) * n};  // read only
        r.out = kernels::RowSet{out, uint64_t(level) * n};
        r.scratch = scratch.get();
        launch_divide_and_drop(r, stream_);
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
    void elementwise(const backend::Ring& ctx, BatchOp op, BatchSpan out, ConstBatchSpan a, ConstBatchSpan b,
                     const uint64_t* per_limb) {
        kernels::BatchEltArgs p = shape(out, a);
        p.b = b.data;
        p.b_count = uint32_t(b.count);
        p.b_polys = uint32_t(b.polys);
        p.moduli = dctx(ctx).barrett.as<const math::Barrett<uint64_t>>();
        StreamScratch scalars(per_limb ? 2 * a.limbs : 0, stream_);
        if (per_limb) {
            std::vector<uint64_t> host(per_limb, per_limb + a.limbs);
            for (size_t i = 0; i < a.limbs; ++i) host.push_back(math::shoup_precompute(per_limb[i], ctx.q()[i]));
            const uint64_t* d = scalars.fill(host.data(), host.size());
            p.scalar = d;
            p.scalar_shoup = d + a.limbs;
        }
        launch(op, p);
    }
    void launch(BatchOp op, const kernels::BatchEltArgs& p) {
        const uint32_t rows = p.count * p.polys * p.out_limbs;
        if (rows == 0 || p.n == 0) return;
        const LaunchShape s = kernels::elementwise_shape(p.n, rows);
        kernels::dispatch_batch_op(op, [&]<BatchOp Op>() {
            batch_elt_kernel<Op><<<detail::to_dim3(s.grid), detail::to_dim3(s.block), 0, stream_>>>(p);
        });
        detail::check(cudaGetLastError(), "CudaBatchQueue: element-wise launch");
    }

    std::string name_;
    cudaStream_t stream_ = nullptr;
    std::map<uint64_t, std::unique_ptr<DeviceContext>> contexts_;
    std::map<uint64_t, DeviceBuffer> keys_;                        // by uid
    std::vector<std::unique_ptr<StreamScratch>> transient_keys_;    // keys without a uid, this op's
};

}  // namespace

std::shared_ptr<backend::Queue> make_cuda_queue(int device) {
    const int count = device_count();
    if (count == 0) raise<Error>("no CUDA GPU found (", device_summary(), ")");
    if (device < 0 || device >= count) raise<ValueError>("CUDA device ", device, " does not exist (", count, " found)");
    return std::make_shared<CudaBatchQueue>(device);
}

}  // namespace oboro::cuda

#include "oboro/ckks/batch.hpp"

#include <cstring>
#include <vector>

#include "oboro/ckks/evaluator.hpp"
#include "oboro/util/error.hpp"
#include "oboro/util/parallel.hpp"

namespace oboro::ckks {

namespace {
// The queue whose device memory a batch for `q` lives in: nullptr for host memory.
QueuePtr device_memory_of(const QueuePtr& q) { return q && !q->host_memory() ? q : nullptr; }

// Copies `words` words within one memory: that of `device`, or host memory for nullptr.
void copy_within(backend::Queue* device, uint64_t* dst, const uint64_t* src, size_t words) {
    if (device) device->copy_on_device(dst, src, words);
    else std::memcpy(dst, src, words * sizeof(uint64_t));
}
}  // namespace

PolyBatch::PolyBatch(const Context& ctx, size_t count, size_t polys, int level, double scale, size_t slots,
                     const QueuePtr& memory, Basis basis)
    : n_(ctx.n()), special_(special_limbs_of(ctx, basis)), level_(level), scale_(scale), slots_(slots),
      context_id_(ctx.id()) {
    if (level < 0 || level > ctx.max_level())
        raise<LevelMismatch>("batch: level ", level, " is outside 0..", ctx.max_level());
    if (count == 0) raise<ValueError>("batch: a batch needs at least one element");
    count_ = count;
    polys_ = polys;
    const size_t words = count * polys * limbs() * n_;
    device_ = device_memory_of(memory);
    if (device_) {
        device_data_ = device_->allocate(words);
        device_words_ = words;
    } else {
        data_ = AlignedBuffer<uint64_t>(words);
    }
}

PolyBatch::PolyBatch(const PolyBatch& other)
    : data_(other.data_), device_(other.device_), device_words_(other.device_words_), count_(other.count_),
      polys_(other.polys_), n_(other.n_), special_(other.special_), level_(other.level_), scale_(other.scale_),
      slots_(other.slots_),
      context_id_(other.context_id_), seeds_(other.seeds_) {
    if (device_) {
        device_data_ = device_->allocate(device_words_);
        device_->copy_on_device(device_data_.get(), other.device_data_.get(), device_words_);
    }
}

PolyBatch& PolyBatch::operator=(const PolyBatch& other) {
    if (this != &other) *this = PolyBatch(other);
    return *this;
}

void PolyBatch::copy_to_memory(PolyBatch& out, const QueuePtr& memory) const {
    const QueuePtr target = device_memory_of(memory);
    out.count_ = count_;
    out.polys_ = polys_;
    out.n_ = n_;
    out.special_ = special_;
    out.level_ = level_;
    out.scale_ = scale_;
    out.slots_ = slots_;
    out.context_id_ = context_id_;
    out.seeds_ = seeds_;  // the same values, wherever they live
    out.device_ = target;
    const size_t words = word_count();
    if (target) {
        out.device_data_ = target->allocate(words);
        out.device_words_ = words;
        if (device_ == target) target->copy_on_device(out.device_data_.get(), data(), words);
        else if (device_) {  // another device: through host memory
            AlignedBuffer<uint64_t> staging(words);
            device_->copy_to_host(staging.data(), data(), words);
            target->copy_to_device(out.device_data_.get(), staging.data(), words);
        } else {
            target->copy_to_device(out.device_data_.get(), data(), words);
        }
    } else {
        out.data_ = AlignedBuffer<uint64_t>(words);
        if (device_) device_->copy_to_host(out.data_.data(), data(), words);
        else std::memcpy(out.data_.data(), data(), words * sizeof(uint64_t));
    }
}

namespace {
// The checks shared by from_ciphertexts, from_plaintexts and concatenate: the parts of a new
// batch (ciphertexts, plaintexts or batches, named `noun` in errors; part c is get(c), c < count)
// are there, non-empty, of this context, and at the first one's level, scale and slot count.
template <typename Get>
void check_parts(const Context& ctx, size_t count, Get get, const char* op, const char* noun = "element") {
    if (count == 0) raise<ValueError>(op, ": the list is empty; a batch needs at least one element");
    const auto& first = get(0);
    for (size_t c = 0; c < count; ++c) {
        const auto& x = get(c);
        if (x.empty()) raise<ValueError>(op, ": ", noun, " ", c, " is empty");
        if (x.context_id() != ctx.id())
            raise<ContextMismatch>(op, ": ", noun, " ", c, " (", describe(x), ") belongs to another parameter set");
        if (x.level() != first.level())
            raise<LevelMismatch>(op, ": ", noun, " ", c, " is at ", describe(x), " but ", noun, " 0 is at ",
                                 describe(first), "; a batch holds elements of one level");
        if (!same_scale(x.scale(), first.scale()))
            raise<ScaleMismatch>(op, ": ", noun, " ", c, " has ", describe(x), " but ", noun, " 0 has ", describe(first),
                                 "; a batch holds elements of one scale");
        if (x.slots() != first.slots())
            raise<ValueError>(op, ": ", noun, " ", c, " has ", x.slots(), " slots but ", noun, " 0 has ",
                              first.slots());
        if (x.basis() != first.basis())
            raise<ValueError>(op, ": ", noun, " ", c, " is over ", x.basis() == Basis::qp ? "Q*P" : "Q", " but ", noun,
                              " 0 over ", first.basis() == Basis::qp ? "Q*P" : "Q", "; a batch holds one basis");
    }
}
}  // namespace

CiphertextBatch CiphertextBatch::from_ciphertexts(const Context& ctx, std::span<const Ciphertext> cts) {
    std::vector<const Ciphertext*> pointers(cts.size());
    for (size_t c = 0; c < cts.size(); ++c) pointers[c] = &cts[c];
    return from_ciphertexts(ctx, std::span<const Ciphertext* const>(pointers));
}

CiphertextBatch CiphertextBatch::from_ciphertexts(const Context& ctx, std::span<const Ciphertext* const> cts) {
    for (size_t c = 0; c < cts.size(); ++c)
        if (!cts[c]) raise<ValueError>("from_ciphertexts: element ", c, " is a null pointer");
    check_parts(ctx, cts.size(), [&](size_t c) -> const Ciphertext& { return *cts[c]; }, "from_ciphertexts");
    const Ciphertext& first = *cts[0];
    for (size_t c = 0; c < cts.size(); ++c)
        if (cts[c]->size() != first.size())
            raise<ValueError>("from_ciphertexts: element ", c, " has ", cts[c]->size(), " polynomials but element 0 has ",
                              first.size());
    CiphertextBatch out(ctx, cts.size(), first.size(), first.level(), first.scale(), first.slots(), nullptr,
                        first.basis());
    const size_t words = first.word_count();
    // one copy per element, spread over the threads: a large batch is hundreds of MiB
    uint64_t* dst = out.mutable_data();
    parallel_for(cts.size(), [&](size_t c) { std::memcpy(dst + c * words, cts[c]->data(), words * sizeof(uint64_t)); });
    for (size_t c = 0; c < cts.size(); ++c)  // after the copies, which forget seeds
        if (cts[c]->uniform_seed()) out.set_uniform_seed(c, *cts[c]->uniform_seed());
    return out;
}

void CiphertextBatch::prepare_output(const Context& ctx, size_t count, size_t size, int level, double scale,
                                     size_t slots, const QueuePtr& memory, Basis basis) {
    const size_t special = special_limbs_of(ctx, basis);
    if (word_count() == count * size * (size_t(level + 1) + special) * ctx.n() && context_id_ == ctx.id() &&
        device_ == device_memory_of(memory)) {
        seeds_.clear();
        count_ = count;
        polys_ = size;
        special_ = special;
        level_ = level;
        scale_ = scale;
        slots_ = slots;
        return;
    }
    *this = CiphertextBatch(ctx, count, size, level, scale, slots, memory, basis);
}

const char* memory_name(const PolyBatch& x) { return x.device() ? x.device()->device_name() : "host"; }

CiphertextBatch CiphertextBatch::concatenate(const Context& ctx, std::span<const CiphertextBatch* const> parts) {
    check_parts(ctx, parts.size(), [&](size_t p) -> const CiphertextBatch& { return *parts[p]; }, "concatenate", "batch");
    const CiphertextBatch& first = *parts[0];
    size_t count = 0;
    for (size_t p = 0; p < parts.size(); ++p) {
        if (parts[p]->size() != first.size())
            raise<ValueError>("concatenate: batch ", p, " has ", parts[p]->size(),
                              " polynomials per element but batch 0 has ", first.size());
        if (parts[p]->device() != first.device())
            raise<ValueError>("concatenate: batch ", p, " is in ", memory_name(*parts[p]), " memory but batch 0 is in ",
                              memory_name(first), " memory; move them to one place first (to_device / to_host)");
        count += parts[p]->count();
    }
    CiphertextBatch out(ctx, count, first.size(), first.level(), first.scale(), first.slots(), first.device_queue(),
                        first.basis());
    uint64_t* dst = out.mutable_data();
    for (const CiphertextBatch* part : parts) {
        copy_within(out.device(), dst, part->data(), part->word_count());
        dst += part->word_count();
    }
    size_t c = 0;  // after the copies, which forget seeds
    for (const CiphertextBatch* part : parts)
        for (size_t e = 0; e < part->count(); ++e, ++c)
            if (const auto seed = part->uniform_seed(e)) out.set_uniform_seed(c, *seed);
    return out;
}

CiphertextBatch CiphertextBatch::select(const Context& ctx, std::span<const size_t> indices) const {
    if (ctx.id() != context_id_) raise<ContextMismatch>("batch selection: the batch belongs to another parameter set");
    if (indices.empty()) raise<ValueError>("batch selection: no element selected (a batch holds at least one)");
    for (size_t c : indices)
        if (c >= count_) raise<ValueError>("batch selection: index ", c, " is out of range for a batch of ", count_);
    CiphertextBatch out(ctx, indices.size(), polys_, level_, scale_, slots_, device_, basis());
    const size_t words = polys_ * limbs() * n_;
    uint64_t* dst = out.mutable_data();
    // consecutive indices are one copy: a slice with step 1 is a single copy on any device
    for (size_t k = 0; k < indices.size();) {
        size_t run = 1;
        while (k + run < indices.size() && indices[k + run] == indices[k] + run) ++run;
        copy_within(device_.get(), dst + k * words, poly(indices[k], 0), run * words);
        k += run;
    }
    for (size_t k = 0; k < indices.size(); ++k)  // after the copies, which forget seeds
        if (const auto seed = uniform_seed(indices[k])) out.set_uniform_seed(k, *seed);
    return out;
}

Ciphertext CiphertextBatch::at(size_t c) const {
    if (c >= count_) raise<ValueError>("batch: index ", c, " is out of range for a batch of ", count_);
    Ciphertext out;
    out.reset_shape(n_, polys_, level_, special_, scale_, slots_, context_id_);
    const size_t words = polys_ * limbs() * n_;
    if (device_) device_->copy_to_host(out.mutable_data(), poly(c, 0), words);
    else std::memcpy(out.mutable_data(), poly(c, 0), words * sizeof(uint64_t));
    if (const auto seed = uniform_seed(c)) out.set_uniform_seed(*seed);
    return out;
}

std::vector<Ciphertext> CiphertextBatch::to_ciphertexts() const {
    if (device_) return to_host().to_ciphertexts();  // one download, not one wait per element
    std::vector<Ciphertext> out;
    out.reserve(count_);
    for (size_t c = 0; c < count_; ++c) out.push_back(at(c));
    return out;
}

PlaintextBatch PlaintextBatch::from_plaintexts(const Context& ctx, std::span<const Plaintext> pts) {
    check_parts(ctx, pts.size(), [&](size_t c) -> const Plaintext& { return pts[c]; }, "from_plaintexts");
    const Plaintext& first = pts[0];
    PlaintextBatch out(ctx, pts.size(), first.level(), first.scale(), first.slots(), nullptr, first.basis());
    const size_t words = first.word_count();
    for (size_t c = 0; c < pts.size(); ++c) std::memcpy(out.mutable_poly(c, 0), pts[c].data(), words * sizeof(uint64_t));
    return out;
}

}  // namespace oboro::ckks

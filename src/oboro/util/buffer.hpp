// A 64-byte aligned, uninitialised array of words: the storage of every polynomial. Unlike
// std::vector it does not zero what it allocates (the kernels overwrite it anyway), and its
// alignment lets SIMD kernels use aligned loads. Large buffers come from the block cache of
// util/memory_pool.hpp, so that the megabyte buffers of every operation are reused instead of
// being mapped (and page-faulted) anew each time.
//
// The allocation policy says where the words live. Secrets must not be left in the block cache,
// whose blocks go uncleared to the next buffer of their size (util/secret_memory.hpp):
//   AlignedBuffer<T>  the block cache (PoolAllocation): public data, ciphertexts, plaintexts;
//   KeyBuffer<T>      the block cache, a fresh block mapped without the huge-page advice
//                     (KeyPoolAllocation): switching keys, written once and kept;
//   WipedBuffer<T>    the block cache, wiped before the block goes back (WipedPoolAllocation):
//                     short-lived scratch holding values derived from the secret (decryption's
//                     m + e, a*s, key generation's s^2 and s(X^g)), at the cache's speed;
//   SecretBuffer<T>   the system, wiped before it is freed (SecretAllocation): never in the cache;
//   LockedSecretBuffer<T>  the same, in locked pages kept out of core dumps: the secret key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "oboro/util/memory_pool.hpp"
#include "oboro/util/secret_memory.hpp"
#include "oboro/util/wipe.hpp"

namespace oboro {

struct PoolAllocation {
    static void* allocate(size_t bytes) { return pool_allocate(bytes); }
    static void release(void* p, size_t bytes) noexcept { pool_release(p, bytes); }
};

// Switching keys are written once, kept, and read in one sequential pass per key switch: a fresh
// huge page can cost a synchronous compaction of the system's memory where transparent huge pages
// are defragmented on demand (Linux defrag=madvise), which made keeping S4 rotation keys 2.2-2.7x
// slower on a virtual machine (docs/architecture.md, Memory), and a sequential pass gains little
// from fewer TLB misses.
struct KeyPoolAllocation {
    static void* allocate(size_t bytes) { return pool_allocate(bytes, PageAdvice::none); }
    static void release(void* p, size_t bytes) noexcept { pool_release(p, bytes); }
};

struct WipedPoolAllocation {
    static void* allocate(size_t bytes) { return pool_allocate(bytes); }
    static void release(void* p, size_t bytes) noexcept {
        if (p) wipe(p, bytes);
        pool_release(p, bytes);
    }
};

template <SecretLock Lock> struct SecretAllocation {
    static void* allocate(size_t bytes) { return secret_allocate(bytes, Lock); }
    static void release(void* p, size_t bytes) noexcept { secret_release(p, bytes, Lock); }
};

template <typename T, typename Allocation = PoolAllocation> class AlignedBuffer {
public:
    static constexpr size_t alignment = 64;

    AlignedBuffer() = default;
    explicit AlignedBuffer(size_t count) : size_(count) {
        if (count == 0) return;
        data_ = static_cast<T*>(Allocation::allocate(count * sizeof(T)));
    }
    AlignedBuffer(const AlignedBuffer& other) : AlignedBuffer(other.size_) {
        if (size_) std::memcpy(data_, other.data_, size_ * sizeof(T));
    }
    AlignedBuffer(AlignedBuffer&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
    AlignedBuffer& operator=(AlignedBuffer other) noexcept {
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
        return *this;
    }
    ~AlignedBuffer() { Allocation::release(data_, size_ * sizeof(T)); }

    T* data() { return data_; }
    const T* data() const { return data_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T& operator[](size_t i) { return data_[i]; }
    const T& operator[](size_t i) const { return data_[i]; }
    void zero() { if (size_) std::memset(data_, 0, size_ * sizeof(T)); }

private:
    T* data_ = nullptr;
    size_t size_ = 0;
};

template <typename T> using WipedBuffer = AlignedBuffer<T, WipedPoolAllocation>;
template <typename T> using KeyBuffer = AlignedBuffer<T, KeyPoolAllocation>;
template <typename T> using SecretBuffer = AlignedBuffer<T, SecretAllocation<SecretLock::no>>;
template <typename T> using LockedSecretBuffer = AlignedBuffer<T, SecretAllocation<SecretLock::yes>>;

}  // namespace oboro

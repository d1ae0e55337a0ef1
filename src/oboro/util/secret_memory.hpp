// Memory for secrets: the secret key (its coefficients and its NTT form) and samples of secret
// distributions (ternary secrets, errors, flooding noise).
//
// Why not the block cache of memory_pool.hpp: a cached block is handed, as it is, to the next
// AlignedBuffer of its size, so a secret freed there would be readable by whatever code allocates
// next (and would stay in the process for as long as the cache keeps the block). Secret blocks
// come straight from the system instead (mapped from the kernel from 1 MiB up, so that they leave
// the process when freed) and are wiped (util/wipe.hpp) before they are freed. Short-lived scratch
// that holds values derived from the secret (decryption, encryption, key generation) may keep the
// cache's speed by wiping before it goes back instead: WipedBuffer (buffer.hpp).
//
// The secret key's blocks (SecretLock::yes) are whole pages, locked in memory (mlock: not swapped
// out) where RLIMIT_MEMLOCK allows, and kept out of core dumps (MADV_DONTDUMP); both are best
// effort (docs/security.md). Transient samples are wiped but not locked: locking costs system
// calls and page faults on every allocation, 5-10% of an encryption at S1 (measured).
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace oboro {

enum class SecretLock : bool { no, yes };

// A 64-byte aligned block of at least `bytes` bytes from the system (never cached);
// with SecretLock::yes, page-aligned whole pages, locked and kept out of core dumps where the
// system allows. Throws std::bad_alloc.
void* secret_allocate(size_t bytes, SecretLock lock = SecretLock::no);
// Wipes the `bytes` bytes of a block from secret_allocate (with the same `lock`), unlocks it and
// frees it.
void secret_release(void* p, size_t bytes, SecretLock lock = SecretLock::no) noexcept;

// A standard allocator over secret_allocate / secret_release, for the containers of secrets:
// every block a container lets go of (when it grows, shrinks or dies) is wiped first.
template <typename T, SecretLock Lock = SecretLock::no> struct SecretAllocator {
    using value_type = T;
    template <typename U> struct rebind {
        using other = SecretAllocator<U, Lock>;
    };
    SecretAllocator() noexcept = default;
    template <typename U> SecretAllocator(const SecretAllocator<U, Lock>&) noexcept {}
    T* allocate(size_t count) {
        if (count > size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
        return static_cast<T*>(secret_allocate(count * sizeof(T), Lock));
    }
    void deallocate(T* p, size_t count) noexcept { secret_release(p, count * sizeof(T), Lock); }
    template <typename U> bool operator==(const SecretAllocator<U, Lock>&) const noexcept { return true; }
};

// A vector of secret values (ternary coefficients, Gaussian samples).
template <typename T> using SecretVector = std::vector<T, SecretAllocator<T>>;
// The same, locked in memory: the secret key's coefficients.
template <typename T> using LockedSecretVector = std::vector<T, SecretAllocator<T, SecretLock::yes>>;

}  // namespace oboro

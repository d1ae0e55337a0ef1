// Memory for secrets: the secret key (its coefficients and its NTT form) and samples of secret
// distributions (ternary secrets, errors, flooding noise).
//
// Why not the block cache of memory_pool.hpp: a cached block is handed, as it is, to the next
// AlignedBuffer of its size, so a secret freed there would be readable by whatever code allocates
// next (and would stay in the process for as long as the cache keeps the block). Secret blocks
// come straight from the system allocator instead and are wiped (util/wipe.hpp) before they are
// freed. Scratch that holds values derived from the secret on hot paths (decryption, encryption)
// may keep the cache's speed by wiping before it goes back instead: WipedBuffer (buffer.hpp).
//
// What this does not do (docs/security.md): lock the pages in memory (a secret may be swapped out
// and stay on the swap device) or keep them out of core dumps.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace oboro {

// A 64-byte aligned block of at least `bytes` bytes from the system allocator (never cached);
// throws std::bad_alloc.
void* secret_allocate(size_t bytes);
// Wipes the `bytes` bytes of a block from secret_allocate and frees it.
void secret_release(void* p, size_t bytes) noexcept;

// A standard allocator over secret_allocate / secret_release, for the containers of secrets:
// every block a container lets go of (when it grows, shrinks or dies) is wiped first.
template <typename T> struct SecretAllocator {
    using value_type = T;
    SecretAllocator() noexcept = default;
    template <typename U> SecretAllocator(const SecretAllocator<U>&) noexcept {}
    T* allocate(size_t count) {
        if (count > size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
        return static_cast<T*>(secret_allocate(count * sizeof(T)));
    }
    void deallocate(T* p, size_t count) noexcept { secret_release(p, count * sizeof(T)); }
    template <typename U> bool operator==(const SecretAllocator<U>&) const noexcept { return true; }
};

// A vector of secret values (ternary coefficients, Gaussian samples).
template <typename T> using SecretVector = std::vector<T, SecretAllocator<T>>;

}  // namespace oboro

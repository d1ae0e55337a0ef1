// Memory for secrets (util/secret_memory.hpp, buffer.hpp): a SecretBuffer bypasses the block cache
// and is wiped when freed, a WipedBuffer goes back to the cache zeroed, and ordinary buffers still
// come from the cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "oboro/util/buffer.hpp"
#include "oboro/util/memory_pool.hpp"
#include "oboro/util/secret_memory.hpp"
#include "oboro/util/wipe.hpp"

using namespace oboro;

namespace {

constexpr size_t kWords = size_t(1) << 17;  // 1 MiB: well above kPooledBytes

// A word pattern no allocator writes: the "secret".
uint64_t secret_word(size_t i) { return 0x5EC2E7C0FFEE0000ULL ^ (i * 0x9E3779B97F4A7C15ULL); }

template <typename Buffer> void fill_secret(Buffer& b) {
    for (size_t i = 0; i < b.size(); ++i) b[i] = secret_word(i);
}

// A Buffer of kWords filled with the secret and freed into an emptied cache: the address of its
// block, for comparing with the next buffer's (never dereferenced).
template <typename Buffer> const uint64_t* freed_secret_block() {
    pool_trim();
    Buffer b(kWords);
    fill_secret(b);
    return b.data();
}

// How many words of `b` hold the secret's word at their position.
size_t secret_words_in(const AlignedBuffer<uint64_t>& b) {
    size_t found = 0;
    for (size_t i = 0; i < b.size(); ++i) found += b[i] == secret_word(i);
    return found;
}

}  // namespace

TEST(SecretMemory, SecretBufferBypassesThePoolAndLeavesNothingForTheNextBuffer) {
    pool_trim();
    const size_t allocations = pool_allocation_count();
    {
        SecretBuffer<uint64_t> s(kWords);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(s.data()) % 64, 0u);
        fill_secret(s);
    }
    EXPECT_EQ(pool_allocation_count(), allocations);  // never taken from the cache
    EXPECT_EQ(pool_cached_bytes(), 0u);               // nor given back to it
    // Whatever block the next buffers of that size get (the system allocator may hand out the
    // freed one again), none holds the secret.
    std::vector<AlignedBuffer<uint64_t>> later;
    for (int i = 0; i < 4; ++i) later.emplace_back(kWords);
    for (const auto& b : later) EXPECT_EQ(secret_words_in(b), 0u);
}

// Small blocks: the system allocator keeps a freed one and hands it to the next request of its
// size (glibc does), so without the wipe the next buffer would read the secret.
TEST(SecretMemory, SecretBufferIsWipedWhenFreed) {
    constexpr size_t small = 512;  // 4 KiB, below kPooledBytes and below malloc's mmap threshold
    for (int round = 0; round < 8; ++round) {
        { SecretBuffer<uint64_t> s(small); fill_secret(s); }
        const AlignedBuffer<uint64_t> next(small);
        EXPECT_EQ(secret_words_in(next), 0u) << "round " << round;
    }
}

TEST(SecretMemory, WipedBufferReturnsToThePoolZeroed) {
    const uint64_t* block = freed_secret_block<WipedBuffer<uint64_t>>();
    EXPECT_EQ(pool_cached_bytes(), kWords * sizeof(uint64_t));  // back in the cache, for speed
    AlignedBuffer<uint64_t> next(kWords);
    ASSERT_EQ(next.data(), block);  // the same block, handed out again...
    EXPECT_TRUE(std::all_of(next.data(), next.data() + kWords, [](uint64_t x) { return x == 0; }));  // ...wiped
    pool_trim();
}

// The contrast the two buffers above are for: an ordinary buffer goes back to the cache as it is
// and the next buffer of its size receives its words (AlignedBuffer never promises zeroed memory).
TEST(SecretMemory, OrdinaryBuffersStillComeFromThePoolUncleared) {
    const uint64_t* block = freed_secret_block<AlignedBuffer<uint64_t>>();
    EXPECT_EQ(pool_cached_bytes(), kWords * sizeof(uint64_t));
    AlignedBuffer<uint64_t> next(kWords);
    EXPECT_EQ(next.data(), block);
    EXPECT_EQ(secret_words_in(next), kWords);
    pool_trim();
}

TEST(SecretMemory, SecretVectorUsesTheSecretAllocator) {
    pool_trim();
    const size_t allocations = pool_allocation_count();
    SecretVector<int8_t> v(kWords, 1);
    for (size_t i = 0; i < 10; ++i) v.insert(v.end(), v.begin(), v.begin() + 1000);  // grows: old blocks wiped
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % 64, 0u);
    EXPECT_EQ(v.size(), kWords + 10000);
    EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](int8_t c) { return c == 1; }));
    EXPECT_EQ(pool_allocation_count(), allocations);
    EXPECT_EQ(pool_cached_bytes(), 0u);
}

TEST(SecretMemory, WipeZeroesExactlyTheGivenBytes) {
    std::vector<uint8_t> bytes(100, 0xAB);
    wipe(bytes.data() + 10, 80);
    for (size_t i = 0; i < bytes.size(); ++i) EXPECT_EQ(bytes[i], i >= 10 && i < 90 ? 0 : 0xAB) << i;
    wipe(nullptr, 0);  // nothing to do
}

// kB of this process's memory locked in RAM (VmLck of /proc/self/status; -1 where there is none).
long locked_kb() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmLck:", 0) == 0) return std::stol(line.substr(6));
    return -1;
}

// The secret key's blocks are whole pages, locked while they live where RLIMIT_MEMLOCK leaves
// room, and unlocked when they go (a lock covers pages, and locks do not nest: no two blocks share
// a page); transient secrets are not locked.
TEST(SecretMemory, TheKeysBlocksAreWholeLockedPages) {
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    rlimit limit{};
    getrlimit(RLIMIT_MEMLOCK, &limit);
    const long before = locked_kb();
    if (before < 0) GTEST_SKIP() << "no VmLck in /proc/self/status";
    {
        // where mlock itself does nothing (AddressSanitizer ignores it) there is nothing to check
        void* probe = std::aligned_alloc(page, page);
        const bool locks = probe && mlock(probe, page) == 0 && locked_kb() > before;
        if (probe) munlock(probe, page);
        std::free(probe);
        if (!locks) GTEST_SKIP() << "mlock does not lock here (a sanitizer, or no RLIMIT_MEMLOCK room)";
    }
    {
        SecretVector<int64_t> transient(1000, 3);
        EXPECT_EQ(locked_kb(), before);
        LockedSecretVector<int8_t> a(100, 1), b(100, 2);  // two small blocks: two pages
        EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % page, 0u);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % page, 0u);
        if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < size_t(before) * 1024 + 2 * page)
            GTEST_SKIP() << "RLIMIT_MEMLOCK leaves no room to lock two pages";
        EXPECT_EQ(locked_kb(), before + long(2 * page / 1024));
    }
    EXPECT_EQ(locked_kb(), before);
}

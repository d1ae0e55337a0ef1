// The block cache behind AlignedBuffer (util/memory_pool.hpp): large blocks are reused for
// requests of their size or up to half of it, the cache never takes the process above its peak
// use, idle blocks go back, the cap is respected, small blocks bypass it, and buffers stay
// aligned and independent.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "oboro/ckks/keys.hpp"
#include "oboro/util/buffer.hpp"
#include "oboro/util/memory_pool.hpp"

using namespace oboro;

namespace {

// Makes the pool's peak of blocks in use at least `bytes` above what is in use now, and empties
// the cache: the cache then has that much room (it never takes the process above the peak).
void make_room(size_t bytes) {
    {
        std::vector<AlignedBuffer<uint64_t>> bufs;
        for (size_t i = 0; i < bytes >> 20; ++i) bufs.emplace_back((size_t(1) << 20) / 8);
    }
    pool_trim();
}

}  // namespace

TEST(MemoryPool, ReusesFreedBlocksOfTheSameSize) {
    pool_trim();
    const size_t words = 1 << 17;  // 1 MiB
    const uint64_t* first = nullptr;
    {
        AlignedBuffer<uint64_t> a(words);
        first = a.data();
        EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
    }
    EXPECT_EQ(pool_cached_bytes(), words * sizeof(uint64_t));
    AlignedBuffer<uint64_t> b(words);
    EXPECT_EQ(b.data(), first);  // the cached block came back
    EXPECT_EQ(pool_cached_bytes(), 0u);
}

// One level down, the same operation asks for slightly smaller blocks: a cached block serves any
// request from half its size up, and goes back to the cache with its own size.
TEST(MemoryPool, LargerCachedBlockServesSmallerRequests) {
    make_room(size_t(4) << 20);
    const size_t words = 1 << 17;  // 1 MiB
    const uint64_t* first = nullptr;
    {
        AlignedBuffer<uint64_t> a(words);
        first = a.data();
    }
    {
        AlignedBuffer<uint64_t> smaller(words * 3 / 4);
        EXPECT_EQ(smaller.data(), first);
        EXPECT_EQ(pool_cached_bytes(), 0u);
    }
    EXPECT_EQ(pool_cached_bytes(), words * sizeof(uint64_t));  // back with its real size
    {
        AlignedBuffer<uint64_t> tiny(words / 4);  // below half: a block of its own
        EXPECT_NE(tiny.data(), first);
        EXPECT_EQ(pool_cached_bytes(), words * sizeof(uint64_t));
    }
    AlignedBuffer<uint64_t> same(words);
    EXPECT_EQ(same.data(), first);
    pool_trim();
}

// Once a workload has reached its peak, blocks in use plus blocks cached stay within it: a fresh
// block of a size the cache cannot serve first gives back cached blocks (the oldest), down to
// what the peak leaves room for (or the slack).
TEST(MemoryPool, CacheStaysWithinThePeakUse) {
    pool_trim();
    const size_t mib = size_t(1) << 20, words = mib / 8;
    const PoolStats start = pool_stats();
    // a new peak, of 1 MiB blocks, then all of them cached
    const size_t count = std::max((start.peak_live_bytes - start.live_bytes) / mib, kPoolSlackBytes / mib) + 16;
    {
        std::vector<AlignedBuffer<uint64_t>> bufs;
        for (size_t i = 0; i < count; ++i) bufs.emplace_back(words);
    }
    const PoolStats cached = pool_stats();
    EXPECT_EQ(cached.cached_bytes, count * mib);
    EXPECT_EQ(cached.live_bytes + cached.cached_bytes, cached.peak_live_bytes);
    // 4 MiB blocks, which 1 MiB blocks cannot serve: each takes the room of four cached blocks
    std::vector<AlignedBuffer<uint64_t>> big;
    for (size_t i = 0; i < 3; ++i) {
        big.emplace_back(4 * words);
        const PoolStats now = pool_stats();
        EXPECT_EQ(now.peak_live_bytes, cached.peak_live_bytes);
        EXPECT_LE(now.live_bytes + now.cached_bytes, now.peak_live_bytes);
        EXPECT_EQ(now.cached_bytes, (count - 4 * (i + 1)) * mib);
    }
    big.clear();
    pool_trim();
}

// A phase whose memory grows (key generation: each key kept, its temporaries freed) still reuses
// its temporaries: a fresh block that raises the peak leaves the slack's worth of cache alone.
TEST(MemoryPool, GrowingWorkloadReusesItsTemporaries) {
    pool_trim();
    const size_t mib_words = (size_t(1) << 20) / 8;
    std::vector<AlignedBuffer<uint64_t>> kept;
    for (int i = 0; i < 4; ++i) {
        const size_t hits = pool_stats().hits;
        kept.emplace_back(3 * mib_words);  // a new peak every time
        {
            AlignedBuffer<uint64_t> t1(mib_words), t2(mib_words);
            const PoolStats now = pool_stats();
            EXPECT_LE(now.live_bytes, now.peak_live_bytes);  // blocks from the cache count towards the peak
        }
        if (i > 0) EXPECT_EQ(pool_stats().hits - hits, 2u) << i;  // both temporaries from the cache
    }
    kept.clear();
    pool_trim();
}

// A cached block unused for the idle time goes back to the system at the next call of the pool.
TEST(MemoryPool, IdleBlocksGoBack) {
    pool_trim();
    set_pool_idle_seconds(0.05);
    { AlignedBuffer<uint64_t> a(size_t(1) << 17); }
    EXPECT_EQ(pool_cached_bytes(), size_t(1) << 20);
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    { AlignedBuffer<uint64_t> other(size_t(1) << 13); }  // a call of the pool: the sweep runs
    EXPECT_EQ(pool_cached_bytes(), size_t(1) << 16);     // only the block just released is left
    set_pool_idle_seconds(kPoolIdleSeconds);
    pool_trim();
}

TEST(MemoryPool, SmallBlocksAreNotCached) {
    pool_trim();
    { AlignedBuffer<uint64_t> a(16); }
    EXPECT_EQ(pool_cached_bytes(), 0u);
}

TEST(MemoryPool, LimitIsRespectedAndTrimFreesEverything) {
    pool_trim();
    const size_t old_limit = pool_limit();
    set_pool_limit(3 << 20);  // 3 MiB
    {
        std::vector<AlignedBuffer<uint64_t>> bufs;
        for (int i = 0; i < 5; ++i) bufs.emplace_back(size_t(1) << 17);  // 5 x 1 MiB
    }
    EXPECT_LE(pool_cached_bytes(), size_t(3) << 20);
    EXPECT_GT(pool_cached_bytes(), 0u);
    set_pool_limit(0);
    EXPECT_EQ(pool_cached_bytes(), 0u);
    { AlignedBuffer<uint64_t> a(size_t(1) << 17); }
    EXPECT_EQ(pool_cached_bytes(), 0u);  // limit 0: no caching at all
    set_pool_limit(old_limit);
    pool_trim();
}

// A full cache makes room for the block just released (the next op likely needs its size again)
TEST(MemoryPool, NewestBlockReplacesOlderOnesWhenFull) {
    pool_trim();
    const size_t old_limit = pool_limit();
    set_pool_limit(size_t(5) << 20);  // 5 MiB
    { AlignedBuffer<uint64_t> a((size_t(3) << 20) / 8); }  // 3 MiB cached
    EXPECT_EQ(pool_cached_bytes(), size_t(3) << 20);
    {
        AlignedBuffer<uint64_t> keep((size_t(3) << 20) / 8);  // takes the cached 3 MiB block
        AlignedBuffer<uint64_t> b((size_t(4) << 20) / 8);    // a fresh 4 MiB block
        EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % (size_t(2) << 20), 0u);  // huge-page aligned
    }  // b is released first (4 MiB cached), then keep's 3 MiB replaces it
    EXPECT_EQ(pool_cached_bytes(), size_t(3) << 20);
    AlignedBuffer<uint64_t> again((size_t(3) << 20) / 8);
    EXPECT_EQ(pool_cached_bytes(), 0u);  // served from the cache
    set_pool_limit(old_limit);
}

TEST(MemoryPool, CopiesAndMovesOwnTheirBlocks) {
    AlignedBuffer<uint64_t> a(size_t(1) << 14);
    for (size_t i = 0; i < a.size(); ++i) a[i] = i;
    AlignedBuffer<uint64_t> b = a;
    EXPECT_NE(a.data(), b.data());
    AlignedBuffer<uint64_t> c = std::move(a);
    EXPECT_TRUE(a.empty());
    for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i], c[i]);
}

TEST(MemoryPool, ThreadsAllocateAndFreeConcurrently) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([t] {
            for (int i = 0; i < 200; ++i) {
                AlignedBuffer<uint64_t> a((size_t(1) << 13) * size_t(1 + (i + t) % 3));
                a[0] = uint64_t(i);
                a[a.size() - 1] = uint64_t(t);
                ASSERT_EQ(a[0], uint64_t(i));
            }
        });
    for (auto& th : threads) th.join();
    EXPECT_LE(pool_cached_bytes(), pool_limit());
}

TEST(MemoryPool, CountsEveryAllocation) {
    const size_t before = pool_allocation_count();
    { AlignedBuffer<uint64_t> small(16), large(1 << 17), none; }  // cached or not, sizes 0 excluded
    EXPECT_EQ(pool_allocation_count() - before, 2u);
    AlignedBuffer<uint64_t> a(1 << 17);
    AlignedBuffer<uint64_t> moved = std::move(a);  // a move allocates nothing, a copy does
    EXPECT_EQ(pool_allocation_count() - before, 3u);
    AlignedBuffer<uint64_t> copy = moved;
    EXPECT_EQ(pool_allocation_count() - before, 4u);
}

namespace {
// The VmFlags of the mapping that holds p (/proc/self/smaps), or "" where there is none to read.
std::string vm_flags_of(const void* p) {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    const auto at = reinterpret_cast<uintptr_t>(p);
    while (std::getline(smaps, line)) {
        unsigned long long lo = 0, hi = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 && line.find(':') > line.find('-')) {
            inside = at >= lo && at < hi;
        } else if (inside && line.rfind("VmFlags:", 0) == 0) {
            return line;
        }
    }
    return "";
}
}  // namespace

// A fresh block of 4 MiB or more is advised as huge pages (VmFlags "hg"), unless it is asked for
// with PageAdvice::none, as switching keys' storage (KeyBuffer) is.
TEST(MemoryPool, KeyBlocksAreMappedWithoutTheHugePageAdvice) {
    static_assert(std::is_same_v<decltype(ckks::KeySwitchKey::data), KeyBuffer<uint8_t>>);
    const char* env = std::getenv("OBORO_HUGE_PAGES");
    if (env && std::string(env) == "0") GTEST_SKIP() << "OBORO_HUGE_PAGES=0: no block is advised";
    pool_trim();
    const size_t bytes = size_t(24) << 20;  // a size no other test leaves in the cache
    void* hot = pool_allocate(bytes);
    void* key = pool_allocate(bytes + (size_t(2) << 20), PageAdvice::none);
    const std::string hot_flags = vm_flags_of(hot), key_flags = vm_flags_of(key);
    if (hot_flags.empty()) {
        pool_release(hot, bytes);
        pool_release(key, bytes + (size_t(2) << 20));
        GTEST_SKIP() << "no /proc/self/smaps";
    }
    EXPECT_NE(hot_flags.find(" hg"), std::string::npos) << hot_flags;
    EXPECT_EQ(key_flags.find(" hg"), std::string::npos) << key_flags;
    pool_release(hot, bytes);
    pool_release(key, bytes + (size_t(2) << 20));
}

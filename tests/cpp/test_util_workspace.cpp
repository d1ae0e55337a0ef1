// Scratch memory (util/workspace.hpp): a Workspace hands out aligned, disjoint buffers that stay
// valid until their Scope ends, holds what its largest sequence of takes needs at once (not the
// sum of each take position's largest), allocates nothing for a sequence it has already seen, and
// the pool lends its largest idle workspace first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "oboro/util/workspace.hpp"

using namespace oboro;

namespace {

// Writes a distinct pattern into every buffer, then checks that none was overwritten by another.
void expect_disjoint(const std::vector<std::pair<uint64_t*, size_t>>& bufs) {
    for (size_t b = 0; b < bufs.size(); ++b) std::fill_n(bufs[b].first, bufs[b].second, uint64_t(b + 1));
    for (size_t b = 0; b < bufs.size(); ++b)
        EXPECT_TRUE(std::all_of(bufs[b].first, bufs[b].first + bufs[b].second, [&](uint64_t w) { return w == b + 1; }))
            << "buffer " << b << " was overwritten";
}

}  // namespace

TEST(Workspace, BuffersAreAlignedAndDisjointAcrossBlocks) {
    Workspace ws;
    Workspace::Scope scope(ws);
    std::vector<std::pair<uint64_t*, size_t>> bufs;
    for (size_t words : {3u, 1000u, 17u, 70000u, 5u, 200000u, 1u}) {  // each one larger than the room left
        uint64_t* p = ws.take(words);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << words << " words";
        bufs.push_back({p, words});
    }
    EXPECT_GT(ws.allocations(), 1u);  // several blocks while the scope lives
    expect_disjoint(bufs);
}

TEST(Workspace, ARepeatedSequenceAllocatesNothing) {
    Workspace ws;
    const auto sequence = [&] {
        Workspace::Scope outer(ws);
        uint64_t* a = ws.take(5000);
        {
            Workspace::Scope inner(ws);
            uint64_t* b = ws.take(120000);
            uint64_t* c = ws.take(333);
            expect_disjoint({{a, 5000}, {b, 120000}, {c, 333}});
        }
        uint64_t* d = ws.take(40000);  // reuses the inner scope's memory
        expect_disjoint({{a, 5000}, {d, 40000}});
    };
    sequence();
    // the blocks of the first run were replaced by one at the end of its outermost scope
    const size_t allocations = ws.allocations(), capacity = ws.capacity_words();
    EXPECT_GE(capacity, 5000u + 120000u + 333u);
    for (int r = 0; r < 3; ++r) sequence();
    EXPECT_EQ(ws.allocations(), allocations);
    EXPECT_EQ(ws.capacity_words(), capacity);
}

TEST(Workspace, HoldsTheMostInUseAtOnceNotEachPositionsLargest) {
    // Two sequences with their large take at different positions: buffers kept per position would
    // hold 2 * big; the arena holds about big + small.
    constexpr size_t big = 1 << 20, small = 1 << 10;
    Workspace ws;
    for (int r = 0; r < 2; ++r) {
        {
            Workspace::Scope s(ws);
            ws.take(big);
            ws.take(small);
        }
        {
            Workspace::Scope s(ws);
            ws.take(small);
            ws.take(big);
        }
    }
    EXPECT_GE(ws.capacity_words(), big + small);
    EXPECT_LE(ws.capacity_words(), big + 2 * small + 64);
}

TEST(WorkspacePool, LendsItsLargestIdleWorkspaceFirst) {
    WorkspacePool pool;
    {
        // two leases at once: the first grows large, the second stays small
        auto large = pool.acquire();
        auto small = pool.acquire();
        Workspace::Scope a(*large), b(*small);
        large->take(1 << 18);
        small->take(1 << 8);
    }
    ASSERT_EQ(pool.idle_count(), 2u);
    const size_t before = pool.idle_capacity_words();
    for (int r = 0; r < 3; ++r) {
        auto lease = pool.acquire();
        EXPECT_GE(lease->capacity_words(), size_t(1) << 18);
        Workspace::Scope s(*lease);
        lease->take(1 << 18);  // fits: nothing grows
    }
    EXPECT_EQ(pool.idle_capacity_words(), before);
}

// The thread pool behind parallel_for (util/parallel.hpp): every index runs exactly once, on
// every thread count; loops that follow each other closely (the workers are still spinning) and
// far apart (they have gone to sleep) both complete; exceptions reach the caller; nested loops run
// inline; the pool can be resized between loops; a loop returns only after every index has
// finished, also when workers are slow or a busy thread competes for the cores.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "oboro/util/parallel.hpp"

using namespace oboro;

namespace {

class ThreadCount : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        saved_ = num_threads();
        set_num_threads(GetParam());
    }
    void TearDown() override { set_num_threads(saved_); }
    int saved_ = 1;
};

// Runs a loop of `count` indices and checks that each ran once.
void expect_each_index_once(size_t count) {
    std::vector<std::atomic<int>> hits(count);
    parallel_for(count, [&](size_t i) { hits[i].fetch_add(1); });
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << count;
}

}  // namespace

TEST_P(ThreadCount, EveryIndexRunsOnce) {
    for (size_t count : {size_t(0), size_t(1), size_t(2), size_t(3), size_t(7), size_t(64), size_t(1000)})
        expect_each_index_once(count);
}

// Back to back, the workers find the next loop while spinning; after a pause of several spin
// budgets they are asleep and must be woken. Both paths, many times over.
TEST_P(ThreadCount, LoopsBackToBackAndAfterPauses) {
    for (int round = 0; round < 2000; ++round) expect_each_index_once(size_t(2 + round % 5));
    for (int round = 0; round < 20; ++round) {
        std::this_thread::sleep_for(std::chrono::microseconds(round % 2 ? 500 : 50));
        expect_each_index_once(size_t(4 + round));
    }
}

TEST_P(ThreadCount, ExceptionsReachTheCaller) {
    for (int round = 0; round < 50; ++round) {
        EXPECT_THROW(parallel_for(16, [&](size_t i) {
                         if (i == size_t(round % 16)) throw std::runtime_error("boom");
                     }),
                     std::runtime_error);
        expect_each_index_once(8);  // the pool still works afterwards
    }
}

TEST_P(ThreadCount, NestedLoopsRunInline) {
    std::atomic<int> total{0};
    parallel_for(4, [&](size_t) { parallel_for(5, [&](size_t) { total.fetch_add(1); }); });
    EXPECT_EQ(total.load(), 20);
}

// The caller closes a loop once no index is left to take, then waits for the workers running the
// last ones: every body has finished, not merely started, when parallel_for returns.
TEST_P(ThreadCount, ReturnsOnlyAfterEveryIndexFinished) {
    for (int round = 0; round < 20; ++round) {
        std::vector<std::atomic<int>> done(6);
        parallel_for(done.size(), [&](size_t i) {
            if (i % 2 == size_t(round % 2)) std::this_thread::sleep_for(std::chrono::milliseconds(2));
            done[i].store(1);
        });
        for (size_t i = 0; i < done.size(); ++i) ASSERT_EQ(done[i].load(), 1) << "index " << i << ", round " << round;
    }
}

// Another thread spinning on the cores (the test's stand-in for a busy neighbour) makes workers
// wake late, on the caller's CPU, or get descheduled while they spin: the paths where they skip a
// loop or pause. Loops of every size still run each index once, and exceptions still arrive.
TEST_P(ThreadCount, LoopsCompleteBesideABusyThread) {
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        volatile uint64_t x = 0;
        while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    });
    for (int round = 0; round < 3000; ++round) {
        expect_each_index_once(size_t(2 + round % 9));
        if (round % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_THROW(parallel_for(16, [](size_t i) {
                     if (i == 9) throw std::runtime_error("boom");
                 }),
                 std::runtime_error);
    expect_each_index_once(100);
    stop.store(true);
    busy.join();
}

INSTANTIATE_TEST_SUITE_P(Threads, ThreadCount, ::testing::Values(1, 2, 3, 8));

TEST(ThreadPool, ResizesBetweenLoops) {
    const int saved = num_threads();
    for (int n : {1, 4, 2, 1, 3}) {
        set_num_threads(n);
        EXPECT_EQ(num_threads(), n);
        expect_each_index_once(100);
    }
    set_num_threads(saved);
}

#include "oboro/util/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace oboro {

namespace {

// Set on pool workers and on a caller inside a parallel region: nested loops then run inline
// instead of deadlocking on the one-region-at-a-time lock.
thread_local bool in_parallel_region = false;

// How long a thread spins for the next job (worker) or for the end of the current one (caller)
// before it sleeps on a condition variable. One operation runs a dozen parallel loops a few tens
// of microseconds apart, and a wake-up through the kernel costs about as much as a short loop: with
// sleeping alone, two threads ran a multiplication at N = 2^14 slower than one. Bounded, so that
// an idle pool, or one sharing its cores with other work, soon stops taking CPU time (unbounded
// spinning is what makes OpenFHE's OpenMP loops stall on a loaded machine, docs/compare.md).
constexpr std::chrono::microseconds kSpin{100};

// Calls done() until it is true or kSpin has passed; true when it became true.
template <typename Done> bool spin_until(Done&& done) {
    const auto deadline = std::chrono::steady_clock::now() + kSpin;
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        if (std::chrono::steady_clock::now() >= deadline) return false;
    }
}

// A pool whose workers wait for a "job" (one parallel_for call) and take indices from a shared
// atomic counter, so uneven work balances itself.
class Pool {
public:
    static Pool& instance() {
        static Pool pool;
        return pool;
    }

    int size() const { return threads_; }

    void resize(int n) {
        std::lock_guard<std::mutex> call_lock(call_mutex_);
        stop_workers();
        threads_ = std::max(1, n);
        start_workers();
    }

    void run(size_t count, LoopBody body) {
        if (threads_ <= 1 || count <= 1 || in_parallel_region) {
            for (size_t i = 0; i < count; ++i) body(i);
            return;
        }
        std::lock_guard<std::mutex> call_lock(call_mutex_);  // one parallel region at a time
        {
            // Under m_, so that a worker about to sleep sees either the old generation (and is
            // woken by the notify) or the new one. The job's fields are written before the
            // generation, which spinning workers read with acquire.
            std::lock_guard<std::mutex> lk(m_);
            body_ = &body;
            count_ = count;
            next_.store(0);
            active_.store(int(workers_.size()));
            error_ = nullptr;
            generation_.fetch_add(1, std::memory_order_release);
        }
        cv_.notify_all();
        in_parallel_region = true;
        work();  // the calling thread helps
        in_parallel_region = false;
        if (!spin_until([&] { return active_.load(std::memory_order_acquire) == 0; })) {
            std::unique_lock<std::mutex> lk(m_);
            done_cv_.wait(lk, [&] { return active_.load() == 0; });
        }
        std::lock_guard<std::mutex> lk(m_);
        body_ = nullptr;
        if (error_) std::rethrow_exception(error_);
    }

    ~Pool() { stop_workers(); }

private:
    Pool() {
        int n = int(std::thread::hardware_concurrency());
        if (const char* env = std::getenv("OBORO_NUM_THREADS")) n = std::atoi(env);
        threads_ = std::max(1, n);
        start_workers();
    }

    void work() {
        for (;;) {
            const size_t i = next_.fetch_add(1);
            if (i >= count_) return;
            try {
                (*body_)(i);
            } catch (...) {
                std::lock_guard<std::mutex> lk(m_);
                if (!error_) error_ = std::current_exception();
            }
        }
    }

    void worker_loop() {
        in_parallel_region = true;
        uint64_t seen = 0;
        for (;;) {
            if (!spin_until([&] {
                    return stopping_.load(std::memory_order_acquire) ||
                           generation_.load(std::memory_order_acquire) != seen;
                })) {
                std::unique_lock<std::mutex> lk(m_);
                cv_.wait(lk, [&] { return stopping_.load() || generation_.load() != seen; });
            }
            if (stopping_.load()) return;
            seen = generation_.load(std::memory_order_acquire);
            work();
            if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                std::lock_guard<std::mutex> lk(m_);  // the caller checks active_ under m_ before it sleeps
                done_cv_.notify_one();
            }
        }
    }

    void start_workers() {
        stopping_.store(false);
        for (int t = 1; t < threads_; ++t) workers_.emplace_back([this] { worker_loop(); });
    }

    void stop_workers() {
        {
            std::lock_guard<std::mutex> lk(m_);
            stopping_.store(true);
        }
        cv_.notify_all();
        for (auto& w : workers_) w.join();
        workers_.clear();
    }

    int threads_ = 1;
    std::vector<std::thread> workers_;
    std::mutex call_mutex_, m_;
    std::condition_variable cv_, done_cv_;
    const LoopBody* body_ = nullptr;
    size_t count_ = 0;
    std::atomic<size_t> next_{0};
    std::atomic<int> active_{0};
    std::atomic<uint64_t> generation_{0};
    std::atomic<bool> stopping_{false};
    std::exception_ptr error_;
};

}  // namespace

void set_num_threads(int n) { Pool::instance().resize(n); }
int num_threads() { return Pool::instance().size(); }

void parallel_for(size_t count, LoopBody body) { Pool::instance().run(count, body); }

}  // namespace oboro

#include "oboro/util/parallel.hpp"

#include <algorithm>
#include <atomic>
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
            std::lock_guard<std::mutex> lk(m_);
            body_ = &body;
            count_ = count;
            next_.store(0);
            active_ = int(workers_.size());
            error_ = nullptr;
            ++generation_;
        }
        cv_.notify_all();
        in_parallel_region = true;
        work();  // the calling thread helps
        in_parallel_region = false;
        std::unique_lock<std::mutex> lk(m_);
        done_cv_.wait(lk, [&] { return active_ == 0; });
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
            {
                std::unique_lock<std::mutex> lk(m_);
                cv_.wait(lk, [&] { return stopping_ || generation_ != seen; });
                if (stopping_) return;
                seen = generation_;
            }
            work();
            std::lock_guard<std::mutex> lk(m_);
            if (--active_ == 0) done_cv_.notify_one();
        }
    }

    void start_workers() {
        stopping_ = false;
        for (int t = 1; t < threads_; ++t) workers_.emplace_back([this] { worker_loop(); });
    }

    void stop_workers() {
        {
            std::lock_guard<std::mutex> lk(m_);
            stopping_ = true;
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
    int active_ = 0;
    uint64_t generation_ = 0;
    bool stopping_ = false;
    std::exception_ptr error_;
};

}  // namespace

void set_num_threads(int n) { Pool::instance().resize(n); }
int num_threads() { return Pool::instance().size(); }

void parallel_for(size_t count, LoopBody body) { Pool::instance().run(count, body); }

}  // namespace oboro

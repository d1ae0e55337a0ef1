#include "oboro/util/parallel.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace oboro {

namespace {

// Set on pool workers and on a caller inside a parallel region: nested loops then run inline
// instead of deadlocking on the one-region-at-a-time lock.
thread_local bool in_parallel_region = false;

// How long a thread spins for the next job (worker) or for the end of the current one (caller)
// before it sleeps on a condition variable, at most. One operation runs a dozen parallel loops a few
// tens of microseconds apart, and a wake-up through the kernel costs about as much as a short loop:
// with sleeping alone, two threads ran a multiplication at N = 2^14 slower than one. Bounded, so
// that an idle pool soon stops taking CPU time (unbounded spinning is what makes OpenFHE's OpenMP
// loops stall on a loaded machine, docs/compare.md).
constexpr std::chrono::microseconds kMaxSpin{100};

enum class SpinEnd { done, timed_out, preempted };

// A pause in a spin loop longer than this means the thread was descheduled for another thread's
// time slice (the kernel gives at least 0.75 ms): its core is shared. Shorter pauses are
// interrupts and, in a virtual machine, the host's own work; at 20 us they were counted as
// preemptions dozens of times a second on a quiet machine, and the pool lost a third of its gain.
constexpr std::chrono::microseconds kPreempted{500};

// Calls done() until it is true (done), or `limit` has passed (timed_out), or the thread was
// descheduled while spinning (preempted: the time between two looks jumped by kPreempted).
template <typename Done> SpinEnd spin_until(Done&& done, std::chrono::microseconds limit = kMaxSpin) {
    auto last = std::chrono::steady_clock::now();
    const auto deadline = last + limit;
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (done()) return SpinEnd::done;
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        const auto now = std::chrono::steady_clock::now();
        if (now - last >= kPreempted) return SpinEnd::preempted;
        if (now >= deadline) return SpinEnd::timed_out;
        last = now;
    }
}

// A worker's spin between jobs, fitted to the gaps between the jobs it has recently seen: 1.5x the
// longest of them that a spin can bridge (at most kMaxSpin), so short gaps are spun through and
// long ones slept through. The gaps within one operation are bimodal (loops back to back, and
// loops a few tens of microseconds apart), so a median would fit the short mode and sleep through
// the other. A worker that spins through a long serial stretch of its caller takes a core the
// caller could use: with another process busy on one of two cores, the kernel then keeps the
// caller on the busy core (the spinning worker counts as load on the free one), and an operation
// with a 300 us serial stretch between its loops ran 1.25x slower on two threads than on one.
class SpinFit {
public:
    std::chrono::microseconds limit() const {
        if (std::chrono::steady_clock::now() < contended_until_) return std::chrono::microseconds(0);
        float longest = 0;
        for (float gap : gaps_)
            if (gap <= float(kMaxSpin.count())) longest = std::max(longest, gap);
        return std::chrono::microseconds(int64_t(std::min(1.5f * longest, float(kMaxSpin.count()))));
    }
    // The worker was descheduled while it spun: another thread or process wants its core. Spinning
    // there only uses up the worker's share of the core, after which the scheduler runs the other
    // one for a whole time slice (milliseconds) while jobs are waiting; a sleeping worker instead
    // is woken at once. So it sleeps between jobs for the next kContendedFor.
    void preempted() { contended_until_ = std::chrono::steady_clock::now() + kContendedFor; }
    void record(int64_t gap_ns) {
        gaps_[next_] = float(std::max<int64_t>(gap_ns, 0)) * 1e-3f;
        next_ = (next_ + 1) % kGaps;
    }

private:
    static constexpr size_t kGaps = 8;
    static constexpr std::chrono::milliseconds kContendedFor{20};
    std::chrono::steady_clock::time_point contended_until_{};
    std::array<float, kGaps> gaps_{};  // starts at 0: no spin until gaps are seen
    size_t next_ = 0;
};

// The state of the current job (one parallel_for call) in one word, so that joining it and
// closing it are single atomic steps: the job's generation in the high 32 bits, a "closed" flag,
// and the number of workers that joined it and have not finished.
class JobState {
public:
    static constexpr uint64_t kClosed = uint64_t(1) << 31;
    static constexpr uint64_t kJoinedMask = kClosed - 1;
    static uint32_t generation(uint64_t s) { return uint32_t(s >> 32); }
    static bool closed(uint64_t s) { return (s & kClosed) != 0; }
    static uint64_t joined(uint64_t s) { return s & kJoinedMask; }
    static uint64_t open(uint32_t generation) { return uint64_t(generation) << 32; }
};

// A pool whose workers wait for a job and take indices from a shared atomic counter, so uneven
// work balances itself. Three rules keep k threads from ever being slower than one:
//
// 1. The caller takes indices too, and when none are left it closes the job and waits only for
//    the workers that joined it, i.e. that are running one of its indices. A worker that was not
//    scheduled in time (its core busy with another process, or just slow to wake) finds the job
//    closed and skips it. When the caller waited for every worker to check in, another process
//    busy on one of two cores made that wait a scheduler time slice per loop: a rotation at
//    N = 2^13 took 3x as long on 2 threads as on 1.
// 2. A worker that finds itself woken on the caller's CPU goes back to sleep without joining, and
//    is not woken again for kWakePause. The kernel puts a woken thread there when no CPU is idle
//    (another process is busy on the others); joining would only take turns with the caller on
//    one core, and every wake-up preempts the caller. Measured with a busy neighbour on one of two
//    cores: 93% of the wake-ups landed on the caller's CPU, and serial-heavy operations (encode,
//    secret-key encryption) ran 1.4-1.5x slower on 2 threads than on 1.
// 3. Workers spin between jobs only as long as the recent gaps between jobs (SpinFit), and not at
//    all on a contended core.
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
            // Under m_, so that a worker about to sleep sees either the old job (and is woken by
            // the notify) or the new one. The job's fields are written before the state that
            // publishes them (release); a worker reads them only after joining (acquire).
            std::lock_guard<std::mutex> lk(m_);
            body_ = &body;
            count_ = count;
            next_.store(0, std::memory_order_relaxed);
            error_ = nullptr;
            caller_cpu_.store(sched_getcpu(), std::memory_order_relaxed);
            published_at_.store(now_ns(), std::memory_order_relaxed);
            generation_ += 1;
            state_.store(JobState::open(generation_), std::memory_order_release);
        }
        const int64_t now = published_at_.load(std::memory_order_relaxed);
        for (auto& w : workers_)  // a notify with no sleeper is a few atomic reads, no system call
            if (w->wake_paused_until.load(std::memory_order_relaxed) <= now) w->wake.notify_one();
        in_parallel_region = true;
        work();  // the calling thread takes indices until none are left
        in_parallel_region = false;
        const uint64_t at_close = state_.fetch_or(JobState::kClosed, std::memory_order_acq_rel);
        if (JobState::joined(at_close) != 0) {
            auto finished = [&] { return JobState::joined(state_.load(std::memory_order_acquire)) == 0; };
            if (spin_until(finished) != SpinEnd::done) {
                std::unique_lock<std::mutex> lk(m_);
                done_cv_.wait(lk, finished);
            }
        }
        std::lock_guard<std::mutex> lk(m_);
        body_ = nullptr;
        if (error_) std::rethrow_exception(error_);
    }

    ~Pool() { stop_workers(); }

private:
    // How long a worker that was woken on its caller's CPU is left asleep: long enough that the
    // failed wake-ups cost nothing (one per kWakePause), short enough that the pool uses a core
    // soon after it frees up.
    static constexpr std::chrono::milliseconds kWakePause{20};

    struct Worker {
        std::thread thread;
        std::condition_variable wake;  // waited on under m_
        std::atomic<int64_t> wake_paused_until{0};  // steady-clock nanoseconds
    };

    static int64_t now_ns() {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }

    Pool() {
        int n = int(std::thread::hardware_concurrency());
        if (const char* env = std::getenv("OBORO_NUM_THREADS")) n = std::atoi(env);
        threads_ = std::max(1, n);
        start_workers();
    }

    void work() {
        for (;;) {
            const size_t i = next_.fetch_add(1, std::memory_order_relaxed);
            if (i >= count_) return;
            try {
                (*body_)(i);
            } catch (...) {
                std::lock_guard<std::mutex> lk(m_);
                if (!error_) error_ = std::current_exception();
            }
        }
    }

    // Joins the job of generation `generation` if it is still open; false when it has closed (or
    // a later one has begun, which the worker will see on its next wait).
    bool join(uint32_t generation) {
        uint64_t s = state_.load(std::memory_order_acquire);
        while (JobState::generation(s) == generation && !JobState::closed(s)) {
            if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire))
                return true;
        }
        return false;
    }

    void worker_loop(Worker& self) {
        in_parallel_region = true;
        uint32_t seen = JobState::generation(state_.load(std::memory_order_acquire));
        auto has_news = [&] {
            return stopping_.load(std::memory_order_acquire) ||
                   JobState::generation(state_.load(std::memory_order_acquire)) != seen;
        };
        SpinFit spin;
        int64_t idle_since = now_ns();
        for (;;) {
            const SpinEnd end = spin_until(has_news, spin.limit());
            if (end == SpinEnd::preempted) spin.preempted();
            const bool slept = end != SpinEnd::done;
            if (slept) {
                std::unique_lock<std::mutex> lk(m_);
                self.wake.wait(lk, has_news);
            }
            if (stopping_.load()) return;
            // The gap is measured to the job's publication, not to this wake-up: a wake-up's own
            // latency would make every gap look too long to bridge, and the worker would sleep on.
            spin.record(published_at_.load(std::memory_order_relaxed) - idle_since);
            idle_since = now_ns();
            seen = JobState::generation(state_.load(std::memory_order_acquire));
            if (slept && sched_getcpu() == caller_cpu_.load(std::memory_order_relaxed)) {  // rule 2
                self.wake_paused_until.store(idle_since + std::chrono::nanoseconds(kWakePause).count(),
                                             std::memory_order_relaxed);
                spin.preempted();  // its core is the caller's: no spinning there either
                continue;
            }
            if (!join(seen)) continue;
            work();
            idle_since = now_ns();
            const uint64_t before = state_.fetch_sub(1, std::memory_order_acq_rel);
            if (JobState::closed(before) && JobState::joined(before) == 1) {
                std::lock_guard<std::mutex> lk(m_);  // the caller checks the state under m_ before it sleeps
                done_cv_.notify_one();
            }
        }
    }

    void start_workers() {
        stopping_.store(false);
        for (int t = 1; t < threads_; ++t) {
            workers_.push_back(std::make_unique<Worker>());
            Worker& w = *workers_.back();
            w.thread = std::thread([this, &w] { worker_loop(w); });
        }
    }

    void stop_workers() {
        {
            std::lock_guard<std::mutex> lk(m_);
            stopping_.store(true);
        }
        for (auto& w : workers_) w->wake.notify_one();
        for (auto& w : workers_) w->thread.join();
        workers_.clear();
    }

    int threads_ = 1;
    std::vector<std::unique_ptr<Worker>> workers_;
    std::mutex call_mutex_, m_;
    std::condition_variable done_cv_;
    const LoopBody* body_ = nullptr;
    size_t count_ = 0;
    std::atomic<size_t> next_{0};
    uint32_t generation_ = 0;  // written by the caller under call_mutex_
    std::atomic<uint64_t> state_{JobState::open(0) | JobState::kClosed};
    std::atomic<int> caller_cpu_{-1};
    std::atomic<int64_t> published_at_{0};  // steady-clock nanoseconds
    std::atomic<bool> stopping_{false};
    std::exception_ptr error_;
};

}  // namespace

void set_num_threads(int n) { Pool::instance().resize(n); }
int num_threads() { return Pool::instance().size(); }

void parallel_for(size_t count, LoopBody body) { Pool::instance().run(count, body); }

}  // namespace oboro

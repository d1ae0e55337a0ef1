// Data-parallel loops over a process-wide pool of worker threads.
//
// The thread count defaults to the hardware concurrency, can be set with the environment
// variable OBORO_NUM_THREADS or set_num_threads(). With one thread, parallel_for runs inline
// with no synchronisation at all, so single-threaded measurements carry no pool overhead. More
// threads never make a loop slower than the caller running it alone, also when other processes
// compete for the cores: parallel.cpp gives the rules, bench/bench_threads measures them.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>

namespace oboro {

// A non-owning reference to a callable `void(size_t)`: the body of a parallel loop. Unlike
// std::function it never allocates (a std::function made from a lambda with more than two
// captures allocates on the heap, and the nested loops of key switching made one per loop, i.e.
// several per ciphertext of a batch). It must not outlive the callable; parallel_for blocks until
// the loop is done, so a temporary lambda argument lives long enough.
class LoopBody {
public:
    template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, LoopBody>>>
    LoopBody(F&& f)  // NOLINT(google-explicit-constructor): lambdas convert implicitly, as to std::function
        : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
          call_([](void* c, size_t i) { (*static_cast<std::remove_reference_t<F>*>(c))(i); }) {}
    void operator()(size_t i) const { call_(callable_, i); }

private:
    void* callable_;
    void (*call_)(void*, size_t);
};

void set_num_threads(int n);
int num_threads();

// Calls body(i) for every i in [0, count), spread over the pool. Blocks until all are done.
// Exceptions thrown by body are rethrown (the first one) on the calling thread.
void parallel_for(size_t count, LoopBody body);

}  // namespace oboro

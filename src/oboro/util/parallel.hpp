// Data-parallel loops over a process-wide pool of worker threads.
//
// The thread count defaults to the hardware concurrency, can be set with the environment
// variable OBORO_NUM_THREADS or set_num_threads(). With one thread, parallel_for runs inline
// with no synchronisation at all, so single-threaded measurements carry no pool overhead.
#pragma once

#include <cstddef>
#include <functional>

namespace oboro {

void set_num_threads(int n);
int num_threads();

// Calls body(i) for every i in [0, count), spread over the pool. Blocks until all are done.
// Exceptions thrown by body are rethrown (the first one) on the calling thread.
void parallel_for(size_t count, const std::function<void(size_t)>& body);

}  // namespace oboro

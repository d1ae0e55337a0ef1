// Shared helpers of the benchmark programs: median timing over repeated runs, a description of
// the machine, and a tiny JSON writer. Benchmarks print medians; they never assert timings.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace oboro::bench {

// Runs bench/<script> (a matplotlib plot of a benchmark's JSON) with `args`, through $OBORO_PYTHON
// or else the interpreter CMake was configured with (OBORO_PYTHON); a failed plot is reported,
// never fatal: the JSON and Markdown are the results.
#if defined(OBORO_SOURCE_DIR) && defined(OBORO_PYTHON)
inline void run_plot(const std::string& script, const std::string& args) {
    const char* env = std::getenv("OBORO_PYTHON");
    const std::string cmd = std::string("\"") + (env ? env : OBORO_PYTHON) + "\" \"" + OBORO_SOURCE_DIR + "/bench/" +
                            script + "\" " + args;
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "the plot failed: %s\n", cmd.c_str());
}
#endif

// The folder of a results path.
inline std::filesystem::path results_folder(const std::string& path) {
    return std::filesystem::absolute(std::filesystem::path(path)).parent_path();
}

// The folder of a results path, created where missing (the error, if it cannot be).
inline std::error_code create_results_folder(const std::string& path) {
    std::error_code ec;
    std::filesystem::create_directories(results_folder(path), ec);
    return ec;
}

[[noreturn]] inline void results_unwritable(const std::string& path, const std::error_code& ec) {
    std::fprintf(stderr, "cannot write results to %s: %s\n", path.c_str(),
                 ec ? ec.message().c_str() : "the folder is not writable");
    std::exit(2);
}

// A results file's folder, created where missing, and checked writable: called on the command
// line's paths before any measurement, so that a long run never ends with its results lost.
// Exits with a message when the folder cannot be made or written.
inline void prepare_output(const std::string& path) {
    const std::error_code ec = create_results_folder(path);
    if (ec) results_unwritable(path, ec);
    const std::filesystem::path probe = results_folder(path) / ".oboro_bench_write_check";
    const bool writable = bool(std::ofstream(probe));
    std::error_code ignored;
    std::filesystem::remove(probe, ignored);
    if (!writable) results_unwritable(path, {});
}

// prepare_output for each path given (the empty ones are options not given).
inline void prepare_outputs(std::initializer_list<std::string> paths) {
    for (const std::string& path : paths)
        if (!path.empty()) prepare_output(path);
}

// A results file opened for writing (its folder created where missing); exits with a message
// when it cannot be written, instead of losing the results silently.
inline std::ofstream output_file(const std::string& path) {
    const std::error_code ec = create_results_folder(path);
    std::ofstream out(path);
    if (!out) results_unwritable(path, ec);
    return out;
}

struct Timing {
    double median_us = 0, min_us = 0;
    int runs = 0;
};

// The median and the minimum of some run times (microseconds, not empty).
inline Timing timing_of(std::vector<double> us) {
    std::sort(us.begin(), us.end());
    Timing t;
    t.runs = int(us.size());
    t.median_us = us.size() % 2 ? us[us.size() / 2] : 0.5 * (us[us.size() / 2 - 1] + us[us.size() / 2]);
    t.min_us = us.front();
    return t;
}

// Runs f once to warm up, then repeatedly until `min_runs` runs and `min_seconds` have passed
// (at most `max_runs`); returns each run's time in microseconds.
inline std::vector<double> sample(const std::function<void()>& f, int min_runs = 5, double min_seconds = 0.3,
                                  int max_runs = 1000) {
    using clock = std::chrono::steady_clock;
    f();
    std::vector<double> us;
    const auto start = clock::now();
    while (int(us.size()) < max_runs) {
        const auto t0 = clock::now();
        f();
        const auto t1 = clock::now();
        us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        const double elapsed = std::chrono::duration<double>(t1 - start).count();
        if (int(us.size()) >= min_runs && elapsed >= min_seconds) break;
    }
    return us;
}

// The same, as the median and the minimum in microseconds.
inline Timing measure(const std::function<void()>& f, int min_runs = 5, double min_seconds = 0.3,
                      int max_runs = 1000) {
    return timing_of(sample(f, min_runs, min_seconds, max_runs));
}

// Times several ways of computing the same thing in rounds: each round runs every f once, in
// order, so a slow spell of a shared machine falls on all of them alike and their ratios stay
// meaningful (timing one after the other would put the spell on one of them only). Warms each up
// once, then runs rounds until `min_runs` rounds and `min_seconds` have passed (at most
// `max_runs`); returns the median and the minimum of each, in microseconds. With `untimed_calls`,
// each timed call follows that many untimed calls of the same f, so that it finds its data in the
// caches as it would inside a sequence of operations (the other f's evict it in between).
inline std::vector<Timing> measure_interleaved(const std::vector<std::function<void()>>& fs, int min_runs = 5,
                                               double min_seconds = 0.3, int max_runs = 1000,
                                               int untimed_calls = 0) {
    using clock = std::chrono::steady_clock;
    for (const auto& f : fs) f();
    std::vector<std::vector<double>> us(fs.size());
    const auto start = clock::now();
    for (int round = 0; round < max_runs; ++round) {
        for (size_t i = 0; i < fs.size(); ++i) {
            for (int u = 0; u < untimed_calls; ++u) fs[i]();
            const auto t0 = clock::now();
            fs[i]();
            us[i].push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
        }
        const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
        if (round + 1 >= min_runs && elapsed >= min_seconds) break;
    }
    std::vector<Timing> out;
    for (auto& u : us) out.push_back(timing_of(u));
    return out;
}

// Precision in bits of `got` against `want`: -log2 of the largest |got - want| over the slots, and
// the mean over the slots of -log2 |got - want| (Lattigo's "AVG Prec", as bench/peers/lattigo
// computes it); an exact slot counts as 60 bits.
struct Precision {
    double worst = 60, mean = 60;
};
inline Precision precision_of(const std::vector<std::complex<double>>& got, const std::vector<std::complex<double>>& want) {
    constexpr double exact = 60;
    double err = 0, sum = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        const double e = std::abs(got[i] - want[i]);
        err = std::max(err, e);
        sum += e == 0 ? exact : std::min(exact, -std::log2(e));
    }
    return {err == 0 ? exact : std::min(exact, -std::log2(err)), want.empty() ? exact : sum / double(want.size())};
}

// `count` benchmark inputs, uniform in the square [-1, 1] + [-1, 1]i, from a fixed seed (inputs
// only: never key material).
inline std::vector<std::complex<double>> random_slots(size_t count, uint64_t seed = 42) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<std::complex<double>> v(count);
    for (auto& x : v) x = {d(gen), d(gen)};
    return v;
}

// The value of the option at argv[i] (the next argument; i advances to it). A missing value ends
// the program with status 2 and a message naming the option.
inline std::string option_value(int argc, char** argv, int& i) {
    if (i + 1 >= argc) {
        std::fprintf(stderr, "missing value after %s\n", argv[i]);
        std::exit(2);
    }
    return argv[++i];
}

// "S1,S2,S4" -> {"S1", "S2", "S4"}
inline std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, sep))
        if (!item.empty()) out.push_back(item);
    return out;
}

inline std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto pos = line.find(':');
            if (pos != std::string::npos) return line.substr(pos + 2);
        }
    }
    return "unknown CPU";
}

inline std::string cpu_flags_summary() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("flags", 0) == 0) {
            std::string out;
            for (const char* f : {"avx2", "avx512f", "avx512ifma", "bmi2", "adx"})
                if (line.find(std::string(" ") + f) != std::string::npos) out += std::string(out.empty() ? "" : " ") + f;
            return out;
        }
    }
    return "";
}

inline std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

// printf-style formatting of one number, for tables.
inline std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

inline std::string json_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        o += c;
    }
    return o;
}

inline std::string machine_json() {
    std::ostringstream os;
    os << "{\"cpu\": \"" << json_escape(cpu_model()) << "\", \"hardware_threads\": " << std::thread::hardware_concurrency()
       << ", \"simd\": \"" << cpu_flags_summary() << "\", \"date_utc\": \"" << utc_now() << "\"}";
    return os.str();
}

}  // namespace oboro::bench

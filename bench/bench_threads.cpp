// Does a thread count ever slow an operation down? Times every primitive at one thread and at k
// threads (default: every hardware thread), on a quiet machine and with a busy neighbour (another
// process spinning on one core for the whole measurement), and flags any operation that is slower
// at k threads than at one by more than the tolerance. Prints a table and writes JSON and
// Markdown (docs/benchmarks/threads.md); it never fails on timings.
//
// The one- and k-thread timings are taken in alternating blocks (--blocks, each at least
// --block-seconds per thread count), so a slow spell of a shared machine falls on both alike.
// A row above the tolerance is timed again at once with twice the blocks and flagged on that
// second measurement (a shared machine's spells still reach single rows); both ratios are reported.
//
//   bench_threads [--presets S1,S2] [--threads K] [--blocks 5] [--block-seconds 0.1]
//                 [--tolerance 0.1] [--no-busy] [--ops "rotate by 1,rescale"] [--json F] [--markdown F]
//                 [--quick]
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench_util.hpp"
#include "oboro/ckks/encoder.hpp"
#include "oboro/ckks/encryptor.hpp"
#include "oboro/ckks/evaluator.hpp"
#include "oboro/ckks/keygen.hpp"
#include "oboro/util/parallel.hpp"

using namespace oboro;
using namespace oboro::ckks;
using cplx = std::complex<double>;

namespace {

struct Options {
    std::vector<std::string> presets = {"S1", "S2"};
    int threads = int(std::max(1u, std::thread::hardware_concurrency()));
    int blocks = 5;
    double block_seconds = 0.1;
    double tolerance = 0.10;
    bool busy = true, quick = false;
    std::vector<std::string> ops;  // empty: all
    std::string json, markdown;
};

struct Row {
    std::string preset, mode, op;
    bench::Timing one, many;
    double first_ratio = 0;  // the first measurement's ratio where the row was timed again, else 0
    double ratio() const { return many.median_us / one.median_us; }
    bool slower(const Options& o) const { return ratio() > 1 + o.tolerance; }
};

// Another process spinning on the last CPU while it lives: the "busy neighbour" of a shared server.
class BusyNeighbour {
public:
    BusyNeighbour() {
        pid_ = fork();
        if (pid_ == 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(int(std::thread::hardware_concurrency()) - 1, &set);
            sched_setaffinity(0, sizeof set, &set);
            volatile uint64_t x = 0;
            for (;;) x = x + 1;
        }
        if (pid_ < 0) std::perror("fork");
    }
    ~BusyNeighbour() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }
    BusyNeighbour(const BusyNeighbour&) = delete;
    BusyNeighbour& operator=(const BusyNeighbour&) = delete;

private:
    pid_t pid_ = -1;
};

// Times f at one thread and at `threads` threads in alternating blocks (see the file comment).
std::pair<bench::Timing, bench::Timing> time_one_and_many(const std::function<void()>& f, const Options& o) {
    std::vector<double> us[2];
    for (int b = 0; b < o.blocks; ++b) {
        for (int k = 0; k < 2; ++k) {
            set_num_threads(k == 0 ? 1 : o.threads);
            // the warm-up run inside sample() starts the new pool's threads and fills the workspaces
            const std::vector<double> block = bench::sample(f, 3, o.block_seconds);
            us[k].insert(us[k].end(), block.begin(), block.end());
        }
    }
    return {bench::timing_of(us[0]), bench::timing_of(us[1])};
}

void run_preset(const std::string& name, const Options& o, std::vector<Row>& rows) {
    std::fprintf(stderr, "[%s] building context and keys...\n", name.c_str());
    set_num_threads(o.threads);
    auto ctx = Context::create(Parameters::preset(name));
    KeyGenerator keygen(ctx);
    const PublicKey pk = keygen.public_key();
    const RelinKey rk = keygen.relin_key();
    const GaloisKeys gk = keygen.galois_keys({1, 2, 3, 4});
    Encoder encoder(ctx);
    Encryptor pk_encryptor(ctx, pk), sk_encryptor(ctx, keygen.secret_key());
    Decryptor decryptor(ctx, keygen.secret_key());
    Evaluator eval(ctx);

    const std::vector<cplx> v = bench::random_slots(ctx->max_slots());
    const Plaintext pt = encoder.encode(v);
    const Ciphertext a = pk_encryptor.encrypt(pt), b = pk_encryptor.encrypt(pt);
    const Ciphertext relin = eval.relinearize(eval.multiply(a, b), rk);
    Ciphertext acc = a;

    const std::vector<std::pair<const char*, std::function<void()>>> ops = {
        {"encode", [&] { (void)encoder.encode(v); }},
        {"decode", [&] { (void)encoder.decode(pt); }},
        {"encrypt (public key)", [&] { (void)pk_encryptor.encrypt(pt); }},
        {"encrypt (secret key)", [&] { (void)sk_encryptor.encrypt(pt); }},
        {"decrypt + decode", [&] { (void)decryptor.decrypt_decode(a, encoder); }},
        {"add (ct+ct)", [&] { (void)eval.add(a, b); }},
        {"add in place", [&] { eval.add_inplace(acc, b); }},
        {"ct x pt mul", [&] { (void)eval.multiply(a, pt); }},
        {"tensor (ct x ct, no relin)", [&] { (void)eval.multiply(a, b); }},
        {"mul + relin", [&] { (void)eval.relinearize(eval.multiply(a, b), rk); }},
        {"rescale", [&] { (void)eval.rescale(relin); }},
        {"mul + relin + rescale", [&] { (void)eval.multiply_relin_rescale(a, b, rk); }},
        {"rotate by 1", [&] { (void)eval.rotate(a, 1, gk); }},
        {"4 hoisted rotations", [&] { (void)eval.rotate_many(a, {1, 2, 3, 4}, gk); }},
        {"relinearization key", [&] { (void)keygen.relin_key(); }},
    };
    const size_t op_count = o.quick ? 3 : ops.size();
    for (const char* mode : {"quiet", "busy neighbour"}) {
        const bool busy = std::strcmp(mode, "quiet") != 0;
        if (busy && (!o.busy || o.threads < 2)) continue;
        std::unique_ptr<BusyNeighbour> neighbour;
        if (busy) neighbour = std::make_unique<BusyNeighbour>();
        for (size_t i = 0; i < op_count; ++i) {
            if (!o.ops.empty() && std::find(o.ops.begin(), o.ops.end(), ops[i].first) == o.ops.end()) continue;
            std::fprintf(stderr, "[%s, %s] %s...\n", name.c_str(), mode, ops[i].first);
            const auto [one, many] = time_one_and_many(ops[i].second, o);
            rows.push_back({name, mode, ops[i].first, one, many});
            Row& r = rows.back();
            if (r.slower(o)) {
                std::fprintf(stderr, "[%s, %s] %s: %.2fx, timed again with %d blocks...\n", name.c_str(), mode,
                             ops[i].first, r.ratio(), 2 * o.blocks);
                Options twice = o;
                twice.blocks = 2 * o.blocks;
                r.first_ratio = r.ratio();
                std::tie(r.one, r.many) = time_one_and_many(ops[i].second, twice);
            }
            std::printf("%-4s %-15s %-28s %10.1f us %10.1f us  %5.2fx%s\n", name.c_str(), mode, ops[i].first,
                        r.one.median_us, r.many.median_us, r.ratio(), r.slower(o) ? "  SLOWER" : "");
            std::fflush(stdout);
        }
    }
    set_num_threads(o.threads);
}

void write_json(const std::string& path, const std::vector<Row>& rows, const Options& o) {
    std::ofstream out = bench::output_file(path);
    out << "{\n  \"benchmark\": \"bench_threads\",\n  \"machine\": " << bench::machine_json()
        << ",\n  \"threads\": " << o.threads << ",\n  \"tolerance\": " << o.tolerance
        << ",\n  \"unit\": \"microseconds\",\n  \"results\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        out << "    {\"preset\": \"" << r.preset << "\", \"mode\": \"" << r.mode << "\", \"op\": \"" << r.op
            << "\", \"one_thread_us\": " << r.one.median_us << ", \"threads_us\": " << r.many.median_us
            << ", \"ratio\": " << r.ratio() << ", \"first_ratio\": " << (r.first_ratio > 0 ? std::to_string(r.first_ratio) : "null")
            << ", \"slower\": " << (r.slower(o) ? "true" : "false")
            << ", \"runs\": [" << r.one.runs << ", " << r.many.runs << "]}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    out << "  ]\n}\n";
}

void write_markdown(const std::string& path, const std::vector<Row>& rows, const Options& o) {
    std::ofstream out = bench::output_file(path);
    size_t slower = 0;
    size_t again = 0;
    for (const Row& r : rows) slower += r.slower(o), again += r.first_ratio > 0;
    out << "# Threads: never slower than one\n\nGenerated by `bench/bench_threads` on " << bench::utc_now() << ": "
        << bench::cpu_model() << " (" << std::thread::hardware_concurrency() << " hardware threads).\n\n"
        << "Each operation is timed at one thread and at " << o.threads
        << " threads in alternating blocks (" << o.blocks << " blocks of at least " << o.block_seconds
        << " s per thread count; medians over all runs). *Busy neighbour*: another process spins on one "
           "core for the whole measurement, as on a shared server. Ratio: the time at "
        << o.threads << " threads over the time at one; an operation is flagged when it is above "
        << 1 + o.tolerance << " in a second measurement with " << 2 * o.blocks
        << " blocks, taken at once for every row above it in the first (the first ratio in brackets; "
        << again << " rows were timed again). The thread policy is described in [../architecture.md](../architecture.md#threads).\n\n"
        << "**" << slower << " of " << rows.size() << " rows flagged.**\n\n"
        << "| preset | machine | op | 1 thread (us) | " << o.threads << " threads (us) | ratio | |\n"
        << "|---|---|---|---|---|---|---|\n";
    char buf[64];
    for (const Row& r : rows) {
        out << "| " << r.preset << " | " << r.mode << " | " << r.op << " | ";
        std::snprintf(buf, sizeof buf, "%.1f | %.1f | %.2f", r.one.median_us, r.many.median_us, r.ratio());
        out << buf;
        if (r.first_ratio > 0) std::snprintf(buf, sizeof buf, " (%.2f)", r.first_ratio), out << buf;
        out << " | " << (r.slower(o) ? "slower" : "") << " |\n";
    }
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto next = [&] { return bench::option_value(argc, argv, i); };
        if (arg == "--presets") o.presets = bench::split(next(), ',');
        else if (arg == "--threads") o.threads = std::max(1, std::stoi(next()));
        else if (arg == "--blocks") o.blocks = std::max(1, std::stoi(next()));
        else if (arg == "--block-seconds") o.block_seconds = std::stod(next());
        else if (arg == "--tolerance") o.tolerance = std::stod(next());
        else if (arg == "--no-busy") o.busy = false;
        else if (arg == "--ops") o.ops = bench::split(next(), ',');
        else if (arg == "--json") o.json = next();
        else if (arg == "--markdown") o.markdown = next();
        else if (arg == "--quick") {
            o.quick = true;
            o.presets = {"S1"};
            o.blocks = 1;
            o.block_seconds = 0.01;
        } else if (arg == "--help" || arg == "-h") {
            std::printf("usage: %s [--presets S1,S2] [--threads K] [--blocks B] [--block-seconds S] [--tolerance T]"
                        " [--no-busy] [--ops NAME,NAME] [--json FILE] [--markdown FILE] [--quick]\n",
                        argv[0]);
            return 0;
        } else {
            std::fprintf(stderr, "unknown argument %s (try --help)\n", arg.c_str());
            return 2;
        }
    }
    bench::prepare_outputs({o.json, o.markdown});
    std::printf("oboro bench_threads: %s, 1 against %d threads, medians; flagged when slower by more than %.0f%%\n",
                bench::cpu_model().c_str(), o.threads, 100 * o.tolerance);
    std::printf("%-4s %-15s %-28s %13s %13s  %s\n", "", "machine", "op", "1 thread", "k threads", "ratio");
    std::vector<Row> rows;
    for (const auto& p : o.presets) run_preset(p, o, rows);
    size_t slower = 0;
    for (const Row& r : rows) slower += r.slower(o);
    std::printf("%zu of %zu rows slower at %d threads than at one\n", slower, rows.size(), o.threads);
    if (!o.json.empty()) write_json(o.json, rows, o), std::printf("wrote %s\n", o.json.c_str());
    if (!o.markdown.empty()) write_markdown(o.markdown, rows, o), std::printf("wrote %s\n", o.markdown.c_str());
    return 0;
}

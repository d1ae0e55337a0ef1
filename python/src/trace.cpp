// The arguments of rotate-and-sum (Ciphertext.sum and Batch.sum, arithmetic.cpp) and the key list
// for key generation (Context.sum_rotations). The algorithm is in src/oboro/ckks/trace.cpp; this
// file maps Python arguments onto it.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "oboro/ckks/trace.hpp"
#include "oboro/util/error.hpp"
#include "state.hpp"

namespace oboro::py {

using namespace nb::literals;

namespace {
SumStrategy parse_strategy(const std::string& s, const char* op) {
    if (s == "doubling") return SumStrategy::doubling;
    if (s == "hoisted") return SumStrategy::hoisted;
    if (s == "auto") return SumStrategy::automatic;
    raise<ValueError>(op, ": strategy '", s, "' is not one of 'doubling', 'hoisted', 'auto'");
}

}  // namespace

// The rotate-and-sum that the keyword arguments describe (exactly one of block / stride+count /
// nothing = all slots).
SumSpec parse_spec(const char* op, size_t slots, std::optional<size_t> block, std::optional<int64_t> stride,
                   std::optional<size_t> count) {
    if (block && (stride || count))
        raise<ValueError>(op, ": give either block or stride/count, not both (block = ", *block, ")");
    if (block) {
        if (*block == 0 || *block > slots || slots % *block != 0)
            raise<ValueError>(op, ": block = ", *block, " must be a power of two that divides the ", slots, " slots");
        return SumSpec::blocks(*block);
    }
    if (stride || count) {
        const int64_t s = stride.value_or(1);
        const size_t c = count ? *count : (s == 0 ? 0 : slots / size_t(s < 0 ? -s : s));
        return SumSpec::strided(s, c);
    }
    return SumSpec::total(slots);
}

// (strategy, h) for the core: `hoisted` without h takes the cost model's h; `auto` takes no h.
std::pair<SumStrategy, int> parse_h(const char* op, const Context& ctx, int level, const SumSpec& spec,
                                    const std::string& strategy, std::optional<int> h) {
    const SumStrategy st = parse_strategy(strategy, op);
    if (h && st != SumStrategy::hoisted)
        raise<ValueError>(op, ": h = ", *h, " applies to strategy='hoisted' only (got strategy='", strategy, "')");
    if (st == SumStrategy::hoisted && !h) return {st, spec.rounds == 0 ? 1 : choose_iterations(ctx, level, spec.rounds)};
    return {st, h.value_or(0)};
}

namespace {

std::vector<int64_t> sum_rotations(const PyContext& self, std::optional<size_t> slots, std::optional<size_t> block,
                                   std::optional<int64_t> stride, std::optional<size_t> count,
                                   const std::string& strategy, std::optional<int> h) {
    const Context& ctx = *self.st->ctx;
    const size_t n = slots.value_or(ctx.max_slots());
    const SumSpec spec = parse_spec("sum_rotations", n, block, stride, count);
    const auto [st, hh] = parse_h("sum_rotations", ctx, ctx.max_level(), spec, strategy, h);
    return sum_rotation_steps(ctx, spec, n, st, hh);
}

}  // namespace

const char* const kSumDoc =
    "Rotate-and-sum (a trace-type function), one key switch per round or hoisted.\n\n"
    "* sum(): every slot holds the sum of all `slots` values (padding slots are zero).\n"
    "* sum(block=k): the FIRST slot of each block of k consecutive slots holds the block's sum; the\n"
    "  other slots hold sums of windows that straddle two blocks (use decrypt(...)[::k] on a 1-D\n"
    "  ciphertext). k is a power of two dividing the slots.\n"
    "* sum(stride=s, count=c): slot t holds x[t] + x[t+s] + ... + x[t+(c-1)s] (cyclic); count defaults\n"
    "  to slots/|s|, c a power of two with |s|*c <= slots.\n\n"
    "strategy: 'doubling' (log2 of the terms key switches), 'hoisted' (Ishimaki-Yamana unrolled\n"
    "algorithm with h iterations, each one ModUp and one ModDown for 2^r - 1 rotations; h defaults to\n"
    "the cost model's choice), or 'auto' (the cheapest h whose keys the context has). The keys each\n"
    "needs: Context.sum_rotations(...). Automatic mode relinearizes first. Consumes no level.";


void add_trace_methods(nb::class_<PyContext>& ctx) {
    ctx.def("sum_rotations", &sum_rotations, "slots"_a = nb::none(), "block"_a = nb::none(), "stride"_a = nb::none(),
            "count"_a = nb::none(), "strategy"_a = "auto", "h"_a = nb::none(),
            nb::sig("def sum_rotations(self, slots: int | None = None, block: int | None = None, "
                    "stride: int | None = None, count: int | None = None, strategy: str = 'auto', "
                    "h: int | None = None) -> list[int]"),
            "The rotation steps whose keys Ciphertext.sum(...) needs with these arguments, for "
            "keygen(rotations=...). slots: the ciphertexts' slot count (default: all slots of the context). "
            "'auto' lists the keys of the cost model's h at the top level.");
}

}  // namespace oboro::py

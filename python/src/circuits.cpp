// The circuit methods of oboro.Ciphertext and oboro.Batch (polynomials, 1/x and square roots,
// integer powers) and the module functions oboro.functions builds on (sign and comparisons among them): argument conversion over
// the C++ algorithms (src/oboro/algorithms/polynomial_evaluator.hpp, functions.hpp), which check
// levels and keys before any work. The evaluation runs without the GIL.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "oboro/algorithms/functions.hpp"
#include "oboro/algorithms/polynomial_evaluator.hpp"
#include "oboro/algorithms/sign.hpp"
#include "oboro/util/error.hpp"
#include "operation.hpp"

using namespace nanobind::literals;

namespace oboro::py {

namespace {

using Interval = std::pair<double, double>;

algorithms::Polynomial polynomial_of(nb::handle coeffs, const std::string& basis, Interval interval) {
    algorithms::Polynomial p;
    if (basis == "power") p.basis = algorithms::PolynomialBasis::power;
    else if (basis == "chebyshev") p.basis = algorithms::PolynomialBasis::chebyshev;
    else raise<ValueError>("polyval: basis must be 'power' or 'chebyshev', not '", basis, "'");
    nb::object arr = numpy().attr("asarray")(coeffs);
    if (nb::cast<std::string>(arr.attr("dtype").attr("kind")) == "c")
        raise<ValueError>("polyval: the coefficients must be real (complex coefficients are not supported)");
    p.coeffs = nb::cast<std::vector<double>>(arr.attr("astype")("float64").attr("ravel")().attr("tolist")());
    if (p.coeffs.empty()) raise<ValueError>("polyval: no coefficients");
    p.lo = interval.first;
    p.hi = interval.second;
    return p;
}

template <typename Py>
Py polyval(const Py& self, nb::handle coeffs, const std::string& basis, Interval interval, std::optional<int> level,
           std::optional<double> scale) {
    const algorithms::Polynomial p = polynomial_of(coeffs, basis, interval);
    return unary(self, [&](const Op<Py>& op, const auto& a) {
        return algorithms::PolynomialEvaluator(algorithms::CountedOps(op.eval, nullptr)).evaluate(a, p, level, scale);
    });
}

enum class Root { inverse, inverse_sqrt, sqrt };

algorithms::NewtonPlan root_plan(Root root, Interval interval, double bits) {
    switch (root) {
        case Root::inverse: return algorithms::plan_inverse(interval.first, interval.second, bits);
        case Root::inverse_sqrt: return algorithms::plan_inverse_sqrt(interval.first, interval.second, bits);
        default: return algorithms::plan_square_root(interval.first, interval.second, bits);
    }
}

template <typename Py> Py newton(const Py& self, Root root, Interval interval, double bits) {
    const auto plan = root_plan(root, interval, bits);
    return unary(self, [&](const Op<Py>& op, const auto& a) {
        switch (root) {
            case Root::inverse: return algorithms::inverse(op.autoeval, a, plan);
            case Root::inverse_sqrt: return algorithms::inverse_sqrt(op.autoeval, a, plan);
            default: return algorithms::square_root(op.autoeval, a, plan);
        }
    });
}

template <typename Py> Py power(const Py& self, int64_t k) {
    return unary(self, [k](const Op<Py>& op, const auto& a) { return algorithms::integer_power(op.autoeval, a, k); });
}

// The sign plans made so far (a plan runs Remez exchanges: up to a second), by (bound, gap, bits).
std::shared_ptr<const algorithms::SignPlan> sign_plan(double bound, double gap, double bits) {
    static std::mutex mutex;
    static std::map<std::tuple<double, double, double>, std::shared_ptr<const algorithms::SignPlan>> plans;
    std::lock_guard<std::mutex> lock(mutex);
    auto& p = plans[{bound, gap, bits}];
    if (!p) p = std::make_shared<const algorithms::SignPlan>(algorithms::plan_sign(bound, gap, bits));
    return p;
}

enum class Compare { sign, abs, max, min, greater };

// One comparison on Ciphertexts or on Batches (b: the second operand of max, min and greater).
template <typename Py> Py compare(Compare kind, const Py& a, const Py* b, double bound, double gap, double bits) {
    const char* names[] = {"sign", "abs", "maximum", "minimum", "greater"};
    const char* name = names[int(kind)];
    if (b) {
        if (b->shape != a.shape)
            raise<oboro::ValueError>(name, ": the operands' elements have different shapes ", shape_str(a.shape), " and ",
                                     shape_str(b->shape));
        check_same_keys(*a.st, *b->st, name);
    }
    const auto plan = sign_plan(bound, gap, bits);
    if (a.is_complex || (b && b->is_complex))
        raise<oboro::ValueError>(name, ": defined for real values (the operand is complex)");
    return unary(a, [&](const Op<Py>& op, const auto& x) {
        switch (kind) {
            case Compare::sign: return algorithms::sign(op.autoeval, x, *plan);
            case Compare::abs: return algorithms::absolute(op.autoeval, x, *plan);
            case Compare::max: return algorithms::maximum(op.autoeval, x, b->core(), *plan);
            case Compare::min: return algorithms::minimum(op.autoeval, x, b->core(), *plan);
            default: return algorithms::greater_than(op.autoeval, x, b->core(), *plan);
        }
    });
}

template <typename Py> void def_comparisons(nb::module_& m, const std::string& type_name) {
    const std::string t = type_name;
    auto sig = [&](const std::string& name, const std::string& args) {
        return signature("module." + name + "." + t, "def " + name + "(" + args + ", bound: float, gap: float, bits: float) -> " + t);
    };
    m.def("sign", [](const Py& x, double bound, double gap, double bits) { return compare(Compare::sign, x, (const Py*)nullptr, bound, gap, bits); },
          "x"_a, "bound"_a, "gap"_a, "bits"_a, sig("sign", "x: " + t));
    m.def("absolute", [](const Py& x, double bound, double gap, double bits) { return compare(Compare::abs, x, (const Py*)nullptr, bound, gap, bits); },
          "x"_a, "bound"_a, "gap"_a, "bits"_a, sig("absolute", "x: " + t));
    m.def("maximum", [](const Py& a, const Py& b, double bound, double gap, double bits) { return compare(Compare::max, a, &b, bound, gap, bits); },
          "a"_a, "b"_a, "bound"_a, "gap"_a, "bits"_a, sig("maximum", "a: " + t + ", b: " + t));
    m.def("minimum", [](const Py& a, const Py& b, double bound, double gap, double bits) { return compare(Compare::min, a, &b, bound, gap, bits); },
          "a"_a, "b"_a, "bound"_a, "gap"_a, "bits"_a, sig("minimum", "a: " + t + ", b: " + t));
    m.def("greater", [](const Py& a, const Py& b, double bound, double gap, double bits) { return compare(Compare::greater, a, &b, bound, gap, bits); },
          "a"_a, "b"_a, "bound"_a, "gap"_a, "bits"_a, sig("greater", "a: " + t + ", b: " + t));
}

nb::dict plan_dict(const std::vector<double>& coeffs, const std::string& basis, Interval interval, int level) {
    const algorithms::Polynomial p = polynomial_of(nb::cast(coeffs), basis, interval);
    const auto plan = algorithms::plan_polynomials({p}, level);
    nb::dict d;
    d["depth"] = plan.depth();
    d["products"] = plan.products;
    d["relinearizations"] = plan.relinearizations;
    d["scalar_products"] = plan.scalar_products;
    d["baby_steps"] = 1 << plan.baby_log;
    d["powers"] = plan.powers;
    return d;
}

const char* kPolyvalDoc =
    "p(self) slot by slot for the polynomial with these real coefficients, lowest degree first: "
    "sum c_i x^i (basis='power') or sum c_i T_i(u) (basis='chebyshev', T_i the Chebyshev polynomials "
    "and u = (2x - lo - hi) / (hi - lo) the map of interval=(lo, hi) onto [-1, 1]). Baby-step "
    "giant-step Paterson-Stockmeyer: ceil(log2(degree + 1)) levels (one more for the map when hi - "
    "lo != 2), O(sqrt(degree)) ciphertext products, odd and even polynomials at their lower cost. The "
    "result lands exactly on `scale` (default: the standard scale) at `level` (default: the lowest "
    "level the depth leaves). Every slot, unused ones included, must lie in the interval: outside "
    "it a Chebyshev series grows like T_degree. LevelMismatch (saying how many levels are needed) "
    "before any work when there are too few; MissingKey without a relinearization key. Works in both "
    "modes.";

}  // namespace

template <typename Py> void add_circuit_methods(nb::class_<Py>& cls, const char* type_name) {
    auto sig = [&](const std::string& method, const std::string& text) {
        return signature(std::string(type_name) + "." + method, text);
    };
    const std::string t = type_name;
    cls.def("polyval", &polyval<Py>, "coeffs"_a, "basis"_a = "power", "interval"_a = Interval{-1.0, 1.0},
            "level"_a = nb::none(), "scale"_a = nb::none(),
            sig("polyval", "def polyval(self, coeffs: numpy.typing.ArrayLike, basis: str = 'power', interval: "
                           "tuple[float, float] = (-1.0, 1.0), level: int | None = None, scale: float | None = "
                           "None) -> " + t),
            kPolyvalDoc)
        .def("inverse", [](const Py& s, Interval iv, double bits) { return newton(s, Root::inverse, iv, bits); },
             "interval"_a, "bits"_a = 24.0,
             sig("inverse", "def inverse(self, interval: tuple[float, float], bits: float = 24.0) -> " + t),
             "1/x for every slot in interval=(lo, hi), 0 < lo < hi: a Chebyshev approximation refined by Newton's "
             "iterations y <- y (2 - x y), with the fewest levels that reach `bits` bits of relative precision "
             "(oboro.functions.plan_inverse shows the plan). Slots outside the interval give wrong values (above "
             "about 2 hi the iterations diverge).")
        .def("inverse_sqrt", [](const Py& s, Interval iv, double bits) { return newton(s, Root::inverse_sqrt, iv, bits); },
             "interval"_a, "bits"_a = 24.0,
             sig("inverse_sqrt", "def inverse_sqrt(self, interval: tuple[float, float], bits: float = 24.0) -> " + t),
             "1/sqrt(x) on interval=(lo, hi), 0 < lo < hi: a Chebyshev approximation and Newton's iterations "
             "y <- y (3/2 - x y^2 / 2).")
        .def("sqrt", [](const Py& s, Interval iv, double bits) { return newton(s, Root::sqrt, iv, bits); },
             "interval"_a, "bits"_a = 24.0,
             sig("sqrt", "def sqrt(self, interval: tuple[float, float], bits: float = 24.0) -> " + t),
             "sqrt(x) on interval=(lo, hi), 0 < lo < hi: the Chebyshev interpolant of sqrt where one reaches `bits` "
             "in no more levels than x * inverse_sqrt(x) (one level more than inverse_sqrt), else the latter.")
        .def("__pow__", &power<Py>, "k"_a, sig("__pow__", "def __pow__(self, k: int, /) -> " + t),
             "self ** k for an integer k >= 1: ceil(log2 k) levels (x^(2^j) by squaring, the least depth possible).")
        .def("square", [](const Py& s) { return power(s, 2); }, "self * self (one level).");
}

template void add_circuit_methods(nb::class_<PyCiphertext>&, const char*);
template void add_circuit_methods(nb::class_<PyBatch>&, const char*);

void register_circuits(nb::module_& m) {
    m.def(
        "chebyshev_interpolant",
        [](const std::function<double(double)>& f, Interval interval, int degree) {
            return algorithms::chebyshev_interpolant(f, interval.first, interval.second, degree).coeffs;
        },
        "f"_a, "interval"_a, "degree"_a,
        "The Chebyshev coefficients (lowest first) of the interpolant of f at the degree + 1 Chebyshev nodes "
        "of interval=(lo, hi): near-minimax for smooth f. f is called once per node with a float. Coefficients "
        "below 2^-50 of the largest are zero, so an odd or even f on a symmetric interval gives an odd or even "
        "series.");
    m.def(
        "chebyshev_max_error",
        [](const std::vector<double>& coeffs, const std::function<double(double)>& f, Interval interval, int samples) {
            const algorithms::Polynomial p{coeffs, algorithms::PolynomialBasis::chebyshev, interval.first, interval.second};
            return algorithms::max_error(p, f, interval.first, interval.second, samples);
        },
        "coeffs"_a, "f"_a, "interval"_a, "samples"_a = 4097,
        "max |p(x) - f(x)| over `samples` equally spaced points of interval=(lo, hi), ends included, for the "
        "Chebyshev series p with these coefficients on that interval (double precision).");
    m.def("polynomial_plan", &plan_dict, "coeffs"_a, "basis"_a = "power", "interval"_a = Interval{-1.0, 1.0},
          "level"_a,
          "What polyval does from `level` (no work): depth, ciphertext products, their relinearizations (key "
          "switches: products summed before a rescale share one), scalar products, the baby-step size and the "
          "powers it computes.");
    def_comparisons<PyCiphertext>(m, "Ciphertext");
    def_comparisons<PyBatch>(m, "Batch");
    m.def(
        "sign_plan",
        [](double bound, double gap, double bits) {
            const auto p = sign_plan(bound, gap, bits);
            nb::dict d;
            d["degrees"] = p->degrees();
            d["depth"] = p->depth();
            d["products"] = p->products;
            d["error"] = p->error;
            d["description"] = p->describe();
            return d;
        },
        "bound"_a, "gap"_a, "bits"_a,
        "The plan of the sign and the comparisons (no encrypted work): the degrees of the composite minimax "
        "polynomials, the depth, the ciphertext products and the error max |p(x) - sign(x)| for gap <= |x| <= bound "
        "(double precision). Plans are made once per (bound, gap, bits) and kept.");
    m.def(
        "newton_plan",
        [](const std::string& which, Interval interval, double bits) {
            if (which != "inverse" && which != "inverse_sqrt" && which != "sqrt")
                raise<ValueError>("newton_plan: which must be 'inverse', 'inverse_sqrt' or 'sqrt', not '", which, "'");
            const auto p = root_plan(which == "inverse" ? Root::inverse
                                     : which == "sqrt"  ? Root::sqrt
                                                        : Root::inverse_sqrt,
                                     interval, bits);
            nb::dict d;
            d["times_x"] = p.times_x;
            d["degree"] = p.initial.degree();
            d["iterations"] = p.iterations;
            d["depth"] = p.depth();
            d["initial_error"] = p.initial_error;
            d["final_error"] = p.final_error;
            return d;
        },
        "which"_a, "interval"_a, "bits"_a = 24.0,
        "The plan of x.inverse(...), x.inverse_sqrt(...) or x.sqrt(...) (no work): the initial degree, the Newton "
        "iterations, the depth, the relative error before and after them, and times_x (sqrt as x / sqrt(x)).");
}

}  // namespace oboro::py

// Typed errors. Every misuse of the library raises one of these with a message that names the
// operation and the operand (with its level and scale where that matters). Nothing is ever
// silently wrong: a check that fails throws before any output is written.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace oboro {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Invalid, malformed or insecure parameters.
class ParameterError : public Error { using Error::Error; };
// An argument that is out of range or of the wrong size (too many values, bad rotation step ...).
class ValueError : public Error { using Error::Error; };
// Operands at different levels, or an operation impossible at the operand's level.
class LevelMismatch : public Error { using Error::Error; };
// Operands whose scales differ.
class ScaleMismatch : public Error { using Error::Error; };
// Objects that belong to different parameter sets.
class ContextMismatch : public Error { using Error::Error; };
// A relinearization, Galois or other key that the operation needs is not there.
class MissingKey : public Error { using Error::Error; };
// Bad, truncated or hostile serialized data.
class SerializationError : public Error { using Error::Error; };
// A decrypted result whose coefficients reach the edge of the modulus: it has most likely wrapped
// around it (values too large for their scale, or too few bits left at the ciphertext's level).
class ModulusOverflow : public Error { using Error::Error; };

namespace detail {
template <typename... Args> std::string concat(const Args&... args) {
    std::ostringstream os;
    (os << ... << args);
    return os.str();
}
}  // namespace detail

template <typename E, typename... Args> [[noreturn]] void raise(const Args&... args) {
    throw E(detail::concat(args...));
}

}  // namespace oboro

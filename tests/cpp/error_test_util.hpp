// Helpers for tests of error handling: the exception type and the words its message must contain.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <typeinfo>
#include <vector>

namespace oboro::test {

// Runs f, which must throw E; returns what() ("" after recording a failure otherwise).
template <typename E, typename F> std::string message_of(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected " << typeid(E).name() << ", got " << typeid(e).name() << ": " << e.what();
        return "";
    }
    ADD_FAILURE() << "expected " << typeid(E).name() << ", nothing was thrown";
    return "";
}

inline void expect_mentions(const std::string& msg, const std::vector<std::string>& parts) {
    for (const auto& p : parts)
        EXPECT_NE(msg.find(p), std::string::npos) << "message does not mention \"" << p << "\": " << msg;
}

}  // namespace oboro::test

// EXPECT_THROW for the type, then the message must contain every string that follows.
#define EXPECT_ERROR(E, stmt, ...)                                                    \
    do {                                                                              \
        SCOPED_TRACE(#stmt);                                                          \
        EXPECT_THROW(stmt, E);                                                        \
        ::oboro::test::expect_mentions(::oboro::test::message_of<E>([&] { stmt; }), {__VA_ARGS__}); \
    } while (0)

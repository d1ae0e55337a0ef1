#include "oboro/io/checksum.hpp"

#include <bit>
#include <cstring>

namespace oboro::io {

namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kP3 = 0x165667B19E3779F9ull;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ull;

static_assert(std::endian::native == std::endian::little, "the serialization format is little-endian");

uint64_t read64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
uint32_t read32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

uint64_t round(uint64_t acc, uint64_t input) {
    acc += input * kP2;
    acc = std::rotl(acc, 31);
    return acc * kP1;
}

uint64_t merge_round(uint64_t acc, uint64_t v) {
    acc ^= round(0, v);
    return acc * kP1 + kP4;
}

}  // namespace

uint64_t xxh64(const void* data, size_t len, uint64_t seed) {
    const auto* p = static_cast<const uint8_t*>(data);
    const uint8_t* const end = p + len;
    uint64_t acc;
    if (len >= 32) {
        // Four independent lanes over 32-byte stripes (the reason it runs at memory speed).
        uint64_t v1 = seed + kP1 + kP2, v2 = seed + kP2, v3 = seed, v4 = seed - kP1;
        const uint8_t* const limit = end - 32;
        do {
            v1 = round(v1, read64(p));
            v2 = round(v2, read64(p + 8));
            v3 = round(v3, read64(p + 16));
            v4 = round(v4, read64(p + 24));
            p += 32;
        } while (p <= limit);
        acc = std::rotl(v1, 1) + std::rotl(v2, 7) + std::rotl(v3, 12) + std::rotl(v4, 18);
        acc = merge_round(acc, v1);
        acc = merge_round(acc, v2);
        acc = merge_round(acc, v3);
        acc = merge_round(acc, v4);
    } else {
        acc = seed + kP5;
    }
    acc += uint64_t(len);
    for (; p + 8 <= end; p += 8) {
        acc ^= round(0, read64(p));
        acc = std::rotl(acc, 27) * kP1 + kP4;
    }
    if (p + 4 <= end) {
        acc ^= uint64_t(read32(p)) * kP1;
        acc = std::rotl(acc, 23) * kP2 + kP3;
        p += 4;
    }
    for (; p < end; ++p) {
        acc ^= uint64_t(*p) * kP5;
        acc = std::rotl(acc, 11) * kP1;
    }
    // Final avalanche: every input bit affects every output bit.
    acc ^= acc >> 33;
    acc *= kP2;
    acc ^= acc >> 29;
    acc *= kP3;
    acc ^= acc >> 32;
    return acc;
}

}  // namespace oboro::io

#include "oboro/io/byte_stream.hpp"

#include <bit>

#include "oboro/util/error.hpp"

namespace oboro::io {

unsigned residue_bits(uint64_t q) { return q <= 1 ? 1 : unsigned(std::bit_width(q - 1)); }

size_t packed_size(size_t n, unsigned bits) { return (n * bits + 7) / 8; }

void Writer::str(const std::string& s) {
    if (s.size() > 0xffff) raise<SerializationError>("serialize: a string of ", s.size(), " bytes exceeds 65535");
    u16(uint16_t(s.size()));
    raw(s.data(), s.size());
}

void Writer::packed(const uint64_t* values, size_t n, unsigned bits) {
    const size_t start = out_.size(), bytes = packed_size(n, bits);
    out_.resize(start + bytes + 8);  // 8 bytes of slack: whole words are stored, then trimmed
    uint8_t* dst = out_.data() + start;
    // A 128-bit accumulator holds the bits not yet stored; whole 64-bit words leave it.
    unsigned __int128 acc = 0;
    unsigned filled = 0;
    for (size_t i = 0; i < n; ++i) {
        acc |= (unsigned __int128)values[i] << filled;
        filled += bits;
        if (filled >= 64) {
            const uint64_t word = uint64_t(acc);
            std::memcpy(dst, &word, 8);
            dst += 8;
            acc >>= 64;
            filled -= 64;
        }
    }
    const uint64_t word = uint64_t(acc);
    std::memcpy(dst, &word, 8);
    out_.resize(start + bytes);
}

void Reader::fail(const std::string& message) const {
    raise<SerializationError>("deserialize ", what_, ": ", message);
}

void Reader::need(size_t len, const char* field) const {
    if (len > remaining())
        fail(detail::concat("truncated data: ", field, " needs ", len, " bytes at offset ", base_ + pos_, " but only ",
                            remaining(), " are left"));
}

uint8_t Reader::u8(const char* field) {
    need(1, field);
    return data_[pos_++];
}
uint16_t Reader::u16(const char* field) {
    uint16_t v;
    raw(&v, 2, field);
    return v;
}
uint32_t Reader::u32(const char* field) {
    uint32_t v;
    raw(&v, 4, field);
    return v;
}
uint64_t Reader::u64(const char* field) {
    uint64_t v;
    raw(&v, 8, field);
    return v;
}
int32_t Reader::i32(const char* field) {
    int32_t v;
    raw(&v, 4, field);
    return v;
}
double Reader::f64(const char* field) {
    double v;
    raw(&v, 8, field);
    return v;
}

void Reader::raw(void* out, size_t len, const char* field) {
    need(len, field);
    std::memcpy(out, data_.data() + pos_, len);
    pos_ += len;
}

std::string Reader::str(const char* field, size_t max_len) {
    const size_t len = u16(field);
    if (len > max_len) fail(detail::concat(field, " has ", len, " bytes, more than the limit of ", max_len));
    need(len, field);
    std::string s(reinterpret_cast<const char*>(data_.data() + pos_), len);
    pos_ += len;
    return s;
}

ByteView Reader::view(size_t len, const char* field) {
    need(len, field);
    ByteView v = data_.subspan(pos_, len);
    pos_ += len;
    return v;
}

void Reader::packed(uint64_t* out, size_t n, uint64_t q, const char* field) {
    const unsigned bits = residue_bits(q);
    const size_t bytes = packed_size(n, bits);
    need(bytes, field);
    const uint8_t* src = data_.data() + pos_;
    const uint8_t* const src_end = src + bytes;
    const uint64_t mask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    unsigned __int128 acc = 0;
    unsigned filled = 0;
    uint64_t bad = 0;  // OR of the out-of-range flags: one branch at the end, not per value
    size_t first_bad = n;
    for (size_t i = 0; i < n; ++i) {
        if (filled < bits) {
            // Refill with up to 8 bytes (fewer at the very end of the field).
            uint64_t word = 0;
            const size_t take = std::min<size_t>(8, size_t(src_end - src));
            std::memcpy(&word, src, take);
            src += take;
            acc |= (unsigned __int128)word << filled;
            filled += unsigned(8 * take);
        }
        const uint64_t v = uint64_t(acc) & mask;
        acc >>= bits;
        filled -= bits;
        out[i] = v;
        if (v >= q && first_bad == n) first_bad = i;
        bad |= uint64_t(v >= q);
    }
    if (bad)
        fail(detail::concat(field, ": value ", out[first_bad], " at index ", first_bad, " is not below the modulus ", q,
                            " (corrupted or written for other parameters)"));
    pos_ += bytes;
}

void Reader::expect_end() {
    if (!at_end()) fail(detail::concat(remaining(), " unexpected bytes after the end of the data (offset ", base_ + pos_, ")"));
}

}  // namespace oboro::io

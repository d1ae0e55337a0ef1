// Little-endian byte writer and bounds-checked reader for the serialization format, including
// the bit-packed storage of RNS limbs (each residue mod q stored in bit_width(q) bits).
//
// The Reader never reads past its end: every read first checks the bytes left and throws
// SerializationError naming what was being read, at which offset, and how much was missing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace oboro::io {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;

// Bits needed to store any residue mod q (values 0 .. q-1).
unsigned residue_bits(uint64_t q);
// Bytes of n residues packed at `bits` bits each.
size_t packed_size(size_t n, unsigned bits);

class Writer {
public:
    explicit Writer(Bytes& out) : out_(out) {}

    size_t position() const { return out_.size(); }
    void reserve_more(size_t bytes) { out_.reserve(out_.size() + bytes); }

    void u8(uint8_t v) { out_.push_back(v); }
    void u16(uint16_t v) { raw(&v, 2); }
    void u32(uint32_t v) { raw(&v, 4); }
    void u64(uint64_t v) { raw(&v, 8); }
    void i32(int32_t v) { raw(&v, 4); }
    void f64(double v) { raw(&v, 8); }
    void raw(const void* data, size_t len) {
        const auto* p = static_cast<const uint8_t*>(data);
        out_.insert(out_.end(), p, p + len);
    }
    // A string of at most 65535 bytes, with its length.
    void str(const std::string& s);
    // n residues (each < 2^bits) packed at `bits` bits each, little-endian bit order.
    void packed(const uint64_t* values, size_t n, unsigned bits);

    // Overwrites 8 bytes at `pos` (for sizes known only at the end of a record).
    void patch_u64(size_t pos, uint64_t v) { std::memcpy(out_.data() + pos, &v, 8); }
    uint8_t* at(size_t pos) { return out_.data() + pos; }

private:
    Bytes& out_;
};

class Reader {
public:
    // `what` names the object being read in error messages (e.g. "ciphertext").
    Reader(ByteView data, std::string what, size_t base_offset = 0)
        : data_(data), what_(std::move(what)), base_(base_offset) {}

    size_t position() const { return pos_; }
    size_t remaining() const { return data_.size() - pos_; }
    bool at_end() const { return pos_ == data_.size(); }
    const std::string& what() const { return what_; }

    uint8_t u8(const char* field);
    uint16_t u16(const char* field);
    uint32_t u32(const char* field);
    uint64_t u64(const char* field);
    int32_t i32(const char* field);
    double f64(const char* field);
    void raw(void* out, size_t len, const char* field);
    std::string str(const char* field, size_t max_len);
    // The next `len` bytes as a view (no copy).
    ByteView view(size_t len, const char* field);
    // n residues packed at bit_width(q) bits; each must be < q (else SerializationError).
    void packed(uint64_t* out, size_t n, uint64_t q, const char* field);

    // Throws unless every byte was consumed (trailing garbage is corruption too).
    void expect_end();
    [[noreturn]] void fail(const std::string& message) const;

private:
    void need(size_t len, const char* field) const;
    ByteView data_;
    std::string what_;
    size_t base_ = 0;
    size_t pos_ = 0;
};

}  // namespace oboro::io

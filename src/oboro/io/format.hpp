// The record format shared by every serialized object (see docs/serialization.md):
//
//   offset  size  field
//   0       8     magic "\x89OBORO\r\n" (the high byte and CR LF catch text-mode transfers)
//   8       2     format version (kFormatVersion)
//   10      2     object type (ObjectType)
//   12      4     flags, reserved: must be 0
//   16      8     context id: fingerprint of the parameters the object belongs to (0: none)
//   24      8     payload size in bytes
//   32      ...   payload (little-endian; layout per object type, see serialize.cpp)
//   32+size 8     XXH64 of bytes 0 .. 32+size (header and payload)
//
// A bundle is a record whose payload is a count followed by whole records, each with its own
// header and checksum.
#pragma once

#include <cstdint>
#include <string>

#include "oboro/io/byte_stream.hpp"

namespace oboro::io {

// The newest version this build reads. Each record is written with the version of its object
// type's current layout (written_version), so data of the version-1 types stays readable by older
// builds.
inline constexpr uint16_t kFormatVersion = 10;
inline constexpr size_t kHeaderSize = 32;
inline constexpr size_t kChecksumSize = 8;
inline constexpr uint8_t kMagic[8] = {0x89, 'O', 'B', 'O', 'R', 'O', '\r', '\n'};

enum class ObjectType : uint16_t {
    context = 1,      // parameters and the primes they produce
    plaintext = 2,
    ciphertext = 3,
    public_key = 4,
    relin_key = 5,
    galois_keys = 6,
    secret_key = 7,
    bundle = 8,
    ciphertext_batch = 9,  // d ciphertexts of one level, scale and size (ckks::CiphertextBatch)
    encrypted_matrix = 10, // the block ciphertexts of an encrypted matrix plus its layout
    bootstrap_keys = 11,   // a bootstrapper's configuration and keys (algorithms::BootstrapKeys)
};

const char* to_string(ObjectType type);
// The format version that introduced `type` (1; 2 for the batch and matrix records; 3 for the
// bootstrap keys).
uint16_t version_of(ObjectType type);
// The version a record of `type` is written with, that of its current layout: version_of(type),
// except the bootstrap keys (9: their configuration gained the iterations and the order in 4, the
// memory policy in 5, ...) and the context (10: the key-switching digits).
uint16_t written_version(ObjectType type);

// Writes a header with a placeholder size; returns the record's start for finish_record.
size_t begin_record(Writer& w, ObjectType type, uint64_t context_id);
// Patches the payload size and appends the checksum.
void finish_record(Writer& w, size_t start);

struct RecordView {
    ObjectType type{};
    uint16_t version = 0;
    uint64_t context_id = 0;
    ByteView payload;
    size_t size = 0;  // the whole record: header + payload + checksum
};

// Parses and verifies the record at the start of `data` (magic, version, flags, sizes, checksum).
// Bytes after the record are allowed (the caller checks them); `what` names the expected object.
RecordView read_record(ByteView data, const std::string& what, size_t base_offset = 0);

}  // namespace oboro::io

#include "oboro/io/format.hpp"

#include <cstring>

#include "oboro/io/checksum.hpp"
#include "oboro/util/error.hpp"

namespace oboro::io {

const char* to_string(ObjectType type) {
    switch (type) {
        case ObjectType::context: return "context";
        case ObjectType::plaintext: return "plaintext";
        case ObjectType::ciphertext: return "ciphertext";
        case ObjectType::public_key: return "public key";
        case ObjectType::relin_key: return "relinearization key";
        case ObjectType::galois_keys: return "Galois keys";
        case ObjectType::secret_key: return "secret key";
        case ObjectType::bundle: return "bundle";
        case ObjectType::ciphertext_batch: return "ciphertext batch";
        case ObjectType::encrypted_matrix: return "encrypted matrix";
        case ObjectType::bootstrap_keys: return "bootstrap keys";
    }
    return "unknown object";
}

uint16_t version_of(ObjectType type) {
    if (type == ObjectType::bootstrap_keys) return 3;
    return type == ObjectType::ciphertext_batch || type == ObjectType::encrypted_matrix ? 2 : 1;
}

uint16_t written_version(ObjectType type) {
    if (type == ObjectType::bootstrap_keys) return 9;
    if (type == ObjectType::context) return 10;  // the key-switching digits
    return version_of(type);
}

size_t begin_record(Writer& w, ObjectType type, uint64_t context_id) {
    const size_t start = w.position();
    w.raw(kMagic, sizeof kMagic);
    w.u16(written_version(type));
    w.u16(uint16_t(type));
    w.u32(0);
    w.u64(context_id);
    w.u64(0);  // payload size, patched by finish_record
    return start;
}

void finish_record(Writer& w, size_t start) {
    const size_t payload = w.position() - start - kHeaderSize;
    w.patch_u64(start + 24, payload);
    w.u64(xxh64(w.at(start), kHeaderSize + payload));
}

RecordView read_record(ByteView data, const std::string& what, size_t base_offset) {
    Reader r(data, what, base_offset);
    uint8_t magic[8];
    r.raw(magic, 8, "the header");
    if (std::memcmp(magic, kMagic, 8) != 0)
        r.fail(detail::concat("not oboro serialized data (bad magic bytes at offset ", base_offset, ")"));
    RecordView v;
    v.version = r.u16("the format version");
    if (v.version == 0 || v.version > kFormatVersion)
        r.fail(detail::concat("format version ", v.version, " is not supported (this build reads version ",
                              kFormatVersion, v.version > kFormatVersion ? "; the data was written by a newer oboro)" : ")"));
    const uint16_t type = r.u16("the object type");
    if (type < uint16_t(ObjectType::context) || type > uint16_t(ObjectType::bootstrap_keys))
        r.fail(detail::concat("unknown object type ", type));
    v.type = ObjectType(type);
    if (v.version < version_of(v.type))
        r.fail(detail::concat("a ", to_string(v.type), " record needs format version ", version_of(v.type),
                              " but this one says ", v.version));
    if (const uint32_t flags = r.u32("the flags"); flags != 0)
        r.fail(detail::concat("reserved header flags are set (0x", std::hex, flags, ")"));
    v.context_id = r.u64("the context id");
    const uint64_t payload = r.u64("the payload size");
    if (payload > r.remaining() || r.remaining() - payload < kChecksumSize)
        r.fail(detail::concat("truncated data: the header announces a payload of ", payload, " bytes plus an ",
                              kChecksumSize, "-byte checksum, but only ", r.remaining(), " bytes follow the header"));
    v.payload = r.view(size_t(payload), "the payload");
    const uint64_t stored = r.u64("the checksum");
    if (stored != xxh64(data.data(), kHeaderSize + size_t(payload)))
        r.fail("checksum mismatch: the data is corrupted");
    v.size = kHeaderSize + size_t(payload) + kChecksumSize;
    return v;
}

}  // namespace oboro::io

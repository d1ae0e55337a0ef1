// Serialization of CKKS objects for client/server use: parameters (context), plaintexts,
// ciphertexts, public / relinearization / Galois keys, and -- only through the explicitly named
// functions -- the secret key.
//
// Every object is one record (format.hpp): versioned, typed, tied to its parameters by the
// context id, and checksummed. Residues are bit-packed at bit_width(q_i) bits. With
// `compress = true` (the default) the uniformly random half of keys and of fresh secret-key
// ciphertexts is stored as its 32-byte seed, which halves their size.
//
// Loading treats the data as untrusted: every size is checked against what the context
// implies BEFORE anything is allocated, every residue is checked to be below its modulus, and
// any inconsistency (truncation, corruption, wrong version, other parameters, trailing bytes)
// raises SerializationError; nothing is allocated beyond the size the parameters imply.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "oboro/algorithms/bootstrap.hpp"
#include "oboro/ckks/batch.hpp"
#include "oboro/ckks/ciphertext.hpp"
#include "oboro/ckks/context.hpp"
#include "oboro/ckks/keys.hpp"
#include "oboro/io/byte_stream.hpp"
#include "oboro/io/format.hpp"

namespace oboro::io {

// What the Python package keeps with a plaintext or ciphertext (C++ users may leave it empty):
// the id of the key set a ciphertext was encrypted under (0: unknown; plaintexts: 0), the shape
// of the encoded array and whether it is complex.
struct ArrayInfo {
    uint64_t key_id = 0;
    std::vector<uint64_t> shape;
    bool is_complex = false;
};

// How an encrypted matrix is laid out (the Python package's oboro.linalg.EncryptedMatrix): the
// product method it is encrypted for, its true shape, the block size d (a power of two) and the
// grid of d x d blocks, one ciphertext each, row-major. Only `block` has more than one block.
enum class MatrixMethod : uint8_t { jiang = 0, cube = 1, block = 2 };
struct MatrixLayout {
    MatrixMethod method = MatrixMethod::jiang;
    uint64_t rows = 0, cols = 0, d = 0;
    uint32_t grid_rows = 0, grid_cols = 0;
    uint64_t key_id = 0;  // as ArrayInfo::key_id
};

// ---- writing ----
// `label` is free text kept with the context (the Python package stores the preset name).
Bytes serialize(const ckks::Context& ctx, const std::string& label = {});
Bytes serialize(const ckks::Context& ctx, const ckks::Plaintext& pt, const ArrayInfo& info = {});
Bytes serialize(const ckks::Context& ctx, const ckks::Ciphertext& ct, const ArrayInfo& info = {},
                bool compress = true);
Bytes serialize(const ckks::Context& ctx, const ckks::PublicKey& pk, bool compress = true);
Bytes serialize_relin_key(const ckks::Context& ctx, const ckks::RelinKey& rk, bool compress = true);
Bytes serialize(const ckks::Context& ctx, const ckks::GaloisKeys& gk, bool compress = true);
// A batch; `info` describes ONE element. With `compress`, the elements that still have their seed
// (fresh secret-key encryptions, CiphertextBatch::uniform_seed) are stored with the seed.
Bytes serialize(const ckks::Context& ctx, const ckks::CiphertextBatch& batch, const ArrayInfo& info = {},
                bool compress = true);
// An encrypted matrix: the layout, then each block as a whole ciphertext record (seeded when
// `compress` and the block is a fresh secret-key encryption). ValueError unless the blocks fit
// the layout (grid_rows x grid_cols blocks of one level).
Bytes serialize_matrix(const ckks::Context& ctx, const MatrixLayout& layout, std::span<const ckks::Ciphertext> blocks,
                       bool compress = true);
// A bootstrapper's configuration and keys (algorithms/bootstrap.hpp): the Galois keys at their
// levels and the encapsulation keys, each seeded when `compress`.
Bytes serialize(const ckks::Context& ctx, const algorithms::BootstrapConfig& config,
                const algorithms::BootstrapKeys& keys, bool compress = true);
// The secret key: only through this explicitly named function.
Bytes serialize_secret_key(const ckks::Context& ctx, const ckks::SecretKey& sk);
// Several records in one (e.g. a context and its public keys); each keeps its own checksum.
Bytes make_bundle(const std::vector<Bytes>& records);

// ---- reading ----
// The context of serialized parameters; the primes it generates must equal the stored ones
// (they would differ only for data written by an incompatible oboro).
ckks::ContextPtr load_context(ByteView data, std::string* label = nullptr);
ckks::Plaintext load_plaintext(const ckks::Context& ctx, ByteView data, ArrayInfo* info = nullptr);
ckks::Ciphertext load_ciphertext(const ckks::Context& ctx, ByteView data, ArrayInfo* info = nullptr);
ckks::CiphertextBatch load_ciphertext_batch(const ckks::Context& ctx, ByteView data, ArrayInfo* info = nullptr);
std::vector<ckks::Ciphertext> load_matrix(const ckks::Context& ctx, ByteView data, MatrixLayout* layout);
ckks::PublicKey load_public_key(const ckks::Context& ctx, ByteView data);
ckks::RelinKey load_relin_key(const ckks::Context& ctx, ByteView data);
ckks::GaloisKeys load_galois_keys(const ckks::Context& ctx, ByteView data);
// The configuration and the keys of a bootstrap_keys record (make the Bootstrapper from the
// configuration: its matrices are not stored).
std::pair<algorithms::BootstrapConfig, algorithms::BootstrapKeys> load_bootstrap_keys(const ckks::Context& ctx,
                                                                                      ByteView data);
ckks::SecretKeyPtr load_secret_key(const ckks::Context& ctx, ByteView data);
// The records of a bundle, in order (views into `data`).
std::vector<ByteView> split_bundle(ByteView data);

// The type of the record at the start of `data` (its header and checksum are verified).
ObjectType peek_type(ByteView data);

// For tests and fuzzers: makes a modified record pass its checksum again, so that the field checks
// behind the checksum are reached (random changes nearly always break it). The payload size becomes
// what `record` holds and the checksum is recomputed, after those of the records nested in a bundle
// or an encrypted matrix (each keeping the payload size its own header announces; the walk stops at
// the first one that overruns). Nothing is validated: a resealed record is still checked field by
// field when loaded. Spans shorter than a header and a checksum are left alone.
void reseal(std::span<uint8_t> record);

// A fingerprint of a key set: XXH64 of the public key's b polynomial. Ciphertexts carry it
// (ArrayInfo::key_id) so that loading one under other keys is detected.
uint64_t key_id(const ckks::PublicKey& pk);

// ---- files ----
// Writes atomically: a temporary file in the same directory, then a rename.
void write_file(const std::string& path, const Bytes& data);
Bytes read_file(const std::string& path);

}  // namespace oboro::io

// The seed corpora of the fuzz targets: valid records of every type, made with the library for the
// fuzz parameters (fuzz.hpp), a few variants each so that every optional field and flag is present
// in some seed (seeded and full polynomials, keys below the top level and over fewer special
// primes, array info, the encapsulation keys ...). Made at build time rather than committed: they
// follow the format as it is.
//
// Usage: make_corpus DIR   writes DIR/<type>/<variant>.oboro for each target's type
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "fuzz.hpp"

using namespace oboro;
using namespace oboro::ckks;

namespace {

struct Writer {
    std::filesystem::path root;
    size_t files = 0;

    void put(const std::string& type, const std::string& variant, const io::Bytes& record) {
        const std::filesystem::path dir = root / type;
        std::filesystem::create_directories(dir);
        io::write_file((dir / (variant + ".oboro")).string(), record);
        ++files;
    }
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    try {
        Writer w{argv[1]};
        const fuzz::Session& s = fuzz::fixture();
        const Context& c = *s.ctx;
        const int top = c.max_level();

        // ---- contexts: the fuzz parameters (the others' contexts), a sparse secret, no label ----
        const io::Bytes ctx_record = io::serialize(c, "fuzz");
        w.put("context", "fuzz", ctx_record);
        Parameters sparse = fuzz::parameters();
        sparse.secret = SecretDistribution::sparse_ternary;
        sparse.hamming_weight = 16;
        sparse.scale = double(uint64_t(1) << 30);
        w.put("context", "sparse", io::serialize(*Context::create(sparse)));
        Parameters tiny = fuzz::parameters();
        tiny.log_n = 2;
        tiny.q_bits = {30};
        tiny.p_bits = {30};
        tiny.dnum = 0;
        w.put("context", "n4", io::serialize(*Context::create(tiny), ""));

        // ---- plaintexts ----
        const std::vector<double> values = {0.5, -0.25, 0.125, 1.0};
        const Plaintext pt = s.encoder.encode(values, top, std::nullopt, 4);
        w.put("plaintext", "top", io::serialize(c, pt));
        w.put("plaintext", "level0-info", io::serialize(c, s.encoder.encode(values, 0, std::nullopt, 8),
                                                         io::ArrayInfo{0, {2, 2}, true}));

        // ---- ciphertexts: seeded, public-key (full), 3 polynomials, level 0, with array info ----
        const Ciphertext fresh = s.ciphertext(top);
        const Ciphertext by_pk = Encryptor(s.ctx, s.pk).encrypt(s.encoder.encode(values, top, std::nullopt, 8));
        const Ciphertext product = s.eval.multiply(fresh, fresh);
        w.put("ciphertext", "seeded", io::serialize(c, fresh, io::ArrayInfo{7, {2, 4}, false}));
        w.put("ciphertext", "full", io::serialize(c, by_pk));
        w.put("ciphertext", "size3", io::serialize(c, product));
        w.put("ciphertext", "level0", io::serialize(c, s.ciphertext(0, 2), {}, /*compress=*/false));

        // ---- keys ----
        w.put("public_key", "seeded", io::serialize(c, s.pk));
        w.put("public_key", "full", io::serialize(c, s.pk, /*compress=*/false));
        KeyGenerator& keygen = s.keygen;
        w.put("relin_key", "seeded", io::serialize_relin_key(c, s.rk));
        w.put("relin_key", "full", io::serialize_relin_key(c, s.rk, /*compress=*/false));
        w.put("relin_key", "level1-special1", io::serialize_relin_key(c, keygen.relin_key(1, 1)));
        w.put("galois_keys", "seeded", io::serialize(c, s.gk));
        GaloisKeys levels = keygen.galois_keys({1}, false, 0, 1);
        keygen.add_galois_keys(levels, {-1}, true, 1);
        w.put("galois_keys", "levels-full", io::serialize(c, levels, /*compress=*/false));
        w.put("galois_keys", "empty", io::serialize(c, GaloisKeys{}));
        w.put("secret_key", "ternary", io::serialize_secret_key(c, *s.keygen.secret_key()));

        // ---- bootstrap keys: Galois keys of two levels and the encapsulation keys; and without ----
        algorithms::BootstrapKeys bk;
        bk.galois = keygen.galois_keys({1}, true);
        keygen.add_galois_keys(bk.galois, {2}, false, 0);
        bk.encapsulation = keygen.encapsulation_keys(4);
        algorithms::BootstrapConfig config;
        config.slots = 8;
        config.cosine_degree = 31;
        const io::Bytes boot = io::serialize(c, config, bk);
        w.put("bootstrap_keys", "encapsulated", boot);
        algorithms::BootstrapKeys plain;
        plain.galois = keygen.galois_keys({4}, false, 1);
        w.put("bootstrap_keys", "default-config-full", io::serialize(c, algorithms::BootstrapConfig{}, plain, false));

        // ---- batches: seeded elements beside a full one, no seeds, 3 polynomials ----
        const std::vector<Ciphertext> elements = {fresh, by_pk, s.ciphertext(top)};
        const CiphertextBatch batch = CiphertextBatch::from_ciphertexts(c, elements);
        w.put("ciphertext_batch", "seeds", io::serialize(c, batch, io::ArrayInfo{7, {8}, true}));
        w.put("ciphertext_batch", "full", io::serialize(c, batch, {}, /*compress=*/false));
        const std::vector<Ciphertext> products = {product, product};
        w.put("ciphertext_batch", "size3", io::serialize(c, CiphertextBatch::from_ciphertexts(c, products)));

        // ---- encrypted matrices: one block (jiang, 3d), a grid of blocks ----
        using M = io::MatrixMethod;
        const std::vector<Ciphertext> one = {s.ciphertext(top, 16)};
        w.put("encrypted_matrix", "jiang", io::serialize_matrix(c, {M::jiang, 3, 4, 4, 1, 1, 7}, one));
        w.put("encrypted_matrix", "cube", io::serialize_matrix(c, {M::cube, 2, 2, 2, 1, 1, 0}, one, false));
        const std::vector<Ciphertext> grid = {s.ciphertext(1, 4), s.ciphertext(1, 4)};
        w.put("encrypted_matrix", "block-grid", io::serialize_matrix(c, {M::block, 3, 2, 2, 2, 1, 7}, grid));

        // ---- bundles: a whole serialized context as the Python package writes it; parameters only;
        // every other record type after the context ----
        const io::Bytes pk_record = io::serialize(c, s.pk), sk_record = io::serialize_secret_key(c, *s.keygen.secret_key());
        w.put("bundle", "context-keys",
              io::make_bundle({ctx_record, pk_record, io::serialize_relin_key(c, s.rk), io::serialize(c, s.gk), boot,
                               sk_record}));
        w.put("bundle", "parameters", io::make_bundle({ctx_record}));
        w.put("bundle", "objects",
              io::make_bundle({ctx_record, io::serialize(c, pt), io::serialize(c, fresh),
                               io::serialize(c, batch), io::serialize_matrix(c, {M::jiang, 3, 4, 4, 1, 1, 7}, one)}));
        std::printf("make_corpus: %zu seed records in %s\n", w.files, argv[1]);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "make_corpus: %s\n", e.what());
        return 1;
    }
}

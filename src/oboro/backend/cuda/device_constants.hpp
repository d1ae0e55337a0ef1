// The constants the kernels read (NTT tables, the constants of a division by a dropped prime, a
// base converter's, key switching at one level) in a device's memory, written once over the
// memory policy (device_buffer.hpp): CudaMemory on a GPU (the aliases DeviceNttTables, ... of
// ntt.hpp, base_conversion.hpp and keyswitch.hpp), EmulatedMemory in the emulated queue. Plain C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "oboro/backend/cuda/base_conversion_kernels.hpp"
#include "oboro/backend/cuda/device_buffer.hpp"
#include "oboro/backend/cuda/keyswitch_kernels.hpp"
#include "oboro/backend/cuda/ntt_kernels.hpp"
#include "oboro/backend/ring.hpp"
#include "oboro/math/ntt.hpp"
#include "oboro/math/rns.hpp"
#include "oboro/util/error.hpp"

namespace oboro::cuda {

namespace detail {

inline uint32_t checked_log_n(uint32_t n, const char* what) {
    uint32_t log_n = 0;
    while ((1u << log_n) < n) ++log_n;
    if (n < 4 || (1u << log_n) != n) raise<ValueError>(what, ": n = ", n, " is not a power of two >= 4");
    return log_n;
}

// A device copy of v.
template <typename Memory, typename T> BasicDeviceBuffer<Memory> to_device(const std::vector<T>& v) {
    BasicDeviceBuffer<Memory> b(v.size() * sizeof(T));
    b.upload(v.data(), v.size() * sizeof(T));
    return b;
}

}  // namespace detail

// The NTT tables of `count` primes (all of degree n) in device memory, as the kernels read them:
// views() is a device array of `count` NttTableView pointing into one allocation of 4*n*count words.
template <typename Memory> class BasicDeviceNttTables {
public:
    BasicDeviceNttTables(const math::NttTables* tables, size_t count) : count_(count) {
        if (count == 0) raise<ValueError>("DeviceNttTables: no tables");
        n_ = tables[0].n;
        log_n_ = detail::checked_log_n(n_, "DeviceNttTables");
        const size_t n = n_;
        words_ = Buffer(4 * n * count * sizeof(uint64_t));
        std::vector<kernels::NttTableView> views(count);
        for (size_t i = 0; i < count; ++i) {
            if (tables[i].n != n_) raise<ValueError>("DeviceNttTables: table ", i, " has degree ", tables[i].n, ", not ", n_);
            const std::vector<uint64_t>* parts[4] = {&tables[i].psi_rev, &tables[i].psi_rev_shoup, &tables[i].psi_inv_rev,
                                                     &tables[i].psi_inv_rev_shoup};
            const uint64_t* dev[4];
            for (size_t k = 0; k < 4; ++k) {
                const size_t offset = (4 * i + k) * n;
                words_.upload(parts[k]->data(), n * sizeof(uint64_t), offset * sizeof(uint64_t));
                dev[k] = words_.template as<const uint64_t>() + offset;
            }
            views[i] = kernels::host_table_view(tables[i]);  // the scalars; pointers replaced below
            views[i].psi_rev = dev[0];
            views[i].psi_rev_shoup = dev[1];
            views[i].psi_inv_rev = dev[2];
            views[i].psi_inv_rev_shoup = dev[3];
        }
        views_ = detail::to_device<Memory>(views);
    }
    const kernels::NttTableView* views() const { return views_.template as<const kernels::NttTableView>(); }
    size_t size() const { return count_; }
    uint32_t n() const { return n_; }
    uint32_t log_n() const { return log_n_; }

private:
    using Buffer = BasicDeviceBuffer<Memory>;
    Buffer words_, views_;
    size_t count_ = 0;
    uint32_t n_ = 0, log_n_ = 0;
};

// The constants of a division by one dropped prime (kernels::make_drop_limbs) in device memory.
template <typename Memory> class BasicDeviceDropLimbs {
public:
    BasicDeviceDropLimbs(const uint64_t* kept_moduli, uint32_t kept, uint64_t dropped_prime, const uint64_t* inverses) {
        if (kept == 0) raise<ValueError>("DeviceDropLimbs: no limb is kept");
        std::vector<kernels::DropLimb> limbs(kept);
        kernels::make_drop_limbs(kept_moduli, kept, dropped_prime, inverses, limbs.data());
        buf_ = detail::to_device<Memory>(limbs);
    }
    const kernels::DropLimb* get() const { return buf_.template as<const kernels::DropLimb>(); }

private:
    BasicDeviceBuffer<Memory> buf_;
};

// A BaseConverter's constants in device memory; view() is what BaseConvArgs::conv takes.
template <typename Memory> class BasicDeviceBaseConverter {
public:
    explicit BasicDeviceBaseConverter(const math::BaseConverter& converter) {
        const kernels::BaseConvHostData h(converter);
        const size_t k = h.from.size(), m = h.to.size();
        // words: from, punctured_inv, punctured_inv_shoup (k each), qhat_mod_t (m*k), q_mod_t (m)
        std::vector<uint64_t> words;
        for (const auto* part : {&h.from, &h.punctured_inv, &h.punctured_inv_shoup, &h.qhat_mod_t, &h.q_mod_t})
            words.insert(words.end(), part->begin(), part->end());
        words_ = detail::to_device<Memory>(words);
        doubles_ = detail::to_device<Memory>(h.inv_from);
        barrett_ = detail::to_device<Memory>(h.to);
        const uint64_t* w = words_.template as<const uint64_t>();
        view_.k = uint32_t(k);
        view_.m = uint32_t(m);
        view_.from = w;
        view_.punctured_inv = w + k;
        view_.punctured_inv_shoup = w + 2 * k;
        view_.qhat_mod_t = w + 3 * k;
        view_.q_mod_t = w + 3 * k + m * k;
        view_.inv_from = doubles_.template as<const double>();
        view_.to = barrett_.template as<const math::Barrett<uint64_t>>();
    }
    const kernels::BaseConvView& view() const { return view_; }

private:
    BasicDeviceBuffer<Memory> words_, doubles_, barrett_;
    kernels::BaseConvView view_;
};

// The constants of key switching at one level in device memory; get() is what the args take
// (its digit_steps stay in host memory, where the launcher reads them).
template <typename Memory> class BasicDeviceKeySwitchLevel {
public:
    // The ring's level (all its special primes), or lc: a level over some of them.
    BasicDeviceKeySwitchLevel(const backend::Ring& ring, int level) : BasicDeviceKeySwitchLevel(ring, ring.level(level)) {}
    BasicDeviceKeySwitchLevel(const backend::Ring& ring, const backend::LevelConstants& lc) {
        const int level = lc.level;
        const kernels::KeySwitchHostData h(ring, lc);
        std::vector<math::NttTables> ext(ring.ntt_tables(), ring.ntt_tables() + h.level.nq);
        ext.insert(ext.end(), ring.p_ntt_tables(), ring.p_ntt_tables() + h.level.k);
        tables_ = std::make_unique<BasicDeviceNttTables<Memory>>(ext.data(), ext.size());
        moduli_ = detail::to_device<Memory>(h.ext_moduli);
        drop_ = detail::to_device<Memory>(h.drop);
        q_values_ = detail::to_device<Memory>(h.q_values);
        std::vector<uint64_t> p_mod_q = h.p_mod_q;
        p_mod_q.insert(p_mod_q.end(), h.p_mod_q_shoup.begin(), h.p_mod_q_shoup.end());
        p_mod_q_ = detail::to_device<Memory>(p_mod_q);
        if (!h.rescale_drop.empty()) rescale_drop_ = detail::to_device<Memory>(h.rescale_drop);
        std::vector<uint32_t> all_limbs;  // the digits' target lists, one after the other
        for (const auto& l : h.out_limbs) all_limbs.insert(all_limbs.end(), l.begin(), l.end());
        out_limbs_ = detail::to_device<Memory>(all_limbs);
        size_t offset = 0;
        for (size_t j = 0; j < h.steps.size(); ++j) {
            converters_.push_back(std::make_unique<Converter>(lc.digits[j].to_others));
            kernels::DigitStep s = h.steps[j];
            s.conv = converters_.back()->view();
            s.out_limbs = out_limbs_.template as<const uint32_t>() + offset;
            offset += h.out_limbs[j].size();
            steps_.push_back(s);
        }
        level_ = h.level;
        level_.ext_tables = tables_->views();
        level_.ext_moduli = moduli_.template as<const math::Barrett<uint64_t>>();
        level_.drop = drop_.template as<const kernels::DropLimb>();
        level_.q_values = q_values_.template as<const uint64_t>();
        level_.digit_steps = steps_.data();
        if (h.level.k > 1) {
            converters_.push_back(std::make_unique<Converter>(lc.p_to_q));
            level_.p_to_q = converters_.back()->view();
        }
        level_.p_mod_q = p_mod_q_.template as<const uint64_t>();
        level_.p_mod_q_shoup = level_.p_mod_q + h.level.nq;
        if (level >= 1) {
            converters_.push_back(std::make_unique<Converter>(lc.qlp_to_q));
            level_.qlp_to_q = converters_.back()->view();
            level_.rescale_drop = rescale_drop_.template as<const kernels::DropLimb>();
        }
    }
    const kernels::KeySwitchLevel& get() const { return level_; }

private:
    using Converter = BasicDeviceBaseConverter<Memory>;
    std::unique_ptr<BasicDeviceNttTables<Memory>> tables_;
    BasicDeviceBuffer<Memory> moduli_, drop_, q_values_, out_limbs_, p_mod_q_, rescale_drop_;
    std::vector<std::unique_ptr<Converter>> converters_;  // the digits', P -> Q_l, q_l P -> Q_{l-1}
    std::vector<kernels::DigitStep> steps_;
    kernels::KeySwitchLevel level_;
};

}  // namespace oboro::cuda

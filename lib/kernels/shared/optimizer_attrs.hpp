// The attrs of a training op read into the plain opt::Hyper that the shared update functors
// (kernels/shared/optimizer_functors.hpp) take: one reader for the CPU kernels and the CUDA glue.
// An attr the op does not set stays 0 (each functor reads only its op's attrs).
#pragma once

#include <string_view>
#include <type_traits>

#include "kernels/shared/optimizer_functors.hpp"
#include "ops/attrs.hpp"

namespace tapeflow::opt {

inline Hyper hyper_of(const Attrs& a) {
    Hyper h;
    auto read = [&a](std::string_view name, auto& out) {
        using V = std::remove_reference_t<decltype(out)>;
        if (a.has(name)) out = a.get<V>(name);
    };
    read("alpha", h.alpha);
    read("lr", h.lr);
    read("l1", h.l1);
    read("l2", h.l2);
    read("momentum", h.momentum);
    read("rho", h.rho);
    read("epsilon", h.epsilon);
    read("beta1", h.beta1);
    read("beta2", h.beta2);
    read("beta1_power", h.beta1_power);
    read("beta2_power", h.beta2_power);
    read("u_t", h.u_t);
    read("u_t1", h.u_t1);
    read("u_product", h.u_product);
    read("l2_shrinkage", h.l2_shrinkage);
    read("lr_power", h.lr_power);
    read("use_nesterov", h.use_nesterov);
    read("epsilon_inside_sqrt", h.epsilon_inside_sqrt);
    return h;
}

}  // namespace tapeflow::opt

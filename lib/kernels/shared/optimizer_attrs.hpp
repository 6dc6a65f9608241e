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
    // One pass over the call's attrs (a training op sets a handful of the fields).
    for (const auto& [name, value] : a.items()) {
        auto set = [&value](auto& out) {
            using V = std::remove_reference_t<decltype(out)>;
            out = std::get<V>(value);
        };
        if (name == "lr")
            set(h.lr);
        else if (name == "alpha")
            set(h.alpha);
        else if (name == "l1")
            set(h.l1);
        else if (name == "l2")
            set(h.l2);
        else if (name == "momentum")
            set(h.momentum);
        else if (name == "rho")
            set(h.rho);
        else if (name == "epsilon")
            set(h.epsilon);
        else if (name == "beta1")
            set(h.beta1);
        else if (name == "beta2")
            set(h.beta2);
        else if (name == "beta1_power")
            set(h.beta1_power);
        else if (name == "beta2_power")
            set(h.beta2_power);
        else if (name == "u_t")
            set(h.u_t);
        else if (name == "u_t1")
            set(h.u_t1);
        else if (name == "u_product")
            set(h.u_product);
        else if (name == "l2_shrinkage")
            set(h.l2_shrinkage);
        else if (name == "lr_power")
            set(h.lr_power);
        else if (name == "use_nesterov")
            set(h.use_nesterov);
        else if (name == "epsilon_inside_sqrt")
            set(h.epsilon_inside_sqrt);
    }
    return h;
}
}  // namespace tapeflow::opt

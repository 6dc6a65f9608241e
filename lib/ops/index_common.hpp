// Helpers shared by the slicing (slicing.cpp) and gather/scatter (gather_scatter.cpp) families.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/tensor.hpp>

#include "ops/apply.hpp"

namespace tapeflow::index_detail {

inline void check_defined(Op op, const Tensor& t, std::string_view what) {
    if (!t.defined()) op_fail(op, "{} is an undefined tensor", what);
}

inline int64_t product(const std::vector<int64_t>& dims, std::size_t from, std::size_t to) {
    int64_t n = 1;
    for (std::size_t i = from; i < to; ++i)
        n *= dims[i];
    return n;
}

inline std::string dims_string(const std::vector<int64_t>& dims) {
    return Shape(dims).debug_string();
}

}  // namespace tapeflow::index_detail

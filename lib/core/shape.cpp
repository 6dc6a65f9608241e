// Shape construction, printing and broadcasting.
#include <string>

#include <fmt/ranges.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/shape.hpp>

namespace tapeflow {
namespace {

// The element count, or -1 when a dimension is -1 (unknown).
int64_t checked_num_elements(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    bool unknown = false;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] == -1) {
            unknown = true;
            continue;
        }
        if (dims[i] < 0) {
            throw errors::InvalidArgumentError(fmt::format(
                "Dimension {} of shape [{}] is {}: dimensions must be non-negative (or -1, "
                "unknown)",
                i,
                fmt::join(dims, ","),
                dims[i]));
        }
        if (dims[i] != 0 && n > INT64_MAX / dims[i]) {
            throw errors::InvalidArgumentError(
                fmt::format("Shape [{}] has more than 2^63-1 elements", fmt::join(dims, ",")));
        }
        n *= dims[i];
    }
    return unknown ? -1 : n;
}

}  // namespace

Shape::Shape(std::initializer_list<int64_t> dims)
    : dims_(dims), num_elements_(checked_num_elements(dims_)) {}

Shape::Shape(std::vector<int64_t> dims)
    : dims_(std::move(dims)), num_elements_(checked_num_elements(dims_)) {}

int64_t Shape::operator[](int64_t axis) const {
    return dims_[static_cast<std::size_t>(normalize_axis(axis, rank()))];
}

std::string Shape::str() const {
    if (dims_.size() == 1) return fmt::format("({},)", dims_[0]);
    return fmt::format("({})", fmt::join(dims_, ", "));
}

std::string Shape::debug_string() const {
    return fmt::format("[{}]", fmt::join(dims_, ","));
}

int64_t normalize_axis(int64_t axis, int64_t rank, std::string_view op) {
    if (axis < -rank || axis >= rank) {
        throw errors::InvalidArgumentError(
            fmt::format("axis {} is out of bounds for a tensor of rank {} (valid: [{}, {}))",
                        axis,
                        rank,
                        -rank,
                        rank),
            std::string(op));
    }
    return axis < 0 ? axis + rank : axis;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
    if (a == b) return a;
    const auto& da = a.dims();
    const auto& db = b.dims();
    const std::size_t rank = std::max(da.size(), db.size());
    std::vector<int64_t> out(rank);
    for (std::size_t i = 0; i < rank; ++i) {
        const int64_t x = i < rank - da.size() ? 1 : da[i - (rank - da.size())];
        const int64_t y = i < rank - db.size() ? 1 : db[i - (rank - db.size())];
        if (x != y && x != 1 && y != 1) {
            throw errors::InvalidArgumentError(
                fmt::format("Incompatible shapes: {} vs. {}", a.debug_string(), b.debug_string()),
                std::string(op));
        }
        out[i] = x == 1 ? y : x;
    }
    return Shape(std::move(out));
}

}  // namespace tapeflow

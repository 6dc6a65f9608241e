// Argument checks and window geometry shared by the nn family files (see nn_common.hpp). The
// padding arithmetic is TensorFlow's GetWindowedOutputSizeVerbose: SAME gives ceil(in / stride)
// outputs and puts the odd padding cell after; VALID and explicit pads give floor division.
#include "ops/nn_common.hpp"

#include <tapeflow/ops/array.hpp>

namespace tapeflow::nn_detail {

void check_defined(Op op, const Tensor& x, std::string_view what) {
    if (!x.defined()) op_fail(op, "{} of '{}' is an undefined tensor", what, op_name(op));
}

void check_float(Op op, const Tensor& x, std::string_view what) {
    check_defined(op, x, what);
    if (!is_floating(x.dtype())) {
        op_fail(op,
                "Value for attr 'T' of {} is not in the list of allowed values: half, bfloat16, "
                "float, double ({} has dtype {} and shape {})",
                tf_type_name(x.dtype()),
                what,
                dtype_name(x.dtype()),
                x.shape().debug_string());
    }
}

void check_same_dtype(
    Op op, const Tensor& a, const Tensor& b, std::string_view a_name, std::string_view b_name) {
    if (a.dtype() != b.dtype()) {
        op_fail(op,
                "{} and {} must have the same dtype: {} vs. {}",
                a_name,
                b_name,
                dtype_name(a.dtype()),
                dtype_name(b.dtype()));
    }
}

bool is_nchw(Op op, std::string_view data_format) {
    if (data_format == "NHWC") return false;
    if (data_format == "NCHW") return true;
    op_fail(op, "Invalid data format: '{}'; expected \"NHWC\" or \"NCHW\"", data_format);
}

std::array<int64_t, 2> spatial_pair(Op op, const Ints& v, std::string_view name, bool nchw) {
    const auto& x = v.values();
    std::array<int64_t, 2> r{};
    if (x.size() == 1) {
        r = {x[0], x[0]};
    } else if (x.size() == 2) {
        r = {x[0], x[1]};
    } else if (x.size() == 4) {
        const std::size_t batch = 0;
        const std::size_t channel = nchw ? 1 : 3;
        if (x[batch] != 1 || x[channel] != 1) {
            op_fail(op,
                    "Current implementation does not yet support {} in the batch and depth "
                    "dimensions, got {} [{}, {}, {}, {}]",
                    name,
                    name,
                    x[0],
                    x[1],
                    x[2],
                    x[3]);
        }
        r = nchw ? std::array<int64_t, 2>{x[2], x[3]} : std::array<int64_t, 2>{x[1], x[2]};
    } else {
        op_fail(op, "{} should be of length 1, 2 or 4 but was {}", name, x.size());
    }
    if (r[0] < 1 || r[1] < 1) op_fail(op, "{} must be positive, got [{}, {}]", name, r[0], r[1]);
    return r;
}

namespace {

// One spatial dimension: output size and (before, after) padding.
void windowed_size(Op op,
                   int64_t in,
                   int64_t k,
                   int64_t d,
                   int64_t s,
                   std::string_view padding,
                   int64_t& out,
                   int64_t& before,
                   int64_t& after) {
    // Window sizes, dilations and strides are positive but unbounded: every step is checked.
    const std::string_view type = op_type(op);
    const int64_t eff = checked_dim_add(checked_dim_mul(k - 1, d, type), 1, type);
    if (padding == "VALID") {
        out = (in - eff + s) / s;  // in - eff >= -(2^63 - 1): no overflow, and neither is + s
        before = after = 0;
    } else if (padding == "SAME") {
        out = in / s + (in % s != 0 ? 1 : 0);
        const int64_t span = checked_dim_add(checked_dim_mul(out - 1, s, type), eff, type);
        const int64_t total = std::max<int64_t>(span - in, 0);
        before = total / 2;
        after = total - before;
    } else {
        op_fail(op,
                "Value for attr 'padding' of \"{}\" is not in the list of allowed values: "
                "\"SAME\", \"VALID\" (or explicit pads)",
                padding);
    }
    if (out < 0) {
        op_fail(op,
                "Computed output size would be negative: {} [input_size: {}, "
                "effective_filter_size: {}, stride: {}]",
                out,
                in,
                eff,
                s);
    }
}

}  // namespace

void set_padding(Op op, Window2d& win, std::string_view padding) {
    windowed_size(op, win.h, win.kh, win.dh, win.sh, padding, win.oh, win.pad_top, win.pad_bottom);
    windowed_size(op, win.w, win.kw, win.dw, win.sw, padding, win.ow, win.pad_left, win.pad_right);
}

void set_explicit_padding(Op op, Window2d& win, const Paddings& pads, bool nchw) {
    if (pads.size() != 4) {
        op_fail(op,
                "explicit padding must have one (before, after) pair per input dimension "
                "(4), got {}",
                pads.size());
    }
    const std::size_t hd = nchw ? 2 : 1;
    const std::size_t cd = nchw ? 1 : 3;
    if (pads[0] != std::pair<int64_t, int64_t>{0, 0} ||
        pads[cd] != std::pair<int64_t, int64_t>{0, 0}) {
        op_fail(op, "Nonzero explicit padding in the batch or depth dimensions is not supported");
    }
    for (const auto& [b, a] : pads) {
        if (b < 0 || a < 0) op_fail(op, "All explicit padding values must be nonnegative");
    }
    win.pad_top = pads[hd].first;
    win.pad_bottom = pads[hd].second;
    win.pad_left = pads[hd + 1].first;
    win.pad_right = pads[hd + 1].second;
    const int64_t eff_h = (win.kh - 1) * win.dh + 1;
    const int64_t eff_w = (win.kw - 1) * win.dw + 1;
    win.oh = (win.h + win.pad_top + win.pad_bottom - eff_h) / win.sh + 1;
    win.ow = (win.w + win.pad_left + win.pad_right - eff_w) / win.sw + 1;
    if (win.h + win.pad_top + win.pad_bottom < eff_h ||
        win.w + win.pad_left + win.pad_right < eff_w) {
        op_fail(op,
                "Computed output size would be negative: the padded input [{}, {}] is smaller "
                "than the effective filter [{}, {}]",
                win.h + win.pad_top + win.pad_bottom,
                win.w + win.pad_left + win.pad_right,
                eff_h,
                eff_w);
    }
}

Attrs window_attrs(const Window2d& win) {
    Attrs a;
    a.set("ksize", std::vector<int64_t>{win.kh, win.kw});
    a.set("strides", std::vector<int64_t>{win.sh, win.sw});
    a.set("dilations", std::vector<int64_t>{win.dh, win.dw});
    a.set("pads", std::vector<int64_t>{win.pad_top, win.pad_bottom, win.pad_left, win.pad_right});
    return a;
}

Window2d window_from(const Shape& in, const Attrs& attrs) {
    Window2d w;
    w.n = in.dims()[0];
    w.h = in.dims()[1];
    w.w = in.dims()[2];
    w.c = in.dims()[3];
    const auto& k = attrs.get<std::vector<int64_t>>("ksize");
    const auto& s = attrs.get<std::vector<int64_t>>("strides");
    const auto& d = attrs.get<std::vector<int64_t>>("dilations");
    const auto& p = attrs.get<std::vector<int64_t>>("pads");
    w.kh = k[0];
    w.kw = k[1];
    w.sh = s[0];
    w.sw = s[1];
    w.dh = d[0];
    w.dw = d[1];
    w.pad_top = p[0];
    w.pad_bottom = p[1];
    w.pad_left = p[2];
    w.pad_right = p[3];
    w.oh = (w.h + w.pad_top + w.pad_bottom - ((w.kh - 1) * w.dh + 1)) / w.sh + 1;
    w.ow = (w.w + w.pad_left + w.pad_right - ((w.kw - 1) * w.dw + 1)) / w.sw + 1;
    return w;
}

Tensor to_nhwc(const Tensor& x) {
    return transpose(x, {0, 2, 3, 1});
}

Tensor to_nchw(const Tensor& x) {
    return transpose(x, {0, 3, 1, 2});
}

}  // namespace tapeflow::nn_detail

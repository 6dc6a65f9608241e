// Tape entries -> TensorFlow's op signatures (see graph_signatures.hpp). Ops without a rule here
// already match TensorFlow's (element-wise ops: only T).
#include "autograd/graph_signatures.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace tapeflow {
namespace {

std::string int_list(const std::vector<int64_t>& values) {
    std::string out = "list {";
    for (int64_t v : values)
        out += fmt::format(" i: {}", v);
    return out + " }";
}

std::string text(const std::string& s) {
    return "s: \"" + s + "\"";
}

// TensorFlow's padding name for a window's explicit pads: SAME when they are what SAME computes
// (TensorFlow's GetWindowedOutputSize), VALID when zero, else EXPLICIT with explicit_paddings.
void set_padding(GraphNode& node, const Attrs& attrs, const Shape& input_nhwc) {
    const auto& k = attrs.get<std::vector<int64_t>>("ksize");
    const auto& s = attrs.get<std::vector<int64_t>>("strides");
    const auto& d = attrs.get<std::vector<int64_t>>("dilations");
    const auto& pads = attrs.get<std::vector<int64_t>>("pads");  // top, bottom, left, right
    bool same = true;
    for (int axis = 0; axis < 2; ++axis) {
        const int64_t in = input_nhwc.dims()[static_cast<std::size_t>(1 + axis)];
        const int64_t effective = (k[axis] - 1) * d[axis] + 1;
        const int64_t out = (in + s[axis] - 1) / s[axis];
        const int64_t total = std::max<int64_t>((out - 1) * s[axis] + effective - in, 0);
        same = same && pads[2 * axis] == total / 2 && pads[2 * axis + 1] == total - total / 2;
    }
    const bool valid = pads == std::vector<int64_t>{0, 0, 0, 0};
    node.attrs["padding"] = text(valid ? "VALID" : same ? "SAME" : "EXPLICIT");
    node.attrs["explicit_paddings"] =
        valid || same ? "list { }" : int_list({0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0});
}

void window_op(const TapeEntry& e, GraphNode& node, bool convolution) {
    const auto& k = e.attrs.get<std::vector<int64_t>>("ksize");
    const auto& s = e.attrs.get<std::vector<int64_t>>("strides");
    const auto& d = e.attrs.get<std::vector<int64_t>>("dilations");
    set_padding(node, e.attrs, e.in_meta[0].shape);
    node.attrs["strides"] = int_list({1, s[0], s[1], 1});
    node.attrs["data_format"] = text("NHWC");  // tapeflow's kernels run NHWC (NCHW is transposed)
    if (convolution) {
        node.attrs["dilations"] = int_list({1, d[0], d[1], 1});
        node.attrs["use_cudnn_on_gpu"] = "b: true";
    } else {
        node.attrs["ksize"] = int_list({1, k[0], k[1], 1});
    }
    node.attrs.erase("pads");
    if (convolution) node.attrs.erase("ksize");
    if (!convolution) node.attrs.erase("dilations");
}

// An attribute that TensorFlow takes as an int32 tensor input: a Const node, and its type attr.
void as_input(GraphNode& node,
              const std::vector<int64_t>& values,
              const char* attr,
              const char* type_attr,
              const std::function<std::string(const std::vector<int64_t>&)>& add_const) {
    node.inputs.push_back(add_const(values));
    node.attrs.erase(attr);
    node.attrs[type_attr] = "type: DT_INT32";
}

}  // namespace

void to_tf_signature(const TapeEntry& e,
                     GraphNode& node,
                     const std::function<std::string(const std::vector<int64_t>&)>& add_const) {
    switch (e.op) {
        case Op::conv2d:
            window_op(e, node, true);
            break;
        case Op::max_pool:
        case Op::avg_pool:
            window_op(e, node, false);
            break;
        case Op::bias_add:
            node.attrs["data_format"] =
                text(e.attrs.has("nchw") && e.attrs.get<bool>("nchw") ? "NCHW" : "NHWC");
            node.attrs.erase("nchw");
            break;
        case Op::reshape: {
            const auto& dims = e.out_meta[0].shape.dims();
            as_input(
                node, std::vector<int64_t>(dims.begin(), dims.end()), "shape", "Tshape", add_const);
            break;
        }
        case Op::reduce_sum:
        case Op::reduce_mean:
        case Op::reduce_max:
        case Op::reduce_min:
        case Op::reduce_prod:
            as_input(node, e.attrs.get<std::vector<int64_t>>("axes"), "axes", "Tidx", add_const);
            break;
        case Op::transpose:
            as_input(node, e.attrs.get<std::vector<int64_t>>("perm"), "perm", "Tperm", add_const);
            break;
        case Op::expand_dims:
            as_input(node, {e.attrs.get<int64_t>("axis")}, "axis", "Tdim", add_const);
            break;
        case Op::sparse_softmax_xent:
            node.attrs["Tlabels"] = "type: " + tf_datatype_name(e.in_meta[1].dtype);
            break;
        case Op::cast:
            node.attrs["SrcT"] = "type: " + tf_datatype_name(e.in_meta[0].dtype);
            node.attrs["DstT"] = node.attrs["T"];
            node.attrs["Truncate"] = "b: false";
            node.attrs.erase("T");
            node.attrs.erase("dtype");
            break;
        case Op::read_variable:
            node.attrs["dtype"] = node.attrs["T"];
            node.attrs.erase("T");
            break;
        default:
            break;
    }
}

}  // namespace tapeflow

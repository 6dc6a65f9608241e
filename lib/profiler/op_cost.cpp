// op_flops(): 2 * (output elements) * (length of the contracted axis). For a convolution the
// contracted axis is the filter window times the input channels it sums over; the backprops run
// the same multiply-adds as the forward (TensorFlow's RegisterStatistics for Conv2D and its
// backprops count them alike).
#include "profiler/op_cost.hpp"

namespace tapeflow::profiler::detail {
namespace {

double d(int64_t v) {
    return static_cast<double>(v);
}

// Elements of the filter window a single output element sums: filter [KH, KW, IC, OC] (conv2d),
// or [KH, KW, C, M] for depthwise (each output sums over one input channel).
double window(const Shape& filter, bool depthwise) {
    if (filter.rank() != 4) return -1;
    return depthwise ? d(filter[0] * filter[1]) : d(filter[0] * filter[1] * filter[2]);
}

}  // namespace

double op_flops(Op op,
                std::span<const Tensor> inputs,
                std::span<const Tensor> outputs,
                const Attrs& attrs) {
    if (outputs.empty() || inputs.size() < 2) return -1;
    switch (op) {
        case Op::matmul:
        case Op::batch_matmul: {
            const Shape& a = inputs[0].shape();
            if (a.rank() < 2) return -1;
            const char* flag = op == Op::matmul ? "transpose_a" : "adj_x";
            const bool transposed = attrs.has(flag) && attrs.get<bool>(flag);
            const int64_t k = a[transposed ? -2 : -1];
            return 2 * d(outputs[0].num_elements()) * d(k);
        }
        case Op::conv2d:  // (x, w) -> y
        case Op::depthwise_conv2d:
            return 2 * d(outputs[0].num_elements()) *
                   window(inputs[1].shape(), op == Op::depthwise_conv2d);
        case Op::conv2d_backprop_input:  // (w, dy) -> dx
        case Op::depthwise_conv2d_backprop_input:
            return 2 * d(inputs[1].num_elements()) *
                   window(inputs[0].shape(), op == Op::depthwise_conv2d_backprop_input);
        case Op::conv2d_backprop_filter:  // (x, dy) -> dw
        case Op::depthwise_conv2d_backprop_filter:
            return 2 * d(inputs[1].num_elements()) *
                   window(outputs[0].shape(), op == Op::depthwise_conv2d_backprop_filter);
        default:
            return -1;
    }
}

}  // namespace tapeflow::profiler::detail

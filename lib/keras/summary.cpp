// Model.summary: Keras 3's table (rich's heavy-header box), params with thousands separators and
// the weights' size in bytes (Keras' readable_memory_size: powers of 1024, two decimals).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include <tapeflow/keras/functional.hpp>
#include <tapeflow/keras/model.hpp>

#include "keras/functional_node.hpp"

namespace tapeflow::keras {

namespace {

constexpr std::size_t kWidths[] = {31, 22, 13};  // text width of each column

std::string thousands(int64_t n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string readable_bytes(double bytes) {
    const char* units[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        ++u;
    }
    return fmt::format("{:.2f} {}", bytes, units[u]);
}

// Counts the characters a terminal shows (UTF-8 continuation bytes take no cell).
std::size_t cells(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s)
        n += (c & 0xC0) != 0x80;
    return n;
}

std::string pad(const std::string& s, std::size_t width, bool right) {
    const std::size_t n = cells(s);
    if (n >= width) return s;
    const std::string fill(width - n, ' ');
    return right ? fill + s : s + fill;
}

std::string repeat(const char* piece, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i)
        out += piece;
    return out;
}

// Keras' 4-column table of a functional model that is not a plain chain ("Connected to").
constexpr std::size_t kWidths4[] = {29, 24, 11, 24};

std::string rule(const char* left,
                 const char* fill,
                 const char* mid,
                 const char* right,
                 bool connected = false) {
    std::string out = left;
    const std::size_t n = connected ? 4 : 3;
    for (std::size_t i = 0; i < n; ++i) {
        if (i > 0) out += mid;
        out += repeat(fill, (connected ? kWidths4[i] : kWidths[i]) + 2);
    }
    return out + right + "\n";
}

std::string row(const char* bar,
                const std::string& a,
                const std::string& b,
                const std::string& c,
                const std::string* d = nullptr) {
    const std::size_t* w = d != nullptr ? kWidths4 : kWidths;
    std::string out = fmt::format("{} {} {} {} {} {} {}",
                                  bar,
                                  pad(a, w[0], false),
                                  bar,
                                  pad(b, w[1], false),
                                  bar,
                                  pad(c, w[2], true),
                                  bar);
    if (d != nullptr) out += fmt::format(" {} {}", pad(*d, w[3], false), bar);
    return out + "\n";
}

// Keras' sequential_like test: one input, and every layer call reads the previous one's only
// output (no branches, merges or shared layers).
bool sequential_like(const Functional& model) {
    if (model.inputs().size() != 1) return false;
    const keras::detail::Node* previous = model.inputs()[0].node().get();
    std::set<const layers::Layer*> seen;
    for (const auto& node : model.nodes()) {
        if (node->inputs.size() != 1 || node->inputs[0].node().get() != previous) return false;
        if (!seen.insert(node->layer.get()).second) return false;
        previous = node.get();
    }
    return true;
}

// "dense[0][0], dense_1[0][0]": the inputs of the layer's calls inside `model` ("-" for none).
std::string connections(const Functional& model, const layers::Layer& layer) {
    std::vector<const keras::detail::Node*> calls;  // in the layer's call order, as Keras
    for (const auto& node : model.nodes())
        if (node->layer.get() == &layer) calls.push_back(node.get());
    std::sort(calls.begin(), calls.end(), [](const auto* a, const auto* b) {
        return a->node_index < b->node_index;
    });
    std::string out;
    for (const auto* node : calls) {
        for (const KerasTensor& in : node->inputs) {
            if (!out.empty()) out += ", ";
            out += fmt::format("{}[{}][{}]", in.layer().name(), in.node_index(), in.tensor_index());
        }
    }
    return out.empty() ? "-" : out;
}

struct Counts {
    int64_t params = 0;
    double bytes = 0;
};

Counts count(const std::vector<Variable>& vars) {
    Counts c;
    for (const Variable& v : vars) {
        c.params += v.shape().num_elements();
        c.bytes += static_cast<double>(v.shape().num_elements() * dtype_size(v.dtype()));
    }
    return c;
}

}  // namespace

std::string Model::summary() const {
    std::string out = fmt::format("Model: \"{}\"\n", name());
    const auto* graph = dynamic_cast<const Functional*>(this);
    const bool wide = graph != nullptr && !sequential_like(*graph);
    const std::string connected_header = "Connected to";
    out += rule("\u250f", "\u2501", "\u2533", "\u2513", wide);
    out += row(
        "\u2503", "Layer (type)", "Output Shape", "Param #", wide ? &connected_header : nullptr);
    out += rule("\u2521", "\u2501", "\u2547", "\u2529", wide);
    const auto all = layers();
    for (std::size_t i = 0; i < all.size(); ++i) {
        const auto& layer = *all[i];
        const std::string shape =
            layer.output_shape() ? layers::shape_text(*layer.output_shape()) : "?";
        const int64_t params = layer.count_params();
        const std::string count_text =
            layer.built() || params > 0 ? thousands(params) : "0 (unbuilt)";
        const std::string connected = wide ? connections(*graph, layer) : "";
        out += row("\u2502",
                   fmt::format("{} ({})", layer.name(), layer.class_name()),
                   shape,
                   count_text,
                   wide ? &connected : nullptr);
        if (i + 1 < all.size()) out += rule("\u251c", "\u2500", "\u253c", "\u2524", wide);
    }
    out += rule("\u2514", "\u2500", "\u2534", "\u2518", wide);
    const Counts total = count(variables()), trainable = count(trainable_variables()),
                 frozen = count(non_trainable_variables());
    out += fmt::format(
        " Total params: {} ({})\n", thousands(total.params), readable_bytes(total.bytes));
    out += fmt::format(" Trainable params: {} ({})\n",
                       thousands(trainable.params),
                       readable_bytes(trainable.bytes));
    out += fmt::format(
        " Non-trainable params: {} ({})\n", thousands(frozen.params), readable_bytes(frozen.bytes));
    return out;
}

}  // namespace tapeflow::keras

// Model.summary: Keras 3's table (rich's heavy-header box), params with thousands separators and
// the weights' size in bytes (Keras' readable_memory_size: powers of 1024, two decimals).
#include <fmt/format.h>

#include <tapeflow/keras/model.hpp>

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

std::string rule(const char* left, const char* fill, const char* mid, const char* right) {
    return fmt::format("{}{}{}{}{}{}{}\n",
                       left,
                       repeat(fill, kWidths[0] + 2),
                       mid,
                       repeat(fill, kWidths[1] + 2),
                       mid,
                       repeat(fill, kWidths[2] + 2),
                       right);
}

std::string row(const char* bar, const std::string& a, const std::string& b, const std::string& c) {
    return fmt::format("{} {} {} {} {} {} {}\n",
                       bar,
                       pad(a, kWidths[0], false),
                       bar,
                       pad(b, kWidths[1], false),
                       bar,
                       pad(c, kWidths[2], true),
                       bar);
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
    out += rule("\u250f", "\u2501", "\u2533", "\u2513");
    out += row("\u2503", "Layer (type)", "Output Shape", "Param #");
    out += rule("\u2521", "\u2501", "\u2547", "\u2529");
    const auto all = layers();
    for (std::size_t i = 0; i < all.size(); ++i) {
        const auto& layer = *all[i];
        const std::string shape =
            layer.output_shape() ? layers::shape_text(*layer.output_shape()) : "?";
        const int64_t params = layer.count_params();
        const std::string count_text =
            layer.built() || params > 0 ? thousands(params) : "0 (unbuilt)";
        out += row(
            "\u2502", fmt::format("{} ({})", layer.name(), layer.class_name()), shape, count_text);
        if (i + 1 < all.size()) out += rule("\u251c", "\u2500", "\u253c", "\u2524");
    }
    out += rule("\u2514", "\u2500", "\u2534", "\u2518");
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

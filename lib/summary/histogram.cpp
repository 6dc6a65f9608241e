// TF2 histogram bucketing (tensorboard.plugins.histogram.summary_v2, "v3" since TensorBoard 2.8).
#include <algorithm>
#include <cmath>

#include "summary/encoders.hpp"

namespace tapeflow::summary {

std::vector<double> histogram_buckets(const std::vector<double>& values, int k) {
    std::vector<double> rows(static_cast<std::size_t>(k) * 3, 0.0);
    if (k == 0 || values.empty()) return rows;
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    const double min = *lo, max = *hi;
    if (min == max) {  // singular: every bucket is [v, v], the last one holds all the values
        for (int i = 0; i < k; ++i)
            rows[3 * i] = rows[3 * i + 1] = min;
        rows[3 * (k - 1) + 2] = static_cast<double>(values.size());
        return rows;
    }
    const double width = (max - min) / k;
    for (double x : values) {
        const double b = std::floor((x - min) / width);
        const int i =
            b >= k - 1 ? k - 1 : static_cast<int>(b);  // the maximum lands in the last bucket
        rows[3 * i + 2] += 1;
    }
    // Edges = linspace(min, max, k + 1) with the last forced to exactly max.
    for (int i = 0; i < k; ++i) {
        rows[3 * i] = min + i * width;
        rows[3 * i + 1] = i + 1 == k ? max : min + (i + 1) * width;
    }
    return rows;
}

}  // namespace tapeflow::summary

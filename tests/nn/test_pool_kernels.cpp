// The vectorised MaxPool / AvgPool kernels (lib/kernels/cpu/pool_cpu.cpp) against a plain loop
// written from TensorFlow's rules: SAME pads (total = max((out - 1) * stride + k - in, 0), the
// smaller half before), the first maximum of a window in row-major order takes the gradient, a
// NaN wins only as a window's first cell, averages divide by the non-padding cells. Values and
// gradients must match bit for bit, for channel counts around the vector widths, odd sizes,
// float32 and float64, on 1 and 2 threads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "nn_testing.hpp"

namespace {

using namespace nn_testing;

struct Geometry {
    int64_t n, h, w, c, k, s;
    bool same;
    int64_t oh() const { return same ? (h + s - 1) / s : (h - k) / s + 1; }
    int64_t ow() const { return same ? (w + s - 1) / s : (w - k) / s + 1; }
    int64_t pad(int64_t in, int64_t out) const {
        return same ? std::max<int64_t>((out - 1) * s + k - in, 0) / 2 : 0;
    }
};

// Computed in T, as the kernels do (a float32 1/9 is not the double one rounded).
template <class T>
struct Reference {
    std::vector<T> max, avg, max_grad, avg_grad;
};

// g: the upstream gradient (output shape) of both pools.
template <class T>
Reference<T> reference(const Geometry& q, const std::vector<T>& x, const std::vector<T>& g) {
    const int64_t oh = q.oh(), ow = q.ow();
    const int64_t pt = q.pad(q.h, oh), pl = q.pad(q.w, ow);
    Reference<T> r;
    r.max.assign(static_cast<std::size_t>(q.n * oh * ow * q.c), 0);
    r.avg = r.max;
    r.max_grad.assign(x.size(), 0);
    r.avg_grad.assign(x.size(), 0);
    const auto at = [&](int64_t n, int64_t i, int64_t j, int64_t c) {
        return static_cast<std::size_t>(((n * q.h + i) * q.w + j) * q.c + c);
    };
    for (int64_t n = 0; n < q.n; ++n)
        for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j)
                for (int64_t c = 0; c < q.c; ++c) {
                    std::vector<std::size_t> cells;
                    for (int64_t a = i * q.s - pt; a < i * q.s - pt + q.k; ++a)
                        for (int64_t b = j * q.s - pl; b < j * q.s - pl + q.k; ++b)
                            if (a >= 0 && a < q.h && b >= 0 && b < q.w)
                                cells.push_back(at(n, a, b, c));
                    std::size_t best = cells[0];
                    T sum = 0;
                    for (const std::size_t e : cells) {
                        if (x[e] > x[best]) best = e;
                        sum += x[e];
                    }
                    const auto o = static_cast<std::size_t>(((n * oh + i) * ow + j) * q.c + c);
                    r.max[o] = x[best];
                    r.avg[o] = sum * (T(1) / static_cast<T>(cells.size()));
                    r.max_grad[best] += g[o];
                    const T share = g[o] * (T(1) / static_cast<T>(cells.size()));
                    for (const std::size_t e : cells)
                        r.avg_grad[e] += share;
                }
    return r;
}

// Bitwise equality (NaN equals NaN).
template <class T>
void check_same(const tf::Tensor& got, const std::vector<T>& want, const char* what) {
    INFO(what);
    const std::vector<T> v = got.to_vector<T>();
    REQUIRE(v.size() == want.size());
    std::size_t bad = 0;
    for (std::size_t e = 0; e < v.size(); ++e) {
        const T w = want[e];
        if (std::memcmp(&v[e], &w, sizeof(T)) != 0 && !(std::isnan(v[e]) && std::isnan(w))) {
            if (bad++ == 0)
                UNSCOPED_INFO("first difference at " << e << ": " << v[e] << " vs " << w);
        }
    }
    CHECK(bad == 0);
}

// Small integers (ties everywhere, exact sums in either type), some -inf and NaN cells.
std::vector<double> tie_values(std::size_t count, uint32_t seed, bool with_nan) {
    std::vector<double> x(count);
    uint32_t s = seed;
    for (auto& v : x) {
        s = s * 1664525u + 1013904223u;
        const uint32_t r = s >> 24;
        v = static_cast<double>(r % 5) - 2;
        if (with_nan && r % 23 == 0) v = std::numeric_limits<double>::quiet_NaN();
        if (r % 31 == 0) v = -std::numeric_limits<double>::infinity();
    }
    return x;
}

template <class T>
void check_geometry(const Geometry& q, int threads, bool with_nan) {
    const auto dtype = std::is_same_v<T, float> ? tf::float32 : tf::float64;
    const std::vector<double> xd = tie_values(static_cast<std::size_t>(q.n * q.h * q.w * q.c),
                                              static_cast<uint32_t>(q.c * 131 + q.h),
                                              with_nan);
    std::vector<double> gd(static_cast<std::size_t>(q.n * q.oh() * q.ow() * q.c));
    for (std::size_t e = 0; e < gd.size(); ++e)
        gd[e] = static_cast<double>(e % 7) * 0.25 - 0.5;  // exact in float32
    const Reference<T> want =
        reference(q, std::vector<T>(xd.begin(), xd.end()), std::vector<T>(gd.begin(), gd.end()));
    const tf::Tensor x = tf::constant(xd, tf::Shape{q.n, q.h, q.w, q.c}, dtype);
    const tf::Tensor g = tf::constant(gd, tf::Shape{q.n, q.oh(), q.ow(), q.c}, dtype);
    const char* padding = q.same ? "SAME" : "VALID";
    const int saved = tf::num_threads();
    tf::set_num_threads(threads);
    tf::GradientTape tape;
    tape.watch(x);
    const tf::Tensor ym = tf::nn::max_pool2d(x, q.k, q.s, padding);
    const tf::Tensor ya = tf::nn::avg_pool2d(x, q.k, q.s, padding);
    const auto grads = tape.gradient(tf::reduce_sum(ym * g), x);
    tf::GradientTape tape2;
    tape2.watch(x);
    const tf::Tensor ya2 = tf::nn::avg_pool2d(x, q.k, q.s, padding);
    const auto agrads = tape2.gradient(tf::reduce_sum(ya2 * g), x);
    tf::set_num_threads(saved);
    check_same<T>(ym, want.max, "max_pool2d");
    check_same<T>(grads.dense(), want.max_grad, "max_pool2d gradient");
    if (!with_nan) {  // a NaN spreads over every window it sits in: compared by max only
        check_same<T>(ya, want.avg, "avg_pool2d");
        check_same<T>(agrads.dense(), want.avg_grad, "avg_pool2d gradient");
    }
}

}  // namespace

TEST_CASE("vectorised pooling kernels match TensorFlow's rules bit for bit", "[nn][pool]") {
    // Channels below, at and around the float32 / float64 vector widths (4, 8, 16 lanes).
    for (const int64_t c : {1, 3, 4, 7, 8, 9, 16, 17, 33}) {
        for (const bool same : {true, false}) {
            for (const auto& [k, s] :
                 {std::pair<int64_t, int64_t>{2, 2}, {3, 2}, {3, 1}, {2, 3}, {9, 4}}) {
                for (const int threads : {1, 2}) {
                    if (!same && k > 5) continue;  // VALID needs the window inside the input
                    const Geometry q{3, 7, 5, c, k, s, same};
                    INFO("c " << c << (same ? " SAME" : " VALID") << " k " << k << " s " << s
                              << " on " << threads << " threads");
                    check_geometry<float>(q, threads, false);
                    check_geometry<double>(q, threads, false);
                    check_geometry<float>(q, threads, true);
                    check_geometry<double>(q, threads, true);
                }
            }
        }
    }
}

TEST_CASE("max_pool2d ties and NaNs: the first cell in row-major order wins", "[nn][pool]") {
    for (const auto dtype : {tf::float32, tf::float64}) {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        // One 2x2 window, 9 channels (a vector of 8 floats and a scalar tail): channel by channel,
        // the four cells in the order (0,0), (0,1), (1,0), (1,1).
        const double pattern[9][4] = {{1, 1, 1, 1},
                                      {0, 2, 2, 0},
                                      {0, 0, 3, 3},
                                      {nan, 5, 5, 5},
                                      {5, nan, 6, 1},
                                      {1, 1, 1, nan},
                                      {-1, -1, -2, -1},
                                      {nan, nan, 1, 2},
                                      {-2, 7, 7, nan}};
        std::vector<double> xd;
        for (int cell = 0; cell < 4; ++cell)
            for (const auto& ch : pattern)
                xd.push_back(ch[cell]);
        const tf::Tensor x = tf::constant(xd, tf::Shape{1, 2, 2, 9}, dtype);
        tf::GradientTape tape;
        tape.watch(x);
        const tf::Tensor y = tf::nn::max_pool2d(x, 2, 2, "VALID");
        const tf::Tensor dx = tape.gradient(tf::reduce_sum(y), x).dense();
        const std::vector<double> v = values(y);
        const std::vector<double> want{1, 2, 3, nan, 6, 1, -1, nan, 7};
        const int winner[9] = {0, 1, 2, 0, 2, 0, 0, 0, 1};  // the cell that takes the gradient
        const std::vector<double> d = values(dx);
        for (int ch = 0; ch < 9; ++ch) {
            INFO("channel " << ch);
            if (std::isnan(want[ch])) {
                CHECK(std::isnan(v[ch]));
            } else {
                CHECK(v[ch] == want[ch]);
            }
            for (int cell = 0; cell < 4; ++cell)
                CHECK(d[static_cast<std::size_t>(cell * 9 + ch)] == (cell == winner[ch] ? 1 : 0));
        }
    }
}

TEST_CASE("a SAME window far larger than the input pools the whole plane", "[nn][pool]") {
    // 65536 x 65536 cells, of which 3 x 4 exist: the kernels size their cell lists by the input.
    const tf::Tensor x = tf::constant(std::vector<double>{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8},
                                      tf::Shape{1, 3, 4, 1},
                                      tf::float32);
    const int64_t k = int64_t{1} << 16;
    CHECK(values(tf::nn::max_pool2d(x, {1, k, k, 1}, 1, "SAME")) == std::vector<double>(12, 9));
    CHECK(values(tf::nn::avg_pool2d(x, {1, k, k, 1}, 1, "SAME")) ==
          std::vector<double>(12, static_cast<double>(52.0f * (1.0f / 12.0f))));
}

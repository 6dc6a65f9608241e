// DLPack: zero-copy export and import, the deleter's single call, byte_offset, strided imports
// (copied), and unsupported dtypes and devices (InvalidArgumentError naming them).
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/dlpack.hpp>
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace dl = tapeflow::experimental::dlpack;

namespace {

// A DLManagedTensor over memory the test owns, counting its deleter's calls.
struct Foreign {
    std::vector<float> data;
    std::vector<int64_t> shape, strides;
    int deleted = 0;
    DLManagedTensor managed{};

    DLManagedTensor* make(std::vector<int64_t> dims,
                          std::vector<int64_t> st = {},
                          uint64_t byte_offset = 0) {
        shape = std::move(dims);
        strides = std::move(st);
        DLTensor& t = managed.dl_tensor;
        t.data = data.data();
        t.device = {kDLCPU, 0};
        t.ndim = static_cast<int32_t>(shape.size());
        t.dtype = {kDLFloat, 32, 1};
        t.shape = shape.data();
        t.strides = strides.empty() ? nullptr : strides.data();
        t.byte_offset = byte_offset;
        managed.manager_ctx = this;
        managed.deleter = [](DLManagedTensor* self) {
            ++static_cast<Foreign*>(self->manager_ctx)->deleted;
        };
        return &managed;
    }
};

}  // namespace

TEST_CASE("dlpack: to_dlpack shares the buffer and describes it", "[dlpack]") {
    auto x = tf::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    DLManagedTensor* m = dl::to_dlpack(x);
    const DLTensor& t = m->dl_tensor;
    REQUIRE(t.data == x.raw_data());
    REQUIRE((t.device.device_type == kDLCPU && t.device.device_id == 0));
    REQUIRE(t.ndim == 2);
    REQUIRE((t.shape[0] == 2 && t.shape[1] == 3 && t.strides[0] == 3 && t.strides[1] == 1));
    REQUIRE((t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1));
    REQUIRE(t.byte_offset == 0);
    // The buffer outlives every tapeflow handle until the deleter runs.
    const void* data = x.raw_data();
    x = tf::Tensor();
    REQUIRE(static_cast<const float*>(data)[5] == 6.f);
    m->deleter(m);
}

TEST_CASE("dlpack: a round trip keeps the data pointer, for every dtype", "[dlpack]") {
    const std::vector<tf::Tensor> tensors = {
        tf::constant({1.f, 2.f}),
        tf::constant({1.0, 2.0}),
        tf::constant({1.f, 2.f}).cast(tf::float16),
        tf::constant({1.f, 2.f}).cast(tf::bfloat16),
        tf::constant({1, 2}),
        tf::constant({int64_t{1}, int64_t{2}}),
        tf::constant({1.f, 2.f}).cast(tf::uint8),
        tf::constant({true, false}),
        tf::constant(5.f),
        tf::zeros({0, 3}),
        tf::reshape(tf::range(0, 24, 1), {2, 3, 4}),
    };
    for (const tf::Tensor& x : tensors) {
        CAPTURE(x.dtype(), x.shape().dims());
        tf::Tensor y = dl::from_dlpack(dl::to_dlpack(x));
        REQUIRE(y.dtype() == x.dtype());
        REQUIRE(y.shape() == x.shape());
        if (x.nbytes() != 0) REQUIRE(y.raw_data() == x.raw_data());
        REQUIRE(y.cast(tf::float64).to_vector<double>() == x.cast(tf::float64).to_vector<double>());
    }
}

TEST_CASE("dlpack: from_dlpack calls the deleter once, when the last tensor goes", "[dlpack]") {
    Foreign f;
    f.data = {0, 1, 2, 3, 4, 5, 6};
    {
        tf::Tensor a = dl::from_dlpack(f.make({2, 3}, {}, sizeof(float)));  // byte_offset: 1 float
        REQUIRE(a.raw_data() == f.data.data() + 1);
        REQUIRE(a.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
        tf::Tensor b = tf::reshape(a, {3, 2});
        tf::Tensor c = tf::unstack(a)[1];
        a = tf::Tensor();
        tf::Tensor sum = tf::add(b, tf::constant(1.f));
        b = tf::Tensor();
        REQUIRE(f.deleted == 0);
        REQUIRE(c.to_vector<float>() == std::vector<float>{4, 5, 6});
        REQUIRE(sum.to_vector<float>() == std::vector<float>{2, 3, 4, 5, 6, 7});
    }
    REQUIRE(f.deleted == 1);
}

TEST_CASE("dlpack: strided imports are copied into a compact tensor", "[dlpack]") {
    Foreign f;
    f.data = {1, 2, 3, 4, 5, 6};  // a 2x3 matrix stored column-major: [[1, 3, 5], [2, 4, 6]]
    tf::Tensor a = dl::from_dlpack(f.make({2, 3}, {1, 2}));
    REQUIRE(f.deleted == 1);  // copied, so the foreign memory is released at once
    REQUIRE(a.to_vector<float>() == std::vector<float>{1, 3, 5, 2, 4, 6});
    // Compact strides (and any stride of a size-1 dimension) are no copy.
    Foreign g;
    g.data = {1, 2, 3};
    tf::Tensor b = dl::from_dlpack(g.make({1, 3}, {99, 1}));
    REQUIRE(b.raw_data() == g.data.data());
    // Negative strides: a reversed view.
    Foreign h;
    h.data = {1, 2, 3};
    DLManagedTensor* m = h.make({3}, {-1}, 2 * sizeof(float));
    REQUIRE(dl::from_dlpack(m).to_vector<float>() == std::vector<float>{3, 2, 1});
}

TEST_CASE("dlpack: unsupported dtypes and devices are InvalidArgumentError", "[dlpack]") {
    auto refused = [](DLManagedTensor* m, const char* words) {
        CAPTURE(words);
        REQUIRE_THROWS_AS(dl::from_dlpack(m), tf::errors::InvalidArgumentError);
    };
    for (auto [type, words] : {std::pair<DLDataType, const char*>{{kDLComplex, 64, 1}, "complex64"},
                               {{kDLInt, 8, 1}, "int8"},
                               {{kDLFloat, 32, 4}, "4 lanes"},
                               {{kDLUInt, 16, 1}, "uint16"}}) {
        Foreign f;
        f.data = {1, 2};
        DLManagedTensor* m = f.make({2});
        m->dl_tensor.dtype = type;
        REQUIRE_THROWS_WITH(dl::from_dlpack(m), Catch::Contains(words));
        REQUIRE(f.deleted == 1);  // ownership was taken: released on the error too
    }
    Foreign f;
    f.data = {1, 2};
    DLManagedTensor* m = f.make({2});
    m->dl_tensor.device = {kDLOpenCL, 0};
    REQUIRE_THROWS_WITH(dl::from_dlpack(m), Catch::Contains("device type 4"));
    refused(nullptr, "null");
}

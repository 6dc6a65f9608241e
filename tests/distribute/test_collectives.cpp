// tf::distribute collectives against the single-process result, run by meson without mpirun (one
// process) and under mpirun -np 2 and -np 4: every process computes locally what the reduction of
// all processes' inputs must be and compares. Every process runs every case in the same order.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace td = tapeflow::distribute;
using Catch::Contains;
using td::ReduceOp;

namespace {

// Process r's input: element i is (r + 1) * (i % 7) - 3 * r, in `dtype`.
tf::Tensor input_of(int r, const tf::Shape& shape, tf::DType dtype) {
    std::vector<double> v(static_cast<std::size_t>(shape.num_elements()));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = (r + 1) * static_cast<double>(i % 7) - 3.0 * r;
    return tf::constant(v, shape, tf::DType::float64).cast(dtype);
}

// The reduction of every process's input, computed here alone in float64.
std::vector<double> expected(ReduceOp op, const tf::Shape& shape, tf::DType dtype) {
    const int n = td::size();
    std::vector<double> acc = input_of(0, shape, dtype).to_vector<double>();
    for (int r = 1; r < n; ++r) {
        const std::vector<double> x = input_of(r, shape, dtype).to_vector<double>();
        for (std::size_t i = 0; i < acc.size(); ++i) {
            if (op == ReduceOp::sum || op == ReduceOp::mean) acc[i] += x[i];
            if (op == ReduceOp::max) acc[i] = std::max(acc[i], x[i]);
            if (op == ReduceOp::min) acc[i] = std::min(acc[i], x[i]);
        }
    }
    if (op == ReduceOp::mean) {
        for (double& a : acc)
            a /= n;
    }
    return acc;
}

}  // namespace

TEST_CASE("rank, size and local_rank describe the process group", "[distribute]") {
    td::init();
    CHECK(td::size() >= 1);
    CHECK(td::rank() >= 0);
    CHECK(td::rank() < td::size());
    CHECK(td::local_rank() >= 0);
    CHECK(td::local_rank() <= td::rank());
    CHECK(td::timeout_seconds() > 0);
}

TEST_CASE("all_reduce: sum, mean, max, min for every numeric dtype and several shapes",
          "[distribute]") {
    const std::vector<tf::Shape> shapes{
        tf::Shape{}, tf::Shape{0}, tf::Shape{3, 5}, tf::Shape{2, 1, 4}, tf::Shape{70001}};
    for (tf::DType dtype : {tf::DType::float32,
                            tf::DType::float64,
                            tf::DType::float16,
                            tf::DType::bfloat16,
                            tf::DType::int32,
                            tf::DType::int64,
                            tf::DType::uint8}) {
        for (ReduceOp op : {ReduceOp::sum, ReduceOp::mean, ReduceOp::max, ReduceOp::min}) {
            if (op == ReduceOp::mean && !tf::is_floating(dtype)) continue;
            if (dtype == tf::DType::uint8 && op == ReduceOp::sum)
                continue;  // wraps around; max/min cover it
            for (const tf::Shape& shape : shapes) {
                INFO(tf::dtype_name(dtype)
                     << " op " << static_cast<int>(op) << " shape " << shape.debug_string());
                const tf::Tensor in =
                    dtype == tf::DType::uint8
                        ? tf::abs(input_of(td::rank(), shape, tf::DType::float64)).cast(dtype)
                        : input_of(td::rank(), shape, dtype);
                const tf::Tensor out = td::all_reduce(in, op);
                REQUIRE(out.shape() == shape);
                REQUIRE(out.dtype() == dtype);
                std::vector<double> want;
                if (dtype == tf::DType::uint8) {
                    want = tf::abs(input_of(0, shape, tf::DType::float64)).to_vector<double>();
                    for (int r = 1; r < td::size(); ++r) {
                        const auto x =
                            tf::abs(input_of(r, shape, tf::DType::float64)).to_vector<double>();
                        for (std::size_t i = 0; i < want.size(); ++i) {
                            want[i] = op == ReduceOp::max ? std::max(want[i], x[i])
                                                          : std::min(want[i], x[i]);
                        }
                    }
                } else {
                    want = expected(op, shape, dtype);
                }
                const std::vector<double> got = out.to_vector<double>();
                const double tol = dtype == tf::DType::bfloat16  ? 0.05
                                   : dtype == tf::DType::float16 ? 0.01
                                                                 : 1e-6;
                for (std::size_t i = 0; i < got.size(); ++i) {
                    // Integer mean is excluded; float16/bfloat16 are reduced in float32, rounded
                    // once.
                    REQUIRE(got[i] == Approx(want[i]).epsilon(tol).margin(tol));
                }
            }
        }
    }
}

TEST_CASE("all_reduce of bool: max is any, min is all", "[distribute]") {
    const tf::Tensor mine = tf::constant({td::rank() == 0, true, false});
    CHECK(td::all_reduce(mine, ReduceOp::max).to_vector<bool>() ==
          std::vector<bool>{true, true, false});
    CHECK(td::all_reduce(mine, ReduceOp::min).to_vector<bool>() ==
          std::vector<bool>{td::size() == 1, true, false});
}

TEST_CASE("broadcast: root's tensor everywhere, whatever the others passed", "[distribute]") {
    const int root = td::size() - 1;
    // Non-roots pass other shapes and dtypes: only root's matters.
    const tf::Tensor mine = td::rank() == root ? input_of(root, {4, 3}, tf::DType::float32)
                                               : tf::zeros({td::rank() + 1}, tf::DType::int32);
    const tf::Tensor out = td::broadcast(mine, root);
    CHECK(out.shape() == tf::Shape{4, 3});
    CHECK(out.dtype() == tf::DType::float32);
    CHECK(out.to_vector<float>() == input_of(root, {4, 3}, tf::DType::float32).to_vector<float>());
}

TEST_CASE("all_gather: uneven first dimensions, in rank order, including empty ones",
          "[distribute]") {
    for (tf::DType dtype :
         {tf::DType::float32, tf::DType::int64, tf::DType::float16, tf::DType::bool_}) {
        // Process r has r rows (rank 0: none) of 3 columns.
        const tf::Tensor mine = input_of(td::rank(), {td::rank(), 3}, dtype);
        const std::vector<tf::Tensor> all = td::all_gather(mine);
        REQUIRE(static_cast<int>(all.size()) == td::size());
        for (int r = 0; r < td::size(); ++r) {
            CHECK(all[static_cast<std::size_t>(r)].shape() == tf::Shape{r, 3});
            CHECK(all[static_cast<std::size_t>(r)].dtype() == dtype);
            CHECK(all[static_cast<std::size_t>(r)].to_vector<double>() ==
                  input_of(r, {r, 3}, dtype).to_vector<double>());
        }
    }
}

TEST_CASE("broadcast_variables: every process gets root's values", "[distribute]") {
    tf::Variable a(input_of(td::rank(), {2, 3}, tf::DType::float32), {.name = "bv_a"});
    tf::Variable b(input_of(td::rank(), {5}, tf::DType::float64), {.name = "bv_b"});
    td::broadcast_variables({a, b});
    CHECK(a.value().to_vector<float>() ==
          input_of(0, {2, 3}, tf::DType::float32).to_vector<float>());
    CHECK(b.value().to_vector<double>() ==
          input_of(0, {5}, tf::DType::float64).to_vector<double>());
    td::barrier();
}

TEST_CASE("shard: each process reads its part of a dataset", "[distribute]") {
    auto ds = td::shard(tf::data::from_tensor_slices({tf::range(0, 12, 1, tf::DType::int32)}));
    std::vector<int32_t> mine;
    for (const auto& element : ds)
        mine.push_back(element[0].item<int32_t>());
    const int64_t total =
        td::all_reduce(tf::constant(static_cast<int64_t>(mine.size())), ReduceOp::sum)
            .item<int64_t>();
    CHECK(total == 12);
    for (int32_t v : mine)
        CHECK(v % td::size() == td::rank());
}

TEST_CASE("collectives: bad arguments raise InvalidArgumentError on every process",
          "[distribute][errors]") {
    CHECK_THROWS_WITH(td::all_reduce(tf::constant({1, 2}), ReduceOp::mean),
                      Contains("needs a floating dtype"));
    CHECK_THROWS_AS(td::all_reduce(tf::constant({true}), ReduceOp::sum),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(td::broadcast(tf::constant(1.f), td::size()),
                      Contains("root must be in [0, "));
    CHECK_THROWS_AS(td::all_reduce(tf::Tensor()), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(td::set_timeout_seconds(-1), tf::errors::InvalidArgumentError);
    if (td::size() > 1) {
        // Different shapes: every process learns every shape, by rank.
        const tf::Tensor mine = tf::zeros({td::rank() + 1});
        CHECK_THROWS_WITH(td::all_reduce(mine),
                          Contains("every process must pass the same shape and dtype") &&
                              Contains("rank 0: [1] float32") && Contains("rank 1: [2] float32"));
        const tf::Tensor typed =
            td::rank() == 0 ? tf::zeros({2}) : tf::zeros({2}, tf::DType::float64);
        CHECK_THROWS_AS(td::all_reduce(typed), tf::errors::InvalidArgumentError);
        CHECK_THROWS_WITH(td::all_gather(typed), Contains("same dtype"));
    }
    td::barrier();  // still usable after the errors
    CHECK(td::all_reduce(tf::constant(1.f)).item<float>() == static_cast<float>(td::size()));
}

TEST_CASE("all_reduce of CUDA tensors: NCCL, or host staging when the GPUs cannot be used",
          "[distribute][gpu]") {
    // Every process takes the same branch: the GPU count is a property of the machine image.
    if (!tf::cuda::is_available()) {
        WARN("no usable GPU: the CUDA path of all_reduce is not exercised here");
        return;
    }
    // One GPU per process where there are enough (NCCL), else processes share one (host staging).
    const tf::Device gpu = tf::Device::cuda(td::local_rank() % tf::cuda::device_count());
    for (tf::DType dtype : {tf::DType::float32, tf::DType::float16, tf::DType::int64}) {
        for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::mean}) {
            if (op == ReduceOp::mean && !tf::is_floating(dtype)) continue;
            INFO(tf::dtype_name(dtype) << " op " << static_cast<int>(op));
            const tf::Tensor out = td::all_reduce(input_of(td::rank(), {1000}, dtype).to(gpu), op);
            CHECK(out.device() == gpu);
            const std::vector<double> got = out.to_vector<double>();
            const std::vector<double> want = expected(op, {1000}, dtype);
            for (std::size_t i = 0; i < got.size(); ++i)
                REQUIRE(got[i] == Approx(want[i]).epsilon(0.01).margin(0.01));
        }
    }
}

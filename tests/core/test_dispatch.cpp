// The execution skeleton: op table, kernel registry and apply() (validate -> allocate -> dispatch).
#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "ops/apply.hpp"
#include "ops/dispatch.hpp"

namespace tf = tapeflow;
using tf::Op;

TEST_CASE("every op in op_list.def has a name, a TF type and a CPU kernel", "[dispatch]") {
    // Ops dispatched on `none` never run a kernel (views and tape-only ops).
    for (int i = 0; i < tf::kNumOps; ++i) {
        const auto op = static_cast<Op>(i);
        CAPTURE(tf::op_name(op));
        CHECK_FALSE(tf::op_name(op).empty());
        CHECK_FALSE(tf::op_type(op).empty());
        CHECK(tf::kernel_registry().has(op, tf::DeviceType::cpu) ==
              (tf::op_dispatch(op) != tf::DispatchOn::none));
    }
    CHECK(tf::op_type(Op::cast) == "Cast");
    CHECK(tf::op_name(Op::one_hot) == "one_hot");
    CHECK(tf::op_arity(Op::fill) == 0);
}

TEST_CASE("a missing kernel raises UnimplementedError naming op, device and dtype",
          "[dispatch][errors]") {
    try {
        (void)tf::kernel_registry().find(Op::random_normal, tf::Device::cpu(), tf::int32);
        FAIL("expected UnimplementedError");
    } catch (const tf::errors::UnimplementedError& e) {
        const std::string what = e.what();
        CHECK_THAT(what,
                   Catch::Contains("random_normal") && Catch::Contains("/device:CPU:0") &&
                       Catch::Contains("int32") && Catch::Contains("[Op:RandomStandardNormal]"));
        CHECK(e.code() == tf::errors::Code::unimplemented);
    }
    if (!tf::cuda::is_available()) {
        // Without a GPU build or device, a CUDA dispatch still fails cleanly.
        CHECK_THROWS_AS(tf::kernel_registry().find(Op::sqrt, tf::Device::cuda(0), tf::int32),
                        tf::errors::UnimplementedError);
    }
}

TEST_CASE("apply allocates outputs and runs the kernel", "[dispatch]") {
    auto x = tf::constant({1.5f, 2.5f});
    auto y = tf::apply(Op::cast, {x}, {x.shape(), tf::float64});
    CHECK(y.dtype() == tf::float64);
    CHECK(y.to_vector<double>() == std::vector<double>{1.5, 2.5});
    auto z = tf::apply(Op::fill, {}, {tf::Shape{2}, tf::int32}, tf::Attrs().set("value", 3.0));
    CHECK(z.to_vector<int>() == std::vector<int>{3, 3});
}

TEST_CASE("outputs that alias an input share its storage and run no kernel", "[dispatch]") {
    auto x = tf::constant({1, 2, 3, 4, 5, 6});
    // Op::random_normal has no int32 kernel: a pure view must not dispatch at all.
    std::vector<tf::OutputSpec> halves{{tf::Shape{3}, tf::int32, 0, 0},
                                       {tf::Shape{3}, tf::int32, 0, 12}};
    auto parts = tf::apply_multi(Op::identity, std::span<const tf::Tensor>(&x, 1), halves);
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].to_vector<int>() == std::vector<int>{1, 2, 3});
    CHECK(parts[1].to_vector<int>() == std::vector<int>{4, 5, 6});
    CHECK(parts[1].data<int>() == x.data<int>() + 3);
    CHECK(parts[0].id() != x.id());
}

TEST_CASE("apply validates its inputs", "[dispatch][errors]") {
    auto x = tf::constant({1.f});
    CHECK_THROWS_AS(tf::apply(Op::cast, {x, x}, {x.shape(), tf::float32}),
                    tf::errors::InternalError);
    CHECK_THROWS_AS(tf::apply(Op::cast, {tf::Tensor()}, {x.shape(), tf::float32}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::apply(Op::cast, {tf::Tensor()}, {x.shape(), tf::float32}),
                      Catch::Contains("undefined") && Catch::Contains("[Op:Cast]"));
}

TEST_CASE("attributes are typed and named", "[dispatch]") {
    tf::Attrs a;
    a.set("axis", int64_t{2}).set("value", 1.5).set("perm", std::vector<int64_t>{1, 0});
    CHECK(a.get<int64_t>("axis") == 2);
    CHECK(a.get<double>("value") == 1.5);
    CHECK(a.get<std::vector<int64_t>>("perm") == std::vector<int64_t>{1, 0});
    a.set("axis", int64_t{3});
    CHECK(a.get<int64_t>("axis") == 3);
    CHECK(a.items().size() == 3);
    CHECK_THROWS_AS(a.get<double>("axis"), tf::errors::InternalError);
    CHECK_THROWS_AS(a.get<double>("missing"), tf::errors::InternalError);
}

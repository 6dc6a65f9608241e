// The registry's completeness: every op of lib/ops/op_list.def has a gradient row (nullptr meaning
// "not differentiable" counts; a formula needs a JVP rule beside it), a CPU kernel and, in a build
// with the CUDA backend, a CUDA kernel (unless it never runs a kernel), a row in the op-case table
// (tests/ops/op_cases.cpp) and an entry in docs/ops.md; the rows of the kernel tables
// (lib/kernels/shared/*.def) are registered for their dtype sets on each device. Each failure names
// the op and what it lacks.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "kernels/shared/elementwise_host.hpp"
#include "ops/dispatch.hpp"
#include "ops/op.hpp"
#include "ops/op_cases.hpp"
#include "ops/op_def.hpp"
#include "ops/training_ops.hpp"

namespace tf = tapeflow;
using tf::Op;

namespace {

// The op names of docs/ops.md's table: the first cell of each row, "| `name` | ...".
std::set<std::string> documented_ops() {
    const char* dir = std::getenv("TAPEFLOW_DOCS_DIR");
    REQUIRE(dir != nullptr);  // set by tests/meson.build
    std::ifstream in(std::string(dir) + "/ops.md");
    REQUIRE(in.good());
    std::set<std::string> names;
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("| `", 0) != 0) continue;
        const std::size_t end = line.find('`', 3);
        if (end != std::string::npos) names.insert(line.substr(3, end - 3));
    }
    return names;
}

}  // namespace

TEST_CASE("every op has a gradient row, kernels, an op-case row and a docs entry", "[registry]") {
    std::set<Op> covered;
    for (const auto& c : tf::op_cases::all_cases())
        covered.insert(c.covers.begin(), c.covers.end());
    for (const auto& n : tf::op_cases::ops_without_cases())
        covered.insert(n.op);
    const std::set<std::string> documented = documented_ops();
    const tf::KernelRegistry& registry = tf::kernel_registry();
    // A build with the CUDA backend registers CUDA kernels; then every dispatched op needs one.
    bool cuda_built = false;
    for (int i = 0; i < tf::kNumOps; ++i) {
        cuda_built = cuda_built || registry.has(static_cast<Op>(i), tf::DeviceType::cuda);
    }
    std::string missing;
    auto lacks = [&](Op op, const char* what) {
        missing.append("\n  ").append(tf::op_name(op)).append(": ").append(what);
    };
    for (int i = 0; i < tf::kNumOps; ++i) {
        const auto op = static_cast<Op>(i);
        try {
            const tf::OpDef& row = tf::op_def(op);
            if (row.backward != nullptr && row.jvp == nullptr) {
                lacks(op, "a gradient formula but no JVP rule (forward mode)");
            }
        } catch (const tf::errors::InternalError&) {
            lacks(op, "no gradient row (a row with nullptr says 'not differentiable')");
        }
        const bool dispatched = tf::op_dispatch(op) != tf::DispatchOn::none;
        if (dispatched && !registry.has(op, tf::DeviceType::cpu)) lacks(op, "no CPU kernel");
        if (!dispatched && registry.has(op, tf::DeviceType::cpu)) {
            lacks(op, "a CPU kernel, but op_list.def dispatches it on `none`");
        }
        if (cuda_built && dispatched && !registry.has(op, tf::DeviceType::cuda)) {
            lacks(op, "no CUDA kernel");
        }
        if (covered.count(op) == 0) lacks(op, "no row in tests/ops/op_cases.cpp");
        if (documented.count(std::string(tf::op_name(op))) == 0)
            lacks(op, "no entry in docs/ops.md");
    }
    INFO("ops that lack a part:" << missing);
    CHECK(missing.empty());
    if (!cuda_built) WARN("no CUDA kernels registered (CPU-only build): CUDA kernels not checked");
}

// The kernel tables state each row's dtypes once: every device's kernel accepts exactly that set.
TEST_CASE("kernel table rows are registered for their dtype sets on every device", "[registry]") {
    using tf::ew::TypeSet;
    struct Row {
        Op op;
        TypeSet dtypes;
    };
    const std::vector<Row> rows = {
#define TFL_UNARY(op, functor, dtypes, cost) {Op::op, TypeSet::dtypes},
#include "kernels/shared/unary_ops.def"
#undef TFL_UNARY
#define TFL_BINARY(op, functor, dtypes, check, cost) {Op::op, TypeSet::dtypes},
#define TFL_COMPARE(op, functor, dtypes) {Op::op, TypeSet::dtypes},
#include "kernels/shared/binary_ops.def"
#undef TFL_COMPARE
#undef TFL_BINARY
#define TFL_REDUCE(op, combine, dtypes) {Op::op, TypeSet::dtypes},
#define TFL_ARG_REDUCE(op, extremum, dtypes) {Op::op, TypeSet::dtypes},
#define TFL_SCAN(op, combine, dtypes) {Op::op, TypeSet::dtypes},
#include "kernels/shared/reduce_ops.def"
#undef TFL_SCAN
#undef TFL_ARG_REDUCE
#undef TFL_REDUCE
    };
    const tf::KernelRegistry& registry = tf::kernel_registry();
    std::string wrong;
    for (const Row& row : rows) {
        const tf::DTypeSet want = tf::ew::dtypes_of(row.dtypes);
        for (const tf::Device device : {tf::Device::cpu(), tf::Device::cuda(0)}) {
            if (!registry.has(row.op, device.type())) continue;  // the test above names it
            for (int d = 0; d < tf::kNumDTypes; ++d) {
                const auto dtype = static_cast<tf::DType>(d);
                bool found = true;
                try {
                    (void)registry.find(row.op, device, dtype);
                } catch (const tf::errors::UnimplementedError&) {
                    found = false;
                }
                if (found != want.contains(dtype)) {
                    wrong.append("\n  ").append(tf::op_name(row.op)).append(" on ");
                    wrong.append(device.str()).append(found ? " takes " : " lacks ");
                    wrong.append(tf::dtype_name(dtype));
                }
            }
        }
    }
    INFO("kernels whose dtypes differ from their table row:" << wrong);
    CHECK(wrong.empty());
}

TEST_CASE("docs/ops.md lists only ops of op_list.def", "[registry]") {
    std::set<std::string> names;
    for (int i = 0; i < tf::kNumOps; ++i)
        names.insert(std::string(tf::op_name(static_cast<Op>(i))));
    for (const std::string& d : documented_ops()) {
        CAPTURE(d);
        CHECK(names.count(d) == 1);
    }
}

TEST_CASE("op-case rows have unique names and name only real dtypes", "[registry]") {
    std::set<std::string> seen;
    for (const auto& c : tf::op_cases::all_cases()) {
        CAPTURE(c.name);
        CHECK(seen.insert(c.name).second);
        CHECK_FALSE(c.covers.empty());
        CHECK_FALSE(c.dtypes.empty());
    }
}

// The CUDA glue shares host code with the CPU only through lib/kernels/shared/ (the CPU loop
// headers pull in xsimd and the CPU's fusion).
TEST_CASE("cuda/ includes no CPU kernel header", "[registry][layers]") {
    const char* docs = std::getenv("TAPEFLOW_DOCS_DIR");
    REQUIRE(docs != nullptr);
    const std::filesystem::path cuda = std::filesystem::path(docs).parent_path() / "cuda";
    REQUIRE(std::filesystem::is_directory(cuda));
    for (const auto& file : std::filesystem::directory_iterator(cuda)) {
        std::ifstream in(file.path());
        std::string line;
        for (int n = 1; std::getline(in, line); ++n) {
            if (line.rfind("#include", 0) == 0 && line.find("kernels/cpu/") != std::string::npos) {
                FAIL_CHECK(file.path().filename().string() << ":" << n << ": " << line);
            }
        }
    }
}

TEST_CASE("a training op call sets exactly its table row's attrs", "[registry][training]") {
    // The kernels read attrs into a struct where an unset one is 0: a misspelled key must raise.
    tf::Variable var(tf::ones({3}));
    tf::Variable slot(tf::zeros({3}));
    const tf::Tensor grad = tf::ones({3});
    REQUIRE(tf::training::op_attrs(Op::apply_momentum) == "lr momentum use_nesterov");
    auto call = [&](const tf::Attrs& attrs) {
        tf::training::apply_dense(Op::apply_momentum, var, {slot}, grad, attrs);
    };
    const tf::Attrs misspelled =
        tf::Attrs().set("learning_rate", 0.1).set("momentum", 0.9).set("use_nesterov", false);
    CHECK_THROWS_AS(call(misspelled), tf::errors::InternalError);
    CHECK_THROWS_WITH(call(misspelled),
                      Catch::Matchers::Contains("unknown attr 'learning_rate'") &&
                          Catch::Matchers::Contains("ApplyMomentum"));
    const tf::Attrs missing = tf::Attrs().set("lr", 0.1).set("use_nesterov", false);
    CHECK_THROWS_AS(call(missing), tf::errors::InternalError);
    CHECK_THROWS_WITH(call(missing), Catch::Matchers::Contains("attr 'momentum' is not set"));
    CHECK(var.value().to_vector<float>() == std::vector<float>{1, 1, 1});  // nothing ran
    call(tf::Attrs().set("lr", 0.5).set("momentum", 0.9).set("use_nesterov", false));
    CHECK(var.value().to_vector<float>() == std::vector<float>{0.5f, 0.5f, 0.5f});
    // Every row names only attrs the kernels' reader knows (kernels/shared/optimizer_attrs.hpp).
    const std::set<std::string> known{"alpha",
                                      "lr",
                                      "l1",
                                      "l2",
                                      "momentum",
                                      "rho",
                                      "epsilon",
                                      "beta1",
                                      "beta2",
                                      "beta1_power",
                                      "beta2_power",
                                      "u_t",
                                      "u_t1",
                                      "u_product",
                                      "l2_shrinkage",
                                      "lr_power",
                                      "use_nesterov",
                                      "epsilon_inside_sqrt"};
    for (int i = 0; i < tf::kNumOps; ++i) {
        std::istringstream words{std::string(tf::training::op_attrs(static_cast<Op>(i)))};
        for (std::string w; words >> w;)
            CHECK(known.count(w) == 1);
    }
}

// The public tf::distribute collectives on tensors over the transport
// (transport.hpp), plus the tensor <-> host-buffer helpers of wire.hpp. Every collective checks
// that the processes agree on what they pass before moving data, so a mismatch is an
// InvalidArgumentError naming each process's shape instead of garbage or a hang.
#include <atomic>
#include <cstring>
#include <functional>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/creation.hpp>

#include "distribute/device_collectives.hpp"
#include "distribute/transport.hpp"
#include "distribute/wire.hpp"

namespace tapeflow::distribute {
namespace detail {

DType wire_dtype(DType dtype, ReduceOp op, std::string_view what) {
    switch (dtype) {
        case DType::float16:
        case DType::bfloat16:
            return DType::float32;
        case DType::float32:
        case DType::float64:
            return dtype;
        case DType::int32:
        case DType::int64:
        case DType::uint8:
            if (op == ReduceOp::mean) {
                throw errors::InvalidArgumentError(fmt::format(
                    "{}: ReduceOp::mean needs a floating dtype, got {}; reduce with sum and divide",
                    what,
                    dtype_name(dtype)));
            }
            return dtype;
        case DType::bool_:
            if (op == ReduceOp::sum || op == ReduceOp::mean) {
                throw errors::InvalidArgumentError(fmt::format(
                    "{}: bool tensors reduce with max (any) or min (all), not sum or mean", what));
            }
            return DType::uint8;
    }
    throw errors::InvalidArgumentError(
        fmt::format("{}: unsupported dtype {}", what, dtype_name(dtype)));
}

Tensor on_host(const Tensor& t, DType dtype) {
    Tensor host = t.device().is_cpu() ? t : t.cpu();
    return host.dtype() == dtype ? host : host.cast(dtype);
}

Tensor tensor_from_bytes(const void* data, const Shape& shape, DType dtype) {
    Tensor out = Tensor::empty(shape, dtype);
    if (out.nbytes() > 0) std::memcpy(out.mutable_raw_data(), data, out.nbytes());
    return out;
}

void scale_in_place(void* data, int64_t count, DType dtype, double factor) {
    if (dtype == DType::float32) {
        auto* p = static_cast<float*>(data);
        const auto f = static_cast<float>(factor);
        for (int64_t i = 0; i < count; ++i)
            p[i] *= f;
    } else if (dtype == DType::float64) {
        auto* p = static_cast<double*>(data);
        for (int64_t i = 0; i < count; ++i)
            p[i] *= factor;
    } else {
        throw errors::InternalError(
            fmt::format("scale of {} elements; this is a tapeflow bug", dtype_name(dtype)));
    }
}

std::vector<std::string> all_gather_strings(const std::string& mine) {
    const int n = transport_size();
    std::vector<int64_t> lengths(static_cast<std::size_t>(n));
    const int64_t my_length = static_cast<int64_t>(mine.size());
    {
        auto p =
            start_all_gather(&my_length,
                             sizeof(int64_t),
                             lengths.data(),
                             std::vector<int64_t>(static_cast<std::size_t>(n), sizeof(int64_t)));
        wait(*p, "all_gather of message lengths");
    }
    int64_t total = 0;
    for (int64_t l : lengths)
        total += l;
    std::string all(static_cast<std::size_t>(total), '\0');
    {
        auto p = start_all_gather(mine.data(), my_length, all.data(), lengths);
        wait(*p, "all_gather of messages");
    }
    std::vector<std::string> out;
    int64_t offset = 0;
    for (int64_t l : lengths) {
        out.push_back(all.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(l)));
        offset += l;
    }
    return out;
}

std::string broadcast_string(const std::string& mine, int root) {
    int64_t length = static_cast<int64_t>(mine.size());
    {
        auto p = start_broadcast(&length, sizeof(length), root);
        wait(*p, "broadcast of a message length");
    }
    std::string out =
        transport_rank() == root ? mine : std::string(static_cast<std::size_t>(length), '\0');
    {
        auto p = start_broadcast(out.data(), length, root);
        wait(*p, "broadcast of a message");
    }
    return out;
}

std::string describe(const Shape& shape, DType dtype) {
    return fmt::format("{} {}", shape.debug_string(), dtype_name(dtype));
}

void throw_error(errors::Code code, const std::string& message) {
    switch (code) {
        case errors::Code::invalid_argument:
            throw errors::InvalidArgumentError(message);
        case errors::Code::failed_precondition:
            throw errors::FailedPreconditionError(message);
        case errors::Code::not_found:
            throw errors::NotFoundError(message);
        case errors::Code::unimplemented:
            throw errors::UnimplementedError(message);
        case errors::Code::data_loss:
            throw errors::DataLossError(message);
        case errors::Code::unavailable:
            throw errors::UnavailableError(message);
        case errors::Code::resource_exhausted:
            throw errors::ResourceExhaustedError(message);
        case errors::Code::internal:
            throw errors::InternalError(message);
        default:
            throw errors::UnknownError(message);
    }
}

namespace {
std::atomic<int> chief{0};
}  // namespace

void set_chief_rank(int rank) {
    chief = rank;
}

std::string run_on_chief(const std::function<std::string()>& fn) {
    if (transport_size() == 1) return fn();
    // The chief's outcome as one message: a status byte, then the result or (code, message).
    std::string outcome;
    if (transport_rank() == chief) {
        try {
            outcome = std::string(1, '\0') + fn();
        } catch (const errors::OpError& e) {
            const auto code = static_cast<char>(e.code());
            outcome = std::string(1, '\1') + code + e.message();
            broadcast_string(outcome, chief);
            throw;
        }
    }
    outcome = broadcast_string(outcome, chief);
    if (outcome.empty())
        throw errors::InternalError("run_on_chief: an empty outcome; this is a tapeflow bug");
    if (outcome[0] == 0) return outcome.substr(1);
    throw_error(static_cast<errors::Code>(outcome[1]),
                fmt::format("{} (raised on the chief, rank {})", outcome.substr(2), chief.load()));
}

std::string encode_spec(const Shape& shape, DType dtype) {
    std::vector<int64_t> words{static_cast<int64_t>(dtype), shape.rank()};
    words.insert(words.end(), shape.dims().begin(), shape.dims().end());
    return std::string(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(int64_t));
}

std::pair<Shape, DType> decode_spec(std::string_view bytes) {
    std::vector<int64_t> words(bytes.size() / sizeof(int64_t));
    std::memcpy(words.data(), bytes.data(), words.size() * sizeof(int64_t));
    if (words.size() < 2 || words[1] < 0 || words.size() < static_cast<std::size_t>(2 + words[1])) {
        throw errors::InternalError("a malformed tensor header arrived; this is a tapeflow bug");
    }
    return {Shape(std::vector<int64_t>(words.begin() + 2, words.begin() + 2 + words[1])),
            static_cast<DType>(words[0])};
}

}  // namespace detail

namespace {

void ensure_init() {
    if (!detail::transport_initialized()) detail::transport_init(nullptr, nullptr);
}

// Raises InvalidArgumentError on every process when the processes' specs differ. The common case
// costs one small all-reduce: max of (h, -h) over a fingerprint h equals (h, -h) on every process
// exactly when all fingerprints agree. Only then are the specs gathered, for the message.
void check_same_spec(const std::string& spec, std::string_view what) {
    if (detail::transport_size() == 1) return;
    const auto h = static_cast<int64_t>(std::hash<std::string>{}(spec) >> 2);
    int64_t words[2] = {h, -h};
    {
        auto p = detail::start_all_reduce(words, 2, DType::int64, ReduceOp::max);
        detail::wait(*p, what);
    }
    if (words[0] == h && words[1] == -h) return;
    const std::vector<std::string> specs = detail::all_gather_strings(spec);
    std::string listing;
    for (std::size_t r = 0; r < specs.size(); ++r) {
        const auto [shape, dtype] = detail::decode_spec(specs[r]);
        listing +=
            fmt::format("{}rank {}: {}", r == 0 ? "" : ", ", r, detail::describe(shape, dtype));
    }
    throw errors::InvalidArgumentError(
        fmt::format("{}: every process must pass the same shape and dtype (and all CPU or all GPU "
                    "tensors), got {}",
                    what,
                    listing));
}

void check_root(int root, std::string_view what) {
    if (root < 0 || root >= detail::transport_size()) {
        throw errors::InvalidArgumentError(fmt::format(
            "{}: root must be in [0, {}), got {}", what, detail::transport_size(), root));
    }
}

void check_defined(const Tensor& t, std::string_view what) {
    if (!t.defined())
        throw errors::InvalidArgumentError(fmt::format("{}: the tensor is undefined", what));
}

}  // namespace

void init(int* argc, char*** argv) {
    detail::transport_init(argc, argv);
}
void finalize() {
    detail::transport_finalize();
}

int rank() {
    ensure_init();
    return detail::transport_rank();
}

int size() {
    ensure_init();
    return detail::transport_size();
}

int local_rank() {
    ensure_init();
    return detail::transport_local_rank();
}

bool mpi_built() {
    return detail::transport_is_mpi();
}

int chief_rank() {
    ensure_init();
    return detail::chief.load();
}

bool is_chief() {
    return rank() == chief_rank();
}

Tensor all_reduce(const Tensor& t, ReduceOp op) {
    check_defined(t, "all_reduce");
    ensure_init();
    const DType wire = detail::wire_dtype(t.dtype(), op, "all_reduce");
    if (detail::transport_size() == 1) return t;
    // The device kind takes part in the check: the GPU path (NCCL) is a collective of its own.
    const int64_t on_gpu = t.device().is_cpu() ? 0 : 1;
    const std::string what =
        fmt::format("all_reduce of {}", detail::describe(t.shape(), t.dtype()));
    check_same_spec(detail::encode_spec(t.shape(), t.dtype()) +
                        std::string(reinterpret_cast<const char*>(&on_gpu), sizeof(on_gpu)),
                    what);
    if (on_gpu != 0) {
        if (auto out = detail::device_all_reduce(t, op)) return *out;
    }
    const Tensor host = detail::on_host(t, wire);
    Tensor out = Tensor::empty(t.shape(), wire);
    {
        auto p = detail::start_all_reduce(
            out.mutable_raw_data(), out.num_elements(), wire, op, host.raw_data());
        detail::wait(*p, what);
    }
    if (op == ReduceOp::mean) {
        detail::scale_in_place(
            out.mutable_raw_data(), out.num_elements(), wire, 1.0 / detail::transport_size());
    }
    if (wire != t.dtype()) out = out.cast(t.dtype());
    return out.to(t.device());
}

Tensor broadcast(const Tensor& t, int root) {
    check_defined(t, "broadcast");
    ensure_init();
    check_root(root, "broadcast");
    if (detail::transport_size() == 1) return t;
    const bool is_root = detail::transport_rank() == root;
    const auto [shape, dtype] = detail::decode_spec(
        detail::broadcast_string(detail::encode_spec(t.shape(), t.dtype()), root));
    const Tensor host = is_root ? detail::on_host(t, t.dtype()) : Tensor();
    Tensor out = is_root ? detail::tensor_from_bytes(host.raw_data(), shape, dtype)
                         : Tensor::empty(shape, dtype);
    {
        auto p = detail::start_broadcast(
            out.mutable_raw_data(), static_cast<int64_t>(out.nbytes()), root);
        detail::wait(
            *p, fmt::format("broadcast of {} from rank {}", detail::describe(shape, dtype), root));
    }
    return is_root ? t : out.to(t.device());
}

std::vector<Tensor> all_gather(const Tensor& t) {
    check_defined(t, "all_gather");
    ensure_init();
    if (detail::transport_size() == 1) return {t};
    const std::vector<std::string> specs =
        detail::all_gather_strings(detail::encode_spec(t.shape(), t.dtype()));
    std::vector<std::pair<Shape, DType>> decoded;
    std::vector<int64_t> counts;
    for (const std::string& s : specs) {
        decoded.push_back(detail::decode_spec(s));
        counts.push_back(decoded.back().first.num_elements() *
                         static_cast<int64_t>(dtype_size(decoded.back().second)));
    }
    for (std::size_t r = 0; r < decoded.size(); ++r) {
        if (decoded[r].second != t.dtype()) {
            throw errors::InvalidArgumentError(
                fmt::format("all_gather: every process must pass the same dtype, got {} on rank {} "
                            "and {} on rank {}",
                            dtype_name(t.dtype()),
                            detail::transport_rank(),
                            dtype_name(decoded[r].second),
                            r));
        }
    }
    int64_t total = 0;
    for (int64_t c : counts)
        total += c;
    auto storage = std::make_shared<Storage>(static_cast<std::size_t>(total), Device::cpu());
    const Tensor host = detail::on_host(t, t.dtype());
    {
        auto p = detail::start_all_gather(
            host.raw_data(), static_cast<int64_t>(host.nbytes()), storage->data(), counts);
        detail::wait(*p, fmt::format("all_gather of {}", detail::describe(t.shape(), t.dtype())));
    }
    std::vector<Tensor> out;
    std::size_t offset = 0;
    for (std::size_t r = 0; r < decoded.size(); ++r) {
        out.push_back(Tensor::view(storage, offset, decoded[r].first, t.dtype()).to(t.device()));
        offset += static_cast<std::size_t>(counts[r]);
    }
    return out;
}

void broadcast_variables(const std::vector<Variable>& variables, int root) {
    ensure_init();
    check_root(root, "broadcast_variables");
    if (detail::transport_size() == 1 || variables.empty()) return;
    // One buffer for every variable: two collectives in all, whatever the number of variables.
    std::string spec;
    int64_t total = 0;
    for (const Variable& v : variables) {
        if (!v.defined())
            throw errors::InvalidArgumentError("broadcast_variables: a variable handle is empty");
        spec += detail::encode_spec(v.shape(), v.dtype());
        total += static_cast<int64_t>(v.shape().num_elements() * dtype_size(v.dtype()));
    }
    check_same_spec(spec, fmt::format("broadcast_variables of {} variables", variables.size()));
    auto storage = std::make_shared<Storage>(static_cast<std::size_t>(total), Device::cpu());
    auto* bytes = static_cast<char*>(storage->data());
    const bool is_root = detail::transport_rank() == root;
    if (is_root) {
        std::size_t offset = 0;
        for (const Variable& v : variables) {
            const Tensor host = detail::on_host(v.value(), v.dtype());
            if (host.nbytes() > 0) std::memcpy(bytes + offset, host.raw_data(), host.nbytes());
            offset += host.nbytes();
        }
    }
    {
        auto p = detail::start_broadcast(bytes, total, root);
        detail::wait(
            *p,
            fmt::format(
                "broadcast_variables of {} variables from rank {}", variables.size(), root));
    }
    if (is_root) return;
    std::size_t offset = 0;
    for (const Variable& v : variables) {
        Variable handle = v;
        handle.assign(Tensor::view(storage, offset, v.shape(), v.dtype()).to(v.device()));
        offset += v.shape().num_elements() * dtype_size(v.dtype());
    }
}

void barrier() {
    ensure_init();
    auto p = detail::start_barrier();
    detail::wait(*p, "barrier");
}

}  // namespace tapeflow::distribute

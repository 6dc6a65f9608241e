// Tensor: allocation, views, host access with conversion, device copies, printing.
#include <atomic>
#include <cstring>
#include <ostream>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/ops/creation.hpp>

#include "core/backend.hpp"
#include "core/format.hpp"
#include "core/host_reads.hpp"
#include "core/ids.hpp"
#include "core/sizes.hpp"
#include "core/small_blocks.hpp"

namespace tapeflow {

int64_t next_unique_id() {
    static std::atomic<int64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

namespace {

// A tensor needs every dimension; only reshape's shape may hold a -1.
void check_fully_defined(const Shape& shape) {
    if (shape.num_elements() < 0) {
        throw errors::InvalidArgumentError(fmt::format(
            "Shape {} has an unknown dimension (-1): a tensor needs every dimension (only reshape "
            "infers a -1)",
            shape.debug_string()));
    }
}

}  // namespace

Tensor Tensor::empty(Shape shape, DType dtype, Device device) {
    check_fully_defined(shape);
    const std::size_t nbytes = checked_nbytes(shape, dtype, device);
    auto impl = std::allocate_shared<TensorImpl>(SmallBlockAllocator<TensorImpl>());
    try {
        impl->storage =
            std::allocate_shared<Storage>(SmallBlockAllocator<Storage>(), nbytes, device);
    } catch (const errors::ResourceExhaustedError& e) {
        // The allocator knows bytes only; the error names the tensor, as TensorFlow's does.
        throw errors::ResourceExhaustedError(
            fmt::format("{} ({})", oom_message(shape, dtype, device), e.message()));
    }
    impl->shape = std::move(shape);
    impl->dtype = dtype;
    impl->id = next_unique_id();
    return Tensor(std::move(impl));
}

Tensor Tensor::view(std::shared_ptr<Storage> storage,
                    std::size_t offset,
                    Shape shape,
                    DType dtype) {
    check_fully_defined(shape);
    const Device device = storage ? storage->device() : Device::cpu();
    const std::size_t nbytes = checked_nbytes(shape, dtype, device);
    // Written so that no sum can wrap: the view's bytes must lie inside the storage.
    if (storage == nullptr || offset > storage->nbytes() || nbytes > storage->nbytes() - offset) {
        throw errors::InternalError(fmt::format(
            "view of {} bytes at offset {} exceeds its storage ({} bytes); this is a tapeflow bug",
            nbytes,
            offset,
            storage ? storage->nbytes() : 0));
    }
    auto impl = std::allocate_shared<TensorImpl>(SmallBlockAllocator<TensorImpl>());
    impl->shape = std::move(shape);
    impl->dtype = dtype;
    impl->storage = std::move(storage);
    impl->offset = offset;
    impl->id = next_unique_id();
    return Tensor(std::move(impl));
}

const void* Tensor::raw_data() const {
    return mutable_raw_data();
}

void* Tensor::mutable_raw_data() const {
    const TensorImpl& impl = checked();
    auto* base = static_cast<char*>(impl.storage->data());
    return base == nullptr ? nullptr : base + impl.offset;
}

void Tensor::throw_undefined() {
    throw errors::FailedPreconditionError(
        "the tensor is undefined (a default-constructed Tensor, e.g. a missing gradient)");
}

void Tensor::throw_item_error() const {
    throw errors::InvalidArgumentError(fmt::format(
        "item() needs a tensor with exactly one element, but this one has shape {} ({} elements)",
        shape().str(),
        num_elements()));
}

uint64_t& detail::host_reads() {
    thread_local uint64_t count = 0;
    return count;
}

void Tensor::check_data_access(DType requested, std::size_t size) const {
    ++detail::host_reads();
    if (!device().is_cpu()) {
        throw errors::FailedPreconditionError(fmt::format(
            "data() needs a CPU tensor, but this one is on {}; copy it with .cpu() first",
            device().str()));
    }
    if (requested != dtype() || size != dtype_size(dtype())) {
        throw errors::InvalidArgumentError(fmt::format(
            "data<T>() with T = {} on a {} tensor: T must be the element type (use to_vector<T>() "
            "or cast() to convert)",
            dtype_name(requested),
            dtype_name(dtype())));
    }
}

void Tensor::copy_to_host(void* dst, DType dst_dtype) const {
    ++detail::host_reads();
    Tensor host = cpu();
    if (host.dtype() != dst_dtype) host = host.cast(dst_dtype);
    if (host.nbytes() != 0) std::memcpy(dst, host.raw_data(), host.nbytes());
}

Tensor Tensor::to(Device target) const {
    const Device source = device();
    if (source == target) return *this;
    check_device(target);
    Tensor out = empty(shape(), dtype(), target);
    // The non-CPU side's backend knows how to copy to, from and within its devices.
    DeviceBackend* backend = find_backend(target.is_cpu() ? source.type() : target.type());
    backend->copy(out.mutable_raw_data(), target, raw_data(), source, nbytes());
    return out;
}

Tensor Tensor::cast(DType target) const {
    return tapeflow::cast(*this, target);
}

std::string Tensor::str() const {
    return defined() ? format_tensor(*this) : "None";
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
    return os << t.str();
}

std::ostream& operator<<(std::ostream& os, const Shape& s) {
    return os << s.str();
}

std::ostream& operator<<(std::ostream& os, const Device& d) {
    return os << d.str();
}

std::ostream& operator<<(std::ostream& os, DType d) {
    return os << dtype_name(d);
}

}  // namespace tapeflow

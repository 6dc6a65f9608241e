// DLPack export and import. to_dlpack hands out a context holding a Tensor handle (which keeps the
// Storage alive) with the shape and strides the DLTensor points to; from_dlpack wraps the foreign
// memory in a Storage that owns the DLManagedTensor and calls its deleter when the storage goes.
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/dlpack.hpp>

#include "core/adopt.hpp"

namespace tapeflow::experimental::dlpack {
namespace {

struct Context {
    DLManagedTensor managed{};
    Tensor tensor;
    std::vector<int64_t> shape, strides;
};

DLDataType dl_type_of(DType dtype) {
    const auto bits = static_cast<uint8_t>(dtype_size(dtype) * 8);
    switch (dtype) {
        case DType::float16:
        case DType::float32:
        case DType::float64:
            return {kDLFloat, bits, 1};
        case DType::bfloat16:
            return {kDLBfloat, bits, 1};
        case DType::int32:
        case DType::int64:
            return {kDLInt, bits, 1};
        case DType::uint8:
            return {kDLUInt, bits, 1};
        case DType::bool_:
            return {kDLBool, bits, 1};
    }
    throw errors::InternalError("to_dlpack: unknown dtype");
}

DType dtype_of_dl(DLDataType t) {
    const int key = t.code * 1000 + t.bits;
    if (t.lanes == 1) {
        switch (key) {
            case kDLFloat * 1000 + 16:
                return DType::float16;
            case kDLFloat * 1000 + 32:
                return DType::float32;
            case kDLFloat * 1000 + 64:
                return DType::float64;
            case kDLBfloat * 1000 + 16:
                return DType::bfloat16;
            case kDLInt * 1000 + 32:
                return DType::int32;
            case kDLInt * 1000 + 64:
                return DType::int64;
            case kDLUInt * 1000 + 8:
                return DType::uint8;
            case kDLBool * 1000 + 8:
                return DType::bool_;
            default:
                break;
        }
    }
    static constexpr const char* kCodes[] = {
        "int", "uint", "float", "opaque handle", "bfloat", "complex", "bool"};
    const std::string code = t.code < 7 ? kCodes[t.code] : fmt::format("code {}", t.code);
    throw errors::InvalidArgumentError(fmt::format(
        "from_dlpack: DLPack dtype {}{} with {} lanes has no tapeflow dtype (tapeflow holds "
        "float16/32/64, bfloat16, int32, int64, uint8 and bool, one lane)",
        code,
        t.bits,
        t.lanes));
}

Device device_of_dl(DLDevice d) {
    if (d.device_type == kDLCPU || d.device_type == kDLCUDAHost) return Device::cpu();
    if (d.device_type == kDLCUDA) return Device::cuda(d.device_id);
    throw errors::InvalidArgumentError(fmt::format(
        "from_dlpack: DLPack device type {} (device {}) is not supported; tapeflow takes kDLCPU "
        "(1), kDLCUDAHost (3) and kDLCUDA (2) memory",
        static_cast<int>(d.device_type),
        d.device_id));
}

// Copies the strided elements at `src` into the row-major `dst` (element size `size`).
void gather(const char* src,
            const std::vector<int64_t>& dims,
            const int64_t* strides,
            std::size_t size,
            char* dst) {
    const std::size_t rank = dims.size();
    std::vector<int64_t> index(rank, 0);
    int64_t total = 1;
    for (int64_t d : dims)
        total *= d;
    for (int64_t n = 0; n < total; ++n, dst += size) {
        int64_t at = 0;
        for (std::size_t k = 0; k < rank; ++k)
            at += index[k] * strides[k];
        std::memcpy(dst, src + at * static_cast<int64_t>(size), size);
        for (std::size_t k = rank; k-- > 0;) {
            if (++index[k] < dims[k]) break;
            index[k] = 0;
        }
    }
}

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& tensor) {
    if (tensor.device().is_cuda() && tensor.nbytes() != 0) {
        // The ops writing the tensor may still be queued on the device's stream (docs/gpu.md); a
        // DLPack consumer reads the memory on its own streams, so wait for them: a host read of one
        // byte synchronizes the stream.
        const TensorImpl& impl = *tensor.impl();
        (void)Tensor::view(impl.storage, impl.offset, Shape{}, DType::uint8).cpu();
    }
    auto ctx = std::make_unique<Context>();
    ctx->tensor = tensor;
    ctx->shape = tensor.shape().dims();
    ctx->strides.assign(ctx->shape.size(), 1);
    for (std::size_t k = ctx->shape.size(); k-- > 1;)
        ctx->strides[k - 1] = ctx->strides[k] * ctx->shape[k];
    DLTensor& t = ctx->managed.dl_tensor;
    t.data = const_cast<void*>(tensor.raw_data());
    const Device device = tensor.device();
    t.device = {device.is_cuda() ? kDLCUDA : kDLCPU, device.index()};
    t.ndim = static_cast<int32_t>(ctx->shape.size());
    t.dtype = dl_type_of(tensor.dtype());
    t.shape = ctx->shape.data();
    t.strides = ctx->strides.data();
    t.byte_offset = 0;
    ctx->managed.manager_ctx = ctx.get();
    ctx->managed.deleter = [](DLManagedTensor* self) {
        delete static_cast<Context*>(self->manager_ctx);
    };
    return &ctx.release()->managed;
}

Tensor from_dlpack(DLManagedTensor* managed) {
    if (managed == nullptr) throw errors::InvalidArgumentError("from_dlpack: null DLManagedTensor");
    // Owns `managed` from here on: the deleter runs when the last storage goes, or on an error.
    std::shared_ptr<void> owner(managed, [](void* p) {
        auto* m = static_cast<DLManagedTensor*>(p);
        if (m->deleter != nullptr) m->deleter(m);
    });
    const DLTensor& t = managed->dl_tensor;
    const DType dtype = dtype_of_dl(t.dtype);
    const Device device = device_of_dl(t.device);
    if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr))
        throw errors::InvalidArgumentError(fmt::format("from_dlpack: bad ndim {}", t.ndim));
    std::vector<int64_t> dims(t.shape, t.shape + t.ndim);
    bool compact = true;
    int64_t expected = 1;
    for (int32_t k = t.ndim; k-- > 0;) {
        if (dims[k] < 0)
            throw errors::InvalidArgumentError(
                fmt::format("from_dlpack: dimension {} < 0", dims[k]));
        if (t.strides != nullptr && dims[k] != 1 && t.strides[k] != expected) compact = false;
        expected *= dims[k];
    }
    if (expected == 0) compact = true;
    Shape shape(dims);
    const std::size_t nbytes = static_cast<std::size_t>(expected) * dtype_size(dtype);
    if (t.data == nullptr && nbytes != 0)
        throw errors::InvalidArgumentError("from_dlpack: null data pointer");
    char* base = static_cast<char*>(t.data);
    if (compact) {
        auto storage = detail::adopt_storage(base, t.byte_offset + nbytes, device, owner);
        return Tensor::view(std::move(storage), t.byte_offset, std::move(shape), dtype);
    }
    if (!device.is_cpu()) {
        throw errors::InvalidArgumentError(fmt::format(
            "from_dlpack: strided (non-compact) {} tensors are not supported; make the tensor "
            "contiguous first (e.g. torch's .contiguous())",
            device.str()));
    }
    Tensor out = Tensor::empty(std::move(shape), dtype);
    gather(base + t.byte_offset,
           dims,
           t.strides,
           dtype_size(dtype),
           static_cast<char*>(out.mutable_raw_data()));
    return out;  // `owner` goes here: the deleter runs now that the data is copied
}

}  // namespace tapeflow::experimental::dlpack

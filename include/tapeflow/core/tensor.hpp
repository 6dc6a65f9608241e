// Tensor: an immutable, cheaply copyable handle to typed, shaped, contiguous data on one device.
// Copies share data; every op returns a new tensor. The undefined Tensor() stands for "no
// gradient".
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/fmt_support.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/storage.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// What a Tensor handle points to. Data is always row-major and contiguous, starting `offset` bytes
/// into `storage` (views such as reshape and unstack share the storage). Kernels read and write it
/// through Tensor::raw_data / Tensor::mutable_raw_data; user code never needs this struct.
struct TensorImpl {
    Shape shape;
    DType dtype = DType::float32;
    std::shared_ptr<Storage> storage;
    std::size_t offset = 0;
    int64_t id = 0;  // unique per tensor value; tapes track tensors by it
};

/// An immutable n-dimensional array.
///
///     auto x = tf::constant({{1.f, 2.f}, {3.f, 4.f}});
///     fmt::print("{}\n", x);     // tf.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)
///     float v = tf::constant(3.f).item<float>();
///
/// Accessors on an undefined tensor throw errors::FailedPreconditionError.
class Tensor {
public:
    /// Undefined: holds no value (TensorFlow's None, "no gradient").
    Tensor() = default;
    explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

    /// A new tensor with uninitialized data: the way kernels allocate outputs.
    static Tensor empty(Shape shape, DType dtype, Device device = Device::cpu());
    /// A tensor sharing `storage` from byte `offset` on (no copy); the bytes must be in range.
    static Tensor view(std::shared_ptr<Storage> storage,
                       std::size_t offset,
                       Shape shape,
                       DType dtype);

    bool defined() const { return impl_ != nullptr; }
    explicit operator bool() const { return defined(); }

    const Shape& shape() const { return checked().shape; }
    DType dtype() const { return checked().dtype; }
    Device device() const { return checked().storage->device(); }
    int64_t rank() const { return shape().rank(); }
    int64_t num_elements() const { return shape().num_elements(); }
    std::size_t nbytes() const { return num_elements() * dtype_size(dtype()); }
    /// Unique id of this value (copies of the handle share it).
    int64_t id() const { return checked().id; }

    /// The single element, converted to T. Throws InvalidArgumentError unless num_elements() == 1.
    template <ScalarType T>
    T item() const {
        if (num_elements() != 1) throw_item_error();
        T value{};
        copy_to_host(&value, dtype_of_v<T>);
        return value;
    }

    /// A row-major host copy of every element, converted to T.
    template <ScalarType T>
    std::vector<T> to_vector() const {
        if constexpr (std::is_same_v<T, bool>) {
            std::vector<uint8_t> bytes(static_cast<std::size_t>(num_elements()));
            copy_to_host(bytes.data(), DType::bool_);
            return std::vector<bool>(bytes.begin(), bytes.end());
        } else {
            std::vector<T> out(static_cast<std::size_t>(num_elements()));
            copy_to_host(out.data(), dtype_of_v<T>);
            return out;
        }
    }

    /// Pointer to the elements. CPU tensors only (FailedPreconditionError otherwise); T must be the
    /// tensor's element type (InvalidArgumentError otherwise).
    template <ScalarType T>
    const T* data() const {
        check_data_access(dtype_of_v<T>, sizeof(T));
        return static_cast<const T*>(raw_data());
    }

    /// Untyped pointer to the first element (on the tensor's device).
    const void* raw_data() const;
    /// Writable pointer, for kernels filling a tensor they just created with empty(). Tensors are
    /// immutable once another handle can see them; writing through this afterwards is a bug.
    void* mutable_raw_data() const;

    /// A copy on the CPU (this tensor itself when already there).
    Tensor cpu() const { return to(Device::cpu()); }
    /// A copy on `device` (this tensor itself when already there). Never implicit elsewhere.
    Tensor to(Device device) const;
    /// Element-wise conversion (tf.cast): float -> int truncates toward zero, -> bool is `!= 0`.
    Tensor cast(DType dtype) const;

    /// TensorFlow's print(t): "tf.Tensor([1 2 3], shape=(3,), dtype=int32)"; "None" when undefined.
    std::string str() const;

    TensorImpl* impl() const { return impl_.get(); }
    const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

private:
    const TensorImpl& checked() const {
        if (!impl_) [[unlikely]]
            throw_undefined();
        return *impl_;
    }
    [[noreturn]] static void throw_undefined();
    [[noreturn]] void throw_item_error() const;
    void check_data_access(DType requested, std::size_t size) const;
    void copy_to_host(void* dst, DType dst_dtype) const;

    std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);
std::ostream& operator<<(std::ostream& os, const Shape& s);
std::ostream& operator<<(std::ostream& os, const Device& d);
std::ostream& operator<<(std::ostream& os, DType d);

}  // namespace tapeflow

template <>
struct fmt::formatter<tapeflow::Tensor> : tapeflow::detail::StrFormatter {
    template <class Ctx>
    auto format(const tapeflow::Tensor& v, Ctx& ctx) const {
        return write(v.str(), ctx);
    }
};

TAPEFLOW_API_END

// C entry points over tapeflow's DLPack functions, for check_dlpack.py to call through ctypes with
// the DLManagedTensor* of a PyTorch (or NumPy) DLPack capsule.
#include <cstdio>

#include <tapeflow/dlpack.hpp>
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace dl = tapeflow::experimental::dlpack;

extern "C" {

/// Imports `managed`, checks that the tensor's first element is the foreign memory's (no copy)
/// and exports it again; nullptr on any failure (printed).
__attribute__((visibility("default"))) DLManagedTensor* tfdl_roundtrip(DLManagedTensor* managed) {
    try {
        const char* expected =
            static_cast<const char*>(managed->dl_tensor.data) + managed->dl_tensor.byte_offset;
        tf::Tensor t = dl::from_dlpack(managed);
        if (t.raw_data() != expected) {
            std::fprintf(stderr, "tfdl_roundtrip: the data was copied\n");
            return nullptr;
        }
        return dl::to_dlpack(t);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tfdl_roundtrip: %s\n", e.what());
        return nullptr;
    }
}

/// The sum of the imported tensor's elements as float64 (strided imports included); NaN on error.
__attribute__((visibility("default"))) double tfdl_sum(DLManagedTensor* managed) {
    try {
        return tf::reduce_sum(dl::from_dlpack(managed).cast(tf::float64)).item<double>();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tfdl_sum: %s\n", e.what());
        return 0.0 / 0.0;
    }
}

/// A tapeflow tensor [0, 1, ..., n-1] (float32) exported through DLPack.
__attribute__((visibility("default"))) DLManagedTensor* tfdl_range(int n) {
    return dl::to_dlpack(tf::range(0.f, static_cast<float>(n), 1.f));
}
}

// A per-thread count of the times code read tensor elements on the host (item(), to_vector(),
// data<T>()): vectorized_map asks whether the function it traced looked at values, which is the
// only way its ops could depend on them (lib/autograd/vectorized_map.cpp).
#pragma once

#include <cstdint>

namespace tapeflow::detail {

/// This thread's count; lib/core/tensor.cpp increments it.
uint64_t& host_reads();

/// Reads in its scope are not counted: validations whose values decide no op (label ranges).
class UncountedHostReads {
public:
    UncountedHostReads() : count_(host_reads()) {}
    ~UncountedHostReads() { host_reads() = count_; }
    UncountedHostReads(const UncountedHostReads&) = delete;
    UncountedHostReads& operator=(const UncountedHostReads&) = delete;

private:
    uint64_t count_;
};

}  // namespace tapeflow::detail

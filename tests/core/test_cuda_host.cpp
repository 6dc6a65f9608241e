// Host-side logic of the CUDA backend that needs no GPU: the caching allocator's size classes.
#include <catch2/catch.hpp>

#include "../../cuda/size_class.hpp"

using tapeflow::cuda_memory::size_class;

TEST_CASE("CUDA allocator size classes", "[cuda][allocator]") {
    CHECK(size_class(1) == 512);
    CHECK(size_class(512) == 512);
    CHECK(size_class(513) == 1024);
    CHECK(size_class((1 << 20) - 1) == (1 << 20));
    CHECK(size_class(1 << 20) == (1 << 20));
    CHECK(size_class((1 << 20) + 1) == (1 << 20) + (1 << 18));  // four classes per power of two
    for (std::size_t n : {std::size_t{3} << 20,
                          std::size_t{1000001},
                          std::size_t{1} << 33,
                          std::size_t{12345678901}}) {
        const std::size_t c = size_class(n);
        CHECK(c >= n);
        CHECK(c - n <= n / 4);      // at most 25% waste
        CHECK(size_class(c) == c);  // a class maps to itself
    }
}

// Storage over memory another library allocated (DLPack's from_dlpack), without a change to the
// public Storage class: the storage is built while an adopting allocator stands in for the
// device's, which hands out the foreign pointer and, when the storage frees it, releases its owner.
#pragma once

#include <cstddef>
#include <memory>

#include <tapeflow/core/storage.hpp>

namespace tapeflow::detail {

/// A Storage of `nbytes` bytes at `data` on `device` (no copy); `owner` is released, its deleter
/// run, when the storage goes (at once when nbytes is 0: an empty storage holds no memory). The
/// bytes count in memory_stats while the storage lives, as tensor memory.
std::shared_ptr<Storage> adopt_storage(void* data,
                                       std::size_t nbytes,
                                       Device device,
                                       std::shared_ptr<void> owner);

}  // namespace tapeflow::detail

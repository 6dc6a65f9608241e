// Zip archives, as much of PKWARE's APPNOTE as .npz files need: stored and deflated members,
// CRC-32, data descriptors, and ZIP64 (sizes and offsets past 4 GiB, more than 65535 members).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tapeflow::io::zip {

/// One member to write: its name and its bytes, given as pieces (written in order, never joined
/// when stored).
struct MemberToWrite {
    std::string name;
    std::vector<std::string_view> pieces;
};

/// Writes a zip archive of `members` to `path` atomically; deflated (zlib) when `compressed`.
/// A member or offset past 4 GiB gets ZIP64 fields.
/// `zip64_from` (for tests) is the size or offset from which ZIP64 fields are written.
void write_archive(const std::string& path,
                   const std::vector<MemberToWrite>& members,
                   bool compressed,
                   uint64_t zip64_from = 0xFFFFFFFF);

struct Member {
    std::string name;
    std::string bytes;  // uncompressed, CRC checked
};

/// Every member of the archive `bytes` (read from `path`, named in errors). Corrupt structure, a
/// bad CRC or a broken deflate stream: DataLossError; encryption or another compression method:
/// UnimplementedError.
std::vector<Member> read_archive(std::string_view bytes, const std::string& path);

}  // namespace tapeflow::io::zip

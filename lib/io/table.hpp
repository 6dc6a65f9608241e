// The sorted string table TensorFlow's checkpoint index uses (tensorflow/tsl/lib/io/table*, the
// leveldb table format): data blocks of prefix-compressed entries with restart points, each block
// followed by a 5-byte trailer (compression type, masked CRC-32C of the block and the type byte),
// an empty metaindex block, an index block (one entry per data block: a key >= its last key ->
// the block's handle), and a 48-byte footer (the two handles, padded, then TF's magic number).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tapeflow::io::table {

/// TensorFlow's table magic number (little-endian in the footer's last 8 bytes).
inline constexpr uint64_t kMagic = 0xdb4775248b80fb57ull;
inline constexpr std::size_t kFooterSize = 48;
inline constexpr std::size_t kBlockTrailerSize = 5;
enum class Compression : uint8_t { none = 0, snappy = 1 };

struct TableOptions {
    std::size_t block_size = 262144;  // TF's table::Options defaults
    int block_restart_interval = 16;
    Compression compression = Compression::none;
};

/// Builds a table in memory. Keys must be added in strictly increasing byte order.
class TableBuilder {
public:
    explicit TableBuilder(TableOptions options = {});
    void add(std::string_view key, std::string_view value);
    /// The complete file; the builder is spent afterwards.
    std::string finish();

private:
    struct Block {
        std::string buffer;
        std::vector<uint32_t> restarts{0};
        int counter = 0;
        std::string last_key;
        void add(std::string_view key, std::string_view value, int restart_interval);
        std::size_t size_estimate() const { return buffer.size() + 4 * restarts.size() + 4; }
        bool empty() const { return buffer.empty(); }
        std::string finish();
    };
    void flush();
    // Appends a block (compressed when that pays) with its trailer; returns its handle.
    std::pair<uint64_t, uint64_t> write_block(Block& block);

    TableOptions options_;
    std::string out_;
    Block data_, index_;
    std::string last_key_;
    bool pending_index_entry_ = false;
    std::pair<uint64_t, uint64_t> pending_handle_{0, 0};
    std::size_t num_entries_ = 0;
};

/// Every entry of a table file, in order. DataLossError naming `file` for anything malformed:
/// a short file, a wrong magic number, a bad block CRC or compression type, a Snappy block that
/// does not decompress, entries that overrun their block or are out of order.
std::vector<std::pair<std::string, std::string>> read_table(std::string_view file_bytes,
                                                            const std::string& file);

// Little-endian varints, as the table and protobuf use them.
void put_varint64(std::string& out, uint64_t v);
/// Reads a varint at `pos` (advanced past it); false when it is truncated or too long.
bool get_varint64(std::string_view in, std::size_t& pos, uint64_t& v);
void put_fixed32(std::string& out, uint32_t v);
uint32_t get_fixed32(const char* p);

}  // namespace tapeflow::io::table

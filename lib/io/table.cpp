// The leveldb-style table of TensorFlow's checkpoint index (see table.hpp), written from the
// format's description.
#include "io/table.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <snappy.h>

#include <tapeflow/core/error.hpp>

#include "io/crc32c.hpp"

namespace tapeflow::io::table {
namespace {

// A BlockHandle's varints take at most 10 bytes each; the footer pads two of them to 40.
constexpr std::size_t kHandlesSize = 40;

[[noreturn]] void corrupt(const std::string& file, const std::string& what) {
    throw errors::DataLossError(fmt::format("Corrupt checkpoint index {}: {}", file, what));
}

void put_handle(std::string& out, std::pair<uint64_t, uint64_t> handle) {
    put_varint64(out, handle.first);
    put_varint64(out, handle.second);
}

std::pair<uint64_t, uint64_t> get_handle(std::string_view in,
                                         std::size_t& pos,
                                         const std::string& file,
                                         const char* what) {
    uint64_t offset = 0;
    uint64_t size = 0;
    if (!get_varint64(in, pos, offset) || !get_varint64(in, pos, size))
        corrupt(file, fmt::format("bad {} block handle", what));
    return {offset, size};
}

// The shortest key k with start <= k < limit that shares start's prefix (leveldb's bytewise
// FindShortestSeparator): keeps index keys short.
void shorten_separator(std::string& start, std::string_view limit) {
    const std::size_t n = std::min(start.size(), limit.size());
    std::size_t i = 0;
    while (i < n && start[i] == limit[i])
        ++i;
    if (i >= n) return;  // one is a prefix of the other
    const auto byte = static_cast<uint8_t>(start[i]);
    if (byte < 0xff && byte + 1 < static_cast<uint8_t>(limit[i])) {
        start[i] = static_cast<char>(byte + 1);
        start.resize(i + 1);
    }
}

// The shortest key >= key (FindShortSuccessor): the first byte that is not 0xff, incremented.
void short_successor(std::string& key) {
    for (std::size_t i = 0; i < key.size(); ++i) {
        const auto byte = static_cast<uint8_t>(key[i]);
        if (byte != 0xff) {
            key[i] = static_cast<char>(byte + 1);
            key.resize(i + 1);
            return;
        }
    }
}

// The block at `handle` of the file, CRC-checked and decompressed.
std::string read_block(std::string_view file_bytes,
                       std::pair<uint64_t, uint64_t> handle,
                       const std::string& file) {
    const auto [offset, size] = handle;
    if (offset > file_bytes.size() || size > file_bytes.size() - offset ||
        kBlockTrailerSize > file_bytes.size() - offset - size) {
        corrupt(file,
                fmt::format("block at {} of {} bytes lies outside the file of {} bytes",
                            offset,
                            size,
                            file_bytes.size()));
    }
    const std::string_view contents = file_bytes.substr(offset, size);
    const char* trailer = file_bytes.data() + offset + size;
    const uint32_t stored = unmask_crc(get_fixed32(trailer + 1));
    const uint32_t actual = crc32c_extend(crc32c(contents), trailer, 1);
    if (stored != actual) {
        corrupt(file,
                fmt::format("block checksum mismatch in the block at {} (stored {:08x}, "
                            "computed {:08x})",
                            offset,
                            stored,
                            actual));
    }
    const auto type = static_cast<uint8_t>(trailer[0]);
    if (type == static_cast<uint8_t>(Compression::none)) return std::string(contents);
    if (type != static_cast<uint8_t>(Compression::snappy))
        corrupt(file, fmt::format("unknown compression type {} of the block at {}", type, offset));
    std::size_t length = 0;
    // Snappy expands at most ~32x (a 64-byte copy per 2-byte tag): a larger claimed length is
    // corruption, refused before allocating it.
    if (!snappy::GetUncompressedLength(contents.data(), contents.size(), &length) ||
        length > 64 * contents.size() + 64) {
        corrupt(file, fmt::format("bad Snappy block at {}", offset));
    }
    std::string out;
    if (!snappy::Uncompress(contents.data(), contents.size(), &out))
        corrupt(file, fmt::format("bad Snappy block at {}", offset));
    return out;
}

// The entries of one block, appended to `out`.
void parse_block(std::string_view block,
                 const std::string& file,
                 std::vector<std::pair<std::string, std::string>>& out) {
    if (block.size() < 4) corrupt(file, "block too short for its restart count");
    const uint64_t num_restarts = get_fixed32(block.data() + block.size() - 4);
    if (num_restarts == 0 || num_restarts > (block.size() - 4) / 4)
        corrupt(file, fmt::format("bad restart count {}", num_restarts));
    const std::size_t limit = block.size() - 4 - 4 * num_restarts;
    std::string key;
    std::size_t pos = 0;
    while (pos < limit) {
        uint64_t shared = 0;
        uint64_t unshared = 0;
        uint64_t value_size = 0;
        const std::string_view entries = block.substr(0, limit);
        if (!get_varint64(entries, pos, shared) || !get_varint64(entries, pos, unshared) ||
            !get_varint64(entries, pos, value_size) || shared > key.size() ||
            unshared > limit - pos || value_size > limit - pos - unshared) {
            corrupt(file, fmt::format("bad entry at byte {} of a block", pos));
        }
        key.resize(shared);
        key.append(entries.substr(pos, unshared));
        pos += unshared;
        out.emplace_back(key, std::string(entries.substr(pos, value_size)));
        pos += value_size;
    }
}

}  // namespace

void put_varint64(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out += static_cast<char>(v | 0x80);
        v >>= 7;
    }
    out += static_cast<char>(v);
}

bool get_varint64(std::string_view in, std::size_t& pos, uint64_t& v) {
    v = 0;
    for (int shift = 0; shift <= 63 && pos < in.size(); shift += 7) {
        const auto byte = static_cast<uint8_t>(in[pos++]);
        v |= static_cast<uint64_t>(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) return true;
    }
    return false;
}

void put_fixed32(std::string& out, uint32_t v) {
    for (int i = 0; i < 4; ++i)
        out += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint32_t get_fixed32(const char* p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i)
        v = (v << 8) | static_cast<uint8_t>(p[i]);
    return v;
}

void TableBuilder::Block::add(std::string_view key, std::string_view value, int restart_interval) {
    std::size_t shared = 0;
    if (counter < restart_interval) {
        const std::size_t n = std::min(last_key.size(), key.size());
        while (shared < n && last_key[shared] == key[shared])
            ++shared;
    } else {
        restarts.push_back(static_cast<uint32_t>(buffer.size()));
        counter = 0;
    }
    put_varint64(buffer, shared);
    put_varint64(buffer, key.size() - shared);
    put_varint64(buffer, value.size());
    buffer.append(key.substr(shared));
    buffer.append(value);
    last_key.assign(key);
    ++counter;
}

std::string TableBuilder::Block::finish() {
    std::string out = std::move(buffer);
    for (const uint32_t r : restarts)
        put_fixed32(out, r);
    put_fixed32(out, static_cast<uint32_t>(restarts.size()));
    *this = Block{};
    return out;
}

TableBuilder::TableBuilder(TableOptions options) : options_(options) {}

void TableBuilder::add(std::string_view key, std::string_view value) {
    if (num_entries_ > 0 && key <= std::string_view(last_key_)) {
        throw errors::InvalidArgumentError(
            fmt::format("table keys must increase: '{}' after '{}'", key, last_key_));
    }
    if (pending_index_entry_) {
        shorten_separator(last_key_, key);
        std::string handle;
        put_handle(handle, pending_handle_);
        index_.add(last_key_, handle, 1);
        pending_index_entry_ = false;
    }
    last_key_.assign(key);
    ++num_entries_;
    data_.add(key, value, options_.block_restart_interval);
    if (data_.size_estimate() >= options_.block_size) flush();
}

void TableBuilder::flush() {
    if (data_.empty()) return;
    pending_handle_ = write_block(data_);
    pending_index_entry_ = true;
}

std::pair<uint64_t, uint64_t> TableBuilder::write_block(Block& block) {
    const std::string raw = block.finish();
    std::string_view contents = raw;
    auto type = Compression::none;
    std::string compressed;
    if (options_.compression == Compression::snappy) {
        snappy::Compress(raw.data(), raw.size(), &compressed);
        // Kept only when it saves at least 12.5%, as leveldb does.
        if (compressed.size() < raw.size() - raw.size() / 8) {
            contents = compressed;
            type = Compression::snappy;
        }
    }
    const std::pair<uint64_t, uint64_t> handle{out_.size(), contents.size()};
    out_.append(contents);
    const char type_byte = static_cast<char>(type);
    out_ += type_byte;
    put_fixed32(out_, mask_crc(crc32c_extend(crc32c(contents), &type_byte, 1)));
    return handle;
}

std::string TableBuilder::finish() {
    flush();
    Block metaindex;
    const auto metaindex_handle = write_block(metaindex);
    if (pending_index_entry_) {
        short_successor(last_key_);
        std::string handle;
        put_handle(handle, pending_handle_);
        index_.add(last_key_, handle, 1);
        pending_index_entry_ = false;
    }
    const auto index_handle = write_block(index_);
    std::string footer;
    put_handle(footer, metaindex_handle);
    put_handle(footer, index_handle);
    footer.resize(kHandlesSize, '\0');
    put_fixed32(footer, static_cast<uint32_t>(kMagic & 0xffffffffu));
    put_fixed32(footer, static_cast<uint32_t>(kMagic >> 32));
    out_ += footer;
    return std::move(out_);
}

std::vector<std::pair<std::string, std::string>> read_table(std::string_view file_bytes,
                                                            const std::string& file) {
    if (file_bytes.size() < kFooterSize) {
        corrupt(file,
                fmt::format("file of {} bytes is too short to be an sstable", file_bytes.size()));
    }
    const std::string_view footer = file_bytes.substr(file_bytes.size() - kFooterSize);
    const uint64_t magic = (static_cast<uint64_t>(get_fixed32(footer.data() + 44)) << 32) |
                           get_fixed32(footer.data() + 40);
    if (magic != kMagic) corrupt(file, "not an sstable (bad magic number)");
    std::size_t pos = 0;
    const std::string_view handles = footer.substr(0, kHandlesSize);
    const auto metaindex_handle = get_handle(handles, pos, file, "metaindex");
    const auto index_handle = get_handle(handles, pos, file, "index");
    // TF's tables have no meta blocks; the (empty) metaindex block is still checked.
    std::vector<std::pair<std::string, std::string>> meta;
    parse_block(read_block(file_bytes, metaindex_handle, file), file, meta);
    std::vector<std::pair<std::string, std::string>> index;
    parse_block(read_block(file_bytes, index_handle, file), file, index);
    std::vector<std::pair<std::string, std::string>> entries;
    for (const auto& [separator, value] : index) {
        std::size_t p = 0;
        const auto handle = get_handle(value, p, file, "data");
        const std::size_t first = entries.size();
        parse_block(read_block(file_bytes, handle, file), file, entries);
        for (std::size_t i = first; i < entries.size(); ++i) {
            if ((i > 0 && entries[i].first <= entries[i - 1].first) ||
                entries[i].first > separator) {
                corrupt(file, fmt::format("keys out of order at '{}'", entries[i].first));
            }
        }
    }
    return entries;
}

}  // namespace tapeflow::io::table

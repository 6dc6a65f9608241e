// Zip archives (PKWARE APPNOTE.TXT 6.3): local headers, the central directory, the end of central
// directory record and their ZIP64 forms. Writing keeps stored members' bytes where they are (the
// pieces go to write_file_atomically as they are); deflated members are raw deflate streams.
#include "io/zip.hpp"

#include <algorithm>
#include <ctime>
#include <limits>

#include <fmt/format.h>
#include <zlib.h>

#include <tapeflow/core/error.hpp>

#include "io/deflate.hpp"
#include "io/file_util.hpp"

namespace tapeflow::io::zip {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kLocator64Sig = 0x07064b50;
constexpr uint64_t kMax32 = 0xFFFFFFFF;
constexpr uint16_t kZip64Tag = 0x0001;

template <class T>
void put(std::string& out, T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i)
        out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint32_t crc_of(const std::vector<std::string_view>& pieces) {
    uLong crc = crc32_z(0, nullptr, 0);
    for (std::string_view p : pieces) {
        if (p.empty()) continue;  // crc32_z(crc, Z_NULL, 0) would restart the CRC
        crc = crc32_z(crc, reinterpret_cast<const Bytef*>(p.data()), p.size());
    }
    return static_cast<uint32_t>(crc);
}

// The MS-DOS time and date of now (zip's timestamps).
std::pair<uint16_t, uint16_t> dos_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    if (tm.tm_year < 80) return {0, (1 << 5) | 1};
    return {static_cast<uint16_t>((tm.tm_hour << 11) | (tm.tm_min << 5) | (tm.tm_sec / 2)),
            static_cast<uint16_t>(((tm.tm_year - 80) << 9) | ((tm.tm_mon + 1) << 5) | tm.tm_mday)};
}

[[noreturn]] void corrupt(const std::string& path, const std::string& why) {
    throw errors::DataLossError(fmt::format("{}: not a valid zip (.npz) archive: {}", path, why));
}

// Bounds-checked little-endian reads from the archive's bytes.
struct Reader {
    std::string_view b;
    const std::string& path;
    uint64_t get(uint64_t at, int n, const char* what) const {
        if (at > b.size() || static_cast<uint64_t>(n) > b.size() - at)
            corrupt(path, fmt::format("{} lies past the end of the file", what));
        uint64_t v = 0;
        for (int i = n - 1; i >= 0; --i)
            v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<uint64_t>(i)]);
        return v;
    }
    std::string_view slice(uint64_t at, uint64_t n, const char* what) const {
        if (at > b.size() || n > b.size() - at)
            corrupt(path, fmt::format("{} lies past the end of the file", what));
        return b.substr(at, n);
    }
};

std::string inflate_member(std::string_view in, uint64_t size, const std::string& what) {
    if (size > in.size() * uint64_t{1100} + 1024)  // deflate cannot expand beyond ~1032:1
        throw errors::DataLossError(fmt::format("{}: impossible uncompressed size {}", what, size));
    std::string out(size, '\0');
    z_stream z{};
    if (inflateInit2(&z, -15) != Z_OK) throw errors::ResourceExhaustedError("zlib: inflateInit2");
    uint64_t in_pos = 0, out_pos = 0;
    int rc = Z_OK;
    char spare;
    while (rc == Z_OK) {
        const uint64_t in_n = std::min<uint64_t>(in.size() - in_pos, 1u << 30);
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + in_pos));
        z.avail_in = static_cast<uInt>(in_n);
        const bool room = out_pos < size;
        const uint64_t out_n = room ? std::min<uint64_t>(size - out_pos, 1u << 30) : 1;
        z.next_out = reinterpret_cast<Bytef*>(room ? out.data() + out_pos : &spare);
        z.avail_out = static_cast<uInt>(out_n);
        rc = inflate(&z, Z_NO_FLUSH);
        in_pos += in_n - z.avail_in;
        if (!room && z.avail_out == 0) rc = Z_DATA_ERROR;  // more output than the size given
        if (room) out_pos += out_n - z.avail_out;
        if (rc == Z_BUF_ERROR && in_pos == in.size()) break;
        if (rc == Z_BUF_ERROR) rc = Z_OK;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END || out_pos != size) {
        throw errors::DataLossError(
            fmt::format("{}: corrupt deflate stream ({}; {} of {} bytes inflated)",
                        what,
                        rc == Z_STREAM_END ? "wrong size" : (z.msg ? z.msg : "truncated"),
                        out_pos,
                        size));
    }
    return out;
}

}  // namespace

void write_archive(const std::string& path,
                   const std::vector<MemberToWrite>& members,
                   bool compressed,
                   uint64_t zip64_from) {
    const auto [time, date] = dos_now();
    std::vector<std::string> owned;  // headers and deflated data; pieces point into them
    owned.reserve(members.size() * 2 + 1);
    std::vector<std::string_view> pieces;
    std::string central;
    uint64_t offset = 0;
    for (const MemberToWrite& m : members) {
        uint64_t size = 0;
        for (std::string_view p : m.pieces)
            size += p.size();
        const uint32_t crc = crc_of(m.pieces);
        const std::string* deflated = nullptr;
        if (compressed)
            deflated = &owned.emplace_back(deflate_pieces(m.pieces, DeflateFraming::raw));
        const uint64_t csize = compressed ? deflated->size() : size;
        const bool big = size >= zip64_from || csize >= zip64_from;
        const bool far = offset >= zip64_from;
        const uint16_t version = big || far ? 45 : 20;
        const uint16_t method = compressed ? 8 : 0;
        bool ascii = true;
        for (char c : m.name)
            ascii = ascii && (static_cast<unsigned char>(c) < 0x80);
        const uint16_t flags = ascii ? 0 : 0x0800;  // bit 11: the name is UTF-8
        std::string& local = owned.emplace_back();
        put<uint32_t>(local, kLocalSig);
        for (uint16_t v : {version, flags, method, time, date})
            put(local, v);
        put(local, crc);
        put<uint32_t>(local, big ? kMax32 : csize);
        put<uint32_t>(local, big ? kMax32 : size);
        put<uint16_t>(local, static_cast<uint16_t>(m.name.size()));
        put<uint16_t>(local, big ? 20 : 0);
        local += m.name;
        if (big) {
            put(local, kZip64Tag);
            put<uint16_t>(local, 16);
            put<uint64_t>(local, size);
            put<uint64_t>(local, csize);
        }
        std::string extra;
        if (big) put<uint64_t>(extra, size), put<uint64_t>(extra, csize);
        if (far) put<uint64_t>(extra, offset);
        if (!extra.empty()) {
            const std::string body = extra;
            extra.clear();
            put(extra, kZip64Tag);
            put<uint16_t>(extra, static_cast<uint16_t>(body.size()));
            extra += body;
        }
        put<uint32_t>(central, kCentralSig);
        for (uint16_t v : {uint16_t(0x0300 | version), version, flags, method, time, date})
            put(central, v);
        put(central, crc);
        put<uint32_t>(central, big ? kMax32 : csize);
        put<uint32_t>(central, big ? kMax32 : size);
        put<uint16_t>(central, static_cast<uint16_t>(m.name.size()));
        put<uint16_t>(central, static_cast<uint16_t>(extra.size()));
        for (uint16_t v : {0, 0, 0})
            put<uint16_t>(central, v);           // comment, disk, internal attrs
        put<uint32_t>(central, 0100644u << 16);  // external attrs: -rw-r--r--
        put<uint32_t>(central, far ? kMax32 : offset);
        central += m.name;
        central += extra;
        pieces.push_back(local);
        if (compressed) {
            pieces.push_back(*deflated);
        } else {
            pieces.insert(pieces.end(), m.pieces.begin(), m.pieces.end());
        }
        offset += local.size() + csize;
    }
    std::string& end = owned.emplace_back();
    const uint64_t n = members.size();
    const bool zip64 = n >= 0xFFFF || offset >= zip64_from || central.size() >= zip64_from;
    if (zip64) {
        put<uint32_t>(end, kEnd64Sig);
        put<uint64_t>(end, 44);
        put<uint16_t>(end, 45);
        put<uint16_t>(end, 45);
        put<uint32_t>(end, 0);
        put<uint32_t>(end, 0);
        put<uint64_t>(end, n);
        put<uint64_t>(end, n);
        put<uint64_t>(end, central.size());
        put<uint64_t>(end, offset);
        put<uint32_t>(end, kLocator64Sig);
        put<uint32_t>(end, 0);
        put<uint64_t>(end, offset + central.size());
        put<uint32_t>(end, 1);
    }
    put<uint32_t>(end, kEndSig);
    put<uint32_t>(end, 0);
    put<uint16_t>(end, zip64 ? 0xFFFF : n);
    put<uint16_t>(end, zip64 ? 0xFFFF : n);
    put<uint32_t>(end, zip64 ? kMax32 : central.size());
    put<uint32_t>(end, zip64 ? kMax32 : offset);
    put<uint16_t>(end, 0);
    pieces.push_back(central);
    pieces.push_back(end);
    write_file_atomically(path, pieces);
}

std::vector<Member> read_archive(std::string_view bytes, const std::string& path) {
    const Reader r{bytes, path};
    if (bytes.size() < 22) corrupt(path, "too short for an end of central directory record");
    // The end record: the last signature whose comment runs exactly to the end of the file.
    uint64_t end = bytes.size() - 22;
    for (;; --end) {
        if (r.get(end, 4, "end record") == kEndSig &&
            end + 22 + r.get(end + 20, 2, "comment") == bytes.size())
            break;
        if (end == 0 || bytes.size() - end > 22 + 0xFFFF)
            corrupt(path, "no end of central directory record");
    }
    if (r.get(end + 4, 2, "end record") != 0 || r.get(end + 6, 2, "end record") != 0)
        corrupt(path, "multi-disk archives are not supported");
    uint64_t count = r.get(end + 10, 2, "end record");
    uint64_t cd_size = r.get(end + 12, 4, "end record");
    uint64_t cd_offset = r.get(end + 16, 4, "end record");
    if (end >= 20 && r.get(end - 20, 4, "locator") == kLocator64Sig) {
        const uint64_t at = r.get(end - 20 + 8, 8, "ZIP64 locator");
        if (r.get(at, 4, "ZIP64 end record") != kEnd64Sig) corrupt(path, "bad ZIP64 end record");
        count = r.get(at + 32, 8, "ZIP64 end record");
        cd_size = r.get(at + 40, 8, "ZIP64 end record");
        cd_offset = r.get(at + 48, 8, "ZIP64 end record");
    }
    if (count > bytes.size() / 46) corrupt(path, "more members than the file can hold");
    r.slice(cd_offset, cd_size, "the central directory");
    std::vector<Member> out;
    uint64_t at = cd_offset;
    for (uint64_t i = 0; i < count; ++i) {
        if (r.get(at, 4, "a central directory entry") != kCentralSig)
            corrupt(path, fmt::format("bad central directory entry {}", i));
        const uint64_t flags = r.get(at + 8, 2, "entry");
        const uint64_t method = r.get(at + 10, 2, "entry");
        const uint32_t crc = static_cast<uint32_t>(r.get(at + 16, 4, "entry"));
        uint64_t csize = r.get(at + 20, 4, "entry");
        uint64_t size = r.get(at + 24, 4, "entry");
        const uint64_t name_len = r.get(at + 28, 2, "entry");
        const uint64_t extra_len = r.get(at + 30, 2, "entry");
        const uint64_t comment_len = r.get(at + 32, 2, "entry");
        uint64_t local = r.get(at + 42, 4, "entry");
        std::string name(r.slice(at + 46, name_len, "a member name"));
        const std::string what = fmt::format("{}: member '{}'", path, name);
        // ZIP64 extended information: the 8-byte values of the fields set to 0xFFFFFFFF, in order.
        std::string_view extra = r.slice(at + 46 + name_len, extra_len, "an extra field");
        for (uint64_t e = 0; e + 4 <= extra.size();) {
            const Reader x{extra, path};
            const uint64_t tag = x.get(e, 2, "extra"), len = x.get(e + 2, 2, "extra");
            if (tag == kZip64Tag) {
                uint64_t f = e + 4;
                for (uint64_t* field : {&size, &csize, &local}) {
                    if (*field != kMax32) continue;
                    if (f + 8 > e + 4 + len)
                        corrupt(path, fmt::format("{}: short ZIP64 field", what));
                    *field = x.get(f, 8, "ZIP64 extra");
                    f += 8;
                }
            }
            e += 4 + len;
        }
        at += 46 + name_len + extra_len + comment_len;
        if (flags & 1) throw errors::UnimplementedError(fmt::format("{} is encrypted", what));
        if (r.get(local, 4, "a local header") != kLocalSig)
            corrupt(path, fmt::format("{}: bad local header", what));
        // The data follows the local header's own name and extra field (their lengths may differ
        // from the central directory's); with a data descriptor (flag bit 3) the local sizes are 0,
        // the central directory's are the real ones.
        const uint64_t data_at = local + 30 + r.get(local + 26, 2, "local header") +
                                 r.get(local + 28, 2, "local header");
        std::string_view data = r.slice(data_at, csize, "member data");
        Member m{std::move(name), {}};
        if (method == 0) {
            if (csize != size) corrupt(path, fmt::format("{}: stored sizes differ", what));
            m.bytes = std::string(data);
        } else if (method == 8) {
            m.bytes = inflate_member(data, size, what);
        } else {
            throw errors::UnimplementedError(fmt::format(
                "{}: compression method {} (only stored and deflate are supported)", what, method));
        }
        if (crc_of({m.bytes}) != crc)
            throw errors::DataLossError(fmt::format("{}: CRC-32 mismatch (corrupt archive)", what));
        out.push_back(std::move(m));
    }
    return out;
}

}  // namespace tapeflow::io::zip

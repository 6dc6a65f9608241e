// File sources of tf::data: TFRecordDataset (through tf::io::TFRecordReader, which checks the
// framing and CRCs) and TextLineDataset. Files open when the iteration reaches them, as in
// tf.data, so a missing file raises NotFoundError from the iterator.
#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/core.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/io.hpp>

#include "io/record_file.hpp"

namespace tapeflow::data {
namespace {

// The records of one file. After an error (corrupt or truncated record) the rest of the file
// cannot be framed reliably, so the file ends there.
Dataset<std::string> tfrecord_file(std::string path, std::string compression) {
    return Dataset<std::string>([path = std::move(path), compression = std::move(compression)] {
        return detail::make_source<std::string>(
            [path,
             compression,
             reader = std::unique_ptr<io::TFRecordReader>(),
             done = false]() mutable -> std::optional<std::string> {
                if (done) return std::nullopt;
                try {
                    if (!reader) reader = std::make_unique<io::TFRecordReader>(path, compression);
                    auto record = reader->next();
                    if (!record) done = true;
                    return record;
                } catch (...) {
                    done = true;
                    throw;
                }
            });
    });
}

Dataset<std::string> text_file(std::string path) {
    return Dataset<std::string>([path = std::move(path)] {
        return detail::make_source<std::string>(
            [path, in = std::unique_ptr<std::ifstream>()]() mutable -> std::optional<std::string> {
                if (!in) {
                    in = std::make_unique<std::ifstream>(path, std::ios::binary);
                    if (!*in)
                        throw errors::NotFoundError(
                            fmt::format("{}; {}", path, std::strerror(errno ? errno : ENOENT)));
                }
                std::string line;
                if (!std::getline(*in, line)) {
                    if (in->bad()) throw errors::DataLossError(fmt::format("{}: read error", path));
                    return std::nullopt;
                }
                if (!line.empty() && line.back() == '\r') line.pop_back();
                return line;
            });
    });
}

// Files one after another, or `parallel` of them interleaved and read ahead on threads.
Dataset<std::string> over_files(std::vector<std::string> files,
                                int parallel,
                                std::function<Dataset<std::string>(const std::string&)> open) {
    const int64_t cycle = std::max<int64_t>(1, parallel);
    return from_vector(std::move(files)).interleave(std::move(open), cycle, parallel);
}

}  // namespace

Dataset<std::string> TFRecordDataset(std::vector<std::string> files,
                                     std::string_view compression,
                                     int num_parallel_reads) {
    io::parse_compression(compression);  // InvalidArgumentError now, not at iteration
    const int parallel = detail::resolve_parallelism(num_parallel_reads, "num_parallel_reads");
    std::string type(compression);
    return over_files(std::move(files), parallel, [type](const std::string& path) {
        return tfrecord_file(path, type);
    });
}

Dataset<std::string> TextLineDataset(std::vector<std::string> files) {
    return over_files(std::move(files), 1, [](const std::string& path) { return text_file(path); });
}

}  // namespace tapeflow::data

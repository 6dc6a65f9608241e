// tf::io::TFRecordWriter / TFRecordReader: thin public handles over the internal record files.
#include <tapeflow/io.hpp>

#include "io/record_file.hpp"

namespace tapeflow::io {

struct TFRecordWriter::Impl {
    Impl(std::string path, std::string_view compression)
        : file(std::move(path), parse_compression(compression)) {}
    RecordFileWriter file;
};

TFRecordWriter::TFRecordWriter(std::string path, std::string_view compression_type)
    : impl_(std::make_unique<Impl>(std::move(path), compression_type)) {}
TFRecordWriter::~TFRecordWriter() = default;
TFRecordWriter::TFRecordWriter(TFRecordWriter&&) noexcept = default;
TFRecordWriter& TFRecordWriter::operator=(TFRecordWriter&&) noexcept = default;

void TFRecordWriter::write(std::string_view record) {
    impl_->file.append(record);
}
void TFRecordWriter::flush() {
    impl_->file.flush(true);
}
void TFRecordWriter::close() {
    impl_->file.close();
}
const std::string& TFRecordWriter::path() const {
    return impl_->file.path();
}

struct TFRecordReader::Impl {
    Impl(std::string path, std::string_view compression)
        : file(std::move(path), parse_compression(compression)) {}
    RecordFileReader file;
};

TFRecordReader::TFRecordReader(std::string path, std::string_view compression_type)
    : impl_(std::make_unique<Impl>(std::move(path), compression_type)) {}
TFRecordReader::~TFRecordReader() = default;
TFRecordReader::TFRecordReader(TFRecordReader&&) noexcept = default;
TFRecordReader& TFRecordReader::operator=(TFRecordReader&&) noexcept = default;

std::optional<std::string> TFRecordReader::next() {
    return impl_->file.next();
}

std::vector<std::string> read_tfrecords(const std::string& path,
                                        std::string_view compression_type) {
    TFRecordReader reader(path, compression_type);
    std::vector<std::string> out;
    while (auto record = reader.next())
        out.push_back(std::move(*record));
    return out;
}

}  // namespace tapeflow::io

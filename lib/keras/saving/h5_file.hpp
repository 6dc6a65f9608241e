// A small RAII layer over HDF5's C API for Keras weight files: files (read, or built in memory and
// written atomically), groups, numeric datasets and string attributes: read fixed- or
// variable-length, written as h5py 3 writes Python str and bytes (variable-length). Not a general
// HDF5 binding. Every failure is a tapeflow error naming the file and the object: DataLossError for
// a file HDF5 cannot read, NotFoundError for a missing object, InvalidArgumentError for an object
// of the wrong kind.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <tapeflow/core/tensor.hpp>

namespace tapeflow::keras::h5 {

/// HDF5 (the serial build Debian ships) is not thread-safe: every caller holds this lock.
std::recursive_mutex& hdf5_mutex();

/// An owned HDF5 identifier, closed by the matching H5*close function.
class Id {
public:
    using Closer = int (*)(int64_t);
    Id() = default;
    Id(int64_t id, Closer closer) : id_(id), closer_(closer) {}
    ~Id() { reset(); }
    Id(Id&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = -1; }
    Id& operator=(Id&& other) noexcept;
    Id(const Id&) = delete;
    Id& operator=(const Id&) = delete;
    int64_t get() const { return id_; }
    void reset();

private:
    int64_t id_ = -1;
    Closer closer_ = nullptr;
};

class Group {
public:
    Group(Id id, std::string file, std::string path)
        : id_(std::move(id)), file_(std::move(file)), path_(std::move(path)) {}

    /// "/" for the root, else "/a/b".
    const std::string& path() const { return path_; }
    const std::string& file() const { return file_; }

    /// Whether `name` (a child, or a relative path "a/b") exists as a hard link. Soft and external
    /// links are refused (InvalidArgumentError), as Keras' safe_get_h5_group refuses them.
    bool has(const std::string& name) const;
    bool has_group(const std::string& name) const;
    bool has_dataset(const std::string& name) const;
    /// The child group at relative path `name` (NotFoundError when missing).
    Group group(const std::string& name) const;
    /// Creates the group at `name` (missing intermediate groups too).
    Group create_group(const std::string& name) const;
    /// Names of the direct children, in HDF5's name order (as h5py lists them).
    std::vector<std::string> children() const;

    /// The dataset at relative path `name` as a CPU tensor: float16/32/64, int8..int64, uint8
    /// (other unsigned widths as int64). Refuses external and virtual datasets, and datasets that
    /// declare far more bytes than the file stores (Keras' "shape bomb" guard).
    Tensor read_dataset(const std::string& name) const;
    /// Writes `value` (any device; float16/32/64, bfloat16 as float32, integers, bool as h5py's
    /// enum) as a contiguous dataset at `name`, creating intermediate groups as h5py does.
    void write_dataset(const std::string& name, const Tensor& value) const;

    bool has_attr(const std::string& name) const;
    /// A string attribute, scalar or 1-D, fixed or variable length, as a list; an empty numeric
    /// array (what h5py stores for an empty list) reads as no strings.
    std::vector<std::string> read_strings_attr(const std::string& name) const;
    /// A list of Python `bytes` as h5py 3 stores it (`attrs[name] = [b"a", b"bc"]`): a 1-D array of
    /// variable-length ASCII strings; an empty list is h5py's empty float64 array.
    void write_bytes_array_attr(const std::string& name,
                                const std::vector<std::string>& values) const;
    /// A Python `bytes` scalar as h5py 3 stores it (variable-length ASCII).
    void write_bytes_attr(const std::string& name, const std::string& value) const;
    /// A Python `str` scalar as h5py stores it (variable-length UTF-8).
    void write_str_attr(const std::string& name, const std::string& value) const;

private:
    std::string where(const std::string& name) const;  // "'<path>/<name>' in <file>"
    Id id_;
    std::string file_;
    std::string path_;
};

/// An HDF5 file opened read-only (errors name `path`).
class File {
public:
    /// NotFoundError when `path` does not exist, DataLossError when it is not a readable HDF5 file.
    static File open(const std::string& path);
    /// A new empty file held in memory; commit() writes it to `path` atomically.
    static File create_in_memory(const std::string& path);

    Group root() const;
    /// Writes the in-memory file to its path (temp file, fsync, rename) and closes it.
    void commit();

private:
    File(Id id, std::string path) : id_(std::move(id)), path_(std::move(path)) {}
    Id id_;
    std::string path_;
};

}  // namespace tapeflow::keras::h5

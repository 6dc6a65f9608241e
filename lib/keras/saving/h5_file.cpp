// HDF5 C API calls behind h5_file.hpp. HDF5's own error printing is switched off; its innermost
// message is appended to tapeflow's errors instead.
#include "keras/saving/h5_file.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>
#include <hdf5.h>
#include <sys/stat.h>

#include <tapeflow/core/error.hpp>

#include "io/file_util.hpp"

namespace tapeflow::keras::h5 {
namespace {

static_assert(sizeof(hid_t) == sizeof(int64_t));

// Keras' shape-bomb guard (saving_lib.safe_get_h5_dataset): above 4 GiB, a dataset may declare at
// most 1000x the bytes it stores.
constexpr uint64_t kBombFloorBytes = uint64_t{1} << 32;
constexpr uint64_t kMaxExpansion = 1000;

herr_t first_error(unsigned n, const H5E_error2_t* e, void* out) {
    if (n == 0 && e->desc) *static_cast<std::string*>(out) = e->desc;
    return 0;
}

// The innermost message of HDF5's error stack ("" when empty), then clears it.
std::string hdf5_message() {
    std::string message;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, first_error, &message);
    H5Eclear2(H5E_DEFAULT);
    return message.empty() ? "" : " (HDF5: " + message + ")";
}

void quiet_hdf5() {
    static std::once_flag once;
    std::call_once(once, [] {
        H5open();
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    });
}

template <class E = errors::DataLossError>
[[noreturn]] void fail(const std::string& message) {
    throw E(message + hdf5_message());
}

Id checked(hid_t id, Id::Closer closer, const std::string& what) {
    if (id < 0) fail(what);
    return Id(id, closer);
}

Id type_id(hid_t id, const std::string& what) {
    return checked(id, H5Tclose, what);
}
Id space_id(hid_t id, const std::string& what) {
    return checked(id, H5Sclose, what);
}

// Variable-length strings as h5py 3 stores Python str (UTF-8) and bytes (ASCII).
Id vlen_string_type(H5T_cset_t cset, const std::string& what) {
    Id t = type_id(H5Tcopy(H5T_C_S1), what);
    if (H5Tset_size(t.get(), H5T_VARIABLE) < 0 || H5Tset_cset(t.get(), cset) < 0) fail(what);
    return t;
}

// numpy's float16 as h5py defines it (IEEE half, little endian).
Id half_type(const std::string& what) {
    Id t = type_id(H5Tcopy(H5T_IEEE_F32LE), what);
    if (H5Tset_fields(t.get(), 15, 10, 5, 0, 10) < 0 || H5Tset_size(t.get(), 2) < 0 ||
        H5Tset_ebias(t.get(), 15) < 0)
        fail(what);
    return t;
}

// numpy's bool as h5py stores it: an int8 enum FALSE = 0, TRUE = 1.
Id bool_type(const std::string& what) {
    Id t = type_id(H5Tenum_create(H5T_NATIVE_INT8), what);
    const int8_t no = 0, yes = 1;
    if (H5Tenum_insert(t.get(), "FALSE", &no) < 0 || H5Tenum_insert(t.get(), "TRUE", &yes) < 0)
        fail(what);
    return t;
}

struct Layout {
    DType dtype;        // of the tensor read
    hid_t memory_type;  // what HDF5 converts the elements to
};

// How a dataset's element type is read, or nullopt for types that hold no numbers.
std::optional<Layout> layout_of(hid_t type) {
    const H5T_class_t cls = H5Tget_class(type);
    const std::size_t size = H5Tget_size(type);
    if (cls == H5T_FLOAT) {
        if (size == 8) return Layout{DType::float64, H5T_NATIVE_DOUBLE};
        if (size == 4 || size == 2) return Layout{DType::float32, H5T_NATIVE_FLOAT};
        return std::nullopt;
    }
    if (cls == H5T_INTEGER) {
        const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
        if (!is_signed && size == 1) return Layout{DType::uint8, H5T_NATIVE_UINT8};
        if (is_signed && size <= 4) return Layout{DType::int32, H5T_NATIVE_INT32};
        if (size <= 8) return Layout{DType::int64, H5T_NATIVE_INT64};
    }
    if (cls == H5T_ENUM && size == 1) return Layout{DType::int32, H5T_NATIVE_INT32};  // h5py bool
    return std::nullopt;
}

// Walks `name` ("a/b/c") from `parent`, refusing soft and external links on the way (Keras refuses
// them: they can point outside the file). Returns whether every component exists.
bool hard_path_exists(hid_t parent, const std::string& name, const std::string& where) {
    if (name.empty() || name.front() == '/' || name.back() == '/' ||
        name.find("//") != std::string::npos)
        throw errors::InvalidArgumentError(fmt::format("invalid HDF5 path {}", where));
    std::size_t end = 0;
    while (end != std::string::npos) {
        end = name.find('/', end + 1);
        const std::string prefix = name.substr(0, end);
        const htri_t exists = H5Lexists(parent, prefix.c_str(), H5P_DEFAULT);
        if (exists < 0) fail(fmt::format("cannot read {}", where));
        if (exists == 0) return false;
        H5L_info_t info;
        if (H5Lget_info(parent, prefix.c_str(), &info, H5P_DEFAULT) < 0)
            fail(fmt::format("cannot read {}", where));
        if (info.type != H5L_TYPE_HARD)
            throw errors::InvalidArgumentError(fmt::format(
                "{}: refusing a soft or external HDF5 link (Keras refuses them too)", where));
    }
    return true;
}

H5O_type_t object_type(hid_t parent, const std::string& name, const std::string& where) {
    H5O_info_t info;
    if (H5Oget_info_by_name(parent, name.c_str(), &info, H5P_DEFAULT) < 0)
        fail(fmt::format("cannot read {}", where));
    return info.type;
}

void write_attr(hid_t object,
                const std::string& name,
                hid_t type,
                hid_t space,
                const void* data,
                const std::string& where) {
    if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
    Id attr = checked(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                      H5Aclose,
                      fmt::format("cannot create attribute {}", where));
    if (H5Awrite(attr.get(), type, data) < 0) fail(fmt::format("cannot write attribute {}", where));
}

}  // namespace

std::recursive_mutex& hdf5_mutex() {
    static std::recursive_mutex mutex;
    return mutex;
}

Id& Id::operator=(Id&& other) noexcept {
    if (this != &other) {
        reset();
        id_ = other.id_;
        closer_ = other.closer_;
        other.id_ = -1;
    }
    return *this;
}

void Id::reset() {
    if (id_ >= 0 && closer_) closer_(id_);
    id_ = -1;
}

// ---- Group ----

std::string Group::where(const std::string& name) const {
    const std::string base = path_ == "/" ? "" : path_;
    return fmt::format("'{}/{}' in {}", base, name, file_);
}

bool Group::has(const std::string& name) const {
    return hard_path_exists(id_.get(), name, where(name));
}

bool Group::has_group(const std::string& name) const {
    return has(name) && object_type(id_.get(), name, where(name)) == H5O_TYPE_GROUP;
}

bool Group::has_dataset(const std::string& name) const {
    return has(name) && object_type(id_.get(), name, where(name)) == H5O_TYPE_DATASET;
}

Group Group::group(const std::string& name) const {
    if (!has(name)) throw errors::NotFoundError(fmt::format("no HDF5 group {}", where(name)));
    if (object_type(id_.get(), name, where(name)) != H5O_TYPE_GROUP)
        throw errors::InvalidArgumentError(fmt::format("{} is not an HDF5 group", where(name)));
    Id id = checked(H5Gopen2(id_.get(), name.c_str(), H5P_DEFAULT),
                    H5Gclose,
                    fmt::format("cannot open group {}", where(name)));
    const std::string base = path_ == "/" ? "" : path_;
    return Group(std::move(id), file_, base + "/" + name);
}

Group Group::create_group(const std::string& name) const {
    Id links = checked(H5Pcreate(H5P_LINK_CREATE), H5Pclose, "cannot create HDF5 properties");
    H5Pset_create_intermediate_group(links.get(), 1);
    Id id = checked(H5Gcreate2(id_.get(), name.c_str(), links.get(), H5P_DEFAULT, H5P_DEFAULT),
                    H5Gclose,
                    fmt::format("cannot create group {}", where(name)));
    const std::string base = path_ == "/" ? "" : path_;
    return Group(std::move(id), file_, base + "/" + name);
}

std::vector<std::string> Group::children() const {
    std::vector<std::string> names;
    auto collect = [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->emplace_back(name);
        return 0;
    };
    hsize_t index = 0;
    if (H5Literate(id_.get(), H5_INDEX_NAME, H5_ITER_INC, &index, collect, &names) < 0)
        fail(fmt::format("cannot list group '{}' in {}", path_, file_));
    return names;
}

Tensor Group::read_dataset(const std::string& name) const {
    const std::string at = where(name);
    if (!has(name)) throw errors::NotFoundError(fmt::format("no HDF5 dataset {}", at));
    if (object_type(id_.get(), name, at) != H5O_TYPE_DATASET)
        throw errors::InvalidArgumentError(fmt::format("{} is not an HDF5 dataset", at));
    Id set = checked(H5Dopen2(id_.get(), name.c_str(), H5P_DEFAULT),
                     H5Dclose,
                     fmt::format("cannot open dataset {}", at));
    Id plist = checked(H5Dget_create_plist(set.get()), H5Pclose, "cannot read dataset " + at);
    if (H5Pget_layout(plist.get()) == H5D_VIRTUAL || H5Pget_external_count(plist.get()) > 0)
        throw errors::InvalidArgumentError(fmt::format(
            "{} is an external or virtual dataset (its data lives outside the file); refused", at));
    H5Eclear2(H5E_DEFAULT);
    Id space = space_id(H5Dget_space(set.get()), "cannot read the shape of dataset " + at);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0 || rank > 32) fail(fmt::format("dataset {} has no readable shape", at));
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
        fail(fmt::format("cannot read the shape of dataset {}", at));
    Id type = type_id(H5Dget_type(set.get()), "cannot read the type of dataset " + at);
    const std::optional<Layout> layout = layout_of(type.get());
    if (!layout)
        throw errors::InvalidArgumentError(
            fmt::format("dataset {} does not hold numbers (HDF5 type class {})",
                        at,
                        static_cast<int>(H5Tget_class(type.get()))));
    std::vector<int64_t> shape;
    uint64_t count = 1;
    for (hsize_t d : dims) {
        if (d > (uint64_t{1} << 40) || (d != 0 && count > (uint64_t{1} << 40) / d))
            throw errors::InvalidArgumentError(
                fmt::format("dataset {} declares an impossibly large shape", at));
        count *= d;
        shape.push_back(static_cast<int64_t>(d));
    }
    const uint64_t declared = count * H5Tget_size(type.get());
    const uint64_t stored = H5Dget_storage_size(set.get());
    if (declared > kBombFloorBytes && declared > kMaxExpansion * stored)
        throw errors::InvalidArgumentError(fmt::format(
            "dataset {} declares {} bytes but stores {}; refusing a potential decompression or "
            "shape bomb",
            at,
            declared,
            stored));
    Tensor out = Tensor::empty(Shape(shape), layout->dtype);
    if (count > 0 &&
        H5Dread(
            set.get(), layout->memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.mutable_raw_data()) <
            0)
        fail(fmt::format("cannot read dataset {} (truncated or corrupt file?)", at));
    if (H5Tget_class(type.get()) == H5T_FLOAT && H5Tget_size(type.get()) == 2)
        return out.cast(DType::float16);
    return out;
}

void Group::write_dataset(const std::string& name, const Tensor& value) const {
    const std::string at = where(name);
    Tensor host = value.cpu();
    Id file_type;
    hid_t memory_type = -1;
    switch (host.dtype()) {
        case DType::bfloat16:
            host = host.cast(DType::float32);
            [[fallthrough]];
        case DType::float32:
            memory_type = H5T_NATIVE_FLOAT;
            file_type = type_id(H5Tcopy(H5T_IEEE_F32LE), at);
            break;
        case DType::float64:
            memory_type = H5T_NATIVE_DOUBLE;
            file_type = type_id(H5Tcopy(H5T_IEEE_F64LE), at);
            break;
        case DType::float16:
            file_type = half_type(at);
            memory_type = file_type.get();
            break;
        case DType::int32:
            memory_type = H5T_NATIVE_INT32;
            file_type = type_id(H5Tcopy(H5T_STD_I32LE), at);
            break;
        case DType::int64:
            memory_type = H5T_NATIVE_INT64;
            file_type = type_id(H5Tcopy(H5T_STD_I64LE), at);
            break;
        case DType::uint8:
            memory_type = H5T_NATIVE_UINT8;
            file_type = type_id(H5Tcopy(H5T_STD_U8LE), at);
            break;
        case DType::bool_:
            file_type = bool_type(at);
            memory_type = file_type.get();
            break;
    }
    if (memory_type < 0)
        throw errors::InvalidArgumentError(fmt::format(
            "cannot store a {} tensor in HDF5 dataset {}", dtype_name(host.dtype()), at));
    std::vector<hsize_t> dims;
    for (int64_t d : host.shape().dims())
        dims.push_back(static_cast<hsize_t>(d));
    Id space =
        dims.empty()
            ? space_id(H5Screate(H5S_SCALAR), at)
            : space_id(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), at);
    Id links = checked(H5Pcreate(H5P_LINK_CREATE), H5Pclose, "cannot create HDF5 properties");
    H5Pset_create_intermediate_group(links.get(), 1);
    Id set = checked(H5Dcreate2(id_.get(),
                                name.c_str(),
                                file_type.get(),
                                space.get(),
                                links.get(),
                                H5P_DEFAULT,
                                H5P_DEFAULT),
                     H5Dclose,
                     fmt::format("cannot create dataset {}", at));
    if (host.num_elements() > 0 &&
        H5Dwrite(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, host.raw_data()) < 0)
        fail(fmt::format("cannot write dataset {}", at));
}

bool Group::has_attr(const std::string& name) const {
    const htri_t exists = H5Aexists(id_.get(), name.c_str());
    if (exists < 0) fail(fmt::format("cannot read attributes of '{}' in {}", path_, file_));
    return exists > 0;
}

std::vector<std::string> Group::read_strings_attr(const std::string& name) const {
    const std::string at = fmt::format("'{}' of '{}' in {}", name, path_, file_);
    if (!has_attr(name)) throw errors::NotFoundError("no HDF5 attribute " + at);
    Id attr = checked(
        H5Aopen(id_.get(), name.c_str(), H5P_DEFAULT), H5Aclose, "cannot open attribute " + at);
    Id space = space_id(H5Aget_space(attr.get()), "cannot read attribute " + at);
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    if (n < 0 || H5Sget_simple_extent_ndims(space.get()) > 1)
        throw errors::InvalidArgumentError("attribute " + at + " is not a list of strings");
    Id type = type_id(H5Aget_type(attr.get()), "cannot read attribute " + at);
    if (H5Tget_class(type.get()) != H5T_STRING) {
        if (n == 0) return {};  // h5py stores an empty list as an empty float64 array
        throw errors::InvalidArgumentError("attribute " + at + " does not hold strings");
    }
    const auto count = static_cast<std::size_t>(n);
    std::vector<std::string> out;
    if (H5Tis_variable_str(type.get()) > 0) {
        Id memory = type_id(H5Tcopy(H5T_C_S1), "attribute " + at);
        H5Tset_size(memory.get(), H5T_VARIABLE);
        H5Tset_cset(memory.get(), H5Tget_cset(type.get()));
        std::vector<char*> items(count, nullptr);
        if (H5Aread(attr.get(), memory.get(), items.data()) < 0)
            fail("cannot read attribute " + at);
        for (char* item : items)
            out.emplace_back(item ? item : "");
        H5Dvlen_reclaim(memory.get(), space.get(), H5P_DEFAULT, items.data());
        return out;
    }
    const std::size_t size = H5Tget_size(type.get());
    if (size == 0 || size > (std::size_t{1} << 24))
        throw errors::InvalidArgumentError("attribute " + at + " has an invalid string size");
    Id memory = type_id(H5Tcopy(type.get()), "attribute " + at);
    std::string bytes(count * size, '\0');
    if (count > 0 && H5Aread(attr.get(), memory.get(), bytes.data()) < 0)
        fail("cannot read attribute " + at);
    const bool space_padded = H5Tget_strpad(type.get()) == H5T_STR_SPACEPAD;
    for (std::size_t i = 0; i < count; ++i) {
        std::string item = bytes.substr(i * size, size);
        item = item.substr(0, item.find('\0'));
        if (space_padded) item.erase(item.find_last_not_of(' ') + 1);
        out.push_back(std::move(item));
    }
    return out;
}

void Group::write_bytes_array_attr(const std::string& name,
                                   const std::vector<std::string>& values) const {
    const std::string at = fmt::format("'{}' of '{}' in {}", name, path_, file_);
    const hsize_t n = values.size();
    Id space = space_id(H5Screate_simple(1, &n, nullptr), at);
    if (values.empty()) {
        const double none = 0;  // HDF5 wants a buffer even for zero elements
        write_attr(id_.get(), name, H5T_IEEE_F64LE, space.get(), &none, at);
        return;
    }
    std::vector<const char*> items;
    for (const std::string& v : values)
        items.push_back(v.c_str());
    Id type = vlen_string_type(H5T_CSET_ASCII, at);
    write_attr(id_.get(), name, type.get(), space.get(), items.data(), at);
}

void Group::write_bytes_attr(const std::string& name, const std::string& value) const {
    const std::string at = fmt::format("'{}' of '{}' in {}", name, path_, file_);
    Id space = space_id(H5Screate(H5S_SCALAR), at);
    Id type = vlen_string_type(H5T_CSET_ASCII, at);
    const char* data = value.c_str();
    write_attr(id_.get(), name, type.get(), space.get(), &data, at);
}

void Group::write_str_attr(const std::string& name, const std::string& value) const {
    const std::string at = fmt::format("'{}' of '{}' in {}", name, path_, file_);
    Id space = space_id(H5Screate(H5S_SCALAR), at);
    Id type = vlen_string_type(H5T_CSET_UTF8, at);
    const char* data = value.c_str();
    write_attr(id_.get(), name, type.get(), space.get(), &data, at);
}

// ---- File ----

File File::open(const std::string& path) {
    quiet_hdf5();
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) io::throw_io_error("cannot open", path, errno);
    const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
    if (is_hdf5 <= 0)
        fail(fmt::format("{} is not an HDF5 file (no HDF5 signature: truncated or another format)",
                         path));
    Id id = checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT),
                    H5Fclose,
                    fmt::format("cannot open HDF5 file {} (truncated or corrupt?)", path));
    return File(std::move(id), path);
}

File File::create_in_memory(const std::string& path) {
    quiet_hdf5();
    Id access = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "cannot create HDF5 properties");
    // The core driver keeps the whole file in memory (no backing store): commit() takes its image
    // and writes it with io::write_file_atomically.
    if (H5Pset_fapl_core(access.get(), 1 << 20, 0) < 0)
        fail("cannot set up an in-memory HDF5 file for " + path);
    Id id = checked(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()),
                    H5Fclose,
                    fmt::format("cannot create HDF5 file {}", path));
    return File(std::move(id), path);
}

Group File::root() const {
    Id id = checked(H5Gopen2(id_.get(), "/", H5P_DEFAULT),
                    H5Gclose,
                    fmt::format("cannot open the root group of {}", path_));
    return Group(std::move(id), path_, "/");
}

void File::commit() {
    if (H5Fflush(id_.get(), H5F_SCOPE_GLOBAL) < 0) fail("cannot finish HDF5 file " + path_);
    const ssize_t size = H5Fget_file_image(id_.get(), nullptr, 0);
    if (size < 0) fail("cannot finish HDF5 file " + path_);
    std::string image(static_cast<std::size_t>(size), '\0');
    if (H5Fget_file_image(id_.get(), image.data(), image.size()) < 0)
        fail("cannot finish HDF5 file " + path_);
    id_.reset();
    io::write_file_atomically(path_, image);
}

}  // namespace tapeflow::keras::h5

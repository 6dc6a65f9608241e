// tf::train::CheckpointReader: TensorFlow checkpoints (tensor_bundle) read through
// train/checkpoint/tensor_bundle.hpp.
#include <filesystem>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/train/checkpoint_reader.hpp>

#include "train/checkpoint/checkpoint_file.hpp"
#include "train/checkpoint/checkpoint_state.hpp"
#include "train/checkpoint/tensor_bundle.hpp"

namespace tapeflow::train {

struct CheckpointReader::Impl {
    std::string prefix;
    std::string index_file;
    ckpt::bundle::BundleIndex index;
    std::vector<std::string> data_files;
    std::vector<std::unique_ptr<ckpt::ByteSource>> data;

    const ckpt::bundle::BundleEntry& entry(const std::string& key) const {
        const auto it = index.entries.find(key);
        if (it == index.entries.end()) {
            throw errors::NotFoundError(
                fmt::format("Key {} not found in checkpoint {}", key, index_file));
        }
        return it->second;
    }
    // The entry's bytes, from its shard.
    std::string read(const std::string& key, const ckpt::bundle::BundleEntry& e) const {
        const ckpt::ByteSource& src = *data.at(static_cast<std::size_t>(e.shard_id));
        const std::string& file = data_files[e.shard_id];
        if (e.offset > src.size() || e.size > src.size() - e.offset) {
            throw errors::DataLossError(fmt::format(
                "Corrupt checkpoint data {} for key '{}': bytes [{}, {}) lie past its end ({} "
                "bytes)",
                file,
                key,
                e.offset,
                e.offset + e.size,
                src.size()));
        }
        std::string bytes(e.size, '\0');
        src.read(e.offset, bytes.data(), bytes.size());
        return bytes;
    }
};

namespace {

std::string resolve_prefix(const std::string& prefix_or_dir) {
    std::error_code ec;
    if (std::filesystem::is_directory(prefix_or_dir, ec)) {
        // The state file's latest checkpoint, else the newest listed one whose index exists.
        if (const auto state = ckpt::read_checkpoint_state(prefix_or_dir)) {
            std::vector<std::string> candidates = {state->model_checkpoint_path};
            candidates.insert(candidates.end(),
                              state->all_model_checkpoint_paths.rbegin(),
                              state->all_model_checkpoint_paths.rend());
            for (const std::string& prefix : candidates) {
                if (std::filesystem::exists(ckpt::bundle::index_file_name(prefix), ec))
                    return prefix;
            }
        }
        throw errors::NotFoundError(fmt::format(
            "No TensorFlow checkpoint found in directory {} (no \"checkpoint\" state file naming "
            "an existing <prefix>.index)",
            prefix_or_dir));
    }
    constexpr std::string_view kIndex = ".index";
    if (prefix_or_dir.ends_with(kIndex))
        return prefix_or_dir.substr(0, prefix_or_dir.size() - kIndex.size());
    return prefix_or_dir;
}

}  // namespace

CheckpointReader::CheckpointReader(const std::string& prefix_or_dir) {
    auto impl = std::make_shared<Impl>();
    impl->prefix = resolve_prefix(prefix_or_dir);
    impl->index_file = ckpt::bundle::index_file_name(impl->prefix);
    std::error_code ec;
    if (!std::filesystem::exists(impl->index_file, ec)) {
        throw errors::NotFoundError(fmt::format(
            "Unsuccessful TensorSliceReader constructor: Failed to find any matching files for {}",
            impl->prefix));
    }
    const auto index_source = ckpt::open_file_source(impl->index_file);
    std::string bytes(index_source->size(), '\0');
    index_source->read(0, bytes.data(), bytes.size());
    impl->index = ckpt::bundle::parse_index(bytes, impl->index_file);
    for (int s = 0; s < impl->index.num_shards; ++s) {
        impl->data_files.push_back(
            ckpt::bundle::data_file_name(impl->prefix, s, impl->index.num_shards));
        impl->data.push_back(ckpt::open_file_source(impl->data_files.back()));
    }
    impl_ = std::move(impl);
}

const std::string& CheckpointReader::prefix() const {
    return impl_->prefix;
}

std::map<std::string, Shape> CheckpointReader::get_variable_to_shape_map() const {
    std::map<std::string, Shape> out;
    for (const auto& [key, e] : impl_->index.entries)
        out.emplace(key, e.shape);
    return out;
}

std::map<std::string, DType> CheckpointReader::get_variable_to_dtype_map() const {
    std::map<std::string, DType> out;
    for (const auto& [key, e] : impl_->index.entries) {
        const auto dtype = ckpt::bundle::tapeflow_dtype_of(e.dtype);
        if (dtype && !e.sliced) out.emplace(key, *dtype);
    }
    return out;
}

std::string CheckpointReader::dtype_name(const std::string& key) const {
    return ckpt::bundle::tf_dtype_name(impl_->entry(key).dtype);
}

bool CheckpointReader::has_tensor(const std::string& key) const {
    return impl_->index.entries.contains(key);
}

Tensor CheckpointReader::get_tensor(const std::string& key) const {
    const auto& e = impl_->entry(key);
    if (e.sliced || !ckpt::bundle::tapeflow_dtype_of(e.dtype))
        return ckpt::bundle::decode_tensor(key, e, {}, impl_->index_file);  // throws
    return ckpt::bundle::decode_tensor(key, e, impl_->read(key, e), impl_->data_files[e.shard_id]);
}

std::vector<std::string> CheckpointReader::get_tensor_bytes(const std::string& key) const {
    const auto& e = impl_->entry(key);
    if (e.dtype != ckpt::bundle::DT_STRING)
        return ckpt::bundle::decode_strings(key, e, {}, impl_->index_file);  // throws
    return ckpt::bundle::decode_strings(key, e, impl_->read(key, e), impl_->data_files[e.shard_id]);
}

CheckpointReader load_checkpoint(const std::string& prefix_or_dir) {
    return CheckpointReader(prefix_or_dir);
}

}  // namespace tapeflow::train

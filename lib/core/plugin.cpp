// Plugin loading (plugin.hpp): the entry point from the process, next to libtapeflow, or on the
// loader's path.
#include "core/plugin.hpp"

#include <filesystem>

#include <dlfcn.h>

namespace tapeflow::detail {

void* load_plugin_entry(std::string_view file,
                        const char* symbol,
                        bool global,
                        std::string& error) {
    if (void* entry = dlsym(RTLD_DEFAULT, symbol)) return entry;
    const int flags = RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL);
    std::string first_error;
    auto open = [&](const std::string& path) -> void* {
        void* handle = dlopen(path.c_str(), flags);  // never closed: its kernels live until exit
        if (handle == nullptr) {
            if (first_error.empty()) first_error = dlerror();
            return nullptr;
        }
        void* entry = dlsym(handle, symbol);
        if (entry == nullptr && first_error.empty()) first_error = path + " lacks " + symbol;
        return entry;
    };
    Dl_info info{};
    const auto* self = reinterpret_cast<void*>(&load_plugin_entry);
    if (dladdr(self, &info) != 0 && info.dli_fname != nullptr) {
        const auto beside = std::filesystem::path(info.dli_fname).parent_path() / file;
        std::error_code unreadable;
        if (std::filesystem::exists(beside, unreadable)) {
            if (void* entry = open(beside.string())) return entry;
        }
    }
    if (void* entry = open(std::string(file))) return entry;
    error = first_error;
    return nullptr;
}

}  // namespace tapeflow::detail

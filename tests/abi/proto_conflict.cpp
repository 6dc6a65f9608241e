// tapeflow and a library that defines tensorflow.TensorProto (like TensorFlow's C++ library) in
// one process. While tapeflow's schemas were in package tensorflow, protobuf aborted this program
// at load time ("tensorflow.TensorProto" is already defined); now they are in tapeflow.proto.
#include <cstdio>
#include <cstdlib>

#include <google/protobuf/descriptor.h>

#include <tapeflow/tapeflow.hpp>

#include "tensorflow/core/framework/tensor.pb.h"

namespace tf = tapeflow;

int main() {
    tensorflow::TensorProto other;
    other.set_dtype(1);
    const std::string bytes = other.SerializeAsString();
    // tapeflow's side: an event file written and read back (Event, Summary and TensorProto).
    char dir[] = "/tmp/tapeflow_proto_conflict_XXXXXX";
    if (mkdtemp(dir) == nullptr) return 1;
    std::string path;
    {
        auto writer = tf::summary::create_file_writer(dir);
        writer.scalar("loss", 2.5, 3);
        writer.flush();
        path = writer.path();
    }
    const auto events = tf::summary::summary_iterator(path);
    const bool read_back = !events.empty() && events.back().values.size() == 1 &&
                           events.back().values[0].scalar_value == 2.5;
    const auto* pool = google::protobuf::DescriptorPool::generated_pool();
    const auto* theirs = pool->FindMessageTypeByName("tensorflow.TensorProto");
    const auto* ours = pool->FindMessageTypeByName("tapeflow.proto.TensorProto");
    const bool ok = theirs != nullptr && ours != nullptr &&
                    theirs->file()->name() == "tensorflow/core/framework/tensor.proto" &&
                    bytes.size() == 2 && read_back;
    std::printf("%s: tensorflow.TensorProto from %s, tapeflow.proto.TensorProto from %s\n",
                ok ? "OK" : "FAIL",
                theirs ? theirs->file()->name().c_str() : "(none)",
                ours ? ours->file()->name().c_str() : "(none)");
    return ok ? 0 : 1;
}

// Builders of the SummaryValues each summary kind writes: argument checks (InvalidArgumentError
// naming the tag, the shape and the dtype) and payload encoding, on the calling thread.
#pragma once

#include <string>
#include <string_view>

#include <tapeflow/summary.hpp>

namespace tapeflow::summary {

/// The tag with the current name scope in front ("layer1/" + "weights"), as TF2's summary ops do.
std::string scoped_tag(std::string_view tag);

SummaryValue scalar_value(std::string tag, double value);
SummaryValue scalar_value(std::string tag, const Tensor& value);
SummaryValue histogram_value(std::string tag, const Tensor& values, int buckets);
SummaryValue image_value(std::string tag, const Tensor& images, int max_outputs);
SummaryValue audio_value(std::string tag, const Tensor& audio, double sample_rate, int max_outputs);
SummaryValue text_value(std::string tag, std::string_view text);

}  // namespace tapeflow::summary

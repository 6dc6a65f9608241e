// tapeflow: eager tensors with TensorFlow's training semantics. The umbrella header: it includes
// every public header and nothing else (the standard library and fmt only; no xtensor, BLAS,
// protobuf or CUDA), so it parses fast and loads in clang-repl.
//
//     #include <tapeflow/tapeflow.hpp>
//     namespace tf = tapeflow;
#pragma once

#include <tapeflow/autograd/forward_accumulator.hpp>
#include <tapeflow/autograd/gradient.hpp>
#include <tapeflow/autograd/gradient_tape.hpp>
#include <tapeflow/autograd/graph.hpp>
#include <tapeflow/autograd/recompute_grad.hpp>
#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/autograd/vectorized_map.hpp>
#include <tapeflow/core/device.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/core/half.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/storage.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/threads.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/distribute.hpp>
#include <tapeflow/distributions.hpp>
#include <tapeflow/dlpack.hpp>
#include <tapeflow/function.hpp>
#include <tapeflow/io.hpp>
#include <tapeflow/keras/activations.hpp>
#include <tapeflow/keras/callbacks.hpp>
#include <tapeflow/keras/config.hpp>
#include <tapeflow/keras/functional.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/keras/keras_tensor.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/keras/layers/attention.hpp>
#include <tapeflow/keras/layers/convolutional.hpp>
#include <tapeflow/keras/layers/core.hpp>
#include <tapeflow/keras/layers/normalization.hpp>
#include <tapeflow/keras/layers/recurrent.hpp>
#include <tapeflow/keras/losses.hpp>
#include <tapeflow/keras/metrics.hpp>
#include <tapeflow/keras/mixed_precision.hpp>
#include <tapeflow/keras/model.hpp>
#include <tapeflow/keras/module.hpp>
#include <tapeflow/keras/optimizers.hpp>
#include <tapeflow/keras/saving.hpp>
#include <tapeflow/keras/tf1_losses.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/attention.hpp>
#include <tapeflow/ops/clip.hpp>
#include <tapeflow/ops/conv.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/einsum.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>
#include <tapeflow/ops/print.hpp>
#include <tapeflow/ops/sort.hpp>
#include <tapeflow/profiler.hpp>
#include <tapeflow/random.hpp>
#include <tapeflow/summary.hpp>
#include <tapeflow/train/checkpoint.hpp>
#include <tapeflow/train/checkpoint_reader.hpp>
#include <tapeflow/train/coordinator.hpp>
#include <tapeflow/train/hooks.hpp>
#include <tapeflow/train/input.hpp>
#include <tapeflow/train/learning_rate.hpp>
#include <tapeflow/train/loss_scale_optimizer.hpp>
#include <tapeflow/train/monitored_session.hpp>
#include <tapeflow/train/moving_average.hpp>
#include <tapeflow/train/optimizer.hpp>
#include <tapeflow/train/optimizers.hpp>
#include <tapeflow/train/saver.hpp>
#include <tapeflow/train/server.hpp>
#include <tapeflow/train/training_util.hpp>
#include <tapeflow/version.hpp>

// Python's repr() of a float ("2.5", "5.0", "1e-07", "inf"), for error messages that quote a number
// the way TensorFlow's Python front end prints it.
#pragma once

#include <string>

namespace tapeflow {

/// repr(float(v)) in Python 3: the shortest digits that round-trip, in fixed notation when the
/// decimal exponent is in [-4, 16) (always with a ".0" or fraction), else d.ddde+XX.
std::string python_repr(double v);
/// The same layout with the shortest digits that round-trip as a float (0.1f prints "0.1").
std::string python_repr(float v);

}  // namespace tapeflow

// SPDX-License-Identifier: Apache-2.0
// The shared run path behind Session::run and its profiling variant.
#pragma once

#include <string>
#include <vector>

#include "ignis/session.h"
#include "runtime/plan.h"

namespace ignis::runtime {

// InvalidArgument naming the input when `tensor` has another dtype or shape than `decl` allows.
Status check_declared_type(const ValueInfo& decl, const Tensor& tensor);

// Validates named inputs against the model's declarations, finds (or creates) the plan for
// their signature and runs it. `timings` (optional) receives one entry per executed step.
Result<std::vector<Tensor>> run_session(Session::Impl& session, const NamedTensors& inputs,
                                        const std::vector<std::string>& output_names,
                                        std::vector<StepTiming>* timings);

}  // namespace ignis::runtime

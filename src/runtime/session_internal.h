// SPDX-License-Identifier: Apache-2.0
// The shared run path behind Session::run and its profiling variant.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ignis/session.h"
#include "runtime/model.h"
#include "runtime/plan.h"

namespace ignis::runtime {

using PlanLookup = std::function<Result<std::shared_ptr<const Plan>>(const std::vector<ir::ValueType>&)>;

// Validates named inputs against the model's declarations, finds the plan for their
// signature and runs it. `timings` (optional) receives one entry per executed step.
Result<std::vector<Tensor>> run_session(const Model& model, const NamedTensors& inputs,
                                        const std::vector<std::string>& output_names,
                                        std::vector<StepTiming>* timings, const PlanLookup& plan_for,
                                        ThreadPool* pool);

}  // namespace ignis::runtime

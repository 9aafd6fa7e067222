// SPDX-License-Identifier: Apache-2.0
// A ModelBuilder's model imported and verified for execution (runtime::Model), for tests that
// drive plans directly; a failure is reported to the running test and returns null.
#pragma once

#include <memory>

#include "runtime/model.h"
#include "testing/model_builder.h"

namespace ignis::testing {

std::shared_ptr<runtime::Model> load_runtime_model(const ModelBuilder& b);

}  // namespace ignis::testing

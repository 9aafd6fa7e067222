// SPDX-License-Identifier: Apache-2.0
// A ModelBuilder's model imported and verified for execution (runtime::Model), for tests that
// drive plans directly (a failure is reported to the running test and returns null), or opened
// as a Session without graph optimization, for tests whose subject is the nodes as written.
#pragma once

#include <memory>

#include "ignis/session.h"
#include "runtime/model.h"
#include "testing/model_builder.h"

namespace ignis::testing {

std::shared_ptr<runtime::Model> load_runtime_model(const ModelBuilder& b);

// A Session of b's model at OptLevel::None, with `options` otherwise.
Result<Session> open_unoptimized(const ModelBuilder& b, SessionOptions options = {});

}  // namespace ignis::testing

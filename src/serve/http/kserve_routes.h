// SPDX-License-Identifier: Apache-2.0
// The REST endpoints of KServe v2 (health, metadata, infer) with Triton's extensions
// (/config, /stats, repository index/load/unload) and /metrics, as one HTTP handler.
#pragma once

#include "serve/http/http_server.h"
#include "serve/server.h"

namespace ignis::serve {

HttpHandler make_kserve_handler(InferenceServer* server);

}  // namespace ignis::serve

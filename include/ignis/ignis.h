// SPDX-License-Identifier: Apache-2.0
// The public C++ API of ignis.
#pragma once

#include "ignis/dtype.h"
#include "ignis/session.h"
#include "ignis/shape.h"
#include "ignis/status.h"
#include "ignis/tensor.h"
#include "ignis/tensor_io.h"
#include "ignis/compress.h"
#include "ignis/optimize.h"

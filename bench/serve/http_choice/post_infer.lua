-- SPDX-License-Identifier: Apache-2.0
-- wrk script: a KServe v2 binary-extension inference request for one 28x28 FP32 image
-- (a JSON header padded with spaces to 100 bytes, then 3136 bytes of tensor data).
local json = '{"inputs":[{"name":"x","shape":[1,784],"datatype":"FP32",' ..
             '"parameters":{"binary_data_size":3136}}]}'
json = json .. string.rep(" ", 100 - #json)
assert(#json == 100, "inference header must be exactly 100 bytes")

local bytes = {}
for i = 1, 3136 do
  bytes[i] = string.char((i * 37) % 256)
end

wrk.method = "POST"
wrk.path = "/v2/models/m/infer"
wrk.body = json .. table.concat(bytes)
wrk.headers["Content-Type"] = "application/octet-stream"
wrk.headers["Inference-Header-Content-Length"] = "100"

# SPDX-License-Identifier: Apache-2.0
"""bench/serve/mlserver_runtime.py's model, saying in each answer how many rows its run had.

With adaptive batching MLServer merges requests, calls predict once, splits the outputs and
copies the answer's parameters to every request's answer, so `batch_rows` shows the
benchmark (bench/serve/batching.py) that batches formed and which answers came from them.
"""

from mlserver.types import InferenceRequest, InferenceResponse, Parameters

from mlserver_runtime import OnnxRuntimeModel


class BatchReportingModel(OnnxRuntimeModel):
    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        response = await super().predict(payload)
        response.parameters = Parameters(batch_rows=payload.inputs[0].shape[0])
        return response

# SPDX-License-Identifier: Apache-2.0
"""The peer for bench/serve: an MLServer custom runtime running an ONNX model with onnxruntime.

intra_op_num_threads comes from IGNIS_BENCH_ORT_THREADS (the same thread count ignis gets);
everything else is MLServer's and onnxruntime's defaults.
"""

import os

import onnxruntime as ort
from mlserver import MLModel
from mlserver.codecs import NumpyCodec
from mlserver.types import InferenceRequest, InferenceResponse
from mlserver.utils import get_model_uri


class OnnxRuntimeModel(MLModel):
    async def load(self) -> bool:
        path = await get_model_uri(self._settings)
        options = ort.SessionOptions()
        options.intra_op_num_threads = int(os.environ.get("IGNIS_BENCH_ORT_THREADS", "0"))
        self._session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        self._outputs = [o.name for o in self._session.get_outputs()]
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        feeds = {i.name: NumpyCodec.decode_input(i) for i in payload.inputs}
        wanted = [o.name for o in payload.outputs] if payload.outputs else self._outputs
        results = self._session.run(wanted, feeds)
        return InferenceResponse(model_name=self.name, id=payload.id,
                                 outputs=[NumpyCodec.encode_output(n, r) for n, r in zip(wanted, results)])

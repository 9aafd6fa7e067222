# SPDX-License-Identifier: Apache-2.0
"""Code written for onnxruntime runs on ignis with only its import changed: the same source
text is executed twice, once as written and once with `onnxruntime` replaced by `ignis` in the
import lines, and the two results are compared."""

import numpy as np
from conftest import assert_close

import model_builders as mb

# Written against onnxruntime's documented API, as a user would.
ORT_SCRIPT = '''
import numpy as np
import onnxruntime as ort
from onnxruntime import GraphOptimizationLevel, SessionOptions


def classify(model_path, batch):
    options = SessionOptions()
    options.intra_op_num_threads = 2
    options.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.enable_mem_pattern = False
    sess = ort.InferenceSession(model_path, sess_options=options, providers=["CPUExecutionProvider"])
    assert "CPUExecutionProvider" in ort.get_available_providers()
    assert sess.get_providers() == ["CPUExecutionProvider"]

    inp = sess.get_inputs()[0]
    assert inp.type == "tensor(float)", inp.type
    shape = [batch if not isinstance(d, int) else d for d in inp.shape]
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    names = [o.name for o in sess.get_outputs()]
    outputs = sess.run(names, {inp.name: x})
    first = sess.run(None, {inp.name: x})[0]
    labels = np.argmax(outputs[0], axis=-1)
    described = [(a.name, a.shape, a.type) for a in sess.get_inputs() + sess.get_outputs()]
    meta = sess.get_modelmeta()
    return {
        "outputs": dict(zip(names, outputs)),
        "first": first,
        "labels": labels,
        "described": described,
        "producer": meta.producer_name,
        "graph_name": meta.graph_name,
    }
'''


def _with_ignis(source):
    changed = source.replace("import onnxruntime as ort", "import ignis as ort")
    changed = changed.replace("from onnxruntime import", "from ignis import")
    assert "onnxruntime" not in changed
    return changed


def _run_script(source, *args):
    namespace = {"__name__": "dropin_script"}
    exec(compile(source, "<dropin script>", "exec"), namespace)
    return namespace["classify"](*args)


def test_onnxruntime_script_runs_unchanged_on_ignis(tmp_path, ort):
    for name, model in (("mlp", mb.mlp()), ("cnn", mb.cnn())):
        path = tmp_path / f"{name}.onnx"
        path.write_bytes(model)
        expected = _run_script(ORT_SCRIPT, str(path), 3)
        actual = _run_script(_with_ignis(ORT_SCRIPT), str(path), 3)

        assert actual["described"] == expected["described"]
        assert actual["producer"] == expected["producer"]
        assert actual["graph_name"] == expected["graph_name"]
        assert actual["outputs"].keys() == expected["outputs"].keys()
        for key in expected["outputs"]:
            assert_close(actual["outputs"][key], expected["outputs"][key], f"{name}/{key}")
        assert_close(actual["first"], expected["first"], f"{name} run(None, ...)")
        np.testing.assert_array_equal(actual["labels"], expected["labels"])

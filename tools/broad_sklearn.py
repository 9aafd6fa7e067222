# SPDX-License-Identifier: Apache-2.0
"""scikit-learn pipelines converted with skl2onnx for tools/make_broad_set.py: tabular
models are a different kind of graph (MatMul chains, ai.onnx.ml trees) from the CNNs.

Trained on a fixed synthetic data set (make_classification, random_state=0); each builder
writes the model to `path` and returns (inputs, outputs, dynamic_axes, info, producer).
ZipMap is turned off so the probabilities are a plain float tensor.
"""

import os

import numpy as np

FEATURES, CLASSES, BATCH = 64, 10, 32


def _data():
    from sklearn.datasets import make_classification
    x, y = make_classification(n_samples=3000, n_features=FEATURES, n_informative=32, n_classes=CLASSES,
                               random_state=0)
    return x.astype(np.float32), y


def _convert(pipe, path, source):
    """skl2onnx names the graph with a random uuid unless told: use the file's name, so that
    the bytes depend only on the data."""
    import onnx
    import skl2onnx
    from skl2onnx.common.data_types import FloatTensorType
    name = os.path.splitext(os.path.basename(path))[0]
    onx = skl2onnx.convert_sklearn(pipe, name=name, initial_types=[("input", FloatTensorType([None, FEATURES]))],
                                   options={id(pipe.steps[-1][1]): {"zipmap": False}},
                                   target_opset={"": 17, "ai.onnx.ml": 3})
    onnx.save(onx, path)
    inputs = [{"name": "input", "dtype": "float32", "shape": [BATCH, FEATURES], "fill": "normal"}]
    outputs = [{"name": "label", "dtype": "int64", "shape": [BATCH]},
               {"name": "probabilities", "dtype": "float32", "shape": [BATCH, CLASSES]}]
    axes = {"input": {0: "batch"}, "label": {0: "batch"}, "probabilities": {0: "batch"}}
    import sklearn
    return inputs, outputs, axes, {"source": source}, {"skl2onnx": skl2onnx.__version__,
                                                        "sklearn": sklearn.__version__}


def skl_mlp(path):
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    x, y = _data()
    pipe = make_pipeline(StandardScaler(), MLPClassifier((512, 256), max_iter=30, random_state=0))
    pipe.fit(x, y)
    return _convert(pipe, path, "StandardScaler + MLPClassifier(512, 256), make_classification(3000 x 64, "
                                "10 classes, random_state=0), batch 32")


def skl_forest(path):
    from sklearn.decomposition import PCA
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    x, y = _data()
    pipe = make_pipeline(StandardScaler(), PCA(32, random_state=0),
                         RandomForestClassifier(100, max_depth=10, random_state=0))
    pipe.fit(x, y)
    return _convert(pipe, path, "StandardScaler + PCA(32) + RandomForestClassifier(100 trees, depth 10), "
                                "make_classification(3000 x 64, 10 classes, random_state=0), batch 32")

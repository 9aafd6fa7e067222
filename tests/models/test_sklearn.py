# SPDX-License-Identifier: Apache-2.0
"""Classic scikit-learn pipelines (the ai.onnx.ml domain) against onnxruntime: small models
trained with fixed seeds on sklearn's bundled datasets, converted with skl2onnx (classifiers
without ZipMap, so that every output is a tensor), then run through ignis's command line as in
test_parity. Labels must match exactly, scores within rtol 1e-4, atol 1e-5. Linear models and
scalers, and tree ensembles (TreeEnsembleRegressor/Classifier): single trees, random forests and
gradient boosting, binary and multiclass, float and double inputs.

Classifiers converted with skl2onnx's default options end in ZipMap, whose output is a list of
{label: probability} dicts, and may have string labels; the command line writes neither, so
those run through the installed Python package (`ignis.InferenceSession`, as onnxruntime's).
"""
import numpy as np
import pytest

from test_parity import _require_ignis, run_ignis, run_onnxruntime

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is not installed")
skl2onnx = pytest.importorskip("skl2onnx", reason="skl2onnx is not installed")

from skl2onnx import to_onnx  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import Normalizer, StandardScaler  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

RTOL = 1e-4
ATOL = 1e-5
TARGET_OPSET = {"": 17, "ai.onnx.ml": 3}


def _iris():
    x, y = load_iris(return_X_y=True)
    return x.astype(np.float32), y


def _diabetes():
    x, y = load_diabetes(return_X_y=True)
    return x.astype(np.float32), y


def _cancer():
    x, y = load_breast_cancer(return_X_y=True)
    return x.astype(np.float32), y


def linear_regression():
    x, y = _diabetes()
    return LinearRegression().fit(x, y), x, False


def logistic_multiclass():
    x, y = _iris()
    return LogisticRegression(max_iter=500).fit(x, y), x, True


def scaler_logistic_pipeline():
    x, y = _cancer()
    model = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(max_iter=500))])
    return model.fit(x, y), x, True


def normalizer_ridge():
    x, y = _diabetes()
    model = Pipeline([("norm", Normalizer(norm="l1")), ("ridge", Ridge(alpha=0.1))])
    return model.fit(x, y), x, False


def decision_tree_regressor():
    x, y = _diabetes()
    return DecisionTreeRegressor(max_depth=6, random_state=0).fit(x, y), x, False


def random_forest_regressor():
    x, y = _diabetes()
    return RandomForestRegressor(n_estimators=12, max_depth=6, random_state=0).fit(x, y), x, False


def gradient_boosting_regressor():
    x, y = _diabetes()
    model = GradientBoostingRegressor(n_estimators=25, max_depth=3, random_state=0)
    return model.fit(x, y), x, False


def decision_tree_binary():
    x, y = _cancer()
    return DecisionTreeClassifier(max_depth=5, random_state=0).fit(x, y), x, True


def decision_tree_multiclass():
    x, y = _iris()
    return DecisionTreeClassifier(max_depth=4, random_state=0).fit(x, y), x, True


def random_forest_binary():
    x, y = _cancer()
    return RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0).fit(x, y), x, True


def random_forest_multiclass():
    x, y = _iris()
    return RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(x, y), x, True


def gradient_boosting_binary():
    x, y = _cancer()
    model = GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0)
    return model.fit(x, y), x, True


def gradient_boosting_multiclass():
    x, y = _iris()
    model = GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0)
    return model.fit(x, y), x, True


def scaler_random_forest_pipeline():
    x, y = _iris()
    model = Pipeline([("scale", StandardScaler()),
                      ("clf", RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0))])
    return model.fit(x, y), x, True


MODELS = {
    "linear_regression": linear_regression,
    "logistic_multiclass": logistic_multiclass,
    "scaler_logistic_pipeline": scaler_logistic_pipeline,
    "normalizer_ridge": normalizer_ridge,
    "decision_tree_regressor": decision_tree_regressor,
    "random_forest_regressor": random_forest_regressor,
    "gradient_boosting_regressor": gradient_boosting_regressor,
    "decision_tree_binary": decision_tree_binary,
    "decision_tree_multiclass": decision_tree_multiclass,
    "random_forest_binary": random_forest_binary,
    "random_forest_multiclass": random_forest_multiclass,
    "gradient_boosting_binary": gradient_boosting_binary,
    "gradient_boosting_multiclass": gradient_boosting_multiclass,
    "scaler_random_forest_pipeline": scaler_random_forest_pipeline,
}


def _convert(model, x, classifier, path):
    options = None
    est = model.steps[-1][1] if isinstance(model, Pipeline) else model
    if classifier:
        options = {id(est): {"zipmap": False}}
    onx = to_onnx(model, x[:1], options=options, target_opset=TARGET_OPSET)
    path.write_bytes(onx.SerializeToString())


def _check_against_onnxruntime(name, path, x, tmp_path, parity_log):
    exe = _require_ignis(name, parity_log)
    import onnx

    input_name = onnx.load(str(path)).graph.input[0].name
    feeds = {input_name: np.ascontiguousarray(x)}
    want, _ = run_onnxruntime(path, feeds)
    got, _ = run_ignis(exe, path, feeds, tmp_path)
    assert sorted(got) == sorted(want), f"outputs {sorted(got)} != onnxruntime's {sorted(want)}"
    for out, expected in want.items():
        actual = got[out]
        assert actual.shape == expected.shape, f"{name} {out}: shape {actual.shape} != {expected.shape}"
        if expected.dtype.kind in "fc":
            np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, err_msg=f"{name} output {out}")
        else:
            assert actual.dtype == expected.dtype, f"{name} {out}: dtype {actual.dtype} != {expected.dtype}"
            np.testing.assert_array_equal(actual, expected, err_msg=f"{name} output {out} (labels)")
    parity_log(f"sklearn {name}: matches onnxruntime on {len(x)} rows")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_sklearn_matches_onnxruntime(name, tmp_path, parity_log):
    _require_ignis(name, parity_log)
    model, x, classifier = MODELS[name]()
    path = tmp_path / f"{name}.onnx"
    _convert(model, x, classifier, path)
    _check_against_onnxruntime(name, path, x, tmp_path, parity_log)


def test_tree_ensemble_double_attributes_match_onnxruntime(tmp_path, parity_log):
    """TreeEnsembleRegressor-3 on a double input with the *_as_tensor (double) attributes.
    skl2onnx declares a double output for double inputs, which onnxruntime rejects, so the
    float model is rewritten: input double, thresholds, weights and base values as tensors."""
    name = "random_forest_regressor_double"
    _require_ignis(name, parity_log)
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    x, y = load_diabetes(return_X_y=True)
    model = RandomForestRegressor(n_estimators=8, max_depth=5, random_state=0).fit(x, y)
    onx = to_onnx(model, x[:1].astype(np.float32), target_opset=TARGET_OPSET)
    node = onx.graph.node[0]
    assert node.op_type == "TreeEnsembleRegressor"
    for a in list(node.attribute):
        if a.name in ("nodes_values", "target_weights", "base_values"):
            node.attribute.remove(a)
            tensor = numpy_helper.from_array(np.array(a.floats, np.float64))
            node.attribute.append(helper.make_attribute(a.name + "_as_tensor", tensor))
    onx.graph.input[0].type.tensor_type.elem_type = TensorProto.DOUBLE
    for imp in onx.opset_import:
        if imp.domain == "ai.onnx.ml":
            imp.version = 3
    onnx.checker.check_model(onx)
    path = tmp_path / f"{name}.onnx"
    path.write_bytes(onx.SerializeToString())
    _check_against_onnxruntime(name, path, x, tmp_path, parity_log)


# Classifiers with skl2onnx's default options (ZipMap) and string or integer labels.
def _flower_names(y):
    return np.array(["setosa", "versicolor", "virginica"])[y]


def zipmap_logistic_strings():
    x, y = _iris()
    return LogisticRegression(max_iter=500).fit(x, _flower_names(y)), x


def zipmap_logistic_binary_strings():
    x, y = _cancer()
    model = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(max_iter=500))])
    return model.fit(x, np.where(y == 1, "benign", "malignant")), x


def zipmap_random_forest_strings():
    x, y = _iris()
    return RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(x, _flower_names(y)), x


def zipmap_random_forest_binary_strings():
    x, y = _cancer()
    model = RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0)
    return model.fit(x, np.where(y == 1, "benign", "malignant")), x


def zipmap_gradient_boosting_ints():
    x, y = _iris()
    return GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0).fit(x, y), x


ZIPMAP_MODELS = {
    "zipmap_logistic_strings": zipmap_logistic_strings,
    "zipmap_logistic_binary_strings": zipmap_logistic_binary_strings,
    "zipmap_random_forest_strings": zipmap_random_forest_strings,
    "zipmap_random_forest_binary_strings": zipmap_random_forest_binary_strings,
    "zipmap_gradient_boosting_ints": zipmap_gradient_boosting_ints,
}


@pytest.mark.parametrize("name", sorted(ZIPMAP_MODELS))
def test_sklearn_zipmap_matches_onnxruntime(name, parity_log):
    ignis = pytest.importorskip("ignis", reason="the ignis Python package is not installed")
    ort = pytest.importorskip("onnxruntime")
    model, x = ZIPMAP_MODELS[name]()
    onx = to_onnx(model, x[:1], target_opset=TARGET_OPSET)
    assert onx.graph.node[-1].op_type == "ZipMap"
    feeds = {onx.graph.input[0].name: np.ascontiguousarray(x)}
    want = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = ignis.InferenceSession(onx.SerializeToString()).run(None, feeds)
    labels, probabilities = got
    assert labels.dtype == want[0].dtype and labels.shape == want[0].shape, \
        f"{name}: labels {labels.dtype}{labels.shape}"
    np.testing.assert_array_equal(labels, want[0], err_msg=f"{name} labels")
    assert isinstance(probabilities, list) and len(probabilities) == len(want[1]) == len(x)
    for row, (g, w) in enumerate(zip(probabilities, want[1])):
        assert isinstance(g, dict) and list(g) == list(w), f"{name} row {row}: keys {list(g)} != {list(w)}"
        assert all(type(v) is float for v in g.values()), f"{name} row {row}: values {g}"
        np.testing.assert_allclose(list(g.values()), list(w.values()), rtol=RTOL, atol=ATOL,
                                   err_msg=f"{name} row {row} probabilities")
    parity_log(f"sklearn {name}: matches onnxruntime on {len(x)} rows (labels {labels.dtype}, ZipMap)")

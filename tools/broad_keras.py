# SPDX-License-Identifier: Apache-2.0
"""Optional models for tools/make_broad_set.py: keras.applications networks (weights=None,
keras.utils.set_random_seed(0)) converted by the real tf2onnx, for a Python that has
tensorflow and tf2onnx (`pip install tensorflow-cpu tf2onnx`, best in its own venv, then
`--python VENV/bin/python`).  Nothing else depends on them: the hand-built graphs in
broad_graphs.py cover tf2onnx's idioms without TensorFlow."""

NEEDS = ("tensorflow", "tf2onnx")
SIZE = 224


def calibrate_batchnorm(model, x):
    """Sets every BatchNormalization's moving statistics to the batch statistics of its
    input on `x`, in layer order, so that a randomly initialised network keeps its
    activations at a trained-like scale (with mean 0 / variance 1 they shrink to nothing
    and the softmax is uniform).  Same idea as make_zoo.calibrate_batchnorm."""
    import numpy as np
    import tensorflow as tf
    for layer in model.layers:
        if not isinstance(layer, tf.keras.layers.BatchNormalization):
            continue
        feats = tf.keras.Model(model.inputs, layer.input)(x, training=False).numpy()
        axes = tuple(i for i in range(feats.ndim) if i != feats.ndim - 1)
        gamma, beta, _, _ = layer.get_weights()
        layer.set_weights([gamma, beta, feats.mean(axis=axes), feats.var(axis=axes) + np.float32(1e-3)])


def keras_application(name, **kwargs):
    def build(path):
        import os
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import numpy as np
        import tensorflow as tf
        import tf2onnx
        tf.keras.utils.set_random_seed(0)
        model = getattr(tf.keras.applications, name)(weights=None, input_shape=(SIZE, SIZE, 3), **kwargs)
        calibrate_batchnorm(model, np.random.default_rng(0).standard_normal((8, SIZE, SIZE, 3), np.float32))
        spec = (tf.TensorSpec((None, SIZE, SIZE, 3), tf.float32, name="input_1"),)

        @tf.function(input_signature=spec)
        def serve(x):
            return {"predictions": model(x, training=False)}

        tf2onnx.convert.from_function(serve, input_signature=spec, opset=17, output_path=path)
        inputs = [{"name": "input_1", "dtype": "float32", "shape": [1, SIZE, SIZE, 3], "fill": "normal"}]
        outputs = [{"name": "predictions", "dtype": "float32", "shape": [1, 1000]}]
        axes = {"input_1": {0: "unk"}, "predictions": {0: "unk"}}
        extra = "".join(f", {k}={v}" for k, v in kwargs.items())
        info = {"source": f"keras.applications.{name}(weights=None{extra}), keras.utils.set_random_seed(0), "
                          f"BatchNorm statistics set from 8 random images, {SIZE}x{SIZE} NHWC, converted by "
                          f"tf2onnx.convert.from_function (opset 17)"}
        return inputs, outputs, axes, info, {"tensorflow": tf.__version__, "tf2onnx": tf2onnx.__version__}
    return build

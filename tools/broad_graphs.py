# SPDX-License-Identifier: Apache-2.0
"""Hand-built ONNX graphs for tools/make_broad_set.py that reproduce the idioms of exporters
other than torch.onnx, with random fixed-seed weights (numpy default_rng(0)):

  tf2onnx       NHWC inputs and outputs with Transpose around the convolutions,
                BatchNormalization left unfolded, explicit Pad before a VALID Conv,
                LeakyRelu written as Max(x, alpha * x), Relu6 as Clip(0, 6),
                global pooling as ReduceMean over H, W and dense layers as Reshape + MatMul + Add;
                the batch dimension is symbolic ("unk__N").
  paddle2onnx   Conv + BatchNormalization + HardSwish blocks, squeeze-excite with ReduceMean
                and HardSigmoid, Resize driven by a `scales` input, ReduceMean pooling and
                Flatten + MatMul heads; the batch dimension is "p2o.DynamicDimension.0".

Each builder writes the model to `path` and returns (inputs, outputs, dynamic_axes, info,
producer), the sidecar parts.  Needs onnx and numpy only.
"""

import numpy as np

OPSET = 17


class Graph:
    """Accumulates nodes and initializers; every helper returns the name of its output."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []
        self.n = 0

    def name(self, prefix):
        self.n += 1
        return f"{prefix}_{self.n}"

    def const(self, array, prefix="const"):
        from onnx import numpy_helper
        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def op(self, op_type, inputs, prefix=None, **attrs):
        from onnx import helper
        out = self.name(prefix or op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out + "_node", **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, group=1, pads=None, bias=True):
        fan_in = cin // group * k * k
        w = self.rng.normal(0, np.sqrt(2.0 / fan_in), (cout, cin // group, k, k)).astype(np.float32)
        ins = [x, self.const(w, "W")]
        if bias:
            ins.append(self.const(self.rng.normal(0, 0.01, cout).astype(np.float32), "B"))
        attrs = {"kernel_shape": [k, k], "strides": [stride, stride], "group": group}
        attrs["pads"] = pads if pads is not None else [k // 2] * 4
        return self.op("Conv", ins, "conv", **attrs)

    def bn(self, x, c):
        r = self.rng
        params = [r.uniform(0.8, 1.2, c), r.normal(0, 0.05, c), r.normal(0, 0.05, c), r.uniform(0.8, 1.2, c)]
        return self.op("BatchNormalization", [x] + [self.const(p.astype(np.float32), "bn") for p in params],
                       "bn", epsilon=1e-3)

    def dense(self, x, cin, cout):
        w = self.rng.normal(0, np.sqrt(1.0 / cin), (cin, cout)).astype(np.float32)
        y = self.op("MatMul", [x, self.const(w, "dense_W")], "matmul")
        return self.op("Add", [y, self.const(self.rng.normal(0, 0.01, cout).astype(np.float32), "dense_b")], "biasadd")

    def transpose(self, x, perm):
        return self.op("Transpose", [x], "transpose", perm=perm)

    def save(self, path, inputs, outputs, graph_name, producer):
        import onnx
        from onnx import helper
        graph = helper.make_graph(self.nodes, graph_name, inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name=producer[0], producer_version=producer[1])
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, path)


def _io(name, shape):
    from onnx import TensorProto, helper
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _sidecar(in_name, in_shape, out_name, out_shape, batch_dim, source, producer):
    inputs = [{"name": in_name, "dtype": "float32", "shape": list(in_shape), "fill": "normal"}]
    outputs = [{"name": out_name, "dtype": "float32", "shape": list(out_shape)}]
    axes = {in_name: {0: batch_dim}, out_name: {0: batch_dim}}
    return inputs, outputs, axes, {"source": source}, {producer[0]: producer[1] + " (idioms, hand-built)"}


TF2ONNX = ("tf2onnx", "1.16.1")
PADDLE2ONNX = ("paddle2onnx", "1.2.3")


def tf_mobilenet_nhwc(path):
    """Keras MobileNet (alpha 0.5) as tf2onnx writes it: one Transpose NHWC -> NCHW at the
    input, ZeroPadding2D as Pad before each strided depthwise conv, unfolded BatchNormalization,
    ReLU6 as Clip, then Transpose back, ReduceMean over H, W and Reshape + MatMul + Softmax."""
    g = Graph(0)
    size, batch = 192, "unk__612"
    x = g.transpose("input_1", [0, 3, 1, 2])
    lo, hi = g.const(np.float32(0.0), "clip_min"), g.const(np.float32(6.0), "clip_max")

    def block(x, cin, cout, k, stride, group):
        if stride == 2:  # Keras "valid" conv after an asymmetric ZeroPadding2D((0, 1), (0, 1))
            x = g.op("Pad", [x, g.const(np.array([0, 0, 0, 0, 0, 0, 1, 1], np.int64), "pads")], "pad")
            x = g.conv(x, cin, cout, k, stride, group, pads=[0, 0, 0, 0], bias=False)
        else:
            x = g.conv(x, cin, cout, k, stride, group, bias=False)
        return g.op("Clip", [g.bn(x, cout), lo, hi], "relu6")

    x = block(x, 3, 16, 3, 2, 1)
    cin = 16
    for cout, stride in [(32, 1), (64, 2), (64, 1), (128, 2), (128, 1), (256, 2),
                         (256, 1), (256, 1), (256, 1), (256, 1), (256, 1), (512, 2), (512, 1)]:
        x = block(x, cin, cin, 3, stride, cin)   # depthwise
        x = block(x, cin, cout, 1, 1, 1)         # pointwise
        cin = cout
    x = g.transpose(x, [0, 2, 3, 1])
    x = g.op("ReduceMean", [x], "global_average_pooling2d", axes=[1, 2], keepdims=0)
    x = g.op("Reshape", [x, g.const(np.array([-1, cin], np.int64), "shape")], "flatten")
    x = g.op("Softmax", [g.dense(x, cin, 1000)], "predictions", axis=-1)
    g.nodes[-1].output[0] = "predictions"
    g.save(path, [_io("input_1", [batch, size, size, 3])], [_io("predictions", [batch, 1000])],
           "tf_mobilenet_nhwc", TF2ONNX)
    return _sidecar("input_1", [1, size, size, 3], "predictions", [1, 1000], batch,
                    "Keras MobileNet(alpha=0.5)-shaped graph with tf2onnx idioms, random weights "
                    "(numpy default_rng(0)), 192x192 NHWC", TF2ONNX)


def tf_yolo_tiny_nhwc(path):
    """A YOLOv3-tiny-like darknet trunk as tf2onnx leaves a graph whose layout it could not
    fully propagate: every Conv wrapped in Transpose NHWC -> NCHW -> NHWC, BatchNormalization
    between transposes, LeakyRelu as Max(x, 0.1 x) in NHWC, MaxPool wrapped the same way,
    and a 1x1 detection conv giving an NHWC grid [batch, 13, 13, 75]."""
    g = Graph(1)
    size, batch = 416, "unk__388"
    alpha = g.const(np.float32(0.1), "leaky_alpha")

    def conv_block(x, cin, cout, k):
        t = g.transpose(x, [0, 3, 1, 2])
        t = g.bn(g.conv(t, cin, cout, k, bias=False), cout)
        y = g.transpose(t, [0, 2, 3, 1])
        return g.op("Max", [y, g.op("Mul", [y, alpha], "leaky_mul")], "leaky")

    def pool(x, stride):
        t = g.transpose(x, [0, 3, 1, 2])
        if stride == 1:  # darknet's size-2 stride-1 pool keeps the size: pad right/bottom
            t = g.op("Pad", [t, g.const(np.array([0, 0, 0, 0, 0, 0, 1, 1], np.int64), "pads")], "pad")
        t = g.op("MaxPool", [t], "maxpool", kernel_shape=[2, 2], strides=[stride, stride])
        return g.transpose(t, [0, 2, 3, 1])

    x, cin = "input_1", 3
    for cout in (8, 16, 32, 64, 128):
        x = pool(conv_block(x, cin, cout, 3), 2)
        cin = cout
    x = pool(conv_block(x, cin, 256, 3), 1)
    x = conv_block(x, 256, 512, 3)
    x = conv_block(x, 512, 128, 1)
    x = conv_block(x, 128, 256, 3)
    t = g.transpose(x, [0, 3, 1, 2])
    g.transpose(g.conv(t, 256, 75, 1, pads=[0, 0, 0, 0]), [0, 2, 3, 1])
    g.nodes[-1].output[0] = "detections"
    grid = size // 32
    g.save(path, [_io("input_1", [batch, size, size, 3])], [_io("detections", [batch, grid, grid, 75])],
           "tf_yolo_tiny_nhwc", TF2ONNX)
    return _sidecar("input_1", [1, size, size, 3], "detections", [1, grid, grid, 75], batch,
                    "YOLOv3-tiny-like trunk at half width with tf2onnx's unpropagated-layout idioms, "
                    "random weights (numpy default_rng(1)), 416x416 NHWC", TF2ONNX)


def _hardswish_block(g, x, cin, cout, k, stride, group=1):
    x = g.bn(g.conv(x, cin, cout, k, stride, group, bias=False), cout)
    return g.op("HardSwish", [x], "hardswish")


def paddle_lcnet(path):
    """PP-LCNet x0.5-like classifier as paddle2onnx writes it: Conv + BatchNormalization +
    HardSwish, depthwise-separable blocks, squeeze-excite (ReduceMean, Conv, Relu, Conv,
    HardSigmoid, Mul), ReduceMean pooling, a 1x1 conv to 1280, Flatten + MatMul + Add."""
    g = Graph(2)
    batch = "p2o.DynamicDimension.0"
    x = _hardswish_block(g, "x", 3, 8, 3, 2)
    cin = 8
    cfg = [(3, 16, 1, False), (3, 32, 2, False), (3, 32, 1, False), (3, 64, 2, False), (3, 64, 1, False),
           (3, 128, 2, False), (5, 128, 1, False), (5, 128, 1, False), (5, 128, 1, False), (5, 128, 1, False),
           (5, 128, 1, False), (5, 256, 2, True), (5, 256, 1, True)]
    for k, cout, stride, se in cfg:
        x = _hardswish_block(g, x, cin, cin, k, stride, cin)
        if se:
            s = g.op("ReduceMean", [x], "se_pool", axes=[2, 3], keepdims=1)
            s = g.op("Relu", [g.conv(s, cin, cin // 4, 1, pads=[0, 0, 0, 0])], "se_relu")
            s = g.op("HardSigmoid", [g.conv(s, cin // 4, cin, 1, pads=[0, 0, 0, 0])], "se_gate",
                     alpha=0.16666667, beta=0.5)
            x = g.op("Mul", [x, s], "se_scale")
        x = _hardswish_block(g, x, cin, cout, 1, 1)
        cin = cout
    x = g.op("ReduceMean", [x], "avg_pool", axes=[2, 3], keepdims=1)
    x = g.op("HardSwish", [g.conv(x, cin, 1280, 1, pads=[0, 0, 0, 0])], "last_conv")
    x = g.op("Flatten", [x], "flatten", axis=1)
    x = g.dense(x, 1280, 1000)
    g.nodes[-1].output[0] = "fc_out"
    g.save(path, [_io("x", [batch, 3, 224, 224])], [_io("fc_out", [batch, 1000])], "paddle_lcnet",
           PADDLE2ONNX)
    return _sidecar("x", [1, 3, 224, 224], "fc_out", [1, 1000], batch,
                    "PP-LCNet x0.5-shaped classifier with paddle2onnx idioms, random weights "
                    "(numpy default_rng(2)), 224x224", PADDLE2ONNX)


def paddle_seg_lite(path):
    """A PP-LiteSeg-like segmenter as paddle2onnx writes it: a Conv+BN+ReLU / HardSwish
    encoder to 1/32, a decoder that upsamples with Resize(scales=[1, 1, 2, 2], linear,
    half_pixel) and adds the skip features, a global-context branch from ReduceMean, and a
    final Resize by 8 to the input size."""
    g = Graph(3)
    batch = "p2o.DynamicDimension.0"
    empty_roi = g.const(np.zeros(0, np.float32), "roi")

    def resize(x, factor):
        scales = g.const(np.array([1, 1, factor, factor], np.float32), "scales")
        return g.op("Resize", [x, empty_roi, scales], "resize", mode="linear",
                    coordinate_transformation_mode="half_pixel")

    def cbr(x, cin, cout, stride=1, group=1, k=3):
        return g.op("Relu", [g.bn(g.conv(x, cin, cout, k, stride, group, bias=False), cout)], "relu")

    x = cbr("x", 3, 16, 2)
    skips, cin = [], 16
    for cout in (32, 64, 128, 256):  # strides 4, 8, 16, 32
        x = cbr(x, cin, cin, 2, cin)
        x = _hardswish_block(g, x, cin, cout, 1, 1)
        x = cbr(x, cout, cout, 1, cout)
        x = _hardswish_block(g, x, cout, cout, 1, 1)
        skips.append(x)
        cin = cout
    ctx = g.op("ReduceMean", [x], "context", axes=[2, 3], keepdims=1)
    ctx = cbr(ctx, 256, 64, k=1)
    y = g.op("Add", [cbr(x, 256, 64, k=1), ctx], "add_context")
    for skip, c in zip(reversed(skips[:-1]), (128, 64, 32)):
        y = g.op("Add", [resize(y, 2.0), cbr(skip, c, 64, k=1)], "add_skip")
        y = cbr(y, 64, 64)
    y = g.conv(y, 64, 19, 1, pads=[0, 0, 0, 0])
    y = resize(y, 4.0)
    g.nodes[-1].output[0] = "logits"
    size = 256
    g.save(path, [_io("x", [batch, 3, size, size])], [_io("logits", [batch, 19, size, size])],
           "paddle_seg_lite", PADDLE2ONNX)
    return _sidecar("x", [1, 3, size, size], "logits", [1, 19, size, size], batch,
                    "PP-LiteSeg-like segmenter with paddle2onnx idioms (Resize with scales), random "
                    "weights (numpy default_rng(3)), 256x256, 19 classes", PADDLE2ONNX)

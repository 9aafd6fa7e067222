# SPDX-License-Identifier: Apache-2.0
"""torch builders for tools/make_broad_set.py: torchvision architectures the zoo does not
have, and small custom models for the shapes torchvision lacks (audio front-end, DBNet-style
text detector, CRNN recognizer, GRU tagger, UNet keypoint net).

Each builder returns (model, example_args, input_specs, output_specs, dynamic_axes, info),
the tuple tools/make_zoo.py exports.  Weights are random (torch.manual_seed(0)); BatchNorm
statistics are re-estimated on random inputs so activations keep a trained-like scale.
"""

from make_zoo import calibrate_batchnorm


def _spec(name, shape):
    return {"name": name, "dtype": "float32", "shape": list(shape), "fill": "normal"}


def _export_parts(model, in_shape, out_shape, info, in_name="input", out_name="output", calibrate=True):
    import torch
    if calibrate:
        calibrate_batchnorm(model, shape=tuple(in_shape[1:]))
    model.eval()
    x = torch.randn(*in_shape)
    axes = {in_name: {0: "batch"}, out_name: {0: "batch"}}
    return (model, (x,), [_spec(in_name, in_shape)],
            [{"name": out_name, "dtype": "float32", "shape": list(out_shape)}], axes, info)


def torchvision_classifier(name, size=224, **kwargs):
    """torchvision.models.NAME(weights=None, **kwargs) on a [1, 3, size, size] image."""
    def build():
        import torch
        import torchvision
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None, **kwargs)
        extra = "".join(f", {k}={v}" for k, v in kwargs.items())
        return _export_parts(model, (1, 3, size, size), (1, 1000), {
            "source": f"torchvision.models.{name}(weights=None{extra}), torch.manual_seed(0), "
                      f"BatchNorm statistics re-estimated on random images, {size}x{size}"},
            out_name="logits")
    return build


def _main_output(model):
    """Wraps a torchvision segmentation model, whose forward returns a dict, to return "out"."""
    from torch import nn

    class MainOutput(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x)["out"]
    return MainOutput(model)


def torchvision_segmenter(name, size=224, classes=21):
    def build():
        import torch
        import torchvision
        torch.manual_seed(0)
        model = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None,
                                                               num_classes=classes)
        return _export_parts(_main_output(model), (1, 3, size, size), (1, classes, size, size), {
            "source": f"torchvision.models.segmentation.{name}(weights=None, weights_backbone=None), "
                      f"torch.manual_seed(0), {size}x{size}; the graph returns the 'out' map"})
    return build


def vit_tiny():
    """torchvision's VisionTransformer in the ViT-Ti/16 configuration (ViT-B/16 is 17 GFLOPs)."""
    import torch
    from torchvision.models.vision_transformer import VisionTransformer
    torch.manual_seed(0)
    model = VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=3,
                              hidden_dim=192, mlp_dim=768)
    # torchvision zero-initialises the classifier, which would make every logit 0.
    torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    return _export_parts(model, (1, 3, 224, 224), (1, 1000), {
        "source": "torchvision VisionTransformer(224, patch 16, 12 layers, 3 heads, hidden 192, "
                  "mlp 768) = ViT-Ti/16, torch.manual_seed(0)"}, out_name="logits", calibrate=False)


def _conv_bn_relu(cin, cout, k=3, stride=1, pad=None):
    from torch import nn
    pad = k // 2 if pad is None else pad
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, pad, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True))


def audio_frontend():
    """Keyword-spotting style: a learned STFT-like Conv1d filterbank over 1 s of 16 kHz audio,
    power (Pow 2) summed over the real/imaginary halves, Log, BatchNorm, a Conv2d stack and
    a linear classifier over the pooled features."""
    import torch
    from torch import nn

    bins, win, hop = 64, 400, 160

    class AudioNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.filterbank = nn.Conv1d(1, 2 * bins, win, stride=hop, padding=win // 2, bias=False)
            self.norm = nn.BatchNorm2d(1)
            self.body = nn.Sequential(
                _conv_bn_relu(1, 32), nn.MaxPool2d(2),
                _conv_bn_relu(32, 64), nn.MaxPool2d(2),
                _conv_bn_relu(64, 128), nn.MaxPool2d(2),
                _conv_bn_relu(128, 128))
            self.fc = nn.Linear(128, 35)

        def forward(self, wav):
            spec = self.filterbank(wav)                       # [B, 2*bins, frames]
            b, _, t = spec.shape
            power = spec.pow(2).reshape(b, 2, bins, t).sum(1)  # |X|^2 from the two halves
            logmel = torch.log(power + 1e-6).unsqueeze(1)      # [B, 1, bins, frames]
            y = self.body(self.norm(logmel))
            return self.fc(y.mean(dim=(2, 3)))

    torch.manual_seed(0)
    return _export_parts(AudioNet(), (1, 1, 16000), (1, 35), {
        "source": "custom audio front-end: Conv1d filterbank (64 bins, window 400, hop 160), Pow 2, "
                  "Log, BatchNorm, 4x Conv2d-BN-ReLU, 35 classes; torch.manual_seed(0)"},
        in_name="waveform", out_name="logits")


def dbnet_detector():
    """DBNet-style text detector: a small ResNet trunk, an FPN with nearest Resize top-down
    and to 1/4 scale, and a probability head that upsamples with two ConvTranspose2d and
    ends in a sigmoid."""
    import torch
    from torch import nn
    import torch.nn.functional as F

    class Basic(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.a = _conv_bn_relu(cin, cout, 3, stride)
            self.b = nn.Sequential(nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
            self.skip = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                         if stride != 1 or cin != cout else nn.Identity())

        def forward(self, x):
            return F.relu(self.b(self.a(x)) + self.skip(x))

    class DBNet(nn.Module):
        def __init__(self, widths=(16, 32, 64, 128), inner=64):
            super().__init__()
            self.stem = nn.Sequential(_conv_bn_relu(3, widths[0], 3, 2), nn.MaxPool2d(3, 2, 1))
            stages, cin = [], widths[0]
            for i, w in enumerate(widths):
                stages.append(nn.Sequential(Basic(cin, w, 1 if i == 0 else 2), Basic(w, w, 1)))
                cin = w
            self.stages = nn.ModuleList(stages)
            self.lateral = nn.ModuleList(nn.Conv2d(w, inner, 1, bias=False) for w in widths)
            self.smooth = nn.ModuleList(nn.Conv2d(inner, inner // 4, 3, 1, 1, bias=False) for _ in widths)
            self.head = nn.Sequential(
                _conv_bn_relu(inner, inner // 4),
                nn.ConvTranspose2d(inner // 4, inner // 4, 2, 2), nn.BatchNorm2d(inner // 4), nn.ReLU(inplace=True),
                nn.ConvTranspose2d(inner // 4, 1, 2, 2), nn.Sigmoid())

        def forward(self, x):
            feats = []
            x = self.stem(x)
            for s in self.stages:
                x = s(x)
                feats.append(x)
            lat = [l(f) for l, f in zip(self.lateral, feats)]
            for i in range(len(lat) - 2, -1, -1):
                lat[i] = lat[i] + F.interpolate(lat[i + 1], scale_factor=2.0, mode="nearest")
            outs = [F.interpolate(sm(l), scale_factor=float(2 ** i), mode="nearest") if i else sm(l)
                    for i, (sm, l) in enumerate(zip(self.smooth, lat))]
            return self.head(torch.cat(outs, 1))

    torch.manual_seed(0)
    return _export_parts(DBNet(), (1, 3, 320, 320), (1, 1, 320, 320), {
        "source": "custom DBNet-style detector: ResNet trunk (16/32/64/128), FPN with nearest "
                  "Resize, ConvTranspose2d x2 head, Sigmoid, 320x320; torch.manual_seed(0)"},
        out_name="probability")


def crnn_recognizer():
    """CRNN text-line recognizer: VGG-style convs down to height 1, a 2-layer bidirectional
    LSTM over the 31 width steps and a per-step classifier (37 symbols)."""
    import torch
    from torch import nn

    class CRNN(nn.Module):
        def __init__(self, hidden=128, classes=37):
            super().__init__()
            self.cnn = nn.Sequential(
                _conv_bn_relu(1, 32), nn.MaxPool2d(2),                  # 16 x 64
                _conv_bn_relu(32, 64), nn.MaxPool2d(2),                 # 8 x 32
                _conv_bn_relu(64, 128), _conv_bn_relu(128, 128), nn.MaxPool2d((2, 1)),  # 4 x 32
                _conv_bn_relu(128, 192), _conv_bn_relu(192, 192), nn.MaxPool2d((2, 1)),  # 2 x 32
                _conv_bn_relu(192, 192, 2, pad=0))                      # 1 x 31
            self.rnn = nn.LSTM(192, hidden, num_layers=2, bidirectional=True)
            self.fc = nn.Linear(2 * hidden, classes)

        def forward(self, x):
            f = self.cnn(x).squeeze(2).permute(2, 0, 1)  # [T, B, C]
            y, _ = self.rnn(f)
            return self.fc(y)                             # [T, B, classes]

    torch.manual_seed(0)
    parts = _export_parts(CRNN(), (1, 1, 32, 128), (31, 1, 37), {
        "source": "custom CRNN: 7 conv layers (32..192), 2-layer bidirectional LSTM (hidden 128), "
                  "37 classes, 32x128 grayscale line; torch.manual_seed(0)"})
    parts[4]["output"] = {1: "batch"}
    return parts


def gru_tagger():
    """Two-layer GRU over 100 frames of 40 features with a per-frame linear tagger."""
    import torch
    from torch import nn

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(40, 128, num_layers=2, batch_first=True)
            self.fc = nn.Linear(128, 12)

        def forward(self, x):
            y, _ = self.gru(x)
            return self.fc(y)

    torch.manual_seed(0)
    return _export_parts(Tagger(), (1, 100, 40), (1, 100, 12), {
        "source": "custom GRU tagger: 2-layer GRU (40 -> 128), 100 frames, 12 tags; torch.manual_seed(0)"},
        in_name="features", calibrate=False)


def unet_keypoints():
    """UNet-style keypoint net: 4-level encoder, ConvTranspose2d upsampling with skip
    concatenation, 17 heatmaps at full resolution."""
    import torch
    from torch import nn

    class UNet(nn.Module):
        def __init__(self, widths=(16, 32, 64, 128), joints=17):
            super().__init__()
            self.down = nn.ModuleList()
            cin = 3
            for w in widths:
                self.down.append(nn.Sequential(_conv_bn_relu(cin, w), _conv_bn_relu(w, w)))
                cin = w
            self.pool = nn.MaxPool2d(2)
            self.up = nn.ModuleList(nn.ConvTranspose2d(widths[i + 1], widths[i], 2, 2)
                                    for i in range(len(widths) - 1))
            self.merge = nn.ModuleList(nn.Sequential(_conv_bn_relu(2 * widths[i], widths[i]),
                                                     _conv_bn_relu(widths[i], widths[i]))
                                       for i in range(len(widths) - 1))
            self.out = nn.Conv2d(widths[0], joints, 1)

        def forward(self, x):
            skips = []
            for i, d in enumerate(self.down):
                x = d(x if i == 0 else self.pool(x))
                skips.append(x)
            x = skips.pop()
            for i in range(len(self.up) - 1, -1, -1):
                x = self.merge[i](torch.cat([self.up[i](x), skips.pop()], 1))
            return self.out(x)

    torch.manual_seed(0)
    return _export_parts(UNet(), (1, 3, 192, 192), (1, 17, 192, 192), {
        "source": "custom UNet keypoint net: encoder 16/32/64/128, ConvTranspose2d up + skip concat, "
                  "17 heatmaps, 192x192; torch.manual_seed(0)"}, out_name="heatmaps")

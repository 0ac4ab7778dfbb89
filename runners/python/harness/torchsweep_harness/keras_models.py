"""The models of schemas/models.json in Keras 3, one definition for the
TensorFlow and the JAX runner (Keras picks the backend from KERAS_BACKEND).

Structurally the LibTorch worker's and torchvision's: the same layers, the
same trainable parameter counts (tested), PyTorch's constants where Keras's
defaults differ (LayerNorm and BatchNorm epsilon 1e-5, BatchNorm momentum 0.1
in PyTorch's convention, i.e. 0.9 in Keras's; exact GELU). Images are NHWC,
the layout Keras convolutions run in on a CPU; PyTorch's symmetric padding is
spelled out (ZeroPadding2D, then a valid convolution), since Keras's "same"
pads a strided convolution on one side only.

Layers are named by the PyTorch module path they stand for (`layer1.0.conv1`,
`blocks.0.qkv`), so a PyTorch state dict (the job's initial weights) maps
onto them by name: load_torch_state.
"""
import keras
from keras import layers, ops

LAYER_NORM_EPSILON = 1e-5  # torch.nn.LayerNorm's
BATCH_NORM = {"epsilon": 1e-5, "momentum": 0.9}  # torch.nn.BatchNorm2d's eps, and 1 - its momentum 0.1


class TorchBatchNorm(layers.BatchNormalization):
    """Keras's BatchNormalization with PyTorch's running-variance rule: the
    batch normalises with its biased variance in both, but PyTorch folds the
    unbiased one, n / (n - 1) times larger, into the running variance. On
    small batches and feature maps the eval-mode outputs differ otherwise
    (the reference-batch test sees it)."""

    def call(self, inputs, training=None, mask=None):
        if not (training and self.trainable) or mask is not None or self.renorm:
            return super().call(inputs, training=training, mask=mask)
        x = ops.cast(inputs, keras.backend.result_type(inputs.dtype, "float32"))
        mean, variance = self._moments(x, None)
        count = ops.cast(ops.size(x), x.dtype) / ops.cast(ops.size(mean), x.dtype)
        keep = self.momentum
        self.moving_mean.assign(ops.cast(self.moving_mean, x.dtype) * keep + mean * (1.0 - keep))
        self.moving_variance.assign(ops.cast(self.moving_variance, x.dtype) * keep
                                    + variance * (count / (count - 1.0)) * (1.0 - keep))
        outputs = ops.batch_normalization(x=x, mean=mean, variance=variance, axis=self.axis,
                                          offset=ops.cast(self.beta, x.dtype), scale=ops.cast(self.gamma, x.dtype),
                                          epsilon=self.epsilon)
        return ops.cast(outputs, self.compute_dtype)


def mlp(job):
    inputs = keras.Input((job["input_size"],))
    h = inputs
    for i in range(job["depth"]):
        h = layers.Dense(job["width"], activation="gelu", name=f"hidden.{i}")(h)
    return keras.Model(inputs, layers.Dense(job["num_classes"], name="head")(h), name="mlp")


class Positions(layers.Layer):
    """A learned position table added to the input, as the worker's."""

    def build(self, input_shape):
        self.table = self.add_weight(shape=tuple(input_shape[1:]), initializer=keras.initializers.RandomNormal(0, 0.02),
                                     name="positions")

    def call(self, x):
        return x + self.table


class EncoderBlock(layers.Layer):
    """The worker's pre-norm block: x + proj(attention(LN(x))), then
    x + fc2(GELU(fc1(LN(x)))), attention written out as the worker writes it;
    causal (the decoder's): each position attends to those up to itself."""

    def __init__(self, width, heads, causal=False, **kwargs):
        super().__init__(**kwargs)
        self.width, self.heads, self.causal = width, heads, causal
        self.ln1 = layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON)
        self.ln2 = layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON)
        self.qkv, self.proj = layers.Dense(3 * width), layers.Dense(width)
        self.fc1, self.fc2 = layers.Dense(4 * width, activation="gelu"), layers.Dense(width)

    def torch_children(self):
        """The sublayers by their PyTorch attribute names."""
        return {name: getattr(self, name) for name in ("ln1", "ln2", "qkv", "proj", "fc1", "fc2")}

    def call(self, x):
        seq, head_dim = ops.shape(x)[1], self.width // self.heads
        qkv = ops.reshape(self.qkv(self.ln1(x)), (-1, seq, 3, self.heads, head_dim))
        q, k, v = (ops.transpose(qkv[:, :, i], (0, 2, 1, 3)) for i in range(3))
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) * (1.0 / head_dim ** 0.5)
        if self.causal:
            later = ops.triu(ops.ones((seq, seq)), 1) > 0
            scores = ops.where(later, float("-inf"), scores)
        attended = ops.reshape(ops.transpose(ops.matmul(ops.softmax(scores, axis=-1), v), (0, 2, 1, 3)),
                               (-1, seq, self.width))
        h = x + self.proj(attended)
        return h + self.fc2(self.fc1(self.ln2(h)))


def transformer(job):
    inputs = keras.Input((job["seq_len"], job["width"]))
    h = Positions(name="positions")(inputs)
    for i in range(job["depth"]):
        h = EncoderBlock(job["width"], job["heads"], name=f"blocks.{i}")(h)
    h = ops.mean(layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, name="ln_final")(h), axis=1)
    return keras.Model(inputs, layers.Dense(job["num_classes"], name="head")(h), name="transformer")


def gpt(job):
    """The worker's decoder (models/gpt.hpp): token embeddings, positions,
    causal blocks, final norm and an LM head without bias."""
    inputs = keras.Input((job["seq_len"],), dtype="int32")
    h = layers.Embedding(job["vocab"], job["width"], embeddings_initializer=keras.initializers.RandomNormal(0, 0.02),
                         name="tokens")(inputs)
    h = Positions(name="positions")(h)
    for i in range(job["depth"]):
        h = EncoderBlock(job["width"], job["heads"], causal=True, name=f"blocks.{i}")(h)
    h = layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, name="ln_final")(h)
    return keras.Model(inputs, layers.Dense(job["vocab"], use_bias=False, name="head")(h), name="gpt")


def conv_bn(x, filters, kernel, stride, conv_name, bn_name):
    """A convolution without bias, padded as PyTorch pads it, and its BatchNorm."""
    if kernel > 1:
        x = layers.ZeroPadding2D(kernel // 2)(x)
    x = layers.Conv2D(filters, kernel, strides=stride, use_bias=False, name=conv_name)(x)
    return TorchBatchNorm(**BATCH_NORM, name=bn_name)(x)


def block(x, planes, stride, bottleneck, name):
    expansion = 4 if bottleneck else 1
    shortcut = x
    if stride != 1 or x.shape[-1] != planes * expansion:
        shortcut = conv_bn(x, planes * expansion, 1, stride, f"{name}.downsample.0", f"{name}.downsample.1")
    if bottleneck:  # v1.5: the stride on the 3x3
        h = layers.ReLU()(conv_bn(x, planes, 1, 1, f"{name}.conv1", f"{name}.bn1"))
        h = layers.ReLU()(conv_bn(h, planes, 3, stride, f"{name}.conv2", f"{name}.bn2"))
        h = conv_bn(h, planes * expansion, 1, 1, f"{name}.conv3", f"{name}.bn3")
    else:
        h = layers.ReLU()(conv_bn(x, planes, 3, stride, f"{name}.conv1", f"{name}.bn1"))
        h = conv_bn(h, planes, 3, 1, f"{name}.conv2", f"{name}.bn2")
    return layers.ReLU()(h + shortcut)


def resnet(job):
    bottleneck = job["model"] == "resnet50"
    counts = (3, 4, 6, 3) if bottleneck else (2, 2, 2, 2)
    inputs = keras.Input((job["input_size"], job["input_size"], 3))
    x = layers.ReLU()(conv_bn(inputs, 64, 7, 2, "conv1", "bn1"))
    # Zero padding equals PyTorch's -inf padding here: the input is a ReLU's.
    x = layers.MaxPooling2D(3, strides=2)(layers.ZeroPadding2D(1)(x))
    for stage, (planes, count) in enumerate(zip((64, 128, 256, 512), counts)):
        for index in range(count):
            x = block(x, planes, 2 if index == 0 and stage > 0 else 1, bottleneck, f"layer{stage + 1}.{index}")
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, layers.Dense(job["num_classes"], name="fc")(x), name=job["model"])


def build(job):
    """The job's model and the shape of one input sample (without the batch)."""
    if job["model"] == "mlp":
        return mlp(job), (job["input_size"],)
    if job["model"] == "transformer":
        return transformer(job), (job["seq_len"], job["width"])
    if job["model"] == "gpt":
        return gpt(job), (job["seq_len"],)
    return resnet(job), (job["input_size"], job["input_size"], 3)


def trainable_parameters(model):
    return sum(int(ops.size(v)) for v in model.trainable_variables)


# How each layer's variables hold a PyTorch module's tensors: (Keras
# attribute, PyTorch name, layout conversion). Linear weights are [out, in],
# Keras kernels [in, out]; convolutions OIHW against HWIO.
_TRANSPOSE = ("T",)
_OIHW_TO_HWIO = (2, 3, 1, 0)
_VARIABLES = {
    layers.Dense: (("kernel", "weight", _TRANSPOSE), ("bias", "bias", None)),
    layers.Conv2D: (("kernel", "weight", _OIHW_TO_HWIO),),
    layers.BatchNormalization: (("gamma", "weight", None), ("beta", "bias", None),
                                ("moving_mean", "running_mean", None), ("moving_variance", "running_var", None)),
    layers.LayerNormalization: (("gamma", "weight", None), ("beta", "bias", None)),
    layers.Embedding: (("embeddings", "weight", None),),
    Positions: (("table", "", None),),
}
# PyTorch state that Keras has no variable for: BatchNorm's step counter,
# which only momentum=None (a cumulative average) reads.
_IGNORED_SUFFIXES = (".num_batches_tracked",)


def torch_named_layers(model):
    """(PyTorch module path, layer) of every layer with variables."""
    for layer in model.layers:
        if isinstance(layer, EncoderBlock):
            yield from ((f"{layer.name}.{name}", child) for name, child in layer.torch_children().items())
        elif layer.variables:
            yield layer.name, layer


def load_torch_state(model, state, origin):
    """Assigns a PyTorch state dict ({state_dict name: numpy array}) to the
    model's variables, converting layouts. Every variable must be assigned
    and every tensor used (but the ignored ones): a partial load raises
    ValueError naming `origin` and the first name at fault."""
    unused = {name for name in state if not name.endswith(_IGNORED_SUFFIXES)}
    for path, layer in torch_named_layers(model):
        mapping = next((entries for kind, entries in _VARIABLES.items() if isinstance(layer, kind)), None)
        if mapping is None:
            raise ValueError(f"{origin}: no PyTorch mapping for layer {path} ({type(layer).__name__})")
        for attribute, torch_name, layout in mapping:
            if getattr(layer, attribute, None) is None:
                continue  # a Dense without bias (the LM head), as its PyTorch module
            name = f"{path}.{torch_name}" if torch_name else path
            if name not in state:
                raise ValueError(f"{origin}: no tensor '{name}'")
            value = state[name]
            if layout == _TRANSPOSE:
                value = value.T
            elif layout:
                value = value.transpose(layout)
            variable = getattr(layer, attribute)
            if tuple(value.shape) != tuple(variable.shape):
                raise ValueError(f"{origin}: {name} has shape {list(state[name].shape)}, which does not convert to "
                                 f"{list(variable.shape)}")
            variable.assign(value.astype("float32"))
            unused.discard(name)
    if unused:
        raise ValueError(f"{origin}: tensor '{sorted(unused)[0]}' is not in the model ({len(unused)} left over)")

"""PyTorch's models as the torch-compile runner builds them: the LibTorch
worker's own (MLP, encoder, GPT decoder, ResNets operation for operation, so
the same seed gives the same weights), a library's, and the user's."""

import math

from .. import start_state
from .generation import GptGeneration
from .library_models import build_library_model, build_user_model


def build_model(torch, job):
    nn = torch.nn
    F = torch.nn.functional

    class Mlp(nn.Module):
        def __init__(self, input_size, width, depth, num_classes):
            super().__init__()
            self.hidden = nn.ModuleList(nn.Linear(input_size if i == 0 else width, width) for i in range(depth))
            self.head = nn.Linear(width, num_classes)

        def forward(self, x):
            for layer in self.hidden:
                x = F.gelu(layer(x))
            return self.head(x)

    class EncoderBlock(nn.Module):
        # The LibTorch worker's pre-norm block, operation for operation; causal: the decoder's.
        def __init__(self, width, heads, causal=False):
            super().__init__()
            self.heads, self.causal = heads, causal
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x):
            q, k, v = self.queries_keys_values(x)
            seq = x.shape[1]
            later = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1) if self.causal else None
            return self.attend(x, q, k, v, later)

        def forward_cached(self, x, positions, cache):
            """x at `positions` ([T] ids): its keys and values written into
            `cache` (keys, values: [batch, heads, length, head_dim]) there,
            then attention over every cache position, the later ones masked:
            one shape for every decode step, as torch.compile wants it."""
            q, k, v = self.queries_keys_values(x)
            keys, values = cache
            keys.index_copy_(2, positions, k.to(keys.dtype))
            values.index_copy_(2, positions, v.to(values.dtype))
            later = torch.arange(keys.shape[2], device=x.device) > positions[:, None]
            return self.attend(x, q, keys, values, later)

        def queries_keys_values(self, x):
            batch, seq, width = x.shape
            return self.qkv(self.ln1(x)).view(batch, seq, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)

        def attend(self, x, q, k, v, later):
            batch, seq, width = x.shape
            scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(width // self.heads))
            if later is not None:
                scores = scores.masked_fill(later, float("-inf"))
            attended = torch.matmul(torch.softmax(scores, -1), v).transpose(1, 2).reshape(batch, seq, width)
            h = x + self.proj(attended)
            return h + self.fc2(F.gelu(self.fc1(self.ln2(h))))

    class Transformer(nn.Module):
        def __init__(self, seq_len, width, depth, heads, num_classes):
            super().__init__()
            self.blocks = nn.ModuleList(EncoderBlock(width, heads) for _ in range(depth))
            self.ln_final = nn.LayerNorm(width)
            self.head = nn.Linear(width, num_classes)
            self.positions = nn.Parameter(torch.randn(seq_len, width) * 0.02)

        def forward(self, x):
            h = x + self.positions
            for block in self.blocks:
                h = block(h)
            return self.head(self.ln_final(h).mean(1))

    class Gpt(nn.Module):
        # The LibTorch worker's decoder (models/gpt.hpp), built in its order.
        def __init__(self, vocab, seq_len, width, depth, heads):
            super().__init__()
            self.tokens = nn.Embedding(vocab, width)
            nn.init.normal_(self.tokens.weight, 0.0, 0.02)
            self.positions = nn.Parameter(torch.randn(seq_len, width) * 0.02)
            self.blocks = nn.ModuleList(EncoderBlock(width, heads, causal=True) for _ in range(depth))
            self.ln_final = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)

        def forward(self, ids):
            h = self.tokens(ids) + self.positions[:ids.shape[1]]
            for block in self.blocks:
                h = block(h)
            return self.head(self.ln_final(h))

        def forward_cached(self, ids, positions, caches):
            """Logits at the last of `ids`' `positions`, through the blocks' key/value caches."""
            h = self.tokens(ids) + self.positions[positions]
            for block, cache in zip(self.blocks, caches):
                h = block.forward_cached(h, positions, cache)
            return self.head(self.ln_final(h[:, -1]))

        def generation(self, job, device, dtype, compiled):
            return GptGeneration(torch, self, job, device, dtype, compiled)

        def make_batch(self, job, device):
            # Token ids one longer than a sample: inputs all but the last, targets the next token at each position.
            ids = torch.randint(job["vocab"], (job["batch_size"], job["seq_len"] + 1), device=device)
            return ids[:, :-1], ids[:, 1:]

    name = job["model"]
    if name.startswith(("python:", "torchscript:")):
        return build_user_model(torch, job), None
    if ":" in name:
        return build_library_model(torch, job), start_state.torch_sample_shape(job)
    if name == "mlp":
        model = Mlp(job["input_size"], job["width"], job["depth"], job["num_classes"])
    elif name == "transformer":
        model = Transformer(job["seq_len"], job["width"], job["depth"], job["heads"], job["num_classes"])
    elif name == "gpt":
        model = Gpt(job["vocab"], job["seq_len"], job["width"], job["depth"], job["heads"])
    else:
        model = build_resnet(torch, name, job["num_classes"])
    return model, start_state.torch_sample_shape(job)


def build_resnet(torch, name, num_classes):
    try:
        import torchvision
        return getattr(torchvision.models, name)(weights=None, num_classes=num_classes)
    except ImportError:
        pass
    # torchvision's ResNet v1.5 (stride on the 3x3 of a bottleneck), for hosts without torchvision.
    nn = torch.nn

    def conv3x3(cin, cout, stride=1):
        return nn.Conv2d(cin, cout, 3, stride, 1, bias=False)

    class Basic(nn.Module):
        expansion = 1

        def __init__(self, cin, width, stride, downsample):
            super().__init__()
            self.conv1, self.bn1 = conv3x3(cin, width, stride), nn.BatchNorm2d(width)
            self.conv2, self.bn2 = conv3x3(width, width), nn.BatchNorm2d(width)
            self.relu, self.downsample = nn.ReLU(inplace=True), downsample

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + (self.downsample(x) if self.downsample is not None else x))

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, cin, width, stride, downsample):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
            self.conv2, self.bn2 = conv3x3(width, width, stride), nn.BatchNorm2d(width)
            self.conv3, self.bn3 = nn.Conv2d(width, width * 4, 1, bias=False), nn.BatchNorm2d(width * 4)
            self.relu, self.downsample = nn.ReLU(inplace=True), downsample

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            return self.relu(out + (self.downsample(x) if self.downsample is not None else x))

    class ResNet(nn.Module):
        def __init__(self, block, layers):
            super().__init__()
            self.inplanes = 64
            self.conv1, self.bn1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64)
            self.relu, self.maxpool = nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)
            self.layer1 = self._layer(block, 64, layers[0], 1)
            self.layer2 = self._layer(block, 128, layers[1], 2)
            self.layer3 = self._layer(block, 256, layers[2], 2)
            self.layer4 = self._layer(block, 512, layers[3], 2)
            self.avgpool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(512 * block.expansion, num_classes)
            # torchvision's initialisation, in its order: the same seed then gives the same weights.
            for module in self.modules():
                if isinstance(module, nn.Conv2d):
                    nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(module, nn.BatchNorm2d):
                    nn.init.constant_(module.weight, 1)
                    nn.init.constant_(module.bias, 0)

        def _layer(self, block, width, count, stride):
            downsample = None
            if stride != 1 or self.inplanes != width * block.expansion:
                downsample = nn.Sequential(nn.Conv2d(self.inplanes, width * block.expansion, 1, stride, bias=False),
                                           nn.BatchNorm2d(width * block.expansion))
            layers = [block(self.inplanes, width, stride, downsample)]
            self.inplanes = width * block.expansion
            layers += [block(self.inplanes, width, 1, None) for _ in range(1, count)]
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return ResNet(Basic, [2, 2, 2, 2]) if name == "resnet18" else ResNet(Bottleneck, [3, 4, 6, 3])

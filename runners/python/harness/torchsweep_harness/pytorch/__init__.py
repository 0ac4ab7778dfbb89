"""The torch-compile runner's own (runners/python/torch_compile_runner.py):
PyTorch's models, task generate, the experiment and its probes, the
accuracy gate's runs, the shape sweep and torch.compile's diagnostics. Every
function takes the torch module as an argument: importing this package
imports no PyTorch."""

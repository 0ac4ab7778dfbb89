"""JAX probes of scripts/gpu-visit, run by the node's own Python:

    probe_jax.py tools             the version, backend and default matmul precision (JSON)
    probe_jax.py tf32              an fp32 product's error against float64: precision float32 (TF32 off)
                                   and tensorfloat32 (JAX's GPU default, TF32 on)
"""
import json
import sys

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)  # the float64 reference; the probed products stay float32
import jax.numpy as jnp  # noqa: E402


def tools():
    device = jax.devices()[0]
    return {"version": jax.__version__, "backend": jax.default_backend(), "device": str(device),
            "default_matmul_precision": jax.config.jax_default_matmul_precision}


def tf32():
    generator = np.random.default_rng(0)
    a = generator.standard_normal((1024, 1024))
    b = generator.standard_normal((1024, 1024))
    reference = a @ b
    a32, b32 = jnp.asarray(a, jnp.float32), jnp.asarray(b, jnp.float32)

    def error(precision):
        with jax.default_matmul_precision(precision):
            product = np.asarray(jnp.matmul(a32, b32), dtype=np.float64)
        return float(np.linalg.norm(product - reference) / np.linalg.norm(reference))

    device = jax.devices()[0]
    capability = getattr(device, "compute_capability", None)
    capable = device.platform == "gpu" and capability is not None and float(capability) >= 8.0
    return {"device": str(device), "tf32_capable": capable, "off_error": error("float32"),
            "on_error": error("tensorfloat32")}


if __name__ == "__main__":
    print(json.dumps({"tools": tools, "tf32": tf32}[sys.argv[1]]()), flush=True)

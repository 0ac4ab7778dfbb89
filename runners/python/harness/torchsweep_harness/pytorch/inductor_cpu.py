"""Inductor's C++ kernels on a CPU (docs/compiler.md): the vector
instructions they were generated for, said in every compiled CPU result,
and the link that lets Inductor find them.

Inductor vectorises its kernels only for an ISA whose probe (a small
library calling ATen's vector functions, which call SLEEF) builds and
loads. Two links leave the probe's SLEEF symbols unresolved, so it fails,
Inductor concludes that the CPU has no vector ISA, every kernel is scalar,
and each process probes again, seconds before its first compile:

- a venv's PyTorch wheel beside the system's own LibTorch (Debian's
  libtorch-dev): Inductor lists Python's LIBDIR before the environment's
  torch/lib, so `-ltorch_cpu` finds the system's library;
- Debian's PyTorch: its LibTorch takes SLEEF from a shared library, which
  Inductor does not link (it does on Windows, for the same reason).

Both are mended here, in Inductor's link arguments, before anything
compiles; the probe's cache key says so, so a probe library linked the old
way is built again instead of failing again."""

import os
import subprocess
import sysconfig


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            return next((line.split(":", 1)[1].split() for line in cpuinfo if line.startswith("flags")), [])
    except OSError:
        return []


def _needs_shared_sleef(library):
    """Whether `library` takes SLEEF from a shared library (its NEEDED)."""
    try:
        dynamic = subprocess.run(["readelf", "-d", library], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "[libsleef.so" in dynamic


class InductorCpu:
    """Made before anything compiles on a CPU; `section()` after."""

    def __init__(self, torch, job):
        self.applies, self.changes = job["device"] == "cpu" and job["backend"] == "inductor", []
        if not self.applies:
            return
        libdir = sysconfig.get_config_var("LIBDIR")
        system = os.path.join(libdir or "", "libtorch_cpu.so")
        own = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
        # Debian's own PyTorch reaches the system's library through torch/lib's symlinks: nothing to leave out.
        skip = libdir if os.path.exists(system) and os.path.realpath(system) != os.path.realpath(own) else None
        sleef = _needs_shared_sleef(os.path.realpath(own))
        if skip or sleef:
            self.changes = self._mend(skip, sleef)

    @staticmethod
    def _mend(skip, sleef):
        """Inductor's link without the directory `skip` (the linker still
        searches it as a default directory, after torch/lib) and with
        `-lsleef`; [] where this Inductor lacks what is mended (nothing done)."""
        from torch._inductor import cpp_builder, cpu_vec_isa
        python_args = getattr(cpp_builder, "_get_python_related_args", None)
        torch_args = getattr(cpp_builder, "_get_torch_related_args", None)
        fingerprint = getattr(cpu_vec_isa, "_get_isa_dry_compile_fingerprint", None)
        if python_args is None or torch_args is None or fingerprint is None:
            return []
        changes = []
        if skip:
            def without_libdir():
                includes, directories = python_args()
                return includes, [d for d in directories if os.path.realpath(d) != os.path.realpath(skip)]
            cpp_builder._get_python_related_args = without_libdir
            changes.append(f"left out {skip} (another LibTorch)")
        if sleef:
            def with_sleef(*args, **kwargs):
                includes, directories, libraries = torch_args(*args, **kwargs)
                return includes, directories, libraries + ["sleef"] * ("sleef" not in libraries)
            cpp_builder._get_torch_related_args = with_sleef
            changes.append("linked -lsleef (this LibTorch's SLEEF is a shared library)")
        cpu_vec_isa._get_isa_dry_compile_fingerprint = lambda flags: f"{fingerprint(flags)}={';'.join(changes)}"
        return changes

    def section(self, warnings):
        """execution.compile.cpu_kernels, or None off the CPU or Inductor; a
        warning where the kernels are scalar on an x86 CPU with AVX2."""
        if not self.applies:
            return None
        from torch._inductor.cpu_vec_isa import pick_vec_isa
        isa = pick_vec_isa()
        picked = str(isa) if isa else "none"
        if picked == "none" and "avx2" in _cpu_flags():
            warnings.append("Inductor found no vector ISA on a CPU with AVX2: its C++ kernels are scalar, and the "
                            "compiled figures understate this CPU (docs/compiler.md)")
        return {"vector_isa": picked, "link_changes": self.changes}

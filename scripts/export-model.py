#!/usr/bin/env python3
"""Exports a PyTorch model for `perfbench run --model-file`.

    .venv/bin/python scripts/export-model.py SOURCE --out PATH [--format aoti|torchscript]
        [--device cpu|cuda] [--name NAME] [--batch N] [--static] [--seq-len N] [--train]

SOURCE is `module:factory` (an importable module, or a file path.py:factory)
whose factory returns (module, example_inputs) or a module alone, with
--input SHAPE[:DTYPE] giving the inputs then (e.g. --input 64x256
--input 64x128:int64); or `hf:PATH`, a Hugging Face model already on disk
(transformers' AutoModel; inputs: token ids of --batch x --seq-len).

Writes PATH (an AOTInductor package, .pt2, compiled for --device with the
C++ compiler, or a TorchScript archive) and PATH.inputs.pt beside it (the
example inputs, torch.save of a list of tensors). The first dimension of
every input is the batch: dynamic in the package unless --static. The
package's metadata (AOTInductor: aot_inductor.metadata; TorchScript: the
extra file perfbench.json) records the name, the input signature, the batch
dimension and this torch's version; perfbench reads it before loading.

--train exports a module whose forward returns its loss (the inputs hold
data and labels) as TorchScript, traced in training mode, for
`perfbench run --model-file PATH --param train=on`.

A CUDA package can only be made on a machine with a GPU (inductor compiles
its kernels for that GPU) and runs on GPUs of the same kind.

A development-time tool: run it with the torch perfbench links (the
torch==2.11.0 wheel in .venv/); perfbench itself runs no Python.
"""
import argparse
import contextlib
import importlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile

import torch

DTYPES = {"float32": torch.float32, "f32": torch.float32, "float16": torch.float16, "f16": torch.float16,
          "bfloat16": torch.bfloat16, "bf16": torch.bfloat16, "int64": torch.int64, "i64": torch.int64,
          "int32": torch.int32, "i32": torch.int32}
SIG = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16", torch.int64: "i64",
       torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8", torch.bool: "bool"}


def fail(msg):
    print("export-model: error: " + msg, file=sys.stderr)
    sys.exit(2)


def load_factory(spec):
    mod_name, _, fn = spec.rpartition(":")
    if not mod_name or not fn:
        fail("SOURCE '%s': expected module:factory, path.py:factory or hf:PATH" % spec)
    if mod_name.endswith(".py"):
        if not os.path.exists(mod_name):
            fail("SOURCE '%s': no such file %s" % (spec, mod_name))
        s = importlib.util.spec_from_file_location(os.path.basename(mod_name)[:-3], mod_name)
        module = importlib.util.module_from_spec(s)
        s.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(mod_name)
    if not hasattr(module, fn):
        fail("SOURCE '%s': %s has no %s" % (spec, mod_name, fn))
    return getattr(module, fn)


def parse_input(text, batch):
    shape, _, dtype = text.partition(":")
    try:
        dims = [int(d) for d in shape.split("x")]
    except ValueError:
        fail("--input '%s': expected SHAPE[:DTYPE], e.g. 64x256 or 64x128:int64" % text)
    if batch:
        dims[0] = batch
    dt = DTYPES.get(dtype or "float32")
    if dt is None:
        fail("--input '%s': dtype must be one of %s" % (text, ", ".join(sorted(DTYPES))))
    return torch.randint(0, 100, dims, dtype=dt) if not dt.is_floating_point else torch.randn(dims, dtype=dt)


class FirstTensor(torch.nn.Module):
    """A Hugging Face model's first output tensor (last_hidden_state or logits)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        out = self.model(input_ids=input_ids)
        return out[0] if isinstance(out, (tuple, list)) else next(iter(out.values()))


def model_and_inputs(args):
    if args.source.startswith("hf:"):
        from transformers import AutoModel  # only for hf: sources
        path = args.source[3:]
        if not os.path.isdir(path):
            fail("hf:%s: no such folder (a model already on disk: perfbench never downloads)" % path)
        model = FirstTensor(AutoModel.from_pretrained(path).eval())
        vocab = getattr(model.model.config, "vocab_size", 1000)
        return model, (torch.randint(0, vocab, (args.batch or 8, args.seq_len)),)
    made = load_factory(args.source)(**({"batch": args.batch} if args.batch else {}))
    model, inputs = made if isinstance(made, tuple) else (made, None)
    if args.input:
        inputs = tuple(parse_input(t, args.batch) for t in args.input)
    if inputs is None:
        fail("the factory returned no example inputs: give --input SHAPE[:DTYPE]")
    return (model.train() if args.train else model.eval()), tuple(inputs)


def signature(inputs, batch_dim):
    parts = []
    for t in inputs:
        dims = ["B" if d == batch_dim else str(s) for d, s in enumerate(t.shape)]
        parts.append(SIG.get(t.dtype, "other") + "_" + ("x".join(dims) if dims else "scalar"))
    return "-".join(parts)


def export(args, model, inputs, meta):
    device = torch.device(args.device)
    model, inputs = model.to(device), tuple(t.to(device) for t in inputs)
    if args.format == "torchscript":
        with torch.no_grad() if not args.train else contextlib.nullcontext():
            scripted = torch.jit.trace(model, inputs)
        torch.jit.save(scripted, args.out, _extra_files={"perfbench.json": json.dumps(meta)})
        return
    dynamic = None
    if not args.static:
        batch = torch.export.Dim("batch", min=1, max=1 << 16)
        dynamic = tuple({0: batch} for _ in inputs)
    with torch.no_grad():
        program = torch.export.export(model, inputs, dynamic_shapes=dynamic)
        torch._inductor.aoti_compile_and_package(program, package_path=args.out,
                                                 inductor_configs={"aot_inductor.metadata": meta})


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("source")
    p.add_argument("--out", required=True, help="the model file to write (.pt2 for aoti)")
    p.add_argument("--format", choices=["aoti", "torchscript"], default="aoti")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--name", help="the model's name in perfbench (default: the file's stem)")
    p.add_argument("--batch", type=int, help="the examples' batch (default: the factory's)")
    p.add_argument("--input", action="append", help="an example input SHAPE[:DTYPE] (first dim: batch)")
    p.add_argument("--static", action="store_true", help="no dynamic batch dimension")
    p.add_argument("--seq-len", type=int, default=128, help="hf: tokens per sequence")
    p.add_argument("--train", action="store_true", help="forward returns the loss: TorchScript for train=on")
    args = p.parse_args()
    if args.train and args.format != "torchscript":
        fail("--train exports TorchScript (an AOTInductor package is inference only): add --format torchscript")
    if args.device == "cuda" and not torch.cuda.is_available():
        fail("--device cuda: no GPU here; a CUDA package can only be made on a GPU machine")
    model, inputs = model_and_inputs(args)
    batch_dim = -1 if args.static else 0
    name = args.name or os.path.basename(args.out).split(".")[0]
    meta = {"perfbench.name": name, "perfbench.batch_dim": str(batch_dim),
            "perfbench.inputs": signature(inputs, batch_dim), "perfbench.torch": torch.__version__,
            "perfbench.format_version": "1"}
    if args.train:
        meta["perfbench.train"] = "loss"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    final = os.path.abspath(args.out)
    # Written in a fresh folder beside it, then moved: a file at --out is
    # always whole, and the package's archive is named after the file.
    tmp_dir = tempfile.mkdtemp(prefix=".export-", dir=os.path.dirname(final))
    try:
        args.out = os.path.join(tmp_dir, os.path.basename(final))
        export(args, model, inputs, meta)
        torch.save([t.cpu() for t in inputs], final + ".inputs.pt")
        os.replace(args.out, final)  # the model last
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    print("%s: %s, inputs %s, torch %s" % (final, "AOTInductor package" if args.format == "aoti" else "TorchScript",
                                          meta["perfbench.inputs"], torch.__version__))


if __name__ == "__main__":
    main()

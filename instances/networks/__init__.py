"""The network library: exact layer shapes of published networks, by name.

``get_network("resnet50")``; parameters after a colon,
``get_network("bert-base:seq_len=256")``; or a file: ``.yaml``/``.yml``/``.json`` (the
network file form, schema: ``chipsched schema network``) or ``.onnx``.
Names accept ``_`` for ``-`` and any case.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chipsched.errors import InputError, UnknownNameError
from chipsched.instances.networks.cnn import (
    googlenet,
    mobilenet_v2,
    resnet50,
    resnet50_v1,
    vgg16,
)
from chipsched.instances.networks.inception_resnet import inception_resnet_v1
from chipsched.instances.networks.pnasnet import pnasnet5_large, pnasnet5_mobile
from chipsched.instances.networks.small_cnn import lenet5, resnet20_cifar, vgg11_cifar
from chipsched.instances.networks.tiny import tiny, tiny_chain
from chipsched.instances.networks.transformer import (
    bert_base,
    transformer_base,
    transformer_set_isca23,
)
from chipsched.workload import Workload

#: name → builder. Every builder takes keyword parameters with defaults.
NETWORKS: dict[str, Callable[..., Workload]] = {
    "resnet50": resnet50,
    "googlenet": googlenet,
    "inception-resnet-v1": inception_resnet_v1,
    "pnasnet5-mobile": pnasnet5_mobile,
    "transformer-base": transformer_base,
    "vgg16": vgg16,
    "mobilenet-v2": mobilenet_v2,
    "bert-base": bert_base,
    # the networks of SET (Cai et al., ISCA 2023) that differ from ours above
    "resnet50-v1": resnet50_v1,
    "pnasnet5-large": pnasnet5_large,
    "transformer-set-isca23": transformer_set_isca23,
    "tiny": tiny,
    "tiny-chain": tiny_chain,
    "lenet5": lenet5,
    "vgg11-cifar": vgg11_cifar,
    "resnet20-cifar": resnet20_cifar,
}

#: Other spellings people use.
ALIASES = {"resnet-50": "resnet50", "vgg-16": "vgg16", "mobilenetv2": "mobilenet-v2",
           "inception-v1": "googlenet", "pnasnet": "pnasnet5-mobile",
           "pnasnet-5": "pnasnet5-mobile", "transformer": "transformer-base",
           "bert": "bert-base", "inception-resnet": "inception-resnet-v1",
           "resnet-50-v1": "resnet50-v1", "pnasnet-5-large": "pnasnet5-large",
           "pnasnet5large": "pnasnet5-large", "transformer-set": "transformer-set-isca23"}


def network_names() -> list[str]:
    return list(NETWORKS)


def network_params(name: str) -> dict[str, Any]:
    """The keyword parameters of a library network and their defaults."""
    fn = NETWORKS[_canonical(name)]
    return {p.name: p.default for p in inspect.signature(fn).parameters.values()
            if p.default is not inspect.Parameter.empty}


def _canonical(name: str) -> str:
    key = name.strip().lower().replace("_", "-")
    key = ALIASES.get(key, key)
    if key not in NETWORKS:
        raise UnknownNameError("network", name, [*NETWORKS, *ALIASES], "chipsched list")
    return key


def _parse_value(text: str) -> Any:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _check_param_type(net: str, name: str, value: Any, default: Any) -> Any:
    """A library network's parameter must have its default's type (bool — 1/0 accepted —,
    int, float); returns the value."""
    field = f"network {net}: parameter {name}"
    if isinstance(default, bool):
        if value in (0, 1) and not isinstance(value, float):
            return bool(value)
        raise InputError(field, f"must be true or false, got {value!r}")
    elif isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(field, f"must be an integer, got {value!r}",
                             f"e.g. {net}:{name}={default}")
        if value < 1:
            raise InputError(field, f"must be >= 1, got {value}")
    elif isinstance(default, float):
        import math

        if isinstance(value, bool) or not isinstance(value, int | float) or \
                not math.isfinite(value):
            raise InputError(field, f"must be a finite number, got {value!r}",
                             f"e.g. {net}:{name}={default}")
    return value


def get_network(spec: str | os.PathLike[str] | Workload, **params: Any) -> Workload:
    """A workload from a library name (``name[:k=v,k=v]``) or a network/ONNX file."""
    if isinstance(spec, Workload):
        return spec
    s = str(spec)
    suffix = Path(s).suffix.lower()
    at = s.lower().find(".onnx:")
    if at >= 0 and not Path(s).is_file():  # FILE.onnx:fallback=true,precision_bytes=2
        path, opts = s[:at + 5], s[at + 6:]
        kw: dict[str, Any] = {}
        types = {"fallback": bool, "precision_bytes": int, "name": str}
        for item in filter(None, opts.split(",")):
            k, eq, v = item.partition("=")
            k, v = k.strip(), v.strip()
            if not eq or k not in types:
                raise InputError(f"{path}: option {k!r}", "unknown" if eq else
                                 "needs a value (k=v)", "options: fallback=true|false, "
                                 "precision_bytes=N, name=TEXT")
            value = _parse_value(v) if types[k] is not str else v
            if types[k] is bool and not isinstance(value, bool):
                raise InputError(f"{path}: option {k}", f"must be true or false, got {v!r}")
            if types[k] is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise InputError(f"{path}: option {k}", f"must be an integer, got {v!r}")
            kw[k] = value
        from chipsched.instances.onnx_import import load_onnx

        return load_onnx(path, **{**kw, **params})
    if suffix == ".onnx":
        from chipsched.instances.onnx_import import load_onnx

        return load_onnx(s, **params)
    if suffix in (".yaml", ".yml", ".json"):
        from chipsched.files import read_data

        data = read_data(s)
        from chipsched.schemas import NETWORK_SCHEMA, validate

        validate(data, NETWORK_SCHEMA, s)
        w = Workload.from_dict(data, source=s)
        return w.with_precision(params["precision_bytes"]) if "precision_bytes" in params else w
    name, _, arg_text = s.partition(":")
    key = _canonical(name)
    allowed = network_params(key)
    kwargs: dict[str, Any] = {}
    for item in filter(None, arg_text.split(",")):
        k, eq, v = item.partition("=")
        k = k.strip()
        if not eq or k not in allowed:
            raise InputError(f"network {key}: parameter {k!r}",
                             "unknown" if eq else "needs a value (k=v)",
                             f"parameters of {key}: {', '.join(allowed) or 'none'}")
        kwargs[k] = _parse_value(v.strip())
    for k, v in params.items():
        if k not in allowed:
            raise InputError(f"network {key}: parameter {k!r}", "unknown",
                             f"parameters of {key}: {', '.join(allowed) or 'none'}")
        kwargs[k] = v
    for k, v in kwargs.items():
        kwargs[k] = _check_param_type(key, k, v, allowed[k])
    try:
        return NETWORKS[key](**kwargs)
    except InputError:
        raise
    except (TypeError, ValueError) as exc:
        raise InputError(f"network {key}", str(exc).splitlines()[0]) from None

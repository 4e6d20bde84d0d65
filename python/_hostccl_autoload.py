"""torch's backend autoload entry point for hostccl (torch >= 2.5: group
``torch.backends``): ``import torch`` calls ``load``, which imports hostccl.torch
and so registers the backend. A hostccl that cannot load under this torch (built
for another one) is reported as a warning: ``import torch`` itself must not fail.
``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` makes torch skip it."""

import warnings


def load():
    try:
        import hostccl.torch  # noqa: F401  (registers the backend)
    except ImportError as e:
        warnings.warn("hostccl's torch backend was not loaded: %s" % e, stacklevel=2)

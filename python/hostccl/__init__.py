"""hostccl for Python: ``import hostccl`` (or ``import hostccl.torch``) registers
hostccl as a torch.distributed backend, so that

    torch.distributed.init_process_group("hostccl", init_method=..., rank=..., world_size=...)

runs every collective over hostccl (shared memory inside a host, TCP or RDMA between
hosts). The name "hccl" is registered too when no other backend holds it, so programs
written for HCCL run with only their device lines changed. See docs/pytorch.md.
"""

from . import torch  # noqa: F401  (registers the backend)
from . import planner  # noqa: F401  (hostccl-plan from Python)

__all__ = ["torch", "planner"]

"""DDP communication hooks over hostccl's gradient compressors.

Each hook averages a DDP bucket with less data on the wire than an fp32 allreduce,
with the compressors of hostccl's training layer (``hostccl/compression.hpp``)::

    from hostccl.torch import hooks
    state = hooks.CompressionState("topk:0.01")      # or "sign", "fp16", "bf16"
    ddp.register_comm_hook(state, hooks.compressed_hook)

``topk[:ratio]`` sends the ratio (default 0.01) of largest-magnitude entries as
(index, value) pairs; ``sign`` sends one bit per entry and one scale per rank. Both
keep what they did not send (error feedback) and add it to the bucket's next
gradient, so nothing is lost, only delayed. The compression runs on the hook's
thread, the collective on the group's stream, the decode once it completed.

``bf16_hook`` is torch's own under a name DDP does not refuse: torch 1.13's
DDP accepts ``default_hooks.bf16_compress_hook`` only with CUDA and NCCL.
"""

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

from .._C import GradientCompressor
from ._groups import hostccl_backend

__all__ = ["CompressionState", "compressed_hook", "bf16_hook"]


class CompressionState:
    """A hook's compressor and group: one per model (the error feedback is per bucket).

    ``process_group``: a hostccl group, or None for the default group.
    """

    def __init__(self, compressor="topk:0.01", process_group=None):
        self.compressor = GradientCompressor(compressor)
        self.process_group = process_group

    @property
    def wire_bytes(self):
        """Bytes this rank sent so far."""
        return self.compressor.wire_bytes

    @property
    def fp32_wire_bytes(self):
        """What fp32 allreduces of the same buckets would have sent."""
        return self.compressor.fp32_wire_bytes


def _hostccl_group(group):
    """(the group, its hostccl backend): the same object on torch 1.13."""
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    backend = hostccl_backend(pg)
    if backend is None:
        raise RuntimeError(
            "hostccl hooks need a hostccl process group (got %s): init_process_group('hostccl') "
            "or pass a hostccl group to CompressionState" % type(pg).__name__)
    return pg, backend


def compressed_hook(state, bucket):
    """Averages the bucket with ``state``'s compressor; returns the future DDP waits on.

    Buckets that are not float32 (DDP of a half-precision model) are averaged
    uncompressed: the compressors work on float32.
    """
    pg, backend = _hostccl_group(state.process_group)
    tensor = bucket.buffer()
    if tensor.dtype != torch.float32:
        tensor.div_(pg.size())
        fut = dist.all_reduce(tensor, group=pg, async_op=True).get_future()
    else:
        fut = backend.compressed_average(state.compressor, tensor, bucket.index()).get_future()
    return fut.then(lambda f: f.value()[0])


def bf16_hook(process_group, bucket):
    """torch's bf16_compress_hook (state: a group or None), which DDP refuses by name."""
    return default_hooks.bf16_compress_hook(process_group, bucket)

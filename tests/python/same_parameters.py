"""Whether two checkpoints of the DDP example (or any {"model": state_dict}) hold the same
parameters: exits 0 when the largest difference is at most TOLERANCE times the largest
parameter (0: bit for bit), and prints both figures.
    python same_parameters.py A.pt B.pt TOLERANCE"""

import sys

import torch


def main():
    first, second, tolerance = sys.argv[1], sys.argv[2], float(sys.argv[3])
    a, b = (torch.load(f)["model"] for f in (first, second))
    diff = max((a[k] - b[k]).abs().max().item() for k in a)
    scale = max(a[k].abs().max().item() for k in a)
    print("max difference %.3g, largest parameter %.3g%s" % (diff, scale, ", bit for bit" if diff == 0 else ""))
    return 0 if diff <= tolerance * scale else 1


if __name__ == "__main__":
    sys.exit(main())

import torch

cuda = torch.device("cuda")
s = torch.cuda.Stream()
A = torch.empty((100, 100), device=cuda).normal_(0.0, 1.0)  # <- written on the default stream
with torch.cuda.stream(s):
    B = torch.sum(A)  # <- read on stream s: nothing makes s wait for normal_()
print(B.item())

import torch


class LigerEmbedding(torch.nn.Module):
    """An embedding lookup under Liger's class name and constructor (num_embeddings, embedding_dim,
    padding_idx; weight a num_embeddings x embedding_dim Parameter, randn, the padding row zeroed);
    the padding id's rows come out zero (test stand-in, plain torch)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.weight = torch.nn.Parameter(torch.randn(num_embeddings, embedding_dim))
        if padding_idx is not None:
            with torch.no_grad():
                self.weight[padding_idx].fill_(0)

    def forward(self, indices):
        out = self.weight[indices]
        if self.padding_idx is not None:
            out = out.masked_fill((indices == self.padding_idx).unsqueeze(-1), 0)
        return out

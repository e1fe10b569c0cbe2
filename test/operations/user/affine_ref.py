"""The float64 reference of affine.json: the forward only; kbench differentiates it with autograd
for the backward and full modes."""


def affine(inputs, scalars):
    return {"y": inputs["x"] * inputs["w"] + inputs["b"]}
